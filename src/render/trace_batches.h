// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// How the many events of a trace are formatted fast (render/trace_writer.h): placed events wait
// in batches, each batch is formatted on all cores a block per thread and appended in order (the
// same bytes as writing them one by one), and a BatchWriter formats the next batch on a thread of
// its own while the caller places the one after and a third thread appends. Used by both formats.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/batch_pipe.h"
#include "base/exec_context.h"
#include "base/parallel.h"
#include "render/chrome_trace_writer.h"
#include "render/json_writer.h"

namespace cpprof::render::trace {

// A complete event's fields (between its braces); times clamped so that ts >= 0 and dur >= 0,
// with the raw values in args. `name(w)` writes the name's value; `args(w)` the event's own args
// (`has_args`: whether it writes any). Every complete event goes through here, so that the
// batches and the events written one by one have the same bytes.
template <class NameFn, class ArgsFn>
void WriteX(JsonWriter& w, NameFn&& name, std::string_view cat, int pid, int64_t tid, int64_t start, int64_t end,
            bool has_args, ArgsFn&& args) {
  std::optional<int64_t> end_before_start, clamped_start;
  if (end < start) {
    end_before_start = end;
    end = start;
  }
  if (start < 0) {
    clamped_start = start;
    start = 0;
    end = std::max<int64_t>(end, 0);
  }
  w.Key("ph"), w.RawString("\"X\"");
  w.Key("name"), name(w);
  w.Key("cat"), w.String(cat);
  w.Key("pid"), w.Int(pid);
  w.Key("tid"), w.Int(tid);
  w.Key("ts"), w.Thousandths(start);
  w.Key("dur"), w.Thousandths(end - start);
  if (has_args || end_before_start || clamped_start) {
    w.Key("args");
    w.BeginObject();
    args(w);
    if (end_before_start) w.Key("end_before_start_ns"), w.Int(*end_before_start);
    if (clamped_start) w.Key("clamped_start_ns"), w.Int(*clamped_start);
    w.EndObject();
  }
}

// A launch flow's end at a GPU op (the first op of its launch).
inline void FlowEnd(JsonWriter& w, uint64_t id, int pid, int64_t tid, int64_t ts) {
  w.Key("ph"), w.RawString("\"f\"");
  w.Key("bp"), w.RawString("\"e\"");
  w.Key("name"), w.RawString("\"launch\"");
  w.Key("cat"), w.RawString("\"cuda_flow\"");
  w.Key("id"), w.UInt(id);
  w.Key("pid"), w.Int(pid);
  w.Key("tid"), w.Int(tid);
  w.Key("ts"), w.Thousandths(ts);
}

// An NVTX range's args: whether it was open at the capture's end; a start/end range's thread and
// the thread that ended it.
inline void NvtxArgs(JsonWriter& w, bool open, bool push_pop, int64_t thread, std::optional<int64_t> ended_on) {
  if (open) w.Key("open_at_capture_end"), w.Bool(true);
  if (push_pop) return;
  w.Key("thread"), w.Int(thread);
  if (ended_on) w.Key("ended_on_tid"), w.Int(*ended_on);
}

// How a format names a launch's correlation id in the args of GPU ops and API calls.
struct CorrelationArgs {
  const char* key;         // "correlationId" (Chrome trace), "correlation" (Kineto)
  bool external_id;        // also as "external id" (Kineto)
  bool bandwidth = false;  // memory ops' "memory bandwidth (GB/s)" (Kineto)
};

// Items [0, n) formatted on all cores, a block of items each, and appended in order: the same
// bytes as writing them one by one. write(w, separate, i) writes item i's events, calling
// separate() before each (",\n", or "\n" before the document's first, as
// ChromeTraceWriter::Begin); `events` is how many that makes in all; `bytes` a guess per item.
// `writer`: the ChromeTraceWriter, or a BatchWriter's FormattedBlocks.
template <class Writer, class WriteItem>
void WriteInBlocks(Writer& writer, size_t n, int64_t events, size_t bytes, WriteItem&& write) {
  if (n == 0) return;
  const size_t threads = writer.format_threads();
  const size_t blocks = std::min<size_t>(threads, (n + 1023) / 1024);
  std::vector<std::string> text(blocks);
  const bool first_of_document = writer.events() == 0;
  ParallelFor(threads, blocks, [&](size_t b) {
    const size_t from = n * b / blocks, to = n * (b + 1) / blocks;
    text[b].reserve((to - from) * bytes);
    JsonWriter w(text[b]);
    bool first = b == 0 && first_of_document;
    auto separate = [&] {
      text[b] += first ? "\n" : ",\n";
      first = false;
    };
    for (size_t i = from; i < to; ++i) write(w, separate, i);
  });
  for (size_t b = 0; b < blocks; ++b) writer.AppendRaw(std::move(text[b]), b == 0 ? events : 0);
}

// GPU ops (kernels, memcpys, memsets) placed (pid, tid: their tracks) in order but not yet
// formatted, each with its launch's flow end where it has one.
class GpuOpBatch {
 public:
  static constexpr size_t kEvents = 1 << 14;
  struct Op {
    const std::string* name;  // serialized (the writer's caches: they outlive the batch)
    std::string_view cat;     // static text
    int pid;
    int64_t tid, start, end;
    int32_t stream, device;
    bool has_correlation, memop, has_launch_config, flow_end;
    int64_t correlation, bytes;
    double gbps;  // memory ops: bytes per ns of their own duration
    int64_t grid[3], block[3];
    uint64_t flow_id;  // flow_end: the flow's id, on the rank's process
    int flow_pid;
  };
  using Style = CorrelationArgs;
  void Add(const Op& op) { ops_.push_back(op), flows_ += op.flow_end; }
  size_t size() const { return ops_.size(); }
  void Clear() { ops_.clear(), flows_ = 0; }
  template <class Writer>
  void WriteTo(Writer& writer, const Style& style) {
    WriteInBlocks(writer, ops_.size(), static_cast<int64_t>(ops_.size() + flows_), 260,
                  [&](JsonWriter& w, const auto& separate, size_t i) {
                    const Op& op = ops_[i];
                    separate();
                    w.BeginObject();
                    WriteX(
                        w, [&](JsonWriter& jw) { jw.RawString(*op.name); }, op.cat, op.pid, op.tid, op.start, op.end,
                        true, [&](JsonWriter& jw) { Args(jw, op, style); });
                    w.EndObject();
                    if (!op.flow_end) return;
                    separate();
                    w.BeginObject();
                    FlowEnd(w, op.flow_id, op.flow_pid, op.tid, std::max<int64_t>(op.start, 0));
                    w.EndObject();
                  });
    Clear();
  }

 private:
  static void Args(JsonWriter& w, const Op& op, const Style& style) {
    w.Key("stream"), w.Int(op.stream);
    w.Key("device"), w.Int(op.device);
    if (op.has_correlation) w.Key(style.key), w.Int(op.correlation);
    if (op.memop) {
      w.Key("bytes"), w.Int(op.bytes);
      if (style.bandwidth) w.Key("memory bandwidth (GB/s)"), w.Double(op.gbps);
      return;
    }
    if (style.external_id && op.has_correlation) w.Key("external id"), w.Int(op.correlation);
    if (op.has_launch_config) {
      for (const auto& [key, dims] : {std::pair{"grid", &op.grid}, std::pair{"block", &op.block}}) {
        w.Key(key);
        w.BeginArray();
        for (auto d : *dims) w.Int(d);
        w.EndArray();
      }
    }
  }

  std::vector<Op> ops_;
  size_t flows_ = 0;
};

// CUDA API calls placed (pid, tid) in order but not yet formatted, as GPU ops are.
class ApiCallBatch {
 public:
  static constexpr size_t kEvents = 1 << 15;
  struct Call {
    const std::string* name;  // serialized (the writer's caches: they outlive the batch)
    std::string_view cat;     // static text
    int pid;
    int64_t tid, start, end, correlation;
    bool has_correlation;
  };
  using Style = CorrelationArgs;
  void Add(const Call& c) { calls_.push_back(c); }
  size_t size() const { return calls_.size(); }
  void Clear() { calls_.clear(); }
  template <class Writer>
  void WriteTo(Writer& writer, const Style& style) {
    WriteInBlocks(writer, calls_.size(), static_cast<int64_t>(calls_.size()), 200,
                  [&](JsonWriter& w, const auto& separate, size_t i) {
                    const Call& c = calls_[i];
                    separate();
                    w.BeginObject();
                    WriteX(
                        w, [&](JsonWriter& jw) { jw.RawString(*c.name); }, c.cat, c.pid, c.tid, c.start, c.end,
                        c.has_correlation,
                        [&](JsonWriter& jw) {
                          jw.Key(style.key), jw.Int(c.correlation);
                          if (style.external_id) jw.Key("external id"), jw.Int(c.correlation);
                        });
                    w.EndObject();
                  });
    Clear();
  }

 private:
  std::vector<Call> calls_;
};

// NVTX ranges placed (pid, tid, times) in order but not yet formatted.
class NvtxBatch {
 public:
  static constexpr size_t kEvents = 1 << 15;
  struct Style {};
  // The range's name is "domain:text".
  void Add(std::string_view domain, std::string_view text, std::string_view cat, int pid, int64_t tid, int64_t start,
           int64_t end, bool open, bool push_pop, int64_t thread, std::optional<int64_t> ended_on) {
    events_.push_back({cat, pid, tid, start, end, thread, ended_on.value_or(0), names_.size(),
                       domain.size() + 1 + text.size(), open, push_pop, ended_on.has_value()});
    names_.append(domain);
    names_ += ':';
    names_.append(text);
  }
  size_t size() const { return events_.size(); }
  void Clear() {
    events_.clear();
    names_.clear();
  }
  // Formats the batch (WriteX) and appends it to `writer`; empties it.
  template <class Writer>
  void WriteTo(Writer& writer, const Style&) {
    WriteInBlocks(
        writer, events_.size(), static_cast<int64_t>(events_.size()),
        160 + names_.size() / std::max<size_t>(1, events_.size()), [&](JsonWriter& w, const auto& separate, size_t i) {
          const Event& e = events_[i];
          separate();
          w.BeginObject();
          const std::string_view name(names_.data() + e.name_begin, e.name_size);
          WriteX(
              w, [&](JsonWriter& jw) { jw.String(name); }, e.cat, e.pid, e.tid, e.start, e.end, e.open || !e.push_pop,
              [&](JsonWriter& jw) {
                NvtxArgs(jw, e.open, e.push_pop, e.thread,
                         e.has_ended_on ? std::optional<int64_t>(e.ended_on) : std::nullopt);
              });
          w.EndObject();
        });
    Clear();
  }

 private:
  struct Event {
    std::string_view cat;  // static text
    int pid;
    int64_t tid, start, end, thread, ended_on;
    size_t name_begin, name_size;
    bool open, push_pop, has_ended_on;
  };
  std::vector<Event> events_;
  std::string names_;
};

// Formatted blocks of events waiting to be appended to the trace, in order (BatchWriter's
// stand-in for the ChromeTraceWriter while it formats ahead of the appending).
struct FormattedBlocks {
  int64_t base_events = 0;                              // the trace's events before the BatchWriter began
  int64_t staged_events = 0;                            // formatted by it so far, appended or not
  std::vector<std::pair<std::string, int64_t>> blocks;  // text, events counted with it
  size_t threads = 1;                                   // the trace's (ChromeTraceWriter::format_threads)
  size_t format_threads() const { return threads; }
  int64_t events() const { return base_events + staged_events; }
  void AppendRaw(std::string&& text, int64_t count) {
    staged_events += count;
    blocks.emplace_back(std::move(text), count);
  }
  void Clear() { blocks.clear(); }
};

// Formats batches of events on a thread of its own, in order, while the caller reads and places
// the next (two batches at most waiting), and appends them to the trace on a third (two
// formatted batches at most waiting): placing, formatting and writing overlap. Nothing else
// writes to the trace while it runs.
template <class Batch>
class BatchWriter {
 public:
  BatchWriter(ChromeTraceWriter& writer, typename Batch::Style style, const char* what, const ExecContext& exec)
      : writer_(writer),
        style_(style),
        what_(what),
        exec_(exec),
        appender_(2,
                  [this](FormattedBlocks& blocks) {
                    for (auto& [text, count] : blocks.blocks) writer_.AppendRaw(text, count);
                    blocks.Clear();  // it goes back to the formatter as a spare: without its megabytes of text
                    return true;
                  }),
        formatter_(2, [this, base = writer.events()](Batch& batch) {
          blocks_.Clear();
          blocks_.threads = writer_.format_threads();
          blocks_.base_events = base;
          blocks_.staged_events = staged_;
          batch.WriteTo(blocks_, style_);
          staged_ = blocks_.staged_events;
          return appender_.Put(blocks_);  // false: the appending failed
        }) {}
  // Hands `batch` over and puts an empty one in its place.
  void Put(Batch& batch) {
    if (!formatter_.Put(batch)) batch.Clear();  // the writer failed: Finish says how
  }
  // Waits until every batch is written; rethrows what formatting or writing threw.
  void Finish() {
    formatter_.Finish();
    appender_.Finish();
    if (exec_.timing) {
      exec_.Timing(
          fmt::format("cpprof: timing: export: {}: placing waited {:.3f} s for formatting, formatting {:.3f} s "
                      "for placing; formatting waited {:.3f} s for appending, appending {:.3f} s for formatting",
                      what_, formatter_.producer_waited_s(), formatter_.consumer_waited_s(),
                      appender_.producer_waited_s(), appender_.consumer_waited_s()));
    }
  }

 private:
  ChromeTraceWriter& writer_;
  const typename Batch::Style style_;
  const char* what_;
  const ExecContext exec_;
  FormattedBlocks blocks_;  // the formatter's: handed to the appender batch by batch
  int64_t staged_ = 0;      // events formatted so far
  BatchThread<FormattedBlocks> appender_;
  BatchThread<Batch> formatter_;  // declared last: stopped first, before the appender it feeds
};

// A batch of placed events and, where there are cores, the BatchWriter that formats it ahead.
template <class Batch>
class BatchedEvents {
 public:
  Batch& batch() { return batch_; }
  // Starts formatting ahead on threads of its own when `ahead` and there are cores to (else
  // batches are formatted in place, on all cores).
  void Start(ChromeTraceWriter& writer, typename Batch::Style style, const char* what, const ExecContext& exec,
             bool ahead) {
    style_ = style;
    if (ahead && exec.HasSpareThreads() && !writer_) {
      writer_ = std::make_unique<BatchWriter<Batch>>(writer, style, what, exec);
    }
  }
  // A full batch to its writer thread, or written here.
  void Put(ChromeTraceWriter& writer) {
    if (writer_) {
      writer_->Put(batch_);
    } else {
      batch_.WriteTo(writer, style_);
    }
  }
  void PutIfFull(ChromeTraceWriter& writer) {
    if (batch_.size() >= Batch::kEvents) Put(writer);
  }
  // Writes what is left and waits until every batch is written.
  void Finish(ChromeTraceWriter& writer) {
    Put(writer);
    if (writer_) {
      std::unique_ptr<BatchWriter<Batch>> w = std::move(writer_);
      w->Finish();
    }
  }

 private:
  Batch batch_;
  typename Batch::Style style_{};
  std::unique_ptr<BatchWriter<Batch>> writer_;
};

}  // namespace cpprof::render::trace
