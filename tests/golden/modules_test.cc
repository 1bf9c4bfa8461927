// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The module readout of `cpprof report` on the real exports: rows that add up, an independent
// SQL oracle for which module launched each GPU op, CP vs serial, training phases, imbalance,
// and the Markdown readout.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace cpprof::testing {
namespace {

using nlohmann::json;

// The whole capture: the SQL oracles below count every op of the export.
json ReportJson(const std::string& path) {
  CliResult r = RunCli({"report", "--format", "json", "--window", "all", path});
  EXPECT_EQ(r.rc, 0) << r.err;
  return json::parse(r.out);
}

class ModulesReal : public ::testing::TestWithParam<std::string> {};

TEST_P(ModulesReal, RowsAddUpPerRank) {
  json j = ReportJson(RealExport(GetParam()));
  const json& rows = j["modules"]["rows"];
  const json& ranks = j["per_rank"];
  if (rows.empty()) GTEST_SKIP() << "no module ranges in this export";
  for (size_t r = 0; r < ranks.size(); ++r) {
    int64_t top = 0, top_ops = 0;
    std::map<int, int64_t> child_busy, child_ops;
    for (size_t i = 0; i < rows.size(); ++i) {
      const json& t = rows[i]["per_rank"][r];
      int parent = rows[i]["parent"];
      EXPECT_GE(int64_t(t["own_ns"]), 0);
      EXPECT_LE(int64_t(t["hidden_ns"]), int64_t(t["comm_ns"]));
      for (const auto& [kind, ns] : t["comm_by_kind"].items()) EXPECT_LE(int64_t(ns), int64_t(t["comm_ns"])) << kind;
      if (parent < 0) {
        top += int64_t(t["busy_ns"]);
        top_ops += int64_t(t["ops"]);
      } else {
        ASSERT_LT(parent, static_cast<int>(i)) << "parents come before their children";
        child_busy[parent] += int64_t(t["busy_ns"]);
        child_ops[parent] += int64_t(t["ops"]);
      }
    }
    for (size_t i = 0; i < rows.size(); ++i) {
      const json& t = rows[i]["per_rank"][r];
      EXPECT_EQ(int64_t(t["own_ns"]) + child_busy[static_cast<int>(i)], int64_t(t["busy_ns"])) << rows[i]["name"];
      EXPECT_LE(child_ops[static_cast<int>(i)], int64_t(t["ops"])) << rows[i]["name"];
    }
    EXPECT_EQ(top, int64_t(ranks[r]["busy_ns"])) << "rank " << r;
    EXPECT_EQ(top_ops, int64_t(ranks[r]["ops"])) << "rank " << r;
  }
  for (const json& p : j["phases"]) {
    int r = p["rank"];
    EXPECT_EQ(int64_t(p["forward_ns"]) + int64_t(p["backward_ns"]) + int64_t(p["optimizer_ns"]),
              int64_t(ranks[r]["busy_ns"]));
  }
}

INSTANTIATE_TEST_SUITE_P(RealExports, ModulesReal, ::testing::ValuesIn(RealExportNames()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string n = p.param;
                           for (char& ch : n) {
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

// Oracle: GPU ops per module range, straight from SQL. A call on a forward thread belongs to the
// innermost module range around it (same thread, the range contains the call's start; innermost =
// latest start, then shortest: nsys's rule). A call on autograd's threads (pt_autograd_*) belongs
// to the module of the forward op with the sequence number of the innermost backward range
// around it (a "..., seq = N" range, or an evaluate_function range taking its first seq child's
// number; the forward op = the last range with that number on the one forward thread that has
// it), or to a module range inside that backward range; unmapped, to the module around the call
// itself, if any. Module ranges: the domain's, and torch.optim's in nsys's PyTorch domain.
std::map<std::string, int64_t> SqlOpsPerModule(const std::string& path, const std::string& domain) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  // Temporary tables and indexes only: the export itself stays untouched.
  std::string setup =
      "CREATE TEMP TABLE ag AS SELECT DISTINCT globalTid FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId WHERE "
      "s.value LIKE 'pt_autograd%';\n"
      "CREATE TEMP TABLE txt AS SELECT n.start, n.end, n.globalTid, n.domainId, coalesce(n.text, s.value) AS t FROM "
      "NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL AND "
      "n.endGlobalTid IS NULL;\n"
      "CREATE TEMP TABLE dom AS SELECT DISTINCT domainId, globalTid >> 24 AS p, text FROM NVTX_EVENTS WHERE eventType "
      "= 75;\n"
      "CREATE TEMP TABLE r AS SELECT x.start, x.end, x.globalTid, dom.text || ':' || x.t AS name FROM txt x JOIN dom "
      "ON dom.domainId = x.domainId AND dom.p = x.globalTid >> 24 WHERE dom.text = '" +
      domain +
      "' OR (dom.text = 'PyTorch' AND x.t LIKE 'torch.optim.%');\n"
      "CREATE INDEX temp.r_t ON r(globalTid, start);\n"
      "CREATE TEMP TABLE sq AS SELECT start, end, globalTid, CAST(substr(t, instr(t, ', seq = ') + 8) AS INTEGER) AS "
      "seq FROM txt WHERE instr(t, ', seq = ') > 0;\n"
      "CREATE INDEX temp.sq_t ON sq(globalTid, start);\n"
      "CREATE INDEX temp.sq_s ON sq(seq);\n"
      "CREATE TEMP TABLE ev AS SELECT e.start, e.end, e.globalTid, (SELECT seq FROM sq WHERE sq.globalTid = "
      "e.globalTid AND sq.start >= e.start AND sq.end <= e.end ORDER BY sq.start LIMIT 1) AS seq FROM txt e WHERE e.t "
      "LIKE 'autograd::engine::evaluate_function: %' AND e.globalTid IN (SELECT globalTid FROM ag);\n"
      "CREATE TEMP TABLE bw AS SELECT start, end, globalTid, seq FROM sq WHERE globalTid IN (SELECT globalTid FROM ag) "
      "UNION ALL SELECT * FROM ev WHERE seq IS NOT NULL;\n"
      "CREATE INDEX temp.bw_t ON bw(globalTid, start);\n"
      "CREATE TEMP TABLE calls AS SELECT rt.start, rt.globalTid FROM (SELECT correlationId c, globalPid g FROM "
      "CUPTI_ACTIVITY_KIND_KERNEL UNION ALL SELECT correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL "
      "SELECT correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMSET) ops JOIN CUPTI_ACTIVITY_KIND_RUNTIME rt ON "
      "rt.correlationId = ops.c AND rt.globalTid >> 24 = ops.g >> 24;\n"
      "CREATE TEMP TABLE a1 AS SELECT c.start AS cs, c.globalTid AS ct, c.globalTid IN (SELECT globalTid FROM ag) AS "
      "bwd,\n"
      "  (SELECT name FROM r WHERE r.globalTid = c.globalTid AND r.start <= c.start AND r.end >= c.start ORDER BY "
      "r.start DESC, r.end ASC LIMIT 1) AS own_module,\n"
      "  (SELECT start || ' ' || seq FROM bw WHERE bw.globalTid = c.globalTid AND bw.start <= c.start AND bw.end >= "
      "c.start ORDER BY bw.start DESC, bw.end ASC LIMIT 1) AS b FROM calls c;\n"
      "CREATE TEMP TABLE a2 AS SELECT *, CAST(b AS INTEGER) AS bstart, CAST(substr(b, instr(b, ' ') + 1) AS INTEGER) "
      "AS bseq FROM a1;\n"
      "CREATE TEMP TABLE a3 AS SELECT *,\n"
      "  (SELECT CASE WHEN count(DISTINCT f.globalTid) = 1 THEN max(f.start) END FROM sq f WHERE f.seq = a2.bseq AND "
      "f.globalTid >> 24 = a2.ct >> 24 AND f.globalTid NOT IN (SELECT globalTid FROM ag)) AS fstart,\n"
      "  (SELECT min(f.globalTid) FROM sq f WHERE f.seq = a2.bseq AND f.globalTid >> 24 = a2.ct >> 24 AND f.globalTid "
      "NOT IN (SELECT globalTid FROM ag)) AS ftid FROM a2;\n"
      "CREATE TEMP TABLE a4 AS SELECT *, (SELECT name FROM r WHERE r.globalTid = a3.ftid AND r.start <= a3.fstart AND "
      "r.end >= a3.fstart ORDER BY r.start DESC, r.end ASC LIMIT 1) AS fmodule,\n"
      "  (SELECT name FROM r WHERE r.globalTid = a3.ct AND r.start <= a3.cs AND r.end >= a3.cs AND r.start >= "
      "a3.bstart ORDER BY r.start DESC, r.end ASC LIMIT 1) AS inner_module FROM a3;\n";
  EXPECT_EQ(sqlite3_exec(db, setup.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::string sql =
      "SELECT CASE WHEN bwd = 0 OR fmodule IS NULL THEN own_module ELSE coalesce(inner_module, fmodule) END AS m, "
      "count(*) FROM a4 GROUP BY m;\n";
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::map<std::string, int64_t> out;
  while (sqlite3_step(st) == SQLITE_ROW) {
    const unsigned char* name = sqlite3_column_text(st, 0);
    out[name ? reinterpret_cast<const char*>(name) : ""] += sqlite3_column_int64(st, 1);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

// In these exports every range of the model's domain is a module, and no other kept range is
// but torch.optim's (iteration markers, NCCL and other PyTorch ranges are not modules), so both
// must agree exactly; the training exports check the backward mapping too.
struct OracleCase {
  std::string export_name, domain;
};

class ModulesOracle : public ::testing::TestWithParam<OracleCase> {};

TEST_P(ModulesOracle, OpsPerModuleMatchSql) {
  std::string path = RealExport(GetParam().export_name);
  json j = ReportJson(path);
  std::map<std::string, int64_t> ours;
  const json& rows = j["modules"]["rows"];
  std::map<int, int64_t> child_ops;
  for (const json& row : rows) {
    if (int(row["parent"]) >= 0) {
      for (const json& t : row["per_rank"]) child_ops[row["parent"]] += int64_t(t["ops"]);
    }
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    int64_t ops = 0;
    for (const json& t : rows[i]["per_rank"]) ops += int64_t(t["ops"]);
    int64_t own = ops - child_ops[static_cast<int>(i)];
    if (own) ours[rows[i]["range"]] += own;  // groups, [backward] and [unattributed] have range ""
  }
  auto sql = SqlOpsPerModule(path, GetParam().domain);
  EXPECT_EQ(ours, sql);
  EXPECT_GT(sql.size(), 4u);
}

INSTANTIATE_TEST_SUITE_P(Real, ModulesOracle,
                         ::testing::Values(OracleCase{"cpfold-e2e-1x2", "cpfold"},
                                           OracleCase{"cpfold-trunk-2x2", "cpfold"},
                                           OracleCase{"cpfold-train-1x2", "cpfold"},
                                           OracleCase{"cpwork-train", "cpwork"}),
                         [](const ::testing::TestParamInfo<OracleCase>& p) {
                           std::string n = p.param.export_name;
                           for (char& ch : n) {
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

const json* Row(const json& j, const std::string& path) {
  const json& rows = j["modules"]["rows"];
  std::vector<std::string> paths(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    int p = rows[i]["parent"];
    paths[i] = (p < 0 ? "" : paths[p] + "/") + std::string(rows[i]["name"]);
    if (paths[i] == path) return &rows[i];
  }
  return nullptr;
}

// Training with --pytorch=autograd-nvtx: the backward pass lands in the modules whose forward ops
// made it (the Cannon ring's backward under the TriMul that ran it forward), almost nothing is
// left in [backward], and the modules' backward parts add up to the rank's backward time.
TEST(ModulesCpfold, TrainingBackwardGoesToTheForwardModules) {
  for (const char* name : {"cpfold-train-1x2", "cpwork-train"}) {
    SCOPED_TRACE(name);
    json j = ReportJson(RealExport(name));
    ASSERT_EQ(j["phases"].size(), 2u);
    const json& rows = j["modules"]["rows"];
    const json* unmapped = Row(j, "[backward]");
    ASSERT_NE(unmapped, nullptr);
    for (size_t k = 0; k < 2; ++k) {
      int64_t backward = j["phases"][k]["backward_ns"];
      ASSERT_GT(backward, 0);
      int64_t top = 0;
      for (const json& row : rows) {
        const json& t = row["per_rank"][k];
        EXPECT_LE(int64_t(t["backward_ns"]), int64_t(t["busy_ns"])) << row["name"];
        if (int(row["parent"]) < 0) top += int64_t(t["backward_ns"]);
      }
      EXPECT_NEAR(static_cast<double>(top), static_cast<double>(backward), 0.01 * static_cast<double>(backward)) << k;
      // What stays unmapped: leaf gradients (AccumulateGrad has no sequence number).
      EXPECT_LT(int64_t((*unmapped)["per_rank"][k]["busy_ns"]), backward / 20) << "rank " << k << ": most is mapped";
    }
  }
  json j = ReportJson(RealExport("cpfold-train-1x2"));
  const json* ring = Row(j,
                         "trunk/CPFoldModel.trunk/PairformerModule.forward/PairformerBlock.forward/"
                         "TriangleMultiplicationOutgoing.forward/cannon.ring_rows_matmul");
  ASSERT_NE(ring, nullptr);
  for (const json& t : (*ring)["per_rank"]) EXPECT_GT(int64_t(t["backward_ns"]), 0);
  EXPECT_TRUE((*ring)["cp_distributed"]);
}

TEST(ModulesCpfold, CpDistributedVersusSerialAndGroups) {
  json j = ReportJson(RealExport("cpfold-e2e-1x2"));
  const json* trimul = Row(j,
                           "trunk/CPFoldModel.trunk/PairformerModule.forward/PairformerBlock.forward/"
                           "TriangleMultiplicationOutgoing.forward");
  ASSERT_NE(trimul, nullptr);
  EXPECT_TRUE((*trimul)["cp_distributed"]);
  EXPECT_GT(int64_t((*trimul)["per_rank"][0]["comm_by_kind"]["SendRecv"]), 0) << "the Cannon ring";
  const json* msa = Row(j, "MSA/MSAModule.forward");  // MSA wins over trunk, its parent in the model
  ASSERT_NE(msa, nullptr);
  const json* diffusion = Row(j, "diffusion");
  ASSERT_NE(diffusion, nullptr);
  EXPECT_FALSE((*diffusion)["cp_distributed"]) << "cpfold runs diffusion on every rank without communication";
  EXPECT_NE(Row(j, "diffusion/EDMSampler.sample/DiffusionModule.forward/AtomAttentionEncoder.forward"), nullptr)
      << "an atom encoder inside diffusion counts as diffusion";
  EXPECT_NE(Row(j, "input embedder/InputEmbedder.forward/AtomAttentionEncoder.forward"), nullptr);
  EXPECT_NE(Row(j, "confidence/ConfidenceModule.forward"), nullptr);
  EXPECT_TRUE(j["phases"].empty()) << "inference: no backward pass";
  // Two ranks issue the same collectives: all matched.
  ASSERT_FALSE(j["imbalance"]["collectives"].empty());
  // The ring's shifts and the CP gathers all match across the two ranks (a broadcast's root may
  // finish before its receiver starts: those stay unmatched).
  for (const json& c : j["imbalance"]["collectives"]) {
    if (c["kind"] != "SendRecv" && c["kind"] != "AllGather") continue;
    for (const json& p : c["per_rank"]) EXPECT_EQ(p["unmatched_ops"], 0) << c["kind"];
    EXPECT_EQ(c["instances"], c["per_rank_count"][0]) << c["kind"];
  }
}

TEST(ModulesTraining, ForwardBackwardOptimizer) {
  json j = ReportJson(RealExport("cpwork-train"));
  ASSERT_EQ(j["phases"].size(), 2u);
  for (const json& p : j["phases"]) {
    EXPECT_GT(int64_t(p["forward_ns"]), 0);
    EXPECT_GT(int64_t(p["backward_ns"]), 0);
    EXPECT_GT(int64_t(p["optimizer_ns"]), 0);
  }
  EXPECT_NE(Row(j, "[backward]"), nullptr);
  EXPECT_NE(Row(j, "optimizer/SGD.step"), nullptr);
}

TEST(ModulesMarkdown, TheWholeReadout) {
  CliResult md = RunCli({"report", "--format", "md", RealExport("cpfold-trunk-2x2")});
  ASSERT_EQ(md.rc, 0) << md.err;
  for (const char* section :
       {"## cpprof readout: 4 ranks", "**window: steady state, 2 of 3 iterations", "**Verdict.**",
        "No consistent straggler: rank 3", "### GPU time per rank", "### Where each rank's window goes",
        "### Iterations", "### Modules", "### Communication vs compute", "### Waiting vs transfer, and the straggler",
        "| trunk | CP |", "CP-distributed modules"}) {
    EXPECT_NE(md.out.find(section), std::string::npos) << section << "\n" << md.out;
  }
  CliResult deep = RunCli({"report", "--format", "md", "--depth", "0", RealExport("cpfold-trunk-2x2")});
  EXPECT_EQ(deep.out.find("| ..CPFoldModel.trunk"), std::string::npos) << "depth 0 shows groups only";
}

}  // namespace
}  // namespace cpprof::testing

namespace cpprof::testing {
namespace {

TEST(ReadoutDiagnostics, EmptyFunctionsTraceDomainIsFlaggedWithItsCause) {
  CliResult md = RunCli({"report", "--format", "md", RealExport("inline-main")});
  ASSERT_EQ(md.rc, 0) << md.err;
  EXPECT_NE(md.out.find("functions-trace domain 'inline' recorded no ranges"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("launched with `-m cpwork.inline_main`, so that module ran as __main__"), std::string::npos)
      << md.out;
  CliResult text = RunCli({"report", RealExport("inline-main")});
  EXPECT_NE(text.out.find("warning: functions-trace domain 'inline' recorded no ranges"), std::string::npos);
  // Where the domain did record ranges, no such warning.
  CliResult ok = RunCli({"report", "--format", "json", RealExport("cpfold-e2e-1x2")});
  json parsed = json::parse(ok.out);  // kept: a range-for over a temporary's member would dangle
  for (const json& d : parsed["diagnostics"]) EXPECT_NE(d["id"], "functions-trace-domain-empty");
}

TEST(ReadoutMemory, PeakPerRankWithTheModuleThatReachedIt) {
  json j = ReportJson(RealExport("cpfold-trunk-2x2"));
  ASSERT_EQ(j["per_rank"].size(), 4u);
  for (const json& r : j["per_rank"]) {
    EXPECT_GT(int64_t(r["peak_mem_bytes"]), int64_t{1} << 30) << "cpfold trunk N=512 holds GiBs";
    EXPECT_FALSE(std::string(r["peak_mem_module"]).empty());
  }
  json none = ReportJson(RealExport("cpwork-trace"));
  EXPECT_TRUE(none["per_rank"][0]["peak_mem_bytes"].is_null());
  EXPECT_FALSE(none["memory"]["captured"]);
}

}  // namespace
}  // namespace cpprof::testing

namespace cpprof::testing {
namespace {

TEST(ReadoutWarmup, SteadyByDefaultSaidWithTheWholeCaptureAndLeftOutOnRequest) {
  std::string path = RealExport("cpfold-e2e-1x2");
  // By default the window is the steady state: warm-up is outside it, and the window says so.
  CliResult steady = RunCli({"report", path});
  ASSERT_EQ(steady.rc, 0) << steady.err;
  EXPECT_EQ(steady.err.find("were launched inside warm-up ranges"), std::string::npos) << steady.err;
  EXPECT_NE(steady.out.find("window: steady state, 2 of 3 iterations"), std::string::npos) << steady.out;
  EXPECT_NE(steady.out.find("those named warm-up left out"), std::string::npos);
  // The whole capture: warm-up counts, and a note says how much of it there is.
  CliResult all = RunCli({"report", "--format", "json", "--window", "all", path});
  ASSERT_EQ(all.rc, 0) << all.err;
  EXPECT_NE(all.err.find("were launched inside warm-up ranges (such as ':cpfold:warmup0')"), std::string::npos)
      << all.err;
  CliResult cut = RunCli({"report", "--format", "json", "--window", "all", "--exclude-ranges", "warmup", path});
  ASSERT_EQ(cut.rc, 0) << cut.err;
  EXPECT_NE(cut.err.find("GPU ops launched inside ranges matching --exclude-ranges 'warmup' were left out"),
            std::string::npos);
  json a = json::parse(all.out), b = json::parse(cut.out);
  for (size_t r = 0; r < a["per_rank"].size(); ++r) {
    EXPECT_LT(int64_t(b["per_rank"][r]["ops"]), int64_t(a["per_rank"][r]["ops"]));
    EXPECT_LT(int64_t(b["per_rank"][r]["busy_ns"]), int64_t(a["per_rank"][r]["busy_ns"]));
    // What is left still adds up: top-level module rows = busy.
    int64_t top = 0;
    for (const json& row : b["modules"]["rows"]) {
      if (int(row["parent"]) < 0) top += int64_t(row["per_rank"][r]["busy_ns"]);
    }
    EXPECT_EQ(top, int64_t(b["per_rank"][r]["busy_ns"]));
  }
  CliResult bad = RunCli({"report", "--exclude-ranges", "warm(", path});
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("--exclude-ranges 'warm(' is not a valid regular expression"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace cpprof::testing
