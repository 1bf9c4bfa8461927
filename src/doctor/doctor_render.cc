// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "doctor/doctor_render.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace cpprof::doctor {

namespace {

using Json = nlohmann::ordered_json;

constexpr size_t kWidth = 110;
constexpr size_t kDetailCol = 32;

// Words of `text` wrapped into lines of at most `width` characters (a longer word stays whole).
std::vector<std::string> Wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string word, line;
  while (in >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

Json OrNull(const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); }

}  // namespace

void PrintDoctorText(const DoctorFindings& f, std::ostream& out) {
  out << fmt::format("{:<6}  {:<22}  {}\n", "STATUS", "CHECK", "DETAIL");
  std::map<CheckStatus, int> counts;
  for (const auto& c : f.checks) {
    ++counts[c.status];
    std::vector<std::string> lines = Wrap(c.detail, kWidth - kDetailCol);
    out << fmt::format("{:<6}  {:<22}  {}\n", CheckStatusName(c.status), c.title, lines[0]);
    for (size_t i = 1; i < lines.size(); ++i) out << std::string(kDetailCol, ' ') << lines[i] << '\n';
    if (!c.hint.empty() && c.status != CheckStatus::kPass) {
      std::vector<std::string> hint = Wrap("hint: " + c.hint, kWidth - kDetailCol);
      for (const auto& l : hint) out << std::string(kDetailCol, ' ') << l << '\n';
    }
  }
  out << fmt::format("\n{} FAIL, {} WARN, {} PASS", counts[CheckStatus::kFail], counts[CheckStatus::kWarn],
                     counts[CheckStatus::kPass]);
  if (counts[CheckStatus::kSkip]) out << fmt::format(", {} SKIP", counts[CheckStatus::kSkip]);
  if (const NsysCandidate* c = f.Chosen()) {
    out << fmt::format(". nsys: {}", c->path);
    for (const auto& [k, v] : f.profile_env) out << fmt::format(" (with {}={})", k, v);
  }
  out << '\n';
}

namespace {

// "checks": every check with its status, detail and hint.
Json ChecksJson(const DoctorFindings& f) {
  Json checks = Json::array();
  for (const auto& c : f.checks) {
    checks.push_back({{"id", c.id},
                      {"title", c.title},
                      {"status", CheckStatusName(c.status)},
                      {"detail", c.detail},
                      {"hint", OrNull(c.hint)}});
  }
  return checks;
}

// "nsys": the chosen nsys and every candidate, the importer, what its help offers.
Json NsysJson(const DoctorFindings& f) {
  Json nsys;
  Json cands = Json::array();
  for (const auto& c : f.candidates) {
    cands.push_back({{"path", c.path},
                     {"real_path", c.real_path},
                     {"found_by", c.found_by},
                     {"version", c.version ? Json(c.version->ToString()) : Json(nullptr)},
                     {"error", OrNull(c.error)},
                     {"supports_targets", c.supports_targets},
                     {"unsupported_reason", OrNull(c.unsupported_reason)}});
  }
  if (const NsysCandidate* c = f.Chosen()) {
    nsys["chosen"] = {
        {"path", c->path}, {"real_path", c->real_path}, {"version", c->version->ToString()}, {"why", f.chosen_why}};
  } else {
    nsys["chosen"] = nullptr;
  }
  nsys["candidates"] = cands;
  nsys["searched"] = f.searched;
  const ImporterCheck& imp = f.importer;
  nsys["importer"] = {{"path", OrNull(imp.path)},
                      {"loads", imp.checked ? Json(imp.loads) : Json(nullptr)},
                      {"exit_code", imp.checked ? Json(imp.exit_code) : Json(nullptr)},
                      {"missing_libs", imp.missing_libs},
                      {"fix_dir", OrNull(imp.fix_dir)},
                      {"loads_with_ld_library_path", OrNull(imp.ld_library_path)}};
  nsys["profile_env"] = f.profile_env;
  nsys["pytorch_tokens"] = f.profile_help_read ? Json(f.profile_help.pytorch_tokens) : Json(nullptr);
  nsys["profile_options"] = f.profile_help_read ? Json(f.profile_help.options) : Json(nullptr);
  nsys["export_options"] = f.export_help_read ? Json(f.export_options) : Json(nullptr);
  nsys["functions_trace_base"] = OrNull(f.functions_trace_base);
  nsys["functions_trace_needs_nvtx"] = f.profile_help.functions_trace_needs_nvtx;
  nsys["deep"] = f.deep_ok ? Json({{"ok", *f.deep_ok}, {"detail", f.deep_detail}}) : Json(nullptr);
  return nsys;
}

// "gpus": nvidia-smi's list, each GPU's architecture and whether it is a target.
Json GpusJson(const DoctorFindings& f) {
  Json gpus = Json::array();
  for (const auto& g : f.gpus) {
    auto a = ArchForComputeCap(g.cc_major, g.cc_minor);
    bool target = std::find(f.targets.begin(), f.targets.end(), g.index) != f.targets.end();
    gpus.push_back({{"index", g.index},
                    {"name", g.name},
                    {"compute_cap", g.compute_cap},
                    {"arch", a ? Json(a->arch) : Json(nullptr)},
                    {"sm", a && a->exact ? Json(a->sm) : Json(nullptr)},
                    {"memory_used_mib", g.memory_used_mib},
                    {"memory_total_mib", g.memory_total_mib},
                    {"uuid", g.uuid},
                    {"target", target}});
  }
  return {{"nvidia_smi", f.nvidia_smi_found},
          {"error", OrNull(f.nvidia_smi_error)},
          {"list", gpus},
          {"targets", f.targets}};
}

// "busy": the processes on the GPUs, one row each.
Json BusyJson(const DoctorFindings& f) {
  Json busy = Json::array();
  for (const auto& b : f.busy) {
    for (const auto& a : b.apps) {
      busy.push_back({{"gpu", b.index},
                      {"pid", a.pid},
                      {"used_memory_mib", a.used_memory_mib >= 0 ? Json(a.used_memory_mib) : Json(nullptr)}});
    }
  }
  return busy;
}

// "topology": the links between GPUs (nvidia-smi topo -m); null when it was not read.
Json TopologyJson(const DoctorFindings& f) {
  if (!f.topology) return nullptr;
  Json links = Json::array();
  for (const auto& l : f.topology->links) {
    const char* kind = l.kind == TopoLink::Kind::kNvlink ? "nvlink"
                       : l.kind == TopoLink::Kind::kPcie ? "pcie"
                                                         : "other";
    links.push_back(
        {{"a", l.a}, {"b", l.b}, {"link", l.code}, {"kind", kind}, {"nvlinks", l.nvlinks}, {"meaning", l.meaning}});
  }
  return {{"links", links}};
}

// "python": the workload's Python and what it has.
Json PythonJson(const DoctorFindings& f) {
  const PythonInfo& p = f.python;
  return {{"path", OrNull(p.path)},
          {"why", p.why},
          {"runs", p.runs},
          {"error", OrNull(p.error)},
          {"version", OrNull(p.version)},
          {"torch", OrNull(p.torch_version)},
          {"torch_cuda", OrNull(p.torch_cuda)},
          {"nccl", OrNull(p.nccl)},
          {"nvtx", p.nvtx},
          {"torchrun", OrNull(p.torchrun)}};
}

}  // namespace

void PrintDoctorJson(const DoctorFindings& f, std::ostream& out) {
  Json j;
  j["schema"] = "cpprof.doctor/1";
  j["ok"] = !f.HasFail();
  j["checks"] = ChecksJson(f);
  j["nsys"] = NsysJson(f);
  j["cpu_sampling"] = {{"available", f.cpu_sampling ? Json(*f.cpu_sampling) : Json(nullptr)},
                       {"perf_event_paranoid", f.paranoid ? Json(*f.paranoid) : Json(nullptr)},
                       {"nsys_status_process_tree", OrNull(f.status_env.process_tree_text)}};
  j["gpus"] = GpusJson(f);
  j["busy"] = BusyJson(f);
  j["topology"] = TopologyJson(f);
  j["python"] = PythonJson(f);
  out << j.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
}

}  // namespace cpprof::doctor
