// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// `cpprof report --format html` on the real exports: the page's embedded data (the JSON in
// <script id="cpprof-data">) holds the same numbers as `--format json` and the model, its
// timeline bins add up to the lanes' unions, and the page fetches nothing. Plus the size bound on
// a moderately big synthetic export.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "pipeline/build_report.h"
#include "render/html_render.h"
#include "test_support.h"

namespace cpprof::testing {
namespace {

using nlohmann::json;

constexpr std::string_view kOpen = R"(<script type="application/json" id="cpprof-data">)";

// The page's data object, as the page's script reads it.
json EmbeddedData(const std::string& html) {
  size_t at = html.find(kOpen);
  EXPECT_NE(at, std::string::npos);
  at += kOpen.size();
  size_t end = html.find("</script>", at);
  EXPECT_NE(end, std::string::npos);
  return json::parse(html.substr(at, end - at));
}

std::string Html(const std::string& path, std::vector<std::string> extra = {}) {
  std::string out = TempDir() + "/" + std::filesystem::path(path).stem().string() + ".html";
  std::vector<std::string> args{"report", "--format", "html", "-o", out, "--force", path};
  args.insert(args.end(), extra.begin(), extra.end());
  CliResult r = RunCli(args);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "") << "with -o nothing goes to stdout";
  return ReadFile(out);
}

json ReportJson(const std::string& path, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"report", "--format", "json", path};
  args.insert(args.end(), extra.begin(), extra.end());
  CliResult r = RunCli(args);
  EXPECT_EQ(r.rc, 0) << r.err;
  return json::parse(r.out);
}

// Timeline bins and module runs come as [gap from the previous end, duration, ...]: back to
// [start, end, ...] relative to timeline.t0_ns, as the page's script does.
json Times(const json& a, size_t stride) {
  json out = a;
  int64_t prev = 0;
  for (size_t i = 0; i + 1 < out.size(); i += stride) {
    const int64_t start = prev + int64_t(a[i]), end = start + int64_t(a[i + 1]);
    out[i] = start;
    out[i + 1] = end;
    prev = end;
  }
  return out;
}

class HtmlReal : public ::testing::TestWithParam<std::string> {};

TEST_P(HtmlReal, EmbeddedDataIsTheJsonReadout) {
  const std::string path = RealExport(GetParam());
  json h = EmbeddedData(Html(path));
  EXPECT_EQ(h["schema"], "cpprof.html/2");
  // One serialiser: the page embeds the readout exactly as --format json writes it.
  EXPECT_EQ(h["report"], ReportJson(path));
  EXPECT_EQ(h["name"], std::filesystem::path(path).filename().string());
  EXPECT_EQ(h["depth"], 3);
}

// The critical path the timeline draws: stretches on alternating ranks, each iteration's
// contiguous and adding up to its replayed time, in the replay's order.
TEST_P(HtmlReal, CriticalPathInTimeAddsUpPerIteration) {
  const std::string path = RealExport(GetParam());
  json h = EmbeddedData(Html(path));
  const json& p = h["critical_path"];
  const json& its = h["report"]["replay"]["iterations"];
  if (!h["report"]["replay"]["built"].get<bool>()) {
    EXPECT_TRUE(p.empty());
    return;
  }
  size_t k = 0;
  for (const json& it : its) {
    const int64_t replay = it["replay_ns"];
    int64_t sum = 0, prev_end = -1;
    int prev_rank = -1;
    while (k < p.size() && sum < replay) {
      const int rank = p[k][0];
      const int64_t a = p[k][1], b = p[k][2];
      EXPECT_LT(a, b) << it["name"];
      if (prev_end >= 0) {
        EXPECT_EQ(a, prev_end) << it["name"] << ": contiguous";
      }
      EXPECT_NE(rank, prev_rank) << it["name"] << ": one stretch per run on a rank";
      sum += b - a, prev_end = b, prev_rank = rank, ++k;
    }
    EXPECT_EQ(sum, replay) << GetParam() << " " << it["name"];
  }
  EXPECT_EQ(k, p.size());
}

TEST_P(HtmlReal, TitleNamesTheExport) {
  const std::string path = RealExport(GetParam());
  std::string html = Html(path);
  EXPECT_NE(html.find("<title>cpprof report: " + std::filesystem::path(path).filename().string() + "</title>"),
            std::string::npos);
}

// Each iteration's readout in the page is the readout of --window iter:N: the same rank budgets,
// and its module rows (those of the readout's window) hold that window's numbers.
TEST_P(HtmlReal, IterationsAreTheirOwnReadouts) {
  const std::string path = RealExport(GetParam());
  json h = EmbeddedData(Html(path));
  const json& its = h["iterations"];
  const json& window_its = h["report"]["window"]["iterations"];
  ASSERT_EQ(its.size(), window_its.size()) << "every iteration is in the page";
  const json& rows = h["report"]["modules"]["rows"];
  for (size_t i = 0; i < its.size(); ++i) {
    const json& it = its[i];
    EXPECT_EQ(it["name"], window_its[i]["name"]);
    EXPECT_EQ(it["start_ns"], window_its[i]["start_ns"]);
    json j = ReportJson(path, {"--window", "iter:" + std::to_string(i)});
    ASSERT_EQ(it["per_rank"].size(), j["per_rank"].size());
    for (size_t r = 0; r < j["per_rank"].size(); ++r) {
      json want = j["per_rank"][r];
      for (const char* f : {"classes", "top_kernels", "rank", "device", "pid", "process", "invalid_ops",
                            "peak_mem_bytes", "peak_mem_ns", "peak_mem_module"}) {
        want.erase(f);
      }
      EXPECT_EQ(it["per_rank"][r], want) << "iteration " << i << " rank " << r;
      ASSERT_EQ(it["top_kernels"][r].size(), j["per_rank"][r]["top_kernels"].size());
      for (size_t k = 0; k < it["top_kernels"][r].size(); ++k) {
        const json& e = it["top_kernels"][r][k];
        EXPECT_EQ(h["kernel_names"][int(e[0])]["name"], j["per_rank"][r]["top_kernels"][k]["name"]);
        EXPECT_EQ(e[1], j["per_rank"][r]["top_kernels"][k]["total_ns"]);
      }
    }
    EXPECT_EQ(it["imbalance"], j["imbalance"]);
    EXPECT_EQ(it["phases"], j["phases"]);
    // Module rows: the iteration's own rows, found in the readout's by path.
    std::map<std::string, const json*> by_path;
    std::vector<std::string> path_of(j["modules"]["rows"].size());
    for (size_t m = 0; m < j["modules"]["rows"].size(); ++m) {
      const json& row = j["modules"]["rows"][m];
      std::string key = std::string(row["range"]).empty() ? std::string(row["name"]) : std::string(row["range"]);
      int parent = row["parent"];
      path_of[m] = (parent < 0 ? "" : path_of[parent] + "/") + key;
      by_path[path_of[m]] = &row;
    }
    std::vector<std::string> main_path(rows.size());
    for (size_t m = 0; m < rows.size(); ++m) {
      std::string key =
          std::string(rows[m]["range"]).empty() ? std::string(rows[m]["name"]) : std::string(rows[m]["range"]);
      int parent = rows[m]["parent"];
      main_path[m] = (parent < 0 ? "" : main_path[parent] + "/") + key;
    }
    for (const json& e : it["modules"]) {
      const json* want = by_path.at(main_path[int(e[0])]);
      for (size_t r = 0; r < e[1].size(); ++r) {
        EXPECT_EQ(e[1][r][0], (*want)["per_rank"][r]["busy_ns"]);
        EXPECT_EQ(e[1][r][4], (*want)["per_rank"][r]["wait_ns"]);
      }
    }
    EXPECT_EQ(it["modules"].size() + int(it["modules_not_in_readout"]), j["modules"]["rows"].size());
  }
}

// Every section of the text readout has its section in the page: each heading of the text (a
// line at column 0 that opens a section) maps to the page's element that shows it, and a text
// section this table does not know fails the test. html_browser_test.sh checks that the page
// fills each of them.
TEST_P(HtmlReal, EverySectionOfTheTextReadoutIsInThePage) {
  const std::string path = RealExport(GetParam());
  CliResult text = RunCli({"report", path, "--wide"});
  ASSERT_EQ(text.rc, 0) << text.err;
  const std::string html = Html(path);
  // Heading prefix -> the page's element.
  const std::vector<std::pair<std::string, std::string>> sections = {
      {"Verdict:", "sec-verdict"},
      {"GPU time per rank", "busy-table"},
      {"Where each rank's window goes", "sec-ranks"},
      {"Iterations:", "sec-iters"},
      {"Modules", "sec-modules"},
      {"Efficiency", "sec-efficiency"},
      {"Overlap tax", "sec-overlap"},
      {"What each fix buys", "sec-replay"},
      {"Communication by kind", "sec-comm"},
      {"Waiting vs transfer", "sec-imbalance"},
      {"Training phases", "sec-phases"},
      {"Rank ", "sec-kernels"},  // "Rank 0 (cuda:0, ...): GPU time by class", "Rank 0: top 10 kernels ..."

      {"Peak GPU memory", "sec-memory"},
      {"GPU memory", "sec-memory"},
      {"Capture:", "sec-capture"},
      {"Diagnostics", "sec-diag"},
      {"Notes", "sec-diag"},
      {"note:", "sec-diag"},
      {"warning:", "sec-diag"},
  };
  // The lines before the first section: the title, the ranks, the units, the window.
  const std::vector<std::string> preamble = {"cpprof report", "Times in ms", "window:"};
  std::set<std::string> seen;
  std::istringstream in(text.out);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == ' ' || line[0] == '-') continue;
    if (std::any_of(preamble.begin(), preamble.end(), [&](const auto& p) { return line.rfind(p, 0) == 0; })) continue;
    if (line.find(" rank") != std::string::npos && std::isdigit(static_cast<unsigned char>(line[0]))) continue;
    auto it =
        std::find_if(sections.begin(), sections.end(), [&](const auto& s) { return line.rfind(s.first, 0) == 0; });
    ASSERT_NE(it, sections.end()) << "a section of the text readout the page does not know: " << line;
    seen.insert(it->second);
    EXPECT_NE(html.find("id=\"" + it->second + "\""), std::string::npos) << line;
  }
  EXPECT_TRUE(seen.count("sec-verdict") && seen.count("sec-ranks") && seen.count("sec-kernels")) << text.out;
  // The efficiency section is drawn from the embedded readout when the text has one.
  json h = EmbeddedData(html);
  if (seen.count("sec-efficiency")) {
    EXPECT_TRUE(h["report"].contains("efficiency") || h.contains("efficiency_note"))
        << "the page has no efficiency to draw";
  }
}

TEST_P(HtmlReal, TimelineBinsAddUpToTheLanesUnions) {
  const std::string path = RealExport(GetParam());
  json h = EmbeddedData(Html(path));
  json j = ReportJson(path, {"--window", "all"});  // the timeline covers the whole capture
  const json& tl = h["timeline"];
  ASSERT_TRUE(tl["built"]);
  const int64_t t0 = tl["t0_ns"];
  const int max_bins = tl["max_bins"];
  ASSERT_EQ(tl["ranks"].size(), j["per_rank"].size());
  for (size_t r = 0; r < tl["ranks"].size(); ++r) {
    const json& rt = tl["ranks"][r];
    const json& rank = j["per_rank"][r];
    const int64_t first = int64_t(rank["first_start_ns"]) - t0, last = int64_t(rank["last_end_ns"]) - t0;
    EXPECT_EQ(rt["first_start"], first);
    EXPECT_EQ(rt["last_end"], last);
    int64_t lane_ops = 0;
    for (const json& l : rt["lanes"]) {
      const json& def = tl["lanes"][int(l["lane"])];
      const json bins = Times(l["bins"], 4);
      ASSERT_EQ(bins.size() % 4, 0u);
      EXPECT_LE(bins.size() / 4, static_cast<size_t>(max_bins));
      int64_t busy = 0, prev_end = INT64_MIN;
      for (size_t i = 0; i < bins.size(); i += 4) {
        int64_t s = bins[i], e = bins[i + 1], b = bins[i + 2];
        std::string cls = tl["class_names"][int(bins[i + 3])];
        EXPECT_GE(s, first) << def["name"];
        EXPECT_LE(e, last) << def["name"];
        EXPECT_LT(s, e);
        EXPECT_GE(s, prev_end) << def["name"] << ": bins of a lane do not overlap";
        EXPECT_GT(b, 0);
        EXPECT_LE(b, e - s);
        if (!l["downsampled"]) {
          EXPECT_EQ(b, e - s);
        }
        EXPECT_NE(std::find(def["classes"].begin(), def["classes"].end(), cls), def["classes"].end());
        prev_end = e;
        busy += b;
      }
      EXPECT_EQ(busy, int64_t(l["union_ns"])) << def["name"];
      if (!l["downsampled"]) {
        EXPECT_EQ(int64_t(l["intervals"]), int64_t(bins.size() / 4));
      }
      // Against the JSON readout's classes: a one-class lane is that class's union; a lane of
      // several lies between the largest of their unions and their sum.
      int64_t max_union = 0, sum_union = 0, instances = 0;
      for (const json& c : def["classes"]) {
        if (!rank["classes"].contains(c)) continue;
        int64_t u = rank["classes"][std::string(c)]["union_ns"];
        max_union = std::max(max_union, u);
        sum_union += u;
        instances += int64_t(rank["classes"][std::string(c)]["instances"]);
      }
      if (def["classes"].size() == 1) {
        EXPECT_EQ(int64_t(l["union_ns"]), sum_union) << def["name"];
      } else {
        EXPECT_GE(int64_t(l["union_ns"]), max_union) << def["name"];
        EXPECT_LE(int64_t(l["union_ns"]), sum_union) << def["name"];
      }
      EXPECT_EQ(int64_t(l["ops"]), instances) << def["name"];
      lane_ops += int64_t(l["ops"]);
    }
    EXPECT_EQ(lane_ops, int64_t(rank["ops"])) << "every op is in one lane";
    // Module runs: within the span, one level at a time without overlap, rows of that level.
    const json& rows = tl["rows"];
    for (const json& lv : rt["modules"]) {
      const json runs = Times(lv["runs"], 3);
      int level = lv["level"];
      int64_t prev_end = INT64_MIN;
      for (size_t i = 0; i < runs.size(); i += 3) {
        int64_t s = runs[i], e = runs[i + 1];
        int row = runs[i + 2];
        EXPECT_GE(s, first);
        EXPECT_LE(e, last);
        EXPECT_LT(s, e);
        EXPECT_GE(s, prev_end);
        prev_end = e;
        ASSERT_LT(row, static_cast<int>(rows.size()));
        int parent = rows[row]["parent"];
        if (level == 0) {
          EXPECT_EQ(parent, -1);
          EXPECT_NE(rows[row]["name"], "[unattributed]");
        } else {
          ASSERT_GE(parent, 0);
          EXPECT_EQ(rows[parent]["parent"], -1);
        }
      }
      EXPECT_LE(runs.size() / 3, static_cast<size_t>(max_bins));
    }
    if (rows.size() > 1) {
      EXPECT_FALSE(rt["modules"][0]["runs"].empty()) << "rank " << r;
    }
  }
}

TEST_P(HtmlReal, PageIsSelfContained) {
  std::string html = Html(RealExport(GetParam()));
  for (const char* bad :
       {"<link", "src=\"http", "src='http", "href=\"http", "@import", "url(", "fetch(", "XMLHttpRequest", "<img"}) {
    EXPECT_EQ(html.find(bad), std::string::npos) << bad;
  }
  // Outside the data (text, never fetched), the only URL is the SVG namespace (not fetched either).
  size_t data = html.find(kOpen), data_end = html.find("</script>", data);
  std::string page = html.substr(0, data) + html.substr(data_end);
  size_t at = 0;
  while ((at = page.find("://", at)) != std::string::npos) {
    EXPECT_EQ(page.compare(at - 4, 26, "http://www.w3.org/2000/svg"), 0) << page.substr(at - 5, 60);
    at += 3;
  }
  EXPECT_LT(html.size(), 10u << 20);
}

INSTANTIATE_TEST_SUITE_P(Exports, HtmlReal, ::testing::ValuesIn(RealExportNames()), [](const auto& param_info) {
  std::string n = param_info.param;
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
});

TEST(HtmlReport, EveryIterationIsInThePage) {
  json h = EmbeddedData(Html(RealExport("cpwork-train")));
  const json& its = h["iterations"];
  ASSERT_EQ(its.size(), 3u);
  EXPECT_EQ(its[0]["name"], ":iteration 0");
  EXPECT_TRUE(its[0]["warmup"]);
  EXPECT_EQ(its[2]["name"], ":iteration 2");
  EXPECT_LT(int64_t(its[0]["start_ns"]), int64_t(its[1]["start_ns"]));
  EXPECT_EQ(h["iterations_left_out"], 0);
  // Iterations differ: the page shows each one's numbers.
  EXPECT_NE(its[1]["per_rank"][0]["span_ns"], its[2]["per_rank"][0]["span_ns"]);
  json f = EmbeddedData(Html(RealExport("cpfold-trunk-2x2")));
  ASSERT_EQ(f["iterations"].size(), 3u);
  EXPECT_EQ(f["iterations"][0]["name"], ":cpfold:warmup0");
  EXPECT_TRUE(f["iterations"][0]["warmup"]);
  EXPECT_EQ(f["iterations"][1]["name"], ":cpfold:iter1");
}

TEST(HtmlReport, ScriptSafeEscaping) {
  EXPECT_EQ(render::EscapeJsonForScript(R"({"a":"</script><!--x"})"), R"({"a":"<\/script>\u003c!--x"})");
  json back = json::parse(render::EscapeJsonForScript(R"({"a":"</script><!--x"})"));
  EXPECT_EQ(back["a"], "</script><!--x");
}

TEST(HtmlReport, OutputFlagWritesOtherFormatsToo) {
  const std::string path = RealExport("cpwork-trace");
  std::string out = TempDir() + "/cpwork-trace.report.json";
  CliResult r = RunCli({"report", "--format", "json", "-o", out, "--force", path});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(json::parse(ReadFile(out)), ReportJson(path));
  // What was written is said, as `export` says it: the file, its size, what to do with an HTML page.
  const std::string size = fmt::format("{:.1f} KB", std::filesystem::file_size(out) / 1024.0);
  EXPECT_NE(r.err.find("cpprof: wrote the JSON readout to '" + out + "' (" + size + ")\n"), std::string::npos) << r.err;
  const std::string page = TempDir() + "/cpwork-trace.said.html";
  CliResult html = RunCli({"report", "--format", "html", "-o", page, "--force", path});
  ASSERT_EQ(html.rc, 0) << html.err;
  EXPECT_NE(html.err.find("cpprof: wrote the HTML report to '" + page + "' ("), std::string::npos) << html.err;
  EXPECT_NE(html.err.find("): open it in a browser\n"), std::string::npos) << html.err;
  std::filesystem::remove(page);
  CliResult console = RunCli({"report", "--format", "json", path});
  EXPECT_EQ(console.err.find("cpprof: wrote"), std::string::npos) << "stdout is not a file to name";
}

TEST(HtmlReport, UnwritableOutputIsAClearError) {
  CliResult r = RunCli({"report", "--format", "html", "-o", "/nonexistent-dir/x.html", RealExport("cpwork-trace")});
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(
      r.err.find("cannot write '/nonexistent-dir/x.html': creating a temporary file in '/nonexistent-dir' failed"),
      std::string::npos)
      << r.err;
}

// A moderately big synthetic export (200k kernels over 4 ranks): lanes are downsampled to the
// cap and the page stays small. (The 5M-kernel export is measured by hand: docs/html-report.md.)
TEST(HtmlReport, BigExportIsDownsampledToTheCap) {
  const std::string db = TempDir() + "/synthetic-200k.sqlite";
  if (!std::filesystem::exists(db)) {
    std::string cmd = std::string(CPPROF_SYNTHETIC_BINARY) + " " + db +
                      " --kernels 200000 --runtime 20000 --nvtx 20000 --ranks 4 > /dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  const int bins = 1000;
  std::string html = Html(db, {"--timeline-bins", std::to_string(bins)});
  json h = EmbeddedData(html);
  const json& tl = h["timeline"];
  EXPECT_EQ(tl["max_bins"], bins);
  int downsampled = 0;
  size_t total_bins = 0;
  for (const json& rt : tl["ranks"]) {
    for (const json& l : rt["lanes"]) {
      EXPECT_LE(l["bins"].size() / 4, static_cast<size_t>(bins));
      total_bins += l["bins"].size() / 4;
      if (l["downsampled"]) {
        ++downsampled;
        EXPECT_GT(int64_t(l["intervals"]), bins);
      }
    }
    for (const json& m : rt["modules"]) EXPECT_LE(m["runs"].size() / 3, static_cast<size_t>(bins));
  }
  EXPECT_GT(downsampled, 0);
  EXPECT_LE(total_bins, tl["ranks"].size() * tl["lanes"].size() * bins);
  // 200k kernels: about 4 ranks x 7 lanes x 1000 bins x 4 numbers.
  EXPECT_LT(html.size(), 2u << 20) << html.size();
}

// Text shows kernel names shortened by their template arguments (never cut in the middle);
// --full-names shows them whole, in report and diff; JSON always has both.
TEST(KernelNames, TextShortensAndFullNamesKeepsThemWhole) {
  const std::string path = RealExport("cpfold-trunk-2x2");
  const std::string full =
      "void at::native::elementwise_kernel<(int)128, (int)4, void "
      "at::native::gpu_kernel_impl<at::native::CUDAFunctor_add<float>>(at::TensorIteratorBase &, const T1 "
      "&)::[lambda(int) (instance 1)]>(int, T3)";
  const std::string short_name = "at::native::elementwise_kernel<...CUDAFunctor_add<float>...>";
  CliResult text = RunCli({"report", path, "--wide"});
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_NE(text.out.find(short_name), std::string::npos);
  EXPECT_EQ(text.out.find(full), std::string::npos);
  CliResult whole = RunCli({"report", path, "--wide", "--full-names"});
  EXPECT_NE(whole.out.find(full), std::string::npos);
  CliResult diff = RunCli({"diff", path, path, "--top", "0", "--wide"});
  EXPECT_NE(diff.out.find(short_name), std::string::npos) << diff.out;
  CliResult diff_full = RunCli({"diff", path, path, "--top", "0", "--full-names", "--wide"});
  EXPECT_NE(diff_full.out.find(full), std::string::npos);
  bool found = false;
  const json j = ReportJson(path);
  for (const json& rank : j["per_rank"]) {
    for (const json& k : rank["top_kernels"]) {
      if (k["name"] != full) continue;
      found = true;
      EXPECT_EQ(k["short_name"], "at::native::elementwise_kernel<\u2026CUDAFunctor_add<float>\u2026>");
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace cpprof::testing
