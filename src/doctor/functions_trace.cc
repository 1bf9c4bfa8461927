// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "doctor/functions_trace.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "base/regex.h"
#include "runner/helpers.h"

namespace cpprof::doctor {

namespace {

using Json = nlohmann::ordered_json;

std::string TopLevel(const std::string& module) { return module.substr(0, module.find('.')); }

std::string Tail(const std::string& s, size_t n) { return s.size() > n ? "..." + s.substr(s.size() - n) : s; }

// The sentence and the hint for one of the helper's rejection reasons.
Rejection Explain(const FunctionEntry& e, const Json& r, const std::string& main_module,
                  const std::map<std::string, std::string>& aliases) {
  Rejection x;
  x.entry = e;
  x.reason = r.value("reason", "unknown");
  std::string detail = r.value("detail", "");
  std::string missing =
      r.contains("missing_module") && r["missing_module"].is_string() ? r["missing_module"].get<std::string>() : "";
  std::string name = fmt::format("{}:{}", e.module, e.function);
  if (x.reason == "module_not_importable") {
    x.message = fmt::format("{}: module '{}' cannot be imported ({})", name, e.module, detail);
    std::string top = TopLevel(e.module);
    if (!missing.empty() && (missing == top || missing == e.module)) {
      std::error_code ec;
      if (std::filesystem::is_directory("src/" + top, ec)) {
        x.hint = fmt::format("./src/{} is a src layout: run with PYTHONPATH=src (or 'pip install -e .')", top);
      } else {
        x.hint = fmt::format(
            "is '{}' on the workload Python's path? Run from the folder it is launched from, set "
            "PYTHONPATH, or check --python",
            top);
      }
    } else if (!missing.empty() && !aliases.count(TopLevel(missing))) {
      x.hint = fmt::format(
          "it imports '{}', which is not importable: if that is vendored code importing itself "
          "under its original root, pass --alias {}=<the package it really is>",
          missing, TopLevel(missing));
    } else {
      x.hint = "the module raised while being imported: fix it or leave the entry out";
    }
  } else if (x.reason == "runs_as_main") {
    x.message = fmt::format(
        "{}: {}; nsys does not annotate functions of the __main__ module (its report says "
        "\"functions from module '__main__' will not be annotated\")",
        name, detail);
    x.hint = fmt::format("move the classes out of '{}' into a module it imports, or launch another module with -m",
                         main_module.empty() ? e.module : main_module);
  } else {
    x.message = fmt::format("{}: {}", name, detail);
    if (x.reason == "class_missing" || x.reason == "function_missing" || x.reason == "method_missing") {
      x.hint = "check the spelling and that the module is the one defining it (module:Class.method)";
    } else if (x.reason == "not_a_class") {
      x.hint = "give the module that defines the class as the part before ':'";
    }
  }
  return x;
}

}  // namespace

bool IsDottedName(const std::string& s) {
  // identifier(.identifier)*, with ASCII identifiers
  bool start = true;
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '.') {
      if (start) return false;
      start = true;
    } else if (std::isalpha(u) || c == '_' || (!start && std::isdigit(u))) {
      start = false;
    } else {
      return false;
    }
  }
  return !start;
}

Status CheckClassPattern(const std::string& pattern, std::string_view flag) {
  auto re = CompileRegex(pattern, flag, ExitCode::kUsage, "class names (e.g. 'TriMul|Pairformer|Trunk')");
  return re.ok() ? OkStatus() : re.status();
}

StatusOr<FunctionEntry> ParseFunctionFlag(const std::string& flag) {
  size_t colon = flag.find(':');
  if (colon == std::string::npos || flag.find(':', colon + 1) != std::string::npos) {
    return Error(ExitCode::kUsage, fmt::format("--function '{}' is not MODULE:Class.method (e.g. "
                                               "pkg.layers:Trunk.forward)",
                                               flag));
  }
  FunctionEntry e{flag.substr(0, colon), flag.substr(colon + 1), "--function"};
  if (!IsDottedName(e.module) || !IsDottedName(e.function)) {
    return Error(ExitCode::kUsage, fmt::format("--function '{}': module and function must be dotted Python "
                                               "names (MODULE:Class.method)",
                                               flag));
  }
  return e;
}

StatusOr<std::pair<std::string, std::string>> ParseAlias(const std::string& flag) {
  size_t eq = flag.find('=');
  std::string alias = eq == std::string::npos ? "" : flag.substr(0, eq);
  std::string real = eq == std::string::npos ? "" : flag.substr(eq + 1);
  if (!IsDottedName(alias) || !IsDottedName(real)) {
    return Error(ExitCode::kUsage, fmt::format("--alias '{}' is not ALIAS=REAL (e.g. boltz=vendor.boltz)", flag));
  }
  return std::pair(alias, real);
}

StatusOr<std::vector<FunctionEntry>> ReadSpecFile(const std::string& path) {
  auto text = runner::Environment::ReadText(path, kFunctionsTraceMaxBytes);
  if (!text) return Error(ExitCode::kBadInput, fmt::format("cannot read the spec file '{}'", path));
  Json j = Json::parse(*text, nullptr, false);
  std::string shape = "a JSON object {\"pkg.module\": [\"Class.method\", ...]}";
  if (j.is_discarded() || !j.is_object()) {
    return Error(ExitCode::kBadInput, fmt::format("the spec file '{}' is not {}", path, shape));
  }
  std::vector<FunctionEntry> out;
  for (const auto& [module, fns] : j.items()) {
    if (!IsDottedName(module) || !fns.is_array()) {
      return Error(ExitCode::kBadInput, fmt::format("the spec file '{}': entry '{}' is not {}", path, module, shape));
    }
    for (const auto& fn : fns) {
      if (!fn.is_string() || !IsDottedName(fn.get<std::string>())) {
        return Error(ExitCode::kBadInput,
                     fmt::format("the spec file '{}': '{}' lists {}, not a dotted name like Class.method", path, module,
                                 fn.dump()));
      }
      out.push_back({module, fn.get<std::string>(), "--spec " + path});
    }
  }
  return out;
}

namespace {

// The --discover requests with their class patterns compiled: the helper lists every nn.Module
// subclass ("match": "" is found in every name); cpprof keeps those its RE2 pattern is found in,
// so the syntax is RE2's, not Python's re.
class DiscoverFilter {
 public:
  static StatusOr<DiscoverFilter> Compile(const std::vector<DiscoverRequest>& discover) {
    DiscoverFilter f;
    f.discover_ = &discover;
    for (const auto& d : discover) {
      CPPROF_ASSIGN_OR_RETURN(auto re, CompileRegex(d.match, "--match", ExitCode::kUsage, "class names"));
      f.class_res_.push_back(std::move(re));
    }
    return f;
  }
  // The discover request `module` falls under (a package or one of its modules), or -1.
  int RequestOf(const std::string& module) const {
    for (size_t i = 0; i < discover_->size(); ++i) {
      const std::string& pkg = (*discover_)[i].package;
      if (module == pkg || module.rfind(pkg + ".", 0) == 0) return static_cast<int>(i);
    }
    return -1;
  }
  bool Wanted(int req_index, const std::string& cls) const {
    return req_index < 0 || RegexSearch(cls, *class_res_[static_cast<size_t>(req_index)]);
  }

 private:
  const std::vector<DiscoverRequest>* discover_ = nullptr;
  std::vector<std::shared_ptr<const RE2>> class_res_;
};

// What the helper is asked: the entries, the aliases, the packages to walk, the -m module.
Json HelperRequest(const TraceRequest& request) {
  Json req;
  Json entries = Json::array();
  for (const auto& e : request.entries) entries.push_back({{"module", e.module}, {"function", e.function}});
  req["entries"] = entries;
  req["aliases"] = request.aliases;
  Json disc = Json::array();
  for (const auto& d : request.discover) disc.push_back({{"package", d.package}, {"match", ""}});
  req["discover"] = disc;
  req["entry_module"] = request.entry_module.empty() ? Json(nullptr) : Json(request.entry_module);
  return req;
}

// Runs validate_trace.py with the workload's Python; its answer, checked to be the helper's JSON.
StatusOr<Json> RunHelper(const Json& req, const std::string& helper, const std::string& python,
                         runner::ProcessRunner& runner, const runner::Environment& env) {
  runner::RunOptions opts;
  opts.env = env.vars();
  (*opts.env)["PYTHONDONTWRITEBYTECODE"] = "1";  // validating must not litter the workload's tree
  opts.stdin_data = req.dump();
  opts.timeout_s = 600;  // discovery imports torch and every module of the package
  auto r = runner.Run({python, helper}, opts);
  if (!r.ok()) {
    return Error(ExitCode::kExternal, fmt::format("cannot run the workload's Python: {}. Pass it with --python PATH.",
                                                  r.status().message()));
  }
  if (!r->ok()) {
    return Error(ExitCode::kExternal, fmt::format("{} {} {} ({})", python, helper, r->Describe(), Tail(r->err, 800)));
  }
  Json a = Json::parse(r->out, nullptr, false);
  if (a.is_discarded() || !a.is_object() || a.value("schema", "") != "cpprof.validate_trace/1") {
    return Error(ExitCode::kExternal,
                 fmt::format("{} answered something that is not the helper's JSON: {}", python, Tail(r->out, 300)));
  }
  return a;
}

// The named entries (--function, --spec): each accepted or rejected as the helper answered, with
// notes for re-exports and __main__ blocks.
Status SortNamedEntries(const TraceRequest& request, const Json& a, const std::string& main_module, Validation& v) {
  const Json& results = a["entries"];
  if (!results.is_array() || results.size() != request.entries.size()) {
    return Error(ExitCode::kExternal, "the helper answered for a different number of entries than asked");
  }
  for (size_t i = 0; i < results.size(); ++i) {
    const FunctionEntry& e = request.entries[i];
    const Json& r_i = results[i];
    if (!r_i.value("ok", false)) {
      v.rejected.push_back(Explain(e, r_i, main_module, request.aliases));
      continue;
    }
    v.accepted.push_back(e);
    std::string defined_in =
        r_i.contains("defined_in") && r_i["defined_in"].is_string() ? r_i["defined_in"].get<std::string>() : "";
    std::string head = e.function.substr(0, e.function.find('.'));
    if (!defined_in.empty() && defined_in != e.module) {
      v.notes.push_back(fmt::format("{}:{}: '{}' is defined in '{}'; its ranges will be named {}.{}", e.module,
                                    e.function, head, defined_in, e.module, e.function));
    }
    if (request.entry_module.empty() && r_i.value("has_main_block", false)) {
      v.notes.push_back(
          fmt::format("module '{}' has an `if __name__ == \"__main__\"` block: if it is what you launch "
                      "with -m, pass --entry-module {} (nsys cannot annotate the module run as __main__)",
                      e.module, e.module));
    }
  }
  return OkStatus();
}

// The discovered classes (--discover) the patterns keep; those of the module run as __main__
// rejected; import errors and requests that found nothing as notes.
void SortDiscovered(const TraceRequest& request, const DiscoverFilter& filter, const Json& a,
                    const std::string& main_module, Validation& v) {
  for (const auto& d : a.value("discovered", Json::array())) {
    FunctionEntry e{d.value("module", ""), d.value("function", ""), ""};
    int req_index = filter.RequestOf(e.module);
    if (req_index >= 0) e.origin = "--discover " + request.discover[static_cast<size_t>(req_index)].package;
    std::string cls = d.value("class", e.function.substr(0, e.function.find('.')));
    if (!filter.Wanted(req_index, cls)) continue;
    if (IsDottedName(e.module) && IsDottedName(e.function)) v.accepted.push_back(e);
  }
  for (const auto& c : a.value("entry_module_classes", Json::array())) {
    if (!filter.Wanted(filter.RequestOf(c.value("module", "")), c.value("class", ""))) continue;
    FunctionEntry e{c.value("module", ""), c.value("class", "") + ".forward", "--discover"};
    Json r_c = {{"reason", "runs_as_main"},
                {"detail", fmt::format("'{}' is defined in '{}', which runs as __main__ when launched with -m",
                                       c.value("class", ""), e.module)}};
    v.rejected.push_back(Explain(e, r_c, main_module, request.aliases));
  }
  for (const auto& err : a.value("errors", Json::array())) {
    v.notes.push_back(fmt::format("--discover {}: could not import '{}': {}", err.value("package", ""),
                                  err.value("module", ""), err.value("detail", "")));
  }
  for (const auto& d : request.discover) {
    bool any = std::any_of(v.accepted.begin(), v.accepted.end(),
                           [&](const FunctionEntry& e) { return e.origin == "--discover " + d.package; });
    if (!any) {
      v.notes.push_back(
          fmt::format("--discover {} --match '{}' found no torch.nn.Module subclass", d.package, d.match));
    }
  }
}

}  // namespace

StatusOr<Validation> ValidateByImport(const TraceRequest& request, const std::string& python,
                                      runner::ProcessRunner& runner, const runner::Environment& env) {
  auto helper = runner::FindHelper(env, "validate_trace.py");
  if (!helper) {
    return Error(ExitCode::kError,
                 "cpprof's helper validate_trace.py was not found (set CPPROF_HELPERS_DIR to "
                 "python/cpprof_helpers of cpprof's source tree)");
  }
  CPPROF_ASSIGN_OR_RETURN(DiscoverFilter filter, DiscoverFilter::Compile(request.discover));
  CPPROF_ASSIGN_OR_RETURN(Json a, RunHelper(HelperRequest(request), *helper, python, runner, env));
  Validation v;
  v.python = a.value("python", python);
  std::string main_module =
      a.contains("main_module") && a["main_module"].is_string() ? a["main_module"].get<std::string>() : "";
  CPPROF_RETURN_IF_ERROR(SortNamedEntries(request, a, main_module, v));
  SortDiscovered(request, filter, a, main_module, v);
  return v;
}

StatusOr<std::vector<TraceEntry>> ParseTraceJson(const std::string& text, const std::string& what) {
  Json j = Json::parse(text, nullptr, false);
  std::string shape = "a list of {\"domain\", \"module\", \"functions\": [...]} (nsys's functions-trace schema)";
  if (j.is_discarded()) return Error(ExitCode::kBadInput, fmt::format("'{}' is not JSON: expected {}", what, shape));
  if (!j.is_array()) return Error(ExitCode::kBadInput, fmt::format("'{}' is not {}", what, shape));
  std::vector<TraceEntry> out;
  for (size_t i = 0; i < j.size(); ++i) {
    const Json& e = j[i];
    bool ok = e.is_object() && e.contains("module") && e["module"].is_string() && e.contains("functions") &&
              e["functions"].is_array() && (!e.contains("domain") || e["domain"].is_string());
    if (ok) {
      ok = std::all_of(e["functions"].begin(), e["functions"].end(), [](const Json& f) { return f.is_string(); });
    }
    if (!ok) {
      return Error(ExitCode::kBadInput, fmt::format("'{}': entry {} ({}) is not {{\"domain\": str, \"module\": str, "
                                                    "\"functions\": [str, ...]}}",
                                                    what, i, Tail(e.dump(), 120)));
    }
    out.push_back(e);
  }
  return out;
}

std::vector<TraceEntry> MergeTrace(const std::vector<TraceEntry>& base, const std::vector<FunctionEntry>& accepted,
                                   const std::string& domain) {
  // The identity of an entry: everything but its functions.
  auto key_of = [](const Json& e) {
    Json k = e;
    k.erase("functions");
    return k.dump();
  };
  std::vector<TraceEntry> out;
  std::map<std::string, size_t> index;
  auto add_functions = [](Json& entry, const std::vector<std::string>& fns) {
    std::set<std::string> have;
    for (const auto& f : entry["functions"]) have.insert(f.get<std::string>());
    for (const auto& f : fns) {
      if (have.insert(f).second) entry["functions"].push_back(f);
    }
  };
  for (const auto& e : base) {
    std::string k = key_of(e);
    std::vector<std::string> fns;
    for (const auto& f : e["functions"]) fns.push_back(f.get<std::string>());
    auto it = index.find(k);
    if (it == index.end()) {
      Json copy = e;
      copy["functions"] = Json::array();
      index[k] = out.size();
      out.push_back(copy);
      it = index.find(k);
    }
    add_functions(out[it->second], fns);
  }
  // The accepted functions, grouped by (domain, module), sorted.
  std::map<std::pair<std::string, std::string>, std::set<std::string>> added;
  for (const auto& a : accepted) {
    added[{domain.empty() ? TopLevel(a.module) : domain, a.module}].insert(a.function);
  }
  for (const auto& [dm, fns] : added) {
    Json probe = {{"domain", dm.first}, {"module", dm.second}};
    std::vector<std::string> list(fns.begin(), fns.end());
    auto it = index.find(probe.dump());
    if (it != index.end()) {
      add_functions(out[it->second], list);
      continue;
    }
    Json e = {{"domain", dm.first}, {"module", dm.second}, {"functions", list}};
    index[probe.dump()] = out.size();
    out.push_back(e);
  }
  return out;
}

std::string TraceJsonText(const std::vector<TraceEntry>& entries) {
  Json j = Json::array();
  for (const auto& e : entries) j.push_back(e);
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

Status WriteTraceAtomically(const std::string& path, const std::vector<TraceEntry>& entries, WriteFileOptions o) {
  std::string text = TraceJsonText(entries);
  // Read back what reached the disk, check it, and only then put it in place.
  o.verify = [&](const std::string& tmp) -> Status {
    auto back = runner::Environment::ReadText(tmp, text.size() + 1);
    auto parsed =
        back ? ParseTraceJson(*back, tmp) : StatusOr<std::vector<TraceEntry>>(Error(ExitCode::kError, "unreadable"));
    if (!back || *back != text || !parsed.ok() || *parsed != entries) {
      return Error(ExitCode::kError,
                   fmt::format("'{}' did not read back as written; '{}' was left as it was", tmp, path));
    }
    return OkStatus();
  };
  return WriteFileAtomically(path, text, o);
}

}  // namespace cpprof::doctor
