// ParallelFor: independent work items (one per rank) on the machine's cores.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <thread>
#include <vector>

namespace cpprof {

// Threads for ParallelFor: CPPROF_THREADS when set (1 runs everything on the calling thread),
// else the hardware's concurrency.
inline size_t WorkerThreads() {
  if (const char* env = std::getenv("CPPROF_THREADS")) {
    long n = std::strtol(env, nullptr, 10);
    if (n >= 1) return static_cast<size_t>(n);
  }
  return std::max<size_t>(1, std::thread::hardware_concurrency());
}

// fn(i) for every i in [0, n), on up to WorkerThreads() threads. Items must be independent;
// results go to per-item slots, so the output does not depend on the thread count.
template <typename Fn>
void ParallelFor(size_t n, Fn&& fn) {
  size_t threads = std::min(n, WorkerThreads());
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) fn(i);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

}  // namespace cpprof
