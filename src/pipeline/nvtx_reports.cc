// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "pipeline/nvtx_reports.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <string_view>
#include <unordered_map>

#include "analysis/nvtx_projection.h"
#include "analysis/summary_stats.h"
#include "base/compact_strings.h"
#include "base/parallel.h"
#include "base/saturating.h"
#include "base/stage_timer.h"
#include "base/value_lists.h"
#include "model/global_id.h"
#include "nsys/export_reader.h"
#include "nsys/launch_reader.h"
#include "nsys/nvtx_reader.h"
#include "pipeline/nvtx_group_totals.h"
#include "pipeline/summary_table.h"
#include "render/pyformat.h"

namespace cpprof::pipeline {

namespace {

const char* Style(int event_type) {
  switch (event_type) {
    case nsys::kNvtxPushPop:
    case nsys::kNvtxtPushPop:
      return "PushPop";
    case nsys::kNvtxStartEnd:
    case nsys::kNvtxtStartEnd:
      return "StartEnd";
    default:
      return "Unknown";
  }
}

}  // namespace

namespace {

// Groups of NVTX ranges as nsys's reports name them: (domain name, style, text), the text kept
// compactly (a real training export has about a million distinct autograd texts per GB), and
// the order they are printed in. nvtx_sum keeps each group's durations in table order.
struct RangeGroups {
  CompactStringSet keys;           // tag: domain index << 2 | style, or an index into name_tag
  std::vector<uint32_t> name_tag;  // when not empty: a key's tag -> domain index << 2 | style
  ValueLists durations;            // nvtx_sum: one list per key, same id
  std::vector<std::string> domain_names;
  std::vector<uint32_t> order;  // key ids as printed
  int64_t grand = 0;            // the sum of the printed groups' totals
  int64_t damaged = 0;          // ranges left out for damaged times (ValidTimesSql), said in a note

  static uint32_t StyleIndex(int event_type) {
    std::string_view style = Style(event_type);
    return style == "PushPop" ? 0 : style == "StartEnd" ? 1 : 2;
  }
  static const char* StyleName(uint32_t index) {
    static const char* const kNames[] = {"PushPop", "StartEnd", "Unknown"};
    return kNames[index];
  }
  uint32_t DomainIndex(const std::string& name) {
    for (size_t i = 0; i < domain_names.size(); ++i) {
      if (domain_names[i] == name) return static_cast<uint32_t>(i);
    }
    domain_names.push_back(name);
    return static_cast<uint32_t>(domain_names.size() - 1);
  }
  void Add(const nsys::NvtxRangeRow& r, const std::vector<std::string>& names) {
    const uint32_t style = StyleIndex(r.event_type);
    for (const auto& name : names) {
      uint32_t id = keys.Intern(DomainIndex(name) << 2 | style, r.text);
      if (id == durations.size()) durations.NewList();
      durations.Append(id, r.end - r.start);
    }
  }
  // Appends "domain:text", as nsys names the range; returns domain index << 2 | style.
  uint32_t AppendRange(uint32_t id, std::string& out) const {
    std::string text;
    uint32_t tag = keys.AppendText(id, text);
    if (!name_tag.empty()) tag = name_tag[tag];
    out += domain_names[tag >> 2];
    out += ':';
    out += text;
    return tag;
  }
  // The tag of this set for a range name's tag (domain index << 2 | style) of `other`.
  uint32_t TagFor(const RangeGroups& other, uint32_t other_tag) {
    const uint32_t named = other.name_tag.empty() ? other_tag : other.name_tag[other_tag];
    const uint32_t mine = DomainIndex(other.domain_names[named >> 2]) << 2 | (named & 3);
    if (name_tag.empty()) return mine;
    auto it = std::find(name_tag.begin(), name_tag.end(), mine);  // a few tags: a short list
    if (it != name_tag.end()) return static_cast<uint32_t>(it - name_tag.begin());
    name_tag.push_back(mine);
    return static_cast<uint32_t>(name_tag.size() - 1);
  }
  // Adds the groups of another export after this one's, keyed by name (domain name, style,
  // text): a group's values are this one's, then the other's, each in table order. Frees
  // `other`'s values as it goes.
  void MergeFrom(RangeGroups& other) {
    std::vector<uint32_t> templates;
    std::unordered_map<uint32_t, uint32_t> tags;  // other's tag -> this one's
    CompactStringSet::Cursor from(other.keys);
    for (uint32_t j = 0; j < other.keys.size(); ++j) {
      const uint32_t other_tag = from.Tag(j);
      auto it = tags.find(other_tag);
      if (it == tags.end()) it = tags.emplace(other_tag, TagFor(other, other_tag)).first;
      const uint32_t id = keys.InternFrom(from, j, it->second, templates);
      if (id == durations.size()) durations.NewList();
      other.durations.ForEach(j, [&](int64_t v) { durations.Append(id, v); });
    }
    damaged += other.damaged;
    other = RangeGroups{};
  }
  // Puts `ids` in print order: by total time, largest first; ties by range, then style (nsys's
  // GROUP BY order). Ties are common (autograd ranges of equal durations): each tied group is
  // named once, not per comparison.
  template <class TotalOf>
  void Order(size_t threads, std::vector<uint32_t> ids, TotalOf total_of) {
    keys.FreezeLookup();
    struct Entry {
      int64_t total;
      uint32_t id;
    };
    // The totals on all cores (a million groups of a few values each, read from all over).
    std::vector<Entry> entries(ids.size());
    constexpr size_t kBlock = 16384;
    ParallelFor(threads, (ids.size() + kBlock - 1) / kBlock, [&](size_t b) {
      for (size_t i = b * kBlock; i < std::min(ids.size(), (b + 1) * kBlock); ++i)
        entries[i] = {total_of(ids[i]), ids[i]};
    });
    ids = {};
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.total != b.total ? a.total > b.total : a.id < b.id; });
    order.resize(entries.size());
    std::vector<std::pair<size_t, size_t>> runs;  // [i, j) of two or more tied entries
    for (size_t i = 0, j; i < entries.size(); i = j) {
      for (j = i + 1; j < entries.size() && entries[j].total == entries[i].total;) ++j;
      for (size_t k = i; k < j; ++k) grand += entries[k].total, order[k] = entries[k].id;
      if (j - i > 1) runs.emplace_back(i, j);
    }
    // The tied runs named and sorted on all cores, a block of runs each.
    std::vector<size_t> block_start{0};
    for (size_t r = 0, size = 0; r < runs.size(); ++r) {
      size += runs[r].second - runs[r].first;
      if (size >= 16384) block_start.push_back(r + 1), size = 0;
    }
    if (block_start.back() != runs.size()) block_start.push_back(runs.size());
    ParallelFor(threads, block_start.size() - 1, [&](size_t b) {
      std::vector<std::pair<std::string, uint32_t>> tied;  // (range + NUL + style, id)
      for (size_t r = block_start[b]; r < block_start[b + 1]; ++r) {
        const auto [i, j] = runs[r];
        tied.clear();
        for (size_t k = i; k < j; ++k) {
          std::string name;
          uint32_t tag = AppendRange(entries[k].id, name);
          name += '\0';
          name += static_cast<char>('0' + (tag & 3));
          tied.emplace_back(std::move(name), entries[k].id);
        }
        std::sort(tied.begin(), tied.end());
        for (size_t k = i; k < j; ++k) order[k] = tied[k - i].second;
      }
    });
  }
};

}  // namespace

namespace {

// nvtx_sum's groups from one pass over the table on this thread, the ranges named as they come.
StatusOr<std::shared_ptr<RangeGroups>> GroupRangesInOnePass(const nsys::Database& db) {
  // Its statistics are taken in table order (the standard deviation depends on the order), so
  // when some ranges came late (open at the end of the capture, or in a domain created later in
  // the table) the ranges are read again in table order.
  auto groups = std::make_shared<RangeGroups>();
  nsys::NvtxScanCallbacks callbacks;
  callbacks.range = [&](const nsys::NvtxRangeRow& r, const std::vector<std::string>& names) { groups->Add(r, names); };
  callbacks.restart = [&] { *groups = RangeGroups{}; };
  CPPROF_ASSIGN_OR_RETURN(nsys::NvtxScan scan, nsys::ScanNvtx(db, nsys::OpenEnd::kLastNvtxEvent, callbacks));
  if (scan.given_late > 0 && !scan.two_pass) {
    *groups = RangeGroups{};
    CPPROF_RETURN_IF_ERROR(nsys::ForEachNvtxRange(db, nsys::OpenEnd::kLastNvtxEvent, [&](const nsys::NvtxRangeRow& r) {
      groups->Add(r, scan.domains.NamesFor(r.domain_id, r.global_tid));
    }));
  }
  groups->damaged = scan.damaged_rows;
  return groups;
}

// The groups of one rowid range of the table, made on its own thread before the domains are all
// known: keyed by (domain id, style, text), the process left out (see GroupRangesInParts).
struct RangePart {
  CompactStringSet keys;                           // tag: an index into `tags`
  ValueLists durations;                            // per key, in table order
  std::vector<std::pair<int64_t, uint32_t>> tags;  // (domainId, style)
  // (domainId, process) of its ranges, each with one of their threads (a few: a short list).
  std::vector<std::pair<std::pair<int64_t, int64_t>, int64_t>> threads;
  nsys::NvtxDomains domains;  // created in this part
  bool saw_open = false;
  int64_t damaged = 0;  // rows left out for damaged times
  Status status;
};

Status GroupPart(const nsys::Database& db, const nsys::RowidRange& rows, std::optional<int64_t> open_end,
                 RangePart& part) {
  nsys::NvtxRangeCursor::Options options;
  options.rows = rows;
  options.open_end = open_end;
  CPPROF_ASSIGN_OR_RETURN(nsys::NvtxRangeCursor cursor, nsys::NvtxRangeCursor::Open(db, options));
  std::pair<int64_t, uint32_t> last_tag_key{0, UINT32_MAX};
  uint32_t last_tag = 0;
  std::pair<int64_t, int64_t> last_thread_key{INT64_MIN, INT64_MIN};
  while (cursor.Next()) {
    const nsys::NvtxRangeRow& r = cursor.row();
    const std::pair<int64_t, uint32_t> tag_key{r.domain_id, RangeGroups::StyleIndex(r.event_type)};
    if (tag_key != last_tag_key) {
      auto it = std::find(part.tags.begin(), part.tags.end(), tag_key);
      last_tag = static_cast<uint32_t>(it - part.tags.begin());
      if (it == part.tags.end()) part.tags.push_back(tag_key);
      last_tag_key = tag_key;
    }
    const std::pair<int64_t, int64_t> thread_key{r.domain_id, model::GlobalPidOf(r.global_tid)};
    if (thread_key != last_thread_key) {
      auto it =
          std::find_if(part.threads.begin(), part.threads.end(), [&](const auto& t) { return t.first == thread_key; });
      if (it == part.threads.end()) part.threads.push_back({thread_key, r.global_tid});
      last_thread_key = thread_key;
    }
    const uint32_t id = part.keys.Intern(last_tag, r.text);
    if (id == part.durations.size()) part.durations.NewList();
    part.durations.Append(id, r.end - r.start);
  }
  CPPROF_RETURN_IF_ERROR(cursor.status());
  part.keys.FreezeLookup();  // the merge reads its keys by id: its hash table can go now
  part.domains = cursor.domains();
  part.saw_open = cursor.saw_open();
  part.damaged = cursor.damaged_rows();
  return OkStatus();
}

// nvtx_sum's groups from the table split into rowid ranges, each grouped on its own connection
// and thread, and merged in table order as soon as the parts before it are: the same groups, in
// the same order, with the same values in the same order as one pass, on any number of threads,
// holding the whole and the parts not merged yet (a few per thread) rather than every part. A
// part keys its ranges by domain id without the process (the domains are known only at the end),
// and so does the whole until the end; this holds when a domain id names the ranges of every
// process alike, by one name, and no two domain ids share a name (as in real exports: each process
// creates its domains in the same order, on one thread); nullptr when not, for the one-pass
// reading.
StatusOr<std::shared_ptr<RangeGroups>> GroupRangesInParts(const nsys::Database& db, int64_t min_rows_per_thread) {
  // At least a part per thread, and parts of at most kRowsPerPart rows: the parts waiting to be
  // merged are small next to the whole.
  constexpr int64_t kRowsPerPart = 100'000;
  CPPROF_ASSIGN_OR_RETURN(int64_t table_rows, nsys::RowsUpperBound(db, nsys::kNvtxTable));
  const size_t threads = db.exec().threads;
  const size_t want_parts = std::max<size_t>(threads, static_cast<size_t>(table_rows / kRowsPerPart));
  CPPROF_ASSIGN_OR_RETURN(std::vector<nsys::RowidRange> rows,
                          nsys::SplitRowids(db, nsys::kNvtxTable, want_parts, min_rows_per_thread));
  std::vector<RangePart> parts;
  std::shared_ptr<RangeGroups> groups;
  // The whole's tags until the end: (domainId, style), an index into raw_tags.
  std::vector<std::pair<int64_t, uint32_t>> raw_tags;
  std::optional<int64_t> open_end;  // read again with it when a range never ended
  StageTimer timer(db.exec());
  while (true) {
    parts = std::vector<RangePart>(rows.size());
    groups = std::make_shared<RangeGroups>();
    raw_tags.clear();
    std::vector<uint32_t> templates, raw_of_part_tag;
    // Merges part k into the whole (on the thread that merges: one at a time, in table order)
    // and frees its groups; its domains and threads stay for the names.
    auto merge = [&](RangePart& part) {
      if (!part.status.ok()) return;
      templates.clear();
      raw_of_part_tag.clear();
      for (const auto& tag : part.tags) {
        auto it = std::find(raw_tags.begin(), raw_tags.end(), tag);
        raw_of_part_tag.push_back(static_cast<uint32_t>(it - raw_tags.begin()));
        if (it == raw_tags.end()) raw_tags.push_back(tag);
      }
      CompactStringSet::Cursor from(part.keys);
      for (uint32_t j = 0; j < part.keys.size(); ++j) {
        const uint32_t id = groups->keys.InternFrom(from, j, raw_of_part_tag[from.Tag(j)], templates);
        if (id == groups->durations.size()) groups->durations.NewList();
        part.durations.ForEach(j, [&](int64_t v) { groups->durations.Append(id, v); });
      }
      part.keys = CompactStringSet();
      part.durations = ValueLists();
    };
    std::mutex mu;
    std::condition_variable merged;
    std::vector<char> done(parts.size(), 0);
    size_t next_merge = 0;
    bool merging = false, failed = false;
    // A part is read only while fewer than `ahead` parts wait to be merged before it: with many
    // cores the reading outruns the one merging thread, and parts read but not merged would pile
    // up (10 GB export: 1169 MB peak on a 16-core host without this, 875 MB on 2 cores).
    const size_t ahead = threads + 1;
    ParallelFor(threads, parts.size(), [&](size_t i) {
      {
        std::unique_lock<std::mutex> lock(mu);
        merged.wait(lock, [&] { return i < next_merge + ahead || failed; });
      }
      try {
        if (i == 0) {
          parts[i].status = GroupPart(db, rows[i], open_end, parts[i]);
        } else {
          StatusOr<nsys::Database> own = db.Reopen();
          parts[i].status = own.ok() ? GroupPart(*own, rows[i], open_end, parts[i]) : own.status();
        }
      } catch (...) {  // out of memory, say: no thread may wait for this part any more
        std::lock_guard<std::mutex> lock(mu);
        failed = true;
        merged.notify_all();
        throw;
      }
      // The first thread to find the next part in table order done merges it and the ones after
      // it that are done too; the others go on reading.
      std::unique_lock<std::mutex> lock(mu);
      done[i] = 1;
      if (merging) return;
      merging = true;
      while (next_merge < parts.size() && done[next_merge]) {
        const size_t k = next_merge;
        lock.unlock();
        merge(parts[k]);
        lock.lock();
        ++next_merge;
        merged.notify_all();
      }
      merging = false;
    });
    bool open = false;
    for (const RangePart& p : parts) {
      CPPROF_RETURN_IF_ERROR(p.status);
      open = open || p.saw_open;
    }
    if (!open || open_end) break;
    CPPROF_ASSIGN_OR_RETURN(int64_t end, nsys::LastNvtxTimestamp(db, nsys::OpenEnd::kLastNvtxEvent));
    open_end = end;
  }
  timer.Mark("nvtx_sum: NVTX parts read and merged");
  for (const RangePart& p : parts) groups->damaged += p.damaged;
  nsys::NvtxDomains domains = std::move(parts[0].domains);
  for (size_t i = 1; i < parts.size(); ++i) domains.Merge(parts[i].domains);

  // The name of each domain id with ranges: the same in each process, one name per id, and no
  // name of two ids.
  std::map<int64_t, const std::vector<std::string>*> names_of;
  for (const RangePart& p : parts) {
    for (const auto& [key, tid] : p.threads) {
      const std::vector<std::string>& names = domains.NamesFor(key.first, tid);
      if (names.size() != 1) return std::shared_ptr<RangeGroups>();
      auto [it, inserted] = names_of.try_emplace(key.first, &names);
      if (!inserted && *it->second != names) return std::shared_ptr<RangeGroups>();
    }
  }
  std::map<std::string_view, int64_t> id_of_name;
  for (const auto& [domain, names] : names_of) {
    auto [it, inserted] = id_of_name.try_emplace(names->front(), domain);
    if (!inserted && it->second != domain) return std::shared_ptr<RangeGroups>();
  }
  // The whole's tags named: (domainId, style) -> domain index << 2 | style.
  groups->name_tag.resize(raw_tags.size());
  for (size_t t = 0; t < raw_tags.size(); ++t) {
    groups->name_tag[t] = groups->DomainIndex(names_of.at(raw_tags[t].first)->front()) << 2 | raw_tags[t].second;
  }
  return groups;
}

// One export's nvtx_sum groups; nullptr and `skipped` set when nsys would skip the report.
StatusOr<std::shared_ptr<RangeGroups>> ExportRangeGroups(const nsys::Database& db, int64_t min_rows_per_thread,
                                                         std::string* skipped) {
  if (!db.HasTable("StringIds")) {
    *skipped = db.path() + " file does not contain StringIds table.";
    return std::shared_ptr<RangeGroups>();
  }
  if (!db.HasTable(nsys::kNvtxTable)) {
    *skipped = db.path() + " does not contain NV Tools Extension (NVTX) data.";
    return std::shared_ptr<RangeGroups>();
  }
  CPPROF_ASSIGN_OR_RETURN(std::shared_ptr<RangeGroups> groups, GroupRangesInParts(db, min_rows_per_thread));
  if (!groups) {
    CPPROF_ASSIGN_OR_RETURN(groups, GroupRangesInOnePass(db));
  }
  return groups;
}

}  // namespace

StatusOr<model::StatsTable> NvtxSum(const nsys::Database& db, int64_t min_rows_per_thread) {
  return NvtxSum(std::span<const nsys::Database>(&db, 1), min_rows_per_thread);
}

StatusOr<model::StatsTable> NvtxSum(std::span<const nsys::Database> dbs, int64_t min_rows_per_thread) {
  // Export after export (each is read on all cores), each merged into the whole as it is read:
  // the whole and one export are held at a time.
  StageTimer timer(nsys::ExecOf(dbs));
  std::shared_ptr<RangeGroups> groups;
  std::string reasons;
  for (const nsys::Database& db : dbs) {
    std::string skipped;
    CPPROF_ASSIGN_OR_RETURN(std::shared_ptr<RangeGroups> one, ExportRangeGroups(db, min_rows_per_thread, &skipped));
    if (!one) {
      reasons += (reasons.empty() ? "" : "\n") + skipped;
    } else if (!groups) {
      groups = std::move(one);
    } else {
      groups->MergeFrom(*one);
    }
  }
  if (!groups) {
    model::StatsTable t;
    t.skipped = reasons;
    return t;
  }
  timer.Mark("nvtx_sum: NVTX scan");
  std::vector<uint32_t> ids(groups->keys.size());
  for (uint32_t id = 0; id < ids.size(); ++id) ids[id] = id;
  groups->Order(nsys::ExecOf(dbs).threads, std::move(ids), [&](uint32_t id) {
    int64_t total = 0;
    groups->durations.ForEach(id, [&](int64_t v) { total += v; });
    return total;
  });
  const int64_t grand = groups->grand;
  timer.Mark("nvtx_sum: order");

  model::StatsTable t;
  NoteDamaged(groups->damaged, "NVTX ranges", t);
  t.columns = {{"Time (%)"}, {"Total Time (ns)"}, {"Instances"},   {"Avg (ns)"},     {"Med (ns)"},
               {"Min (ns)"}, {"Max (ns)"},        {"StdDev (ns)"}, {"Style", false}, {"Range", false}};
  t.lazy_count = groups->order.size();
  t.lazy_row = [groups, grand](size_t i, std::vector<std::string>& cells) {
    const uint32_t id = groups->order[i];
    // Rows go by total, so each reads its group from a random place: fetch ahead.
    const auto& order = groups->order;
    if (i + 16 < order.size())
      groups->keys.Prefetch(order[i + 16], false), groups->durations.Prefetch(order[i + 16], false);
    if (i + 8 < order.size()) groups->keys.Prefetch(order[i + 8], true), groups->durations.Prefetch(order[i + 8], true);
    thread_local std::vector<int64_t> values;
    values.clear();
    groups->durations.ForEach(id, [&](int64_t v) { values.push_back(v); });
    AppendDurationCells(analysis::Summarize(values), grand, cells);
    cells.emplace_back();  // the style, known with the range
    cells.emplace_back();
    uint32_t tag = groups->AppendRange(id, cells.back());
    cells[cells.size() - 2] = RangeGroups::StyleName(tag & 3);
  };
  return t;
}

}  // namespace cpprof::pipeline

namespace cpprof::pipeline {

namespace {

// What the sweep keys a group of ranges by besides its text: (domainId, process, style). Named
// at the end, when every domain is known.
struct SweepTag {
  int64_t domain_id, global_tid;
  uint32_t style;  // RangeGroups::StyleIndex
};

enum class SweepResult { kDone, kNeedOpenEnd, kNeedSort };

// How far out of time order API calls may come and still be placed without sorting the table.
constexpr int64_t kCallReorderNs = 50'000'000;

struct PendingCall {
  int64_t start;
  uint64_t arrival;  // table order among calls of one start
  int64_t end, global_tid, correlation;
  bool operator>(const PendingCall& o) const { return start != o.start ? start > o.start : arrival > o.arrival; }
};

constexpr uint32_t kNoValues = UINT32_MAX;

struct Sweep {
  // Groups: the text compactly with a tag (an index into `tags`); per group with a projected
  // range (made at the first: about a third of the texts never hold GPU work) its projected
  // ranges as (rowid, projection) value pairs (the statistics are taken in table order, as nsys
  // takes them, and ranges close in end order) and its totals.
  CompactStringSet keys;
  std::deque<uint32_t> dense;  // per key: its index in proj and totals; kNoValues until projected
  ValueLists proj{7};          // pairs: a group of 4 ranges fits its first block
  GroupTotalsList totals;
  std::vector<SweepTag> tags;
  std::map<std::tuple<int64_t, int64_t, uint32_t>, uint32_t> tag_index;
  nsys::NvtxDomains domains;
  int64_t damaged = 0;  // NVTX rows left out for damaged times

  uint32_t TagOf(int64_t domain_id, int64_t process, int64_t global_tid, uint32_t style) {
    auto [it, inserted] = tag_index.try_emplace({domain_id, process, style}, static_cast<uint32_t>(tags.size()));
    if (inserted) tags.push_back({domain_id, global_tid, style});
    return it->second;
  }
};

// One merge of the NVTX ranges and the CUDA API calls by start, fed to the projector.
// `split_default_domain`: key ranges of the default domain by process too (needed only when some
// process created a domain with id 0, which names them).
StatusOr<SweepResult> RunSweep(const nsys::Database& db, analysis::LaunchSpans& spans, bool by_start,
                               std::optional<int64_t> open_end, bool split_default_domain, Sweep& sweep) {
  // Each range's group, found as it is read (with prefetch, on the reading thread: the sweep's
  // keys and tags are its alone until the cursor ends).
  constexpr uint64_t kLeftOut = UINT64_MAX;
  uint32_t last_tag = UINT32_MAX;
  std::tuple<int64_t, int64_t, uint32_t> last_tag_key;
  auto group_of = [&sweep, &last_tag, &last_tag_key, split_default_domain](const nsys::NvtxRangeRow& r,
                                                                           std::string_view split) -> uint64_t {
    if (r.ends_on_other_thread) return kLeftOut;
    const uint32_t style = RangeGroups::StyleIndex(r.event_type);
    int64_t process = model::GlobalPidOf(r.global_tid);
    // (domain, process, style, text); ranges of the default domain are named ":text" in every
    // process, so one key serves them all.
    if (r.domain_id == 0 && !split_default_domain) process = 0;
    std::tuple<int64_t, int64_t, uint32_t> tag_key{r.domain_id, process, style};
    if (last_tag == UINT32_MAX || tag_key != last_tag_key) {
      last_tag = sweep.TagOf(r.domain_id, process, r.global_tid, style);
      last_tag_key = tag_key;
    }
    return sweep.keys.InternSplit(last_tag, split);
  };
  nsys::NvtxRangeCursor::Options options;
  options.by_start = by_start;
  options.open_end = open_end;
  // SQLite and splitting the texts (on several readers where there are cores enough), keying
  // them, and the sweep: stages on cores of their own (the keying alone took longer than the
  // sweep, and reading NVTX alone nearly as long).
  options.prefetch = db.exec().HasSpareThreads();
  options.prepare = [](const nsys::NvtxRangeRow& r, std::string& out) {
    if (!r.ends_on_other_thread) CompactStringSet::Split(r.text, out);
  };
  options.annotate = group_of;
  CPPROF_ASSIGN_OR_RETURN(nsys::NvtxRangeCursor nvtx, nsys::NvtxRangeCursor::Open(db, options));
  CPPROF_ASSIGN_OR_RETURN(nsys::ApiCallCursor calls, nsys::ApiCallCursor::Open(db, by_start, true));
  analysis::NvtxProjector projector([&](const analysis::ClosedRange& c) {
    if (!c.proj.projected) return;
    uint32_t& d = sweep.dense[c.group];
    if (d == kNoValues) {
      d = sweep.totals.New();
      sweep.proj.NewList();
    }
    sweep.proj.Append(d, static_cast<int64_t>(c.seq));
    sweep.proj.Append(d, c.proj.proj_end - c.proj.proj_start);
    const bool leveled = c.proj.level >= 0;
    sweep.totals.Add(d,
                     {c.end - c.start, c.proj.launches, leveled ? c.proj.level : 0, c.proj.children, leveled ? 1 : 0});
  });
  auto add_range = [&](const nsys::NvtxRangeRow& r) {
    if (r.annotation == kLeftOut) return;
    const auto id = static_cast<uint32_t>(r.annotation);
    if (id == sweep.dense.size()) sweep.dense.push_back(kNoValues);  // ids come in order
    projector.Range(r.global_tid, r.start, r.end, id, static_cast<uint64_t>(r.rowid));
  };
  auto add_call = [&](const PendingCall& c) {
    int64_t op_start, op_end;
    if (spans.Find(model::GlobalPidOf(c.global_tid), c.correlation, &op_start, &op_end)) {
      projector.Launch(c.global_tid, c.start, c.end, c.correlation, op_start, op_end);
    }
  };
  // API calls pass through a small reorder buffer (kCallReorderNs of calls by start): an export
  // whose calls are a little out of time order needs no sorted second pass. One that comes in
  // later than that is read again sorted.
  std::priority_queue<PendingCall, std::vector<PendingCall>, std::greater<>> pending;
  int64_t latest_call = INT64_MIN, released = INT64_MIN;
  uint64_t arrival = 0;
  bool more_nvtx = nvtx.Next(), more_calls = calls.Next();
  while (true) {
    while (more_calls && (pending.empty() || pending.top().start > latest_call - kCallReorderNs)) {
      const nsys::ApiCallRow& c = calls.row();
      if (c.start < released) return SweepResult::kNeedSort;
      latest_call = std::max(latest_call, c.start);
      pending.push({c.start, arrival++, c.end, c.global_tid, c.correlation});
      more_calls = calls.Next();
    }
    if (!more_nvtx && pending.empty()) break;
    // At equal times a range opens before a call is placed in it.
    if (more_nvtx && (pending.empty() || nvtx.row().start <= pending.top().start)) {
      add_range(nvtx.row());
      more_nvtx = nvtx.Next();
    } else {
      released = pending.top().start;
      add_call(pending.top());
      pending.pop();
    }
    if (!projector.in_order()) return SweepResult::kNeedSort;
  }
  CPPROF_RETURN_IF_ERROR(nvtx.status());
  CPPROF_RETURN_IF_ERROR(calls.status());
  if (nvtx.saw_open()) return SweepResult::kNeedOpenEnd;
  projector.Finish();
  sweep.domains = nvtx.domains();
  sweep.damaged = nvtx.damaged_rows();
  return SweepResult::kDone;
}

// nvtx_gpu_proj_sum's named groups. A printed group is a sweep group (its representative) and
// the sweep groups of other processes or domain ids with the same name (its other parts,
// linked by next_part); its projections are gathered from them in table order. Sweep groups
// are key ids; their values and totals are at dense[id].
struct ProjSumGroups {
  RangeGroups names;                // the sweep's keys, name_tag from its tags, the order
  std::deque<uint32_t> dense;       // per key: its index in proj and totals
  ValueLists proj;                  // per projected sweep group: rowid, projection, rowid, ...
  GroupTotalsList totals;           // per projected sweep group; a representative's hold its parts' too
  std::vector<uint32_t> next_part;  // per key: the next part of its printed group
  GroupTotals TotalsOf(uint32_t rep) const { return totals.Get(dense[rep]); }

  // Calls f(rowid, projection) for each projected range of the group, part by part.
  template <class F>
  void ForEachProjection(uint32_t rep, F&& f) const {
    for (uint32_t part = rep; part != UINT32_MAX; part = next_part.empty() ? UINT32_MAX : next_part[part]) {
      int64_t seq = 0;
      bool have_seq = false;  // values alternate: rowid (any int64), then projection
      proj.ForEach(dense[part], [&](int64_t v) {
        if (have_seq) f(seq, v);
        seq = v;
        have_seq = !have_seq;
      });
    }
  }

  // The sum of the group's projections (no order needed).
  int64_t Total(uint32_t rep) const {
    int64_t total = 0;
    ForEachProjection(rep, [&](int64_t, int64_t v) { total += v; });
    return total;
  }

  // The group's projections in table order.
  std::vector<int64_t>& Values(uint32_t rep, std::vector<int64_t>& values) const {
    thread_local std::vector<std::pair<int64_t, int64_t>> ordered;
    ordered.clear();
    ForEachProjection(rep, [&](int64_t seq, int64_t v) { ordered.emplace_back(seq, v); });
    if (!std::is_sorted(ordered.begin(), ordered.end())) std::sort(ordered.begin(), ordered.end());
    values.clear();
    for (const auto& [seq, v] : ordered) values.push_back(v);
    return values;
  }
};

// One export's nvtx_gpu_proj_sum groups, named, with `reps` its printed groups (not yet in
// order); nullptr and `skipped` set when nsys would skip the report.
StatusOr<std::shared_ptr<ProjSumGroups>> ProjectExport(const nsys::Database& db, std::vector<uint32_t>& reps,
                                                       std::string* skipped) {
  if (!db.HasTable("StringIds"))
    *skipped = db.path() + " file does not contain StringIds table.";
  else if (!db.HasTable(nsys::kNvtxTable))
    *skipped = db.path() + " does not contain NV Tools Extension (NVTX) data.";
  else if (!db.HasTable(nsys::kRuntimeTable))
    *skipped = db.path() + " does not contain CUDA API data.";
  else if (!db.HasTable(nsys::kKernelTable) && !db.HasTable(nsys::kMemcpyTable) && !db.HasTable(nsys::kMemsetTable))
    *skipped = db.path() + " does not contain GPU operation data.";
  if (!skipped->empty()) return std::shared_ptr<ProjSumGroups>();

  StageTimer timer(db.exec());
  // The span of each launch's ops: 16 bytes per launch, allocated once.
  analysis::LaunchSpans spans;
  int64_t rows = 0;
  for (const char* t : {nsys::kKernelTable, nsys::kMemcpyTable, nsys::kMemsetTable}) {
    CPPROF_ASSIGN_OR_RETURN(int64_t n, nsys::RowsUpperBound(db, t));
    rows += n;
  }
  spans.Reserve(static_cast<size_t>(rows));
  CPPROF_RETURN_IF_ERROR(nsys::ForEachOpLaunch(
      db, [&](int64_t gpid, int64_t corr, int64_t start, int64_t end) { spans.Add(gpid, corr, start, end); }));
  spans.Finish();
  timer.Mark("proj_sum: GPU op spans");

  // One sweep in table order (exports list NVTX ranges and API calls by start); again sorted by
  // SQLite if they are not, or with the end of open ranges if some range never ended.
  Sweep sweep;
  bool by_start = false, split_default = false;
  std::optional<int64_t> open_end;
  for (int attempt = 0;; ++attempt) {
    sweep = Sweep{};
    CPPROF_ASSIGN_OR_RETURN(SweepResult result, RunSweep(db, spans, by_start, open_end, split_default, sweep));
    if (result == SweepResult::kDone && !split_default && sweep.domains.HasDomain(0)) {
      split_default = true;  // a process named domain 0: its ranges are not ":text"
      continue;
    }
    if (result == SweepResult::kDone) break;
    if (attempt == 3) return Error(ExitCode::kError, "nvtx_gpu_proj_sum: the NVTX sweep did not settle");
    if (result == SweepResult::kNeedSort) by_start = true;
    if (result == SweepResult::kNeedOpenEnd) {
      CPPROF_ASSIGN_OR_RETURN(int64_t end, nsys::LastNvtxTimestamp(db, nsys::OpenEnd::kLastRange));
      open_end = end;
    }
  }
  spans = {};
  timer.Mark("proj_sum: NVTX x API sweep");

  // Named groups: (range name, style); groups of other processes or domain ids with the same
  // name are one. Only sweep tags that share a name (a domain created in several processes) can
  // have such groups: those are matched by name in a second, small set.
  auto out = std::make_shared<ProjSumGroups>();
  RangeGroups& names = out->names;
  names.damaged = sweep.damaged;
  names.name_tag.resize(sweep.tags.size());
  std::map<uint32_t, int> tags_per_name;
  for (size_t k = 0; k < sweep.tags.size(); ++k) {
    const SweepTag& tag = sweep.tags[k];
    names.name_tag[k] =
        names.DomainIndex(sweep.domains.NamesFor(tag.domain_id, tag.global_tid).front()) << 2 | tag.style;
    ++tags_per_name[names.name_tag[k]];
  }
  reps.clear();
  CompactStringSet shared;  // (name tag, text) of groups whose name other tags share
  std::vector<uint32_t> shared_rep, last_part;
  std::string text;
  CompactStringSet::Cursor keys(sweep.keys);
  for (uint32_t id = 0; id < sweep.dense.size(); ++id) {
    if (sweep.dense[id] == kNoValues) continue;
    text.clear();
    const uint32_t tag = keys.AppendText(id, text);
    if (tags_per_name[names.name_tag[tag]] == 1) {
      reps.push_back(id);
      continue;
    }
    uint32_t named = shared.Intern(names.name_tag[tag], text);
    if (named == shared_rep.size()) {
      shared_rep.push_back(id);
      last_part.push_back(id);
      reps.push_back(id);
      continue;
    }
    if (out->next_part.empty()) out->next_part.assign(sweep.dense.size(), UINT32_MAX);
    out->next_part[last_part[named]] = id;
    last_part[named] = id;
    sweep.totals.Add(sweep.dense[shared_rep[named]], sweep.totals.Get(sweep.dense[id]));
  }
  shared = CompactStringSet{};
  names.keys = std::move(sweep.keys);
  out->dense = std::move(sweep.dense);
  out->proj = std::move(sweep.proj);
  out->totals = std::move(sweep.totals);
  sweep = Sweep{};
  timer.Mark("proj_sum: naming");
  return out;
}

// Adds the printed groups `reps` of another export's groups `from` to `into` (groups with one
// part each, dense ids, the name tags as `into.names` names them), keyed by name: a group's
// projections are the ones before, then `from`'s in its table order. `seq` numbers them in that
// order across exports. Frees `from`.
void MergeProjections(ProjSumGroups& into, std::vector<uint32_t>& into_reps, std::shared_ptr<ProjSumGroups> from,
                      const std::vector<uint32_t>& reps, int64_t& seq) {
  std::vector<uint32_t> templates;
  std::vector<int64_t> values;
  std::unordered_map<uint32_t, uint32_t> tags;           // from's key tag -> into's
  CompactStringSet::Cursor from_keys(from->names.keys);  // reps come in id order
  into.names.damaged += from->names.damaged;
  for (const uint32_t rep : reps) {
    const uint32_t from_tag = from_keys.Tag(rep);
    auto it = tags.find(from_tag);
    if (it == tags.end()) it = tags.emplace(from_tag, into.names.TagFor(from->names, from_tag)).first;
    const uint32_t id = into.names.keys.InternFrom(from_keys, rep, it->second, templates);
    if (id == into.dense.size()) {
      into.dense.push_back(into.totals.New());
      into.proj.NewList();
      into_reps.push_back(id);
    }
    for (int64_t v : from->Values(rep, values)) {
      into.proj.Append(into.dense[id], seq++);
      into.proj.Append(into.dense[id], v);
    }
    into.totals.Add(into.dense[id], from->TotalsOf(rep));
  }
}

}  // namespace

StatusOr<model::StatsTable> NvtxGpuProjSum(const nsys::Database& db) {
  return NvtxGpuProjSum(std::span<const nsys::Database>(&db, 1));
}

StatusOr<model::StatsTable> NvtxGpuProjSum(std::span<const nsys::Database> dbs) {
  // Export after export (a range projects onto its own export's GPU ops only); several are
  // merged into a whole by name as each is read: the whole and one export are held at a time.
  StageTimer timer(nsys::ExecOf(dbs));
  std::shared_ptr<ProjSumGroups> out;
  std::vector<uint32_t> reps, one_reps;
  std::string reasons;
  int64_t seq = 0;
  size_t with_data = 0;
  for (const nsys::Database& db : dbs) {
    std::string skipped;
    CPPROF_ASSIGN_OR_RETURN(std::shared_ptr<ProjSumGroups> one, ProjectExport(db, one_reps, &skipped));
    if (!one) {
      reasons += (reasons.empty() ? "" : "\n") + skipped;
      continue;
    }
    if (++with_data == 1) {
      out = std::move(one);
      reps = std::move(one_reps);
      continue;
    }
    if (with_data == 2) {  // the whole so far becomes a merged set, into which each export goes
      auto first = std::move(out);
      out = std::make_shared<ProjSumGroups>();
      std::vector<uint32_t> first_reps = std::move(reps);
      reps.clear();
      MergeProjections(*out, reps, std::move(first), first_reps, seq);
    }
    MergeProjections(*out, reps, std::move(one), one_reps, seq);
    timer.Mark("proj_sum: merged");
  }
  if (!out) {
    model::StatsTable t;
    t.skipped = reasons;
    return t;
  }
  RangeGroups& names = out->names;
  names.Order(nsys::ExecOf(dbs).threads, std::move(reps), [&](uint32_t id) { return out->Total(id); });
  timer.Mark("proj_sum: order");

  auto avg = [](int64_t sum, int64_t n) {
    return n ? render::PyRound1(static_cast<double>(sum) / static_cast<double>(n)) : std::string();
  };
  model::StatsTable t;
  NoteDamaged(names.damaged, "NVTX ranges", t);
  t.columns = {{"Range", false},    {"Style", false},     {"Total Proj Time (ns)"}, {"Total Range Time (ns)"},
               {"Range Instances"}, {"Proj Avg (ns)"},    {"Proj Med (ns)"},        {"Proj Min (ns)"},
               {"Proj Max (ns)"},   {"Proj StdDev (ns)"}, {"Total GPU Ops"},        {"Avg GPU Ops"},
               {"Avg Range Lvl"},   {"Avg Num Child"}};
  t.lazy_count = names.order.size();
  t.lazy_row = [out, avg](size_t i, std::vector<std::string>& cells) {
    const uint32_t id = out->names.order[i];
    thread_local std::vector<int64_t> values;
    const analysis::Summary s = analysis::Summarize(out->Values(id, values));
    const GroupTotals g = out->TotalsOf(id);
    cells.emplace_back();
    uint32_t tag = out->names.AppendRange(id, cells.back());
    cells.emplace_back(RangeGroups::StyleName(tag & 3));
    for (auto v : {s.total, g.range_time, s.count}) cells.push_back(std::to_string(v));
    for (double v : {s.mean, s.median}) cells.push_back(render::PyRound1(v));
    for (auto v : {s.min, s.max}) cells.push_back(std::to_string(v));
    cells.push_back(render::PyRound1(s.stdev));
    cells.push_back(std::to_string(g.launches));
    cells.push_back(avg(g.launches, s.count));
    cells.push_back(avg(g.level_sum, g.levels));
    cells.push_back(avg(g.children, s.count));
  };
  return t;
}

}  // namespace cpprof::pipeline
