// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "pipeline/partial_json.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace cpprof::model {
using Json = nlohmann::json;
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ClassTime, sum_ns, union_ns, hidden_ns, instances)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(KernelTotal, name, cls, total_ns, instances)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RankSummary, rank, global_pid, pid, device, process, first_start,
                                                last_end, span_ns, busy_ns, compute_only_ns, comm_only_ns, both_ns,
                                                idle_ns, comm_ns, compute_ns, classes, top_kernels, capture_counts, ops,
                                                invalid_ops, peak_mem_bytes, peak_mem_ns, peak_mem_module, wait_ns,
                                                transfer_ns, unmatched_ns, exposed_transfer_ns, exposed_wait_ns,
                                                launch_gap_ns, host_stall_ns, launch_bound)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ModuleRankTime, busy_ns, own_ns, backward_ns, comm_ns, hidden_ns,
                                                comm_kind_ns, ops, wait_ns, transfer_ns, exposed_transfer_ns,
                                                caused_wait_ns, last_arrivals, host_idle_ns, calls)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(IterationTime, name, start_ns, end_ns, warmup, in_window)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Window, requested, kind, method, description, whole_capture, start_ns,
                                                end_ns, iterations, iter_median_ns, iter_min_ns, iter_max_ns,
                                                left_out_ops, left_out_ns, clipped_ops)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ModuleGrouping, source, groups, module_ranges)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ExportInfo, file, schema_version, nsys_version, captured, not_captured)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RunExport, file, name, host, ranks, utc_start_ns, offset_ns, refine_ns,
                                                residual_ns, matched_ops, method)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(MemoryPoint, time_ns, bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(MemorySeries, global_pid, pid, device, peak_bytes, peak_ns,
                                                peak_correlation_id, peak_global_tid, final_bytes, events,
                                                unmatched_frees, timeline)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(MemoryUsage, captured, note, counted_kinds, series, ignored_events,
                                                invalid_events)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Diagnostic, severity, id, title, detail, fix)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FunctionsTraceEntry, domain, module, functions)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(NsysMessage, severity, source, text, raw_text, count)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CaptureInfo, recorded, traced, gpu_memory_usage, cuda_backtrace_kinds,
                                                python_backtraces, cpu_sampling, sampling_mode, sampling_period,
                                                sampling_backtraces, cpu_context_switches, osrt_backtraces,
                                                osrt_backtrace_threshold_ns, functions_trace_path, functions_trace,
                                                functions_trace_error, pytorch_autograd, gpu_names, injections,
                                                cuda_graph_trace_mode, command, arguments, working_dir, env,
                                                run_duration_ms, utc_start_ns, host, reconstructed_flags, messages)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(NcclRankInfo, rank, nranks, cuda_device)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(GpuProcess, global_pid, pid, name, ops_per_device)
}  // namespace cpprof::model

namespace cpprof::analysis {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ModuleTreeNode, name, range, parent, depth, is_group)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Dims, values, grid_rows, grid_cols, dtype, source, origin)
}  // namespace cpprof::analysis

namespace cpprof::pipeline {

namespace {

using Json = nlohmann::json;

// Varints (LEB128) of zigzag-coded signed numbers, in base64: the compact form of the long
// arrays.
class Packer {
 public:
  void Add(int64_t v) {
    uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
    while (z >= 0x80) {
      bytes_.push_back(static_cast<char>((z & 0x7F) | 0x80));
      z >>= 7;
    }
    bytes_.push_back(static_cast<char>(z));
  }
  std::string Base64() const {
    static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((bytes_.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 2 < bytes_.size(); i += 3) {
      uint32_t n = (uint8_t(bytes_[i]) << 16) | (uint8_t(bytes_[i + 1]) << 8) | uint8_t(bytes_[i + 2]);
      for (int k = 18; k >= 0; k -= 6) out.push_back(kAlphabet[(n >> k) & 63]);
    }
    if (i < bytes_.size()) {
      uint32_t n = uint8_t(bytes_[i]) << 16;
      if (i + 1 < bytes_.size()) n |= uint8_t(bytes_[i + 1]) << 8;
      out.push_back(kAlphabet[(n >> 18) & 63]);
      out.push_back(kAlphabet[(n >> 12) & 63]);
      out.push_back(i + 1 < bytes_.size() ? kAlphabet[(n >> 6) & 63] : '=');
      out.push_back('=');
    }
    return out;
  }

 private:
  std::string bytes_;
};

class Unpacker {
 public:
  explicit Unpacker(const std::string& b64) {
    uint32_t n = 0;
    int bits = 0;
    for (char c : b64) {
      int v = c >= 'A' && c <= 'Z'   ? c - 'A'
              : c >= 'a' && c <= 'z' ? c - 'a' + 26
              : c >= '0' && c <= '9' ? c - '0' + 52
              : c == '+'             ? 62
              : c == '/'             ? 63
                                     : -1;
      if (v < 0) {
        if (c != '=') ok_ = false;
        continue;
      }
      n = (n << 6) | static_cast<uint32_t>(v);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        bytes_.push_back(static_cast<char>((n >> bits) & 0xFF));
      }
    }
  }
  bool Next(int64_t& v) {
    uint64_t z = 0;
    for (int shift = 0; pos_ < bytes_.size() && shift < 64; shift += 7) {
      uint8_t b = static_cast<uint8_t>(bytes_[pos_++]);
      z |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) {
        v = static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
        return true;
      }
    }
    if (pos_ < bytes_.size()) ok_ = false;
    return false;
  }
  bool ok() const { return ok_ && pos_ == bytes_.size(); }

 private:
  std::string bytes_;
  size_t pos_ = 0;
  bool ok_ = true;
};

Json SweepJson(const analysis::RankModuleTimes& s) {
  Json j;
  j["nodes"] = s.nodes;
  j["phase_busy_ns"] = s.phase_busy_ns;
  j["has_backward"] = s.has_backward;
  j["launch_gap_ns"] = s.launch_gap_ns;
  j["host_stall_ns"] = s.host_stall_ns;
  j["window_start"] = s.window_start;
  j["window_end"] = s.window_end;
  Json comm = Json::object();
  for (int c = 0; c < model::kNumOpClasses; ++c) {
    const auto& ops = s.comm_ops[c];
    if (ops.empty()) continue;
    Packer p;  // per op: start - previous start, end - start, node
    int64_t prev = 0;
    for (const auto& op : ops) {
      p.Add(op.start - prev);
      p.Add(op.end - op.start);
      p.Add(op.node);
      prev = op.start;
    }
    comm[std::to_string(c)] = {{"count", ops.size()}, {"packed", p.Base64()}};
  }
  j["comm_ops"] = comm;
  Json edge = Json::array();  // [class, start, end, node, inside] per op the window's edges cut or left near
  for (const auto& e : s.edge_comm_ops) {
    edge.push_back({static_cast<int>(e.cls), e.whole.start, e.whole.end, e.node, e.inside});
  }
  j["edge_comm_ops"] = edge;
  Packer h;  // per segment: start - previous end, length
  int64_t prev = 0;
  for (const auto& iv : s.hidden_segments) {
    h.Add(iv.start - prev);
    h.Add(iv.end - iv.start);
    prev = iv.end;
  }
  j["hidden_segments"] = {{"count", s.hidden_segments.size()}, {"packed", h.Base64()}};
  return j;
}

bool ReadSweep(const Json& j, analysis::RankModuleTimes& s) {
  j.at("nodes").get_to(s.nodes);
  j.at("phase_busy_ns").get_to(s.phase_busy_ns);
  s.has_backward = j.at("has_backward");
  s.launch_gap_ns = j.at("launch_gap_ns");
  s.host_stall_ns = j.at("host_stall_ns");
  s.window_start = j.at("window_start");
  s.window_end = j.at("window_end");
  s.collect_comm_ops = true;
  for (const auto& [key, v] : j.at("comm_ops").items()) {
    int c = std::stoi(key);
    if (c < 0 || c >= model::kNumOpClasses) return false;
    Unpacker u(v.at("packed").get<std::string>());
    const size_t n = v.at("count");
    auto& ops = s.comm_ops[c];
    ops.reserve(n);
    int64_t prev = 0, d = 0, len = 0, node = 0;
    while (u.Next(d)) {
      if (!u.Next(len) || !u.Next(node) || node < 0 || node > UINT16_MAX) return false;
      prev += d;
      ops.push_back({prev, prev + len, static_cast<uint16_t>(node)});
    }
    if (!u.ok() || ops.size() != n) return false;
  }
  if (j.contains("edge_comm_ops")) {
    for (const auto& e : j.at("edge_comm_ops")) {
      const int c = e.at(0);
      const int node = e.at(3);
      if (c < 0 || c >= model::kNumOpClasses || node < 0 || node > UINT16_MAX) return false;
      s.edge_comm_ops.push_back({{e.at(1).get<int64_t>(), e.at(2).get<int64_t>()},
                                 static_cast<model::OpClass>(c),
                                 static_cast<uint16_t>(node),
                                 e.at(4).get<bool>()});
    }
  }
  const Json& h = j.at("hidden_segments");
  Unpacker u(h.at("packed").get<std::string>());
  int64_t prev = 0, d = 0, len = 0;
  while (u.Next(d)) {
    if (!u.Next(len)) return false;
    prev += d;
    s.hidden_segments.push_back({prev, prev + len});
    prev += len;
  }
  return u.ok() && s.hidden_segments.size() == h.at("count").get<size_t>();
}

}  // namespace

// A damaged packed array (in ReadSweep), said as the JSON library's errors are.
struct DamagedPartial : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void to_json(Json& j, const ProcessPartial& p) {
  j = {{"source", p.source},
       {"process", p.process},
       {"nccl", p.nccl},
       {"summary", p.summary},
       {"sweep", SweepJson(p.sweep)},
       {"excluded_ops", p.excluded_ops},
       {"warmup_ops", p.warmup_ops},
       {"warmup_ns", p.warmup_ns},
       {"outside_window_ops", p.outside_window_ops},
       {"outside_window_ns", p.outside_window_ns},
       {"clipped_ops", p.clipped_ops}};
}

void from_json(const Json& j, ProcessPartial& p) {
  j.at("source").get_to(p.source);
  j.at("process").get_to(p.process);
  j.at("nccl").get_to(p.nccl);
  j.at("summary").get_to(p.summary);
  if (!ReadSweep(j.at("sweep"), p.sweep)) throw DamagedPartial("damaged communication ops");
  j.at("excluded_ops").get_to(p.excluded_ops);
  j.at("warmup_ops").get_to(p.warmup_ops);
  j.at("warmup_ns").get_to(p.warmup_ns);
  j.at("outside_window_ops").get_to(p.outside_window_ops);
  j.at("outside_window_ns").get_to(p.outside_window_ns);
  j.at("clipped_ops").get_to(p.clipped_ops);
}

// Every field required on reading: a partial is written whole by one cpprof.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(EfficiencyInputs, has_dims, dims, missing, cost_config, notes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SourcePartial, run_export, export_info, capture, diagnostics, interconnect)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(AttributionFacts, backward_ranges, backward_mapped, cross_thread, modules_overflowed,
                                   modules_too_deep, warmup_range, exclude_work_pattern)

// The attribution facts are fields of the partial's own object, as they were when they were
// RunPartial's own fields, before they were one struct.
void to_json(Json& j, const RunPartial& r) {
  j = Json{{"sources", r.sources},       {"processes", r.processes}, {"rank_method", r.rank_method},
           {"world_size", r.world_size}, {"nodes", r.nodes},         {"grouping", r.grouping},
           {"window", r.window},         {"memory", r.memory},       {"notes", r.notes},
           {"efficiency", r.efficiency}};
  j.update(Json(r.attribution));
}

void from_json(const Json& j, RunPartial& r) {
  j.at("sources").get_to(r.sources);
  j.at("processes").get_to(r.processes);
  j.at("rank_method").get_to(r.rank_method);
  j.at("world_size").get_to(r.world_size);
  j.at("nodes").get_to(r.nodes);
  j.at("grouping").get_to(r.grouping);
  j.get_to(r.attribution);
  j.at("window").get_to(r.window);
  j.at("memory").get_to(r.memory);
  j.at("notes").get_to(r.notes);
  j.at("efficiency").get_to(r.efficiency);
}

void WritePartialJson(const RunPartial& run, std::ostream& out) {
  Json j = run;
  j["schema"] = kPartialSchema;
  out << j.dump() << '\n';
}

StatusOr<RunPartial> ReadPartialJson(std::istream& in, const std::string& name) {
  auto bad = [&](const std::string& why) {
    return Status(ExitCode::kBadInput,
                  fmt::format("'{}' is not a cpprof partial ({}): make one with 'cpprof report --partial "
                              "RUN.sqlite -o RUN.partial.json'",
                              name, why));
  };
  Json j = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad("not JSON");
  if (!j.is_object() || j.value("schema", "") != kPartialSchema) {
    const std::string schema = j.is_object() ? j.value("schema", "") : "";
    if (schema.rfind("cpprof.partial/", 0) == 0) {
      return Status(ExitCode::kBadInput,
                    fmt::format("'{}' is a partial of another cpprof ({}; this one reads {}): make it again with "
                                "this cpprof's 'report --partial'",
                                name, schema, kPartialSchema));
    }
    return bad(fmt::format("schema is not {}", kPartialSchema));
  }
  RunPartial run;
  try {
    j.get_to(run);
  } catch (const Json::exception& e) {
    return bad(e.what());
  } catch (const DamagedPartial& e) {
    return bad(e.what());
  }
  if (run.sources.empty()) return bad("no export");
  for (const auto& p : run.processes) {
    if (p.source >= run.sources.size()) return bad("a process of no export");
    if (p.sweep.nodes.size() != std::max<size_t>(run.nodes.size(), 1)) return bad("module table of another size");
  }
  return run;
}

}  // namespace cpprof::pipeline
