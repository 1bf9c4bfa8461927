// The readout must not mislead: proven on a hand-made ring whose waiting, transfer and straggler
// are worked out by hand, and on real H200 exports with faults injected by a known amount
// (tests/data/real/README.md): rank 1 of a 1x2 cpfold ring made late by 2 ms before every ring
// shift (--inject-delay 1:2), or with slower GEMMs (--inject-slow 1:3), against the same run
// without injection.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "test_support.h"

namespace cpprof::testing {
namespace {

using nlohmann::json;
constexpr int64_t kUs = 1000;

json Report(const std::string& path, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"report", "--format", "json", path};
  args.insert(args.end(), extra.begin(), extra.end());
  CliResult r = RunCli(args);
  EXPECT_EQ(r.rc, 0) << r.err;
  return json::parse(r.out);
}

const json& Kind(const json& j, const std::string& kind) {
  for (const json& c : j["imbalance"]["collectives"]) {
    if (c["kind"] == kind) return c;
  }
  static const json none;
  ADD_FAILURE() << "no " << kind;
  return none;
}

TEST(ReadoutTruth, HandMadeRingByHand) {
  json j = Report(SqlFixture("ring_straggler"));
  const json& w = j["window"];
  EXPECT_EQ(w["kind"], "steady");
  EXPECT_EQ(w["start_ns"], 1000 * kUs);
  EXPECT_EQ(w["end_ns"], 3000 * kUs);
  EXPECT_EQ(w["left_out_ops"], 2) << "the warm-up shift on each rank";
  const json& r0 = j["per_rank"][0];
  const json& r1 = j["per_rank"][1];
  EXPECT_EQ(r0["span_ns"], 2000 * kUs);
  EXPECT_EQ(r0["wait_ns"], 600 * kUs);
  EXPECT_EQ(r0["transfer_ns"], 200 * kUs);
  EXPECT_EQ(r0["exposed_transfer_ns"], 180 * kUs);
  EXPECT_EQ(r0["compute_ns"], 220 * kUs);
  EXPECT_EQ(r0["exposed_wait_ns"], 600 * kUs);
  EXPECT_EQ(r0["idle_ns"], 1000 * kUs);
  EXPECT_EQ(r0["host_stall_ns"], 1000 * kUs);
  EXPECT_EQ(r1["wait_ns"], 0);
  EXPECT_EQ(r1["transfer_ns"], 200 * kUs);
  EXPECT_EQ(r1["unmatched_ns"], 50 * kUs);
  EXPECT_EQ(r1["exposed_transfer_ns"], 250 * kUs);
  EXPECT_EQ(r1["compute_ns"], 200 * kUs);
  EXPECT_EQ(r1["idle_ns"], 1550 * kUs);
  const json& im = j["imbalance"];
  EXPECT_EQ(im["straggler_rank"], 1);
  EXPECT_EQ(im["straggler_last_arrivals"], 2);
  EXPECT_EQ(im["straggler_caused_wait_ns"], 600 * kUs);
  EXPECT_EQ(im["busiest_rank"], 0) << "the victim is the busiest";
  const json& s = Kind(j, "SendRecv");
  EXPECT_EQ(s["instances"], 2);
  EXPECT_EQ(s["per_rank_count"], json::array({2, 3}));
  EXPECT_EQ(s["per_rank"][1]["unmatched_ops"], 1);
  // The text and md readouts lead with the window and the verdict, naming rank 1.
  CliResult text = RunCli({"report", "--wide", SqlFixture("ring_straggler")});
  EXPECT_NE(text.out.find("window: steady state, 2 of 3 iterations"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("The straggler is rank 1: it arrived last at 2 of 2 matched NCCL ops and kept the others "
                          "waiting 0.600 ms"),
            std::string::npos)
      << text.out;
  CliResult md = RunCli({"report", "--format", "md", SqlFixture("ring_straggler")});
  EXPECT_NE(md.out.find("**Verdict.**"), std::string::npos);
  EXPECT_LT(md.out.find("**Verdict.**"), md.out.find("### GPU time per rank")) << "the verdict comes first";
}

// The fixture over the whole capture: the warm-up shift counts too (and rank 1 waited there
// for no one: both arrive together).
TEST(ReadoutTruth, WindowAllAndOneIteration) {
  json all = Report(SqlFixture("ring_straggler"), {"--window", "all"});
  EXPECT_TRUE(all["window"]["whole_capture"]);
  EXPECT_EQ(Kind(all, "SendRecv")["instances"], 3);
  json it = Report(SqlFixture("ring_straggler"), {"--window", "iter:2"});
  EXPECT_EQ(it["per_rank"][0]["span_ns"], 1000 * kUs);
  EXPECT_EQ(it["per_rank"][0]["wait_ns"], 300 * kUs);
  CliResult bad = RunCli({"report", "--window", "iter:7", SqlFixture("ring_straggler")});
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("the export has 3 iterations"), std::string::npos) << bad.err;
}

// No iteration markers: the iterations are the repeats of the outermost module range (here the
// same ranges renamed to a module's forward), the first taken as warm-up; the numbers are those
// of the marked fixture.
TEST(ReadoutTruth, IterationsFromRepeatsOfTheOutermostModule) {
  std::string sql = ReadFile(DataPath("sql/_schema.sql")) + ReadFile(DataPath("sql/ring_straggler.sql"));
  for (const char* marker : {"ring:warmup0", "ring:iter1", "ring:iter2"}) {
    for (size_t at; (at = sql.find(marker)) != std::string::npos;)
      sql.replace(at, std::string(marker).size(), "Fold.forward");
  }
  json j = Report(MakeDatabase("ring_no_markers.sqlite", sql));
  const json& w = j["window"];
  EXPECT_EQ(w["method"], "repeats of the outermost module range ':Fold.forward' (no iteration ranges were found)");
  EXPECT_EQ(w["iterations"].size(), 3u);
  EXPECT_EQ(w["start_ns"], 1000 * kUs);
  EXPECT_EQ(w["end_ns"], 3000 * kUs);
  EXPECT_EQ(j["per_rank"][0]["wait_ns"], 600 * kUs);
  EXPECT_EQ(j["imbalance"]["straggler_rank"], 1);
}

// cpfold's own count of the delays rank 1 applied in the timed iterations, from the run's log.
json InjectLine(const std::string& name, int rank) {
  std::ifstream in(DataPath("real/" + name + "/" + name + ".log"));
  std::string line, prefix = "cpfold-inject: ";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    json j = json::parse(line.substr(prefix.size()));
    if (j["rank"] == rank) return j;
  }
  ADD_FAILURE() << "no cpfold-inject line for rank " << rank << " in " << name;
  return json::object();
}

int64_t SteadyIterationsNs(const json& j) {
  int64_t sum = 0;
  for (const json& t : j["window"]["iterations"]) {
    if (t["in_window"]) sum += int64_t(t["end_ns"]) - int64_t(t["start_ns"]);
  }
  return sum;
}

TEST(ReadoutTruth, InjectedDelayNamesTheLateRankAndItsCost) {
  json base = Report(RealExport("cpfold-ring-1x2"));
  json late = Report(RealExport("cpfold-ring-1x2-delay"));
  json inject = InjectLine("cpfold-ring-1x2-delay", 1);
  const double delay_ns = double(inject["delay_ms"]) * 1e6;
  const int64_t shifts = inject["delays_timed"];
  ASSERT_EQ(shifts, 108) << "36 ring shifts per iteration, 3 timed iterations";
  // The late rank is the straggler; it arrived last at every ring shift.
  EXPECT_EQ(late["imbalance"]["straggler_rank"], 1);
  const json& s_late = Kind(late, "SendRecv");
  const json& s_base = Kind(base, "SendRecv");
  EXPECT_EQ(s_late["instances"], shifts);
  EXPECT_EQ(s_late["per_rank"][1]["last_arrivals"], shifts);
  // Rank 0's waiting grows by the injected lateness. cpfold's delay is a device sync and a 2 ms
  // host sleep before each shift, so the lateness on the GPU is 2 ms plus the launch of the
  // shift that the sync stops from overlapping: at least delay x shifts, and equal (within 10%)
  // to the growth of the iterations' wall time, measured apart from any NCCL kernel.
  const int64_t grew = int64_t(s_late["per_rank"][0]["wait_ns"]) - int64_t(s_base["per_rank"][0]["wait_ns"]);
  const int64_t iter_grew = SteadyIterationsNs(late) - SteadyIterationsNs(base);
  EXPECT_GE(double(grew), 0.98 * delay_ns * double(shifts)) << grew;
  EXPECT_LE(double(grew), 1.25 * delay_ns * double(shifts)) << grew;
  EXPECT_NEAR(double(grew), double(iter_grew), 0.10 * double(iter_grew)) << grew << " vs " << iter_grew;
  // Waiting is not transfer: the transfer stays within 10% of the run without the delay.
  for (int r = 0; r < 2; ++r) {
    double t_base = s_base["per_rank"][r]["transfer_ns"], t_late = s_late["per_rank"][r]["transfer_ns"];
    EXPECT_NEAR(t_late, t_base, 0.10 * t_base) << "rank " << r;
  }
  // The verdict says so.
  std::string v = late["verdict"]["summary"];
  EXPECT_NE(v.find("The straggler is rank 1"), std::string::npos) << v;
  ASSERT_FALSE(late["verdict"]["opportunities"].empty());
  EXPECT_EQ(std::string(late["verdict"]["opportunities"][0]).rfind("Rank 1 on time saves", 0), 0u)
      << late["verdict"]["opportunities"][0];
  // Busy time is still busy time: rank 0 is the busiest, and the readout does not call it slow.
  EXPECT_EQ(late["imbalance"]["busiest_rank"], 0);
}

TEST(ReadoutTruth, InjectedSlowComputeNamesTheSlowRank) {
  json slow = Report(RealExport("cpfold-ring-1x2-slow"));
  json inject = InjectLine("cpfold-ring-1x2-slow", 1);
  EXPECT_GT(int64_t(inject["slow_extra_gemms_timed"]), 0);
  EXPECT_EQ(slow["imbalance"]["straggler_rank"], 1);
  EXPECT_EQ(Kind(slow, "SendRecv")["per_rank"][1]["last_arrivals"], Kind(slow, "SendRecv")["instances"]);
}

// The real 2x2 Cannon run: rank 3 is the rank the others wait for, though rank 1 (or 0) has the
// most GPU busy time; SendRecv counts differ per rank and still split into wait and transfer.
TEST(ReadoutTruth, Cannon2x2StragglerAndUnequalShiftCounts) {
  json j = Report(RealExport("cpfold-trunk-2x2"));
  EXPECT_EQ(j["imbalance"]["straggler_rank"], 3);
  EXPECT_NE(j["imbalance"]["busiest_rank"], 3);
  const json& s = Kind(j, "SendRecv");
  std::vector<int64_t> counts = s["per_rank_count"];
  EXPECT_NE(counts[0], counts[1]) << "Cannon's skew: unequal shift counts";
  int64_t matched = 0;
  for (const json& p : s["per_rank"]) matched += int64_t(p["ops"]) - int64_t(p["unmatched_ops"]);
  EXPECT_GT(matched, 0.95 * std::accumulate(counts.begin(), counts.end(), int64_t{0}));
  const json& g = Kind(j, "AllGather");
  EXPECT_GT(int64_t(g["per_rank"][3]["last_arrivals"]), int64_t(g["instances"]) / 2);
  // Rank 3 waits least: the others wait for it.
  for (int r = 0; r < 3; ++r)
    EXPECT_GT(int64_t(j["per_rank"][r]["wait_ns"]), 10 * int64_t(j["per_rank"][3]["wait_ns"]));
}

// Issue 37 item 8, as a new user met it on the bundled export: a window ending while rank 0's
// ring shift still waits for rank 1 (which arrives after the window's end) must call that time
// waiting, not exposed transfer, and name rank 1; widening the window must not change the story.
TEST(ReadoutTruth, WindowEdgeNeverTurnsWaitingIntoTransfer) {
  const std::string path = RealExport("cpwork-train");
  json cut = Report(path, {"--window", "13.10:13.12"});
  json wide = Report(path, {"--window", "13.10:13.125"});
  for (const json* j : {&cut, &wide}) {
    EXPECT_EQ((*j)["imbalance"]["straggler_rank"], 1);
    const json& s = Kind(*j, "SendRecv");
    const int64_t time = s["per_rank"][0]["time_ns"], wait = s["per_rank"][0]["wait_ns"];
    EXPECT_GT(wait, 0.99 * double(time)) << "rank 0's ring shift is waiting for rank 1";
    EXPECT_LT(int64_t(j->at("per_rank")[0]["exposed_transfer_ns"]), 0.01 * double(time));
  }
  const json& s = Kind(cut, "SendRecv");
  EXPECT_EQ(s["instances"], 1);
  EXPECT_EQ(s["edge_instances"], 1) << "the one shift straddles the window's end";
  EXPECT_EQ(s["per_rank"][0]["unmatched_ops"], 0);
  EXPECT_EQ(s["per_rank"][1]["ops"], 0) << "rank 1's op lies after the window: it only says who came last";
  EXPECT_EQ(s["per_rank"][1]["last_arrivals"], 1);
  EXPECT_EQ(Kind(wide, "SendRecv")["edge_instances"], 0);
  CliResult text = RunCli({"report", "--window", "13.10:13.12", "--wide", path});
  EXPECT_NE(text.out.find("The window's edges cut 1 instance:"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("overlap it with the module's GEMMs"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace cpprof::testing
