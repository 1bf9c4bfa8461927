// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/capture_diagnostics.h"

#include <gtest/gtest.h>

#include <iostream>

#include "nsys/capture_reader.h"
#include "nsys/nvtx_facts.h"
#include "test_support.h"

namespace cpprof::analysis {
namespace {

using model::Diagnostic;
using testing::DataPath;
using testing::MakeDatabase;
using testing::ReadFile;
using testing::RealExport;

struct Read {
  model::CaptureInfo capture;
  model::NvtxFacts facts;
};

Read ReadExport(const std::string& path) {
  auto db = nsys::Database::Open(path);
  EXPECT_TRUE(db.ok()) << db.status().message();
  auto c = nsys::ReadCaptureInfo(*db);
  auto f = nsys::ReadNvtxFacts(*db);
  EXPECT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(f.ok()) << f.status().message();
  return {*c, *f};
}

std::vector<Diagnostic> Diagnose(const std::string& path) {
  Read r = ReadExport(path);
  return DiagnoseCapture(r.capture, r.facts);
}

std::vector<std::string> Ids(const std::vector<Diagnostic>& ds) {
  std::vector<std::string> ids;
  for (const auto& d : ds) ids.push_back(d.id);
  return ids;
}

const Diagnostic* Find(const std::vector<Diagnostic>& ds, const std::string& id) {
  for (const auto& d : ds) {
    if (d.id == id) return &d;
  }
  return nullptr;
}

std::string Dump(const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const auto& d : ds) {
    out += std::string(model::SeverityName(d.severity)) + " [" + d.id + "] " + d.title + "\n  " + d.detail + "\n";
    if (!d.fix.empty()) out += "  fix: " + d.fix + "\n";
  }
  return out;
}

using testing::SqlFixture;

TEST(EntryModule, FindsTheMinusMModule) {
  model::CaptureInfo c;
  c.command = "torchrun";
  c.arguments = {"--standalone", "--nproc_per_node=2", "-m", "pkg.mod", "--iters", "3"};
  EXPECT_EQ(EntryModule(c), "pkg.mod");
  c.command = "python";
  c.arguments = {"-mpkg.other", "-m", "x"};
  EXPECT_EQ(EntryModule(c), "pkg.other");
  c.arguments = {"train.py", "--model", "big"};
  EXPECT_EQ(EntryModule(c), "");
  c.arguments = {"--module=pkg.z"};
  EXPECT_EQ(EntryModule(c), "pkg.z");
  c.arguments = {"-m"};
  EXPECT_EQ(EntryModule(c), "");
}

TEST(CaptureDiagnostics, FixtureByHand) {
  Read r = ReadExport(SqlFixture("capture_memory"));
  // Facts first: what the fixture recorded.
  EXPECT_TRUE(r.facts.has_nvtx);
  ASSERT_NE(r.facts.Domain("d"), nullptr);
  EXPECT_EQ(r.facts.Domain("d")->ranges, 0);
  EXPECT_EQ(r.facts.Domain("e")->ranges, 2);
  EXPECT_EQ(r.facts.Domain("e")->open_ranges, 1);
  EXPECT_EQ(r.facts.Domain("")->ranges, 2);
  EXPECT_EQ(r.facts.Domain("")->marks, 1);
  EXPECT_EQ(r.facts.Domain("")->cross_thread_ranges, 1);
  EXPECT_EQ(r.facts.named_ranges, std::vector<std::string>{"e:pkg.mod.A.forward"});
  EXPECT_EQ(r.facts.autograd_op_ranges, 0);
  EXPECT_EQ(r.facts.cuda_graph_launches, 2);
  EXPECT_EQ(r.facts.cpu_samples, -1);
  EXPECT_EQ(r.facts.cuda_backtraces, -1);

  auto ds = DiagnoseCapture(r.capture, r.facts);
  EXPECT_EQ(Ids(ds),
            (std::vector<std::string>{"nsys-message", "functions-trace-domain-empty", "pytorch-autograd-no-ops",
                                      "nvtx-open-ranges", "cpu-sampling-inert", "cuda-backtraces-inert",
                                      "functions-trace-functions-missing", "nvtx-cross-thread-ranges", "cuda-graphs",
                                      "osrt-backtraces-none", "nsys-message", "nsys-message"}))
      << Dump(ds);
  EXPECT_EQ(ds[0].severity, Diagnostic::Severity::kError);
  EXPECT_NE(ds[0].title.find("Failed to load .../libfoo.so"), std::string::npos) << ds[0].title;
  EXPECT_NE(ds[0].detail.find("2 times"), std::string::npos);
  const Diagnostic* empty = Find(ds, "functions-trace-domain-empty");
  EXPECT_EQ(empty->title, "functions-trace domain 'd' recorded no ranges");
  EXPECT_NE(empty->detail.find("launched with `-m pkg.entry`"), std::string::npos) << empty->detail;
  EXPECT_NE(empty->detail.find("nsys created the domain"), std::string::npos) << empty->detail;
  const Diagnostic* missing = Find(ds, "functions-trace-functions-missing");
  EXPECT_EQ(missing->title, "2 of 3 functions listed in domain 'e' recorded no range");
  EXPECT_NE(missing->detail.find("pkg.mod.B.forward, pkg.mod.helper"), std::string::npos) << missing->detail;
  EXPECT_NE(Find(ds, "cuda-graphs")->fix.find("--cuda-graph-trace node"), std::string::npos);
  // The launcher's "No NVTX events collected" is an info when others recorded ranges.
  const Diagnostic& launcher = ds[ds.size() - 2];
  EXPECT_EQ(launcher.severity, Diagnostic::Severity::kInfo);
  EXPECT_EQ(launcher.title, "nsys warning: No NVTX events collected. Does the process use NVTX?");
  EXPECT_NE(launcher.detail.find("launcher process"), std::string::npos) << launcher.detail;
  EXPECT_EQ(ds.back().title, "nsys info: CPU sampling is disabled because perf_event_paranoid is 4.");
  for (const auto& d : ds) {
    EXPECT_EQ((d.title + d.detail + d.fix).find("/home/u"), std::string::npos) << "no host paths: " << d.title;
  }
}

TEST(CaptureDiagnostics, DomainEmptyWithoutMinusMListsLikelyCauses) {
  model::CaptureInfo c;
  c.recorded = true;
  c.cpu_sampling = true;
  c.command = "python";
  c.arguments = {"train.py"};
  c.functions_trace = {{"dom", "pkg.layers", {"Trunk.forward", "Head.forward"}}};
  model::NvtxFacts f;
  f.cpu_samples = 10;
  auto ds = DiagnoseCapture(c, f);
  ASSERT_EQ(ds.size(), 1u) << Dump(ds);
  EXPECT_EQ(ds[0].id, "functions-trace-domain-empty");
  EXPECT_EQ(ds[0].severity, Diagnostic::Severity::kWarning);
  EXPECT_NE(ds[0].detail.find("never appeared"), std::string::npos);
  EXPECT_NE(ds[0].detail.find("Likely causes"), std::string::npos);
  EXPECT_EQ(ds[0].detail.find("__main__"), std::string::npos);
  EXPECT_NE(ds[0].detail.find("pkg.layers.Trunk.forward, pkg.layers.Head.forward"), std::string::npos);
}

TEST(CaptureDiagnostics, ManyMissingFunctionsAreCounted) {
  model::CaptureInfo c;
  model::FunctionsTraceEntry e{"dom", "pkg", {}};
  for (int i = 0; i < 15; ++i) e.functions.push_back("f" + std::to_string(i));
  c.functions_trace = {e, {"PyTorch", "torch.nn.functional", {"relu", "gelu"}}};
  model::NvtxFacts f;
  f.has_nvtx = true;
  f.domains = {{"PyTorch", 1, 0, 0, 0}, {"dom", 1, 0, 0, 0}};
  f.named_ranges = {"PyTorch:torch.nn.functional.relu", "dom:pkg.f3"};
  auto ds = DiagnoseCapture(c, f);
  ASSERT_EQ(ds.size(), 1u) << Dump(ds);  // torch's own list is not checked function by function
  EXPECT_EQ(ds[0].title, "14 of 15 functions listed in domain 'dom' recorded no range");
  EXPECT_NE(ds[0].detail.find("and 4 more"), std::string::npos) << ds[0].detail;
  EXPECT_EQ(ds[0].detail.find("pkg.f3,"), std::string::npos);
}

TEST(CaptureDiagnostics, AutogradOnlyWhenRequestedAndEmpty) {
  model::CaptureInfo c;
  model::NvtxFacts f;
  f.domains = {{"", 3, 0, 0, 0}};
  EXPECT_TRUE(DiagnoseCapture(c, f).empty()) << "no evidence that --pytorch was given: nothing said";
  c.pytorch_autograd = true;
  auto ds = DiagnoseCapture(c, f);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].id, "pytorch-autograd-no-ops");
  EXPECT_NE(ds[0].detail.find("torch.no_grad()"), std::string::npos);
  EXPECT_NE(ds[0].detail.find("3 other ranges"), std::string::npos);
  f.autograd_op_ranges = 5;
  EXPECT_TRUE(DiagnoseCapture(c, f).empty());
}

TEST(CaptureDiagnostics, SamplingAndBacktraces) {
  model::CaptureInfo c;
  c.recorded = true;
  model::NvtxFacts f;
  auto ds = DiagnoseCapture(c, f);
  EXPECT_EQ(Ids(ds), std::vector<std::string>{"cpu-sampling-off"});
  c.cpu_sampling = true;
  c.sampling_mode = "ProcessTree";
  f.cpu_samples = 0;
  c.python_backtraces = true;
  c.cuda_backtrace_kinds = {"kernel"};
  f.cuda_backtraces = 12;
  ds = DiagnoseCapture(c, f);
  EXPECT_EQ(Ids(ds), (std::vector<std::string>{"cpu-sampling-inert", "python-backtraces-inert"}));
  f.cpu_samples = 100;
  f.python_backtrace_marks = 3;
  EXPECT_TRUE(DiagnoseCapture(c, f).empty());
}

TEST(CaptureDiagnosticsReal, InlineMainIsTheMinusMCase) {
  auto ds = Diagnose(RealExport("inline-main"));
  std::cout << "inline-main:\n" << Dump(ds);
  const Diagnostic* d = Find(ds, "functions-trace-domain-empty");
  ASSERT_NE(d, nullptr) << Dump(ds);
  EXPECT_EQ(d->title, "functions-trace domain 'inline' recorded no ranges");
  EXPECT_NE(d->detail.find("launched with `-m cpwork.inline_main`"), std::string::npos) << d->detail;
  EXPECT_NE(d->detail.find("cpwork.inline_main.InlineBlock.forward"), std::string::npos) << d->detail;
  EXPECT_EQ(d->severity, Diagnostic::Severity::kWarning);
}

TEST(CaptureDiagnosticsReal, CpworkFull) {
  Read r = ReadExport(RealExport("cpwork-full"));
  auto ds = DiagnoseCapture(r.capture, r.facts);
  std::cout << "cpwork-full:\n" << Dump(ds);
  EXPECT_EQ(Find(ds, "functions-trace-domain-empty"), nullptr) << Dump(ds);
  EXPECT_EQ(Find(ds, "pytorch-autograd-no-ops"), nullptr);
  EXPECT_GT(r.facts.autograd_op_ranges, 0);
  EXPECT_GT(r.facts.autograd_shape_ranges, 0);  // made with autograd-shapes-nvtx
  EXPECT_GT(r.facts.python_backtrace_marks, 0);
  EXPECT_GT(r.facts.cuda_backtraces, 0);
  EXPECT_GT(r.facts.cpu_samples, 0);
  ASSERT_NE(Find(ds, "nvtx-cross-thread-ranges"), nullptr);  // cpwork's "cross-thread" start/end range
  EXPECT_EQ(r.facts.Domain("")->cross_thread_ranges, 2);
  EXPECT_EQ(Find(ds, "cpu-sampling-inert"), nullptr);
  EXPECT_EQ(Find(ds, "cuda-backtraces-inert"), nullptr);
  EXPECT_EQ(Find(ds, "python-backtraces-inert"), nullptr);
}

TEST(CaptureDiagnosticsReal, RecordingDomainsGiveNoEmptyDomain) {
  for (const char* name : {"cpfold-e2e-1x2", "cpfold-trunk-2x2", "cpwork-train"}) {
    Read r = ReadExport(RealExport(name));
    auto ds = DiagnoseCapture(r.capture, r.facts);
    EXPECT_EQ(Find(ds, "functions-trace-domain-empty"), nullptr) << name << "\n" << Dump(ds);
    EXPECT_EQ(Find(ds, "functions-trace-not-loaded"), nullptr) << name;
    EXPECT_FALSE(r.facts.named_ranges.empty()) << name;
  }
  Read t = ReadExport(RealExport("cpwork-train"));
  EXPECT_TRUE(t.capture.pytorch_autograd);
  EXPECT_GT(t.facts.autograd_op_ranges, 0);
  EXPECT_EQ(t.facts.cuda_graph_launches, 0);
}

TEST(CaptureDiagnosticsReal, EveryExportHasDeterministicDiagnostics) {
  for (const auto& name : testing::RealExportNames()) {
    std::string path = RealExport(name);
    auto a = Diagnose(path), b = Diagnose(path);
    EXPECT_EQ(Dump(a), Dump(b)) << name;
    for (const auto& d : a) {
      EXPECT_FALSE(d.title.empty()) << name;
      EXPECT_EQ((d.title + d.detail + d.fix).find("/tmp/"), std::string::npos) << name << ": " << d.title;
    }
  }
}

}  // namespace
}  // namespace cpprof::analysis
