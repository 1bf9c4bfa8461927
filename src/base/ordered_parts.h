// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// A job cut into parts (a table's rowid ranges) that several threads fill at once, each with
// parts k, k + readers, k + 2 readers, ..., and that one consumer takes in order, batch by batch:
// the reading runs on several cores and the rows still come in table order. Each reader keeps
// at most `ahead` batches waiting (a part's batches, for the readers to stay busy), so memory
// stays bounded whatever the size.
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "base/batch_pipe.h"

namespace cpprof {

template <class Batch>
class OrderedParts {
 public:
  // Hands a batch over (an empty one, Batch::Clear(), is put in its place to fill next); false
  // when the consumer left: the fill returns then. A Batch has Clear() and empty().
  using Put = std::function<bool(Batch&)>;
  // Fills part `part` on reader `reader`'s thread, calling put for each batch; what it leaves in
  // `last` (empty at first; possibly nothing) is handed over after it returns, ending the part.
  // It may throw: Take rethrows.
  using Fill = std::function<void(size_t part, size_t reader, Batch& last, const Put& put)>;
  // Called on the consumer's thread when part `part` has ended (its batches all taken, and
  // everything the fill did for it visible): false stops the reading (a part that failed).
  using PartDone = std::function<bool(size_t part)>;

  OrderedParts(size_t parts, size_t readers, size_t ahead, Fill fill, PartDone done)
      : parts_(parts), fill_(std::move(fill)), done_(std::move(done)) {
    readers = std::max<size_t>(1, std::min(readers, parts));
    for (size_t k = 0; k < readers; ++k) readers_.push_back(std::make_unique<Reader>(ahead));
    for (size_t k = 0; k < readers; ++k) readers_[k]->thread = std::thread([this, k] { Read(k); });
  }
  ~OrderedParts() { Stop(); }
  OrderedParts(const OrderedParts&) = delete;
  OrderedParts& operator=(const OrderedParts&) = delete;

  // The next batch in order into `batch` (the one it held goes back for reuse); false at the end,
  // when stopped or when PartDone said stop. Rethrows what a fill threw.
  bool Take(Batch& batch) {
    while (next_part_ < parts_) {
      Reader& reader = *readers_[next_part_ % readers_.size()];
      if (!reader.pipe.Take(current_)) return false;  // stopped
      std::swap(batch, current_.batch);
      if (!current_.ends_part) return true;
      if (!done_(next_part_++)) {
        Cancel();
        return false;
      }
      if (!batch.empty()) return true;
    }
    return false;
  }
  // Tells every reader to stop (their next hand-over fails) and Take to return false; from any
  // thread. The owner's Stop() waits for them.
  void Cancel() {
    for (auto& r : readers_) r->pipe.Stop();
  }
  // Cancel, then wait for the readers: on the thread that owns this (at the end, or early).
  void Stop() {
    Cancel();
    for (auto& r : readers_) {
      if (r->thread.joinable()) r->thread.join();
    }
  }
  size_t readers() const { return readers_.size(); }
  // Seconds the readers waited for room and the consumer waited for a batch (CPPROF_TIMING).
  double readers_waited_s() const {
    double s = 0;
    for (auto& r : readers_) s += r->pipe.producer_waited_s();
    return s;
  }
  double consumer_waited_s() const {
    double s = 0;
    for (auto& r : readers_) s += r->pipe.consumer_waited_s();
    return s;
  }

 private:
  struct Item {
    Batch batch;
    bool ends_part = false;
  };
  struct Reader {
    explicit Reader(size_t ahead) : pipe(ahead) {}
    BatchPipe<Item> pipe;
    std::thread thread;
  };
  void Read(size_t k) {
    Reader& reader = *readers_[k];
    try {
      Item item;
      const Put put = [&](Batch& batch) {
        std::swap(item.batch, batch);
        item.ends_part = false;
        if (!reader.pipe.Put(item)) return false;
        std::swap(item.batch, batch);  // a batch to fill next (a spare one, or a new one)
        batch.Clear();
        return true;
      };
      for (size_t part = k; part < parts_; part += readers_.size()) {
        Batch last;
        std::swap(last, item.batch);
        last.Clear();
        fill_(part, k, last, put);
        std::swap(item.batch, last);
        item.ends_part = true;
        if (!reader.pipe.Put(item)) return;
      }
      reader.pipe.Finish();
    } catch (...) {
      reader.pipe.Finish(std::current_exception());
    }
  }

  const size_t parts_;
  Fill fill_;
  PartDone done_;
  std::vector<std::unique_ptr<Reader>> readers_;
  size_t next_part_ = 0;
  Item current_;
};

}  // namespace cpprof
