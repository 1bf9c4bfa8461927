// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// How an export was captured: the nsys options recorded in META_DATA_CAPTURE, nsys's own
// messages (DIAGNOSTIC_EVENT), facts about what the capture actually recorded, and the
// diagnostics cpprof derives from them ("your functions-trace domain recorded nothing because
// ..."). Plain structs: filled by nsys/capture_reader and analysis/capture_diagnostics, printed by
// the renderers, which decide what to show (host paths included).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cpprof::model {

// One entry of a --python-functions-trace JSON: {"domain", "module", "functions": [...]}.
struct FunctionsTraceEntry {
  std::string domain;
  std::string module;                  // "cpwork.layers"
  std::vector<std::string> functions;  // "Trunk.forward"; nsys names the range "<module>.<function>"
};

// A message nsys wrote into DIAGNOSTIC_EVENT, deduplicated.
struct NsysMessage {
  std::string severity;  // "Info", "Warning", "Error" (ENUM_DIAGNOSTIC_SEVERITY_LEVEL)
  std::string source;    // "Injection", "Daemon", "Analysis" (ENUM_DIAGNOSTIC_SOURCE_TYPE)
  std::string text;      // short: host paths elided to ".../basename", at most 240 characters
  std::string raw_text;  // verbatim (may hold host paths: print only when asked)
  int64_t count = 0;     // how many times nsys wrote it (once per process, typically)
};

// The launcher's variables that say which rank or node a process is (torchrun, Slurm).
inline constexpr std::string_view kLauncherRankVariables[] = {
    "RANK",         "LOCAL_RANK",   "WORLD_SIZE",    "LOCAL_WORLD_SIZE", "GROUP_RANK",  "NODE_RANK",
    "SLURM_PROCID", "SLURM_NODEID", "SLURM_LOCALID", "SLURM_NNODES",     "SLURM_NTASKS"};
inline bool IsLauncherRankVariable(std::string_view name) {
  for (std::string_view v : kLauncherRankVariables) {
    if (v == name) return true;
  }
  return false;
}

struct CaptureInfo {
  // META_DATA_CAPTURE was present. Synthetic exports lack it: then every option below is unknown
  // (left at its default) and only `messages` may be filled.
  bool recorded = false;

  // What was traced: CAPTURE_EVENT_TYPE values as nsys writes them ("Cuda", "NvtxEvents",
  // "OSRuntime", ...), in the order cuda, nvtx, osrt, then the rest by name.
  std::vector<std::string> traced;
  bool gpu_memory_usage = false;  // PROCESS_0:COLLECT_GPU_MEMORY_USAGE (--cuda-memory-usage true)

  // --cudabacktrace: which API kinds collect backtraces ("kernel", "memory", "sync", "other").
  std::vector<std::string> cuda_backtrace_kinds;
  bool python_backtraces = false;  // CUDA_BACKTRACE_OPTIONS:COLLECT_PYTHON_BACKTRACES (--python-backtrace cuda)

  // CPU sampling (LINUX_PERF_OPTIONS:*). nsys records the sampling options even when nothing was
  // sampled, so `cpu_sampling` is a request; NvtxFacts says whether samples were recorded.
  bool cpu_sampling = false;
  std::string sampling_mode;          // COLLECTION_MODE: "ProcessTree", "SystemWide", ...
  int64_t sampling_period = 0;        // SAMPLING_PERIOD (events of the trigger, e.g. ns of CPU clock)
  bool sampling_backtraces = false;   // COLLECT_IP_BACKTRACE_SAMPLES
  bool cpu_context_switches = false;  // COLLECT_CPU_CTXSW_TRACE

  bool osrt_backtraces = false;  // OS_RUNTIME_OPTIONS:COLLECT_BACKTRACES (only with --trace osrt)
  int64_t osrt_backtrace_threshold_ns = 0;

  // --python-functions-trace: the file as given (a host path) and its content as nsys recorded it.
  std::string functions_trace_path;
  std::vector<FunctionsTraceEntry> functions_trace;
  std::string functions_trace_error;  // why the recorded JSON could not be read; "" when fine

  // --pytorch: nsys does not record the option in META_DATA_CAPTURE. Its injection announces
  // itself in DIAGNOSTIC_EVENT ("PyTorch autograd_nvtx injection initialized successfully."),
  // for autograd-nvtx and autograd-shapes-nvtx alike; `pytorch_autograd` is set from that.
  bool pytorch_autograd = false;
  // TARGET_INFO_GPU names, distinct, sorted ("NVIDIA H200"): the device peaks are looked up by it.
  std::vector<std::string> gpu_names;
  // Injection libraries that said "<name> injection initialized successfully" ("NVTX",
  // "Python Functions Trace", "PyTorch autograd_nvtx", ...), sorted, deduplicated.
  std::vector<std::string> injections;

  std::string cuda_graph_trace_mode;  // CUDA_GRAPH_TRACE_OPTIONS:MODE: "Graph" or "Node"

  // The launched command: PROCESS_0:COMMAND and PROCESS_0:ARGUMENT_i in order.
  std::string command;
  std::vector<std::string> arguments;
  std::string working_dir;  // a host path
  // Environment variables that matter to profiling (NCCL_*, TORCH_*, PYTORCH_CUDA_ALLOC_CONF,
  // CUDA_VISIBLE_DEVICES, the launcher's rank variables), as (name, value) with the value without
  // the quotes nsys writes around it, sorted by name. Never any other: they may hold secrets.
  std::vector<std::pair<std::string, std::string>> env;
  // The integer value of env variable `name` (quotes removed, for partials written before the
  // reader removed them); -1 when absent or not a number.
  int64_t EnvInt(std::string_view name) const {
    for (const auto& [k, v] : env) {
      if (k != name) continue;
      std::string_view s = v;
      if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
      if (s.empty() || s.size() > 9) return -1;
      int64_t n = 0;
      for (char c : s) {
        if (c < '0' || c > '9') return -1;
        n = n * 10 + (c - '0');
      }
      return n;
    }
    return -1;
  }

  int64_t run_duration_ms = 0;  // RUN_DURATION_MS
  // The session's start in wall-clock time (TARGET_INFO_SESSION_START_TIME utcEpochNs; the
  // export's timestamps count from it) and the host (TARGET_INFO_SYSTEM_ENV Hostname): what puts
  // several exports of one run on one clock. 0 / "" when not recorded.
  int64_t utc_start_ns = 0;
  std::string host;
  // The export's content, fingerprinted (base::ContentFingerprint: its size and a hash of its
  // first and last MiB): a copy of one export under another name has the same. "" unknown.
  std::string content_id;

  // The options as nsys flags, reconstructed from the recorded values (not what was typed):
  // "--trace cuda,nvtx,osrt --cuda-memory-usage true --cudabacktrace all ...".
  std::string reconstructed_flags;

  // DIAGNOSTIC_EVENT: every warning and error, and the Info messages that matter to a user
  // (something disabled, dropped, lost, skipped, failed...); routine ones are left out.
  // In the order nsys first wrote them.
  std::vector<NsysMessage> messages;
};

// Per NVTX domain, what the capture recorded.
struct NvtxDomainFacts {
  std::string name;                 // "" for the default domain
  int64_t ranges = 0;               // push/pop and start/end ranges
  int64_t marks = 0;                // other events (marks, ...), domain creation left out
  int64_t open_ranges = 0;          // end missing: still open when the capture ended
  int64_t cross_thread_ranges = 0;  // ended on another thread than they began on
};

// Facts about what the export recorded, for the capture diagnostics.
struct NvtxFacts {
  bool has_nvtx = false;                 // NVTX_EVENTS present
  std::vector<NvtxDomainFacts> domains;  // by name
  // Distinct range names ("domain:text", as nsys names them) outside the default domain.
  std::vector<std::string> named_ranges;  // sorted
  int64_t autograd_op_ranges = 0;         // default-domain ranges "aten::..." (--pytorch autograd-*)
  int64_t autograd_shape_ranges = 0;      // those that carry "sizes = [" (autograd-shapes-nvtx)
  int64_t cuda_graph_launches = 0;        // cudaGraphLaunch* calls in CUPTI_ACTIVITY_KIND_RUNTIME
  // Row counts of the tables that hold samples and backtraces (-1: table absent).
  int64_t cpu_samples = -1;            // COMPOSITE_EVENTS
  int64_t cuda_backtraces = -1;        // CUDA_CALLCHAINS (frames)
  int64_t osrt_backtraces = -1;        // OSRT_CALLCHAINS (frames)
  int64_t python_backtrace_marks = 0;  // events of the "Python Backtrace on CUDA" domain
  // NVTX extended payloads (NCCL's communicator id, ranks and message sizes; the Python
  // backtraces' frames): whether any event holds one (jsonText or binaryData). nsys 2025.3.1's
  // export leaves them out unless asked (`nsys export --include-json true`). Only looked for when
  // the NCCL or Python backtrace domains recorded events; -1 when not looked for.
  int64_t nvtx_payloads = -1;
  // Rows whose times are damaged (not integers, negative, past 2^62 ns, end before start): left
  // out when read.
  int64_t damaged_nvtx_rows = 0;     // NVTX_EVENTS
  int64_t damaged_runtime_rows = 0;  // CUPTI_ACTIVITY_KIND_RUNTIME

  const NvtxDomainFacts* Domain(std::string_view name) const {
    for (const auto& d : domains) {
      if (d.name == name) return &d;
    }
    return nullptr;
  }
};

struct Diagnostic {
  enum class Severity { kInfo, kWarning, kError };
  Severity severity = Severity::kInfo;
  std::string id;      // stable key for tests and JSON: "functions-trace-domain-empty", ...
  std::string title;   // one line
  std::string detail;  // what was found, with numbers
  std::string fix;     // what to do; "" when nothing is to be done
};

inline std::string_view SeverityName(Diagnostic::Severity s) {
  switch (s) {
    case Diagnostic::Severity::kInfo:
      return "info";
    case Diagnostic::Severity::kWarning:
      return "warning";
    case Diagnostic::Severity::kError:
      return "error";
  }
  return "info";
}

}  // namespace cpprof::model
