// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "doctor/python_env.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "runner/helpers.h"

namespace cpprof::doctor {

namespace {

// The interpreter a Python console script (torchrun) runs with, from its first lines.
std::optional<std::string> ScriptInterpreter(const runner::Environment& env, const std::string& script) {
  auto text = runner::Environment::ReadText(script, 4096);
  if (!text || text->rfind("#!", 0) != 0) return std::nullopt;
  size_t nl = text->find('\n');
  std::string first = text->substr(2, nl == std::string::npos ? std::string::npos : nl - 2);
  while (!first.empty() && (first.back() == ' ' || first.back() == '\r')) first.pop_back();
  size_t b = first.find_first_not_of(' ');
  if (b == std::string::npos) return std::nullopt;
  first = first.substr(b);
  // conda/pip write "#!/bin/sh" plus "'''exec' "/long/path/python" "$0" "$@"" when the
  // interpreter's path is too long for a shebang.
  if (first == "/bin/sh" || first == "/bin/bash") {
    static constexpr std::string_view kExec = "'''exec' \"";
    size_t at = text->find(kExec);
    if (at == std::string::npos) return std::nullopt;
    at += kExec.size();
    size_t end = text->find('"', at);
    if (end == std::string::npos) return std::nullopt;
    return text->substr(at, end - at);
  }
  // "/usr/bin/env python3" -> python3 on PATH
  if (first.rfind("/usr/bin/env ", 0) == 0) {
    std::string prog = first.substr(13);
    if (size_t sp = prog.find(' '); sp != std::string::npos) prog.resize(sp);
    return env.FindOnPath(prog);
  }
  if (size_t sp = first.find(' '); sp != std::string::npos) first.resize(sp);
  return first;
}

}  // namespace

WorkloadPython FindWorkloadPython(const runner::Environment& env, const std::string& explicit_python) {
  if (!explicit_python.empty()) {
    if (explicit_python.find('/') != std::string::npos) return {explicit_python, "given with --python"};
    auto p = env.FindOnPath(explicit_python);
    return {p ? *p : explicit_python, "given with --python"};
  }
  if (auto torchrun = env.FindOnPath("torchrun")) {
    if (auto interp = ScriptInterpreter(env, *torchrun)) {
      return {*interp, fmt::format("the interpreter of {}", *torchrun)};
    }
  }
  if (auto p = env.FindOnPath("python3")) return {*p, "python3 on PATH; no torchrun found"};
  return {"", "no torchrun and no python3 on PATH"};
}

PythonInfo ProbePython(runner::ProcessRunner& runner, const runner::Environment& env, const WorkloadPython& python) {
  PythonInfo info;
  info.path = python.path;
  info.why = python.why;
  if (python.path.empty()) {
    info.error = python.why;
    return info;
  }
  auto helper = runner::FindHelper(env, "probe_python.py");
  if (!helper) {
    info.error =
        "cpprof's helper probe_python.py was not found (set CPPROF_HELPERS_DIR to "
        "python/cpprof_helpers of cpprof's source tree)";
    return info;
  }
  runner::RunOptions opts;
  opts.env = env.vars();
  (*opts.env)["PYTHONDONTWRITEBYTECODE"] = "1";
  opts.timeout_s = 120;  // importing torch can take a while on a cold cache
  auto r = runner.Run({python.path, *helper}, opts);
  if (!r.ok()) {
    info.error = r.status().message();
    return info;
  }
  if (!r->ok()) {
    std::string tail = r->err.size() > 600 ? r->err.substr(r->err.size() - 600) : r->err;
    info.error = fmt::format("{} {} ({})", python.path, r->Describe(), tail);
    return info;
  }
  auto j = nlohmann::json::parse(r->out, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    info.error = fmt::format("{} answered something that is not JSON", python.path);
    return info;
  }
  info.runs = true;
  info.executable = j.value("executable", "");
  info.version = j.value("version", "");
  for (const auto& s : j.value("site_packages", nlohmann::json::array())) {
    if (s.is_string()) info.site_packages.push_back(s);
  }
  const auto& t = j.value("torch", nlohmann::json::object());
  info.torch = t.value("importable", false);
  auto str = [](const nlohmann::json& o, const char* k) {
    return o.contains(k) && o[k].is_string() ? o[k].get<std::string>() : std::string();
  };
  info.torch_version = str(t, "version");
  info.torch_cuda = str(t, "cuda");
  info.nccl = str(t, "nccl");
  info.torch_error = str(t, "error");
  info.torch_cuda_available = t.value("cuda_available", false);
  info.nvtx = j.value("nvtx_importable", false);
  info.torchrun = str(j, "torchrun");
  return info;
}

}  // namespace cpprof::doctor
