// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "profile/process_tree.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>

namespace cpprof::profile {

namespace {

struct ProcStat {
  pid_t ppid = 0;
  char state = '?';
};

// /proc/PID/stat: "pid (comm) state ppid ...": comm may hold spaces and ')', so read after the last ')'.
bool ReadStat(pid_t pid, ProcStat* st) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return false;
  size_t close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream rest(line.substr(close + 1));
  rest >> st->state >> st->ppid;
  return static_cast<bool>(rest);
}

std::map<pid_t, ProcStat> AllProcesses() {
  std::map<pid_t, ProcStat> all;
  DIR* d = ::opendir("/proc");
  if (!d) return all;
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    ProcStat st;
    if (ReadStat(static_cast<pid_t>(pid), &st)) all[static_cast<pid_t>(pid)] = st;
  }
  ::closedir(d);
  return all;
}

bool Alive(pid_t pid) {
  ProcStat st;
  return ReadStat(pid, &st) && st.state != 'Z' && st.state != 'X';
}

}  // namespace

std::vector<pid_t> Descendants(pid_t root) {
  std::map<pid_t, ProcStat> all = AllProcesses();
  std::multimap<pid_t, pid_t> children;
  for (const auto& [pid, st] : all) children.emplace(st.ppid, pid);
  std::vector<pid_t> out;
  std::vector<pid_t> frontier = {root};
  while (!frontier.empty()) {
    std::vector<pid_t> next;
    for (pid_t p : frontier) {
      auto [b, e] = children.equal_range(p);
      for (auto it = b; it != e; ++it) {
        if (all[it->second].state != 'Z') out.push_back(it->second);
        next.push_back(it->second);
      }
    }
    frontier = std::move(next);
  }
  return out;
}

int KillDescendants(pid_t root, double grace_s) {
  std::vector<pid_t> first = Descendants(root);
  std::set<pid_t> all(first.begin(), first.end());
  for (pid_t p : first) ::kill(p, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(grace_s * 1000));
  while (std::chrono::steady_clock::now() < deadline) {
    bool any = false;
    for (pid_t p : all) any = any || Alive(p);
    if (!any) break;
    for (pid_t p : Descendants(root)) all.insert(p);  // started meanwhile
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (pid_t p : Descendants(root)) all.insert(p);
  for (pid_t p : all) {
    if (Alive(p)) ::kill(p, SIGKILL);
  }
  return static_cast<int>(all.size());
}

}  // namespace cpprof::profile
