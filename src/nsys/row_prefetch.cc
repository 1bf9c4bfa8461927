#include "nsys/row_prefetch.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <thread>

#include "base/batch_pipe.h"
#include "base/ordered_parts.h"
#include "base/parallel.h"

namespace cpprof::nsys {

namespace {

struct Cell {
  int64_t value;         // kInt: the integer
  uint32_t begin, size;  // kText, kBlob: the bytes in the batch's arena
  int type;              // SQLITE_INTEGER, SQLITE_NULL, ... (sqlite3_column_type)
};

struct Batch {
  std::vector<Cell> cells;  // rows x columns (kBatchRows rows allocated by Fill)
  std::string arena;
  size_t rows = 0;
  bool empty() const { return rows == 0; }
  void Clear() {
    arena.clear();
    rows = 0;
  }
};

// A batch is handed over at this many rows or bytes of text, whichever comes first; this many
// batches wait at most (bounded memory whatever the table's size).
constexpr size_t kBatchRows = 4096, kBatchBytes = 1 << 20, kBatchesAhead = 4;
// Read in parts (OpenInParts): rowids per part; a reader keeps a part's batches ahead.
constexpr int64_t kPartRows = 8192;

// Steps `st` into batches of `kinds`' columns, handing each full one to `put` (false: stop);
// the last, not full, stays in `batch`. False when put said stop.
template <class Put>
bool Fill(Statement& st, const std::vector<PrefetchedRows::Kind>& kinds, Batch& batch, Put&& put) {
  using Kind = PrefetchedRows::Kind;
  const size_t n = kinds.size();
  if (batch.cells.size() < kBatchRows * n) batch.cells.resize(kBatchRows * n);
  while (st.Step()) {
    Cell* cells = batch.cells.data() + batch.rows * n;
    for (size_t c = 0; c < n; ++c) {
      const int col = static_cast<int>(c);
      Cell& cell = cells[c];
      cell.type = st.Type(col);
      if (cell.type == SQLITE_NULL) {  // as Statement: Int() 0, Text() and Blob() empty
        cell.value = 0;
        cell.size = 0;
        continue;
      }
      if (kinds[c] == Kind::kInt) {
        cell.value = st.Int(col);
        continue;
      }
      std::string_view s = kinds[c] == Kind::kText ? st.Text(col) : st.Blob(col);
      cell.value = 0;
      cell.begin = static_cast<uint32_t>(batch.arena.size());
      cell.size = static_cast<uint32_t>(s.size());
      batch.arena.append(s);
    }
    if (++batch.rows == kBatchRows || batch.arena.size() >= kBatchBytes) {
      if (!put(batch)) return false;
      if (batch.cells.size() < kBatchRows * n) batch.cells.resize(kBatchRows * n);
    }
  }
  return true;
}

}  // namespace

struct PrefetchedRows::Impl {
  std::vector<Kind> kinds;
  Status status;

  // Direct (one thread): the statement itself.
  bool direct = false;
  Statement st;

  // Prefetched: the reading thread's connection and statement, and the batches.
  std::unique_ptr<Database> own;
  BatchPipe<Batch> pipe{kBatchesAhead};
  Status read_status;  // the reading statement's, set before pipe.Finish()
  std::thread thread;
  Batch current;
  size_t next_row = 0;
  const Cell* row = nullptr;

  // In parts (OpenInParts): per reader a connection, per part its query and its status.
  std::vector<std::unique_ptr<Database>> dbs;
  std::vector<std::string> part_sql;
  std::vector<Status> part_status;
  std::unique_ptr<OrderedParts<Batch>> parts;

  std::string what;  // for CPPROF_TIMING

  ~Impl() {
    pipe.Stop();
    if (thread.joinable()) thread.join();
    if (parts) parts->Stop();
    if (!direct && std::getenv("CPPROF_TIMING")) {
      std::fprintf(stderr,
                   "cpprof: timing: %s: SQLite (%zu) waited %.3f s for its reader, the reader %.3f s for SQLite\n",
                   what.c_str(), parts ? parts->readers() : size_t{1},
                   parts ? parts->readers_waited_s() : pipe.producer_waited_s(),
                   parts ? parts->consumer_waited_s() : pipe.consumer_waited_s());
    }
  }

  void Read(Statement reader);
  bool Take();
};

void PrefetchedRows::Impl::Read(Statement reader) {
  try {
    Batch batch;
    if (!Fill(reader, kinds, batch, [&](Batch& b) { return pipe.Put(b) && (b.Clear(), true); })) return;
    if (batch.rows > 0 && !pipe.Put(batch)) return;
    read_status = reader.status();
    pipe.Finish();
  } catch (...) {
    pipe.Finish(std::current_exception());
  }
}

bool PrefetchedRows::Impl::Take() {
  if (parts) {
    if (parts->Take(current)) {
      next_row = 0;
      return true;
    }
    parts->Stop();  // joins the readers: every part's status is known
    for (const Status& st : part_status) {
      if (!st.ok()) {
        status = st;
        break;
      }
    }
    return false;
  }
  bool more;
  try {
    more = pipe.Take(current);
  } catch (...) {
    if (thread.joinable()) thread.join();
    throw;
  }
  if (!more) {
    if (thread.joinable()) thread.join();
    status = read_status;
    return false;
  }
  next_row = 0;
  return true;
}

StatusOr<PrefetchedRows> PrefetchedRows::Open(const Database& db, const std::string& sql, std::string what,
                                              std::vector<Kind> columns, bool own_thread) {
  auto impl = std::make_unique<Impl>();
  impl->kinds = std::move(columns);
  if (!own_thread || WorkerThreads() < 2) {
    CPPROF_ASSIGN_OR_RETURN(impl->st, db.Prepare(sql, std::move(what)));
    impl->direct = true;
    return PrefetchedRows(std::move(impl));
  }
  CPPROF_ASSIGN_OR_RETURN(Database own, Database::Open(db.path()));
  impl->own = std::make_unique<Database>(std::move(own));
  impl->what = what;
  CPPROF_ASSIGN_OR_RETURN(Statement reader, impl->own->Prepare(sql, std::move(what)));
  Impl* p = impl.get();
  impl->thread = std::thread([p, r = std::move(reader)]() mutable { p->Read(std::move(r)); });
  return PrefetchedRows(std::move(impl));
}

int AutoReaders(int cores_each, int most) {
  return static_cast<int>(
      std::clamp<size_t>(WorkerThreads() / static_cast<size_t>(std::max(1, cores_each)), 1, std::max(1, most)));
}

StatusOr<PrefetchedRows> PrefetchedRows::OpenInParts(const Database& db, const char* table,
                                                     const std::function<std::string(const RowidRange&)>& sql,
                                                     std::string what, std::vector<Kind> columns, int readers) {
  if (readers <= 0) readers = AutoReaders();
  std::vector<RowidRange> ranges(1);
  if (readers > 1) {
    CPPROF_ASSIGN_OR_RETURN(int64_t rows, RowsUpperBound(db, table));
    CPPROF_ASSIGN_OR_RETURN(ranges, SplitRowids(db, table, static_cast<size_t>(rows / kPartRows + 1), kPartRows));
  }
  if (ranges.size() == 1) return Open(db, sql(ranges[0]), std::move(what), std::move(columns));
  auto impl = std::make_unique<Impl>();
  impl->kinds = std::move(columns);
  impl->what = what;
  for (const RowidRange& r : ranges) impl->part_sql.push_back(sql(r));
  CPPROF_RETURN_IF_ERROR(db.Prepare(impl->part_sql[0], what).status());  // a bad query fails here, not in a reader
  impl->part_status.resize(ranges.size());
  const size_t n = std::min(ranges.size(), static_cast<size_t>(readers));
  for (size_t k = 0; k < n; ++k) {
    CPPROF_ASSIGN_OR_RETURN(Database own, Database::Open(db.path()));
    impl->dbs.push_back(std::make_unique<Database>(std::move(own)));
  }
  Impl* p = impl.get();
  impl->parts = std::make_unique<OrderedParts<Batch>>(
      ranges.size(), n, static_cast<size_t>(kPartRows) / kBatchRows + 1,
      [p](size_t part, size_t reader, Batch& last, const OrderedParts<Batch>::Put& put) {
        StatusOr<Statement> st = p->dbs[reader]->Prepare(p->part_sql[part], p->what);
        if (!st.ok()) {
          p->part_status[part] = st.status();
          return;
        }
        if (Fill(*st, p->kinds, last, put)) p->part_status[part] = st->status();
      },
      [p](size_t part) { return p->part_status[part].ok(); });
  return PrefetchedRows(std::move(impl));
}

PrefetchedRows::PrefetchedRows(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PrefetchedRows::PrefetchedRows(PrefetchedRows&&) noexcept = default;
PrefetchedRows& PrefetchedRows::operator=(PrefetchedRows&&) noexcept = default;
PrefetchedRows::~PrefetchedRows() = default;

bool PrefetchedRows::Step() {
  Impl& m = *impl_;
  if (m.direct) return m.st.Step();
  if (m.next_row == m.current.rows && !m.Take()) return false;
  m.row = m.current.cells.data() + m.next_row * m.kinds.size();
  ++m.next_row;
  return true;
}

const Status& PrefetchedRows::status() const { return impl_->direct ? impl_->st.status() : impl_->status; }

int64_t PrefetchedRows::Int(int col) const { return impl_->direct ? impl_->st.Int(col) : impl_->row[col].value; }

bool PrefetchedRows::IsNull(int col) const {
  return impl_->direct ? impl_->st.IsNull(col) : impl_->row[col].type == SQLITE_NULL;
}

bool PrefetchedRows::IsInteger(int col) const {
  return impl_->direct ? impl_->st.IsInteger(col) : impl_->row[col].type == SQLITE_INTEGER;
}

std::string_view PrefetchedRows::Text(int col) const {
  if (impl_->direct) return impl_->st.Text(col);
  const Cell& c = impl_->row[col];
  return std::string_view(impl_->current.arena.data() + c.begin, c.size);
}

std::string_view PrefetchedRows::Blob(int col) const {
  if (impl_->direct) return impl_->st.Blob(col);
  const Cell& c = impl_->row[col];
  return std::string_view(impl_->current.arena.data() + c.begin, c.size);
}

}  // namespace cpprof::nsys
