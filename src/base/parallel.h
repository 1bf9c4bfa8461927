// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// ParallelFor: independent work items (one per rank) on the machine's cores.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace cpprof {

// fn(i) for every i in [0, n), on up to `threads` threads (the command's budget,
// ExecContext::threads; 1 runs everything on the calling thread). Items must be independent;
// results go to per-item slots, so the output does not depend on the thread count. An exception
// thrown by fn (std::bad_alloc, say) stops the remaining items and is rethrown on the caller's
// thread, where the CLI's handler turns it into an error line (never std::terminate).
template <typename Fn>
void ParallelFor(size_t threads, size_t n, Fn&& fn) {
  threads = std::min(n, threads);
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mu;
  auto work = [&] {
    try {
      for (size_t i = next++; i < n; i = next++) fn(i);
    } catch (...) {
      next = n;
      std::lock_guard<std::mutex> lock(error_mu);
      if (!error) error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace cpprof
