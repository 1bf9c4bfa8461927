// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// cpprof scaffold --model MODULE:Class [--entry METHOD] [--cp-wrapper MODULE:function]
//                 (--contract FILE | --checkpoint DIR) [--count NAME=N]... [--call dict|kwargs]
//                 [--n-token N] [--iters N] [--warmup N] [--seed S] [--gain G] -o OUT.py [--force]
// Writes a torchrun-ready profile module for a user's own model (the profiling recipe's steps 2
// and 3) that uses python/cpprof_workload: seeds, rank 0's control counts, synthetic inputs from
// the contract or a checkpoint's real entry point, warm-up and timed iterations marked for the
// probe and the readout, torch.no_grad(). Pure text: nothing is imported or run here.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <re2/re2.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>

#include "base/atomic_file.h"
#include "cli/command.h"
#include "doctor/functions_trace.h"
#include "runner/environment.h"
#include "runner/helpers.h"
#include "runner/process_runner.h"

namespace cpprof::cli {

namespace {

namespace fs = std::filesystem;

// The module written, with @NAME@ placeholders (Python's own braces stay as they are).
constexpr const char* kTemplate =
    R"PY("""Profile module for @MODEL_CLASS@ (@MODEL_MODULE@), written by `cpprof scaffold`.

Run on every CP rank (torchrun sets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT):

    torchrun --standalone --nproc_per_node=2 -m @SELF_MODULE@ --n-token 256
    cpprof profile --probe -- -m @SELF_MODULE@ --n-token 256

It seeds every rank alike, takes the control counts (@COUNT_NAMES@) from rank 0, runs
--warmup + --iters iterations marked for cpprof (NVTX ranges 'cpprof:warmupN'/'cpprof:iterN' and
one 'cpprof-iter:' line each) under torch.no_grad(), and ends by printing the `cpprof trace-json`
command that names the model's classes. Edit what it cannot know: the model's constructor
arguments (build_model) and, with a checkpoint, the inputs of the entry point (make_inputs).
"""
import argparse
import datetime
import json
import os
import sys

import torch
import torch.distributed as dist

try:
    import cpprof_workload as cw
except ImportError:  # run outside `cpprof profile`: the copy shipped with the cpprof that wrote this file
    sys.path.append(@KIT_ROOT@)  # where cpprof_workload was found when this file was written
    import cpprof_workload as cw

from @MODEL_MODULE@ import @MODEL_CLASS@
@CP_IMPORT@
SELF_MODULE = @SELF_MODULE_STR@  # this module, as `python -m` runs it
MODEL_NAME = @MODEL_NAME_STR@
TRACE_JSON = @TRACE_JSON_STR@  # where the trace-json command writes
CONTRACT = @CONTRACT@  # the input contract (docs/workload-kit.md); None: make_inputs below
CHECKPOINT = @CHECKPOINT@  # weights to load; None: Glorot-uniform x --gain
COUNTS = @COUNTS@  # control-flow counts: rank 0's values are broadcast to every rank


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m " + SELF_MODULE, allow_abbrev=False)
    p.add_argument("--n-token", type=int, default=@N_TOKEN@)
    p.add_argument("--iters", type=int, default=@ITERS@, help="timed iterations")
    p.add_argument("--warmup", type=int, default=@WARMUP@, help="warm-up iterations before them")
    p.add_argument("--seed", type=int, default=@SEED@)
    p.add_argument("--gain", type=float, default=@GAIN@, help="Glorot-uniform gain without a checkpoint")
    p.add_argument("--contract", default=CONTRACT)
    p.add_argument("--checkpoint", default=CHECKPOINT)
    p.add_argument("--pg-timeout", type=float, default=float(os.environ.get("CPPROF_PG_TIMEOUT_S", "600")),
                   help="seconds before a collective that never completes fails (divergent ranks)")
    for name, value in COUNTS.items():
        p.add_argument("--" + name.replace("_", "-"), dest=name, type=int, default=value)
    return p.parse_args(argv)


def setup():
    """The process group from torchrun's environment (none for a single plain process)."""
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    cuda = torch.cuda.is_available()
    device = torch.device("cuda", local_rank) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    return device, "nccl" if cuda else "gloo"


def build_model(args, device):
    if args.checkpoint and hasattr(@MODEL_CLASS@, "from_pretrained"):
        model = @MODEL_CLASS@.from_pretrained(args.checkpoint)  # edit: e.g. load_esmc=False
        how = f"from_pretrained({args.checkpoint!r})"
    else:
        model = @MODEL_CLASS@()  # edit: the constructor's arguments
        how = cw.load_checkpoint_or_init(model, args.checkpoint, gain=args.gain)
    model = model.to(device).eval()
    model = @CP_WRAP@
    return model, how


def make_inputs(args, device):
    if args.contract:
        batch = cw.synthetic_inputs(args.contract, n_token=args.n_token, seed=args.seed)
        cw.validate_inputs(batch, args.contract)
        return {k: v.to(device) for k, v in batch.items()}
    # No contract: drive the real entry point with a random sequence (edit to what it takes).
    g = torch.Generator().manual_seed(args.seed)
    return "".join("ACDEFGHIKLMNPQRSTVWY"[i] for i in torch.randint(0, 20, (args.n_token,), generator=g).tolist())


def run_entry(model, inputs, counts):
    return @ENTRY_CALL@


def trace_json_command(model):
    """The `cpprof trace-json` command that names the model's own classes (not torch's)."""
    top = @MODEL_TOP@
    seen = []
    for m in model.modules():
        c = type(m)
        if c.__module__.split(".")[0] == top and c.__module__ != "__main__":
            f = f"{c.__module__}:{c.__qualname__}.forward"
            if f not in seen:
                seen.append(f)
    args = " ".join(f"--function {f}" for f in seen)
    return f"cpprof trace-json {args} --entry-module {SELF_MODULE} -o {TRACE_JSON}"


def main(argv=None):
    args = parse_args(argv)
    device, backend = setup()
    distributed = "RANK" in os.environ and "WORLD_SIZE" in os.environ
    if distributed:
        dist.init_process_group(backend, timeout=datetime.timedelta(seconds=args.pg_timeout))
    rank = cw.rank()
    cw.seed_all(args.seed)  # identical weights and inputs on every rank
    counts = cw.broadcast_counts(**{k: getattr(args, k) for k in COUNTS})  # one collective
    model, how = build_model(args, device)
    inputs = make_inputs(args, device)
    if rank == 0:
        print("cpprof-workload: " + json.dumps(dict(model=MODEL_NAME, weights=how,
                                                    n_token=args.n_token, counts=counts, device=str(device),
                                                    world=dist.get_world_size() if distributed else 1)),
              flush=True)
    with torch.no_grad():
        for i, warm in cw.schedule(args.iters, args.warmup):
            if distributed:
                dist.barrier()
            with cw.iteration(i, warmup=warm):
                run_entry(model, inputs, counts)
    if rank == 0:
        print("cpprof-trace-json: " + trace_json_command(model), flush=True)
    if distributed:
        dist.barrier()
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
)PY";

void ReplaceAll(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

// The one quoting function for text written into the module: a Python string literal in ASCII
// (\\, \", control characters as \xNN, the rest of Unicode as \uNNNN or \UNNNNNNNN), so that no
// name or path can end the literal or the line; nullopt for text that is not UTF-8 (refused).
std::optional<std::string> PyStr(const std::string& s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return std::nullopt;
    uint32_t cp = len == 1 ? c : c & (0x7F >> len);
    for (int k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b >> 6) != 2) return std::nullopt;
      cp = (cp << 6) | (b & 0x3F);
    }
    constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return std::nullopt;  // overlong, surrogate
    if (cp == '\\' || cp == '"') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp >= 0x20 && cp < 0x7F) {
      out += static_cast<char>(cp);
    } else {
      out += cp < 0x100     ? fmt::format("\\x{:02x}", cp)
             : cp < 0x10000 ? fmt::format("\\u{:04x}", cp)
                            : fmt::format("\\U{:08x}", cp);
    }
    i += len;
  }
  return out + "\"";
}

// Python's keywords: not a module, class, method or count name.
bool IsKeyword(const std::string& s) {
  static const std::set<std::string> kKeywords = {
      "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
      "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
      "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
      "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};
  return kKeywords.count(s) > 0;
}

bool IsIdentifier(const std::string& s) {
  return doctor::IsDottedName(s) && s.find('.') == std::string::npos && !IsKeyword(s);
}

// identifier(.identifier)*, no part a keyword.
bool IsModuleName(const std::string& s) {
  if (!doctor::IsDottedName(s)) return false;
  for (size_t start = 0, end; start <= s.size(); start = end + 1) {
    end = std::min(s.find('.', start), s.size());
    if (IsKeyword(s.substr(start, end - start))) return false;
  }
  return true;
}

// "pkg.mod:Name" or "pkg.mod.Name" -> {"pkg.mod", "Name"}.
StatusOr<std::pair<std::string, std::string>> SplitTarget(const std::string& flag, const std::string& value,
                                                          const char* example) {
  std::string module, name;
  if (size_t colon = value.find(':'); colon != std::string::npos) {
    module = value.substr(0, colon), name = value.substr(colon + 1);
  } else if (size_t dot = value.rfind('.'); dot != std::string::npos) {
    module = value.substr(0, dot), name = value.substr(dot + 1);
  }
  if (!IsModuleName(module) || !IsIdentifier(name)) {
    return Error(
        ExitCode::kUsage,
        fmt::format("{} '{}': give the import path of the module and the name in it, e.g. {}", flag, value, example));
  }
  return std::make_pair(module, name);
}

std::string Absolute(const std::string& p) {
  std::error_code ec;
  fs::path a = fs::weakly_canonical(fs::absolute(p, ec), ec);
  return a.empty() ? p : a.string();
}

// The files that may define `module` (pkg/mod.py, pkg/mod/__init__.py) under the current folder and
// every PYTHONPATH entry: where Python would import it from (when it is not installed).
std::vector<std::string> ModuleFiles(const std::string& module) {
  std::string rel = module;
  std::replace(rel.begin(), rel.end(), '.', '/');
  std::vector<std::string> roots = {"."};
  if (const char* pp = std::getenv("PYTHONPATH"); pp && *pp) {
    std::string s = pp;
    for (size_t start = 0, end; start <= s.size(); start = end + 1) {
      end = s.find(':', start);
      if (end == std::string::npos) end = s.size();
      if (end > start) roots.push_back(s.substr(start, end - start));
    }
  }
  std::vector<std::string> out;
  for (const auto& r : roots) {
    for (const std::string& f : {r + "/" + rel + ".py", r + "/" + rel + "/__init__.py"}) {
      out.push_back(Absolute(f));
    }
  }
  return out;
}

// The module name `python -m` would run OUT.py as, from the current folder ("" when the path is
// not below it or has no .py name).
std::string ModuleNameOf(const std::string& out) {
  fs::path rel = fs::path(Absolute(out)).lexically_relative(fs::path(Absolute(".")));
  std::string s = rel.string();
  if (s.empty() || s.rfind("..", 0) == 0 || rel.extension() != ".py") return "";
  s.resize(s.size() - 3);
  if (fs::path(s).filename() == "__init__") s = fs::path(s).parent_path().string();
  std::replace(s.begin(), s.end(), '/', '.');
  return IsModuleName(s) ? s : "";
}

class ScaffoldCommand : public Command {
 public:
  void Declare(CLI::App& app) override {
    app.add_option("--model", model_, "The model class to profile: MODULE:Class, e.g. mypkg.model:FoldModel")
        ->required();
    app.add_option("--entry", entry_,
                   "The inference method the module calls (default: forward, i.e. model(inputs)); e.g. infer");
    app.add_option("--cp-wrapper", cp_wrapper_,
                   "MODULE:function that makes the model context-parallel: model = function(model)");
    app.add_option("--contract", contract_,
                   "The input contract (JSON, docs/workload-kit.md): inputs are synthesised from it and validated");
    app.add_option("--checkpoint", checkpoint_,
                   "Weights to load (a state-dict file, a folder holding one, or a from_pretrained folder); "
                   "without it: Glorot-uniform x --gain");
    app.add_option("--count", counts_,
                   "A control-flow count with its default, NAME=N (repeatable, e.g. recycles=3): broadcast from rank "
                   "0 and passed to the entry as a keyword");
    app.add_option("--call", call_, "How the entry takes the inputs: dict (entry(inputs)) or kwargs (entry(**inputs))")
        ->check(CLI::IsMember({"dict", "kwargs"}));
    app.add_option("--n-token", n_token_, "The default --n-token of the module")->check(CLI::PositiveNumber);
    app.add_option("--iters", iters_, "The default timed iterations")->check(CLI::PositiveNumber);
    app.add_option("--warmup", warmup_, "The default warm-up iterations")->check(CLI::NonNegativeNumber);
    app.add_option("--seed", seed_, "The default seed");
    app.add_option("--gain", gain_, "The default Glorot-uniform gain")->check(CLI::PositiveNumber);
    app.add_option("-o,--output", output_, "The module to write (OUT.py), outside the files that define the model")
        ->required();
    app.add_flag("--force", force_, "Replace the -o file when it exists");
  }

  StatusOr<int> Run(Context& ctx) override {
    using Target = std::pair<std::string, std::string>;  // MODULE, NAME
    CPPROF_ASSIGN_OR_RETURN(Target model, SplitTarget("--model", model_, "mypkg.model:FoldModel"));
    Target wrapper;
    if (!cp_wrapper_.empty()) {
      CPPROF_ASSIGN_OR_RETURN(wrapper, SplitTarget("--cp-wrapper", cp_wrapper_, "mypkg.cp:wrap_model_with_cp"));
    }
    CPPROF_RETURN_IF_ERROR(CheckInputs());
    CPPROF_ASSIGN_OR_RETURN(nlohmann::ordered_json counts, ParseCounts());
    CPPROF_ASSIGN_OR_RETURN(std::string self, SelfModule(model, wrapper));
    WriteFileOptions write;
    write.replace_existing = force_;
    if (!contract_.empty()) write.inputs.push_back(contract_);
    CPPROF_RETURN_IF_ERROR(CheckOutputPath(output_, write));

    std::string kit = runner::FindWorkloadKitRoot(runner::Environment::FromProcess()).value_or("");
    std::string names = CountNames(counts);
    CPPROF_ASSIGN_OR_RETURN(std::string text, Render(model, wrapper, counts, self, kit));
    CPPROF_RETURN_IF_ERROR(CheckParses(text));
    CPPROF_RETURN_IF_ERROR(WriteFileAtomically(output_, text, write));
    ctx.err << fmt::format(
        "cpprof: scaffold: wrote {} for {}:{} (entry {}, {}{}{})\n"
        "  try it:   torchrun --standalone --nproc_per_node=2 -m {} --n-token {}\n"
        "  profile:  cpprof profile --probe --trace-discover {} -- -m {} --n-token {}\n",
        output_, model.first, model.second, Entry(),
        contract_.empty() ? "checkpoint " + checkpoint_ : "contract " + contract_,
        names.empty() ? "" : ", counts " + names,
        kit.empty() ? "; cpprof_workload not found: put it on PYTHONPATH" : "", self, n_token_,
        model.first.substr(0, model.first.find('.')), self, n_token_);
    return 0;
  }

 private:
  std::string Entry() const { return entry_.empty() ? "forward" : entry_; }

  // --entry is a method name; the inputs come from --contract or --checkpoint, which exist.
  Status CheckInputs() const {
    if (!entry_.empty() && !IsIdentifier(entry_)) {
      return Error(ExitCode::kUsage, fmt::format("--entry '{}' is not a method name (e.g. infer)", entry_));
    }
    if (contract_.empty() && checkpoint_.empty()) {
      return Error(ExitCode::kUsage,
                   "no inputs: give --contract FILE (synthetic inputs from the model's input contract, "
                   "docs/workload-kit.md) or --checkpoint DIR (real weights; edit make_inputs for the entry point)");
    }
    if (!contract_.empty() && runner::Environment::IsDir(contract_)) {
      return Error(ExitCode::kUsage, fmt::format("--contract '{}' is a folder: give the contract's JSON file "
                                                 "(docs/workload-kit.md)",
                                                 contract_));
    }
    if (!contract_.empty() && !runner::Environment::IsFile(contract_)) {
      return Error(ExitCode::kBadInput, fmt::format("--contract '{}': no such file", contract_));
    }
    if (!std::isfinite(gain_)) {
      return Error(ExitCode::kUsage, fmt::format("--gain {}: give a finite positive number, e.g. --gain 0.1", gain_));
    }
    if (!checkpoint_.empty() && !fs::exists(checkpoint_)) {
      return Error(ExitCode::kBadInput, fmt::format("--checkpoint '{}': no such file or folder", checkpoint_));
    }
    return OkStatus();
  }

  // --count NAME=N (repeatable), in the order given: {"recycles": 3, ...}.
  StatusOr<nlohmann::ordered_json> ParseCounts() const {
    nlohmann::ordered_json counts = nlohmann::ordered_json::object();
    std::set<std::string> count_names;
    for (const auto& c : counts_) {
      size_t eq = c.find('=');
      std::string name = c.substr(0, eq);
      char* end = nullptr;
      errno = 0;
      long long v = eq == std::string::npos ? 0 : std::strtoll(c.c_str() + eq + 1, &end, 10);
      if (eq == std::string::npos || !IsIdentifier(name) || end == c.c_str() + eq + 1 || *end != '\0') {
        return Error(ExitCode::kUsage, fmt::format("--count '{}': write NAME=N, e.g. recycles=3", c));
      }
      // A count is an int64 tensor's value when rank 0 broadcasts it.
      if (errno == ERANGE || v < -kMaxCount || v > kMaxCount) {
        return Error(
            ExitCode::kUsage,
            fmt::format("--count '{}': the count is past +-{} (a control-flow count, e.g. recycles=3)", c, kMaxCount));
      }
      if (kOwnFlags.count(name)) {
        return Error(ExitCode::kUsage,
                     fmt::format("--count {}: the module has a flag --{} of its own; name the count otherwise", name,
                                 ToFlag(name)));
      }
      if (!count_names.insert(name).second) {
        return Error(ExitCode::kUsage, fmt::format("--count {} given twice", name));
      }
      counts[name] = v;
    }
    return counts;
  }

  // The module's own flags (parse_args), by dest: a count may not take one.
  inline static const std::set<std::string> kOwnFlags = {"n_token",  "iters",      "warmup",     "seed", "gain",
                                                         "contract", "checkpoint", "pg_timeout", "help", "h"};
  static constexpr long long kMaxCount = int64_t{1} << 53;
  static std::string ToFlag(std::string name) {
    std::replace(name.begin(), name.end(), '_', '-');
    return name;
  }

  static std::string CountNames(const nlohmann::ordered_json& counts) {
    std::string names;
    for (const auto& [k, v] : counts.items()) names += (names.empty() ? "" : ", ") + k;
    return names;
  }

  // The module the -o file will be. The __main__ trap: the module that defines the classes must
  // not be the one run with -m (it would run as __main__, and nsys cannot annotate __main__'s
  // classes).
  StatusOr<std::string> SelfModule(const std::pair<std::string, std::string>& model,
                                   const std::pair<std::string, std::string>& wrapper) const {
    const std::string out_abs = Absolute(output_);
    for (const auto& [what, module] : {std::pair<std::string, std::string>{"--model", model.first},
                                       std::pair<std::string, std::string>{"--cp-wrapper", wrapper.first}}) {
      if (module.empty()) continue;
      for (const auto& f : ModuleFiles(module)) {
        if (f == out_abs) {
          return Error(ExitCode::kUsage,
                       fmt::format("-o {} is the file that defines {} ({}): run as '-m' it would be __main__, whose "
                                   "classes nsys cannot annotate and a second import would duplicate. Write the "
                                   "profile module to a file of its own, e.g. -o profile_{}.py",
                                   output_, what, module, fs::path(output_).stem().string()));
        }
      }
    }
    std::string self = ModuleNameOf(output_);
    if (self == model.first || (!wrapper.first.empty() && self == wrapper.first)) {
      return Error(ExitCode::kUsage, fmt::format("-o {} would be module '{}', the module that defines the model: "
                                                 "write the profile module to a file of its own",
                                                 output_, self));
    }
    if (self.empty()) self = fs::path(output_).stem().string();
    if (fs::path(output_).extension() != ".py" || !IsModuleName(self)) {
      return Error(ExitCode::kUsage,
                   fmt::format("-o {}: the module's file name must be a Python module name (letters, digits and _, "
                               "not a keyword) ending in .py, as 'python -m' runs it, e.g. -o profile_model.py",
                               output_));
    }
    return self;
  }

  // The written text parses as Python: python3's own parser when there is one, else the checks
  // that no placeholder is left and the template's docstrings are the only triple-quoted strings.
  static constexpr size_t kTemplateTripleQuotes = 6;
  static Status CheckParses(const std::string& text) {
    auto bug = [](const std::string& why) {
      return Error(ExitCode::kError,
                   fmt::format("scaffold: the module it would write does not parse ({}); nothing was written. This "
                               "is a bug in cpprof: please report it with the command line",
                               why));
    };
    static const RE2 kPlaceholder("@[A-Z_]+@");
    if (RE2::PartialMatch(text, kPlaceholder)) return bug("a placeholder is left");
    size_t quotes = 0;
    for (size_t at = text.find("\"\"\""); at != std::string::npos; at = text.find("\"\"\"", at + 3)) ++quotes;
    if (quotes != kTemplateTripleQuotes) return bug(fmt::format("{} triple quotes", quotes));
    std::optional<std::string> python = runner::Environment::FromProcess().FindOnPath("python3");
    if (!python) return OkStatus();
    runner::RunOptions o;
    o.stdin_data = text;
    o.timeout_s = 60;
    runner::RealProcessRunner runner;
    StatusOr<runner::ProcessResult> r =
        runner.Run({*python, "-I", "-c", "import ast, sys; ast.parse(sys.stdin.buffer.read())"}, o);
    if (r.ok() && !r->ok() && !r->timed_out) {
      std::string err = r->err;
      while (!err.empty() && err.back() == '\n') err.pop_back();
      return bug("python3: " + err.substr(err.rfind('\n') + 1));
    }
    return OkStatus();
  }

  // The module's text: kTemplate with its @PLACEHOLDERS@ filled. Names are checked identifiers;
  // paths and other text go in as PyStr literals (text that is not UTF-8 is refused).
  StatusOr<std::string> Render(const std::pair<std::string, std::string>& model,
                               const std::pair<std::string, std::string>& wrapper, const nlohmann::ordered_json& counts,
                               const std::string& self, const std::string& kit) const {
    std::string text = kTemplate;
    std::map<std::string, std::string> literals;
    for (const auto& [key, flag, value] : std::vector<std::tuple<std::string, std::string, std::string>>{
             {"@KIT_ROOT@", "cpprof_workload's folder", kit},
             {"@CONTRACT@", "--contract", contract_.empty() ? "" : Absolute(contract_)},
             {"@CHECKPOINT@", "--checkpoint", checkpoint_.empty() ? "" : Absolute(checkpoint_)},
             {"@MODEL_TOP@", "--model", model.first.substr(0, model.first.find('.'))},
             {"@SELF_MODULE_STR@", "-o", self},
             {"@MODEL_NAME_STR@", "--model", model.first + ":" + model.second},
             {"@TRACE_JSON_STR@", "-o", fs::path(output_).stem().string() + ".trace.json"}}) {
      std::optional<std::string> lit = PyStr(value);
      if (!lit) {
        return Error(ExitCode::kUsage, fmt::format("{} names a path that is not UTF-8: rename it, or give the "
                                                   "path through a link whose name is",
                                                   flag));
      }
      literals[key] = value.empty() && (key == "@CONTRACT@" || key == "@CHECKPOINT@") ? "None" : *lit;
    }
    std::string target = Entry() == "forward" ? "model" : "model." + Entry();
    // Without a contract the inputs are a sequence (make_inputs), passed as one argument.
    std::string args = call_ == "kwargs" && !contract_.empty() ? "**inputs" : "inputs";
    std::string entry_call =
        counts.empty() ? fmt::format("{}({})", target, args) : fmt::format("{}({}, **counts)", target, args);
    std::string names = CountNames(counts);
    ReplaceAll(text, "@CP_IMPORT@",
               wrapper.first.empty() ? "" : fmt::format("from {} import {}\n", wrapper.first, wrapper.second));
    ReplaceAll(text, "@CP_WRAP@",
               wrapper.first.empty() ? "model  # no --cp-wrapper: edit to wrap the model for CP"
                                     : fmt::format("{}(model)", wrapper.second));
    ReplaceAll(text, "@ENTRY_CALL@", entry_call);
    ReplaceAll(text, "@COUNTS@", counts.dump());
    ReplaceAll(text, "@COUNT_NAMES@", names.empty() ? "none given" : names);
    ReplaceAll(text, "@MODEL_MODULE@", model.first);
    ReplaceAll(text, "@MODEL_CLASS@", model.second);
    ReplaceAll(text, "@SELF_MODULE@", self);
    ReplaceAll(text, "@N_TOKEN@", std::to_string(n_token_));
    ReplaceAll(text, "@ITERS@", std::to_string(iters_));
    ReplaceAll(text, "@WARMUP@", std::to_string(warmup_));
    ReplaceAll(text, "@SEED@", std::to_string(seed_));
    ReplaceAll(text, "@GAIN@", fmt::format("{}", gain_));
    // Last: a path may hold text that looks like a placeholder.
    for (const auto& [key, lit] : literals) ReplaceAll(text, key, lit);
    return text;
  }

  std::string model_, entry_, cp_wrapper_, contract_, checkpoint_, output_;
  std::vector<std::string> counts_;
  std::string call_ = "dict";
  int n_token_ = 256, iters_ = 3, warmup_ = 1, seed_ = 0;
  double gain_ = 0.1;
  bool force_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeScaffoldCommand() { return std::make_unique<ScaffoldCommand>(); }

}  // namespace cpprof::cli
