// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// NVTX extended payloads on real exports (tests/data/real-bt/, made on an H100 by
// tools/testdata/make_cpfold_exports.sh's `backtrace` step): nsys 2025.3.1 exports NCCL's
// communicator ids, ranks and message sizes, and the Python backtraces' frames, only when asked
// (`nsys export --include-json true`). With them the ranks come from NCCL; without them the
// readout says how to get them.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include "analysis/module_config.h"
#include "nsys/nvtx_facts.h"
#include "nsys/sqlite_db.h"
#include "pipeline/attribution.h"
#include "test_support.h"

namespace cpprof::testing {
namespace {

using nlohmann::json;

json Report(const std::string& name, const std::string& folder = "real-bt") {
  CliResult r = RunCli({"report", "--format", "json", RealExport(name, folder)});
  EXPECT_EQ(r.rc, 0) << r.err;
  return json::parse(r.out);
}

const json* Diagnostic(const json& j, const std::string& id) {
  for (const json& d : j["diagnostics"]) {
    if (d["id"] == id) return &d;
  }
  return nullptr;
}

TEST(NvtxPayloads, RanksComeFromNcclsJsonPayloads) {
  // The same capture exported twice: by `nsys profile --export sqlite` and by `nsys export
  // --include-json true`.
  json with = Report("nccl-payloads"), without = Report("nccl-payloads-default");
  EXPECT_EQ(with["ranks"]["method"], "NCCL NVTX payloads (ncclCommInitRank: Rank, No. of ranks)");
  EXPECT_EQ(without["ranks"]["method"], "device order (the export has no NCCL rank payloads)");
  EXPECT_EQ(Diagnostic(with, "nvtx-payloads-not-exported"), nullptr);
  const json* d = Diagnostic(without, "nvtx-payloads-not-exported");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ((*d)["detail"],
            "NCCL's communicator ids, ranks and message sizes (15 NCCL ranges) are not in the export: the "
            ".nsys-rep holds them, but nsys exports them to SQLite only when asked.");
  EXPECT_NE((*d)["fix"].get<std::string>().find("nsys export --type sqlite --include-json true"), std::string::npos);
}

TEST(NvtxPayloads, PythonBacktracesWithoutTheirFramesAreSaid) {
  // cpfold-opts-full-1x2 (--python-backtrace=cuda, exported by nsys profile): the marks are
  // there, their frames are not.
  json old = Report("cpfold-opts-full-1x2", "real");
  const json* d = Diagnostic(old, "nvtx-payloads-not-exported");
  ASSERT_NE(d, nullptr);
  EXPECT_NE((*d)["detail"].get<std::string>().find("and the Python backtraces' frames (5443 backtraces)"),
            std::string::npos)
      << (*d)["detail"];
  // Exported with --include-json: the frames are in, nothing to say; CPU sampling was on, so
  // the backtraces were collected at all.
  for (const std::string name : {"cpfold-bt-1x1", "cpfold-bt-json-1x1"}) {
    json j = Report(name);
    EXPECT_EQ(Diagnostic(j, "nvtx-payloads-not-exported"), nullptr) << name;
    EXPECT_EQ(Diagnostic(j, "python-backtraces-inert"), nullptr) << name;
    EXPECT_TRUE(j["capture"]["python_backtraces"].get<bool>()) << name;
  }
}

// NVTX events (domain creates aside) with a payload, counted by SQL.
int64_t PayloadRowsBySql(const std::string& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  const char* sql =
      "SELECT count(*) FROM NVTX_EVENTS WHERE eventType <> 75 AND (binaryData IS NOT NULL OR jsonText IS NOT NULL)";
  EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

// The report's NVTX pass counts the payloads it reads, so the capture facts do not scan the table
// again to find one (a whole scan when there is none): the same facts either way, and the count
// is SQL's.
TEST(NvtxPayloads, TheAttributionPassCountsThePayloadsTheFactsLookFor) {
  const std::vector<std::pair<std::string, std::string>> exports = {{"nccl-payloads", "real-bt"},
                                                                    {"nccl-payloads-default", "real-bt"},
                                                                    {"cpfold-bt-1x1", "real-bt"},
                                                                    {"cpfold-opts-full-1x2", "real"},
                                                                    {"cpfold-ring-1x2", "real"}};
  int with_payloads = 0, without = 0;
  for (const auto& [name, folder] : exports) {
    SCOPED_TRACE(name);
    const std::string path = RealExport(name, folder);
    auto db = nsys::Database::Open(path);
    ASSERT_TRUE(db.ok()) << db.status().message();
    auto looked = nsys::ReadNvtxFacts(*db);  // a pass of its own, then SQL looks for a payload
    ASSERT_TRUE(looked.ok());
    auto a = pipeline::ReadAttribution(*db, analysis::DefaultModuleConfig(), nullptr, "", pipeline::Launches::kNone);
    ASSERT_TRUE(a.ok()) << a.status().message();
    EXPECT_EQ(a->tally.payload_events, PayloadRowsBySql(path));
    auto given = nsys::ReadNvtxFacts(*db, &a->domains, &a->tally);
    ASSERT_TRUE(given.ok());
    EXPECT_EQ(given->nvtx_payloads, looked->nvtx_payloads);
    ++(a->tally.payload_events > 0 ? with_payloads : without);
  }
  EXPECT_GE(with_payloads, 2);
  EXPECT_GE(without, 2);
}

}  // namespace
}  // namespace cpprof::testing
