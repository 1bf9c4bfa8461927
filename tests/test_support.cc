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

std::vector<std::string> RealExportNames() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(DataPath("real"))) {
    if (fs::exists(e.path() / (e.path().filename().string() + ".sqlite.xz"))) {
      names.push_back(e.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string RealExport(const std::string& name) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  // Decompressed once per machine into a cache shared by the test processes (keyed by the
  // compressed size, so a changed export gets a new copy), written whole then renamed.
  std::string src = DataPath("real/" + name + "/" + name + ".sqlite.xz");
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

}  // namespace cpprof::testing
