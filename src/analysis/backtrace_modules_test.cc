// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/backtrace_modules.h"

#include <gtest/gtest.h>

#include <map>

#include "model/global_id.h"

namespace cpprof::analysis {
namespace {

constexpr std::string_view kModel = R"(import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()

    @torch.no_grad()
    def forward(self, x):
        y = self.norm(x)

        # a comment at column 0 does not end the def
        return self.out(y)

    async def fetch(self):
        def helper():
            return 1
        return helper()


def run(model, x):
    return model(x)


class Wrapped(torch.nn.Module):
    def forward(
        self,
        x,
    ) -> torch.Tensor:
        return x
)";

TEST(FindEnclosingDef, MethodsFunctionsAndNestedDefs) {
  EXPECT_EQ(FindEnclosingDef(kModel, 10).function, "forward");
  EXPECT_EQ(FindEnclosingDef(kModel, 10).cls, "Block");
  EXPECT_EQ(FindEnclosingDef(kModel, 13).cls, "Block");        // after a blank line and a comment at column 0
  EXPECT_EQ(FindEnclosingDef(kModel, 9).function, "forward");  // the def line itself
  EXPECT_EQ(FindEnclosingDef(kModel, 19).function, "fetch");   // async def
  EXPECT_EQ(FindEnclosingDef(kModel, 19).cls, "Block");
  const EnclosingDef nested = FindEnclosingDef(kModel, 17);
  EXPECT_EQ(nested.function, "helper");
  EXPECT_EQ(nested.cls, "");  // a function inside a method is no method
  const EnclosingDef free = FindEnclosingDef(kModel, 23);
  EXPECT_EQ(free.function, "run");
  EXPECT_EQ(free.cls, "");
  EXPECT_EQ(FindEnclosingDef(kModel, 1).function, "");    // module level
  EXPECT_EQ(FindEnclosingDef(kModel, 999).function, "");  // past the end
  EXPECT_EQ(FindEnclosingDef(kModel, 0).function, "");
  // A signature wrapped over lines as black writes it: its closing line, at the def's indent, is
  // no statement (seen on boltz-cp's TriangleAttention.forward).
  const EnclosingDef wrapped = FindEnclosingDef(kModel, 30);
  EXPECT_EQ(wrapped.function, "forward");
  EXPECT_EQ(wrapped.cls, "Wrapped");
}

TEST(IsLibraryFile, SitePackagesStdlibAndFrozen) {
  EXPECT_TRUE(IsLibraryFile("/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py"));
  EXPECT_TRUE(IsLibraryFile("/usr/lib/python3/dist-packages/numpy/core.py"));
  EXPECT_TRUE(IsLibraryFile("/usr/lib/python3.11/runpy.py"));
  EXPECT_TRUE(IsLibraryFile("<frozen runpy>"));
  EXPECT_FALSE(IsLibraryFile("/work/main/python/cpfold/model/msa.py"));
  EXPECT_FALSE(IsLibraryFile("/home/u/lib/pythonic/model.py"));
}

// Backtraces built by hand: strings, then per launch its frames innermost first.
struct Fake {
  model::PythonBacktraces bt;
  uint32_t S(const std::string& s) {
    for (uint32_t i = 0; i < bt.strings.size(); ++i) {
      if (bt.strings[i] == s) return i;
    }
    bt.strings.push_back(s);
    return static_cast<uint32_t>(bt.strings.size() - 1);
  }
  // frames: {function, file, line}, innermost first.
  void Launch(int64_t t, std::vector<std::tuple<std::string, std::string, int>> frames, int64_t tid = 7) {
    model::PythonBacktrace m{t, tid, static_cast<uint32_t>(bt.frames.size()), 0};
    for (auto& [f, file, line] : frames) bt.frames.push_back({S(f), S(file), line});
    m.count = static_cast<uint32_t>(frames.size());
    bt.marks.push_back(m);
  }
};

constexpr const char* kTorch = "/v/lib/python3.12/site-packages/torch/nn/modules/module.py";

// A launch from Block.forward (line `line` of model.py), called by run().
std::vector<std::tuple<std::string, std::string, int>> FromBlock(int line) {
  return {{"forward", "/src/model.py", line},
          {"_call_impl", kTorch, 1790},
          {"run", "/src/model.py", 23},
          {"<module>", "/src/main.py", 3}};
}

SourceReader ModelSource() {
  return [](const std::string& path) -> std::optional<SourceText> {
    if (path == "/src/model.py") return SourceText{path, std::string(kModel)};
    return std::nullopt;
  };
}

TEST(BuildBacktraceModules, CallsOfAMethodFromItsBacktraces) {
  Fake f;
  f.Launch(1'000'000, FromBlock(10));
  f.Launch(1'100'000, FromBlock(13));
  f.Launch(2'000'000, FromBlock(10));  // the line went back: a second call
  f.Launch(2'100'000, FromBlock(13));
  BacktraceModuleInput in;
  in.backtraces = &f.bt;
  in.read_source = ModelSource();
  const BacktraceModules m = BuildBacktraceModules(in, DefaultModuleConfig());
  ASSERT_EQ(m.names, std::vector<std::string>{"Python backtrace:Block.forward"});
  ASSERT_EQ(m.ranges.size(), 2u);
  // The first call holds the launches up to 20 us before the second's first backtrace.
  EXPECT_EQ(m.ranges[0].start, 1'000'000 - 20'000);
  EXPECT_EQ(m.ranges[0].end, 2'000'000 - 20'000 - 2);
  EXPECT_EQ(m.ranges[1].start, 2'000'000 - 20'000);
  EXPECT_EQ(m.ranges[1].end, 2'100'000 + 1 + kMaxModuleDepth);
  EXPECT_TRUE(m.ranges[0].module);
  EXPECT_EQ(m.summary.used, 4);
  EXPECT_EQ(m.summary.ranges, 2);
  EXPECT_EQ(m.summary.files_read, 1);
  EXPECT_TRUE(m.summary.files_missing.empty());  // main.py's frame is <module>: never looked up
}

TEST(BuildBacktraceModules, IterationStartsAndNvtxModulesCutCalls) {
  Fake f;
  f.Launch(1'000'000, FromBlock(10));
  f.Launch(2'000'000, FromBlock(13));  // an iteration starts between: a second call
  f.Launch(3'000'000, FromBlock(13));  // inside an NVTX module range: left to it
  std::vector<KeptRange> kept{{2'900'000, 3'100'000, 7, 0, true}};
  BacktraceModuleInput in;
  in.backtraces = &f.bt;
  in.kept = &kept;
  in.iteration_starts = {{model::GlobalPidOf(7), 1'500'000}};
  in.read_source = ModelSource();
  const BacktraceModules m = BuildBacktraceModules(in, DefaultModuleConfig());
  ASSERT_EQ(m.ranges.size(), 2u);
  EXPECT_EQ(m.ranges[0].end, 1'000'000 + 1 + kMaxModuleDepth);  // not past the iteration's start
  EXPECT_EQ(m.ranges[1].start, 2'000'000 - 20'000);
  EXPECT_LT(m.ranges[1].end, 3'000'000);
  EXPECT_EQ(m.summary.in_nvtx_modules, 1);
  EXPECT_EQ(m.summary.used, 2);
}

TEST(BuildBacktraceModules, NestedCallsAndTheirParents) {
  Fake f;
  auto nested = [](int inner_line) {
    return std::vector<std::tuple<std::string, std::string, int>>{
        {"fetch", "/src/model.py", 19}, {"forward", "/src/model.py", inner_line}, {"_call_impl", kTorch, 1790}};
  };
  f.Launch(1'000'000, nested(10));
  f.Launch(1'000'040, nested(10));  // 40 ns later: the parent still ends after the child
  BacktraceModuleInput in;
  in.backtraces = &f.bt;
  in.read_source = ModelSource();
  const BacktraceModules m = BuildBacktraceModules(in, DefaultModuleConfig());
  ASSERT_EQ(m.ranges.size(), 2u);
  ASSERT_EQ(m.names.size(), 2u);
  const KeptRange& child = m.names[m.ranges[0].name] == "Python backtrace:Block.fetch" ? m.ranges[0] : m.ranges[1];
  const KeptRange& parent = &child == &m.ranges[0] ? m.ranges[1] : m.ranges[0];
  EXPECT_EQ(m.names[parent.name], "Python backtrace:Block.forward");
  EXPECT_EQ(child.start, parent.start);
  EXPECT_GT(parent.end, child.end);  // longer, so ModuleAttribution nests them this way round
}

TEST(BuildBacktraceModules, WithoutTheSourceOnlyModuleCallsAreNamedByFile) {
  Fake f;
  f.Launch(1'000'000, FromBlock(10));
  BacktraceModuleInput in;
  in.backtraces = &f.bt;
  const BacktraceModules m = BuildBacktraceModules(in, DefaultModuleConfig());
  // forward was called by torch's _call_impl: a module call; run() was not: left out.
  EXPECT_EQ(m.names, std::vector<std::string>{"Python backtrace:model.py:forward"});
  EXPECT_EQ(m.summary.files_read, 0);
  EXPECT_EQ(m.summary.files_missing, std::vector<std::string>{"/src/model.py"});
}

TEST(BuildBacktraceModules, AFrameTheSourceContradictsIsCounted) {
  Fake f;
  f.Launch(1'000'000, {{"forward", "/src/model.py", 23}, {"_call_impl", kTorch, 1790}});  // line 23 is in run()
  BacktraceModuleInput in;
  in.backtraces = &f.bt;
  in.read_source = ModelSource();
  const BacktraceModules m = BuildBacktraceModules(in, DefaultModuleConfig());
  EXPECT_EQ(m.summary.frames_not_matching, 1);
  EXPECT_EQ(m.names, std::vector<std::string>{"Python backtrace:model.py:forward"});
}

}  // namespace
}  // namespace cpprof::analysis
