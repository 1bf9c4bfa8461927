// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "profile/plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>

#include "doctor/functions_trace.h"

namespace cpprof::profile {

namespace {

namespace fs = std::filesystem;
using doctor::DoctorFindings;

bool IsNumber(const std::string& s) {
  return !s.empty() && s.size() < 9 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool StartsWith(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

std::string Basename(const std::string& p) {
  size_t s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

// "pkg.run" -> "pkg-run"; "train.py" -> "train".
std::string WorkloadStem(const std::vector<std::string>& workload) {
  if (workload.empty()) return "workload";
  std::string s = workload[0] == "-m" && workload.size() > 1 ? workload[1] : Basename(workload[0]);
  if (s.size() > 3 && s.substr(s.size() - 3) == ".py") s.resize(s.size() - 3);
  for (char& c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) c = '-';
  }
  return s.empty() ? "workload" : s;
}

bool ValidName(const std::string& n) {
  return !n.empty() && n[0] != '.' && n[0] != '-' && std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

// The value of the last `--flag V` or `--flag=V` in args (argparse: the last one wins).
std::optional<std::string> LastFlagValue(const std::vector<std::string>& args, const std::string& flag) {
  std::optional<std::string> v;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == flag && i + 1 < args.size()) {
      v = args[i + 1];
    } else if (StartsWith(args[i], flag + "=")) {
      v = args[i].substr(flag.size() + 1);
    }
  }
  return v;
}

int IntOr(const std::optional<std::string>& v, int fallback) { return v && IsNumber(*v) ? std::stoi(*v) : fallback; }

const doctor::Check* FindCheck(const DoctorFindings& f, const std::string& id) {
  for (const auto& c : f.checks) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

// One nsys option: checked against the chosen nsys's own `profile --help`.
class OptionChecker {
 public:
  OptionChecker(const DoctorFindings& f, Plan& plan) : f_(f), plan_(plan) {
    if (!f.profile_help_read) {
      plan.warnings.push_back(
          "'nsys profile --help' could not be read: the options below are not checked against this nsys");
    }
  }
  // Adds `--name=value` (or `--name` when value is empty) when this nsys knows it. A missing
  // essential option is an error; any other is dropped with a warning.
  Status Add(const std::string& name, const std::string& value, bool essential) {
    std::string token = value.empty() ? "--" + name : fmt::format("--{}={}", name, value);
    if (f_.profile_help_read && !f_.profile_help.HasOption(name)) {
      if (essential) {
        return Error(ExitCode::kCheckFailed,
                     fmt::format("nsys {} has no --{} option, which cpprof profile needs. Use a newer nsys "
                                 "(see 'cpprof doctor').",
                                 plan_.nsys_version, name));
      }
      Drop(token, fmt::format("this nsys ({}) has no --{} option", plan_.nsys_version, name));
      return OkStatus();
    }
    plan_.nsys_options.push_back(token);
    return OkStatus();
  }
  void Drop(const std::string& token, const std::string& why) {
    plan_.dropped.push_back(fmt::format("{}: {}", token, why));
    plan_.warnings.push_back(fmt::format("dropped {}: {}", token, why));
  }

 private:
  const DoctorFindings& f_;
  Plan& plan_;
};

}  // namespace

std::vector<std::string> OutputPaths::Results() const {
  std::vector<std::string> out;
  for (const OutputFile& file : kOutputFiles) {
    if (file.result) out.push_back(this->*file.path);
  }
  for (const auto& b : rank_bases) {
    for (const OutputFile& file : kOutputFiles) {
      if (file.per_rank) out.push_back(b + file.suffix);
    }
  }
  return out;
}

StatusOr<Preset> ParsePreset(const std::string& s) {
  if (s == "fast") return Preset::kFast;
  if (s == "full") return Preset::kFull;
  return Error(ExitCode::kUsage, fmt::format("unknown preset '{}'. Use --preset fast or --preset full.", s));
}

std::pair<int, int> CpGrid(int ranks) {
  int s = static_cast<int>(std::lround(std::sqrt(static_cast<double>(ranks))));
  if (s * s == ranks) return {s, s};
  return {1, ranks};
}

bool LooksLikeShorthand(const std::vector<std::string>& args) {
  return !args.empty() && (args[0] == "trunk" || args[0] == "e2e" || args[0] == "train");
}

StatusOr<Shorthand> ParseShorthand(const std::vector<std::string>& args) {
  Shorthand s;
  s.mode = args.at(0);
  if (args.size() < 3 || !IsNumber(args[1]) || !IsNumber(args[2])) {
    return Error(ExitCode::kUsage,
                 fmt::format("the shorthand is MODE N_TOKEN RANKS, e.g. 'cpprof profile {} 1024 4'", s.mode));
  }
  s.n_token = std::stoi(args[1]);
  s.ranks = std::stoi(args[2]);
  if (s.n_token <= 0 || s.ranks <= 0) {
    return Error(ExitCode::kUsage, "the shorthand's N_TOKEN and RANKS must be positive");
  }
  std::tie(s.cp0, s.cp1) = CpGrid(s.ranks);
  return s;
}

Status CheckOptions(const ProfileOptions& o) {
  if (o.probe && o.no_probe) return Error(ExitCode::kUsage, "--probe and --no-probe exclude each other");
  if ((!o.trace_functions.empty() || !o.trace_discover.empty()) && !o.trace_json.empty()) {
    return Error(ExitCode::kUsage,
                 "--trace-json FILE excludes --trace-function and --trace-discover: pass a file "
                 "you made, or let cpprof make one from --trace-function/--trace-discover");
  }
  if (!o.trace_match.empty() && o.trace_discover.empty()) {
    return Error(ExitCode::kUsage, "--trace-match REGEX goes with --trace-discover PKG");
  }
  if (!o.trace_match.empty()) CPPROF_RETURN_IF_ERROR(doctor::CheckClassPattern(o.trace_match, "--trace-match"));
  for (const auto& fn : o.trace_functions) {
    auto e = doctor::ParseFunctionFlag(fn);
    if (!e.ok()) {
      return Error(ExitCode::kUsage, fmt::format("--trace-function '{}' is not MODULE:Class.method (e.g. "
                                                 "pkg.layers:Trunk.forward)",
                                                 fn));
    }
  }
  if (!o.trace_discover.empty() && !doctor::IsDottedName(o.trace_discover)) {
    return Error(ExitCode::kUsage, fmt::format("--trace-discover '{}' is not a package name", o.trace_discover));
  }
  return OkStatus();
}

namespace {

// The usage errors of the options alone, before anything is planned.
Status CheckPlanOptions(const ProfileOptions& o) {
  CPPROF_RETURN_IF_ERROR(ParsePreset(o.preset).status());
  if (o.timeout_s <= 0) return Error(ExitCode::kUsage, "--timeout must be positive");
  if (o.nnodes < 1) return Error(ExitCode::kUsage, "--nnodes must be at least 1");
  CPPROF_RETURN_IF_ERROR(CheckOptions(o));
  if (o.nnodes > 1 && o.rdzv_endpoint.empty()) {
    return Error(ExitCode::kUsage, "--nnodes > 1 needs --rdzv-endpoint HOST:PORT (the same on every node)");
  }
  return OkStatus();
}

// The workload named on the command line: the shorthand (cpfold), nothing (cpfold, small), or
// what follows -- (no shorthand). `extra` gets the workload arguments after the shorthand.
StatusOr<std::optional<Shorthand>> ReadShorthand(const ProfileOptions& o, std::vector<std::string>& extra) {
  if (LooksLikeShorthand(o.args)) {
    CPPROF_ASSIGN_OR_RETURN(Shorthand s, ParseShorthand(o.args));
    extra.assign(o.args.begin() + 3, o.args.end());
    return std::optional<Shorthand>(s);
  }
  if (o.args.empty()) return std::optional<Shorthand>(Shorthand{"trunk", 256, 0, 1, 1});  // ranks: the free GPUs
  return std::optional<Shorthand>();
}

// Ranks per node and their GPUs: --nproc-per-node, the shorthand's ranks, --gpus, else the free
// GPUs. A shorthand without ranks gets its grid from them.
Status ChooseRanksAndGpus(const ProfileOptions& o, const DoctorFindings& f, std::optional<Shorthand>& sh, Plan& plan) {
  std::set<int> busy;
  for (const auto& b : f.busy) busy.insert(b.index);
  std::vector<int> free_gpus;
  for (int t : f.targets) {
    if (!busy.count(t)) free_gpus.push_back(t);
  }
  if (o.nproc_per_node > 0) {
    plan.ranks = o.nproc_per_node;
    if (sh && sh->ranks > 0 && sh->ranks != o.nproc_per_node * o.nnodes) {
      return Error(ExitCode::kUsage, fmt::format("the shorthand asks for {} ranks but --nproc-per-node {} x --nnodes "
                                                 "{} gives {}",
                                                 sh->ranks, o.nproc_per_node, o.nnodes, o.nproc_per_node * o.nnodes));
    }
  } else if (sh && sh->ranks > 0) {
    if (sh->ranks % o.nnodes != 0) {
      return Error(ExitCode::kUsage, fmt::format("{} ranks do not split evenly over {} nodes", sh->ranks, o.nnodes));
    }
    plan.ranks = sh->ranks / o.nnodes;
  } else if (!o.gpus.empty()) {
    plan.ranks = static_cast<int>(o.gpus.size());
  } else {
    plan.ranks = std::max<int>(1, static_cast<int>(free_gpus.size()));
  }
  if (sh && sh->ranks == 0) {  // nothing after --: the grid follows the ranks
    sh->ranks = plan.ranks * o.nnodes;
    std::tie(sh->cp0, sh->cp1) = CpGrid(sh->ranks);
  }
  if (!o.gpus.empty()) {
    plan.gpus = o.gpus;
  } else {
    for (int g : free_gpus) {
      if (static_cast<int>(plan.gpus.size()) < plan.ranks) plan.gpus.push_back(g);
    }
  }
  return OkStatus();
}

// cpfold's command line from the shorthand, with the process group's timeout unless given.
Status PlanCpfoldWorkload(const Shorthand& sh, const std::vector<std::string>& extra, const PlanInputs& in,
                          Plan& plan) {
  if (in.cpfold_root.empty()) {
    return Error(ExitCode::kUsage,
                 "the reference workload cpfold was not found (python/cpfold beside cpprof). "
                 "Name your workload after --: cpprof profile -- -m pkg.module ARGS");
  }
  plan.cpfold = true;
  plan.cpfold_mode = sh.mode;
  plan.n_token = sh.n_token;
  plan.cp0 = sh.cp0;
  plan.cp1 = sh.cp1;
  plan.workload = {"-m",        "cpfold.run",
                   "--mode",    sh.mode,
                   "--n-token", std::to_string(sh.n_token),
                   "--cp0",     std::to_string(sh.cp0),
                   "--cp1",     std::to_string(sh.cp1)};
  if (std::find(extra.begin(), extra.end(), "--pg-timeout") == extra.end()) {
    plan.workload.push_back("--pg-timeout");
    plan.workload.push_back(fmt::format("{}", plan.pg_timeout_s));
  }
  plan.workload.insert(plan.workload.end(), extra.begin(), extra.end());
  return OkStatus();
}

// A workload cpprof does not know, as given after --: '-m MODULE ARGS' or 'SCRIPT ARGS'.
Status PlanOwnWorkload(const ProfileOptions& o, Plan& plan) {
  plan.workload = o.args;
  if (plan.workload[0] == "-m" && plan.workload.size() < 2) {
    return Error(ExitCode::kUsage, "'-m' after -- needs a module name: cpprof profile -- -m pkg.module ARGS");
  }
  if (StartsWith(Basename(plan.workload[0]), "python")) {
    return Error(ExitCode::kUsage, fmt::format("leave the interpreter out: torchrun runs the workload with its own "
                                               "Python. Write 'cpprof profile -- -m MODULE ARGS' or '-- SCRIPT "
                                               "ARGS', not '-- {} ...'",
                                               plan.workload[0]));
  }
  if (StartsWith(plan.workload[0], "-") && plan.workload[0] != "-m") {
    return Error(ExitCode::kUsage, fmt::format("the workload after -- must start with '-m MODULE' or a script, not "
                                               "'{}'",
                                               plan.workload[0]));
  }
  plan.warnings.push_back(
      fmt::format("the process-group timeout cannot be passed to a workload cpprof does not know: it gets "
                  "CPPROF_PG_TIMEOUT_S={} in its environment (use it in init_process_group(timeout=...))",
                  plan.pg_timeout_s));
  return OkStatus();
}

// The run's workflow (the results subfolder) and name: given, or from the workload.
Status ChooseNames(const ProfileOptions& o, const PlanInputs& in, Plan& plan) {
  plan.workflow = !o.workflow.empty() ? o.workflow
                  : plan.cpfold       ? (plan.cpfold_mode == "train" ? "training" : "inference")
                                      : "custom";
  if (!o.name.empty()) {
    plan.name = o.name;
  } else if (plan.cpfold) {
    plan.name = fmt::format("cpfold-{}-n{}-{}x{}-{}", plan.cpfold_mode, plan.n_token, plan.cp0, plan.cp1, o.preset);
  } else {
    plan.name = fmt::format("{}-{}", WorkloadStem(plan.workload), o.preset);
  }
  if (o.nnodes > 1 && !in.host.empty()) plan.name += "-" + in.host;  // one report per node
  if (!ValidName(plan.name)) {
    return Error(ExitCode::kUsage, fmt::format("--name '{}' must be letters, digits, '-', '_' or '.', and not start "
                                               "with '.' or '-'",
                                               plan.name));
  }
  if (!ValidName(plan.workflow)) {
    return Error(ExitCode::kUsage,
                 fmt::format("--workflow '{}' must be letters, digits, '-', '_' or '.'", plan.workflow));
  }
  return OkStatus();
}

// Where one row of kOutputFiles goes.
std::string PathOf(const OutputPaths& p, const OutputFile& file) {
  return (file.in_tmp ? p.tmp_folder : p.base) + file.suffix;
}

// The output paths of the run: every row of kOutputFiles but the functions trace (cpprof writes
// one only when ChooseFunctionsTrace says so).
void AssignOutputPaths(const ProfileOptions& o, const PlanInputs& in, Plan& plan) {
  OutputPaths& p = plan.out;
  p.folder = o.results_dir + "/" + plan.workflow;
  p.base = p.folder + "/" + plan.name;
  // One /tmp folder per results folder and name: two results folders with a run of one name do
  // not share (and overwrite) each other's live logs.
  const std::string results_key = fs::absolute(p.folder).lexically_normal().string();
  uint32_t hash = 2166136261u;  // FNV-1a: the same name on every machine and build
  for (unsigned char c : results_key) hash = (hash ^ c) * 16777619u;
  p.tmp_folder = fmt::format("{}/{}/cpprof/{}-{:08x}", in.tmp_root, in.user, plan.name, hash);
  for (const OutputFile& file : kOutputFiles) {
    if (file.when != OutputWhen::kFunctionsTrace) p.*file.path = PathOf(p, file);
  }
  if (o.per_rank) {
    for (int r = 0; r < plan.ranks * plan.nnodes; ++r) p.rank_bases.push_back(fmt::format("{}.{}", p.base, r));
  }
  p.gitignore = o.results_dir + "/.gitignore";
}

// The nsys the doctor chose; none is an error, except for --dry-run (which shows the rest).
Status PickNsys(const ProfileOptions& o, const DoctorFindings& f, Plan& plan) {
  const doctor::NsysCandidate* nsys = f.Chosen();
  if (nsys) {
    plan.nsys = nsys->path;
    plan.nsys_version = nsys->version ? nsys->version->ToString() : nsys->version_text;
    return OkStatus();
  }
  const doctor::Check* c = FindCheck(f, "nsys");
  std::string why = fmt::format("no usable nsys: {}. {}", c ? c->detail : "none found",
                                c && !c->hint.empty() ? c->hint : doctor::InstallNsysHint());
  if (!o.dry_run) return Error(ExitCode::kCheckFailed, why);
  plan.nsys = "nsys";  // --dry-run still shows the rest of the plan
  plan.nsys_version = "unknown";
  plan.warnings.push_back(why);
  return OkStatus();
}

// The functions-trace JSON: given; made from --trace-function/--trace-discover (validated by
// import at run time, as 'cpprof trace-json' does); or cpfold's spec merged with the shipped
// pytorch.json.
void ChooseFunctionsTrace(const ProfileOptions& o, const DoctorFindings& f, const PlanInputs& in, Plan& plan) {
  OutputPaths& p = plan.out;
  const std::string written_by_cpprof = p.base + OutputSuffix(&OutputPaths::functions_trace);
  if (plan.workload.size() > 1 && plan.workload[0] == "-m") plan.entry_module = plan.workload[1];
  if (!o.trace_functions.empty() || !o.trace_discover.empty()) {
    plan.trace_json = p.functions_trace = written_by_cpprof;
    plan.trace_functions = o.trace_functions;
    plan.trace_discover = o.trace_discover;
    plan.trace_match = o.trace_match;
    plan.trace_base = f.functions_trace_base;
    if (plan.cpfold && !in.cpfold_spec.empty()) plan.trace_spec = in.cpfold_spec;
    if (f.functions_trace_base.empty()) {
      plan.warnings.push_back(
          "no pytorch.json shipped with this nsys: the functions-trace JSON names only the "
          "functions given");
    }
  } else if (!o.trace_json.empty()) {
    plan.trace_json = o.trace_json;
  } else if (plan.cpfold && !in.cpfold_spec.empty()) {
    // cpfold's modules name the readout's rows. fast takes cpfold's own classes only (a few
    // hundred ranges per iteration: about 2% on a GPU-bound run); full adds nsys's torch.* list.
    plan.trace_json = p.functions_trace = written_by_cpprof;
    plan.trace_spec = in.cpfold_spec;
    if (plan.preset == Preset::kFull) plan.trace_base = f.functions_trace_base;
  } else if (plan.preset == Preset::kFull && !f.functions_trace_base.empty()) {
    plan.trace_json = f.functions_trace_base;
    plan.warnings.push_back(
        "no --trace-json: using the pytorch.json shipped with nsys, which names torch.* only "
        "(make one that names your modules with 'cpprof trace-json')");
  }
}

// The fast preset's options: CUDA and NVTX only, no sampling.
Status AddFastOptions(OptionChecker& opt, const Plan& plan) {
  CPPROF_RETURN_IF_ERROR(opt.Add("trace", "cuda,nvtx", true));
  CPPROF_RETURN_IF_ERROR(opt.Add("sample", "none", false));
  CPPROF_RETURN_IF_ERROR(opt.Add("cpuctxsw", "none", false));
  if (!plan.trace_json.empty()) CPPROF_RETURN_IF_ERROR(opt.Add("python-functions-trace", plan.trace_json, false));
  return OkStatus();
}

// The full preset's backtraces: dropped as inert when the doctor says CPU sampling is off.
Status AddBacktraceOptions(const DoctorFindings& f, OptionChecker& opt, Plan& plan) {
  std::string sampling_why;
  if (const doctor::Check* c = FindCheck(f, "cpu-sampling")) sampling_why = c->detail;
  if (sampling_why.empty()) sampling_why = "CPU sampling is not available";
  if (f.cpu_sampling.has_value() && !*f.cpu_sampling) {
    opt.Drop("--cudabacktrace=all", "inert: " + sampling_why);
    opt.Drop("--python-backtrace=cuda", "inert: " + sampling_why);
    return OkStatus();
  }
  if (!f.cpu_sampling) {
    plan.warnings.push_back(
        "could not tell whether CPU sampling works: --cudabacktrace and --python-backtrace "
        "are kept but may be inert");
  }
  CPPROF_RETURN_IF_ERROR(opt.Add("cudabacktrace", "all", false));
  return opt.Add("python-backtrace", "cuda", false);
}

// The full preset's options: the seed's option set (OS runtime, memory, shapes, backtraces).
Status AddFullOptions(const DoctorFindings& f, OptionChecker& opt, Plan& plan) {
  CPPROF_RETURN_IF_ERROR(opt.Add("trace", "cuda,nvtx,osrt", true));
  CPPROF_RETURN_IF_ERROR(opt.Add("cuda-memory-usage", "true", false));
  const std::string token = "autograd-shapes-nvtx";
  const auto& tokens = f.profile_help.pytorch_tokens;
  if (f.profile_help_read && f.profile_help.HasOption("pytorch") &&
      std::find(tokens.begin(), tokens.end(), token) == tokens.end()) {
    opt.Drop("--pytorch=" + token,
             fmt::format("this nsys's --pytorch accepts only {}",
                         tokens.empty() ? "(none listed)" : fmt::format("{}", fmt::join(tokens, ", "))));
  } else {
    CPPROF_RETURN_IF_ERROR(opt.Add("pytorch", token, false));
  }
  if (!plan.trace_json.empty()) {
    CPPROF_RETURN_IF_ERROR(opt.Add("python-functions-trace", plan.trace_json, false));
  } else {
    plan.warnings.push_back(
        "no functions-trace JSON (no --trace-json and no pytorch.json shipped with this nsys): "
        "module names will be missing");
  }
  if (!plan.trace_json.empty() && f.profile_help.functions_trace_needs_nvtx && f.python.runs && !f.python.nvtx) {
    plan.warnings.push_back(
        "this nsys's help says --python-functions-trace needs the nvtx package, which the "
        "workload's Python lacks (nsys 2025.3.1 was seen naming ranges without it)");
  }
  return AddBacktraceOptions(f, opt, plan);
}

// The nsys options, each checked against this nsys's help; the functions trace is chosen between
// the output options and the preset's (its warnings come in that order).
Status AddNsysOptions(const ProfileOptions& o, const DoctorFindings& f, const PlanInputs& in, Plan& plan) {
  OptionChecker opt(f, plan);
  // --per-rank: each rank's nsys names its report by the RANK torchrun gives it.
  CPPROF_RETURN_IF_ERROR(opt.Add("output", o.per_rank ? plan.out.base + ".%q{RANK}" : plan.out.base, true));
  CPPROF_RETURN_IF_ERROR(opt.Add("force-overwrite", "true", true));
  // nsys 2025.3.1's --export=sqlite leaves the NVTX payloads out (NCCL's communicator ids and
  // ranks, the Python backtraces); 'nsys export --include-json true' after the run keeps them.
  if (f.ExportKeepsPayloads()) {
    plan.export_options = {"--include-json", "true"};
  } else {
    CPPROF_RETURN_IF_ERROR(opt.Add("export", "sqlite", false));
  }
  ChooseFunctionsTrace(o, f, in, plan);
  return plan.preset == Preset::kFast ? AddFastOptions(opt, plan) : AddFullOptions(f, opt, plan);
}

// The launch: torchrun's own options, then the launcher, then '--' and the workload. torchrun
// takes abbreviations of its options (--n for --nnodes, ...) anywhere before its training
// script's arguments start; everything after the '--' that follows the launcher is positional for
// its parser, and the launcher hands it to the workload untouched.
std::vector<std::string> MakeLaunch(const ProfileOptions& o, const DoctorFindings& f, const PlanInputs& in,
                                    const Plan& plan, const std::vector<std::string>& workload,
                                    const std::string& rdzv_suffix, bool nsys_inside) {
  std::vector<std::string> l = {f.python.torchrun.empty() ? "torchrun" : f.python.torchrun};
  if (o.nnodes == 1) {
    l.push_back("--standalone");
    l.push_back("--nnodes=1");
  } else {
    l.push_back(fmt::format("--nnodes={}", o.nnodes));
    l.push_back("--rdzv_backend=c10d");
    l.push_back("--rdzv_endpoint=" + o.rdzv_endpoint);
    l.push_back("--rdzv_id=cpprof-" + (o.name.empty() ? plan.workflow : o.name) + rdzv_suffix);
  }
  l.push_back(fmt::format("--nproc_per_node={}", plan.ranks));
  if (nsys_inside) {
    // torchrun starts `nsys profile ... python launcher` per rank instead of python.
    l.push_back("--no_python");
    l.push_back(plan.nsys);
    l.push_back("profile");
    l.insert(l.end(), plan.nsys_options.begin(), plan.nsys_options.end());
    l.push_back(f.python.path.empty() ? "python3" : f.python.path);
  }
  l.push_back(in.launcher);
  l.push_back("--");
  l.insert(l.end(), workload.begin(), workload.end());
  return l;
}

// Whether the feasibility probe runs, and why.
void DecideProbe(const ProfileOptions& o, Plan& plan) {
  plan.overhead = plan.preset == Preset::kFull ? 3.0 : 1.1;
  if (o.no_probe) {
    plan.probe_why = "off (--no-probe)";
  } else if (o.probe) {
    plan.probe = true;
    plan.probe_why = "on (--probe)";
  } else if (plan.preset == Preset::kFull && plan.cpfold) {
    plan.probe = true;
    plan.probe_why = "on (the default for the full preset; --no-probe skips it)";
  } else {
    plan.probe_why = plan.cpfold ? "off (the fast preset; --probe runs it)"
                                 : "off (a workload cpprof does not know is probed only with --probe)";
  }
}

// cpfold e2e: the probe runs at most 2 of the preset's diffusion steps (its steps come from cpfold
// itself, python/cpfold/presets.json); iter_scale scales the probe's time back up.
void ShortenCpfoldDiffusion(const PlanInputs& in, Plan& plan, std::vector<std::string>& w) {
  const std::vector<std::string>& a = plan.workload;
  const CpfoldPresets& cp = in.cpfold_presets;
  std::string preset = LastFlagValue(a, "--preset").value_or(cp.default_preset);
  auto known = cp.diffusion_steps.find(preset);
  int planned = IntOr(LastFlagValue(a, "--diffusion-steps"), known != cp.diffusion_steps.end() ? known->second : 0);
  if (planned == 0) {
    plan.warnings.push_back(fmt::format(
        "the diffusion steps of cpfold's {} are unknown, so the probe runs them all ({}); "
        "--diffusion-steps N names them",
        preset.empty() ? std::string("default preset") : "preset '" + preset + "'",
        in.cpfold_presets_error.empty() ? "no such preset in cpfold/presets.json" : in.cpfold_presets_error));
  }
  int probe_steps = std::min(planned, 2);
  if (probe_steps >= 1 && probe_steps < planned) {
    w.push_back("--diffusion-steps");
    w.push_back(std::to_string(probe_steps));
    plan.iter_scale = static_cast<double>(planned) / probe_steps;
  }
}

// The probe's launch: the same without nsys, shortened (cpfold: one iteration; another workload:
// CPPROF_PROBE_ITERS and the --probe-cap).
void PlanProbe(const ProfileOptions& o, const DoctorFindings& f, const PlanInputs& in, Plan& plan) {
  std::vector<std::string> w = plan.workload;
  if (plan.cpfold) {
    const std::vector<std::string>& a = plan.workload;
    plan.planned_iters = IntOr(LastFlagValue(a, "--iters"), 3) + IntOr(LastFlagValue(a, "--warmup"), 1);
    for (const char* x : {"--iters", "1", "--warmup", "0"}) w.push_back(x);
    if (plan.cpfold_mode == "e2e") ShortenCpfoldDiffusion(in, plan, w);
  }
  plan.probe_argv = MakeLaunch(o, f, in, plan, w, "-probe", false);
  // A workload that runs its iterations through cpprof_workload.schedule runs only the first
  // two (a warm-up and a timed one) and says in its lines how many the whole run does.
  if (!plan.cpfold) plan.probe_env_additions[kProbeItersEnv] = "2";
  // A workload not known to print iteration lines runs under the cap until it prints one
  // (then CPPROF_PROBE_ITERS shortens it, or it runs whole, under --timeout).
  if (!plan.cpfold) plan.probe_cap_s = o.probe_cap_s;
}

// The environment additions: the allocator, the importer's fix, PYTHONPATH, the pg timeout of a
// workload cpprof does not know, CUDA_VISIBLE_DEVICES; the caller's own settings win.
void AddEnvironment(const DoctorFindings& f, const PlanInputs& in, Plan& plan) {
  const auto& caller = in.caller_env;
  auto caller_has = [&](const std::string& k) { return caller.count(k) > 0; };
  auto caller_pythonpath = [&]() -> std::string {
    auto pp = caller.find("PYTHONPATH");
    return pp != caller.end() ? pp->second : "";
  };
  if (!caller_has("PYTORCH_CUDA_ALLOC_CONF")) {
    plan.env_additions["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True";
  } else {
    plan.warnings.push_back(
        fmt::format("kept the caller's PYTORCH_CUDA_ALLOC_CONF={} (cpprof would set "
                    "expandable_segments:True)",
                    caller.at("PYTORCH_CUDA_ALLOC_CONF")));
  }
  for (const auto& [k, v] : f.profile_env) plan.env_additions[k] = v;  // the importer's LD_LIBRARY_PATH fix
  if (plan.cpfold) {
    std::string pp = caller_pythonpath();
    plan.env_additions["PYTHONPATH"] = in.cpfold_root + (!pp.empty() ? ":" + pp : "");
  } else {
    plan.env_additions["CPPROF_PG_TIMEOUT_S"] = fmt::format("{}", plan.pg_timeout_s);
    if (!in.workload_kit_root.empty()) {  // after the caller's: a cpprof_workload of their own wins
      std::string pp = caller_pythonpath();
      plan.env_additions["PYTHONPATH"] = (!pp.empty() ? pp + ":" : "") + in.workload_kit_root;
    }
  }
  if (!plan.gpus.empty()) {
    if (caller_has("CUDA_VISIBLE_DEVICES")) {
      plan.warnings.push_back(
          fmt::format("kept the caller's CUDA_VISIBLE_DEVICES={}", caller.at("CUDA_VISIBLE_DEVICES")));
    } else {
      plan.env_additions["CUDA_VISIBLE_DEVICES"] = fmt::format("{}", fmt::join(plan.gpus, ","));
    }
  }
}

// The child's whole environment (and the probe's), and the caller's NCCL_*/TORCH_*/NVSHMEM_*
// settings it keeps, listed.
void MergeEnvironment(const PlanInputs& in, Plan& plan) {
  plan.env = in.caller_env;
  for (const auto& [k, v] : plan.env_additions) plan.env[k] = v;
  if (!plan.probe_env_additions.empty()) {
    plan.probe_env = plan.env;
    for (const auto& [k, v] : plan.probe_env_additions) plan.probe_env[k] = v;
  }
  for (const auto& [k, v] : in.caller_env) {
    if (StartsWith(k, "NCCL_") || StartsWith(k, "TORCH_") || StartsWith(k, "NVSHMEM_")) {
      plan.kept_from_caller.push_back(k + "=" + v);
    }
  }
}

}  // namespace

StatusOr<Plan> BuildPlan(const ProfileOptions& o, const DoctorFindings& f, const PlanInputs& in) {
  CPPROF_RETURN_IF_ERROR(CheckPlanOptions(o));
  Plan plan;
  plan.preset = *ParsePreset(o.preset);
  plan.nnodes = o.nnodes;
  plan.per_rank = o.per_rank;
  std::vector<std::string> extra;  // workload arguments after the shorthand
  CPPROF_ASSIGN_OR_RETURN(std::optional<Shorthand> sh, ReadShorthand(o, extra));
  CPPROF_RETURN_IF_ERROR(ChooseRanksAndGpus(o, f, sh, plan));
  // Timeouts: the process group gives up before cpprof kills the run.
  plan.timeout_s = o.timeout_s;
  plan.pg_timeout_s = std::min(600.0, std::max(1.0, std::floor(o.timeout_s / 2)));
  CPPROF_RETURN_IF_ERROR(sh ? PlanCpfoldWorkload(*sh, extra, in, plan) : PlanOwnWorkload(o, plan));
  CPPROF_RETURN_IF_ERROR(ChooseNames(o, in, plan));
  AssignOutputPaths(o, in, plan);
  CPPROF_RETURN_IF_ERROR(PickNsys(o, f, plan));
  CPPROF_RETURN_IF_ERROR(AddNsysOptions(o, f, in, plan));
  if (in.launcher.empty()) {
    return Error(ExitCode::kError,
                 "python/cpprof_helpers/launch_workload.py not found: set CPPROF_HELPERS_DIR to "
                 "the python/cpprof_helpers folder of cpprof's checkout");
  }
  plan.launch = MakeLaunch(o, f, in, plan, plan.workload, "", plan.per_rank);
  DecideProbe(o, plan);
  if (plan.probe) PlanProbe(o, f, in, plan);
  if (plan.per_rank) {
    plan.argv = plan.launch;
  } else {
    plan.argv = {plan.nsys, "profile"};
    plan.argv.insert(plan.argv.end(), plan.nsys_options.begin(), plan.nsys_options.end());
    plan.argv.insert(plan.argv.end(), plan.launch.begin(), plan.launch.end());
  }
  AddEnvironment(f, in, plan);
  MergeEnvironment(in, plan);
  return plan;
}

std::vector<Status> Guards(const Plan& plan, const ProfileOptions& o, const DoctorFindings& f) {
  std::vector<Status> out;
  // nsys must be able to make a report.
  const doctor::ImporterCheck& imp = f.importer;
  if (imp.checked && !imp.loads && !imp.loads_with_fix) {
    const doctor::Check* c = FindCheck(f, "importer");
    out.push_back(Error(ExitCode::kCheckFailed,
                        fmt::format("nsys cannot make a report here: {}. Fix: {}", c ? c->detail : imp.output,
                                    c && !c->hint.empty() ? c->hint : "see 'cpprof doctor'")));
  }
  // GPUs: they must exist, the ranks' GPUs must be free, never more ranks than free GPUs.
  if (!f.nvidia_smi_error.empty() || f.gpus.empty()) {
    out.push_back(Error(ExitCode::kCheckFailed,
                        fmt::format("no GPU to profile on ({}). Run cpprof profile on the GPU machine.",
                                    f.nvidia_smi_error.empty() ? "nvidia-smi lists none" : f.nvidia_smi_error)));
  } else {
    std::vector<std::string> busy_parts;
    std::set<int> chosen(plan.gpus.begin(), plan.gpus.end());
    int free_count = 0;
    std::set<int> busy;
    for (const auto& b : f.busy) busy.insert(b.index);
    for (int t : f.targets) free_count += !busy.count(t);
    for (const auto& b : f.busy) {
      std::vector<std::string> pids;
      for (const auto& a : b.apps) {
        pids.push_back(a.used_memory_mib >= 0 ? fmt::format("PID {} ({} MiB)", a.pid, a.used_memory_mib)
                                              : fmt::format("PID {}", a.pid));
      }
      if (chosen.count(b.index) || free_count < plan.ranks) {
        busy_parts.push_back(fmt::format("GPU {} is busy: {}", b.index, fmt::join(pids, ", ")));
      }
    }
    if (!o.gpus.empty() && !busy_parts.empty()) {
      out.push_back(Error(ExitCode::kCheckFailed,
                          fmt::format("the target GPUs are not free: {}. Wait for those processes or pick free GPUs "
                                      "with --gpus (one job per GPU, never oversubscribe).",
                                      fmt::join(busy_parts, "; "))));
    } else if (plan.ranks > free_count) {
      out.push_back(
          Error(ExitCode::kCheckFailed,
                fmt::format("{} ranks need {} free GPUs but only {} of {} {} free{}{}. Wait for them, or "
                            "ask for fewer ranks (never more ranks than free GPUs).",
                            plan.ranks, plan.ranks, free_count, f.targets.size(), free_count == 1 ? "is" : "are",
                            busy_parts.empty() ? "" : ": ", fmt::join(busy_parts, "; "))));
    }
  }
  // Never overwrite a result without --force.
  if (!o.force) {
    std::vector<std::string> existing;
    for (const auto& r : plan.out.Results()) {
      std::error_code ec;
      if (fs::exists(r, ec)) existing.push_back(r);
    }
    if (!existing.empty()) {
      out.push_back(Error(ExitCode::kUsage,
                          fmt::format("a result named '{}' exists ({}). Pass --force to replace it, or pick another "
                                      "--name.",
                                      plan.name, fmt::join(existing, ", "))));
    }
  }
  return out;
}

bool WaitingForGpusCanHelp(const Plan& plan, const ProfileOptions& o, const DoctorFindings& f) {
  if (f.busy.empty()) return false;
  std::set<int> busy;
  for (const auto& b : f.busy) busy.insert(b.index);
  int free_count = 0;
  for (int t : f.targets) free_count += !busy.count(t);
  if (plan.ranks > free_count) return true;
  if (!o.gpus.empty()) {
    for (int g : plan.gpus) {
      if (busy.count(g)) return true;
    }
  }
  return false;
}

DoctorFindings WaitForGpus(const ProfileOptions& o, const PlanInputs& in, DoctorFindings f,
                           const std::function<DoctorFindings()>& diagnose, const std::function<void(double)>& sleep_s,
                           std::ostream& err) {
  double waited = 0;
  while (true) {
    auto plan = BuildPlan(o, f, in);
    if (!plan.ok() || !WaitingForGpusCanHelp(*plan, o, f)) return f;
    if (waited >= o.max_wait_s) {
      err << fmt::format("cpprof: profile: waited {} s (--max-wait) and the GPUs are still busy\n", waited);
      return f;
    }
    std::vector<std::string> pids;
    for (const auto& b : f.busy) {
      for (const auto& a : b.apps) pids.push_back(fmt::format("GPU {} PID {}", b.index, a.pid));
    }
    err << fmt::format("cpprof: profile: waiting for busy GPUs ({}); asking again in {} s\n", fmt::join(pids, ", "),
                       o.poll_s);
    sleep_s(o.poll_s);
    waited += o.poll_s;
    f = diagnose();
  }
}

namespace {

// One argument of an argv listing, one per line: as it is, unless that would be ambiguous (empty,
// a control character such as a newline, a space at either end): then bash's $'...' quoting.
std::string ShowArg(const std::string& a) {
  bool plain = !a.empty() && a.front() != ' ' && a.back() != ' ' && a.front() != '$';
  for (unsigned char c : a) plain = plain && c >= 0x20 && c != 0x7f;
  if (plain) return a;
  std::string q = "$'";
  for (unsigned char c : a) {
    if (c == '\n') {
      q += "\\n";
    } else if (c == '\t') {
      q += "\\t";
    } else if (c == '\\' || c == '\'') {
      q += '\\';
      q += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      q += fmt::format("\\x{:02x}", c);
    } else {
      q += static_cast<char>(c);
    }
  }
  return q + "'";
}

}  // namespace

std::string DescribePlan(const Plan& plan) {
  std::string s;
  s += fmt::format("nsys: {} ({})\n", plan.nsys, plan.nsys_version);
  s += fmt::format("preset: {}\n", plan.preset == Preset::kFast ? "fast" : "full");
  s += fmt::format(
      "ranks: {} per node x {} node(s){}\n", plan.ranks, plan.nnodes,
      plan.cpfold ? fmt::format(" (cpfold {} N={}, {}x{} grid)", plan.cpfold_mode, plan.n_token, plan.cp0, plan.cp1)
                  : "");
  s += "command (argv, one per line):\n";
  for (const auto& a : plan.argv) s += "  " + ShowArg(a) + "\n";
  s += "environment additions:\n";
  for (const auto& [k, v] : plan.env_additions) s += fmt::format("  {}={}\n", k, v);
  if (!plan.kept_from_caller.empty()) {
    s += "kept from the caller's environment:\n";
    for (const auto& kv : plan.kept_from_caller) s += "  " + kv + "\n";
  }
  s += plan.export_options.empty()
           ? std::string("export: nsys profile --export=sqlite (NVTX payloads left out)\n")
           : fmt::format(
                 "export: after the run, {} export --type sqlite {} (keeps NVTX payloads: NCCL's "
                 "communicator ids and ranks, Python backtraces)\n",
                 plan.nsys, fmt::join(plan.export_options, " "));
  s += fmt::format("timeout: {} s (the process group's: {} s)\n", plan.timeout_s, plan.pg_timeout_s);
  s += fmt::format("probe: {}\n", plan.probe_why);
  if (plan.probe) {
    s += "probe command, run first without nsys (argv, one per line):\n";
    for (const auto& a : plan.probe_argv) s += "  " + ShowArg(a) + "\n";
    for (const auto& [k, v] : plan.probe_env_additions) s += fmt::format("probe environment addition: {}={}\n", k, v);
    if (!plan.cpfold) {
      s += plan.probe_cap_s > 0
               ? fmt::format(
                     "probe cap: stopped after {:g} s unless it has printed an iteration line by then (--probe-cap); "
                     "then only the memory seen so far is checked\n",
                     plan.probe_cap_s)
               : std::string("probe cap: none (--probe-cap 0): the probe runs until the workload ends or --timeout\n");
    }
    s += fmt::format(
        "probe predictions: memory per rank against its GPU with {:.0f}% kept free for nsys; time = "
        "startup + {} x the probe's time per iteration{} x {:.1f} (the preset's overhead factor, a "
        "guess) against --timeout\n",
        100 * plan.headroom,
        plan.planned_iters > 0 ? fmt::format("{} iterations", plan.planned_iters)
        : plan.cpfold          ? std::string("(the whole probe: iterations unknown)")
                               : std::string("the iterations its cpprof-iter lines announce (else the whole probe)"),
        plan.iter_scale > 1 ? fmt::format(" (up to x{:.1f} for the diffusion steps it skips)", plan.iter_scale)
                            : std::string(),
        plan.overhead);
  }
  if (!plan.dropped.empty()) {
    s += "dropped options:\n";
    for (const auto& d : plan.dropped) s += "  " + d + "\n";
  }
  if (!plan.warnings.empty()) {
    s += "warnings:\n";
    for (const auto& w : plan.warnings) s += "  " + w + "\n";
  }
  s += "outputs:\n";
  const OutputPaths& p = plan.out;
  for (const OutputFile& file : kOutputFiles) {
    if (file.when == OutputWhen::kRun || (file.when == OutputWhen::kProbe && plan.probe)) {
      s += "  " + p.*file.path + "\n";
    }
  }
  if (!plan.trace_functions.empty() || !plan.trace_discover.empty()) {
    std::vector<std::string> from;
    for (const auto& fn : plan.trace_functions) from.push_back("--trace-function " + fn);
    if (!plan.trace_discover.empty()) {
      from.push_back("--trace-discover " + plan.trace_discover +
                     (plan.trace_match.empty() ? "" : " --trace-match " + plan.trace_match));
    }
    if (!plan.trace_spec.empty()) from.push_back(plan.trace_spec);
    s += fmt::format("  {} (written from {}, validated by import with the workload's Python{})\n", p.functions_trace,
                     fmt::join(from, ", "), plan.trace_base.empty() ? "" : ", merged with " + plan.trace_base);
  } else if (!p.functions_trace.empty()) {
    s += fmt::format("  {} (written from {}{})\n", p.functions_trace, plan.trace_spec,
                     plan.trace_base.empty() ? "" : " + " + plan.trace_base);
  }
  return s;
}

}  // namespace cpprof::profile
