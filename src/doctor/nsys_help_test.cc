// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "doctor/nsys_help.h"

#include <gtest/gtest.h>

#include "doctor/nsys_version.h"
#include "test_support.h"

namespace cpprof::doctor {
namespace {

using testing::DataPath;
using testing::ReadFile;

TEST(NsysHelp, PytorchTokensOf2025_3) {
  ProfileHelp h = ParseProfileHelp(ReadFile(DataPath("fakes/h200/nsys-profile--help.txt")));
  EXPECT_EQ(h.pytorch_tokens,
            (std::vector<std::string>{"autograd-nvtx", "autograd-shapes-nvtx", "functions-trace", "none"}));
  for (const char* o : {"trace", "pytorch", "python-functions-trace", "cudabacktrace", "python-backtrace",
                        "cuda-memory-usage", "sample", "cpuctxsw", "osrt-file-access", "output"}) {
    EXPECT_TRUE(h.HasOption(o)) << o;
  }
  EXPECT_FALSE(h.HasOption("functions-trace-shapes"));
  EXPECT_EQ(h.pytorch_json,
            "/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/PythonFunctionsTrace/pytorch.json");
  EXPECT_TRUE(h.functions_trace_needs_nvtx);
}

TEST(NsysHelp, PossibleValuesStopAtTheSentenceEnd) {
  std::string help = ReadFile(DataPath("fakes/h200/nsys-profile--help.txt"));
  auto sample = PossibleValues(help, "sample");
  EXPECT_EQ(sample, (std::vector<std::string>{"process-tree", "system-wide", "none"}));
  auto trace = PossibleValues(help, "trace");
  ASSERT_FALSE(trace.empty());
  EXPECT_EQ(trace.front(), "cuda");
  EXPECT_EQ(trace.back(), "none");
}

TEST(NsysHelp, StatusEOfTheH200) {
  StatusEnvironment s = ParseStatusE(ReadFile(DataPath("fakes/h200/nsys-status-e.txt")));
  ASSERT_TRUE(s.paranoid.has_value());
  EXPECT_EQ(*s.paranoid, 2);
  ASSERT_TRUE(s.process_tree_sampling.has_value());
  EXPECT_TRUE(*s.process_tree_sampling);
  EXPECT_TRUE(*s.system_wide_sampling);
  EXPECT_EQ(s.process_tree_text, "OK");
}

TEST(NsysVersion, ParsesReleaseLines) {
  auto v = ParseNsysVersion("NVIDIA Nsight Systems version 2025.3.1.0\n");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->ToString(), "2025.3.1.0");
  auto old = ParseNsysVersion("NVIDIA Nsight Systems version 2022.4.2.1-df9881f");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->ToString(), "2022.4.2.1");
  EXPECT_LT(*old, *v);
  EXPECT_FALSE(ParseNsysVersion("command not found"));
}

TEST(NsysVersion, ArchitectureTable) {
  auto hopper = ArchForComputeCap(9, 0);
  ASSERT_TRUE(hopper);
  EXPECT_STREQ(hopper->arch, "Hopper");
  EXPECT_EQ(hopper->minimum.ShortString(), "2022.4");
  for (int major : {10, 12}) {
    auto bw = ArchForComputeCap(major, 0);
    ASSERT_TRUE(bw);
    EXPECT_STREQ(bw->arch, "Blackwell");
    EXPECT_EQ(bw->minimum.ShortString(), "2024.5");
    EXPECT_LT(*ParseNsysVersion("2022.4.2"), bw->minimum);  // a stale 2022.x does not know Blackwell
  }
  auto ampere = ArchForComputeCap(8, 7);  // not in the table: the nearest lower entry, marked inexact
  ASSERT_TRUE(ampere);
  EXPECT_STREQ(ampere->sm, "sm_86");
  EXPECT_FALSE(ampere->exact);
  EXPECT_FALSE(ArchForComputeCap(13, 0));
  EXPECT_FALSE(ArchForComputeCap(5, 2));
}

}  // namespace
}  // namespace cpprof::doctor
