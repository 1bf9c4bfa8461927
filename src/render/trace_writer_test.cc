// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Where each format places the events of a hand-built run (no export, no SQLite): tracks, pids,
// tids, categories, argument names and the metadata that names them.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "render/chrome_trace_format.h"
#include "render/kineto_format.h"

namespace cpprof::render {
namespace {

using nlohmann::json;

constexpr int64_t kTid = 0x2A;                       // OS thread 42
constexpr int64_t kGpid = (int64_t{7} << 24);        // process 7
constexpr int64_t kGtid = kGpid | kTid;              // its thread 42
constexpr int64_t kOtherGtid = kGpid | 0x2B;         // its thread 43
constexpr int64_t kSecondGpid = (int64_t{9} << 24);  // process 9 (rank 1)

std::vector<model::TraceProcess> TwoRanks() { return {{0, 7, 7, 0, "python", kGpid}, {1, 9, 9, 1, "", kSecondGpid}}; }

model::TraceHeader Header(std::vector<model::TraceProcess> procs) {
  model::TraceHeader h;
  h.nsys_version = "2025.3.2";
  h.export_schema = "3.20.3";
  h.rank_method = "test";
  h.time = "ns";
  h.world_size = 2;
  h.processes = std::move(procs);
  return h;
}

model::TraceGpuOp Kernel(const model::TraceProcess& p, int stream, int64_t start, int64_t end, model::OpClass cls,
                         std::string_view name, int64_t id) {
  model::TraceGpuOp op;
  op.process = &p;
  op.name_id = id;
  op.name = name;
  op.cls = cls;
  op.global_pid = p.global_pid;
  op.device = p.device;
  op.stream = stream;
  op.start = start, op.end = end;
  op.has_correlation = true;
  op.correlation = start;
  return op;
}

model::TraceNvtxRange Range(const model::TraceProcess& p, std::string_view text, int64_t start, int64_t end,
                            bool push_pop) {
  model::TraceNvtxRange r;
  r.process = &p;
  r.domain = "";
  r.text = text;
  r.global_tid = kGtid;
  r.start = start, r.end = end;
  r.push_pop = push_pop;
  return r;
}

// The events of a finished document; `meta` the metadata events alone.
std::vector<json> Events(const std::string& text, bool meta) {
  std::vector<json> out;
  const json doc = json::parse(text);  // kept alive while its events are walked
  for (const auto& e : doc["traceEvents"]) {
    if ((e["ph"] == "M") == meta) out.push_back(e);
  }
  return out;
}

// The name a metadata event gives (pid, tid).
std::string TrackName(const std::vector<json>& meta, int pid, int64_t tid) {
  for (const auto& e : meta) {
    if (e["name"] == "thread_name" && e["pid"] == pid && e.value("tid", int64_t{-1}) == tid) return e["args"]["name"];
  }
  return "";
}

int64_t SortIndex(const std::vector<json>& meta, int pid, int64_t tid) {
  for (const auto& e : meta) {
    if (e["name"] == "thread_sort_index" && e["pid"] == pid && e.value("tid", int64_t{-1}) == tid)
      return e["args"]["sort_index"];
  }
  return -1;
}

TEST(ChromeTraceFormat, GpuOpsGoOnAStreamTrackOfTheirRankComputeBeforeCommunication) {
  const auto procs = TwoRanks();
  std::ostringstream out;
  ChromeTraceFormat w(out, Header(procs));
  w.BeginExport(procs);
  w.GpuOp(Kernel(procs[0], 13, 100, 200, model::OpClass::kAllReduce, "ncclDevKernel_AllReduce", 1));
  w.GpuOp(Kernel(procs[0], 7, 300, 400, model::OpClass::kGemm, "sgemm", 2));
  w.GpuOp(Kernel(procs[1], 7, 300, 500, model::OpClass::kGemm, "sgemm", 2));
  w.EndGpuOps();
  w.EndExport({});
  w.Finish();
  const auto events = Events(out.str(), false), meta = Events(out.str(), true);
  ASSERT_EQ(events.size(), 3u);
  // Synthetic tids in the order the streams are met, unique over the trace.
  EXPECT_EQ(events[0]["pid"], 7);
  EXPECT_EQ(events[0]["tid"], kSyntheticTidBase);
  EXPECT_EQ(events[0]["cat"], "AllReduce");
  EXPECT_EQ(events[1]["tid"], kSyntheticTidBase + 1);
  EXPECT_EQ(events[2]["pid"], 9);
  EXPECT_EQ(events[2]["tid"], kSyntheticTidBase + 2);
  EXPECT_EQ(events[0]["args"]["correlationId"], 100);
  EXPECT_FALSE(events[0]["args"].contains("external id"));
  EXPECT_EQ(events[1]["ts"], 0.3);
  EXPECT_EQ(events[1]["dur"], 0.1);
  EXPECT_EQ(TrackName(meta, 7, kSyntheticTidBase), "stream 13 (comm)");
  EXPECT_EQ(TrackName(meta, 7, kSyntheticTidBase + 1), "stream 7");
  // The compute stream sorts first though it was met second.
  EXPECT_EQ(SortIndex(meta, 7, kSyntheticTidBase + 1), 0);
  EXPECT_EQ(SortIndex(meta, 7, kSyntheticTidBase), 1);
  EXPECT_EQ(meta[0]["name"], "process_name");
  EXPECT_EQ(meta[0]["args"]["name"], "rank 0 (pid 7, GPU 0) python");
}

TEST(ChromeTraceFormat, StartEndRangesThatDoNotNestGetLanesBelowTheirThread) {
  const auto procs = TwoRanks();
  std::ostringstream out;
  ChromeTraceFormat w(out, Header(procs));
  w.BeginExport(procs);
  w.NvtxRange(Range(procs[0], "a", 0, 10'000, false));
  w.NvtxRange(Range(procs[0], "b", 5'000, 15'000, false));   // overlaps a without nesting: a lane of its own
  w.NvtxRange(Range(procs[0], "c", 6'000, 8'000, false));    // nests in a: a's lane
  w.NvtxRange(Range(procs[0], "push", 1'000, 2'000, true));  // push/pop: the thread's own track
  w.EndNvtx();
  w.EndExport({{kGtid, "main"}});
  w.Finish();
  const auto events = Events(out.str(), false), meta = Events(out.str(), true);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0]["name"], ":a");
  EXPECT_EQ(events[0]["tid"], kSyntheticTidBase);
  EXPECT_EQ(events[1]["tid"], kSyntheticTidBase + 1);
  EXPECT_EQ(events[2]["tid"], kSyntheticTidBase);
  EXPECT_EQ(events[3]["tid"], kTid);
  EXPECT_EQ(events[0]["cat"], "nvtx start/end");
  EXPECT_EQ(events[0]["args"]["thread"], kTid);
  EXPECT_EQ(events[3]["cat"], "nvtx");
  EXPECT_FALSE(events[3].contains("args"));
  EXPECT_EQ(TrackName(meta, 7, kTid), "main");
  EXPECT_EQ(TrackName(meta, 7, kSyntheticTidBase), "main NVTX start/end");
  EXPECT_EQ(TrackName(meta, 7, kSyntheticTidBase + 1), "main NVTX start/end 2");
  EXPECT_EQ(SortIndex(meta, 7, kTid), 0);
  EXPECT_EQ(SortIndex(meta, 7, kSyntheticTidBase + 1), 2);
}

TEST(ChromeTraceFormat, FlowsLinkALaunchToTheFirstOpOfIt) {
  const auto procs = TwoRanks();
  std::ostringstream out;
  ChromeTraceFormat w(out, Header(procs));
  w.BeginExport(procs);
  model::TraceApiCall call;
  call.process = &procs[0];
  call.name_id = 5;
  call.name = "cudaLaunchKernel_v7000";
  call.global_tid = kOtherGtid;
  call.start = 50, call.end = 60;
  call.has_correlation = true;
  call.correlation = 100;
  w.ApiCall(call);
  w.EndApiCalls();
  model::TraceGpuOp op = Kernel(procs[0], 7, 100, 200, model::OpClass::kGemm, "sgemm", 2);
  op.flow_end = true;
  op.flow_id = 100;
  w.GpuOp(op);
  w.EndGpuOps();
  w.FlowStart({100, 7, 0x2B, 50});
  w.EndExport({});
  w.Finish();
  const auto events = Events(out.str(), false);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0]["name"], "cudaLaunchKernel_v7000");
  EXPECT_EQ(events[0]["cat"], "cuda_api");
  EXPECT_EQ(events[0]["tid"], 0x2B);
  EXPECT_EQ(events[2]["ph"], "f");
  EXPECT_EQ(events[2]["pid"], 7);
  EXPECT_EQ(events[2]["tid"], events[1]["tid"]);  // on the op's stream track
  EXPECT_EQ(events[3]["ph"], "s");
  EXPECT_EQ(events[3]["id"], events[2]["id"]);
  EXPECT_EQ(events[3]["tid"], 0x2B);
}

TEST(ChromeTraceFormat, TimesBeforeTheCaptureAreClampedWithTheRawValueKept) {
  const auto procs = TwoRanks();
  std::ostringstream out;
  ChromeTraceFormat w(out, Header(procs));
  w.BeginExport(procs);
  w.GpuOp(Kernel(procs[0], 7, -500, 1'500, model::OpClass::kGemm, "sgemm", 2));
  w.GpuOp(Kernel(procs[0], 7, 3'000, 2'000, model::OpClass::kGemm, "sgemm", 2));
  w.EndGpuOps();
  w.EndExport({});
  w.Finish();
  const auto events = Events(out.str(), false);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["ts"], 0);
  EXPECT_EQ(events[0]["dur"], 1.5);
  EXPECT_EQ(events[0]["args"]["clamped_start_ns"], -500);
  EXPECT_EQ(events[1]["dur"], 0);
  EXPECT_EQ(events[1]["args"]["end_before_start_ns"], 2'000);
}

TEST(KinetoFormat, GpuOpsGoOnTheDeviceAndStreamWithKinetosNames) {
  const std::vector<model::TraceProcess> procs = {TwoRanks()[1]};
  std::ostringstream out;
  KinetoFormat w(out, Header(procs));
  w.BeginExport(procs);
  model::TraceApiCall call;
  call.process = &procs[0];
  call.name_id = 5;
  call.name = "cudaLaunchKernel_v7000";
  call.global_tid = kSecondGpid | kTid;
  call.start = 50, call.end = 60;
  call.has_correlation = true;
  call.correlation = 100;
  w.ApiCall(call);
  w.EndApiCalls();
  w.GpuOp(Kernel(procs[0], 13, 100, 200, model::OpClass::kGemm, "sgemm", 2));
  model::TraceGpuOp copy = Kernel(procs[0], 14, 300, 400, model::OpClass::kMemcpy, "[CUDA memcpy Host-to-Device]", 1);
  copy.memop = true;
  copy.bytes = 4096;
  w.GpuOp(copy);
  model::TraceGpuOp set = Kernel(procs[0], 14, 500, 600, model::OpClass::kMemset, "[CUDA memset]", -1);
  set.memop = true;
  w.GpuOp(set);
  w.EndGpuOps();
  w.EndExport({});
  w.Finish();
  const json doc = json::parse(out.str());
  EXPECT_EQ(doc["distributedInfo"]["rank"], 1);
  EXPECT_EQ(doc["distributedInfo"]["world_size"], 2);
  EXPECT_EQ(doc["deviceProperties"][0]["id"], 1);
  const auto events = Events(out.str(), false), meta = Events(out.str(), true);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0]["name"], "cudaLaunchKernel");
  EXPECT_EQ(events[0]["cat"], "cuda_runtime");
  EXPECT_EQ(events[0]["pid"], 9);
  EXPECT_EQ(events[0]["args"]["correlation"], 100);
  EXPECT_EQ(events[1]["cat"], "kernel");
  EXPECT_EQ(events[1]["pid"], 1);   // the device
  EXPECT_EQ(events[1]["tid"], 13);  // the stream
  EXPECT_EQ(events[1]["args"]["correlation"], 100);
  EXPECT_EQ(events[1]["args"]["external id"], 100);
  EXPECT_EQ(events[2]["cat"], "gpu_memcpy");
  EXPECT_EQ(events[2]["args"]["bytes"], 4096);
  EXPECT_EQ(events[3]["cat"], "gpu_memset");
  EXPECT_EQ(TrackName(meta, 1, 13), "stream 13");
  EXPECT_EQ(TrackName(meta, 1, 14), "stream 14");
  bool labelled = false;
  for (const auto& e : meta) labelled |= e["name"] == "process_labels" && e["args"]["labels"] == "rank 1";
  EXPECT_TRUE(labelled);
}

TEST(KinetoFormat, AStepIsAProfilerStepOnItsMarkersThread) {
  const std::vector<model::TraceProcess> procs = {TwoRanks()[0]};
  std::ostringstream out;
  KinetoFormat w(out, Header(procs));
  EXPECT_TRUE(w.DrawsSteps());
  w.BeginExport(procs);
  w.NvtxRange(Range(procs[0], "cpfold:iter12", 1'000, 9'000, true));
  w.EndNvtx();
  w.EndExport({});
  w.Step({&procs[0], kTid, 1'000, 9'000, 3});  // the run's fourth iteration, whatever its name says
  w.Finish();
  const auto events = Events(out.str(), false);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["name"], ":cpfold:iter12");
  EXPECT_EQ(events[1]["name"], "ProfilerStep#3");
  EXPECT_EQ(events[1]["cat"], "user_annotation");
  EXPECT_EQ(events[1]["pid"], 7);
  EXPECT_EQ(events[1]["tid"], kTid);
  EXPECT_EQ(events[1]["ts"], 1);
  EXPECT_EQ(events[1]["dur"], 8);
}

// What HTA 0.5 needs beyond the fields: the rank spaced for its regex, one runtime event per
// correlation (a backtrace row folded into its call, kept when alone), memory ops named as Kineto
// names them with their bandwidth, whole microseconds, and a module range on its GPU stream.
TEST(KinetoFormat, FoldsBacktraceRowsNamesMemoryOpsAndDrawsModulesOnTheirStreams) {
  const std::vector<model::TraceProcess> procs = {TwoRanks()[1]};
  std::ostringstream out;
  KinetoFormat w(out, Header(procs));
  w.BeginExport(procs);
  auto call = [&](int64_t start, int64_t end, int64_t corr, bool backtrace) {
    model::TraceApiCall c;
    c.process = &procs[0];
    c.name_id = 5;
    c.name = "cudaLaunchKernel_v7000";
    c.global_tid = kSecondGpid | kTid;
    c.start = start, c.end = end;
    c.has_correlation = true;
    c.correlation = corr;
    c.backtrace = backtrace;
    w.ApiCall(c);
  };
  call(1'000, 3'000, 100, true);   // the backtrace row of the call below
  call(1'200, 2'700, 100, false);  // its call
  call(4'000, 5'000, 101, true);   // a backtrace row alone: kept as the call
  w.EndApiCalls();
  w.GpuOp(Kernel(procs[0], 13, 10'400, 12'600, model::OpClass::kGemm, "sgemm", 2));  // correlation 10'400
  model::TraceGpuOp copy = Kernel(procs[0], 14, 20'000, 21'000, model::OpClass::kMemcpy, "[CUDA memcpy]", 1);
  copy.memop = true;
  copy.bytes = 4000;
  copy.src_kind_name = "Pageable", copy.dst_kind_name = "Device";
  w.GpuOp(copy);
  w.EndGpuOps();
  model::TraceNvtxRange module = Range(procs[0], "Block.forward", 900, 6'000, true);
  module.global_tid = kSecondGpid | kTid;
  module.module = true;
  w.NvtxRange(module);
  w.EndNvtx();
  w.EndExport({});
  w.Finish();
  EXPECT_NE(out.str().find("\"rank\": 1,\n"), std::string::npos) << "HTA's rank regex needs the space";
  const auto events = Events(out.str(), false);
  std::map<std::string, std::vector<json>> by_cat;
  for (const auto& e : events) by_cat[e["cat"]].push_back(e);
  ASSERT_EQ(by_cat["cuda_runtime"].size(), 2u);
  EXPECT_EQ(by_cat["cuda_runtime"][0]["ts"], 1.0);  // the call's own row, 1.2 us rounded
  EXPECT_EQ(by_cat["cuda_runtime"][0]["dur"], 2.0);
  EXPECT_EQ(by_cat["cuda_runtime"][1]["args"]["correlation"], 101);
  ASSERT_EQ(by_cat["gpu_memcpy"].size(), 1u);
  EXPECT_EQ(by_cat["gpu_memcpy"][0]["name"], "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(by_cat["gpu_memcpy"][0]["args"]["memory bandwidth (GB/s)"], 4.0);
  EXPECT_EQ(by_cat["kernel"][0]["ts"], 10.0);  // 10.4 us
  EXPECT_EQ(by_cat["kernel"][0]["dur"], 3.0);  // 12.6 us rounds to 13
  EXPECT_TRUE(by_cat["gpu_user_annotation"].empty()) << "the kernel's launch (10'400) is not in the range";
  EXPECT_EQ(KinetoFormat::WholeUs(1'499), 1'000);
  EXPECT_EQ(KinetoFormat::WholeUs(1'500), 2'000);
  EXPECT_EQ(KinetoFormat::WholeUs(-1'501), -2'000);
}

TEST(KinetoFormat, AModuleRangeCoversTheStreamsItsLaunchesRanOn) {
  const std::vector<model::TraceProcess> procs = {TwoRanks()[0]};
  std::ostringstream out;
  KinetoFormat w(out, Header(procs));
  w.BeginExport(procs);
  for (int64_t corr : {1'100, 1'200, 1'300}) {
    model::TraceApiCall c;
    c.process = &procs[0];
    c.name = "cudaLaunchKernel";
    c.global_tid = kGtid;
    c.start = corr, c.end = corr + 50;
    c.has_correlation = true;
    c.correlation = corr;
    w.ApiCall(c);
  }
  w.EndApiCalls();
  model::TraceGpuOp a = Kernel(procs[0], 7, 5'000, 6'000, model::OpClass::kGemm, "a", 1);
  a.correlation = 1'100;
  model::TraceGpuOp b = Kernel(procs[0], 7, 8'000, 9'000, model::OpClass::kGemm, "b", 2);
  b.correlation = 1'200;
  model::TraceGpuOp c = Kernel(procs[0], 9, 7'000, 7'500, model::OpClass::kGemm, "c", 3);
  c.correlation = 1'300;
  for (const auto& op : {a, b, c}) w.GpuOp(op);
  w.EndGpuOps();
  model::TraceNvtxRange outer = Range(procs[0], "Model.forward", 1'000, 1'400, true);
  outer.module = true;
  model::TraceNvtxRange inner = Range(procs[0], "Layer.forward", 1'150, 1'250, true);
  inner.module = true;
  w.NvtxRange(outer);
  w.NvtxRange(inner);
  w.EndNvtx();
  w.EndExport({});
  w.Finish();
  std::vector<json> gpu;
  for (const auto& e : Events(out.str(), false)) {
    if (e["cat"] == "gpu_user_annotation") gpu.push_back(e);
  }
  ASSERT_EQ(gpu.size(), 3u);
  EXPECT_EQ(gpu[0]["name"], ":Model.forward");
  EXPECT_EQ(gpu[0]["pid"], 0);  // the device
  EXPECT_EQ(gpu[0]["tid"], 7);  // the stream: first op's start to last op's end
  EXPECT_EQ(gpu[0]["ts"], 5.0);
  EXPECT_EQ(gpu[0]["dur"], 4.0);
  EXPECT_EQ(gpu[1]["tid"], 9);
  EXPECT_EQ(gpu[2]["name"], ":Layer.forward");  // only b was launched inside it
  EXPECT_EQ(gpu[2]["ts"], 8.0);
  EXPECT_EQ(gpu[2]["dur"], 1.0);
}

TEST(ChromeTraceFormat, DrawsNoSteps) {
  const auto procs = TwoRanks();
  std::ostringstream out;
  ChromeTraceFormat w(out, Header(procs));
  EXPECT_FALSE(w.DrawsSteps());
  w.BeginExport(procs);
  w.EndExport({});
  w.Step({&procs[0], kTid, 1'000, 9'000, 0});
  w.Finish();
  EXPECT_TRUE(Events(out.str(), false).empty());
}

// The critical path: a track on each rank it visits, its stretches named by kind, a flow at each
// hop between ranks within an iteration (none across iterations), cut at the window's edges; a
// second track where one iteration's path overlaps the previous one's on a rank.
TEST(ChromeTraceFormat, CriticalPathGetsATrackPerRankItVisitsAndAFlowPerHop) {
  const auto procs = TwoRanks();
  std::ostringstream out;
  ChromeTraceFormat w(out, Header(procs));
  w.BeginExport(procs);
  w.EndExport({});
  model::CpView cp;
  cp.ranks = {model::CpRankView{}, model::CpRankView{}};
  cp.ranks[1].rank = 1;
  cp.critical_path = {{0, 1'000, 3'000, "compute", "iter1"},  // the window starts at 2'000
                      {1, 3'000, 4'000, "transfer", "iter1"},
                      {1, 4'000, 6'000, "compute", "iter2"},  // a new iteration on the same rank: no hop
                      {0, 6'000, 9'000, "host gap", "iter2"},
                      {0, 7'000, 7'500, "compute", "iter3"}};  // iter3 starts while iter2 runs on rank 0
  w.CpView(cp, {{0, 7}, {1, 9}}, 2'000, 8'000);
  w.Finish();
  const auto events = Events(out.str(), false), meta = Events(out.str(), true);
  std::vector<json> slices, flows;
  for (const auto& e : events) (e["ph"] == "X" ? slices : flows).push_back(e);
  ASSERT_EQ(slices.size(), 5u);
  EXPECT_EQ(slices[0]["name"], "compute");
  EXPECT_EQ(slices[0]["cat"], "cp.critical_path");
  EXPECT_EQ(slices[0]["pid"], 7);
  EXPECT_EQ(slices[0]["ts"], 2.0) << "cut at the window's start";
  EXPECT_EQ(slices[0]["dur"], 1.0);
  EXPECT_EQ(slices[0]["args"]["iteration"], "iter1");
  EXPECT_EQ(slices[1]["pid"], 9);
  EXPECT_EQ(slices[3]["dur"], 2.0) << "cut at the window's end";
  EXPECT_EQ(TrackName(meta, 7, slices[0]["tid"]), "CP critical path");
  EXPECT_EQ(TrackName(meta, 9, slices[1]["tid"]), "CP critical path");
  EXPECT_EQ(slices[1]["tid"], slices[2]["tid"]) << "one track per rank";
  EXPECT_EQ(SortIndex(meta, 9, slices[1]["tid"]), -110) << "above the CP modules";
  ASSERT_EQ(flows.size(), 4u) << "two hops: rank 0 -> 1 in iter1, rank 1 -> 0 in iter2";
  EXPECT_EQ(flows[0]["ph"], "s");
  EXPECT_EQ(flows[0]["pid"], 7);
  EXPECT_EQ(flows[0]["ts"], 2.0);
  EXPECT_EQ(flows[1]["ph"], "f");
  EXPECT_EQ(flows[1]["pid"], 9);
  EXPECT_EQ(flows[1]["ts"], 3.0);
  EXPECT_EQ(flows[1]["bp"], "e");
  EXPECT_EQ(flows[0]["id"], flows[1]["id"]);
  EXPECT_NE(flows[0]["id"], flows[2]["id"]);
  EXPECT_EQ(flows[2]["pid"], 9);
  EXPECT_EQ(flows[2]["ts"], 4.0);
  EXPECT_EQ(flows[3]["pid"], 7);
  EXPECT_EQ(TrackName(meta, 7, slices[4]["tid"]), "CP critical path 2") << "an overlap gets a second track";
  EXPECT_EQ(w.cp_path_hops(), 2);
  EXPECT_EQ(w.cp_slices(), 5);
}

}  // namespace
}  // namespace cpprof::render
