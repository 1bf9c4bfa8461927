// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// OUT/sweep.json read back (a rerun resumes it, --render renders it): a file users edit and copy
// between machines, so every field is checked for its type and range before anything uses it, and
// the first one that is not what a sweep writes is named in one line (exit 4).
#include <fmt/format.h>
#include <sys/stat.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "runner/environment.h"
#include "sweep/ladder.h"
#include "sweep/run_sweep.h"

namespace cpprof::sweep {

namespace {

using json = nlohmann::ordered_json;

constexpr size_t kMaxStateBytes = size_t{256} << 20;
// Lists: a point's modules and iterations; the matrix (its points are looked up per grid and size
// when the state is rendered, so their product stays small).
constexpr size_t kMaxItems = 100'000;
constexpr size_t kMaxGrids = 64, kMaxSizes = 256, kMaxPoints = 4096;
constexpr int64_t kMaxN = int64_t{1} << 24;      // the largest size a sweep may name
constexpr int64_t kMaxRanks = int64_t{1} << 20;  // cp0 * cp1
constexpr int64_t kMaxBytes = int64_t{1} << 62;  // memory sizes
constexpr int64_t kMaxCount = int64_t{1} << 30;  // iterations, steps
// Reals (times, rates, ratios) past this are damage: a sweep writes nothing near it, and the
// plots' margins and log ticks must stay finite (the fuzz target's finding: 1.8e308 gave inf).
constexpr double kMaxReal = 1e18;

bool GoodReal(const json& v) {
  return v.is_number() && std::isfinite(v.get<double>()) && std::abs(v.get<double>()) <= kMaxReal;
}

// A field that is not what a sweep writes: its path and why.
struct BadField {
  std::string field, why;
};

// One JSON object of the state, with its path for errors. A missing or null field is its
// fallback (states of older cpprofs lack some); a field of another type or out of range throws.
class Fields {
 public:
  Fields(const json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) throw BadField{path_.empty() ? "(top)" : path_, "is not an object"};
  }

  int64_t Int(const char* key, int64_t fallback, int64_t lo, int64_t hi) const {
    const json* v = Find(key);
    if (!v) return fallback;
    if (!v->is_number_integer() || (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(hi)) ||
        v->get<int64_t>() < lo || v->get<int64_t>() > hi) {
      throw BadField{Path(key), fmt::format("is {}, not an integer in {}..{}", Short(*v), lo, hi)};
    }
    return v->get<int64_t>();
  }
  double Real(const char* key, double fallback) const {
    const json* v = Find(key);
    if (!v) return fallback;
    if (!GoodReal(*v)) throw BadField{Path(key), fmt::format("is {}, not a number within +-1e18", Short(*v))};
    return v->get<double>();
  }
  std::string Text(const char* key, std::string fallback = "") const {
    const json* v = Find(key);
    if (!v) return fallback;
    if (!v->is_string()) throw BadField{Path(key), fmt::format("is {}, not a string", Short(*v))};
    return v->get<std::string>();
  }
  bool Flag(const char* key) const {
    const json* v = Find(key);
    if (!v) return false;
    if (!v->is_boolean()) throw BadField{Path(key), fmt::format("is {}, not true or false", Short(*v))};
    return v->get<bool>();
  }
  // An array's items, each checked by `item` (given the item and its path).
  template <class T, class F>
  std::vector<T> List(const char* key, F item, size_t max = kMaxItems) const {
    std::vector<T> out;
    const json* v = Find(key);
    if (!v) return out;
    if (!v->is_array() || v->size() > max) {
      throw BadField{Path(key), fmt::format("is not an array of at most {} items", max)};
    }
    out.reserve(v->size());
    for (size_t i = 0; i < v->size(); ++i) out.push_back(item((*v)[i], fmt::format("{}[{}]", Path(key), i)));
    return out;
  }
  std::vector<std::string> Texts(const char* key) const {
    return List<std::string>(key, [](const json& v, const std::string& path) {
      if (!v.is_string()) throw BadField{path, "is not a string"};
      return v.get<std::string>();
    });
  }
  std::vector<int64_t> Ints(const char* key, int64_t lo, int64_t hi, size_t max = kMaxItems) const {
    return List<int64_t>(
        key,
        [lo, hi](const json& v, const std::string& path) {
          if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(hi)) ||
              v.get<int64_t>() < lo || v.get<int64_t>() > hi) {
            throw BadField{path, fmt::format("is not an integer in {}..{}", lo, hi)};
          }
          return v.get<int64_t>();
        },
        max);
  }
  std::vector<double> Reals(const char* key) const {
    return List<double>(key, [](const json& v, const std::string& path) {
      if (!GoodReal(v)) throw BadField{path, "is not a number within +-1e18"};
      return v.get<double>();
    });
  }
  // A sub-object; an empty one when absent.
  Fields Object(const char* key) const {
    static const json kEmpty = json::object();
    const json* v = Find(key);
    return Fields(v ? *v : kEmpty, Path(key));
  }
  const json* Raw(const char* key) const { return Find(key); }

 private:
  const json* Find(const char* key) const {
    auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  std::string Path(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
  static std::string Short(const json& v) {
    std::string s = v.dump(-1, ' ', true, json::error_handler_t::replace);
    return s.size() > 40 ? s.substr(0, 40) + "..." : s;
  }

  const json& j_;
  std::string path_;
};

std::vector<int> ToInts(const std::vector<int64_t>& v) { return std::vector<int>(v.begin(), v.end()); }

model::SweepModule ModuleFrom(const Fields& m) {
  model::SweepModule out;
  out.name = m.Text("name");
  out.path = m.Text("path");
  out.depth = static_cast<int>(m.Int("depth", 0, 0, 1024));
  out.is_group = m.Flag("is_group");
  out.leaf = m.Flag("leaf");
  out.cp = m.Flag("cp");
  out.ms = m.Real("ms_per_iteration", 0);
  out.max_ms = m.Real("max_ms_per_iteration", 0);
  out.comm_ms = m.Real("comm_ms_per_iteration", 0);
  out.cost_key = m.Text("cost_key");
  out.tflops = m.Real("achieved_tflops", -1);
  out.percent_of_peak = m.Real("percent_of_peak", -1);
  return out;
}

void CaptureFrom(const Fields& c, model::SweepPoint& p) {
  p.capture_argv = c.Texts("argv");
  p.capture_status = c.Text("status");
  p.capture_detail = c.Text("detail");
  p.capture_wall_s = c.Real("wall_s", 0);
  p.capture_files = c.Text("files");
  p.capture_iter_ms = c.Real("iter_ms", 0);
  p.capture_iterations = static_cast<int>(c.Int("iterations", 0, 0, kMaxCount));
  p.exposed_transfer_share = c.Real("exposed_transfer_share", -1);
  p.waiting_share = c.Real("waiting_share", -1);
  p.compute_share = c.Real("compute_share", -1);
  p.idle_share = c.Real("idle_share", -1);
  p.capture_peak_mem_bytes = c.Ints("peak_mem_bytes", -1, kMaxBytes);
  p.modules = c.List<model::SweepModule>(
      "modules", [](const json& mj, const std::string& path) { return ModuleFrom(Fields(mj, path)); });
  if (const json* e = c.Raw("efficiency"); e && e->is_object()) p.efficiency_json = e->dump();
}

model::SweepPoint PointFrom(const Fields& pj) {
  model::SweepPoint p;
  p.n = static_cast<int>(pj.Int("n", 0, 0, kMaxN));
  p.grid = pj.Text("grid");
  p.cp0 = static_cast<int>(pj.Int("cp0", 1, 1, kMaxRanks));
  p.cp1 = static_cast<int>(pj.Int("cp1", 1, 1, kMaxRanks / p.cp0));
  p.ranks = static_cast<int>(pj.Int("ranks", 1, 1, kMaxRanks));
  p.origin = pj.Text("origin", "ladder");
  p.status = pj.Text("status");
  p.detail = pj.Text("detail");
  const Fields t = pj.Object("timing");
  p.timing_argv = t.Texts("argv");
  p.timing_wall_s = t.Real("wall_s", 0);
  p.iter_s = t.Reals("iter_s");
  p.median_iter_s = t.Real("median_iter_s", 0);
  p.warmup_iters = static_cast<int>(t.Int("warmup_iters", 0, 0, kMaxCount));
  p.peak_mem_bytes = t.Ints("peak_mem_bytes", -1, kMaxBytes);
  p.peak_mem_kind = t.Text("peak_mem_kind");
  CaptureFrom(pj.Object("capture"), p);
  return p;
}

// A grid as the sweep names it ("2x4"), its ranks within kMaxRanks.
std::string Grid(const json& v, const std::string& path) {
  int a = 0, b = 0;
  if (!v.is_string() || !ParseGrid(v.get<std::string>(), a, b) || int64_t{a} * b > kMaxRanks) {
    throw BadField{path, fmt::format("is not a CP grid ROWSxCOLS of at most {} ranks", kMaxRanks)};
  }
  return v.get<std::string>();
}

model::SweepSpec SpecFrom(const Fields& s) {
  model::SweepSpec spec;
  spec.workload = s.Text("workload");
  spec.mode = s.Text("mode");
  spec.arg_template = s.Text("arg_template");
  spec.extra_args = s.Texts("extra_args");
  spec.dtype = s.Text("dtype");
  spec.sizes = ToInts(s.Ints("sizes", 1, kMaxN, kMaxSizes));
  spec.grids = s.List<std::string>("grids", Grid, kMaxGrids);
  spec.iters = static_cast<int>(s.Int("iters", 0, 0, kMaxCount));
  spec.warmup = static_cast<int>(s.Int("warmup", 0, 0, kMaxCount));
  spec.capture_iters = static_cast<int>(s.Int("capture_iters", 0, 0, kMaxCount));
  spec.largest = s.Flag("largest");
  spec.step = static_cast<int>(s.Int("step", 0, 0, kMaxN));
  spec.max_n = static_cast<int>(s.Int("max_n", 0, 0, INT32_MAX));
  return spec;
}

model::SweepResult ResultFrom(const Fields& j) {
  model::SweepResult r;
  r.spec = SpecFrom(j.Object("spec"));
  const Fields m = j.Object("machine");
  r.machine.gpus = m.Texts("gpus");
  r.machine.gpu_name = m.Text("gpu_name");
  r.machine.gpu_memory_bytes = m.Int("gpu_memory_bytes", 0, 0, kMaxBytes);
  r.machine.interconnect = m.Text("interconnect");
  r.machine.nsys = m.Text("nsys");
  r.machine.python = m.Text("python");
  r.machine.torch = m.Text("torch");
  r.machine.cpprof_version = m.Text("cpprof_version");
  r.points = j.List<model::SweepPoint>(
      "points", [](const json& pj, const std::string& path) { return PointFrom(Fields(pj, path)); }, kMaxPoints);
  return r;
}

}  // namespace

StatusOr<std::optional<model::SweepResult>> ReadSweepJson(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return std::optional<model::SweepResult>();
  // Checked before any open: a FIFO there would block the read.
  if (!S_ISREG(st.st_mode) && !(S_ISLNK(st.st_mode) && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))) {
    return Error(ExitCode::kBadInput, fmt::format("'{}' is not a regular file (a FIFO, a device or a folder): remove "
                                                  "it, or pick another --out",
                                                  path));
  }
  if (static_cast<size_t>(st.st_size) > kMaxStateBytes) {
    return Error(ExitCode::kBadInput, fmt::format("'{}' is {} MiB, more than a sweep's state ({} MiB at most): pick "
                                                  "another --out, or pass --force to start a sweep there anyway",
                                                  path, st.st_size >> 20, kMaxStateBytes >> 20));
  }
  auto text = runner::Environment::ReadText(path, static_cast<size_t>(st.st_size));
  if (!text) return Error(ExitCode::kBadInput, fmt::format("cannot read '{}'", path));
  json j = json::parse(*text, nullptr, false);
  const json* schema = j.is_object() && j.contains("schema") ? &j["schema"] : nullptr;
  if (j.is_discarded() || !schema || !schema->is_string() || *schema != model::SweepResult::kSchema) {
    return Error(ExitCode::kBadInput,
                 fmt::format("'{}' is not a sweep's state ({} JSON). Pick another --out, or pass --force to start "
                             "a sweep there anyway",
                             path, model::SweepResult::kSchema));
  }
  try {
    return std::optional<model::SweepResult>(ResultFrom(Fields(j, "")));
  } catch (const BadField& bad) {
    return Error(ExitCode::kBadInput,
                 fmt::format("'{}' is a damaged sweep state: field '{}' {}. Fix or remove that field, pick another "
                             "--out, or pass --force to start the sweep there again",
                             path, bad.field, bad.why));
  }
}

}  // namespace cpprof::sweep
