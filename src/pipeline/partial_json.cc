// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "pipeline/partial_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>
#include <vector>

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
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(BacktraceModuleSummary, backtraces, used, in_nvtx_modules, ranges,
                                                methods, files_read, files_missing, frames_not_matching, damaged)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ModuleGrouping, source, groups, module_ranges, backtraces)
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
                                                run_duration_ms, utc_start_ns, host, content_id, reconstructed_flags,
                                                messages)
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
  size_t size() const { return bytes_.size(); }

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

// Times in a partial: within what an export's reader keeps (nsys::kMaxTimestampNs), so that one
// difference or one clock shift fits int64; sums of many are saturated where they are formed.
constexpr int64_t kMaxPartialNumber = int64_t{1} << 62;

// A damaged packed array (in ReadSweep), said as the JSON library's errors are.
struct DamagedPartial : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// acc + d, refused past kMaxPartialNumber either way.
int64_t AddChecked(int64_t acc, int64_t d, const std::string& field) {
  int64_t sum = 0;
  if (__builtin_add_overflow(acc, d, &sum) || sum > kMaxPartialNumber || sum < -kMaxPartialNumber) {
    throw DamagedPartial(fmt::format("field '{}' holds a time past +-2^62 ns", field));
  }
  return sum;
}

// The count a packed array says it holds, checked against its bytes (each item takes at least
// `values` varints of one byte) before anything is reserved.
size_t PackedCount(const Json& j, size_t packed_bytes, int values, const std::string& field) {
  const Json& count = j.at("count");
  if (!count.is_number_unsigned() || count.get<uint64_t>() > packed_bytes / values) {
    throw DamagedPartial(fmt::format("field '{}.count' is {}, more than its packed bytes hold", field, count.dump()));
  }
  return count.get<size_t>();
}

// A class's key in comm_ops: "0" .. kNumOpClasses - 1.
int CommClass(const std::string& key) {
  if (key.size() > 2 || key.empty() ||
      !std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      std::stoi(key) >= model::kNumOpClasses) {
    throw DamagedPartial(
        fmt::format("field 'comm_ops' has key '{}', not an op class (0..{})", key, model::kNumOpClasses - 1));
  }
  return std::stoi(key);
}

void ReadCommOps(const Json& comm, analysis::RankModuleTimes& s) {
  for (const auto& [key, v] : comm.items()) {
    const int c = CommClass(key);
    const std::string field = "comm_ops." + key;
    Unpacker u(v.at("packed").get<std::string>());
    const size_t n = PackedCount(v, u.size(), 3, field);
    auto& ops = s.comm_ops[c];
    ops.reserve(n);
    int64_t prev = 0, d = 0, len = 0, node = 0;
    while (u.Next(d)) {
      if (!u.Next(len) || !u.Next(node) || node < 0 || node > UINT16_MAX || len < 0 || ops.size() >= n) {
        throw DamagedPartial(fmt::format("field '{}.packed' is damaged", field));
      }
      prev = AddChecked(prev, d, field);
      ops.push_back({prev, AddChecked(prev, len, field), static_cast<uint16_t>(node)});
    }
    if (!u.ok() || ops.size() != n) throw DamagedPartial(fmt::format("field '{}.packed' is damaged", field));
  }
}

// [class, start, end, node, inside] per op the window's edges cut or left near.
void ReadEdgeCommOps(const Json& edge, analysis::RankModuleTimes& s) {
  for (const auto& e : edge) {
    if (!e.is_array() || e.size() != 5 || !e.at(0).is_number_integer() || !e.at(3).is_number_integer()) {
      throw DamagedPartial("field 'edge_comm_ops' holds an item that is not [class, start, end, node, inside]");
    }
    const int64_t c = e.at(0).get<int64_t>(), node = e.at(3).get<int64_t>();
    if (c < 0 || c >= model::kNumOpClasses || node < 0 || node > UINT16_MAX) {
      throw DamagedPartial(fmt::format("field 'edge_comm_ops' names class {} or node {}, past their tables", c, node));
    }
    s.edge_comm_ops.push_back({{e.at(1).get<int64_t>(), e.at(2).get<int64_t>()},
                               static_cast<model::OpClass>(c),
                               static_cast<uint16_t>(node),
                               e.at(4).get<bool>()});
  }
}

void ReadSweep(const Json& j, analysis::RankModuleTimes& s) {
  j.at("nodes").get_to(s.nodes);
  j.at("phase_busy_ns").get_to(s.phase_busy_ns);
  s.has_backward = j.at("has_backward");
  s.launch_gap_ns = j.at("launch_gap_ns");
  s.host_stall_ns = j.at("host_stall_ns");
  s.window_start = j.at("window_start");
  s.window_end = j.at("window_end");
  s.collect_comm_ops = true;
  ReadCommOps(j.at("comm_ops"), s);
  if (j.contains("edge_comm_ops")) ReadEdgeCommOps(j.at("edge_comm_ops"), s);
  const Json& h = j.at("hidden_segments");
  Unpacker u(h.at("packed").get<std::string>());
  const size_t n = PackedCount(h, u.size(), 2, "hidden_segments");
  s.hidden_segments.reserve(n);
  int64_t prev = 0, d = 0, len = 0;
  while (u.Next(d)) {
    // Sorted and apart: each segment starts at or after the previous one's end.
    if (!u.Next(len) || d < 0 || len < 0 || s.hidden_segments.size() >= n) {
      throw DamagedPartial("field 'hidden_segments.packed' is damaged");
    }
    prev = AddChecked(prev, d, "hidden_segments");
    const int64_t end = AddChecked(prev, len, "hidden_segments");
    s.hidden_segments.push_back({prev, end});
    prev = end;
  }
  if (!u.ok() || s.hidden_segments.size() != n) throw DamagedPartial("field 'hidden_segments.packed' is damaged");
}

}  // namespace

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
  ReadSweep(j.at("sweep"), p.sweep);
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

namespace {

// Caps on what one partial may hold: past them it is not one cpprof wrote (a run's partial holds
// one export's processes, its module tree and a few notes).
constexpr size_t kMaxPartialArray = size_t{1} << 24;  // items in any array, besides the packed ones
constexpr size_t kMaxPartialNotes = 10'000;
constexpr int kMaxPartialNesting = 32;

// Fields that hold ids, not times or counts: any int64 (a globalPid carries its hardware id in
// its high bits).
bool IsIdField(std::string_view key) {
  return key == "global_pid" || key == "peak_global_tid" || key == "peak_correlation_id" || key == "pid";
}

// The first number out of range, array too long or nesting too deep in `j`, said with its field
// ("processes[0].summary.busy_ns"); "" when there is none. Iterative: the depth is capped, not
// the stack's.
std::string FirstOutOfRange(const Json& root, const std::string& root_field = "") {
  struct Item {
    const Json* j;
    std::string path;
    int depth;
  };
  std::vector<Item> todo{{&root, root_field, 0}};
  while (!todo.empty()) {
    Item it = std::move(todo.back());
    todo.pop_back();
    const Json& j = *it.j;
    const std::string_view key = std::string_view(it.path).substr(it.path.find_last_of('.') + 1);
    if (it.depth > kMaxPartialNesting) return fmt::format("field '{}' is nested deeper than a partial's", it.path);
    if (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t{INT64_MAX}) {
      return fmt::format("field '{}' is {}, past a 64-bit integer", it.path, j.dump());
    }
    if (j.is_number_integer() && !IsIdField(key)) {
      const int64_t v = j.get<int64_t>();
      if (v > kMaxPartialNumber || v < -kMaxPartialNumber) {
        return fmt::format("field '{}' is {}, past +-2^62", it.path, v);
      }
    }
    // A float where an integer is read converts out of range (undefined behaviour) past 2^63; no
    // float of a partial cpprof wrote comes near 2^62 (sizes, shares and ratios).
    if (j.is_number_float() && !(std::abs(j.get<double>()) <= static_cast<double>(kMaxPartialNumber))) {
      return fmt::format("field '{}' is {}, past +-2^62", it.path, j.dump());
    }
    if (j.is_array() && (j.size() > kMaxPartialArray || (key == "notes" && j.size() > kMaxPartialNotes))) {
      return fmt::format("field '{}' holds {} items, more than a partial's {}", it.path, j.size(),
                         key == "notes" ? kMaxPartialNotes : kMaxPartialArray);
    }
    // Children pushed last first: the first bad field in the document's order is the one named.
    const size_t first_child = todo.size();
    if (j.is_object()) {
      for (const auto& [k, v] : j.items()) todo.push_back({&v, it.path.empty() ? k : it.path + "." + k, it.depth + 1});
    } else if (j.is_array()) {
      for (size_t i = 0; i < j.size(); ++i) todo.push_back({&j[i], fmt::format("{}[{}]", it.path, i), it.depth + 1});
    }
    std::reverse(todo.begin() + static_cast<std::ptrdiff_t>(first_child), todo.end());
  }
  return "";
}

// The module tree: each node's parent an earlier node, depths and counts within the tree's.
std::string BadNode(const RunPartial& run) {
  if (run.nodes.size() > static_cast<size_t>(analysis::kMaxModuleNodes)) {
    return fmt::format("field 'nodes' holds {} nodes, more than a module tree's {}", run.nodes.size(),
                       analysis::kMaxModuleNodes);
  }
  for (size_t n = 0; n < run.nodes.size(); ++n) {
    const auto& t = run.nodes[n];
    if (t.parent < -1 || t.parent >= static_cast<int>(n)) {
      return fmt::format("field 'nodes[{}].parent' is {}, not -1 or an earlier node (0..{})", n, t.parent,
                         static_cast<int>(n) - 1);
    }
    if (t.depth < 0 || t.depth > analysis::kMaxModuleDepth + 1) {
      return fmt::format("field 'nodes[{}].depth' is {}, not 0..{}", n, t.depth, analysis::kMaxModuleDepth + 1);
    }
  }
  return "";
}

// A duration or count of a process's summary or module times below 0: the first, said with its
// field; "" when there is none. cpprof writes none (they are unions and sums of op lengths), and
// the merge and the readout add and subtract them.
std::string NegativeTime(const ProcessPartial& p, size_t i) {
  const auto& s = p.summary;
  const std::pair<const char*, int64_t> summary[] = {{"span_ns", s.span_ns},
                                                     {"busy_ns", s.busy_ns},
                                                     {"compute_only_ns", s.compute_only_ns},
                                                     {"comm_only_ns", s.comm_only_ns},
                                                     {"both_ns", s.both_ns},
                                                     {"idle_ns", s.idle_ns},
                                                     {"comm_ns", s.comm_ns},
                                                     {"compute_ns", s.compute_ns},
                                                     {"ops", s.ops},
                                                     {"invalid_ops", s.invalid_ops},
                                                     {"wait_ns", s.wait_ns},
                                                     {"transfer_ns", s.transfer_ns},
                                                     {"unmatched_ns", s.unmatched_ns},
                                                     {"exposed_transfer_ns", s.exposed_transfer_ns},
                                                     {"exposed_wait_ns", s.exposed_wait_ns},
                                                     {"launch_gap_ns", s.launch_gap_ns},
                                                     {"host_stall_ns", s.host_stall_ns}};
  for (const auto& [field, v] : summary) {
    if (v < 0) return fmt::format("field 'processes[{}].summary.{}' is {}, below 0", i, field, v);
  }
  for (size_t n = 0; n < p.sweep.nodes.size(); ++n) {
    const auto& t = p.sweep.nodes[n];
    const std::pair<const char*, int64_t> node[] = {
        {"busy_ns", t.busy_ns}, {"backward_ns", t.backward_ns},   {"comm_ns", t.comm_ns}, {"hidden_ns", t.hidden_ns},
        {"ops", t.ops},         {"host_idle_ns", t.host_idle_ns}, {"calls", t.calls}};
    for (const auto& [field, v] : node) {
      if (v < 0) return fmt::format("field 'processes[{}].sweep.nodes[{}].{}' is {}, below 0", i, n, field, v);
    }
  }
  return "";
}

// A process's references: its export, its module table, its ops' nodes and classes.
std::string BadProcess(const RunPartial& run, size_t i) {
  const ProcessPartial& p = run.processes[i];
  if (std::string bad = NegativeTime(p, i); !bad.empty()) return bad;
  const size_t nodes = std::max<size_t>(run.nodes.size(), 1);
  if (p.source >= run.sources.size()) {
    return fmt::format("field 'processes[{}].source' is {}, not an export of the partial (0..{})", i, p.source,
                       run.sources.size() - 1);
  }
  if (p.sweep.nodes.size() != nodes) {
    return fmt::format("field 'processes[{}].sweep.nodes' holds {} nodes, not the module tree's {}", i,
                       p.sweep.nodes.size(), nodes);
  }
  for (int c = 0; c < model::kNumOpClasses; ++c) {
    for (const auto& op : p.sweep.comm_ops[c]) {
      if (op.node >= nodes) {
        return fmt::format("field 'processes[{}].sweep.comm_ops.{}' names node {}, past the module tree's {}", i, c,
                           op.node, nodes);
      }
    }
  }
  for (const auto& e : p.sweep.edge_comm_ops) {
    if (e.node >= nodes) {
      return fmt::format("field 'processes[{}].sweep.edge_comm_ops' names node {}, past the module tree's {}", i,
                         e.node, nodes);
    }
  }
  for (size_t k = 0; k < p.summary.top_kernels.size(); ++k) {
    if (static_cast<int>(p.summary.top_kernels[k].cls) >= model::kNumOpClasses) {
      return fmt::format("field 'processes[{}].summary.top_kernels[{}].cls' is {}, not an op class (0..{})", i, k,
                         static_cast<int>(p.summary.top_kernels[k].cls), model::kNumOpClasses - 1);
    }
  }
  return "";
}

// What the merge and the readout index by or count on, checked once read.
std::string FirstInconsistency(const RunPartial& run) {
  if (run.sources.empty()) return "no export";
  if (std::string bad = BadNode(run); !bad.empty()) return bad;
  for (size_t i = 0; i < run.processes.size(); ++i) {
    if (std::string bad = BadProcess(run, i); !bad.empty()) return bad;
  }
  for (size_t s = 0; s < run.sources.size(); ++s) {
    for (size_t d = 0; d < run.sources[s].diagnostics.size(); ++d) {
      const int severity = static_cast<int>(run.sources[s].diagnostics[d].severity);
      if (severity < 0 || severity > static_cast<int>(model::Diagnostic::Severity::kError)) {
        return fmt::format("field 'sources[{}].diagnostics[{}].severity' is {}, not 0..2", s, d, severity);
      }
    }
  }
  for (size_t s = 0; s < run.sources.size(); ++s) {
    // Session starts are wall-clock times since 1970: the clocks' offsets are their differences.
    if (run.sources[s].run_export.utc_start_ns < 0 || run.sources[s].capture.utc_start_ns < 0) {
      return fmt::format("field 'sources[{}].run_export.utc_start_ns' or '.capture.utc_start_ns' is below 0", s);
    }
  }
  if (run.world_size < 0) return fmt::format("field 'world_size' is {}, below 0", run.world_size);
  return "";
}

// Streams a partial's long arrays (issue 39: a 133 MB partial took 3 GB as one document): each
// element of the arrays below is checked and read into its struct as soon as it is parsed, then
// dropped from the document, which thus holds one element of each at a time besides the short
// fields. What is kept is the structs. Elements nested in a streamed element (a process's module
// times) wait in `pending` until their element is read.
class PartialStream {
 public:
  // The callback of nlohmann's parser: false drops the value just parsed from its parent.
  bool OnEvent(int depth, Json::parse_event_t event, Json& parsed);
  // The first damage met while streaming ("" when none): said after the schema is checked, as the
  // schema field comes last.
  const std::string& error() const { return error_; }
  // The streamed arrays' elements into `run`, read from the rest of the document.
  void MoveInto(RunPartial& run);

 private:
  struct Frame {
    bool array = false;
    std::string key;   // in an object: the key being read
    size_t index = 0;  // in an array: the element being read
  };
  // The array open at the top of the stack as a pattern ("processes[].sweep.nodes") and as the
  // element's field in messages ("processes[2].sweep.nodes[7]").
  std::string Pattern() const;
  std::string Field() const;
  bool OnElement(Json& element);  // false: dropped (streamed)
  void OnArrayStart();

  std::vector<Frame> frames_;
  std::string error_;
  std::vector<analysis::ModuleTreeNode> nodes_;
  std::vector<ProcessPartial> processes_;
  std::vector<model::ModuleRankTime> pending_sweep_nodes_;
  std::vector<model::MemorySeries> series_;
  std::vector<model::MemoryPoint> pending_timeline_;
};

std::string PartialStream::Pattern() const {
  std::string p;
  for (size_t i = 1; i < frames_.size(); ++i) {
    const Frame& parent = frames_[i - 1];
    p += parent.array ? std::string("[]") : (p.empty() ? "" : ".") + parent.key;
  }
  return p;
}

std::string PartialStream::Field() const {
  std::string p;
  for (size_t i = 0; i < frames_.size(); ++i) {
    const Frame& f = frames_[i];
    if (f.array) {
      p += fmt::format("[{}]", f.index);
    } else if (i + 1 < frames_.size()) {
      p += (p.empty() ? "" : ".") + f.key;
    }
  }
  return p;
}

void PartialStream::OnArrayStart() {
  // A key given twice keeps its last value, as in the document.
  const std::string p = Pattern();
  if (p == "processes") processes_.clear();
  if (p == "nodes") nodes_.clear();
  if (p == "processes[].sweep.nodes") pending_sweep_nodes_.clear();
  if (p == "memory.series") series_.clear();
  if (p == "memory.series[].timeline") pending_timeline_.clear();
}

bool PartialStream::OnElement(Json& element) {
  const std::string p = Pattern();
  const bool streamed = p == "processes" || p == "nodes" || p == "processes[].sweep.nodes" || p == "memory.series" ||
                        p == "memory.series[].timeline";
  if (!streamed) return true;
  if (!error_.empty()) return false;  // damaged already: nothing more is kept
  const std::string field = Field();
  if (std::string why = FirstOutOfRange(element, field); !why.empty()) {
    error_ = why;
    return false;
  }
  try {
    if (p == "nodes") {
      nodes_.push_back(element.get<analysis::ModuleTreeNode>());
    } else if (p == "processes[].sweep.nodes") {
      pending_sweep_nodes_.push_back(element.get<model::ModuleRankTime>());
    } else if (p == "processes") {
      ProcessPartial process = element.get<ProcessPartial>();
      process.sweep.nodes = std::move(pending_sweep_nodes_);
      pending_sweep_nodes_.clear();
      processes_.push_back(std::move(process));
    } else if (p == "memory.series[].timeline") {
      pending_timeline_.push_back(element.get<model::MemoryPoint>());
    } else {
      model::MemorySeries series = element.get<model::MemorySeries>();
      series.timeline = std::move(pending_timeline_);
      pending_timeline_.clear();
      series_.push_back(std::move(series));
    }
  } catch (const Json::exception& e) {
    error_ = fmt::format("field '{}': {}", field, e.what());
  } catch (const DamagedPartial& e) {
    error_ = fmt::format("{} (in '{}')", e.what(), field);
  }
  return false;
}

bool PartialStream::OnEvent(int depth, Json::parse_event_t event, Json& parsed) {
  using E = Json::parse_event_t;
  if (depth > kMaxPartialNesting + 1) throw DamagedPartial("it is nested deeper than a partial's");
  switch (event) {
    case E::key:
      frames_.back().key = parsed.get<std::string>();
      return true;
    case E::object_start:
    case E::array_start:
      frames_.push_back({event == E::array_start, "", 0});
      if (event == E::array_start) OnArrayStart();
      return true;
    case E::object_end:
    case E::array_end:
      frames_.pop_back();
      break;
    case E::value:
      break;
  }
  // A value is complete: an element when its parent is an array.
  if (frames_.empty() || !frames_.back().array) return true;
  Frame& array = frames_.back();
  // Capped as they grow, not once whole (the notes too: 10,000 of them are a few hundred KB).
  const bool notes =
      frames_.size() >= 2 && !frames_[frames_.size() - 2].array && frames_[frames_.size() - 2].key == "notes";
  const size_t cap = notes ? kMaxPartialNotes : kMaxPartialArray;
  if (array.index >= cap) {
    throw DamagedPartial(fmt::format("field '{}' holds more than a partial's {} items", Pattern(), cap));
  }
  const bool keep = OnElement(parsed);
  ++array.index;
  return keep;
}

void PartialStream::MoveInto(RunPartial& run) {
  run.nodes = std::move(nodes_);
  run.processes = std::move(processes_);
  run.memory.series = std::move(series_);
}

}  // namespace

StatusOr<RunPartial> ReadPartialJson(std::istream& in, const std::string& name) {
  auto bad = [&](const std::string& why) {
    return Status(ExitCode::kBadInput,
                  fmt::format("'{}' is not a cpprof partial ({}): make one with 'cpprof report --partial "
                              "RUN.sqlite -o RUN.partial.json'",
                              name, why));
  };
  PartialStream stream;
  Json j;
  try {
    j = Json::parse(
        in,
        [&stream](int depth, Json::parse_event_t event, Json& parsed) { return stream.OnEvent(depth, event, parsed); },
        /*allow_exceptions=*/false);
  } catch (const DamagedPartial& e) {
    return bad(e.what());
  }
  if (j.is_discarded()) return bad("not JSON");
  const Json* schema_field = j.is_object() && j.contains("schema") ? &j["schema"] : nullptr;
  const std::string schema = schema_field && schema_field->is_string() ? schema_field->get<std::string>() : "";
  if (schema != kPartialSchema) {
    if (schema.rfind("cpprof.partial/", 0) == 0) {
      return Status(ExitCode::kBadInput,
                    fmt::format("'{}' is a partial of another cpprof ({}; this one reads {}): make it again with "
                                "this cpprof's 'report --partial'",
                                name, schema, kPartialSchema));
    }
    return bad(schema_field ? fmt::format("field 'schema' is {}, not \"{}\"", schema_field->dump(), kPartialSchema)
                            : fmt::format("schema is not {}", kPartialSchema));
  }
  if (!stream.error().empty()) return bad(stream.error());
  if (std::string why = FirstOutOfRange(j); !why.empty()) return bad(why);
  RunPartial run;
  try {
    j.get_to(run);
  } catch (const Json::exception& e) {
    return bad(e.what());
  } catch (const DamagedPartial& e) {
    return bad(e.what());
  }
  j = Json();  // the document's memory back before the merge
  stream.MoveInto(run);
  if (std::string why = FirstInconsistency(run); !why.empty()) return bad(why);
  return run;
}

}  // namespace cpprof::pipeline
