// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "nsys/capture_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

namespace cpprof::nsys {

namespace {

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool IsTrue(std::string_view v) { return v == "true" || v == "1" || v == "True" || v == "TRUE"; }

// A decimal integer; nullopt when `v` is not one or is out of int64's range.
std::optional<int64_t> ParseInt(std::string_view v) {
  int64_t out = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return out;
}

int64_t ToInt(std::string_view v) { return ParseInt(v).value_or(0); }

// Environment variables that matter to profiling a PyTorch/NCCL job. Anything else is dropped
// unread: environments hold tokens and keys.
bool AllowedEnv(std::string_view name) {
  return StartsWith(name, "NCCL_") || StartsWith(name, "TORCH_") || name == "PYTORCH_CUDA_ALLOC_CONF" ||
         name == "CUDA_VISIBLE_DEVICES" || model::IsLauncherRankVariable(name);
}

// CAPTURE_EVENT_TYPE values and the --trace token each comes from.
struct TraceToken {
  const char* event_type;
  const char* token;
};
constexpr std::array<TraceToken, 9> kTraceTokens = {{{"Cuda", "cuda"},
                                                     {"NvtxEvents", "nvtx"},
                                                     {"OSRuntime", "osrt"},
                                                     {"CuDNN", "cudnn"},
                                                     {"Cublas", "cublas"},
                                                     {"Cusparse", "cusparse"},
                                                     {"OpenGL", "opengl"},
                                                     {"Mpi", "mpi"},
                                                     {"Ucx", "ucx"}}};

int TraceOrder(const std::string& event_type) {
  for (size_t i = 0; i < kTraceTokens.size(); ++i) {
    if (event_type == kTraceTokens[i].event_type) return static_cast<int>(i);
  }
  return static_cast<int>(kTraceTokens.size());
}

std::string TraceTokenOf(const std::string& event_type) {
  for (const auto& t : kTraceTokens) {
    if (event_type == t.event_type) return t.token;
  }
  return Lower(event_type);
}

void ParseFunctionsTrace(std::string_view encoded, model::CaptureInfo& info) {
  std::optional<std::string> json_text = Base64Decode(encoded);
  if (!json_text) {
    info.functions_trace_error = "the recorded functions-trace JSON is not valid base64";
    return;
  }
  nlohmann::json j = nlohmann::json::parse(*json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_array()) {
    info.functions_trace_error = "the recorded functions-trace JSON is not a JSON list";
    return;
  }
  for (const auto& e : j) {
    if (!e.is_object()) continue;
    model::FunctionsTraceEntry entry;
    if (auto it = e.find("domain"); it != e.end() && it->is_string()) entry.domain = it->get<std::string>();
    if (auto it = e.find("module"); it != e.end() && it->is_string()) entry.module = it->get<std::string>();
    if (auto it = e.find("functions"); it != e.end() && it->is_array()) {
      for (const auto& f : *it) {
        if (f.is_string()) entry.functions.push_back(f.get<std::string>());
      }
    }
    info.functions_trace.push_back(std::move(entry));
  }
}

// "<name> injection initialized successfully." -> name.
void NoteInjection(std::string_view text, model::CaptureInfo& info) {
  constexpr std::string_view kSuffix = " injection initialized successfully.";
  if (text.size() <= kSuffix.size() || text.substr(text.size() - kSuffix.size()) != kSuffix) return;
  std::string name(text.substr(0, text.size() - kSuffix.size()));
  if (std::find(info.injections.begin(), info.injections.end(), name) == info.injections.end()) {
    info.injections.push_back(name);
  }
  if (StartsWith(name, "PyTorch autograd")) info.pytorch_autograd = true;
}

// What META_DATA_CAPTURE's rows give that is put in place after the last row.
struct MetadataRows {
  std::map<std::pair<int, int64_t>, std::string> args;  // (damaged index?, index)
  std::vector<std::string> backtrace_kinds;
  std::string encoded_json;
};

// PROCESS_0:CUDA_BACKTRACE_OPTIONS:COLLECT_<kind>: Python backtraces, or a CUDA backtrace kind.
void ReadBacktraceOption(std::string_view kind, std::string_view value, model::CaptureInfo& info, MetadataRows& rows) {
  if (kind == "PYTHON_BACKTRACES") {
    info.python_backtraces = IsTrue(value);
  } else if (IsTrue(value)) {
    // KERNEL_BACKTRACES, MEMORY_BACKTRACES, SYNCHRONOIZATION_BACKTRACES (sic), OTHER_BACKTRACES
    if (StartsWith(kind, "KERNEL"))
      rows.backtrace_kinds.push_back("kernel");
    else if (StartsWith(kind, "MEMORY"))
      rows.backtrace_kinds.push_back("memory");
    else if (StartsWith(kind, "SYNC"))
      rows.backtrace_kinds.push_back("sync");
    else if (StartsWith(kind, "OTHER"))
      rows.backtrace_kinds.push_back("other");
  }
}

// A row about the launched process (command, arguments, directory, environment, memory usage,
// backtraces); false when the row is about something else.
bool ReadProcessRow(std::string_view name, std::string_view value, model::CaptureInfo& info, MetadataRows& rows) {
  if (name == "PROCESS_0:COMMAND") {
    info.command = value;
  } else if (StartsWith(name, "PROCESS_0:ARGUMENT_")) {
    // By index; a damaged index (not a number, past int64) keeps its row's place after the rest.
    std::optional<int64_t> i = ParseInt(name.substr(std::string_view("PROCESS_0:ARGUMENT_").size()));
    rows.args[{i ? 0 : 1, i ? *i : static_cast<int64_t>(rows.args.size())}] = value;
  } else if (name == "PROCESS_0:WORKING_DIR") {
    info.working_dir = value;
  } else if (name == "PROCESS_0:ENVIRONMENT_VARIABLE") {
    size_t eq = value.find('=');
    std::string_view var = value.substr(0, eq);
    if (eq != std::string_view::npos && AllowedEnv(var)) {
      // nsys records `NAME="value"`: the value is kept without its quotes (renderers quote it once).
      std::string_view v = value.substr(eq + 1);
      if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
      info.env.emplace_back(var, v);
    }
  } else if (name == "PROCESS_0:COLLECT_GPU_MEMORY_USAGE") {
    info.gpu_memory_usage = IsTrue(value);
  } else if (StartsWith(name, "PROCESS_0:CUDA_BACKTRACE_OPTIONS:COLLECT_")) {
    ReadBacktraceOption(name.substr(std::string_view("PROCESS_0:CUDA_BACKTRACE_OPTIONS:COLLECT_").size()), value, info,
                        rows);
  } else {
    return false;
  }
  return true;
}

// A row about what was traced and how: event types, CPU sampling, OS runtime backtraces, the
// functions trace, CUDA graphs, the duration.
void ReadTraceRow(std::string_view name, std::string_view value, model::CaptureInfo& info, MetadataRows& rows) {
  if (name == "CAPTURE_EVENT_TYPE") {
    info.traced.emplace_back(value);
  } else if (name == "LINUX_PERF_OPTIONS:COLLECTION_MODE") {
    info.sampling_mode = value;
  } else if (name == "LINUX_PERF_OPTIONS:SAMPLING_PERIOD") {
    info.sampling_period = ToInt(value);
  } else if (name == "LINUX_PERF_OPTIONS:COLLECT_IP_BACKTRACE_SAMPLES") {
    info.sampling_backtraces = IsTrue(value);
  } else if (name == "LINUX_PERF_OPTIONS:COLLECT_CPU_CTXSW_TRACE") {
    info.cpu_context_switches = IsTrue(value);
  } else if (name == "OS_RUNTIME_OPTIONS:COLLECT_BACKTRACES") {
    info.osrt_backtraces = IsTrue(value);
  } else if (name == "OS_RUNTIME_OPTIONS:BACKTRACES_THRESHOLD_NS") {
    info.osrt_backtrace_threshold_ns = ToInt(value);
  } else if (name == "PYTHON_NVTX_ANNOTATIONS_OPTIONS:JSON_PATH") {
    info.functions_trace_path = value;
  } else if (name == "PYTHON_NVTX_ANNOTATIONS_OPTIONS:ENCODED_JSON") {
    rows.encoded_json = value;
  } else if (name == "PROCESS_0:CUDA_GRAPH_TRACE_OPTIONS:MODE") {
    info.cuda_graph_trace_mode = value;
  } else if (name == "RUN_DURATION_MS") {
    info.run_duration_ms = ToInt(value);
  }
  // --pytorch is not among the names nsys 2025.3 writes (checked on the committed real
  // exports, which were made with --pytorch=autograd-shapes-nvtx): see NoteInjection.
}

// After the last row: the arguments in order, the traced event types sorted and unique, the
// backtrace kinds in --cudabacktrace's order, CPU sampling, the environment sorted, the
// functions trace parsed.
void FinishMetadata(MetadataRows& rows, model::CaptureInfo& info) {
  for (auto& [i, a] : rows.args) info.arguments.push_back(std::move(a));
  std::stable_sort(info.traced.begin(), info.traced.end(), [](const std::string& a, const std::string& b) {
    int oa = TraceOrder(a), ob = TraceOrder(b);
    return oa != ob ? oa < ob : a < b;
  });
  info.traced.erase(std::unique(info.traced.begin(), info.traced.end()), info.traced.end());
  // The order --cudabacktrace lists them in.
  for (const char* k : {"kernel", "memory", "sync", "other"}) {
    if (std::find(rows.backtrace_kinds.begin(), rows.backtrace_kinds.end(), k) != rows.backtrace_kinds.end()) {
      info.cuda_backtrace_kinds.push_back(k);
    }
  }
  std::string mode = Lower(info.sampling_mode);
  info.cpu_sampling = !mode.empty() && mode != "none" && mode != "off" && mode != "disabled";
  std::sort(info.env.begin(), info.env.end());
  if (!rows.encoded_json.empty()) ParseFunctionsTrace(rows.encoded_json, info);
}

Status ReadMetadata(const Database& db, model::CaptureInfo& info) {
  CPPROF_ASSIGN_OR_RETURN(Statement st, db.Prepare("SELECT name, value FROM META_DATA_CAPTURE ORDER BY rowid",
                                                   "reading META_DATA_CAPTURE"));
  info.recorded = true;
  MetadataRows rows;
  while (st.Step()) {
    std::string_view name = st.Text(0), value = st.Text(1);
    if (!ReadProcessRow(name, value, info, rows)) ReadTraceRow(name, value, info, rows);
  }
  CPPROF_RETURN_IF_ERROR(st.status());
  FinishMetadata(rows, info);
  return OkStatus();
}

std::string EnumName(const Database& db, const char* table, int64_t id, const char* fallback) {
  if (db.HasTable(table)) {
    auto st = db.Prepare(fmt::format("SELECT name FROM {} WHERE id = {}", table, id), "reading enum");
    if (st.ok() && st->Step()) return std::string(st->Text(0));
  }
  return fallback;
}

Status ReadMessages(const Database& db, model::CaptureInfo& info) {
  CPPROF_ASSIGN_OR_RETURN(Statement st, db.Prepare("SELECT severity, min(source), text, count(*) FROM DIAGNOSTIC_EVENT "
                                                   "GROUP BY severity, text ORDER BY min(timestamp), severity, text",
                                                   "reading DIAGNOSTIC_EVENT"));
  std::map<int64_t, std::string> severities, sources;
  constexpr std::array<const char*, 5> kSeverity = {"Unknown", "Info", "Warning", "Error", "Verbose"};
  constexpr std::array<const char*, 4> kSource = {"Unknown", "Injection", "Daemon", "Analysis"};
  while (st.Step()) {
    int64_t severity = st.Int(0), source = st.Int(1);
    std::string_view text = st.Text(2);
    NoteInjection(text, info);
    // ENUM_DIAGNOSTIC_SEVERITY_LEVEL: 1 Info, 2 Warning, 3 Error, 4 Verbose.
    bool keep = severity == 2 || severity == 3 || IsNotableInfoMessage(text);
    if (!keep) continue;
    if (!severities.count(severity)) {
      severities[severity] = EnumName(db, "ENUM_DIAGNOSTIC_SEVERITY_LEVEL", severity,
                                      severity >= 0 && severity < 5 ? kSeverity[severity] : "Unknown");
    }
    if (!sources.count(source)) {
      sources[source] =
          EnumName(db, "ENUM_DIAGNOSTIC_SOURCE_TYPE", source, source >= 0 && source < 4 ? kSource[source] : "Unknown");
    }
    model::NsysMessage m;
    m.severity = severities[severity];
    m.source = sources[source];
    m.raw_text = text;
    m.text = ElidePaths(text);
    m.count = st.Int(3);
    info.messages.push_back(std::move(m));
  }
  CPPROF_RETURN_IF_ERROR(st.status());
  std::sort(info.injections.begin(), info.injections.end());
  return OkStatus();
}

}  // namespace

std::optional<std::string> Base64Decode(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  out.reserve(in.size() / 4 * 3);
  uint32_t acc = 0;
  int bits = 0, chars = 0, padding = 0;
  for (char c : in) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    int v = value(c);
    if (v < 0 || padding > 0) return std::nullopt;  // not base64, or data after padding
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    ++chars;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  if (chars % 4 == 1) return std::nullopt;  // 6 bits cannot end a byte
  if (padding > 0 && (chars + padding) % 4 != 0) return std::nullopt;
  if (padding > 2) return std::nullopt;
  return out;
}

std::string ElidePaths(std::string_view text, size_t max_chars) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    bool path_start =
        text[i] == '/' && (i == 0 || std::string_view(" \t(\"'=:[").find(text[i - 1]) != std::string_view::npos);
    if (!path_start) {
      out.push_back(text[i++]);
      continue;
    }
    size_t end = i;
    while (end < text.size() && std::string_view(" \t\n)\"',;]").find(text[end]) == std::string_view::npos) ++end;
    size_t stop = end;
    while (stop > i && (text[stop - 1] == '.' || text[stop - 1] == ':')) --stop;  // sentence end
    std::string_view path = text.substr(i, stop - i);
    size_t last = path.find_last_of('/');
    if (last != 0 && last + 1 < path.size()) {
      out += ".../";
      out += path.substr(last + 1);
    } else {
      out += path;
    }
    i = stop;
  }
  if (out.size() > max_chars) {
    out.resize(max_chars > 3 ? max_chars - 3 : 0);
    out += "...";
  }
  return out;
}

bool IsNotableInfoMessage(std::string_view text) {
  std::string t = Lower(text);
  // Words that say something did not happen as asked.
  for (const char* w : {"fail",      "unable",        "disabled",    "skip",    "lost",         "drop",    "cannot",
                        "could not", "overflow",      "truncat",     "exceed",  "insufficient", "missing", "error",
                        "warning",   "not supported", "unsupported", "ignored", "denied",       "paranoid"}) {
    if (t.find(w) != std::string::npos) return true;
  }
  // "not" as a word (not inside "notify", "annotation").
  for (size_t p = t.find("not"); p != std::string::npos; p = t.find("not", p + 1)) {
    bool start = p == 0 || !std::isalpha(static_cast<unsigned char>(t[p - 1]));
    bool end = p + 3 >= t.size() || !std::isalpha(static_cast<unsigned char>(t[p + 3]));
    if (start && end) return true;
  }
  return false;
}

std::string ReconstructFlags(const model::CaptureInfo& info) {
  if (!info.recorded) return "";
  std::vector<std::string> parts;
  if (!info.traced.empty()) {
    std::string trace;
    for (const auto& t : info.traced) trace += (trace.empty() ? "" : ",") + TraceTokenOf(t);
    parts.push_back("--trace " + trace);
  }
  if (info.gpu_memory_usage) parts.push_back("--cuda-memory-usage true");
  if (info.cuda_backtrace_kinds.size() == 4) {
    parts.push_back("--cudabacktrace all");
  } else if (!info.cuda_backtrace_kinds.empty()) {
    std::string kinds;
    for (const auto& k : info.cuda_backtrace_kinds) kinds += (kinds.empty() ? "" : ",") + k;
    parts.push_back("--cudabacktrace " + kinds);
  }
  if (info.python_backtraces) parts.push_back("--python-backtrace cuda");
  // autograd-nvtx and autograd-shapes-nvtx announce themselves alike; say the shorter.
  if (info.pytorch_autograd) parts.push_back("--pytorch autograd-nvtx");
  if (!info.functions_trace_path.empty()) parts.push_back("--python-functions-trace " + info.functions_trace_path);
  if (!info.sampling_mode.empty()) {
    std::string mode = Lower(info.sampling_mode);
    if (mode == "processtree") mode = "process-tree";
    if (mode == "systemwide") mode = "system-wide";
    parts.push_back("--sample " + (info.cpu_sampling ? mode : std::string("none")));
  }
  if (!info.cuda_graph_trace_mode.empty()) parts.push_back("--cuda-graph-trace " + Lower(info.cuda_graph_trace_mode));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : " ") + p;
  return out;
}

StatusOr<model::CaptureInfo> ReadCaptureInfo(const Database& db) {
  model::CaptureInfo info;
  if (db.HasTable("META_DATA_CAPTURE")) CPPROF_RETURN_IF_ERROR(ReadMetadata(db, info));
  if (db.HasTable("DIAGNOSTIC_EVENT")) CPPROF_RETURN_IF_ERROR(ReadMessages(db, info));
  if (db.HasTable("TARGET_INFO_SESSION_START_TIME")) {
    CPPROF_ASSIGN_OR_RETURN(Statement st, db.Prepare("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1",
                                                     "reading TARGET_INFO_SESSION_START_TIME"));
    if (st.Step() && st.IsInteger(0) && st.Int(0) > 0) info.utc_start_ns = st.Int(0);
    CPPROF_RETURN_IF_ERROR(st.status());
  }
  if (db.HasTable("TARGET_INFO_SYSTEM_ENV")) {
    CPPROF_ASSIGN_OR_RETURN(Statement st,
                            db.Prepare("SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname' LIMIT 1",
                                       "reading the host name"));
    if (st.Step()) info.host = st.Text(0);
    CPPROF_RETURN_IF_ERROR(st.status());
  }
  if (db.HasTable("TARGET_INFO_GPU")) {
    CPPROF_ASSIGN_OR_RETURN(Statement st, db.Prepare("SELECT DISTINCT name FROM TARGET_INFO_GPU WHERE name IS NOT NULL "
                                                     "ORDER BY name",
                                                     "reading TARGET_INFO_GPU"));
    while (st.Step()) info.gpu_names.emplace_back(st.Text(0));
    CPPROF_RETURN_IF_ERROR(st.status());
  }
  info.reconstructed_flags = ReconstructFlags(info);
  return info;
}

}  // namespace cpprof::nsys
