// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "nsys/gpu_work_loader.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <vector>

#include "analysis/classify.h"
#include "test_support.h"

namespace cpprof::nsys {
namespace {

struct Loaded {
  model::GpuWork work;
  int taggers = 0;
};

Loaded Load(const std::string& path, size_t threads, int64_t min_rows) {
  auto db = Database::Open(path);
  EXPECT_TRUE(db.ok());
  auto schema = ProbeExport(*db);
  EXPECT_TRUE(schema.ok());
  Loaded out;
  std::atomic<int> made{0};
  // A tag that depends on the launch, so that a mixed-up tagger would show in the ops.
  LaunchTaggerFactory factory = [&] {
    ++made;
    return [](int64_t, int64_t corr) { return model::OpTag{0, static_cast<uint16_t>(corr % 7), 0}; };
  };
  auto work = LoadGpuWork(*db, *schema, analysis::ClassifyKernel, factory, threads, min_rows);
  EXPECT_TRUE(work.ok()) << work.status().message();
  if (work.ok()) out.work = std::move(*work);
  out.taggers = made;
  return out;
}

std::vector<std::tuple<int64_t, uint32_t, int, int, int>> Ops(const model::ProcessGpuWork& p) {
  std::vector<std::tuple<int64_t, uint32_t, int, int, int>> ops;
  for (size_t c = 0; c < p.ops.num_chunks(); ++c) {
    for (const auto& op : p.ops.chunk(c))
      ops.emplace_back(op.start, op.duration, static_cast<int>(op.cls), op.phase, op.node);
  }
  return ops;
}

TEST(LoadGpuWork, ReadingInRowidRangesOnThreadsGivesTheSameWork) {
  for (const auto& name : {"cpfold-trunk-2x2", "cpwork-train"}) {
    SCOPED_TRACE(name);
    std::string path = testing::RealExport(name);
    Loaded one = Load(path, 1, kMinKernelRowsPerThread);
    Loaded three = Load(path, 3, 100);  // small ranges: three threads even on a small export
    EXPECT_EQ(one.taggers, 2);          // kernels, then memory ops
    EXPECT_EQ(three.taggers, 4);        // one per reading thread, then memory ops
    ASSERT_EQ(one.work.processes.size(), three.work.processes.size());
    for (size_t i = 0; i < one.work.processes.size(); ++i) {
      const auto& a = one.work.processes[i];
      const auto& b = three.work.processes[i];
      EXPECT_EQ(a.global_pid, b.global_pid);
      EXPECT_EQ(a.ops.size(), b.ops.size());
      EXPECT_EQ(Ops(a), Ops(b));  // in table order, tags included
      EXPECT_EQ(a.ops_per_device, b.ops_per_device);
      ASSERT_EQ(a.kernels.size(), b.kernels.size());
      for (const auto& [id, t] : a.kernels) {
        ASSERT_TRUE(b.kernels.count(id));
        EXPECT_EQ(t.total_ns, b.kernels.at(id).total_ns);
        EXPECT_EQ(t.instances, b.kernels.at(id).instances);
      }
      EXPECT_EQ(a.invalid_ops, b.invalid_ops);
    }
    EXPECT_EQ(one.work.names.kernel_names, three.work.names.kernel_names);
    EXPECT_GT(one.work.processes.at(0).ops.size(), 300u);
  }
}

}  // namespace
}  // namespace cpprof::nsys
