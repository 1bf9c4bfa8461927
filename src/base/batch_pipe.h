// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Batches handed from one producer thread to one consumer, at most `ahead` of them waiting (bounded
// memory whatever the input's size); the batches the consumer is done with go back to the
// producer for reuse. The owner starts and joins the producer's thread; the pipe carries the
// batches, the end and the producer's exception.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace cpprof {

template <class Batch>
class BatchPipe {
 public:
  explicit BatchPipe(size_t ahead) : ahead_(ahead) {}

  // Producer: hands `batch` over (waiting while `ahead` batches wait) and puts a batch to fill
  // next in its place (one the consumer gave back, or a new one). False when the consumer left.
  bool Put(Batch& batch) {
    std::unique_lock<std::mutex> lock(mu_);
    Wait(
        lock, [&] { return stop_ || ready_.size() < ahead_; }, producer_waited_);
    if (stop_) return false;
    ready_.push_back(std::move(batch));
    if (spare_.empty()) {
      batch = Batch{};
    } else {
      batch = std::move(spare_.front());
      spare_.pop_front();
    }
    lock.unlock();
    cv_.notify_all();
    return true;
  }
  // Producer: no more batches; `error` (if any) is rethrown to the consumer by Take.
  void Finish(std::exception_ptr error = nullptr) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
      error_ = error;
    }
    cv_.notify_all();
  }

  // Consumer: the next batch into `current` (the one it held goes back for reuse). False at the
  // end, or once Stop was called; rethrows the producer's exception at the end.
  bool Take(Batch& current) {
    std::unique_lock<std::mutex> lock(mu_);
    Wait(
        lock, [&] { return !ready_.empty() || done_ || stop_; }, consumer_waited_);
    if (stop_) return false;
    if (ready_.empty()) {
      if (error_) std::rethrow_exception(error_);
      return false;
    }
    spare_.push_back(std::move(current));
    current = std::move(ready_.front());
    ready_.pop_front();
    lock.unlock();
    cv_.notify_all();
    return true;
  }
  // Seconds the producer waited for room (the consumer was the slower) and the consumer waited
  // for a batch (the producer was): which side of a pipeline holds it up (CPPROF_TIMING).
  double producer_waited_s() const { return Seconds(producer_waited_); }
  double consumer_waited_s() const { return Seconds(consumer_waited_); }

  // Consumer (or its owner, for a consumer that is itself a stage of a pipeline): leaving early;
  // the producer's next Put and the consumer's next Take return false.
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
  }

 private:
  template <class Ready>
  void Wait(std::unique_lock<std::mutex>& lock, Ready&& ready, std::chrono::steady_clock::duration& waited) {
    if (ready()) return;
    const auto start = std::chrono::steady_clock::now();
    cv_.wait(lock, ready);
    waited += std::chrono::steady_clock::now() - start;
  }
  double Seconds(const std::chrono::steady_clock::duration& d) const {
    std::lock_guard<std::mutex> lock(mu_);
    return std::chrono::duration<double>(d).count();
  }

  const size_t ahead_;
  std::chrono::steady_clock::duration producer_waited_{}, consumer_waited_{};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Batch> ready_, spare_;
  bool done_ = false, stop_ = false;
  std::exception_ptr error_;
};

// A consumer on a thread of its own: consume(batch) runs on each batch handed over by Put, in
// order, with at most `ahead` batches waiting. consume returns false to refuse the rest (Put
// then returns false); an exception it throws does the same and is rethrown by Finish.
template <class Batch>
class BatchThread {
 public:
  BatchThread(size_t ahead, std::function<bool(Batch&)> consume)
      : pipe_(ahead), consume_(std::move(consume)), thread_([this] { Run(); }) {}
  ~BatchThread() { Join(); }
  BatchThread(const BatchThread&) = delete;
  BatchThread& operator=(const BatchThread&) = delete;

  // Hands `batch` over and puts a batch to fill next in its place; false (the batch left as it
  // is) once the consumer refused or failed.
  bool Put(Batch& batch) { return pipe_.Put(batch); }
  // Waits until every batch handed over is consumed; rethrows what consume threw.
  void Finish() {
    Join();
    if (error_) std::rethrow_exception(error_);
  }
  double producer_waited_s() const { return pipe_.producer_waited_s(); }
  double consumer_waited_s() const { return pipe_.consumer_waited_s(); }

 private:
  void Run() {
    Batch batch;
    try {
      while (pipe_.Take(batch)) {
        if (!consume_(batch)) break;
      }
    } catch (...) {
      error_ = std::current_exception();
    }
    pipe_.Stop();  // a Put after the end (refused, failed) returns false
  }
  void Join() {
    pipe_.Finish();
    if (thread_.joinable()) thread_.join();
  }

  BatchPipe<Batch> pipe_;
  std::function<bool(Batch&)> consume_;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace cpprof
