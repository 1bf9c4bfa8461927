// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/size_inference.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <utility>

namespace cpprof::analysis {

namespace {

using Shape = std::vector<int64_t>;

// The ops whose input shapes say something about the sizes.
constexpr std::string_view kSizeOps[] = {"layer_norm", "linear", "scaled_dot_product_attention", "einsum", "bmm",
                                         "matmul",     "baddbmm"};

std::string ShapeText(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

// "trunk/.../TriangleMultiplicationOutgoing.forward" -> "TriangleMultiplicationOutgoing.forward"
std::string ShortName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// A shape list "[[1, 2], [], [3]]" from `at` (on its first '['); advances `at` past it.
bool ParseShapeList(std::string_view s, size_t& at, std::vector<Shape>& out) {
  if (at >= s.size() || s[at] != '[') return false;
  ++at;
  while (at < s.size()) {
    while (at < s.size() && (s[at] == ' ' || s[at] == ',')) ++at;
    if (at < s.size() && s[at] == ']') return ++at, true;
    if (at >= s.size() || s[at] != '[') return false;
    ++at;
    Shape shape;
    while (at < s.size() && s[at] != ']') {
      while (at < s.size() && (s[at] == ' ' || s[at] == ',')) ++at;
      if (at < s.size() && s[at] == ']') break;
      int64_t v = 0;
      auto [p, ec] = std::from_chars(s.data() + at, s.data() + s.size(), v);
      if (ec != std::errc() || v < 0) return false;
      at = static_cast<size_t>(p - s.data());
      shape.push_back(v);
    }
    if (at >= s.size()) return false;
    ++at;  // the shape's ']'
    out.push_back(std::move(shape));
  }
  return false;
}

bool IsOp(const model::OpShapes& op, std::string_view name) {
  return op.op.size() == name.size() + 6 && op.op.compare(6, std::string::npos, name) == 0;
}

// The first LayerNorm of at least `rank` dims: its input.
const Shape* FirstLayerNorm(const std::vector<model::OpShapes>& ops, size_t rank) {
  for (const auto& op : ops) {
    if (IsOp(op, "layer_norm") && !op.sizes.empty() && op.sizes[0].size() >= rank) return &op.sizes[0];
  }
  return nullptr;
}

// The weights [out, in] of the module's linears, in order.
std::vector<Shape> LinearWeights(const std::vector<model::OpShapes>& ops) {
  std::vector<Shape> w;
  for (const auto& op : ops) {
    if (IsOp(op, "linear") && op.sizes.size() >= 2 && op.sizes[1].size() == 2) w.push_back(op.sizes[1]);
  }
  return w;
}

// The query [.., H, L, d] of the module's first scaled-dot-product attention.
const Shape* AttentionQuery(const std::vector<model::OpShapes>& ops) {
  for (const auto& op : ops) {
    if (IsOp(op, "scaled_dot_product_attention") && !op.sizes.empty() && op.sizes[0].size() >= 3) {
      return &op.sizes[0];
    }
  }
  return nullptr;
}

// The sizes found so far, each with its origin; the first value of a size is kept and a later,
// different one is a note.
struct Found {
  Dims dims;
  std::vector<std::string>* notes = nullptr;
  int ranks = 1;
  bool grid_from_trimul = false;

  double Get(const std::string& name) const {
    auto it = dims.values.find(name);
    return it == dims.values.end() ? 0 : it->second;
  }
  void Set(const std::string& name, double v, const std::string& why) {
    if (!(v > 0)) return;
    auto it = dims.values.find(name);
    if (it == dims.values.end()) {
      dims.values[name] = v;
      dims.origin[name] = "shapes: " + why;
    } else if (it->second != v && notes) {
      notes->push_back(fmt::format("the recorded shapes disagree on {}: {} ({}) and {} ({}); the first is used", name,
                                   it->second, dims.origin[name].substr(8), v, why));
    }
  }
};

// Of the weights [rows, cols] with rows == `rows`: the cols that differ from `rows`, else `rows`
// (the output projection h -> c beside a gate c -> c); 0 when none.
double ColsInto(const std::vector<Shape>& weights, int64_t rows) {
  double same = 0;
  for (const auto& w : weights) {
    if (w[0] != rows) continue;
    if (w[1] != rows) return static_cast<double>(w[1]);
    same = static_cast<double>(rows);
  }
  return same;
}

// The fewest rows of a weight [H, in] with H < in: a per-head bias projection.
double HeadsFrom(const std::vector<Shape>& weights, int64_t in) {
  double heads = 0;
  for (const auto& w : weights) {
    if (w[1] == in && w[0] < in && (heads == 0 || w[0] < heads)) heads = static_cast<double>(w[0]);
  }
  return heads;
}

// A pair module (TriangleMultiplication*, TriangleAttention*, PairTransition): its input z block
// [.., r, c, c_z] gives c_z and N = sqrt(r c ranks); TriMul's gives the grid, its linears the hidden
// channels; TriangleAttention's bias projection the heads, its attention the head dim; the
// transition's output linear its factor.
void FromPairModule(const std::string& key, const model::ModuleShapes& m, Found& f) {
  const Shape* z = FirstLayerNorm(m.ops, 3);
  if (!z) return;
  const size_t k = z->size();
  const int64_t r = (*z)[k - 3], c = (*z)[k - 2], cz = (*z)[k - 1];
  const std::string at = fmt::format("{}'s aten::layer_norm input {}", ShortName(m.path), ShapeText(*z));
  f.Set("c_z", static_cast<double>(cz), at);
  const double area = static_cast<double>(r) * static_cast<double>(c) * f.ranks;
  const double n = std::round(std::sqrt(area));
  if (n * n == area) f.Set("N", n, fmt::format("{} on {} rank{}", at, f.ranks, f.ranks == 1 ? "" : "s"));
  const std::vector<Shape> w = LinearWeights(m.ops);
  // The grid: the block's rows and columns of N; TriMul's block is the layout its ring shifts use
  // (TriangleAttention may reshard first), so its grid is kept over another module's.
  const bool trimul = key.rfind("TriangleMultiplication", 0) == 0;
  const double rows = r > 0 ? n / static_cast<double>(r) : 0, cols = c > 0 ? n / static_cast<double>(c) : 0;
  if (n * n == area && rows == std::floor(rows) && cols == std::floor(cols) && rows * cols == f.ranks &&
      (!f.dims.origin.count("grid") || (trimul && !f.grid_from_trimul))) {
    f.dims.grid_rows = static_cast<int>(rows);
    f.dims.grid_cols = static_cast<int>(cols);
    f.dims.origin["grid"] = fmt::format("shapes: {} (the block of an N = {} pair tensor)", at, n);
    f.grid_from_trimul = trimul;
  }
  if (trimul) {
    f.Set("tri_mul_hidden", ColsInto(w, cz), ShortName(m.path) + "'s output linear");
  } else if (key.rfind("TriangleAttention", 0) == 0) {
    const double heads = HeadsFrom(w, cz);
    f.Set("tri_att_heads", heads, ShortName(m.path) + "'s bias linear [H, c_z]");
    if (const Shape* q = AttentionQuery(m.ops)) {
      f.Set("tri_att_head_dim", static_cast<double>(q->back()),
            fmt::format("{}'s attention query {}", ShortName(m.path), ShapeText(*q)));
    } else if (heads > 0) {
      f.Set("tri_att_head_dim", ColsInto(w, cz) / heads, ShortName(m.path) + "'s output linear / heads");
    }
  } else if (key == "PairTransition") {
    const double out = ColsInto(w, cz);
    if (out > cz && std::fmod(out, static_cast<double>(cz)) == 0) {
      f.Set("transition_n", out / static_cast<double>(cz), ShortName(m.path) + "'s output linear");
    }
  }
}

// The single and MSA modules: AttentionPairBias and SingleTransition give c_s (and the heads),
// OuterProductMean c_m, the MSA depth and c_opm, MSAPairWeightedAveraging its heads and head dim.
void FromOtherModule(const std::string& key, const model::ModuleShapes& m, Found& f) {
  const std::vector<Shape> w = LinearWeights(m.ops);
  const int64_t cz = static_cast<int64_t>(f.Get("c_z"));
  const std::string name = ShortName(m.path);
  if (key == "SingleTransition" || key == "AttentionPairBias") {
    for (const auto& op : m.ops) {
      if (!IsOp(op, "layer_norm") || op.sizes.empty() || op.sizes[0].size() < 2 || op.sizes[0].back() == cz) continue;
      f.Set("c_s", static_cast<double>(op.sizes[0].back()),
            fmt::format("{}'s aten::layer_norm input {}", name, ShapeText(op.sizes[0])));
      break;
    }
    if (key == "AttentionPairBias") {
      const Shape* q = AttentionQuery(m.ops);
      f.Set("single_att_heads", q ? static_cast<double>((*q)[q->size() - 3]) : HeadsFrom(w, cz),
            q ? fmt::format("{}'s attention query {}", name, ShapeText(*q)) : name + "'s bias linear [H, c_z]");
    }
  } else if (key == "OuterProductMean") {
    const Shape* msa = FirstLayerNorm(m.ops, 3);
    if (!msa) return;
    const int64_t cm = msa->back();
    const std::string at = fmt::format("{}'s aten::layer_norm input {}", name, ShapeText(*msa));
    f.Set("c_m", static_cast<double>(cm), at);
    f.Set("msa_depth", static_cast<double>((*msa)[msa->size() - 3]), at);
    for (const auto& x : w) {
      if (x[1] == cm) {
        f.Set("c_opm", static_cast<double>(x[0]), name + "'s projection linear");
        break;
      }
    }
  } else if (key == "MSAPairWeightedAveraging") {
    const double heads = HeadsFrom(w, cz);
    f.Set("msa_heads", heads, name + "'s bias linear [H, c_z]");
    for (const auto& x : w) {
      if (x[1] != cz && heads > 0 && std::fmod(static_cast<double>(x[0]), heads) == 0) {
        f.Set("msa_head_dim", static_cast<double>(x[0]) / heads, name + "'s value linear / heads");
        break;
      }
    }
  }
}

bool IsPairKey(const std::string& key) {
  return key.rfind("TriangleMultiplication", 0) == 0 || key.rfind("TriangleAttention", 0) == 0 ||
         key == "PairTransition";
}

// "--n-token" -> "n_token"
std::string FlagName(std::string_view flag) {
  std::string s(flag);
  for (char& ch : s) ch = ch == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// A command line's dtype words ("bf16-mixed", "float32", "32") as the cost model's dtypes; "" none.
std::string DtypeWord(std::string v) {
  for (char& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (v.rfind("bf16", 0) == 0 || v == "bfloat16") return "bf16";
  if (v.rfind("fp16", 0) == 0 || v == "float16" || v == "half" || v.rfind("16", 0) == 0) return "fp16";
  if (v == "fp32" || v == "float32" || v == "float" || v == "32" || v == "32-true") return "fp32";
  if (v == "tf32") return "tf32";
  return "";
}

int PositiveInt(std::string_view v) {
  int x = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  return ec == std::errc() && p == v.data() + v.size() && x > 0 && x <= 1 << 20 ? x : 0;
}

// The size a command-line flag names (the flag's name with '-' as '_'), and the factor and offset
// applied: passes = recycles + 1.
struct FlagDim {
  std::string_view flag, dim;
  double offset = 0;
};
constexpr FlagDim kFlagDims[] = {
    {"n_token", "N"},
    {"n_tokens", "N"},
    {"tokens", "N"},
    {"num_tokens", "N"},
    {"c_z", "c_z"},
    {"token_z", "c_z"},
    {"c_s", "c_s"},
    {"token_s", "c_s"},
    {"blocks", "blocks"},
    {"pairformer_blocks", "blocks"},
    {"msa_depth", "msa_depth"},
    {"diffusion_steps", "diffusion_steps"},
    {"sampling_steps", "diffusion_steps"},
    {"samples", "samples"},
    {"diffusion_samples", "samples"},
    {"recycles", "passes", 1},
    {"recycling_steps", "passes", 1},
};

}  // namespace

std::optional<model::OpShapes> ParseOpShapes(std::string_view text) {
  constexpr std::string_view kSizes = ", sizes = ";
  const size_t comma = text.find(',');
  const size_t at = text.find(kSizes);
  if (comma == std::string_view::npos || at == std::string_view::npos) return std::nullopt;
  model::OpShapes op;
  op.op = std::string(text.substr(0, comma));
  size_t pos = at + kSizes.size();
  if (!ParseShapeList(text, pos, op.sizes)) return std::nullopt;
  return op;
}

bool IsSizeBearingOp(std::string_view text) {
  if (text.rfind("aten::", 0) != 0) return false;
  const size_t comma = text.find(',');
  if (comma == std::string_view::npos) return false;
  const std::string_view name = text.substr(6, comma - 6);
  return std::find(std::begin(kSizeOps), std::end(kSizeOps), name) != std::end(kSizeOps);
}

Dims SizesFromShapes(const std::vector<model::ModuleShapes>& modules, const CostConfig& config, int ranks,
                     std::vector<std::string>* notes) {
  Found f;
  f.dims.values.clear();
  f.notes = notes;
  f.ranks = std::max(1, ranks);
  for (const auto& m : modules) {
    const std::string key = config.KeyOf(m.path);
    if (IsPairKey(key)) FromPairModule(key, m, f);
  }
  for (const auto& m : modules) {
    const std::string key = config.KeyOf(m.path);
    if (!key.empty() && !IsPairKey(key)) FromOtherModule(key, m, f);
  }
  if (!f.dims.origin.count("grid") && f.ranks == 1 && f.dims.Has("N")) {
    f.dims.grid_rows = f.dims.grid_cols = 1;
    f.dims.origin["grid"] = "ranks: one rank";
  }
  f.dims.source = "the recorded shapes";
  return f.dims;
}

Dims SizesFromCommandLine(const std::vector<std::string>& args) {
  Dims d;
  int cp0 = 0, cp1 = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() < 3 || a.compare(0, 2, "--") != 0) continue;
    const size_t eq = a.find('=');
    const std::string name =
        FlagName(std::string_view(a).substr(2, eq == std::string::npos ? std::string::npos : eq - 2));
    const bool next = eq == std::string::npos && i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0;
    const std::string value = eq != std::string::npos ? a.substr(eq + 1) : next ? args[i + 1] : "";
    if (value.empty()) continue;
    const std::string said = "command line: " + (eq != std::string::npos ? a : a + " " + value);
    if (name == "dtype" || name == "precision") {
      const std::string t = DtypeWord(value);
      if (!t.empty()) d.dtype = t, d.origin["dtype"] = said;
    } else if (name == "grid") {
      const size_t x = value.find_first_of("xX");
      const int r = x == std::string::npos ? 0 : PositiveInt(std::string_view(value).substr(0, x));
      const int c = x == std::string::npos ? 0 : PositiveInt(std::string_view(value).substr(x + 1));
      if (r && c) d.grid_rows = r, d.grid_cols = c, d.origin["grid"] = said;
    } else if (name == "cp0" || name == "cp1") {
      (name == "cp0" ? cp0 : cp1) = PositiveInt(value);
    }
    for (const FlagDim& fd : kFlagDims) {
      if (fd.flag != name) continue;
      const int v = value == "0" ? 0 : PositiveInt(value);
      if (v == 0 && value != "0") continue;
      d.values[std::string(fd.dim)] = v + fd.offset;
      d.origin[std::string(fd.dim)] = said;
    }
  }
  if (cp0 && cp1 && !d.origin.count("grid")) {
    d.grid_rows = cp0, d.grid_cols = cp1;
    d.origin["grid"] = fmt::format("command line: --cp0 {} --cp1 {}", cp0, cp1);
  }
  d.source = "the command line";
  return d;
}

namespace {

// "shapes: TriMul's ..." -> "shapes"; "--dims" -> "--dims".
std::string Label(const std::string& origin) { return origin.substr(0, origin.find(": ")); }

std::string Value(double v) { return fmt::format("{}", v); }

}  // namespace

Dims MergeDims(const std::vector<const Dims*>& sources) {
  Dims out;
  std::vector<std::string> used;
  auto note = [&](const std::string& origin) {
    const std::string l = Label(origin);
    if (std::find(used.begin(), used.end(), l) == used.end()) used.push_back(l);
  };
  bool defaults = false;
  for (const auto& k : KnownDims()) {
    const std::string name(k.name);
    auto from = std::find_if(sources.begin(), sources.end(), [&](const Dims* s) { return s && s->Has(name); });
    if (from == sources.end()) {
      defaults = true;
      continue;
    }
    out.values[name] = (*from)->values.at(name);
    auto o = (*from)->origin.find(name);
    out.origin[name] = o != (*from)->origin.end() ? o->second : "the cost config's dims";
    note(out.origin[name]);
  }
  for (const char* what : {"grid", "dtype"}) {
    auto from = std::find_if(sources.begin(), sources.end(), [&](const Dims* s) { return s && s->origin.count(what); });
    if (from == sources.end()) {
      defaults = true;
      continue;
    }
    if (std::string_view(what) == "grid") {
      out.grid_rows = (*from)->grid_rows, out.grid_cols = (*from)->grid_cols;
    } else {
      out.dtype = (*from)->dtype;
    }
    out.origin[what] = (*from)->origin.at(what);
    note(out.origin[what]);
  }
  if (defaults) used.push_back("defaults");
  out.source = fmt::format("{}", fmt::join(used, ", "));
  return out;
}

std::vector<std::string> ContradictedSizes(const Dims& given, const Dims& shapes) {
  std::vector<std::string> out;
  for (const auto& [name, v] : shapes.values) {
    auto o = given.origin.find(name);
    if (o == given.origin.end() || o->second != "--dims") continue;
    const double g = given.Get(name);
    if (std::fabs(g - v) <= 1e-9 * std::max(1.0, v)) continue;
    out.push_back(fmt::format("--dims {}={} but the recorded shapes give {}={} ({}): the --dims value is used", name,
                              Value(g), name, Value(v), shapes.origin.at(name).substr(8)));
  }
  auto g = given.origin.find("grid"), s = shapes.origin.find("grid");
  if (g != given.origin.end() && g->second == "--dims" && s != shapes.origin.end() &&
      (given.grid_rows != shapes.grid_rows || given.grid_cols != shapes.grid_cols)) {
    out.push_back(
        fmt::format("--dims grid={}x{} but the recorded shapes give grid={}x{} ({}): the --dims value is used",
                    given.grid_rows, given.grid_cols, shapes.grid_rows, shapes.grid_cols, s->second.substr(8)));
  }
  return out;
}

std::string DescribeSizes(const Dims& d) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  auto add = [&](const std::string& label, std::string item) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == label; });
    if (it == groups.end()) it = groups.insert(groups.end(), {label, {}});
    it->second.push_back(std::move(item));
  };
  for (const auto& k : KnownDims()) {
    const std::string name(k.name);
    auto o = d.origin.find(name);
    add(o == d.origin.end() ? "default (AF3)" : Label(o->second), name + "=" + Value(d.Get(name)));
  }
  auto grid = d.origin.find("grid");
  add(grid == d.origin.end() ? "default" : Label(grid->second), fmt::format("grid={}x{}", d.grid_rows, d.grid_cols));
  auto dtype = d.origin.find("dtype");
  add(dtype == d.origin.end() ? "default" : Label(dtype->second), "dtype=" + d.dtype);
  std::string out;
  for (const auto& [label, items] : groups) {
    out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", label, fmt::join(items, ", "));
  }
  return out;
}

}  // namespace cpprof::analysis
