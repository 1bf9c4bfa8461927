// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "nsys/gpu_work_loader.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "base/parallel.h"
#include "base/saturating.h"

namespace cpprof::nsys {

using model::OpClass;

StatusOr<std::unordered_map<int, std::string>> ReadMemcpyKindNames(const Database& db) {
  std::unordered_map<int, std::string> names;
  if (db.HasTable("ENUM_CUDA_MEMCPY_OPER")) {
    CPPROF_ASSIGN_OR_RETURN(Statement st,
                            db.Prepare("SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER", "reading ENUM_CUDA_MEMCPY_OPER"));
    while (st.Step()) names[static_cast<int>(st.Int(0))] = fmt::format("[CUDA memcpy {}]", st.Text(1));
    CPPROF_RETURN_IF_ERROR(st.status());
  }
  return names;
}

StatusOr<std::unordered_map<int, std::string>> ReadMemoryKindNames(const Database& db) {
  std::unordered_map<int, std::string> names;
  if (!db.HasTable("ENUM_CUDA_MEM_KIND")) return names;
  CPPROF_ASSIGN_OR_RETURN(Statement st,
                          db.Prepare("SELECT id, label FROM ENUM_CUDA_MEM_KIND", "reading ENUM_CUDA_MEM_KIND"));
  while (st.Step()) names[static_cast<int>(st.Int(0))] = std::string(st.Text(1));
  CPPROF_RETURN_IF_ERROR(st.status());
  return names;
}

StatusOr<std::vector<model::CommOpTime>> ReadCommOps(const Database& db, const ExportSchema& schema,
                                                     const KernelClassifier& classify) {
  std::vector<model::CommOpTime> out;
  std::unordered_map<int64_t, OpClass> class_of;
  StringTable strings(db);
  KernelColumns cols;
  cols.name_prefix = "nccl";
  CPPROF_RETURN_IF_ERROR(ForEachKernel(
      db, schema,
      [&](const KernelRow& r) {
        if (!r.valid_times) return;
        auto [it, inserted] = class_of.try_emplace(r.name_id);
        if (inserted) it->second = classify(strings.Get(r.name_id));
        if (model::IsComm(it->second)) out.push_back({r.global_pid, r.start, r.end, it->second});
      },
      cols));
  CPPROF_RETURN_IF_ERROR(strings.status());
  return out;
}

StatusOr<std::vector<model::GpuProcess>> ReadGpuProcesses(const Database& db) {
  std::map<int64_t, std::map<int, int64_t>> counts;
  for (const char* table : {kKernelTable, kMemcpyTable, kMemsetTable}) {
    if (!db.HasTable(table)) continue;
    CPPROF_ASSIGN_OR_RETURN(Statement st,
                            db.Prepare(fmt::format("SELECT globalPid, deviceId, count(*) FROM {} GROUP BY 1, 2", table),
                                       "counting GPU ops"));
    while (st.Step()) counts[st.Int(0)][static_cast<int>(st.Int(1))] += st.Int(2);
    CPPROF_RETURN_IF_ERROR(st.status());
  }
  CPPROF_ASSIGN_OR_RETURN(auto procs, ReadProcesses(db));
  std::vector<model::GpuProcess> out;
  for (auto& [gpid, per_device] : counts) {
    model::GpuProcess p;
    p.global_pid = gpid;
    p.pid = PidOf(gpid);
    p.ops_per_device = std::move(per_device);
    auto it = procs.find(gpid);
    if (it != procs.end()) p.name = it->second.name;
    out.push_back(std::move(p));
  }
  return out;
}

namespace {

// Finds the ProcessGpuWork of a globalPid; rows come in long runs of one process, so the last
// hit is remembered.
class ProcessIndex {
 public:
  explicit ProcessIndex(model::GpuWork& work) : work_(work) {
    for (size_t i = 0; i < work.processes.size(); ++i) index_.emplace(work.processes[i].global_pid, i);
  }
  model::ProcessGpuWork& Get(int64_t global_pid) {
    if (last_ && last_gpid_ == global_pid) return work_.processes[last_idx_];
    auto [it, inserted] = index_.try_emplace(global_pid, work_.processes.size());
    if (inserted) {
      work_.processes.emplace_back();
      work_.processes.back().global_pid = global_pid;
      work_.processes.back().pid = PidOf(global_pid);
    }
    last_ = true;
    last_gpid_ = global_pid;
    last_idx_ = it->second;
    return work_.processes[last_idx_];
  }

 private:
  model::GpuWork& work_;
  std::unordered_map<int64_t, size_t> index_;
  bool last_ = false;
  int64_t last_gpid_ = 0;
  size_t last_idx_ = 0;
};

// The kernel's grid and block sizes in 32 bits (FNV-1a over the six sizes): what tells apart the
// launches of one kernel name on inputs of different shapes.
uint32_t LaunchHash(const KernelRow& r) {
  uint64_t h = 1469598103934665603ull;
  for (int64_t v : {r.grid[0], r.grid[1], r.grid[2], r.block[0], r.block[1], r.block[2]}) {
    h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
  }
  return static_cast<uint32_t>(h ^ (h >> 32));
}

// `key` (model::kOpKeyWarmup) is kept when `keys` asks for names, `launch` (LaunchHash) when it
// asks for launches too, the launching call (the tag's) with `hosts`.
void AddOp(model::ProcessGpuWork& p, int64_t start, int64_t end, OpClass c, model::OpTag t, int64_t key,
           uint32_t launch, OpKeys keys, bool hosts) {
  int64_t d = end - start;
  if (t.flags & model::kOpInWarmup) key |= model::kOpKeyWarmup;
  if (d <= model::kMaxOpDuration) {
    p.ops.push_back({start, static_cast<uint32_t>(d), c, t.phase, t.node});
    if (keys != OpKeys::kNone) p.op_keys.push_back(key);
    if (keys == OpKeys::kNamesAndLaunches) p.op_launches.push_back(launch);
    if (hosts) p.op_hosts.push_back({t.launch, t.thread});
  } else {
    p.long_ops.push_back({{start, end}, c, t.phase, t.node, keys != OpKeys::kNone ? key : 0});
  }
}

// Ops launched inside excluded ranges are counted and left out; ops outside the window are
// counted and left out, those across its edges cut at them; warm-up ops in the window are counted.
// NCCL ops outside the window or cut at its edges are also kept whole (model::EdgeCommOp).
bool Skip(model::ProcessGpuWork& p, const model::OpTag& t, OpClass c, const model::Interval* window, int64_t& start,
          int64_t& end) {
  if (t.flags & model::kOpExcluded) {
    ++p.excluded_ops;
    return true;
  }
  if (window) {
    bool inside =
        start == end ? start >= window->start && start < window->end : end > window->start && start < window->end;
    if (!inside) {
      ++p.outside_window_ops;
      SatAdd(p.outside_window_ns, end - start);
      if (model::IsComm(c) && end > start) p.edge_comm_ops.push_back({{start, end}, c, t.node, false});
      return true;
    }
    if (start < window->start || end > window->end) {
      ++p.clipped_ops;
      if (model::IsComm(c)) p.edge_comm_ops.push_back({{start, end}, c, t.node, true});
      start = std::max(start, window->start);
      end = std::min(end, window->end);
    }
  }
  if (t.flags & model::kOpInWarmup) {
    ++p.warmup_ops;
    SatAdd(p.warmup_ns, end - start);
  }
  return false;
}

// Reads the kernels of `rows` into `work` (in table order), with a string table, class cache
// and tagger of its own: one call per reading thread.
Status ReadKernels(const Database& db, const ExportSchema& schema, const KernelClassifier& classify,
                   const LaunchTagger& tag, const model::Interval* window, OpKeys keys, bool hosts, RowidRange rows,
                   model::GpuWork& work) {
  ProcessIndex index(work);
  StringTable strings(db);
  // Class per StringIds id, resolved on first sight (a vector: ids are small and dense).
  std::vector<int8_t> class_of_id;
  // `id`: the id kept (model::kMaxNameId for a damaged one); `string_id`: the one to name it by.
  auto class_of = [&](int64_t id, int64_t string_id) -> OpClass {
    if (static_cast<uint64_t>(id) < class_of_id.size() && class_of_id[id] >= 0) {
      return static_cast<OpClass>(class_of_id[id]);
    }
    if (id == model::kMaxNameId) {
      auto it = work.names.kernel_classes.find(id);
      if (it != work.names.kernel_classes.end()) return it->second;
    }
    const std::string& name = strings.Get(string_id);
    OpClass c = classify(name);
    work.names.kernel_names[id] = name;
    work.names.kernel_classes[id] = c;
    if (id < (int64_t{1} << 26)) {
      if (static_cast<uint64_t>(id) >= class_of_id.size()) class_of_id.resize(id + 1, -1);
      class_of_id[id] = static_cast<int8_t>(c);
    }
    return c;
  };
  KernelColumns columns;
  columns.rows = rows;
  columns.launch_config = keys == OpKeys::kNamesAndLaunches;
  CPPROF_RETURN_IF_ERROR(ForEachKernel(
      db, schema,
      [&](const KernelRow& r) {
        model::ProcessGpuWork& p = index.Get(r.global_pid);
        ++p.ops_per_device[r.device];
        if (!r.valid_times) {
          ++p.invalid_ops;
          return;
        }
        model::OpTag ot = tag ? tag(r.global_pid, r.correlation) : model::OpTag{};
        int64_t start = r.start, end = r.end;
        const bool id_ok = r.name_id >= 0 && r.name_id <= model::kMaxNameId;  // else damaged: model::kMaxNameId
        const int64_t id = id_ok ? r.name_id : model::kMaxNameId;
        OpClass c = class_of(id, r.name_id);
        auto& t = p.kernels[id];
        ++t.capture_instances;
        if (Skip(p, ot, c, window, start, end)) return;
        AddOp(p, start, end, c, ot, id, r.has_launch_config ? LaunchHash(r) : 0, keys, hosts);
        SatAdd(t.total_ns, end - start);
        ++t.instances;
      },
      columns));
  return strings.status();
}

// Adds `part` (read from later rows) to `work`.
void Merge(model::GpuWork&& part, model::GpuWork& work) {
  ProcessIndex index(work);
  for (auto& q : part.processes) {
    model::ProcessGpuWork& p = index.Get(q.global_pid);
    for (const auto& [dev, n] : q.ops_per_device) p.ops_per_device[dev] += n;
    p.ops.Append(std::move(q.ops));
    p.op_keys.Append(std::move(q.op_keys));
    p.op_launches.Append(std::move(q.op_launches));
    p.op_hosts.Append(std::move(q.op_hosts));
    p.long_ops.insert(p.long_ops.end(), q.long_ops.begin(), q.long_ops.end());
    for (const auto& [id, t] : q.kernels) {
      auto& k = p.kernels[id];
      SatAdd(k.total_ns, t.total_ns);
      k.instances += t.instances;
      k.capture_instances += t.capture_instances;
    }
    p.invalid_ops += q.invalid_ops;
    p.excluded_ops += q.excluded_ops;
    p.warmup_ops += q.warmup_ops;
    SatAdd(p.warmup_ns, q.warmup_ns);
    p.outside_window_ops += q.outside_window_ops;
    SatAdd(p.outside_window_ns, q.outside_window_ns);
    p.clipped_ops += q.clipped_ops;
    p.edge_comm_ops.insert(p.edge_comm_ops.end(), q.edge_comm_ops.begin(), q.edge_comm_ops.end());
  }
  work.names.kernel_names.merge(part.names.kernel_names);
  work.names.kernel_classes.merge(part.names.kernel_classes);
}

// Memcpys and memsets (after the kernels: ops of a process stay in table order per table).
Status LoadMemOps(const Database& db, const LaunchTagger& tag, const model::Interval* window, OpKeys keys, bool hosts,
                  model::GpuWork& work) {
  ProcessIndex index(work);
  CPPROF_ASSIGN_OR_RETURN(auto kind_names, ReadMemcpyKindNames(db));
  CPPROF_RETURN_IF_ERROR(ForEachMemOp(db, [&](const MemOpRow& r) {
    model::ProcessGpuWork& p = index.Get(r.global_pid);
    ++p.ops_per_device[r.device];
    if (!r.valid_times) {
      ++p.invalid_ops;
      return;
    }
    OpClass c = r.copy_kind < 0                    ? OpClass::kMemset
                : r.copy_kind == kMemcpyPeerToPeer ? OpClass::kPeerCopy
                                                   : OpClass::kMemcpy;
    model::OpTag ot = tag ? tag(r.global_pid, r.correlation) : model::OpTag{};
    int64_t start = r.start, end = r.end;
    auto& t = p.mem_ops[r.copy_kind];
    t.cls = c;
    ++t.capture_instances;
    if (Skip(p, ot, c, window, start, end)) return;
    AddOp(p, start, end, c, ot, model::kOpKeyMemOp | static_cast<uint32_t>(r.copy_kind), 0, keys, hosts);
    SatAdd(t.total_ns, end - start);
    ++t.instances;
  }));

  for (const auto& p : work.processes) {
    for (const auto& [kind, t] : p.mem_ops) {
      if (work.names.mem_op_names.count(kind)) continue;
      auto it = kind_names.find(kind);
      work.names.mem_op_names[kind] = kind < 0                 ? "[CUDA memset]"
                                      : it != kind_names.end() ? it->second
                                                               : fmt::format("[CUDA memcpy kind {}]", kind);
    }
  }

  return OkStatus();
}

}  // namespace

StatusOr<model::GpuWork> LoadGpuWork(const Database& db, const ExportSchema& schema, const KernelClassifier& classify,
                                     const LaunchTaggerFactory& make_tagger, size_t threads,
                                     int64_t min_rows_per_thread, const model::Interval* window, OpKeys keep_op_keys,
                                     bool keep_hosts) {
  model::GpuWork work;
  auto tagger = [&] { return make_tagger ? make_tagger() : LaunchTagger{}; };

  int64_t first = 0, last = -1;
  if (threads > 1) {
    // Two subqueries: SQLite reads min or max of the rowid from the b-tree's ends only when the
    // query has one of them; both in one SELECT scan the whole table.
    CPPROF_ASSIGN_OR_RETURN(Statement st, db.Prepare(fmt::format("SELECT (SELECT min(rowid) FROM {0}), "
                                                                 "(SELECT max(rowid) FROM {0})",
                                                                 kKernelTable),
                                                     "reading kernels"));
    if (st.Step() && !st.IsNull(0)) first = st.Int(0), last = st.Int(1);
    CPPROF_RETURN_IF_ERROR(st.status());
    // Rowids of a damaged export may span more than int64 (±2^63): one thread reads those.
    __extension__ __int128 rows = static_cast<__int128>(last) - first + 1;  // GCC's, exact
    if (rows > INT64_MAX / 2) rows = 1;
    int64_t most = static_cast<int64_t>(rows) / std::max<int64_t>(1, min_rows_per_thread);
    threads = std::min<size_t>(threads, static_cast<size_t>(std::max<int64_t>(1, most)));
  }
  if (threads <= 1) {
    CPPROF_RETURN_IF_ERROR(ReadKernels(db, schema, classify, tagger(), window, keep_op_keys, keep_hosts, {}, work));
  } else {
    // Rowid ranges of equal size, each read on its own connection (the first on `db`), then
    // merged in rowid order: the ops stay in table order.
    std::vector<model::GpuWork> parts(threads);
    std::vector<Status> status(threads);
    std::vector<LaunchTagger> taggers;
    for (size_t i = 0; i < threads; ++i) taggers.push_back(tagger());
    const auto n = static_cast<int64_t>(threads);
    const int64_t step = (last - first + n) / n;
    ParallelFor(threads, threads, [&](size_t i) {
      const auto k = static_cast<int64_t>(i);
      RowidRange rows{i == 0 ? INT64_MIN : first + k * step, k + 1 == n ? INT64_MAX : first + (k + 1) * step - 1};
      if (i == 0) {
        status[i] = ReadKernels(db, schema, classify, taggers[i], window, keep_op_keys, keep_hosts, rows, parts[i]);
        return;
      }
      StatusOr<Database> own = db.Reopen();
      status[i] =
          own.ok() ? ReadKernels(*own, schema, classify, taggers[i], window, keep_op_keys, keep_hosts, rows, parts[i])
                   : own.status();
    });
    for (const Status& st : status) CPPROF_RETURN_IF_ERROR(st);
    work = std::move(parts[0]);
    for (size_t i = 1; i < threads; ++i) Merge(std::move(parts[i]), work);
  }
  CPPROF_RETURN_IF_ERROR(LoadMemOps(db, tagger(), window, keep_op_keys, keep_hosts, work));
  CPPROF_ASSIGN_OR_RETURN(auto procs, ReadProcesses(db));
  for (auto& p : work.processes) {
    auto it = procs.find(p.global_pid);
    if (it != procs.end()) p.name = it->second.name;
  }
  std::sort(work.processes.begin(), work.processes.end(),
            [](const auto& a, const auto& b) { return a.global_pid < b.global_pid; });
  return work;
}

}  // namespace cpprof::nsys
