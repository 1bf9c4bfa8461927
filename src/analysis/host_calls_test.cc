// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/host_calls.h"

#include <gtest/gtest.h>

namespace cpprof::analysis {
namespace {

TEST(HostCalls, SyncNamesAsNsysWritesThem) {
  for (const char* name :
       {"cudaStreamSynchronize_v3020", "cudaDeviceSynchronize_v3020", "cudaEventSynchronize_v3020", "cudaMemcpy_v3020",
        "cudaMemcpy2D_v3020", "cuStreamSynchronize", "cuCtxSynchronize", "cuMemcpyDtoH_v2", "cudaThreadSynchronize"}) {
    EXPECT_TRUE(IsHostSync(name)) << name;
  }
  for (const char* name : {"cudaMemcpyAsync_v3020", "cuMemcpyDtoHAsync_v2", "cudaStreamWaitEvent_v3020",
                           "cudaLaunchKernel_v7000", "cudaEventRecord_v3020", "cudaStreamSynchronize_vX", ""}) {
    EXPECT_FALSE(IsHostSync(name)) << name;
  }
}

TEST(HostCalls, EachCallsStartAndThreadByCorrelationPerProcess) {
  HostCalls calls;
  const int64_t p1 = 100 << 24, p2 = 200 << 24;
  calls.Add(p1, p1 + 7, 5, 1'000, 1'010, false);
  calls.Add(p1, p1 + 9, 3, 900, 905, false);             // another thread, an earlier id
  calls.Add(p1, p1 + 7, 6, 2'000, 5'000, true);          // a sync
  calls.Add(p2, p2 + 1, 5, 7'000, 7'100, false);         // the same id in another process
  calls.Add(p1, p1 + 7, int64_t{1} << 40, 1, 2, false);  // a wide id: not kept
  calls.Finish();
  EXPECT_EQ(calls.size(), 4u);
  HostCalls::Reader r(calls);
  const model::HostLaunch a = r.Find(p1, 5), b = r.Find(p1, 3), c = r.Find(p2, 5);
  EXPECT_EQ(a.start, 1'000);
  EXPECT_EQ(b.start, 900);
  EXPECT_NE(a.thread, b.thread);
  EXPECT_EQ(c.start, 7'000);
  EXPECT_EQ(r.Find(p1, 4).start, model::kNoLaunch);
  EXPECT_EQ(r.Find(p1, 6).start, 2'000);
  EXPECT_EQ(r.Find(p1 + 1, 5).start, model::kNoLaunch);
  ASSERT_EQ(calls.Syncs(p1).size(), 1u);
  EXPECT_EQ(calls.Syncs(p1)[0].end, 5'000);
  EXPECT_EQ(calls.Syncs(p1)[0].thread, a.thread);
  EXPECT_TRUE(calls.Syncs(p2).empty());
}

}  // namespace
}  // namespace cpprof::analysis
