// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "doctor/nvidia_smi.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace cpprof::doctor {
namespace {

using testing::DataPath;
using testing::ReadFile;

TEST(NvidiaSmi, ParsesTheH200GpuList) {
  auto gpus = ParseGpuQuery(ReadFile(DataPath("fakes/h200/nvidia-smi--query-gpu.csv")));
  ASSERT_TRUE(gpus.ok()) << gpus.status().message();
  ASSERT_EQ(gpus->size(), 2u);
  const GpuInfo& g = (*gpus)[1];
  EXPECT_EQ(g.index, 1);
  EXPECT_EQ(g.name, "NVIDIA H200");
  EXPECT_EQ(g.compute_cap, "9.0");
  EXPECT_EQ(g.cc_major, 9);
  EXPECT_EQ(g.cc_minor, 0);
  EXPECT_EQ(g.memory_used_mib, 0);
  EXPECT_EQ(g.memory_total_mib, 143771);
  EXPECT_EQ(g.uuid, "GPU-26e21756-a270-ea43-e67c-dea18b24e041");
}

TEST(NvidiaSmi, GpuListColumnsAreFoundByName) {
  auto gpus = ParseGpuQuery("name, index, compute_cap\nNVIDIA B200, 3, 10.0\n");
  ASSERT_TRUE(gpus.ok());
  EXPECT_EQ((*gpus)[0].index, 3);
  EXPECT_EQ((*gpus)[0].cc_major, 10);
  auto old = ParseGpuQuery("index, name\n0, Tesla\n");
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.status().message().find("no 'compute_cap' column"), std::string::npos);
}

TEST(NvidiaSmi, IdleProcessListIsEmpty) {
  auto apps = ParseComputeApps(ReadFile(DataPath("fakes/h200/nvidia-smi--query-compute-apps.csv")));
  ASSERT_TRUE(apps.ok());
  EXPECT_TRUE(apps->empty());
}

TEST(NvidiaSmi, BusyProcessList) {
  auto apps = ParseComputeApps(
      "pid, used_gpu_memory [MiB], gpu_uuid\n"
      "4242, 1024 MiB, GPU-26e21756-a270-ea43-e67c-dea18b24e041\n"
      "77, [N/A], GPU-d34eeb6b-cacc-f3ea-8d71-20372e1854c8\n");
  ASSERT_TRUE(apps.ok());
  ASSERT_EQ(apps->size(), 2u);
  EXPECT_EQ((*apps)[0].pid, 4242);
  EXPECT_EQ((*apps)[0].used_memory_mib, 1024);
  EXPECT_EQ((*apps)[0].gpu_uuid, "GPU-26e21756-a270-ea43-e67c-dea18b24e041");
  EXPECT_EQ((*apps)[1].used_memory_mib, -1);
}

TEST(NvidiaSmi, TopologyOfTheH200PairIsNvlink) {
  auto topo = ParseTopology(ReadFile(DataPath("fakes/h200/nvidia-smi-topo-m.txt")));
  ASSERT_TRUE(topo.ok()) << topo.status().message();
  EXPECT_EQ(topo->devices, (std::vector<std::string>{"GPU0", "GPU1"}));
  ASSERT_EQ(topo->links.size(), 1u);
  const TopoLink& l = topo->links[0];
  EXPECT_EQ(l.a, "GPU0");
  EXPECT_EQ(l.b, "GPU1");
  EXPECT_EQ(l.code, "NV18");
  EXPECT_EQ(l.kind, TopoLink::Kind::kNvlink);
  EXPECT_EQ(l.nvlinks, 18);
}

TEST(NvidiaSmi, PcieTopologyWithNics) {
  // The layout of the real H200 output, with a PCIe-only 4-GPU box and a NIC column.
  std::string text =
      "\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
      "GPU0\t X \tPIX\tNODE\tSYS\tPXB\t0-15\t0\t\tN/A\n"
      "GPU1\tPIX\t X \tPHB\tSYS\tPXB\t0-15\t0\t\tN/A\n"
      "GPU2\tNODE\tPHB\t X \tSYS\tSYS\t0-15\t0\t\tN/A\n"
      "GPU3\tSYS\tSYS\tSYS\t X \tSYS\t16-31\t1\t\tN/A\n"
      "NIC0\tPXB\tPXB\tSYS\tSYS\t X \t\t\t\t\n"
      "\nLegend:\n\n  X    = Self\n";
  auto topo = ParseTopology(text);
  ASSERT_TRUE(topo.ok()) << topo.status().message();
  ASSERT_EQ(topo->links.size(), 6u);  // GPU pairs only
  EXPECT_EQ(topo->links[0].code, "PIX");
  EXPECT_EQ(topo->links[1].code, "NODE");
  EXPECT_EQ(topo->links[2].code, "SYS");
  EXPECT_EQ(topo->links[3].code, "PHB");
  for (const auto& l : topo->links) EXPECT_EQ(l.kind, TopoLink::Kind::kPcie) << l.a << l.b;
  EXPECT_EQ(ClassifyLink("PXB").meaning, "PCIe, multiple PCIe bridges (not the host bridge)");
  EXPECT_EQ(ClassifyLink("NV4").nvlinks, 4);
  EXPECT_EQ(ClassifyLink("SOC").kind, TopoLink::Kind::kOther);
}

TEST(NvidiaSmi, TopologyWithoutMatrixIsAnError) {
  auto topo = ParseTopology("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n");
  ASSERT_FALSE(topo.ok());
  EXPECT_EQ(topo.status().message(), "nvidia-smi topo -m printed no device matrix");
}

}  // namespace
}  // namespace cpprof::doctor
