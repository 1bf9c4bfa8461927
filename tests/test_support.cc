// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "test_support.h"

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "cli/cli.h"

namespace cpprof::testing {

namespace fs = std::filesystem;

std::string DataPath(const std::string& rel) { return std::string(CPPROF_TEST_DATA) + "/" + rel; }

namespace {
char g_temp_dir[4096];  // plain storage: the exit handler runs after static destructors may have
void RemoveTempDir() {
  std::error_code ec;
  fs::remove_all(g_temp_dir, ec);
}
}  // namespace

std::string TempDir() {
  static std::string dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "cpprof-test-XXXXXX").string();
    if (tmpl.size() >= sizeof(g_temp_dir) || !mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    // Every test runs in a process of its own (gtest_discover_tests): remove the directory at
    // exit, or thousands of them pile up. Children of RunBinary leave with _exit, not exit.
    std::snprintf(g_temp_dir, sizeof(g_temp_dir), "%s", tmpl.c_str());
    std::atexit(RemoveTempDir);
    return tmpl;
  }();
  return dir;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::vector<std::string> RealExportNames(const std::string& folder) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(DataPath(folder))) {
    if (fs::exists(e.path() / (e.path().filename().string() + ".sqlite.xz"))) {
      names.push_back(e.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string RealExport(const std::string& name, const std::string& folder) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  // Decompressed once per machine into a cache shared by the test processes (keyed by the
  // compressed size, so a changed export gets a new copy), written whole then renamed.
  std::string src = DataPath(folder + "/" + name + "/" + name + ".sqlite.xz");
  fs::path cache = fs::temp_directory_path() / ("cpprof-test-exports-" + std::to_string(getuid()));
  fs::create_directories(cache);
  std::string out = (cache / (name + "-" + std::to_string(fs::file_size(src)) + ".sqlite")).string();
  if (fs::exists(out)) return out;
  std::string part = out + ".part" + std::to_string(getpid());
  std::string cmd = "xz -dc '" + src + "' > '" + part + "' && mv '" + part + "' '" + out + "'";
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("cannot decompress " + src + " (is xz installed?)");
  return out;
}

std::string ReadFileOrXz(const std::string& path) {
  if (fs::exists(path) || !fs::exists(path + ".xz")) return ReadFile(path);
  std::string out = TempDir() + "/" + fs::path(path).filename().string();
  std::string cmd = "xz -dc '" + path + ".xz' > '" + out + "'";
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("cannot decompress " + path + ".xz (is xz installed?)");
  return ReadFile(out);
}

std::string SqlFixture(const std::string& name) {
  return MakeDatabase(name + ".sqlite",
                      ReadFile(DataPath("sql/_schema.sql")) + ReadFile(DataPath("sql/" + name + ".sql")));
}

std::string MakeDatabase(const std::string& name, const std::string& sql) {
  std::string path = TempDir() + "/" + name;
  fs::remove(path);
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) throw std::runtime_error("sqlite3_open " + path);
  char* msg = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg) != SQLITE_OK) {
    std::string m = msg ? msg : "?";
    sqlite3_free(msg);
    sqlite3_close(db);
    throw std::runtime_error("fixture SQL failed: " + m);
  }
  sqlite3_close(db);
  return path;
}

CliResult RunCli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  CliResult r;
  r.rc = cli::Run(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

CliResult RunBinary(const std::vector<std::string>& args) {
  std::string outp = TempDir() + "/bin.out", errp = TempDir() + "/bin.err";
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    std::string bin = CPPROF_BINARY;
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (!freopen(outp.c_str(), "w", stdout) || !freopen(errp.c_str(), "w", stderr)) _exit(127);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CliResult r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadFile(outp);
  r.err = ReadFile(errp);
  return r;
}

namespace {

// "start = start - 5" (quoted: `end` is a keyword), comma-separated after the first.
std::string ShiftSet(const std::string& so_far, const char* column, int64_t ns) {
  return std::string(so_far.empty() ? "" : ", ") + "\"" + column + "\" = \"" + column + "\" - " + std::to_string(ns);
}

void Exec(sqlite3* db, const std::string& sql) {
  char* msg = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg) != SQLITE_OK) {
    std::string m = msg ? msg : "?";
    sqlite3_free(msg);
    throw std::runtime_error("SplitPerProcess: " + m + " in: " + sql);
  }
}

std::vector<std::vector<std::string>> Query(sqlite3* db, const std::string& sql) {
  std::vector<std::vector<std::string>> rows;
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
    throw std::runtime_error(std::string("SplitPerProcess: ") + sqlite3_errmsg(db) + " in: " + sql);
  }
  while (sqlite3_step(st) == SQLITE_ROW) {
    std::vector<std::string> row;
    for (int i = 0; i < sqlite3_column_count(st); ++i) {
      const unsigned char* t = sqlite3_column_text(st, i);
      row.emplace_back(t ? reinterpret_cast<const char*>(t) : "");
    }
    rows.push_back(std::move(row));
  }
  sqlite3_finalize(st);
  return rows;
}

}  // namespace

std::vector<std::string> SplitPerProcess(const std::string& export_path, const std::string& out_dir,
                                         const SplitOptions& options) {
  std::filesystem::create_directories(out_dir);
  std::vector<std::string> gpids;
  {
    sqlite3* db = nullptr;
    sqlite3_open_v2(export_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    for (auto& row :
         Query(db, "SELECT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY 1 ORDER BY min(deviceId), 1")) {
      gpids.push_back(row[0]);
    }
    sqlite3_close(db);
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < gpids.size(); ++i) {
    std::string path = out_dir + "/rep." + std::to_string(i) + ".sqlite";
    std::filesystem::copy_file(export_path, path, std::filesystem::copy_options::overwrite_existing);
    sqlite3* db = nullptr;
    sqlite3_open(path.c_str(), &db);
    Exec(db, "BEGIN");
    const int64_t later = i < options.start_later_ns.size() ? options.start_later_ns[i] : 0;
    const int64_t utc_error = i < options.utc_error_ns.size() ? options.utc_error_ns[i] : 0;
    for (auto& t : Query(db, "SELECT name FROM sqlite_master WHERE type = 'table'")) {
      const std::string& table = t[0];
      std::vector<std::string> cols;
      for (auto& c : Query(db, "SELECT name FROM pragma_table_info('" + table + "')")) cols.push_back(c[0]);
      auto has = [&](const char* c) { return std::find(cols.begin(), cols.end(), c) != cols.end(); };
      if (has("globalPid")) {
        Exec(db, "DELETE FROM " + table + " WHERE globalPid IS NOT " + gpids[i]);
      } else if (has("globalTid")) {
        Exec(db, "DELETE FROM " + table + " WHERE (globalTid & ~16777215) IS NOT " + gpids[i]);
      }
      if (later == 0) continue;
      std::string set;
      for (const char* c : {"start", "end", "timestamp"}) {
        if (has(c)) set += ShiftSet(set, c, later);
      }
      if (!set.empty()) Exec(db, "UPDATE " + table + " SET " + set);
    }
    if (later != 0 || utc_error != 0) {
      Exec(db,
           "UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = utcEpochNs + " + std::to_string(later + utc_error));
    }
    if (options.drop_nccl_rank_payloads) {
      Exec(db, "DELETE FROM NVTX_PAYLOAD_SCHEMA_ENTRIES WHERE name IN ('Rank', 'No. of ranks', 'CUDA device')");
    }
    if (i < options.env_rank.size()) {
      Exec(db, "INSERT INTO META_DATA_CAPTURE (name, value) VALUES ('PROCESS_0:ENVIRONMENT_VARIABLE', 'RANK=\"" +
                   std::to_string(options.env_rank[i]) + "\"')");
    }
    Exec(db, "COMMIT");
    sqlite3_close(db);
    out.push_back(path);
  }
  return out;
}

std::string WriteDryRunNsys(const std::string& dir) {
  const std::string nsys = dir + "/nsys";
  WriteFile(nsys,
            "#!/bin/sh\ncase \"$*\" in\n"
            "  --version) echo 'NVIDIA Nsight Systems version 2025.3.1.0';;\n"
            "  'profile --help') cat '" +
                DataPath("fakes/h200/nsys-profile--help.txt") +
                "';;\n"
                "  'export --help') cat '" +
                DataPath("fakes/h200/nsys-export--help.txt") +
                "';;\n"
                "  'status -e') echo 'CPU Profiling Environment (process-tree): OK';;\n"
                "  *) echo ran > '" +
                dir + "/ran'; exit 1;;\nesac\n");
  std::filesystem::permissions(nsys, std::filesystem::perms::owner_all);
  return nsys;
}

}  // namespace cpprof::testing
