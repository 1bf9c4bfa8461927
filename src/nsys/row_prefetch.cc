// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "nsys/row_prefetch.h"

#include <fmt/format.h>

#include <exception>
#include <thread>

#include "base/batch_pipe.h"

namespace cpprof::nsys {

namespace {

struct Cell {
  int64_t value;         // kInt: the integer
  uint32_t begin, size;  // kText, kBlob: the bytes in the batch's arena
  int type;              // SQLITE_INTEGER, SQLITE_NULL, ... (sqlite3_column_type)
};

struct Batch {
  std::vector<Cell> cells;  // rows x columns (kBatchRows rows allocated)
  std::string arena;
  size_t rows = 0;
};

// A batch is handed over at this many rows or bytes of text, whichever comes first; this many
// batches wait at most (bounded memory whatever the table's size).
constexpr size_t kBatchRows = 4096, kBatchBytes = 1 << 20, kBatchesAhead = 4;

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

  std::string what;                   // for the timing line
  const ExecContext* exec = nullptr;  // own's (the caller's)

  ~Impl() {
    pipe.Stop();
    if (thread.joinable()) thread.join();
    if (!direct && exec && exec->timing) {
      exec->Timing(
          fmt::format("cpprof: timing: {}: SQLite waited {:.3f} s for its reader, the reader {:.3f} s for SQLite", what,
                      pipe.producer_waited_s(), pipe.consumer_waited_s()));
    }
  }

  void Read(Statement reader);
  bool Take();
};

void PrefetchedRows::Impl::Read(Statement reader) {
  const size_t n = kinds.size();
  try {
    Batch batch;
    batch.cells.resize(kBatchRows * n);
    auto hand_over = [&] {
      if (!pipe.Put(batch)) return false;
      batch.arena.clear();
      batch.rows = 0;
      batch.cells.resize(kBatchRows * n);
      return true;
    };
    while (reader.Step()) {
      Cell* cells = batch.cells.data() + batch.rows * n;
      for (size_t c = 0; c < n; ++c) {
        const int col = static_cast<int>(c);
        Cell& cell = cells[c];
        cell.type = reader.Type(col);
        if (cell.type == SQLITE_NULL) {  // as Statement: Int() 0, Text() and Blob() empty
          cell.value = 0;
          cell.size = 0;
          continue;
        }
        if (kinds[c] == Kind::kInt) {
          cell.value = reader.Int(col);
          continue;
        }
        std::string_view s = kinds[c] == Kind::kText ? reader.Text(col) : reader.Blob(col);
        cell.value = 0;
        cell.begin = static_cast<uint32_t>(batch.arena.size());
        cell.size = static_cast<uint32_t>(s.size());
        batch.arena.append(s);
      }
      if (++batch.rows == kBatchRows || batch.arena.size() >= kBatchBytes) {
        if (!hand_over()) return;
      }
    }
    if (batch.rows > 0 && !hand_over()) return;
    read_status = reader.status();
    pipe.Finish();
  } catch (...) {
    pipe.Finish(std::current_exception());
  }
}

bool PrefetchedRows::Impl::Take() {
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
  if (!own_thread || !db.exec().HasSpareThreads()) {
    CPPROF_ASSIGN_OR_RETURN(impl->st, db.Prepare(sql, std::move(what)));
    impl->direct = true;
    return PrefetchedRows(std::move(impl));
  }
  CPPROF_ASSIGN_OR_RETURN(Database own, db.Reopen());
  impl->own = std::make_unique<Database>(std::move(own));
  impl->what = what;
  impl->exec = &impl->own->exec();
  CPPROF_ASSIGN_OR_RETURN(Statement reader, impl->own->Prepare(sql, std::move(what)));
  Impl* p = impl.get();
  impl->thread = std::thread([p, r = std::move(reader)]() mutable { p->Read(std::move(r)); });
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
