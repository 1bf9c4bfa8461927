// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "doctor/doctor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

namespace cpprof::doctor {

namespace {

namespace fs = std::filesystem;
using runner::Environment;

std::string FirstLine(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find('\n', b);
  std::string line = s.substr(b, e == std::string::npos ? std::string::npos : e - b);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

std::string Dirname(const std::string& p) {
  size_t s = p.rfind('/');
  if (s == std::string::npos) return ".";
  return s == 0 ? "/" : p.substr(0, s);
}

std::string ArchLabel(const GpuInfo& g) {
  auto a = ArchForComputeCap(g.cc_major, g.cc_minor);
  if (!a) return fmt::format("compute capability {}", g.compute_cap);
  return fmt::format("sm_{}{} {}", g.cc_major, g.cc_minor, a->arch);
}

class Prober {
 public:
  Prober(const DoctorOptions& options, runner::ProcessRunner& runner, const Environment& env)
      : options_(options), runner_(runner), env_(env) {}

  StatusOr<runner::ProcessResult> Run(const std::vector<std::string>& argv,
                                      const std::map<std::string, std::string>& extra_env = {}, double timeout_s = 0) {
    runner::RunOptions o;
    o.env = env_.vars();
    for (const auto& [k, v] : extra_env) (*o.env)[k] = v;
    o.timeout_s = timeout_s > 0 ? timeout_s : options_.timeout_s;
    return runner_.Run(argv, o);
  }

  void Python(DoctorFindings& f) { f.python = ProbePython(runner_, env_, FindWorkloadPython(env_, options_.python)); }

  void Gpus(DoctorFindings& f);
  void FindNsys(DoctorFindings& f);
  void ChooseNsys(DoctorFindings& f);
  void Importer(DoctorFindings& f);
  void NsysSelfReport(DoctorFindings& f);
  void Deep(DoctorFindings& f);
  void BusyAndTopology(DoctorFindings& f);

 private:
  void AddCandidate(DoctorFindings& f, const std::string& path, const std::string& label);
  void Walk(DoctorFindings& f, const std::string& root, int depth, const std::string& label);
  void ReadVersions(DoctorFindings& f);

  const DoctorOptions& options_;
  runner::ProcessRunner& runner_;
  const Environment& env_;
};

// ---- GPUs ------------------------------------------------------------------------------------

void Prober::Gpus(DoctorFindings& f) {
  if (!env_.FindOnPath("nvidia-smi")) {
    f.nvidia_smi_error = "nvidia-smi not found on PATH";
    return;
  }
  f.nvidia_smi_found = true;
  auto r = Run({"nvidia-smi", "--query-gpu=index,name,compute_cap,memory.used,memory.total,uuid", "--format=csv"});
  if (!r.ok()) {
    f.nvidia_smi_error = r.status().message();
    return;
  }
  if (!r->ok()) {
    f.nvidia_smi_error = fmt::format("nvidia-smi {}: {}", r->Describe(), FirstLine(r->out + "\n" + r->err));
    return;
  }
  auto gpus = ParseGpuQuery(r->out);
  if (!gpus.ok()) {
    f.nvidia_smi_error = gpus.status().message();
    return;
  }
  f.gpus = std::move(*gpus);
  if (options_.gpus.empty()) {
    for (const auto& g : f.gpus) f.targets.push_back(g.index);
  } else {
    f.targets = options_.gpus;
  }
}

const GpuInfo* FindGpu(const DoctorFindings& f, int index) {
  for (const auto& g : f.gpus) {
    if (g.index == index) return &g;
  }
  return nullptr;
}

// ---- finding nsys ----------------------------------------------------------------------------

void Prober::AddCandidate(DoctorFindings& f, const std::string& path, const std::string& label) {
  if (!Environment::IsExecutable(path)) return;
  std::string real = Environment::RealPath(path);
  for (auto& c : f.candidates) {
    if (c.real_path == real) {
      if (std::find(c.found_by.begin(), c.found_by.end(), label) == c.found_by.end()) c.found_by.push_back(label);
      return;
    }
  }
  NsysCandidate c;
  c.path = path;
  c.real_path = real;
  c.found_by.push_back(label);
  f.candidates.push_back(std::move(c));
}

// A bounded walk for files named nsys: conda environments and wheels put it a few folders down
// (bin/nsys, nsight-systems-2024.5.1/target-linux-x64/nsys). Big folders that never hold it are
// skipped so a walk of a whole conda install stays fast.
void Prober::Walk(DoctorFindings& f, const std::string& root, int depth, const std::string& label) {
  static const std::set<std::string> kSkip = {"pkgs", "envs", "conda-meta", "include", "share",   "man",
                                              "ssl",  "etc",  "lib",        "lib64",   "libexec", "__pycache__",
                                              "docs", "doc",  "include",    "src",     "test",    "tests"};
  std::error_code ec;
  fs::directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  if (ec) return;
  std::vector<fs::directory_entry> entries;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    entries.push_back(*it);
  }
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return runner::VersionLess(a.path().string(), b.path().string()); });
  for (const auto& e : entries) {
    std::string name = e.path().filename().string();
    if (name == "nsys" && e.is_regular_file(ec)) {
      AddCandidate(f, e.path().string(), label);
    } else if (depth > 0 && e.is_directory(ec) && !e.is_symlink(ec) && !kSkip.count(name) && name[0] != '.') {
      Walk(f, e.path().string(), depth - 1, label);
    }
  }
}

void Prober::FindNsys(DoctorFindings& f) {
  if (!options_.nsys.empty()) {
    std::string p = options_.nsys;
    if (p.find('/') == std::string::npos) {
      if (auto found = env_.FindOnPath(p)) p = *found;
    }
    f.searched.push_back("--nsys " + options_.nsys);
    NsysCandidate c;
    c.path = p;
    c.real_path = Environment::RealPath(p);
    c.found_by.push_back("--nsys");
    if (!Environment::IsExecutable(p)) c.error = fmt::format("'{}' does not exist or is not executable", options_.nsys);
    f.candidates.push_back(std::move(c));
    return;
  }
  // 1. PATH, in order
  f.searched.push_back("PATH");
  std::string path = env_.GetOr("PATH", "");
  for (size_t start = 0; start <= path.size();) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (!dir.empty()) AddCandidate(f, dir + "/nsys", "PATH");
    start = end + 1;
  }
  // 2. the active conda environment, then every environment of the usual conda installs
  if (auto prefix = env_.Get("CONDA_PREFIX"); prefix && !prefix->empty()) {
    f.searched.push_back("$CONDA_PREFIX (" + *prefix + ")");
    Walk(f, *prefix, 3, "$CONDA_PREFIX");
  }
  std::string home = env_.Home();
  for (const char* base : {"miniconda3", "anaconda3", "miniforge3", "mambaforge"}) {
    std::string root = home + "/" + base;
    if (!Environment::IsDir(root)) continue;
    f.searched.push_back("~/" + std::string(base) + " and its envs");
    std::string label = "conda (~/" + std::string(base) + ")";
    Walk(f, root, 3, label);
    for (const auto& e : Environment::Glob(root + "/envs/*")) Walk(f, e, 3, label);
  }
  // 3. standalone Nsight Systems installs, the nsys bundled inside Nsight Compute, CUDA toolkits
  f.searched.push_back("/opt/nvidia/nsight-systems/*");
  for (const char* pat :
       {"/opt/nvidia/nsight-systems/*/bin/nsys", "/opt/nvidia/nsight-systems/*/target-linux-*/nsys",
        "/opt/nvidia/nsight-systems-cli/*/bin/nsys", "/opt/nvidia/nsight-systems-cli/*/target-linux-*/nsys"}) {
    for (const auto& p : Environment::Glob(env_.System(pat))) AddCandidate(f, p, "Nsight Systems install");
  }
  f.searched.push_back("/opt/nvidia/nsight-compute/*/host/target-linux-x64");
  for (const auto& p : Environment::Glob(env_.System("/opt/nvidia/nsight-compute/*/host/target-linux-*/nsys"))) {
    AddCandidate(f, p, "Nsight Compute bundle");
  }
  f.searched.push_back("/usr/local/cuda*");
  for (const char* pat : {"/usr/local/cuda*/bin/nsys", "/usr/local/cuda*/nsight-systems*/bin/nsys",
                          "/usr/local/cuda*/nsight-systems*/target-linux-*/nsys",
                          "/usr/local/cuda*/nsight-compute*/host/target-linux-*/nsys"}) {
    for (const auto& p : Environment::Glob(env_.System(pat))) AddCandidate(f, p, "CUDA toolkit");
  }
  // 4. wheels in the workload Python's site-packages
  for (const auto& sp : f.python.site_packages) {
    f.searched.push_back(sp + "/{nvidia,nsight}*");
    for (const char* pat : {"/nvidia*", "/nsight*"}) {
      for (const auto& d : Environment::Glob(sp + pat)) Walk(f, d, 4, "Python site-packages");
    }
  }
}

// Each candidate's `nsys --version`; a copy that does not run or names no release gets its error.
void Prober::ReadVersions(DoctorFindings& f) {
  for (auto& c : f.candidates) {
    if (!c.error.empty()) continue;
    auto r = Run({c.path, "--version"});
    if (!r.ok()) {
      c.error = r.status().message();
      continue;
    }
    std::string text = FirstLine(r->out.empty() ? r->err : r->out);
    c.version_text = text;
    if (!r->ok()) {
      c.error =
          fmt::format("'{} --version' {}: {}", c.path, r->Describe(), FirstLine(r->err.empty() ? r->out : r->err));
      continue;
    }
    c.version = ParseNsysVersion(text);
    if (!c.version) c.error = fmt::format("'{} --version' printed no release number: '{}'", c.path, text);
  }
}

// Fit to the target GPUs' architectures: whether each copy supports them (and is recommended).
void FitToTargets(const std::vector<ArchSupport>& needs, DoctorFindings& f) {
  for (auto& c : f.candidates) {
    if (!c.version) continue;
    c.supports_targets = true;
    c.recommended_for_targets = true;
    for (const auto& a : needs) {
      if (*c.version < a.minimum) {
        c.supports_targets = false;
        c.unsupported_reason =
            fmt::format("predates {} ({}) support: needs >= {}", a.sm, a.arch, a.minimum.ShortString());
      }
      if (*c.version < a.recommended) c.recommended_for_targets = false;
    }
  }
}

// The newest that supports every target; the earliest found among equals (PATH first). -1: none runs.
int NewestSupporting(const DoctorFindings& f) {
  int best = -1;
  for (size_t i = 0; i < f.candidates.size(); ++i) {
    const auto& c = f.candidates[i];
    if (!c.version) continue;
    if (best < 0) {
      best = static_cast<int>(i);
      continue;
    }
    const auto& b = f.candidates[static_cast<size_t>(best)];
    if (std::pair(c.supports_targets, *c.version) > std::pair(b.supports_targets, *b.version))
      best = static_cast<int>(i);
  }
  return best;
}

// Why the chosen copy was chosen, in words (`given`: --nsys named it).
std::string WhyChosen(const DoctorFindings& f, const std::vector<ArchSupport>& needs, bool given) {
  size_t runnable = 0, supporting = 0;
  for (const auto& x : f.candidates) {
    runnable += x.version.has_value();
    supporting += x.version && x.supports_targets;
  }
  std::string fit;
  if (!needs.empty()) {
    std::vector<std::string> parts;
    std::set<std::string> seen;
    for (const auto& a : needs) {
      if (seen.insert(a.sm).second)
        parts.push_back(fmt::format("{} {}, needs >= {}", a.sm, a.arch, a.minimum.ShortString()));
    }
    fit = fmt::format(" ({})", fmt::join(parts, "; "));
  }
  if (given) return "given with --nsys";
  if (runnable == 1) return needs.empty() ? "the only copy found" : fmt::format("the only copy found{}", fit);
  if (needs.empty()) return fmt::format("the newest of {} copies (no GPU to fit them to)", runnable);
  if (supporting == 0) return fmt::format("the newest of {} copies; none supports the GPUs{}", runnable, fit);
  return fmt::format("the newest of {} {} that support{} the GPUs{}", supporting, supporting == 1 ? "copy" : "copies",
                     supporting == 1 ? "s" : "", fit);
}

void Prober::ChooseNsys(DoctorFindings& f) {
  ReadVersions(f);
  std::vector<ArchSupport> needs;
  for (int t : f.targets) {
    const GpuInfo* g = FindGpu(f, t);
    if (!g) continue;
    if (auto a = ArchForComputeCap(g->cc_major, g->cc_minor)) needs.push_back(*a);
  }
  FitToTargets(needs, f);
  f.chosen = NewestSupporting(f);
  if (f.chosen >= 0) f.chosen_why = WhyChosen(f, needs, !options_.nsys.empty());
}

// ---- can it make a report? -------------------------------------------------------------------

// Which Debian/Ubuntu package provides a library QdstrmImporter may miss.
std::string PackageFor(const std::string& lib) {
  if (lib.rfind("libdw.so", 0) == 0) return "libdw1";
  if (lib.rfind("libelf.so", 0) == 0) return "libelf1";
  return "";
}

std::vector<std::string> LoaderMissingLibs(const std::string& text) {
  std::vector<std::string> libs;
  // The loader: "PROG: error while loading shared libraries: libdw.so.1: cannot open shared object file: ..."
  static constexpr std::string_view kLoader = "error while loading shared libraries: ";
  for (size_t p = text.find(kLoader); p != std::string::npos; p = text.find(kLoader, p + 1)) {
    size_t b = p + kLoader.size(), e = text.find(": cannot open shared object file", b);
    if (e != std::string::npos && e > b && text.find_first_of(" \n", b) > e) libs.push_back(text.substr(b, e - b));
  }
  // ldd: "\tlibdw.so.1 => not found"
  for (size_t start = 0; start < text.size();) {
    size_t nl = text.find('\n', start);
    std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    if (size_t arrow = line.find(" => not found"); arrow != std::string::npos) {
      size_t b = line.find_first_not_of(" \t");
      if (b < arrow) libs.push_back(line.substr(b, arrow - b));
    }
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  std::sort(libs.begin(), libs.end());
  libs.erase(std::unique(libs.begin(), libs.end()), libs.end());
  return libs;
}

void Prober::Importer(DoctorFindings& f) {
  const NsysCandidate* c = f.Chosen();
  if (!c) return;
  ImporterCheck& imp = f.importer;
  // nsys in <X>/target-linux-x64 (or <X>/host/target-linux-x64 in an Nsight Compute bundle);
  // QdstrmImporter beside it or in a sibling host-linux-* / linux-desktop-* folder.
  std::string dir = Dirname(c->real_path);
  std::string parent = Dirname(dir);
  std::vector<std::string> patterns = {dir + "/QdstrmImporter", parent + "/host-linux-*/QdstrmImporter",
                                       parent + "/linux-desktop-*/QdstrmImporter",
                                       parent + "/*/host-linux-*/QdstrmImporter"};
  for (const auto& pat : patterns) {
    imp.searched.push_back(pat);
    for (const auto& p : Environment::Glob(pat)) {
      if (imp.path.empty() && Environment::IsExecutable(p)) imp.path = p;
    }
    if (!imp.path.empty()) break;
  }
  if (imp.path.empty()) return;
  auto loads = [&](const std::map<std::string, std::string>& extra, std::string* output, int* code) {
    auto r = Run({imp.path, "--version"}, extra, 30);
    if (!r.ok()) {
      *output = r.status().message();
      *code = -1;
      return false;
    }
    *output = r->out + r->err;
    *code = r->exit_code;
    bool loader_error = output->find("error while loading shared libraries") != std::string::npos;
    return !r->timed_out && r->term_signal == 0 && !loader_error && r->exit_code != 127;
  };
  imp.checked = true;
  imp.loads = loads({}, &imp.output, &imp.exit_code);
  if (imp.loads) return;
  imp.missing_libs = LoaderMissingLibs(imp.output);
  if (env_.FindOnPath("ldd")) {
    if (auto r = Run({"ldd", imp.path}, {}, 30); r.ok()) {
      for (const auto& lib : LoaderMissingLibs(r->out)) imp.missing_libs.push_back(lib);
      std::sort(imp.missing_libs.begin(), imp.missing_libs.end());
      imp.missing_libs.erase(std::unique(imp.missing_libs.begin(), imp.missing_libs.end()), imp.missing_libs.end());
    }
  }
  if (imp.missing_libs.empty()) return;
  // A folder already on this machine that holds every missing library: conda environments often do.
  std::vector<std::string> dirs;
  if (auto prefix = env_.Get("CONDA_PREFIX"); prefix && !prefix->empty()) dirs.push_back(*prefix + "/lib");
  for (const char* base : {"miniconda3", "anaconda3", "miniforge3", "mambaforge"}) {
    std::string root = env_.Home() + "/" + base;
    if (!Environment::IsDir(root)) continue;
    dirs.push_back(root + "/lib");
    for (const auto& e : Environment::Glob(root + "/envs/*/lib")) dirs.push_back(e);
  }
  for (const auto& d : dirs) {
    bool all = std::all_of(imp.missing_libs.begin(), imp.missing_libs.end(),
                           [&](const std::string& lib) { return Environment::IsFile(d + "/" + lib); });
    if (!all) continue;
    std::string value = d + ":" + Dirname(imp.path);
    if (auto old = env_.Get("LD_LIBRARY_PATH"); old && !old->empty()) value += ":" + *old;
    std::string out;
    int code = 0;
    if (loads({{"LD_LIBRARY_PATH", value}}, &out, &code)) {
      imp.fix_dir = d;
      imp.ld_library_path = value;
      imp.loads_with_fix = true;
      f.profile_env["LD_LIBRARY_PATH"] = value;
      return;
    }
  }
}

// ---- what will be inert ----------------------------------------------------------------------

void Prober::NsysSelfReport(DoctorFindings& f) {
  if (auto text = Environment::ReadText(env_.System("/proc/sys/kernel/perf_event_paranoid"), 64)) {
    try {
      f.paranoid = std::stoi(*text);
    } catch (const std::exception&) {
    }
  }
  if (const NsysCandidate* c = f.Chosen()) {
    if (auto r = Run({c->path, "profile", "--help"}, f.profile_env); r.ok() && r->ok()) {
      f.profile_help_read = true;
      f.profile_help = ParseProfileHelp(r->out);
    }
    if (auto r = Run({c->path, "export", "--help"}, f.profile_env); r.ok() && r->ok()) {
      f.export_help_read = true;
      f.export_options = ParseHelpOptions(r->out);
    }
    // The functions-trace file shipped with this nsys: beside the binary, else where its help says.
    std::string beside = Dirname(c->real_path) + "/PythonFunctionsTrace/pytorch.json";
    if (Environment::IsFile(beside)) {
      f.functions_trace_base = beside;
    } else if (!f.profile_help.pytorch_json.empty() && Environment::IsFile(f.profile_help.pytorch_json)) {
      f.functions_trace_base = f.profile_help.pytorch_json;
    }
    if (!options_.nsys_only) {
      if (auto r = Run({c->path, "status", "-e"}, f.profile_env); r.ok() && !r->timed_out) {
        f.status_env = ParseStatusE(r->out + "\n" + r->err);
        f.status_read = f.status_env.process_tree_sampling.has_value() || f.status_env.paranoid.has_value();
      }
    }
  }
  // nsys's own verdict when it gave one; else the kernel's setting (nsys samples at <= 2).
  if (f.status_env.process_tree_sampling) {
    f.cpu_sampling = *f.status_env.process_tree_sampling;
  } else if (f.paranoid) {
    f.cpu_sampling = *f.paranoid <= 2;
  }
}

void Prober::Deep(DoctorFindings& f) {
  const NsysCandidate* c = f.Chosen();
  if (!c) return;
  std::string tmpl = (fs::temp_directory_path() / "cpprof-doctor-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) {
    f.deep_ok = false;
    f.deep_detail = "could not create a temporary folder";
    return;
  }
  std::string base = tmpl + "/doctor";
  auto r = Run({c->path, "profile", "--trace=osrt", "--sample=none", "--cpuctxsw=none", "--force-overwrite=true", "-o",
                base, "sleep", "1"},
               f.profile_env, 180);
  std::error_code ec;
  bool rep = fs::exists(base + ".nsys-rep", ec);
  bool qdstrm = fs::exists(base + ".qdstrm", ec);
  f.deep_ok = rep;
  if (!r.ok()) {
    f.deep_detail = r.status().message();
  } else if (rep) {
    f.deep_detail =
        fmt::format("'nsys profile ... sleep 1' wrote a .nsys-rep ({} bytes)", fs::file_size(base + ".nsys-rep", ec));
  } else {
    std::string said = r->out + r->err;
    std::string importer_line;
    if (size_t p = said.find("Importer error"); p != std::string::npos) {
      importer_line = FirstLine(said.substr(p));
    } else {
      importer_line = FirstLine(said);  // what nsys said first
    }
    f.deep_detail = fmt::format("'nsys profile ... sleep 1' {} and wrote no .nsys-rep{}{}", r->Describe(),
                                qdstrm ? " (only a .qdstrm)" : "", importer_line.empty() ? "" : ": " + importer_line);
  }
  fs::remove_all(tmpl, ec);
}

// ---- busy GPUs and the interconnect ----------------------------------------------------------

void Prober::BusyAndTopology(DoctorFindings& f) {
  if (f.gpus.empty()) return;
  if (auto r = Run({"nvidia-smi", "--query-compute-apps=pid,used_memory,gpu_uuid", "--format=csv"});
      r.ok() && r->ok()) {
    if (auto apps = ParseComputeApps(r->out); apps.ok()) f.apps = std::move(*apps);
  }
  for (int t : f.targets) {
    const GpuInfo* g = FindGpu(f, t);
    if (!g) continue;
    BusyGpu b{t, {}};
    for (const auto& a : f.apps) {
      if (a.gpu_uuid == g->uuid) b.apps.push_back(a);
    }
    if (!b.apps.empty()) f.busy.push_back(std::move(b));
  }
  if (f.targets.size() < 2) return;
  auto r = Run({"nvidia-smi", "topo", "-m"});
  if (!r.ok()) {
    f.topology_error = r.status().message();
  } else if (!r->ok()) {
    f.topology_error = fmt::format("nvidia-smi topo -m {}: {}", r->Describe(), FirstLine(r->err + r->out));
  } else if (auto t = ParseTopology(r->out); t.ok()) {
    f.topology = std::move(*t);
  } else {
    f.topology_error = t.status().message();
  }
}

// ---- the checks ------------------------------------------------------------------------------

std::string Join(const std::vector<std::string>& v, const char* sep = ", ") {
  return fmt::format("{}", fmt::join(v, sep));
}

std::string TargetsText(const std::vector<int>& t) { return fmt::format("{}", fmt::join(t, ",")); }

Check GpusCheck(const DoctorFindings& f, const DoctorOptions& o) {
  Check c{"gpus", "GPUs", CheckStatus::kPass, "", ""};
  if (!f.nvidia_smi_found) {
    c.status = CheckStatus::kFail;
    c.detail = "nvidia-smi not found on PATH: no NVIDIA driver here, so no GPU to profile";
    c.hint = "run cpprof doctor on the GPU machine (cpprof report/stats read exports on any machine)";
    return c;
  }
  if (!f.nvidia_smi_error.empty()) {
    c.status = CheckStatus::kFail;
    c.detail = f.nvidia_smi_error;
    c.hint = "nvidia-smi must list the GPUs: is the NVIDIA driver loaded (and the GPUs passed to this container)?";
    return c;
  }
  if (f.gpus.empty()) {
    c.status = CheckStatus::kFail;
    c.detail = "nvidia-smi lists no GPU";
    c.hint = "check that the GPUs are visible here (nvidia-smi -L)";
    return c;
  }
  std::vector<std::string> missing, listed;
  for (const auto& g : f.gpus) listed.push_back(std::to_string(g.index));
  for (int t : o.gpus) {
    if (!FindGpu(f, t)) missing.push_back(std::to_string(t));
  }
  if (!missing.empty()) {
    c.status = CheckStatus::kFail;
    c.detail = fmt::format("--gpus asks for GPU {} but nvidia-smi lists {}", Join(missing), Join(listed));
    c.hint = "pick GPUs from 'nvidia-smi -L'";
    return c;
  }
  std::vector<std::string> parts;
  for (const auto& g : f.gpus) {
    bool target = std::find(f.targets.begin(), f.targets.end(), g.index) != f.targets.end();
    parts.push_back(fmt::format("{}: {} ({}, {} MiB){}", g.index, g.name, ArchLabel(g), g.memory_total_mib,
                                target ? "" : " [not a target]"));
  }
  c.detail = Join(parts, "; ");
  for (const auto& g : f.gpus) {
    if (!ArchForComputeCap(g.cc_major, g.cc_minor) || !ArchForComputeCap(g.cc_major, g.cc_minor)->exact) {
      c.status = CheckStatus::kWarn;
      c.detail += fmt::format("; compute capability {} is not in cpprof's architecture table", g.compute_cap);
      c.hint = "cpprof cannot say which nsys supports it: use the newest nsys you can get";
    }
  }
  return c;
}

Check NsysCheck(const DoctorFindings& f) {
  Check c{"nsys", "nsys", CheckStatus::kPass, "", ""};
  const NsysCandidate* ch = f.Chosen();
  if (f.candidates.empty()) {
    c.status = CheckStatus::kFail;
    c.detail = fmt::format("no nsys found (searched {})", Join(f.searched));
    c.hint = InstallNsysHint();
    return c;
  }
  if (!ch) {
    c.status = CheckStatus::kFail;
    std::vector<std::string> errs;
    for (const auto& x : f.candidates) errs.push_back(x.error.empty() ? x.path : x.error);
    c.detail = fmt::format("no nsys found runs: {}", Join(errs, "; "));
    c.hint = InstallNsysHint();
    return c;
  }
  c.detail =
      fmt::format("{} ({}; found by {}): {}", ch->path, ch->version->ToString(), Join(ch->found_by), f.chosen_why);
  if (ch->real_path != ch->path) c.detail += fmt::format("; it is {}", ch->real_path);
  std::vector<std::string> others;
  for (const auto& x : f.candidates) {
    if (&x == ch) continue;
    if (!x.version) {
      others.push_back(fmt::format("{} (does not run: {})", x.path, x.error));
    } else {
      others.push_back(fmt::format("{} ({}{})", x.path, x.version->ToString(),
                                   x.supports_targets ? "" : ", " + x.unsupported_reason));
    }
  }
  if (!others.empty()) c.detail += fmt::format("; also found: {}", Join(others, "; "));
  // What a plain `nsys` runs: the first copy found on PATH (PATH is searched first, in order).
  auto on_path = std::find_if(f.candidates.begin(), f.candidates.end(), [](const NsysCandidate& x) {
    return std::find(x.found_by.begin(), x.found_by.end(), "PATH") != x.found_by.end();
  });
  if (on_path != f.candidates.end() && &*on_path != ch) {
    const NsysCandidate& x = *on_path;
    std::string what = !x.version                  ? "it does not run"
                       : !x.supports_targets       ? x.version->ToString() + ", " + x.unsupported_reason
                       : *x.version < *ch->version ? x.version->ToString() + ", older"
                                                   : "";
    if (!what.empty()) {
      c.status = CheckStatus::kWarn;
      c.detail += fmt::format("; but a plain 'nsys' runs {} ({})", x.path, what);
      c.hint = fmt::format("call nsys by its absolute path {}, or put {} first on PATH", ch->path, Dirname(ch->path));
    }
  }
  return c;
}

Check FitCheck(const DoctorFindings& f) {
  Check c{"nsys-gpu", "nsys fits GPUs", CheckStatus::kPass, "", ""};
  const NsysCandidate* ch = f.Chosen();
  if (!ch || f.gpus.empty()) {
    c.status = CheckStatus::kSkip;
    c.detail = !ch ? "no nsys" : "no GPU to fit nsys to";
    return c;
  }
  std::vector<std::string> parts;
  std::set<std::string> seen;
  for (int t : f.targets) {
    const GpuInfo* g = FindGpu(f, t);
    if (!g) continue;
    auto a = ArchForComputeCap(g->cc_major, g->cc_minor);
    if (!a) {
      if (seen.insert(g->compute_cap).second) {
        parts.push_back(fmt::format("compute capability {} is not in cpprof's table", g->compute_cap));
      }
      if (c.status == CheckStatus::kPass) {
        c.status = CheckStatus::kWarn;
        c.hint = "use the newest nsys available for an architecture cpprof does not know";
      }
      continue;
    }
    if (!seen.insert(a->sm).second) continue;
    if (*ch->version < a->minimum) {
      c.status = CheckStatus::kFail;
      parts.push_back(fmt::format("nsys {} predates {} ({}) support: needs >= {} ({})", ch->version->ShortString(),
                                  a->sm, a->arch, a->minimum.ShortString(), a->source));
      c.hint = "install a newer nsys: " + InstallNsysHint();
    } else if (*ch->version < a->recommended) {
      if (c.status == CheckStatus::kPass) c.status = CheckStatus::kWarn;
      parts.push_back(fmt::format("nsys {} supports {} ({}) from {}, but {}+ is recommended ({})",
                                  ch->version->ShortString(), a->sm, a->arch, a->minimum.ShortString(),
                                  a->recommended.ShortString(), a->source));
      if (c.hint.empty()) c.hint = fmt::format("prefer nsys {} or newer", a->recommended.ShortString());
    } else {
      parts.push_back(fmt::format("nsys {} supports {} ({}; needs >= {})", ch->version->ShortString(), a->sm, a->arch,
                                  a->minimum.ShortString()));
    }
  }
  c.detail = Join(parts, "; ");
  return c;
}

std::string LibFixHint(const ImporterCheck& imp) {
  std::vector<std::string> pkgs, unknown;
  for (const auto& lib : imp.missing_libs) {
    std::string p = PackageFor(lib);
    if (p.empty()) {
      unknown.push_back(lib);
    } else if (std::find(pkgs.begin(), pkgs.end(), p) == pkgs.end()) {
      pkgs.push_back(p);
    }
  }
  // libdw1 needs libelf1: bring both.
  if (std::find(pkgs.begin(), pkgs.end(), "libdw1") != pkgs.end() &&
      std::find(pkgs.begin(), pkgs.end(), "libelf1") == pkgs.end()) {
    pkgs.push_back("libelf1");
  }
  std::string dir = Dirname(imp.path);
  std::string hint;
  if (!pkgs.empty()) {
    std::string list = Join(pkgs, " ");
    hint = fmt::format(
        "install {} ('apt-get install {}'); without a package registry, fetch them elsewhere "
        "('apt-get download {}'), unpack each with 'dpkg -x FILE.deb DIR' and run nsys with "
        "LD_LIBRARY_PATH=DIR/usr/lib/x86_64-linux-gnu:{}",
        list, list, list, dir);
  }
  if (!unknown.empty()) {
    if (!hint.empty()) hint += "; ";
    hint += fmt::format(
        "find the package that provides {} ('apt-file search {}') or put its folder on "
        "LD_LIBRARY_PATH (with {})",
        Join(unknown), unknown.front(), dir);
  }
  return hint;
}

Check ImporterCheckResult(const DoctorFindings& f) {
  Check c{"importer", "nsys can write reports", CheckStatus::kPass, "", ""};
  const ImporterCheck& imp = f.importer;
  if (!f.Chosen()) {
    c.status = CheckStatus::kSkip;
    c.detail = "no nsys";
    return c;
  }
  if (imp.path.empty()) {
    c.status = CheckStatus::kWarn;
    c.detail = fmt::format("no QdstrmImporter found near {} (looked in {})", f.Chosen()->real_path, Join(imp.searched));
    c.hint = "cpprof cannot tell whether nsys will write a .nsys-rep: try 'cpprof doctor --deep'";
    return c;
  }
  if (imp.loads) {
    c.detail = fmt::format("{} loads ({})", imp.path, FirstLine(imp.output));
    return c;
  }
  std::string why = imp.missing_libs.empty()
                        ? fmt::format("{} fails to start (exit {}): {}", imp.path, imp.exit_code, FirstLine(imp.output))
                        : fmt::format("{} cannot load {} (exit {})", imp.path, Join(imp.missing_libs), imp.exit_code);
  std::string consequence =
      "so 'nsys profile' leaves only a .qdstrm ('Importer error status: ... skipping importation of the "
      "QDSTRM file'), no .nsys-rep and no .sqlite";
  if (imp.loads_with_fix) {
    c.status = CheckStatus::kWarn;
    c.detail = fmt::format("{}; it loads with LD_LIBRARY_PATH={} ({} found in {})", why, imp.ld_library_path,
                           Join(imp.missing_libs), imp.fix_dir);
    c.hint =
        fmt::format("export LD_LIBRARY_PATH={} before 'nsys profile' (cpprof profile sets it)", imp.ld_library_path);
    return c;
  }
  c.status = CheckStatus::kFail;
  c.detail = fmt::format("{}, {}", why, consequence);
  c.hint = imp.missing_libs.empty() ? "run the importer by hand to see why it fails" : LibFixHint(imp);
  return c;
}

Check DeepCheck(const DoctorFindings& f) {
  Check c{"deep", "nsys profile (--deep)", CheckStatus::kPass, f.deep_detail, ""};
  if (!f.deep_ok) {
    c.status = CheckStatus::kSkip;
    c.detail = "no nsys";
  } else if (!*f.deep_ok) {
    c.status = CheckStatus::kFail;
    c.hint = f.importer.missing_libs.empty() ? "run the same nsys profile by hand and read its messages"
                                             : LibFixHint(f.importer);
  }
  return c;
}

Check SamplingCheck(const DoctorFindings& f) {
  Check c{"cpu-sampling", "CPU sampling", CheckStatus::kPass, "", ""};
  std::vector<std::string> seen;
  if (f.status_read && f.status_env.process_tree_sampling) {
    seen.push_back(fmt::format("nsys status -e: process-tree {}", f.status_env.process_tree_text));
  }
  if (f.paranoid) seen.push_back(fmt::format("perf_event_paranoid = {}", *f.paranoid));
  std::string from = seen.empty() ? "" : " (" + Join(seen, "; ") + ")";
  if (!f.cpu_sampling) {
    c.status = CheckStatus::kWarn;
    c.detail =
        "could not tell whether CPU sampling works: neither 'nsys status -e' nor "
        "/proc/sys/kernel/perf_event_paranoid could be read";
    c.hint =
        "if nsys prints 'CPU IP/backtrace sampling not supported, disabling', --cudabacktrace and "
        "--python-backtrace are inert";
    return c;
  }
  if (*f.cpu_sampling) {
    c.detail = "CPU sampling works, so --cudabacktrace and --python-backtrace=cuda will record backtraces" + from;
    return c;
  }
  c.status = CheckStatus::kWarn;
  c.detail = "CPU sampling is not available" + from +
             ": --sample, --cudabacktrace and --python-backtrace will be inert (nsys disables them)";
  c.hint =
      "on the host, as root: 'sysctl -w kernel.perf_event_paranoid=2' (a container cannot change it); "
      "or profile as root; else leave those options out";
  return c;
}

Check PytorchCheck(const DoctorFindings& f) {
  Check c{"pytorch-tokens", "--pytorch tokens", CheckStatus::kPass, "", ""};
  if (!f.Chosen()) {
    c.status = CheckStatus::kSkip;
    c.detail = "no nsys";
    return c;
  }
  if (!f.profile_help_read) {
    c.status = CheckStatus::kWarn;
    c.detail = "'nsys profile --help' did not answer";
    c.hint = "run it by hand: the options nsys accepts change between releases";
    return c;
  }
  const ProfileHelp& h = f.profile_help;
  if (!h.HasOption("pytorch")) {
    c.status = CheckStatus::kWarn;
    c.detail = "this nsys has no --pytorch option";
    c.hint = "use --python-functions-trace, or a newer nsys for autograd ranges";
  } else {
    c.detail = fmt::format("--pytorch accepts {}", Join(h.pytorch_tokens));
  }
  if (!h.HasOption("python-functions-trace")) {
    c.status = CheckStatus::kWarn;
    c.detail += "; no --python-functions-trace option (module names need it)";
    c.hint = "get a newer nsys for --python-functions-trace";
  } else if (!f.functions_trace_base.empty()) {
    c.detail += fmt::format("; shipped functions-trace file {}", f.functions_trace_base);
  }
  return c;
}

Check PayloadsCheck(const DoctorFindings& f) {
  Check c{"nvtx-payloads", "NVTX payloads in exports", CheckStatus::kPass, "", ""};
  if (!f.Chosen()) {
    c.status = CheckStatus::kSkip;
    c.detail = "no nsys";
  } else if (!f.export_help_read) {
    c.status = CheckStatus::kWarn;
    c.detail = "'nsys export --help' did not answer";
    c.hint = "run it by hand; cpprof profile lets 'nsys profile --export=sqlite' write the export";
  } else if (f.ExportKeepsPayloads()) {
    c.detail =
        "'nsys export --include-json true' keeps NCCL's communicator ids and ranks and the Python backtraces "
        "(cpprof profile exports with it)";
  } else {
    c.status = CheckStatus::kWarn;
    c.detail =
        "this nsys's export has no --include-json: exports will lack NCCL's communicator ids and ranks and the "
        "Python backtraces";
    c.hint = "nsys 2025.3 or newer exports them";
  }
  return c;
}

Check PythonCheck(const DoctorFindings& f) {
  Check c{"python", "workload Python", CheckStatus::kPass, "", ""};
  const PythonInfo& p = f.python;
  if (!p.runs) {
    c.status = CheckStatus::kFail;
    c.detail = p.path.empty() ? p.error : fmt::format("{} ({}) does not run: {}", p.path, p.why, p.error);
    c.hint = "pass the workload's interpreter with --python PATH";
    return c;
  }
  std::vector<std::string> parts;
  parts.push_back(fmt::format("{} {} ({})", p.path, p.version, p.why));
  if (p.torch) {
    parts.push_back(fmt::format("torch {}{}{}", p.torch_version,
                                p.torch_cuda.empty() ? " (a CPU-only build)" : ", CUDA " + p.torch_cuda,
                                p.nccl.empty() ? "" : ", NCCL " + p.nccl));
  } else {
    parts.push_back(fmt::format("torch not importable ({})", p.torch_error));
  }
  parts.push_back(p.torchrun.empty() ? "no torchrun" : "torchrun " + p.torchrun);
  c.detail = Join(parts, "; ");
  if (!p.torch) {
    c.status = CheckStatus::kWarn;
    c.hint = "install torch into this Python, or pass the workload's interpreter with --python";
  } else if (p.torch_cuda.empty() && !f.gpus.empty()) {
    c.status = CheckStatus::kWarn;
    c.hint = "a CPU-only torch cannot use the GPUs: install a CUDA build, or pass the right --python";
  } else if (p.torchrun.empty()) {
    c.status = CheckStatus::kWarn;
    c.hint = "torchrun comes with torch: put its folder on PATH";
  }
  return c;
}

Check NvtxCheck(const DoctorFindings& f) {
  Check c{"nvtx", "nvtx package", CheckStatus::kPass, "", ""};
  if (!f.python.runs) {
    c.status = CheckStatus::kSkip;
    c.detail = "no workload Python";
    return c;
  }
  if (f.python.nvtx) {
    c.detail = "the nvtx package is importable";
  } else if (!f.profile_help_read) {
    c.status = CheckStatus::kSkip;
    c.detail = "the nvtx package is not importable; no nsys help says whether it is needed";
  } else if (f.profile_help.functions_trace_needs_nvtx) {
    c.status = CheckStatus::kWarn;
    c.detail =
        "this nsys's help says --python-functions-trace needs the nvtx package on the target Python, "
        "and it is not importable";
    c.hint = "'pip install nvtx' into the workload's Python (nsys 2025.3.1 was seen naming ranges without it)";
  } else {
    c.detail = "the nvtx package is not importable (this nsys does not ask for it)";
  }
  return c;
}

Check FreeCheck(const DoctorFindings& f) {
  Check c{"gpus-free", "target GPUs free", CheckStatus::kPass, "", ""};
  if (f.gpus.empty()) {
    c.status = CheckStatus::kSkip;
    c.detail = "no GPU";
    return c;
  }
  if (!f.busy.empty()) {
    c.status = CheckStatus::kFail;
    std::vector<std::string> parts;
    for (const auto& b : f.busy) {
      std::vector<std::string> pids;
      for (const auto& a : b.apps) {
        pids.push_back(a.used_memory_mib >= 0 ? fmt::format("PID {} ({} MiB)", a.pid, a.used_memory_mib)
                                              : fmt::format("PID {}", a.pid));
      }
      parts.push_back(fmt::format("GPU {} is busy: {}", b.index, Join(pids)));
    }
    c.detail = Join(parts, "; ");
    c.hint = "one job per GPU, never oversubscribe: wait for those processes, or pick free GPUs with --gpus";
    return c;
  }
  std::vector<std::string> quiet_but_used;
  for (int t : f.targets) {
    const GpuInfo* g = FindGpu(f, t);
    if (g && g->memory_used_mib > 1024) {
      quiet_but_used.push_back(fmt::format("GPU {} has {} MiB in use", t, g->memory_used_mib));
    }
  }
  if (!quiet_but_used.empty()) {
    c.status = CheckStatus::kWarn;
    c.detail = Join(quiet_but_used, "; ") +
               " but nvidia-smi lists no process (processes of other containers "
               "or VMs are not listed)";
    c.hint = "someone may be using it: check before profiling, or pick other GPUs with --gpus";
    return c;
  }
  c.detail = fmt::format("no compute process on GPU {}", TargetsText(f.targets));
  if (!f.apps.empty()) c.detail += fmt::format(" ({} on other GPUs)", f.apps.size());
  return c;
}

Check InterconnectCheck(const DoctorFindings& f) {
  Check c{"interconnect", "GPU interconnect", CheckStatus::kPass, "", ""};
  if (f.targets.size() < 2) {
    c.status = CheckStatus::kSkip;
    c.detail = f.gpus.empty() ? "no GPU" : "one target GPU: no GPU-to-GPU traffic";
    return c;
  }
  if (!f.topology) {
    c.status = CheckStatus::kWarn;
    c.detail = "could not read the topology: " + f.topology_error;
    c.hint = "run 'nvidia-smi topo -m' by hand: a PCIe-only machine makes a SendRecv ring dominate";
    return c;
  }
  std::vector<std::string> nv, pcie;
  for (const auto& l : f.topology->links) {
    int a = std::stoi(l.a.substr(3)), b = std::stoi(l.b.substr(3));
    if (std::find(f.targets.begin(), f.targets.end(), a) == f.targets.end() ||
        std::find(f.targets.begin(), f.targets.end(), b) == f.targets.end()) {
      continue;
    }
    std::string s = fmt::format("{}-{} {} ({})", l.a, l.b, l.code, l.meaning);
    (l.kind == TopoLink::Kind::kNvlink ? nv : pcie).push_back(s);
  }
  if (pcie.empty()) {
    c.detail = Join(nv, "; ") + ": a ring of SendRecv between these GPUs runs over NVLink";
    return c;
  }
  c.status = CheckStatus::kWarn;
  c.detail = fmt::format(
      "no NVLink between {}: a ring of SendRecv (context parallelism) runs over PCIe and will "
      "dominate the kernel time",
      Join(pcie, "; "));
  if (!nv.empty()) c.detail += fmt::format("; NVLink: {}", Join(nv, "; "));
  c.hint = "expect communication-bound profiles here; compare with an NVLink machine before blaming the model";
  return c;
}

}  // namespace

const char* CheckStatusName(CheckStatus s) {
  switch (s) {
    case CheckStatus::kPass:
      return "PASS";
    case CheckStatus::kWarn:
      return "WARN";
    case CheckStatus::kFail:
      return "FAIL";
    case CheckStatus::kSkip:
      return "SKIP";
  }
  return "?";
}

bool DoctorFindings::ExportKeepsPayloads() const {
  return export_help_read &&
         std::find(export_options.begin(), export_options.end(), "include-json") != export_options.end();
}

bool DoctorFindings::HasFail() const {
  return std::any_of(checks.begin(), checks.end(), [](const Check& c) { return c.status == CheckStatus::kFail; });
}

std::string InstallNsysHint() {
  return "get Nsight Systems 2024.5 or newer: 'conda install -c nvidia nsight-systems' (or cuda-nsight-systems) "
         "into the workload's environment; or NVIDIA's Nsight Systems installer "
         "(/opt/nvidia/nsight-systems/VERSION); an Nsight Compute install also bundles one "
         "(/opt/nvidia/nsight-compute/VERSION/host/target-linux-x64/nsys). On PyPI, nvidia-nsys and "
         "nvidia-nsys-cli are placeholders without nsys. Then pass it with --nsys PATH or put it on PATH";
}

DoctorFindings Diagnose(const DoctorOptions& options, runner::ProcessRunner& runner, const runner::Environment& env) {
  DoctorFindings f;
  Prober p(options, runner, env);
  p.Python(f);
  p.Gpus(f);
  p.FindNsys(f);
  p.ChooseNsys(f);
  if (options.nsys_only) {
    p.NsysSelfReport(f);
    f.checks.push_back(NsysCheck(f));
    return f;
  }
  p.Importer(f);
  p.NsysSelfReport(f);
  if (options.deep) p.Deep(f);
  p.BusyAndTopology(f);

  f.checks.push_back(GpusCheck(f, options));
  f.checks.push_back(NsysCheck(f));
  f.checks.push_back(FitCheck(f));
  f.checks.push_back(ImporterCheckResult(f));
  if (options.deep) f.checks.push_back(DeepCheck(f));
  f.checks.push_back(SamplingCheck(f));
  f.checks.push_back(PytorchCheck(f));
  f.checks.push_back(PayloadsCheck(f));
  f.checks.push_back(PythonCheck(f));
  f.checks.push_back(NvtxCheck(f));
  f.checks.push_back(FreeCheck(f));
  f.checks.push_back(InterconnectCheck(f));
  return f;
}

}  // namespace cpprof::doctor
