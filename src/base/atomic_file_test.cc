#include "base/atomic_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace cpprof {
namespace {

namespace fs = std::filesystem;

std::string Dir(const std::string& name) {
  std::string d = fs::temp_directory_path().string() + "/cpprof-atomic-" + std::to_string(::getpid()) + "-" + name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string Read(const std::string& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

size_t Entries(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST(WriteFileAtomically, WritesAndReplacesOnlyWhenAllowed) {
  std::string d = Dir("basic");
  std::string p = d + "/out.txt";
  ASSERT_TRUE(WriteFileAtomically(p, "one\n").ok());
  EXPECT_EQ(Read(p), "one\n");
  WriteFileOptions keep;
  keep.replace_existing = false;
  Status s = WriteFileAtomically(p, "two\n", keep);
  EXPECT_EQ(s.code(), ExitCode::kUsage);
  EXPECT_EQ(s.message(), "-o '" + p + "' exists; give --force to replace it, or another file name.");
  EXPECT_EQ(Read(p), "one\n");
  ASSERT_TRUE(WriteFileAtomically(p, "two\n").ok());
  EXPECT_EQ(Read(p), "two\n");
  EXPECT_EQ(Entries(d), 1u);
  fs::remove_all(d);
}

// Two writers of one path without replace_existing: the file the first put in place while the
// second was writing is kept, and the second refuses (it used to rename over it).
TEST(WriteFileAtomically, TheSecondOfTwoWritersRefuses) {
  std::string d = Dir("two-writers");
  std::string p = d + "/out.txt";
  for (bool unnamed : {true, false}) {
    fs::remove(p);
    WriteFileOptions keep;
    keep.replace_existing = false;
    keep.unnamed_temp = unnamed;
    keep.verify = [&](const std::string&) {  // after the check, before the rename: the other writer
      return WriteFileAtomically(p, "first\n");
    };
    Status s = WriteFileAtomically(p, "second\n", keep);
    EXPECT_EQ(s.code(), ExitCode::kUsage) << unnamed;
    EXPECT_NE(s.message().find("appeared while cpprof was writing it"), std::string::npos) << s.message();
    EXPECT_EQ(Read(p), "first\n");
    EXPECT_EQ(Entries(d), 1u);  // no temporary left
  }
  fs::remove_all(d);
}

TEST(WriteFileAtomically, AFailedWriteLeavesThePathAsItWas) {
  for (bool unnamed : {true, false}) {
    std::string d = Dir("fail");
    std::string p = d + "/out.txt";
    ASSERT_TRUE(WriteFileAtomically(p, "old\n").ok());
    WriteFileOptions o;
    o.unnamed_temp = unnamed;
    Status s = WriteFileAtomically(
        p,
        [](std::ostream& out) {
          out << "half a file";
          return Error(ExitCode::kBadInput, "the export went bad halfway");
        },
        o);
    EXPECT_EQ(s.message(), "the export went bad halfway");
    EXPECT_EQ(Read(p), "old\n");
    EXPECT_EQ(Entries(d), 1u) << "no temporary file left";
    o.verify = [](const std::string&) { return Error(ExitCode::kError, "read back wrong"); };
    EXPECT_EQ(WriteFileAtomically(p, "new\n", o).message(), "read back wrong");
    EXPECT_EQ(Read(p), "old\n");
    EXPECT_EQ(Entries(d), 1u);
    fs::remove_all(d);
  }
}

TEST(WriteFileAtomically, NeverTheInputNorADirectory) {
  std::string d = Dir("input");
  std::string in = d + "/in.sqlite";
  ASSERT_TRUE(WriteFileAtomically(in, "export").ok());
  fs::create_symlink(in, d + "/alias");
  WriteFileOptions o;
  o.inputs = {in};
  for (const std::string& p : {in, d + "/alias", d + "/./in.sqlite"}) {
    Status s = WriteFileAtomically(p, "report", o);
    EXPECT_EQ(s.code(), ExitCode::kUsage) << p;
    EXPECT_NE(s.message().find("is the input '" + in + "'"), std::string::npos) << s.message();
  }
  EXPECT_EQ(Read(in), "export");
  EXPECT_NE(WriteFileAtomically(d, "x").message().find("is a directory"), std::string::npos);
  EXPECT_TRUE(WriteFileAtomically("/dev/null", "into a device, in place").ok());
  fs::remove_all(d);
}

// Row 11 of issue 19: a signal during the write leaves no temporary file (SIGKILL too, where the
// file system has unnamed temporary files).
TEST(WriteFileAtomically, SignalDuringTheWriteLeavesNothing) {
  struct Case {
    int sig;
    bool unnamed;
  };
  for (Case c :
       {Case{SIGINT, false}, Case{SIGTERM, false}, Case{SIGINT, true}, Case{SIGTERM, true}, Case{SIGKILL, true}}) {
    std::string d = Dir("signal");
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      WriteFileOptions o;
      o.unnamed_temp = c.unnamed;
      (void)WriteFileAtomically(
          d + "/out.json",
          [&](std::ostream& out) {
            out << std::string(1 << 20, 'x');
            out.flush();
            ::raise(c.sig);
            return OkStatus();
          },
          o);
      ::_exit(0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == c.sig) << c.sig << " " << status;
    EXPECT_EQ(Entries(d), 0u) << "signal " << c.sig << (c.unnamed ? " (unnamed)" : " (mkstemp)");
    fs::remove_all(d);
  }
}

// Output written straight to a regular file is cut back to where it began on SIGINT/SIGTERM, then
// the process ends by the signal; after the guard is gone, a signal leaves the file alone.
TEST(TruncateOnSignal, SignalCutsTheFileBackThenEndsTheProcess) {
  for (int sig : {SIGINT, SIGTERM}) {
    for (bool guarded : {true, false}) {
      std::string d = Dir("truncate");
      const std::string path = d + "/out.txt";
      std::ofstream(path) << "kept\n";
      pid_t pid = ::fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        int fd = ::open(path.c_str(), O_WRONLY | O_APPEND);
        if (fd < 0) ::_exit(3);
        {
          TruncateOnSignal guard(fd, 5);
          if (::write(fd, "partial", 7) != 7) ::_exit(4);
          if (guarded) ::raise(sig);
        }
        if (::write(fd, "-after", 6) != 6) ::_exit(4);
        ::raise(sig);
        ::_exit(0);
      }
      int status = 0;
      ASSERT_EQ(::waitpid(pid, &status, 0), pid);
      EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << sig << " " << status;
      EXPECT_EQ(Read(path), guarded ? "kept\n" : "kept\npartial-after") << "signal " << sig;
      fs::remove_all(d);
    }
  }
}

}  // namespace
}  // namespace cpprof
