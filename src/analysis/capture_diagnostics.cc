// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/capture_diagnostics.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace cpprof::analysis {

namespace {

using model::Diagnostic;
using Severity = model::Diagnostic::Severity;

constexpr size_t kMaxListed = 10;

Diagnostic Make(Severity s, std::string id, std::string title, std::string detail, std::string fix) {
  Diagnostic d;
  d.severity = s;
  d.id = std::move(id);
  d.title = std::move(title);
  d.detail = std::move(detail);
  d.fix = std::move(fix);
  return d;
}

bool HasInjection(const model::CaptureInfo& c, std::string_view name) {
  return std::find(c.injections.begin(), c.injections.end(), name) != c.injections.end();
}

// nsys's shipped pytorch.json names hundreds of torch functions a model never calls: a missing
// range there says nothing.
bool IsTorchModule(const std::string& module) { return module == "torch" || module.rfind("torch.", 0) == 0; }

std::string Join(const std::vector<std::string>& items, size_t max_listed) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < max_listed; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > max_listed) out += fmt::format(" and {} more", items.size() - max_listed);
  return out;
}

// The functions-trace entries of one domain.
using DomainEntries = std::vector<const model::FunctionsTraceEntry*>;

// A functions-trace domain that recorded no range (d: its facts, nullptr when it never appeared):
// the warning, with the likely cause (the -m entry module is traced) and its fix.
Diagnostic EmptyDomain(const std::string& domain, const model::NvtxDomainFacts* d, const DomainEntries& entries,
                       const std::string& entry) {
  std::vector<std::string> modules;
  for (const auto* e : entries) {
    if (std::find(modules.begin(), modules.end(), e->module) == modules.end()) modules.push_back(e->module);
  }
  std::vector<std::string> listed;
  for (const auto* e : entries) {
    for (const auto& f : e->functions) listed.push_back(e->module + "." + f);
  }
  std::string detail = fmt::format("The functions-trace JSON lists {} function{} in domain '{}' (module{} {}): {}. {}",
                                   listed.size(), listed.size() == 1 ? "" : "s", domain, modules.size() == 1 ? "" : "s",
                                   Join(modules, kMaxListed), Join(listed, kMaxListed),
                                   d == nullptr ? "The domain never appeared in the export."
                                                : "nsys created the domain, but no range of it was recorded.");
  bool entry_is_traced = !entry.empty() && std::find(modules.begin(), modules.end(), entry) != modules.end();
  std::string fix;
  if (entry_is_traced) {
    detail += fmt::format(
        " Cause: the job was launched with `-m {}`, so that module ran as __main__; nsys annotates a module "
        "when it is imported under its listed name, which never happened.",
        entry);
    fix = fmt::format(
        "Move the traced classes out of the entry module into a module it imports (or launch a small script "
        "that imports {} and calls its main), then profile again. `cpprof trace-json` refuses classes of "
        "the -m entry module.",
        entry);
  } else {
    detail +=
        " Likely causes: the module was never imported under that name; the functions were never "
        "called during the capture; a Class.method is misspelt or is inherited (name the class that "
        "defines it).";
    fix =
        "Check every entry with `cpprof trace-json --function MODULE:Class.method`, which imports it with "
        "the workload's Python.";
  }
  return Make(Severity::kWarning, "functions-trace-domain-empty",
              fmt::format("functions-trace domain '{}' recorded no ranges", domain), std::move(detail), std::move(fix));
}

// A domain that recorded ranges: the functions listed in it (torch's left out) that did not, as a
// milder note.
void MissingFunctions(const std::string& domain, const DomainEntries& entries, const std::set<std::string>& named,
                      std::vector<Diagnostic>& out) {
  std::vector<std::string> missing;
  size_t listed_total = 0;
  for (const auto* e : entries) {
    if (IsTorchModule(e->module)) continue;
    for (const auto& f : e->functions) {
      ++listed_total;
      std::string name = e->module + "." + f;
      if (!named.count(domain + ":" + name)) missing.push_back(name);
    }
  }
  if (!missing.empty()) {
    out.push_back(Make(
        Severity::kInfo, "functions-trace-functions-missing",
        fmt::format("{} of {} functions listed in domain '{}' recorded no range", missing.size(), listed_total, domain),
        fmt::format("Never recorded: {}. They were not called during the capture, or are misspelt or inherited.",
                    Join(missing, kMaxListed)),
        "Nothing to do if they are not on the profiled path; otherwise check them with `cpprof trace-json "
        "--function MODULE:Class.method`."));
  }
}

// The functions-trace JSON was given: whether it could be read, its injection started, and each of
// its domains (and functions) recorded ranges.
void FunctionsTrace(const model::CaptureInfo& c, const model::NvtxFacts& facts, std::vector<Diagnostic>& out) {
  if (!c.functions_trace_error.empty()) {
    out.push_back(Make(Severity::kWarning, "functions-trace-unreadable", "the functions-trace JSON could not be read",
                       c.functions_trace_error + "; its domains were not checked.", ""));
  }
  if (c.functions_trace.empty()) return;
  // The injection says it started in DIAGNOSTIC_EVENT; only trust its absence when other
  // injections did say so (older exports have no such messages).
  if (!c.injections.empty() && !HasInjection(c, "Python Functions Trace")) {
    out.push_back(Make(Severity::kError, "functions-trace-not-loaded",
                       "--python-functions-trace was given but its injection never started",
                       "nsys recorded the functions-trace JSON, but no process said \"Python Functions Trace "
                       "injection initialized successfully\".",
                       "Check that the workload runs a Python that nsys can inject (CPython, not a frozen binary) "
                       "and that --trace includes nvtx."));
  }
  std::string entry = EntryModule(c);
  std::set<std::string> named(facts.named_ranges.begin(), facts.named_ranges.end());
  // Domains in the order the JSON first names them.
  std::vector<std::string> domains;
  std::map<std::string, DomainEntries> entries;
  for (const auto& e : c.functions_trace) {
    if (!entries.count(e.domain)) domains.push_back(e.domain);
    entries[e.domain].push_back(&e);
  }
  for (const auto& domain : domains) {
    const model::NvtxDomainFacts* d = facts.Domain(domain);
    if (d == nullptr || d->ranges == 0) {
      out.push_back(EmptyDomain(domain, d, entries[domain], entry));
    } else {
      MissingFunctions(domain, entries[domain], named, out);
    }
  }
}

void Autograd(const model::CaptureInfo& c, const model::NvtxFacts& facts, std::vector<Diagnostic>& out) {
  // --pytorch is not in META_DATA_CAPTURE; its injection's start message is the only evidence
  // (CaptureInfo::pytorch_autograd). Without it nothing can be said, so nothing is.
  if (!c.pytorch_autograd || facts.autograd_op_ranges > 0) return;
  const model::NvtxDomainFacts* def = facts.Domain("");
  int64_t other = def ? def->ranges : 0;
  out.push_back(
      Make(Severity::kWarning, "pytorch-autograd-no-ops",
           "--pytorch autograd-* was on but no aten:: op ranges were recorded",
           fmt::format("The PyTorch autograd NVTX injection started, yet the default domain holds no \"aten::\" ranges "
                       "({} other range{} there). The profiled code most likely ran under torch.no_grad() or "
                       "torch.inference_mode(): autograd's NVTX ranges then cover only custom autograd.Functions "
                       "(e.g. a distributed TriMul).",
                       other, other == 1 ? "" : "s"),
           "Profile a pass with gradients enabled to get op ranges, or rely on --python-functions-trace ranges for "
           "module-level time."));
}

void Nvtx(const model::CaptureInfo& c, const model::NvtxFacts& facts, std::vector<Diagnostic>& out) {
  std::vector<std::string> open, cross;
  int64_t n_open = 0, n_cross = 0;
  for (const auto& d : facts.domains) {
    std::string name = d.name.empty() ? "(default)" : d.name;
    if (d.open_ranges > 0) open.push_back(fmt::format("{}: {}", name, d.open_ranges)), n_open += d.open_ranges;
    if (d.cross_thread_ranges > 0) {
      cross.push_back(fmt::format("{}: {}", name, d.cross_thread_ranges));
      n_cross += d.cross_thread_ranges;
    }
  }
  if (n_open > 0) {
    out.push_back(Make(Severity::kWarning, "nvtx-open-ranges",
                       fmt::format("{} NVTX range{} still open when the capture ended", n_open, n_open == 1 ? "" : "s"),
                       fmt::format("By domain: {}. nsys ends them at the last NVTX timestamp, so their times run "
                                   "to the end of the capture.",
                                   Join(open, kMaxListed)),
                       "Pop every pushed range before the capture stops (or stop the capture after the iteration "
                       "ends, e.g. --capture-range=cudaProfilerApi)."));
  }
  if (n_cross > 0) {
    out.push_back(Make(Severity::kInfo, "nvtx-cross-thread-ranges",
                       fmt::format("{} NVTX range{} ended on another thread", n_cross, n_cross == 1 ? "" : "s"),
                       fmt::format("By domain: {}. nsys leaves such ranges out of the GPU projection "
                                   "(nvtx_gpu_proj_sum), so no GPU work is attributed to them.",
                                   Join(cross, kMaxListed)),
                       "Start and end a range on one thread when it should own GPU work."));
  }
  if (facts.cuda_graph_launches > 0) {
    bool node = c.cuda_graph_trace_mode == "Node";
    out.push_back(Make(
        Severity::kInfo, "cuda-graphs",
        fmt::format("{} CUDA graph launch{}", facts.cuda_graph_launches, facts.cuda_graph_launches == 1 ? "" : "es"),
        node ? "Traced with --cuda-graph-trace node: each kernel of a graph is listed, launched by the graph "
               "launch rather than by its own API call."
             : fmt::format("Traced with --cuda-graph-trace {}: a graph launch is recorded as a whole, so the "
                           "kernels inside graphs are not listed one by one and per-kernel tables and classes "
                           "miss them.",
                           c.cuda_graph_trace_mode.empty() ? "graph (the default)" : "graph"),
        node ? "" : "Profile with --cuda-graph-trace node to see every kernel inside the graphs."));
  }
}

void SamplesAndBacktraces(const model::CaptureInfo& c, const model::NvtxFacts& facts, std::vector<Diagnostic>& out) {
  if (!c.recorded) return;
  if (!c.cpu_sampling) {
    out.push_back(Make(Severity::kInfo, "cpu-sampling-off", "CPU sampling was off",
                       "No CPU samples: where the host threads spent their time is not in the export.",
                       "Profile with --sample process-tree (needs perf_event_paranoid <= 2; `cpprof doctor` checks)."));
  } else if (facts.cpu_samples <= 0) {
    out.push_back(Make(Severity::kWarning, "cpu-sampling-inert", "CPU sampling was on but recorded no samples",
                       fmt::format("Sampling mode {} was requested; the export holds no CPU samples.", c.sampling_mode),
                       "Lower /proc/sys/kernel/perf_event_paranoid to 2 or less (or run in a container that "
                       "allows perf events); `cpprof doctor` checks."));
  }
  if (!c.cuda_backtrace_kinds.empty() && facts.cuda_backtraces <= 0) {
    out.push_back(
        Make(Severity::kWarning, "cuda-backtraces-inert", "--cudabacktrace was on but no backtraces were recorded",
             fmt::format("Backtraces were requested for {} API calls; the export holds none (CUDA_CALLCHAINS "
                         "{}).",
                         Join(c.cuda_backtrace_kinds, kMaxListed), facts.cuda_backtraces < 0 ? "absent" : "empty"),
             "Backtraces need CPU sampling's unwinder: check --sample and perf_event_paranoid "
             "(`cpprof doctor`); with a threshold, only calls longer than it get one."));
  }
  if (c.python_backtraces && facts.python_backtrace_marks == 0) {
    out.push_back(Make(Severity::kWarning, "python-backtraces-inert",
                       "--python-backtrace cuda was on but no Python backtraces were recorded",
                       "The export holds no event of the \"Python Backtrace on CUDA\" domain.",
                       "Python backtraces come with --cudabacktrace, which needs CPU sampling on (with --sample "
                       "none nsys says \"CUDA backtraces will not be collected because CPU sampling is "
                       "disabled\"): enable all three, and check that nvtx is traced."));
  }
  if (facts.nvtx_payloads == 0) {
    const auto* nccl = facts.Domain("NCCL");
    const int64_t nccl_events = nccl ? nccl->ranges + nccl->marks : 0;
    std::vector<std::string> what;
    if (nccl_events > 0) {
      what.push_back(fmt::format("NCCL's communicator ids, ranks and message sizes ({} NCCL range{})", nccl_events,
                                 nccl_events == 1 ? "" : "s"));
    }
    if (facts.python_backtrace_marks > 0) {
      what.push_back(fmt::format("the Python backtraces' frames ({} backtrace{})", facts.python_backtrace_marks,
                                 facts.python_backtrace_marks == 1 ? "" : "s"));
    }
    out.push_back(Make(Severity::kInfo, "nvtx-payloads-not-exported", "The export left out the NVTX payloads",
                       fmt::format("{} are not in the export: the .nsys-rep holds them, but nsys exports them "
                                   "to SQLite only when asked.",
                                   fmt::join(what, " and ")),
                       "Export again with them: nsys export --type sqlite --include-json true -o RUN.sqlite "
                       "RUN.nsys-rep"));
  }
  bool osrt = std::find(c.traced.begin(), c.traced.end(), "OSRuntime") != c.traced.end();
  if (osrt && c.osrt_backtraces && facts.osrt_backtraces <= 0) {
    out.push_back(Make(Severity::kInfo, "osrt-backtraces-none", "OS runtime backtraces were on but none were recorded",
                       fmt::format("Only OS runtime calls longer than {} ns get a backtrace; none did, or the "
                                   "unwinder could not run.",
                                   c.osrt_backtrace_threshold_ns),
                       ""));
  }
}

void Messages(const model::CaptureInfo& c, const model::NvtxFacts& facts, std::vector<Diagnostic>& out) {
  int64_t nvtx_ranges = 0;
  for (const auto& d : facts.domains) nvtx_ranges += d.ranges;
  for (const auto& m : c.messages) {
    Severity s = m.severity == "Error"     ? Severity::kError
                 : m.severity == "Warning" ? Severity::kWarning
                                           : Severity::kInfo;
    std::string detail =
        fmt::format("nsys ({} {}, {} time{}): {}", m.source, m.severity, m.count, m.count == 1 ? "" : "s", m.text);
    std::string fix;
    if (m.raw_text.rfind("No NVTX events collected", 0) == 0 && nvtx_ranges > 0) {
      // torchrun's launcher process records no NVTX while its ranks do.
      s = Severity::kInfo;
      detail += fmt::format(
          " Other processes recorded {} NVTX ranges: in a torchrun job this is the launcher "
          "process, which runs no model code.",
          nvtx_ranges);
    }
    out.push_back(Make(
        s, "nsys-message",
        "nsys " +
            [&] {
              std::string lower = m.severity;
              for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
              return lower;
            }() +
            ": " + m.text,
        std::move(detail), std::move(fix)));
  }
}

}  // namespace

std::string EntryModule(const model::CaptureInfo& capture) {
  std::vector<std::string> argv;
  argv.push_back(capture.command);
  argv.insert(argv.end(), capture.arguments.begin(), capture.arguments.end());
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if ((a == "-m" || a == "--module") && i + 1 < argv.size()) return argv[i + 1];
    if (a.rfind("--module=", 0) == 0) return a.substr(9);
    // python -mpkg.mod
    if (a.size() > 2 && a.rfind("-m", 0) == 0 && a[2] != '-' && a.find('=') == std::string::npos) return a.substr(2);
  }
  return "";
}

// Host-side rows (NVTX, CUDA API calls) whose times cannot be times: the readers left them out.
void DamagedTimes(const model::NvtxFacts& facts, std::vector<Diagnostic>& out) {
  std::vector<std::string> parts;
  if (facts.damaged_nvtx_rows > 0) parts.push_back(fmt::format("{} rows of NVTX_EVENTS", facts.damaged_nvtx_rows));
  if (facts.damaged_runtime_rows > 0) {
    parts.push_back(fmt::format("{} rows of CUPTI_ACTIVITY_KIND_RUNTIME", facts.damaged_runtime_rows));
  }
  if (parts.empty()) return;
  out.push_back(Make(Severity::kWarning, "damaged-times", fmt::format("{} with damaged times", Join(parts, 2)),
                     "Their start or end (columns start, end) is not an integer, is before -2^61 or past 2^62 ns, "
                     "or ends before it starts: they were left out of every number (module ranges, iterations, "
                     "launches).",
                     "Export the report again from its .nsys-rep (nsys export --type sqlite); a damaged file "
                     "cannot be repaired here."));
}

std::vector<Diagnostic> DiagnoseCapture(const model::CaptureInfo& capture, const model::NvtxFacts& facts) {
  std::vector<Diagnostic> out;
  DamagedTimes(facts, out);
  FunctionsTrace(capture, facts, out);
  Autograd(capture, facts, out);
  Nvtx(capture, facts, out);
  SamplesAndBacktraces(capture, facts, out);
  Messages(capture, facts, out);
  std::stable_sort(out.begin(), out.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return static_cast<int>(a.severity) > static_cast<int>(b.severity);
  });
  return out;
}

}  // namespace cpprof::analysis
