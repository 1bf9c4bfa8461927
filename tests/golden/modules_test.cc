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

json ReportJson(const std::string& path) {
  CliResult r = RunCli({"report", "--format", "json", path});
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

// Oracle: GPU ops per innermost range of one domain around the launching call, straight from
// SQL (join by correlation id within the process, same thread, the range contains the call's
// start; innermost = latest start, then shortest).
std::map<std::string, int64_t> SqlOpsPerInnermostRange(const std::string& path, const std::string& domain) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  // The ranges go to an indexed temporary table first (the export itself stays untouched).
  std::string ranges =
      "CREATE TEMP TABLE r AS WITH dom AS (SELECT domainId, globalTid >> 24 AS p FROM NVTX_EVENTS"
      " WHERE eventType = 75 AND text = '" + domain + "')"
      " SELECT n.start, n.end, n.globalTid, '" + domain + ":' || COALESCE(n.text, s.value) AS name"
      " FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId"
      " JOIN dom ON dom.domainId = n.domainId AND dom.p = n.globalTid >> 24"
      " WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL;"
      " CREATE INDEX temp.r_by_thread ON r(globalTid, start);";
  EXPECT_EQ(sqlite3_exec(db, ranges.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::string sql =
      "WITH ops AS (SELECT correlationId c, globalPid g FROM CUPTI_ACTIVITY_KIND_KERNEL"
      "   UNION ALL SELECT correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMCPY"
      "   UNION ALL SELECT correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMSET),"
      " calls AS (SELECT rt.start, rt.globalTid FROM ops JOIN CUPTI_ACTIVITY_KIND_RUNTIME rt"
      "   ON rt.correlationId = ops.c AND rt.globalTid >> 24 = ops.g >> 24)"
      " SELECT (SELECT name FROM r WHERE r.globalTid = calls.globalTid AND r.start <= calls.start"
      "   AND r.end >= calls.start ORDER BY r.start DESC, r.end ASC LIMIT 1) AS inner, count(*)"
      " FROM calls GROUP BY inner";
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

// In the cpfold exports every range of the "cpfold" domain is a module and no other kept range
// is (iteration markers, NCCL and PyTorch ranges are not modules), so both must agree exactly.
class ModulesOracle : public ::testing::TestWithParam<std::string> {};

TEST_P(ModulesOracle, OpsPerInnermostModuleMatchSql) {
  std::string path = RealExport(GetParam());
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
    if (own) ours[rows[i]["range"]] += own;  // groups and [unattributed] have range ""
  }
  auto sql = SqlOpsPerInnermostRange(path, "cpfold");
  EXPECT_EQ(ours, sql);
  EXPECT_GT(sql.size(), 20u);
}

INSTANTIATE_TEST_SUITE_P(Cpfold, ModulesOracle, ::testing::Values("cpfold-e2e-1x2", "cpfold-trunk-2x2"),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           return p.param == "cpfold-e2e-1x2" ? std::string("e2e") : std::string("trunk");
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

TEST(ModulesCpfold, CpDistributedVersusSerialAndGroups) {
  json j = ReportJson(RealExport("cpfold-e2e-1x2"));
  const json* trimul = Row(j, "trunk/CPFoldModel.trunk/PairformerModule.forward/PairformerBlock.forward/"
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
  for (const json& c : j["imbalance"]["collectives"]) EXPECT_TRUE(c["matched"]) << c["kind"];
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
  for (const char* section : {"## cpprof readout: 4 ranks", "### GPU time per rank", "### Modules",
                              "### Communication vs compute", "### Imbalance", "| trunk | CP |",
                              "CP-distributed modules"}) {
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

TEST(ReadoutWarmup, SaidByDefaultAndLeftOutOnRequest) {
  std::string path = RealExport("cpfold-e2e-1x2");
  CliResult all = RunCli({"report", "--format", "json", path});
  ASSERT_EQ(all.rc, 0) << all.err;
  EXPECT_NE(all.err.find("were launched inside warm-up ranges (such as ':cpfold:warmup0')"), std::string::npos)
      << all.err;
  CliResult cut = RunCli({"report", "--format", "json", "--exclude-ranges", "warmup", path});
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
