// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "nsys/nvtx_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>

#include "base/batch_pipe.h"
#include "base/ordered_parts.h"
#include "model/global_id.h"
#include "nsys/export_reader.h"
#include "nsys/row_prefetch.h"

namespace cpprof::nsys {

namespace {

std::string RangesOnly() {
  return fmt::format("eventType IN ({}, {}, {}, {})", kNvtxPushPop, kNvtxStartEnd, kNvtxtPushPop, kNvtxtStartEnd);
}

bool IsRange(int64_t event_type) {
  return event_type == kNvtxPushPop || event_type == kNvtxStartEnd || event_type == kNvtxtPushPop ||
         event_type == kNvtxtStartEnd;
}

// Registered strings, resolved once per id rather than joined with StringIds per row (exports
// hold millions of ranges over a few hundred names). Same rule as the join:
// coalesce(StringIds.value, text, '').
class RegisteredStrings {
 public:
  static StatusOr<RegisteredStrings> Open(const Database& db) {
    CPPROF_ASSIGN_OR_RETURN(Statement lookup,
                            db.Prepare("SELECT value FROM StringIds WHERE id = ?", "reading StringIds"));
    return RegisteredStrings(std::move(lookup));
  }
  // The text of a row whose textId is column `id_col` and text column `text_col` (of a
  // Statement or PrefetchedRows).
  template <typename Row>
  std::string_view TextOf(const Row& st, int id_col, int text_col) {
    if (!st.IsNull(id_col)) {
      const std::optional<std::string>& v = Resolve(st.Int(id_col));
      if (v) return *v;
    }
    return st.IsNull(text_col) ? std::string_view() : st.Text(text_col);
  }
  const Status& status() const { return lookup_.status(); }

 private:
  explicit RegisteredStrings(Statement lookup) : lookup_(std::move(lookup)) {}
  const std::optional<std::string>& Resolve(int64_t id) {
    auto it = values_.find(id);
    if (it != values_.end()) return it->second;
    lookup_.Reset();
    lookup_.Bind(1, id);
    std::optional<std::string> v;
    if (lookup_.Step() && !lookup_.IsNull(0)) v = std::string(lookup_.Text(0));
    return values_.emplace(id, std::move(v)).first->second;
  }
  Statement lookup_;
  std::unordered_map<int64_t, std::optional<std::string>> values_;
};

}  // namespace

StatusOr<NvtxDomains> NvtxDomains::Read(const Database& db) {
  NvtxDomains d;
  CPPROF_ASSIGN_OR_RETURN(
      Statement st,
      db.Prepare(fmt::format("SELECT ne.domainId, ne.globalTid, ne.start, coalesce(sid.value, ne.text) FROM {} AS ne "
                             "LEFT JOIN StringIds AS sid ON ne.textId == sid.id WHERE ne.eventType == {}",
                             kNvtxTable, kNvtxDomainCreate),
                 "reading NVTX domains"));
  while (st.Step()) d.Add(st.Int(0), st.Int(1), st.Int(2), st.Text(3));
  CPPROF_RETURN_IF_ERROR(st.status());
  return d;
}

bool NvtxDomains::Add(int64_t domain_id, int64_t global_tid, int64_t start, std::string_view name) {
  std::pair<int64_t, int64_t> key{domain_id, model::GlobalPidOf(global_tid)};
  auto& creators = creators_[key];
  auto& names = names_[key];
  auto it = std::lower_bound(creators.begin(), creators.end(), global_tid,
                             [](const Creator& c, int64_t tid) { return c.tid < tid; });
  size_t i = static_cast<size_t>(it - creators.begin());
  if (it != creators.end() && it->tid == global_tid) {
    if (start >= it->start) return false;  // a later create of the same thread: the first names it
    it->start = start;
    if (names[i] == name) return false;
    names[i] = std::string(name);
    return true;
  }
  creators.insert(it, Creator{global_tid, start});
  names.insert(names.begin() + static_cast<std::ptrdiff_t>(i), std::string(name));
  return true;
}

void NvtxDomains::Merge(const NvtxDomains& later) {
  for (const auto& [key, creators] : later.creators_) {
    const std::vector<std::string>& names = later.names_.at(key);
    for (size_t i = 0; i < creators.size(); ++i) Add(key.first, creators[i].tid, creators[i].start, names[i]);
  }
}

bool NvtxDomains::Has(int64_t domain_id, int64_t global_tid) const {
  return names_.count({domain_id, model::GlobalPidOf(global_tid)}) > 0;
}

bool NvtxDomains::HasDomain(int64_t domain_id) const {
  auto it = names_.lower_bound({domain_id, INT64_MIN});
  return it != names_.end() && it->first.first == domain_id;
}

std::vector<std::string> NvtxDomains::AllNames() const {
  std::set<std::string> all;
  for (const auto& [key, names] : names_) all.insert(names.begin(), names.end());
  return {all.begin(), all.end()};
}

const std::vector<std::string>& NvtxDomains::NamesFor(int64_t domain_id, int64_t global_tid) const {
  auto it = names_.find({domain_id, model::GlobalPidOf(global_tid)});
  return it == names_.end() ? none_ : it->second;
}

StatusOr<int64_t> LastNvtxTimestamp(const Database& db, OpenEnd open_end) {
  CPPROF_ASSIGN_OR_RETURN(
      Statement st,
      db.Prepare(fmt::format(
                     "SELECT max(max(start), coalesce(max(end), max(start))) FROM {}{}", kNvtxTable,
                     " WHERE " + ValidTimesSql(true) + (open_end == OpenEnd::kLastRange ? " AND " + RangesOnly() : "")),
                 "reading NVTX"));
  int64_t max_ts = 0;
  if (st.Step()) max_ts = st.Int(0);
  CPPROF_RETURN_IF_ERROR(st.status());
  return max_ts;
}

struct NvtxRangeCursor::Impl {
  Impl(PrefetchedRows s, RegisteredStrings r, std::optional<int64_t> e)
      : st(std::move(s)), registered(std::move(r)), open_end(e) {}
  ~Impl();
  PrefetchedRows st;  // with Options::prefetch, stepped by SQLite on a thread of its own as well
  RegisteredStrings registered;
  std::optional<int64_t> open_end;
  NvtxDomains domains;
  NvtxRangeRow row{};
  bool saw_open = false;
  bool all_events = false, payloads = false;  // Options'
  int64_t damaged = 0;                        // rows left out for damaged times
  std::unique_ptr<Prefetch> prefetch;         // Options::prefetch: rows come from there
  std::function<uint64_t(const NvtxRangeRow&, std::string_view)> annotate;
  std::function<void(const NvtxRangeRow&, std::string&)> prepare;
  std::string prepared;  // prepare's output for the row
};

// Options::prefetch: threads of their own read the table, each on a connection of its own, and
// hand the rows over in batches, a few batches ahead at most. One reader reads the whole (SQLite
// steps on a thread of its own again); with Options::readers, the table is cut into parts of
// kPartRows rowids read by several at once (OrderedParts) and taken in table order. When
// annotate must run in table order on rows read in parallel (Options::prepare, or several
// readers), the batches pass through one more thread that annotates them (`annotated`).
struct NvtxRangeCursor::Prefetch {
  struct Batch {
    std::vector<NvtxRangeRow> rows;  // their text views are set when the batch is taken
    std::string text;
    std::vector<size_t> text_begin;
    std::string prepared;  // Options::prepare's output, per row from prepared_begin
    std::vector<size_t> prepared_begin;
    std::string payloads;  // Options::payloads: per row from payload_begin
    std::vector<size_t> payload_begin;

    bool empty() const { return rows.empty(); }
    void Clear() {
      rows.clear();
      text.clear();
      text_begin.clear();
      prepared.clear();
      prepared_begin.clear();
      payloads.clear();
      payload_begin.clear();
    }
    void Add(const NvtxRangeRow& r, bool with_payload) {
      text_begin.push_back(text.size());
      text.append(r.text);
      if (with_payload) {
        payload_begin.push_back(payloads.size());
        payloads.append(r.payload);
      }
      rows.push_back(r);
    }
    // Points the rows' text (and payload) views into this batch (the views do not survive a move).
    void ViewTexts() {
      for (size_t i = 0; i < rows.size(); ++i) rows[i].text = Piece(text, text_begin, i);
      if (payload_begin.empty()) return;
      for (size_t i = 0; i < rows.size(); ++i) rows[i].payload = Piece(payloads, payload_begin, i);
    }
    static std::string_view Piece(const std::string& all, const std::vector<size_t>& begins, size_t i) {
      const size_t end = i + 1 < begins.size() ? begins[i + 1] : all.size();
      return std::string_view(all.data() + begins[i], end - begins[i]);
    }
  };
  static constexpr size_t kBatchRows = 4096, kBatchesAhead = 4;
  static constexpr int64_t kPartRows = 8192;  // with several readers: a part fits one reader's batches ahead
  // kPartRows, or the context's nvtx_part_rows (1 or more; CPPROF_NVTX_PART_ROWS): tests read small
  // exports in many parts, so that every boundary case (a domain created a part before its
  // ranges, an open range) meets one.
  static int64_t PartRows(const ExecContext& exec) {
    const int64_t n = exec.nvtx_part_rows;
    return n >= 1 && n <= kPartRows ? n : kPartRows;
  }

  // What reading a part found besides its rows (set before its last batch is handed over).
  struct PartResult {
    NvtxDomains domains;
    bool saw_open = false;
    int64_t damaged = 0;
    Status status;
  };

  ~Prefetch() {
    Join();
    if (exec.timing && parts) {
      const char* next = annotate ? "annotating" : "caller";
      exec.Timing(
          fmt::format("cpprof: timing: NVTX ranges: naming ({}) waited {:.3f} s for the {}, the {} {:.3f} s for "
                      "naming",
                      parts->readers(), parts->readers_waited_s(), next, next, parts->consumer_waited_s()));
      if (annotate) {
        exec.Timing(
            fmt::format("cpprof: timing: NVTX ranges: annotating waited {:.3f} s for the caller, the caller "
                        "{:.3f} s for annotating",
                        annotated.producer_waited_s(), annotated.consumer_waited_s()));
      }
    }
  }
  // Reads part `part` on reader `reader`'s connection.
  void Fill(size_t part, size_t reader, Batch& last, const OrderedParts<Batch>::Put& put);
  bool PartDone(size_t part);
  void Annotate();
  // Stops every stage (at the end, or early: the caller left, a part failed, a stage threw) and
  // waits for them.
  void Join() {
    annotated.Stop();
    if (parts) parts->Cancel();  // the annotating thread may be taking from them: it is joined first
    if (annotate_thread.joinable()) annotate_thread.join();
    if (parts) parts->Stop();
  }

  Options options;                             // the cursor's; rows and annotate as each reader's part needs them
  ExecContext exec;                            // the database's
  std::vector<RowidRange> ranges;              // per part
  std::vector<PartResult> results;             // per part
  std::vector<std::unique_ptr<Database>> dbs;  // per reader
  std::vector<std::unique_ptr<Impl>> cursors;  // per reader: its part's; registered strings kept across parts
  std::unique_ptr<OrderedParts<Batch>> parts;
  Status failed;
  // Set when annotate runs on a thread of its own: prepare on the readers, annotate there.
  std::function<void(const NvtxRangeRow&, std::string&)> prepare;
  std::function<uint64_t(const NvtxRangeRow&, std::string_view)> annotate;
  BatchPipe<Batch> annotated{2};
  std::thread annotate_thread;
  Batch current;
  size_t pos = 0;
  // Known at the end: the parts' domains merged in table order, any open range met, the rows
  // left out for damaged times.
  NvtxDomains domains;
  bool saw_open = false;
  int64_t damaged = 0;
};

NvtxRangeCursor::Impl::~Impl() = default;

NvtxRangeCursor::NvtxRangeCursor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
NvtxRangeCursor::NvtxRangeCursor(NvtxRangeCursor&&) noexcept = default;
NvtxRangeCursor& NvtxRangeCursor::operator=(NvtxRangeCursor&&) noexcept = default;
NvtxRangeCursor::~NvtxRangeCursor() = default;

namespace {

// The cursor's query (Options::rows, by_start, longest_first) on `db`.
StatusOr<PrefetchedRows> OpenRangeRows(const Database& db, const NvtxRangeCursor::Options& options,
                                       bool rows_on_own_thread) {
  using K = PrefetchedRows::Kind;
  std::string where;
  auto add = [&where](const std::string& condition) { where += (where.empty() ? " WHERE " : " AND ") + condition; };
  if (!options.all_events) {
    add(fmt::format("eventType IN ({}, {}, {}, {}, {})", kNvtxPushPop, kNvtxStartEnd, kNvtxtPushPop, kNvtxtStartEnd,
                    kNvtxDomainCreate));
  }
  if (!options.rows.whole()) add(fmt::format("rowid BETWEEN {} AND {}", options.rows.first, options.rows.last));
  // The payload: binaryData (`nsys export --include-blobs`), else jsonText (`--include-json`).
  std::vector<std::string> held;
  for (const char* column : {"binaryData", "jsonText"}) {
    if (options.payloads && db.HasColumn(kNvtxTable, column)) held.push_back(column);
  }
  const std::string payload = held.empty()       ? "NULL"
                              : held.size() == 1 ? held.front()
                                                 : fmt::format("coalesce({}, {})", held[0], held[1]);
  return PrefetchedRows::Open(
      db,
      fmt::format("SELECT start, end, eventType, domainId, globalTid, textId, text, {}, rowid, {} FROM {}{}{}",
                  db.HasColumn(kNvtxTable, "endGlobalTid") ? "endGlobalTid" : "NULL", payload, kNvtxTable, where,
                  !options.by_start       ? ""
                  : options.longest_first ? " ORDER BY start, coalesce(end, 9223372036854775807) DESC, rowid"
                                          : " ORDER BY start, rowid"),
      "reading NVTX events",
      {K::kInt, K::kInt, K::kInt, K::kInt, K::kInt, K::kInt, K::kText, K::kInt, K::kInt, K::kBlob}, rows_on_own_thread);
}

}  // namespace

StatusOr<std::unique_ptr<NvtxRangeCursor::Impl>> NvtxRangeCursor::OpenImpl(const Database& db, const Options& options,
                                                                           bool rows_on_own_thread) {
  CPPROF_ASSIGN_OR_RETURN(RegisteredStrings registered, RegisteredStrings::Open(db));
  CPPROF_ASSIGN_OR_RETURN(PrefetchedRows st, OpenRangeRows(db, options, rows_on_own_thread));
  auto impl = std::make_unique<Impl>(std::move(st), std::move(registered), options.open_end);
  impl->all_events = options.all_events;
  impl->payloads = options.payloads;
  impl->annotate = options.annotate;
  if (options.annotate) impl->prepare = options.prepare;
  return impl;
}

StatusOr<NvtxRangeCursor> NvtxRangeCursor::Open(const Database& db, const Options& options) {
  if (!options.prefetch) {
    CPPROF_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, OpenImpl(db, options, false));
    return NvtxRangeCursor(std::move(impl));
  }
  // Stages on cores of their own: SQLite steps (on PrefetchedRows' thread with one reader, on
  // each reader's with several), the rows are named (and prepared, and annotated unless that
  // has a thread of its own), the caller works.
  CPPROF_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, OpenImpl(db, options, false));  // checks the query; never stepped
  impl->annotate = nullptr;
  auto prefetch = std::make_unique<Prefetch>();
  Prefetch& p = *prefetch;
  p.options = options;
  p.exec = db.exec();
  p.ranges = {options.rows};
  const int want_readers =
      options.readers > 0 ? options.readers : static_cast<int>(std::clamp<size_t>(p.exec.threads / 4, 1, 4));
  if (want_readers > 1 && options.rows.whole() && !options.by_start) {
    CPPROF_ASSIGN_OR_RETURN(int64_t rows, RowsUpperBound(db, kNvtxTable));
    const int64_t part_rows = Prefetch::PartRows(p.exec);
    CPPROF_ASSIGN_OR_RETURN(p.ranges,
                            SplitRowids(db, kNvtxTable, static_cast<size_t>(rows / part_rows + 1), part_rows));
  }
  p.results.resize(p.ranges.size());
  const size_t readers = std::min<size_t>(p.ranges.size(), static_cast<size_t>(want_readers));
  if (options.annotate && (options.prepare || readers > 1)) {
    p.prepare = options.prepare;
    p.annotate = options.annotate;
    p.options.annotate = nullptr;
    p.options.prepare = nullptr;
  }
  for (size_t k = 0; k < readers; ++k) {
    CPPROF_ASSIGN_OR_RETURN(Database own, db.Reopen());
    p.dbs.push_back(std::make_unique<Database>(std::move(own)));
  }
  p.cursors.resize(readers);
  // A reader keeps a part's batches ahead (its rows may be fewer than its rowids, not more).
  const size_t ahead =
      readers > 1 ? static_cast<size_t>(Prefetch::kPartRows) / Prefetch::kBatchRows + 1 : Prefetch::kBatchesAhead;
  p.parts = std::make_unique<OrderedParts<Prefetch::Batch>>(
      p.ranges.size(), readers, ahead,
      [&p](size_t part, size_t reader, Prefetch::Batch& last, const OrderedParts<Prefetch::Batch>::Put& put) {
        p.Fill(part, reader, last, put);
      },
      [&p](size_t part) { return p.PartDone(part); });
  if (p.annotate) p.annotate_thread = std::thread([&p] { p.Annotate(); });
  impl->prefetch = std::move(prefetch);
  return NvtxRangeCursor(std::move(impl));
}

void NvtxRangeCursor::Prefetch::Fill(size_t part, size_t reader, Batch& batch, const OrderedParts<Batch>::Put& put) {
  Options part_options = options;
  part_options.rows = ranges[part];
  PartResult& result = results[part];
  // One reader: SQLite steps on a thread of its own; several: each on its reader's.
  const bool own_thread = dbs.size() == 1;
  std::unique_ptr<Impl>& impl = cursors[reader];
  if (!impl) {
    StatusOr<std::unique_ptr<Impl>> opened = OpenImpl(*dbs[reader], part_options, own_thread);
    if (!opened.ok()) {
      result.status = opened.status();
      return;
    }
    impl = std::move(*opened);
  } else {
    StatusOr<PrefetchedRows> rows = OpenRangeRows(*dbs[reader], part_options, own_thread);
    if (!rows.ok()) {
      result.status = rows.status();
      return;
    }
    impl->st = std::move(*rows);
    impl->domains = NvtxDomains();
    impl->saw_open = false;
    impl->damaged = 0;
  }
  Impl& m = *impl;
  while (ReadNext(m)) {
    const NvtxRangeRow& r = m.row;
    if (prepare) {
      batch.prepared_begin.push_back(batch.prepared.size());
      prepare(r, batch.prepared);
    }
    batch.Add(r, m.payloads);
    if (batch.rows.size() == kBatchRows && !put(batch)) return;
  }
  result.status = m.st.status().ok() ? m.registered.status() : m.st.status();
  result.domains = std::move(m.domains);
  result.saw_open = m.saw_open;
  result.damaged = m.damaged;
}

bool NvtxRangeCursor::Prefetch::PartDone(size_t part) {
  PartResult& result = results[part];
  if (!result.status.ok()) {
    failed = result.status;
    return false;
  }
  domains.Merge(result.domains);
  result.domains = NvtxDomains();
  saw_open = saw_open || result.saw_open;
  damaged += result.damaged;
  return true;
}

void NvtxRangeCursor::Prefetch::Annotate() {
  try {
    Batch batch;
    while (parts->Take(batch)) {
      batch.ViewTexts();
      for (size_t i = 0; i < batch.rows.size(); ++i) {
        batch.rows[i].annotation = annotate(
            batch.rows[i], prepare ? Batch::Piece(batch.prepared, batch.prepared_begin, i) : std::string_view());
      }
      if (!annotated.Put(batch)) return;
    }
    annotated.Finish();
  } catch (...) {
    annotated.Finish(std::current_exception());
  }
}

bool NvtxRangeCursor::Next() {
  Impl& m = *impl_;
  if (!m.prefetch) return ReadNext(m);
  Prefetch& p = *m.prefetch;
  while (p.pos == p.current.rows.size()) {
    bool more;
    try {
      more = p.annotate ? p.annotated.Take(p.current) : p.parts->Take(p.current);
    } catch (...) {
      p.Join();
      throw;
    }
    if (!more) {
      p.Join();
      return false;
    }
    p.pos = 0;
    p.current.ViewTexts();
  }
  m.row = p.current.rows[p.pos++];
  return true;
}

bool NvtxRangeCursor::ReadNext(Impl& m) {
  while (m.st.Step()) {
    if (!ValidTimes(m.st, 0, 1, true)) {  // damaged times (ValidTimesSql), checked here: cheaper
      ++m.damaged;
      continue;
    }
    const int64_t type = m.st.Int(2);
    NvtxRangeRow& r = m.row;
    r.text = m.registered.TextOf(m.st, 5, 6);
    if (type == kNvtxDomainCreate) {
      m.domains.Add(m.st.Int(3), m.st.Int(4), m.st.Int(0), r.text);
      if (!m.all_events) continue;
    }
    r.start = m.st.Int(0);
    r.open = m.st.IsNull(1);
    if (r.open) {
      if (!m.open_end && IsRange(type)) m.saw_open = true;
      r.end = m.open_end.value_or(r.start);
    } else {
      r.end = m.st.Int(1);
    }
    r.event_type = static_cast<int>(type);
    r.domain_id = m.st.Int(3);
    r.global_tid = m.st.Int(4);
    r.ends_on_other_thread = !m.st.IsNull(7);
    r.end_global_tid = m.st.Int(7);
    r.rowid = m.st.Int(8);
    r.has_payload = m.payloads && !m.st.IsNull(9);
    r.payload = r.has_payload ? m.st.Blob(9) : std::string_view();
    if (m.annotate) {
      m.prepared.clear();
      if (m.prepare) m.prepare(r, m.prepared);
      r.annotation = m.annotate(r, m.prepared);
    }
    return true;
  }
  return false;
}

const NvtxRangeRow& NvtxRangeCursor::row() const { return impl_->row; }
const NvtxDomains& NvtxRangeCursor::domains() const {
  return impl_->prefetch ? impl_->prefetch->domains : impl_->domains;
}
bool NvtxRangeCursor::saw_open() const { return impl_->prefetch ? impl_->prefetch->saw_open : impl_->saw_open; }
int64_t NvtxRangeCursor::damaged_rows() const { return impl_->prefetch ? impl_->prefetch->damaged : impl_->damaged; }
Status NvtxRangeCursor::status() const {
  if (impl_->prefetch) return impl_->prefetch->failed;
  CPPROF_RETURN_IF_ERROR(impl_->st.status());
  return impl_->registered.status();
}

Status ForEachNvtxRange(const Database& db, OpenEnd open_end, const std::function<void(const NvtxRangeRow&)>& fn,
                        int64_t* damaged) {
  // Ranges still open when the capture ended get the last NVTX timestamp of the export.
  NvtxRangeCursor::Options options;
  CPPROF_ASSIGN_OR_RETURN(int64_t max_ts, LastNvtxTimestamp(db, open_end));
  options.open_end = max_ts;
  CPPROF_ASSIGN_OR_RETURN(NvtxRangeCursor cursor, NvtxRangeCursor::Open(db, options));
  while (cursor.Next()) fn(cursor.row());
  if (damaged) *damaged += cursor.damaged_rows();
  return cursor.status();
}

StatusOr<NvtxScan> ScanNvtx(const Database& db, OpenEnd open_end, const NvtxScanCallbacks& callbacks) {
  NvtxScan out;
  // Every event, SQLite stepping on other cores (in parts of the table on several where there
  // are enough, the rows in table order still) while this one names the ranges and runs the
  // callbacks.
  NvtxRangeCursor::Options options;
  options.all_events = true;
  options.payloads = static_cast<bool>(callbacks.payload);
  options.prefetch = db.exec().HasSpareThreads();
  CPPROF_ASSIGN_OR_RETURN(NvtxRangeCursor cursor, NvtxRangeCursor::Open(db, options));
  struct Held {
    NvtxRangeRow row;
    std::string text;
  };
  std::vector<Held> held;  // open ranges (their end is known at the end) and ranges of unnamed domains
  std::set<std::pair<int64_t, int64_t>> used;  // (domainId, pid bits) of ranges already given
  std::pair<int64_t, int64_t> last_used{-1, -1};
  bool conflict = false;
  int64_t max_event = INT64_MIN, max_range = INT64_MIN;
  while (cursor.Next()) {
    const NvtxRangeRow& r = cursor.row();
    const int64_t type = r.event_type;
    const int64_t start = r.start, end = r.end, tid = r.global_tid;  // no end: its start
    max_event = std::max({max_event, start, end});
    if (r.has_payload) callbacks.payload(r);
    if (type == kNvtxDomainCreate) {
      if (out.domains.Add(r.domain_id, tid, start, r.text) && used.count({r.domain_id, model::GlobalPidOf(tid)})) {
        conflict = true;  // ranges already given took fewer (or other) names
      }
      continue;
    }
    if (!IsRange(type)) {
      ++out.marks[{r.domain_id, tid}];
      continue;
    }
    max_range = std::max({max_range, start, end});
    if (conflict) continue;  // they are read again below
    if (r.open || (r.domain_id != 0 && !out.domains.Has(r.domain_id, tid))) {
      held.push_back({r, std::string(r.text)});
      held.back().row.payload = {};
      continue;
    }
    std::pair<int64_t, int64_t> key{r.domain_id, model::GlobalPidOf(tid)};
    if (key != last_used) used.insert(key), last_used = key;
    callbacks.range(r, out.domains.NamesFor(r.domain_id, tid));
  }
  CPPROF_RETURN_IF_ERROR(cursor.status());
  out.damaged_rows = cursor.damaged_rows();
  if (conflict) {
    out.two_pass = true;
    if (callbacks.restart) callbacks.restart();
    CPPROF_RETURN_IF_ERROR(ForEachNvtxRange(db, open_end, [&](const NvtxRangeRow& row) {
      callbacks.range(row, out.domains.NamesFor(row.domain_id, row.global_tid));
    }));
    return out;
  }
  // Ranges still open when the capture ended get the last NVTX timestamp, as ForEachNvtxRange.
  int64_t last = open_end == OpenEnd::kLastRange ? max_range : max_event;
  if (last == INT64_MIN) last = 0;
  out.given_late = static_cast<int64_t>(held.size());
  for (Held& h : held) {
    if (h.row.open) h.row.end = last;
    h.row.text = h.text;
    callbacks.range(h.row, out.domains.NamesFor(h.row.domain_id, h.row.global_tid));
  }
  return out;
}

}  // namespace cpprof::nsys
