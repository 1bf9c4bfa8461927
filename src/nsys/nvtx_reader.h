// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// NVTX ranges of an export, named the way nsys names them: "<domain>:<text>", where the domain
// comes from the domain-create event (eventType 75) of the same domainId in the same process,
// the text from StringIds (registered strings) or the row's own text, and the default domain
// is "" (so ":text").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "nsys/export_reader.h"
#include "nsys/sqlite_db.h"

namespace cpprof::nsys {

inline constexpr int kNvtxPushPop = 59, kNvtxStartEnd = 60, kNvtxtPushPop = 70, kNvtxtStartEnd = 71,
                     kNvtxDomainCreate = 75;

// Domain names per (domainId, pid): one entry per thread that created the domain, as nsys's
// reports join them (a domain created on two threads of a process names its ranges twice).
class NvtxDomains {
 public:
  static StatusOr<NvtxDomains> Read(const Database& db);
  // Records one domain-create event: the earliest create (by start) of a (domainId, globalTid)
  // names the domain on that thread. Returns true when the names of (domainId, process) changed.
  bool Add(int64_t domain_id, int64_t global_tid, int64_t start, std::string_view name);
  // Whether any process created a domain with this id.
  bool HasDomain(int64_t domain_id) const;
  // Adds the creates `later` saw (read from a later part of the table): the same as if this
  // had seen them after its own.
  void Merge(const NvtxDomains& later);
  // Whether a create event of (domainId, process) has been seen.
  bool Has(int64_t domain_id, int64_t global_tid) const;
  // Every domain name created anywhere (distinct, sorted).
  std::vector<std::string> AllNames() const;
  // The names a range of `domain_id` on thread `global_tid` takes; {""} when none.
  const std::vector<std::string>& NamesFor(int64_t domain_id, int64_t global_tid) const;

 private:
  struct Creator {
    int64_t tid, start;
  };
  // (domainId, pid bits) -> one name per creating thread, by thread id (as nsys's join lists them).
  std::map<std::pair<int64_t, int64_t>, std::vector<std::string>> names_;
  std::map<std::pair<int64_t, int64_t>, std::vector<Creator>> creators_;  // parallel to names_
  std::vector<std::string> none_{""};
};

struct NvtxRangeRow {
  int64_t start;
  int64_t end;  // open ranges end at the last NVTX timestamp of the export, as in nsys
  int event_type;
  int64_t domain_id;
  int64_t global_tid;
  bool ends_on_other_thread;   // endGlobalTid set: nsys leaves it out of GPU projection
  bool open;                   // no end recorded: still open when the capture ended
  std::string_view text;       // valid during the callback only
  int64_t end_global_tid = 0;  // the thread that ended it, where the export says
  int64_t rowid = 0;           // the table order
  uint64_t annotation = 0;     // NvtxRangeCursor::Options::annotate's result
  // NvtxRangeCursor::Options::payloads: the row's binaryData (typed payloads such as NCCL's
  // ranks), valid as `text`; has_payload false where it is NULL.
  std::string_view payload;
  bool has_payload = false;
};

// Which timestamps bound the end given to ranges still open at the end of the capture: nsys's
// nvtx_sum takes the last timestamp of any NVTX event, nvtx_gpu_proj_sum that of ranges only.
enum class OpenEnd { kLastNvtxEvent, kLastRange };

// The end given to ranges still open when the capture ended (a scan of the NVTX table).
StatusOr<int64_t> LastNvtxTimestamp(const Database& db, OpenEnd open_end);

// Streams the push/pop and start/end ranges in table order; `*damaged`, when given, counts the
// rows left out for damaged times.
Status ForEachNvtxRange(const Database& db, OpenEnd open_end, const std::function<void(const NvtxRangeRow&)>& fn,
                        int64_t* damaged = nullptr);

// The ranges and domain-create events of NVTX_EVENTS as a cursor, in one pass: in table order
// (exports list events by start time) or, with `by_start`, sorted by start (SQLite sorts: slower,
// for exports that are not in time order). Domain creates go to domains(); Next() stops at ranges
// (at every event with Options::all_events). The one reader of NVTX_EVENTS' rows: ScanNvtx and
// ForEachNvtxRange read through it. Rows whose times are damaged (ValidTimesSql) are left out
// and counted (damaged_rows()).
class NvtxRangeCursor {
 public:
  struct Options {
    bool by_start = false;
    // With by_start: ranges of one start longest first (open ones first), then in table order.
    bool longest_first = false;
    // The end given to ranges without one (LastNvtxTimestamp); unset: their start, and
    // saw_open() tells the caller to read again with it.
    std::optional<int64_t> open_end;
    // Only these rows (table order only): a part of the table read on its own connection.
    RowidRange rows;
    // Every event, not only ranges: domain creates (which still name domains()) and the others
    // (marks, ...) come from Next() too; event_type says which. Their end is their start when
    // they have none (open), as a range's without open_end.
    bool all_events = false;
    // Each row's binaryData (NvtxRangeRow::payload), where the export has the column.
    bool payloads = false;
    // SQLite steps on a thread of its own (on a connection of its own), a few thousand rows
    // ahead of Next(): for a caller with work of its own per row. domains(), saw_open() and
    // status() are then known once Next() returned false.
    bool prefetch = false;
    // With prefetch, in table order over the whole table: read by this many threads at once,
    // each on a connection of its own, a part of the table each in turn; the rows still come
    // in table order, and annotate still runs in it. 0 (the default): one per 4 worker threads,
    // from 1 to 4.
    // Measured at 1 GB on the GPU machine's 16 cores with two instead of four:
    // nvtx_gpu_proj_sum took 2.27 s instead of 1.65 s, export's NVTX stage waited 0.63 s of its
    // 1.02 s for them, the report's pass 0.47 s. Each reader holds a part's batches (a few MB)
    // ahead.
    int readers = 0;
    // Run for each range as it is read (on the prefetch thread, with prefetch): its result is
    // the row's `annotation`. For work per row that may run ahead of the caller's.
    // `prepared`: what `prepare` appended for the row (empty without it).
    std::function<uint64_t(const NvtxRangeRow&, std::string_view prepared)> annotate;
    // With annotate: run for each range before it, on the reading thread, appending to `out`
    // what annotate then gets as `prepared`. With prefetch, annotate then runs in table order
    // on a thread of its own: a fourth stage, for an annotate too slow for one core whose work
    // partly needs no state shared between rows (that part goes here).
    std::function<void(const NvtxRangeRow&, std::string& out)> prepare;
  };
  static StatusOr<NvtxRangeCursor> Open(const Database& db, const Options& options);
  NvtxRangeCursor(NvtxRangeCursor&&) noexcept;
  NvtxRangeCursor& operator=(NvtxRangeCursor&&) noexcept;
  ~NvtxRangeCursor();

  // Advances to the next range; false at the end or on an error (status()).
  bool Next();
  const NvtxRangeRow& row() const;     // valid until the next Next()
  const NvtxDomains& domains() const;  // the domains created so far
  bool saw_open() const;               // a range without end was met while no open_end was given
  int64_t damaged_rows() const;        // rows left out for damaged times (with prefetch: at the end)
  Status status() const;

 private:
  struct Impl;
  struct Prefetch;
  explicit NvtxRangeCursor(std::unique_ptr<Impl> impl);
  // The cursor without Options::prefetch (one part of it, with prefetch); `rows_on_own_thread`:
  // SQLite steps on a thread of its own.
  static StatusOr<std::unique_ptr<Impl>> OpenImpl(const Database& db, const Options& options, bool rows_on_own_thread);
  static bool ReadNext(Impl& m);
  std::unique_ptr<Impl> impl_;
};

// What one pass over every NVTX event (ScanNvtx) gives besides the ranges.
struct NvtxScan {
  NvtxDomains domains;  // the same as NvtxDomains::Read
  // (domainId, globalTid) -> events that are neither ranges nor domain creates (marks, ...).
  std::map<std::pair<int64_t, int64_t>, int64_t> marks;
  bool two_pass = false;  // a domain gained a name after its ranges were streamed: read again
  // Ranges given after all the others, out of table order: open at the end of the capture, or in
  // a domain whose create event came later in the table.
  int64_t given_late = 0;
  int64_t damaged_rows = 0;  // rows whose times fail ValidTimesSql: left out
};

struct NvtxScanCallbacks {
  // Every range, named: `names` = domains.NamesFor(row.domain_id, row.global_tid).
  std::function<void(const NvtxRangeRow&, const std::vector<std::string>& names)> range;
  // Every event with a payload (binaryData, else jsonText: NCCL's ranks, Python backtraces),
  // ranges, marks and domain creates alike, in table order; `row.payload` holds it. Optional.
  std::function<void(const NvtxRangeRow& row)> payload;
  // Forget every range given so far: they all come again (rare: see NvtxScan::two_pass).
  std::function<void()> restart;
};

// One pass over NVTX_EVENTS for everything the report needs from it (the table is the biggest
// of a training export after the kernels): the domains, the ranges named as ForEachNvtxRange +
// NamesFor name them, the marks and the payloads. Ranges come in table order, except those still
// open at the end of the capture or in a domain whose create event comes later in the table:
// those come after the others. When a domain gets a second creating thread after some of its
// ranges were given (two names for one domain), restart() is called and the ranges are read
// again with the final domains, so the result never depends on table order.
StatusOr<NvtxScan> ScanNvtx(const Database& db, OpenEnd open_end, const NvtxScanCallbacks& callbacks);

}  // namespace cpprof::nsys
