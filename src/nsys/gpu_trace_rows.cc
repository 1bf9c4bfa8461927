#include "nsys/gpu_trace_rows.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "nsys/export_reader.h"

namespace cpprof::nsys {

namespace {

// Texts interned once each; ids of a table (StringIds, a label enum, devices) map to them.
class Texts {
 public:
  explicit Texts(std::vector<std::string>& texts) : texts_(texts) {}
  int32_t Add(std::string text) {
    auto [it, inserted] = index_.try_emplace(text, static_cast<int32_t>(texts_.size()));
    if (inserted) texts_.push_back(std::move(text));
    return it->second;
  }

 private:
  std::vector<std::string>& texts_;
  std::unordered_map<std::string, int32_t> index_;
};

using IdTexts = std::unordered_map<int64_t, int32_t>;

// `SELECT id, text` rows as ids -> interned texts (a NULL text left out: it prints empty).
StatusOr<IdTexts> ReadIdTexts(const Database& db, const std::string& sql, Texts& texts) {
  IdTexts out;
  CPPROF_ASSIGN_OR_RETURN(Statement st, db.Prepare(sql, "reading labels"));
  while (st.Step()) {
    if (!st.IsNull(1)) out.try_emplace(st.Int(0), texts.Add(std::string(st.Text(1))));
  }
  CPPROF_RETURN_IF_ERROR(st.status());
  return out;
}

int32_t Lookup(const IdTexts& m, const Statement& st, int col) {
  if (st.IsNull(col)) return kNoText;
  auto it = m.find(st.Int(col));
  return it == m.end() ? kNoText : it->second;
}

int64_t IntOrNull(const Statement& st, int col) { return st.IsNull(col) ? kNullInt : st.Int(col); }

// The columns every op has: start, duration, correlation, device, context, green context, stream
// (columns 0-6 of each table's SELECT).
constexpr const char* kCommonColumns =
    "start, end - start, correlationId, deviceId, contextId, greenContextId, streamId";

void ReadCommon(const Statement& st, const IdTexts& devices, GpuTraceOp& op) {
  op.start = st.Int(0);
  op.duration = st.Int(1);
  op.correlation = IntOrNull(st, 2);
  op.device = Lookup(devices, st, 3);
  op.context = st.Int(4);
  op.green_context = st.Int(5);
  op.stream = st.Int(6);
}

struct Enums {
  IdTexts devices, copy_kinds, mem_kinds;
};

Status ReadKernels(const Database& db, const Enums& e, Texts& texts, std::vector<GpuTraceOp>& ops, int64_t& damaged) {
  CPPROF_ASSIGN_OR_RETURN(
      Statement st,
      db.Prepare(fmt::format("SELECT {}, gridX, gridY, gridZ, blockX, blockY, blockZ, registersPerThread, "
                             "staticSharedMemory, dynamicSharedMemory, demangledName, {} FROM {}",
                             kCommonColumns, ValidTimesSql(false), kKernelTable),
                 "reading kernels"));
  StringTable strings(db);
  std::unordered_map<int64_t, int32_t> names;
  while (st.Step()) {
    if (st.Int(17) == 0) {
      ++damaged;
      continue;
    }
    GpuTraceOp op;
    ReadCommon(st, e.devices, op);
    for (int i = 0; i < 9; ++i) op.launch[i] = IntOrNull(st, 7 + i);
    if (!st.IsNull(16)) {
      auto [it, inserted] = names.try_emplace(st.Int(16), kNoText);
      if (inserted) it->second = texts.Add(strings.Get(st.Int(16)));
      op.name = it->second;
    }
    ops.push_back(op);
  }
  CPPROF_RETURN_IF_ERROR(strings.status());
  return st.status();
}

Status ReadMemOps(const Database& db, bool memcpy, const Enums& e, Texts& texts, std::vector<GpuTraceOp>& ops,
                  int64_t& damaged) {
  const std::string sql =
      memcpy ? fmt::format("SELECT {}, bytes, srcKind, dstKind, copyKind, {} FROM {}", kCommonColumns,
                           ValidTimesSql(false), kMemcpyTable)
             : fmt::format("SELECT {}, bytes, memKind, {} FROM {}", kCommonColumns, ValidTimesSql(false), kMemsetTable);
  CPPROF_ASSIGN_OR_RETURN(Statement st, db.Prepare(sql, memcpy ? "reading memcpys" : "reading memsets"));
  const int32_t memset_name = texts.Add("[CUDA memset]");
  while (st.Step()) {
    if (st.Int(memcpy ? 11 : 9) == 0) {
      ++damaged;
      continue;
    }
    GpuTraceOp op;
    op.kind = memcpy ? GpuTraceOp::kMemcpy : GpuTraceOp::kMemset;
    ReadCommon(st, e.devices, op);
    op.launch[0] = IntOrNull(st, 7);
    op.src_kind = Lookup(e.mem_kinds, st, 8);
    if (memcpy) {
      op.dst_kind = Lookup(e.mem_kinds, st, 9);
      op.name = Lookup(e.copy_kinds, st, 10);
    } else {
      op.name = memset_name;
    }
    ops.push_back(op);
  }
  return st.status();
}

// Why nsys would skip the report on `db`, or "".
std::string SkipReason(const Database& db) {
  for (const char* t : {"StringIds", "TARGET_INFO_GPU"}) {
    if (!db.HasTable(t)) return fmt::format("{} file does not contain {} table.", db.path(), t);
  }
  bool any = false;
  for (const char* t : {kKernelTable, kMemcpyTable, kMemsetTable}) {
    if (!db.HasTable(t)) continue;
    any = true;
    if (t != kKernelTable && !db.HasTable("ENUM_CUDA_MEM_KIND")) {
      return db.path() + " does not contain ENUM_CUDA_MEM_KIND table.";
    }
    if (t == kMemcpyTable && !db.HasTable("ENUM_CUDA_MEMCPY_OPER")) {
      return db.path() + " does not contain ENUM_CUDA_MEMCPY_OPER table.";
    }
    if (!db.HasColumn(t, "greenContextId")) {
      return db.path() +
             " does not contain 'greenContextId' column. Please re-export the report file with a recent version of "
             "Nsight Systems.";
    }
  }
  return any ? "" : db.path() + " does not contain GPU trace data.";
}

}  // namespace

StatusOr<GpuTraceRows> ReadGpuTraceRows(const Database& db, std::string* skipped) {
  GpuTraceRows rows;
  *skipped = SkipReason(db);
  if (!skipped->empty()) return rows;
  Texts texts(rows.texts);
  Enums e;
  CPPROF_ASSIGN_OR_RETURN(
      e.devices, ReadIdTexts(db, "SELECT id, coalesce(name, '') || ' (' || id || ')' FROM TARGET_INFO_GPU", texts));
  if (db.HasTable("ENUM_CUDA_MEM_KIND")) {
    CPPROF_ASSIGN_OR_RETURN(e.mem_kinds, ReadIdTexts(db, "SELECT id, label FROM ENUM_CUDA_MEM_KIND", texts));
  }
  if (db.HasTable("ENUM_CUDA_MEMCPY_OPER")) {
    CPPROF_ASSIGN_OR_RETURN(
        e.copy_kinds, ReadIdTexts(db, "SELECT id, '[CUDA memcpy ' || label || ']' FROM ENUM_CUDA_MEMCPY_OPER", texts));
  }
  std::vector<GpuTraceOp> ops;
  if (db.HasTable(kKernelTable)) {
    CPPROF_RETURN_IF_ERROR(ReadKernels(db, e, texts, ops, rows.damaged));
  }
  if (db.HasTable(kMemcpyTable)) {
    CPPROF_RETURN_IF_ERROR(ReadMemOps(db, true, e, texts, ops, rows.damaged));
  }
  if (db.HasTable(kMemsetTable)) {
    CPPROF_RETURN_IF_ERROR(ReadMemOps(db, false, e, texts, ops, rows.damaged));
  }
  // ORDER BY start, equal starts in the order read.
  std::stable_sort(ops.begin(), ops.end(), [](const GpuTraceOp& a, const GpuTraceOp& b) { return a.start < b.start; });
  rows.ops = std::move(ops);
  return rows;
}

}  // namespace cpprof::nsys
