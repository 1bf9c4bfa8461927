// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "doctor/nvidia_smi.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>

namespace cpprof::doctor {

namespace {

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return std::string(s.substr(b, e - b));
}

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t p = s.find(sep, start);
    out.emplace_back(s.substr(start, p == std::string_view::npos ? std::string_view::npos : p - start));
    if (p == std::string_view::npos) break;
    start = p + 1;
  }
  return out;
}

std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> lines = Split(text, '\n');
  for (auto& l : lines) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
  }
  return lines;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  std::string t = Trim(s);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p == t.data()) return std::nullopt;
  return v;
}

// A CSV of nvidia-smi: the header's names, without the unit ("memory.used [MiB]" ->
// "memory.used"), mapped to their column.
struct Csv {
  std::map<std::string, size_t> columns;
  std::vector<std::vector<std::string>> rows;
};

StatusOr<Csv> ParseCsv(std::string_view text, const char* what) {
  Csv csv;
  bool header = true;
  for (const auto& line : Lines(text)) {
    if (Trim(line).empty()) continue;
    std::vector<std::string> cells = Split(line, ',');
    for (auto& c : cells) c = Trim(c);
    if (header) {
      for (size_t i = 0; i < cells.size(); ++i) {
        std::string name = cells[i];
        if (size_t br = name.find(" ["); br != std::string::npos) name.resize(br);
        csv.columns[name] = i;
      }
      header = false;
      continue;
    }
    csv.rows.push_back(std::move(cells));
  }
  if (header) return Error(ExitCode::kExternal, fmt::format("nvidia-smi printed no {} (empty output)", what));
  return csv;
}

std::string Cell(const Csv& csv, const std::vector<std::string>& row, const std::string& col) {
  auto it = csv.columns.find(col);
  if (it == csv.columns.end() || it->second >= row.size()) return "";
  return row[it->second];
}

// "143771 MiB" -> 143771; "[N/A]" -> -1.
int64_t Mib(const std::string& cell) {
  auto v = ParseInt(cell.substr(0, cell.find(' ')));
  return v ? *v : -1;
}

}  // namespace

StatusOr<std::vector<GpuInfo>> ParseGpuQuery(std::string_view text) {
  CPPROF_ASSIGN_OR_RETURN(Csv csv, ParseCsv(text, "GPU list"));
  for (const char* col : {"index", "name", "compute_cap"}) {
    if (!csv.columns.count(col)) {
      return Error(ExitCode::kExternal,
                   fmt::format("nvidia-smi's GPU list has no '{}' column (an old driver? compute_cap "
                               "needs driver 510 or newer)",
                               col));
    }
  }
  std::vector<GpuInfo> gpus;
  for (const auto& row : csv.rows) {
    GpuInfo g;
    auto idx = ParseInt(Cell(csv, row, "index"));
    if (!idx)
      return Error(ExitCode::kExternal, fmt::format("nvidia-smi: unreadable GPU index in '{}'", fmt::join(row, ", ")));
    g.index = static_cast<int>(*idx);
    g.name = Cell(csv, row, "name");
    g.compute_cap = Cell(csv, row, "compute_cap");
    std::vector<std::string> cc = Split(g.compute_cap, '.');
    if (auto mj = ParseInt(cc[0])) g.cc_major = static_cast<int>(*mj);
    if (cc.size() > 1) {
      if (auto mn = ParseInt(cc[1])) g.cc_minor = static_cast<int>(*mn);
    }
    g.memory_used_mib = Mib(Cell(csv, row, "memory.used"));
    g.memory_total_mib = Mib(Cell(csv, row, "memory.total"));
    g.uuid = Cell(csv, row, "uuid");
    gpus.push_back(std::move(g));
  }
  return gpus;
}

StatusOr<std::vector<ComputeApp>> ParseComputeApps(std::string_view text) {
  CPPROF_ASSIGN_OR_RETURN(Csv csv, ParseCsv(text, "process list"));
  if (!csv.columns.count("pid")) {
    return Error(ExitCode::kExternal, "nvidia-smi's process list has no 'pid' column");
  }
  std::string mem_col = csv.columns.count("used_gpu_memory") ? "used_gpu_memory" : "used_memory";
  std::vector<ComputeApp> apps;
  for (const auto& row : csv.rows) {
    auto pid = ParseInt(Cell(csv, row, "pid"));
    if (!pid) continue;  // "No running processes found" and the like
    apps.push_back({*pid, Mib(Cell(csv, row, mem_col)), Cell(csv, row, "gpu_uuid")});
  }
  return apps;
}

TopoLink ClassifyLink(const std::string& code) {
  TopoLink l;
  l.code = code;
  if (code.size() > 2 && code.compare(0, 2, "NV") == 0 && std::all_of(code.begin() + 2, code.end(), ::isdigit)) {
    l.kind = TopoLink::Kind::kNvlink;
    l.nvlinks = std::stoi(code.substr(2));
    l.meaning = fmt::format("NVLink, a bonded set of {} links", l.nvlinks);
    return l;
  }
  // The legend printed by `nvidia-smi topo -m`.
  static const std::map<std::string, std::string> kPcie = {
      {"PIX", "PCIe, at most a single PCIe bridge"},
      {"PXB", "PCIe, multiple PCIe bridges (not the host bridge)"},
      {"PHB", "PCIe through a PCIe host bridge (typically the CPU)"},
      {"NODE", "PCIe and the interconnect between PCIe host bridges within a NUMA node"},
      {"SYS", "PCIe and the SMP interconnect between NUMA nodes (QPI/UPI)"},
  };
  if (auto it = kPcie.find(code); it != kPcie.end()) {
    l.kind = TopoLink::Kind::kPcie;
    l.meaning = it->second;
  } else {
    l.meaning = "not described by nvidia-smi's legend";
  }
  return l;
}

// nvidia-smi underlines the matrix header with terminal escapes (ESC[4m ... ESC[0m) even when
// its output is a pipe: drop every CSI sequence (ESC '[' parameters, then a final byte @..~).
static std::string StripAnsi(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
      size_t j = i + 2;
      while (j < text.size() && !(text[j] >= '@' && text[j] <= '~')) ++j;
      i = j;  // skip the final byte too
      continue;
    }
    out += text[i];
  }
  return out;
}

StatusOr<Topology> ParseTopology(std::string_view raw) {
  Topology topo;
  std::string text = StripAnsi(raw);
  std::vector<std::string> lines = Lines(text);
  size_t i = 0;
  // Header: a tab, then the device names, then "CPU Affinity" and the like.
  for (; i < lines.size(); ++i) {
    std::vector<std::string> cells = Split(lines[i], '\t');
    if (cells.size() < 2 || !Trim(cells[0]).empty()) continue;
    for (size_t c = 1; c < cells.size(); ++c) {
      std::string name = Trim(cells[c]);
      bool device = (name.rfind("GPU", 0) == 0 || name.rfind("NIC", 0) == 0) && name.size() > 3 &&
                    std::all_of(name.begin() + 3, name.end(), ::isdigit);
      if (!device) break;
      topo.devices.push_back(name);
    }
    if (!topo.devices.empty()) break;
  }
  if (topo.devices.empty()) {
    return Error(ExitCode::kExternal, "nvidia-smi topo -m printed no device matrix");
  }
  std::map<std::string, std::vector<std::string>> rows;
  for (++i; i < lines.size(); ++i) {
    if (Trim(lines[i]).empty()) break;  // the legend follows
    std::vector<std::string> cells = Split(lines[i], '\t');
    std::string name = Trim(cells[0]);
    if (cells.size() < topo.devices.size() + 1) continue;
    std::vector<std::string> codes;
    for (size_t c = 0; c < topo.devices.size(); ++c) codes.push_back(Trim(cells[c + 1]));
    rows[name] = std::move(codes);
  }
  for (size_t a = 0; a < topo.devices.size(); ++a) {
    if (topo.devices[a].rfind("GPU", 0) != 0) continue;
    auto row = rows.find(topo.devices[a]);
    if (row == rows.end()) {
      return Error(ExitCode::kExternal, fmt::format("nvidia-smi topo -m has no row for {}", topo.devices[a]));
    }
    for (size_t b = a + 1; b < topo.devices.size(); ++b) {
      if (topo.devices[b].rfind("GPU", 0) != 0) continue;
      TopoLink l = ClassifyLink(row->second[b]);
      l.a = topo.devices[a];
      l.b = topo.devices[b];
      topo.links.push_back(std::move(l));
    }
  }
  return topo;
}

}  // namespace cpprof::doctor
