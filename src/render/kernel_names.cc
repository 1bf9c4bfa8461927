// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/kernel_names.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <vector>

namespace cpprof::render {

namespace {

bool IsIdent(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }

// The index of the bracket that opens the one closing at `close` (s[close] is ')' or '>'),
// scanning back over nested (), <>, []; npos when unbalanced.
size_t MatchBack(std::string_view s, size_t close) {
  std::vector<char> stack;
  for (size_t i = close + 1; i-- > 0;) {
    const char c = s[i];
    if (c == ')' || c == '>' || c == ']') {
      // "->" is no bracket (it does not appear in demangled kernel names, but be safe).
      if (c == '>' && i > 0 && s[i - 1] == '-') continue;
      stack.push_back(c);
    } else if (c == '(' || c == '<' || c == '[') {
      if (stack.empty()) return std::string_view::npos;
      const char want = c == '(' ? ')' : c == '<' ? '>' : ']';
      if (stack.back() != want) return std::string_view::npos;
      stack.pop_back();
      if (stack.empty()) return i;
    }
  }
  return std::string_view::npos;
}

// Names inside template arguments that say nothing about what a kernel does: types, standard
// and library helpers, PyTorch's launch wrappers, demangler words.
bool IsNoise(std::string_view id) {
  static constexpr std::array<std::string_view, 52> kNoise = {"void",
                                                              "bool",
                                                              "char",
                                                              "short",
                                                              "int",
                                                              "long",
                                                              "unsigned",
                                                              "signed",
                                                              "float",
                                                              "double",
                                                              "const",
                                                              "volatile",
                                                              "half",
                                                              "Half",
                                                              "BFloat16",
                                                              "bfloat16",
                                                              "complex",
                                                              "c10",
                                                              "std",
                                                              "array",
                                                              "tuple",
                                                              "pair",
                                                              "plus",
                                                              "minus",
                                                              "lambda",
                                                              "instance",
                                                              "operator",
                                                              "unnamed",
                                                              "anonymous",
                                                              "namespace",
                                                              "type",
                                                              "value_type",
                                                              "result_type",
                                                              "function_traits",
                                                              "gpu_kernel_impl",
                                                              "gpu_kernel_impl_nocast",
                                                              "gpu_index_kernel",
                                                              "index_kernel_impl",
                                                              "OpaqueType",
                                                              "TrivialOffsetCalculator",
                                                              "OffsetCalculator",
                                                              "LoadWithCast",
                                                              "StoreWithCast",
                                                              "func_wrapper_t",
                                                              "ReduceOp",
                                                              "policy_hub",
                                                              "ScanTileState",
                                                              "NullType",
                                                              "transform_iterator",
                                                              "counting_iterator",
                                                              "use_default",
                                                              "Params"};
  if (id.size() >= 2 && id[0] == '_' && id[1] == '_') return true;  // __nv_bfloat16, __identity, __4
  // Template parameters (T1), policies (Policy1000), float types such as float4.
  auto digits_after = [&](std::string_view prefix) {
    if (id.substr(0, prefix.size()) != prefix || id.size() == prefix.size()) return false;
    return std::all_of(id.begin() + static_cast<std::ptrdiff_t>(prefix.size()), id.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  };
  if (digits_after("T") || digits_after("Policy") || digits_after("float") || digits_after("int")) return true;
  return std::find(kNoise.begin(), kNoise.end(), id) != kNoise.end();
}

struct Candidate {
  size_t pos;
  int depth;
  std::string_view id;
  std::string_view text;  // the name with its own template arguments when they are short (`CUDAFunctor_add<float>`)
};

// Template arguments of a candidate kept with it: the element type, which tells apart the same
// functor on float, long or BFloat16.
constexpr size_t kKeptCandidateArgs = 16;

// The names in a template argument list `args` (without its outer <>) that may tell the kernel
// apart: not inside parentheses (parameter lists, casts such as `(int)4`) or brackets (nsys's
// `[lambda(int) (instance 1)]`), not a namespace or class qualifier (followed by ::), not noise.
std::vector<Candidate> Candidates(std::string_view args) {
  std::vector<Candidate> out;
  int angle = 0, paren = 0, square = 0;
  for (size_t i = 0; i < args.size();) {
    const char c = args[i];
    if (IsIdentStart(c) && (i == 0 || !IsIdent(args[i - 1]))) {
      size_t j = i;
      while (j < args.size() && IsIdent(args[j])) ++j;
      std::string_view id = args.substr(i, j - i);
      const bool qualifier = args.compare(j, 2, "::") == 0;
      if (paren == 0 && square == 0 && !qualifier && !IsNoise(id)) {
        std::string_view text = id;
        if (j < args.size() && args[j] == '<') {
          size_t close = args.find('>', j);
          const bool flat =
              close != std::string_view::npos && args.substr(j + 1, close - j - 1).find('<') == std::string_view::npos;
          if (flat && close - j - 1 <= kKeptCandidateArgs) text = args.substr(i, close + 1 - i);
        }
        out.push_back({i, angle, id, text});
      }
      i = j;
      continue;
    }
    if (c == '<') ++angle;
    if (c == '>' && angle > 0) --angle;
    if (c == '(') ++paren;
    if (c == ')' && paren > 0) --paren;
    if (c == '[') ++square;
    if (c == ']' && square > 0) --square;
    ++i;
  }
  return out;
}

}  // namespace

std::string ShortKernelName(std::string_view name, std::string_view ellipsis) {
  std::string_view s = name;
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.substr(0, 5) == "void ") s.remove_prefix(5);
  // The parameter list: the bracket group that ends the name.
  if (!s.empty() && s.back() == ')') {
    size_t open = MatchBack(s, s.size() - 1);
    if (open != std::string_view::npos && open > 0) s = s.substr(0, open);
  }
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.empty() || s.back() != '>') return std::string(s.empty() ? name : s);
  const size_t open = MatchBack(s, s.size() - 1);
  if (open == std::string_view::npos || open == 0) return std::string(s);
  std::string_view head = s.substr(0, open);
  std::string_view args = s.substr(open + 1, s.size() - open - 2);
  if (args.size() <= kKeptTemplateArgs) return std::string(s);
  std::vector<Candidate> cand = Candidates(args);
  // The two most deeply nested (the functor inside a launch wrapper), first ones on a tie; shown
  // in their order in the name, each once.
  std::stable_sort(cand.begin(), cand.end(), [](const Candidate& a, const Candidate& b) { return a.depth > b.depth; });
  std::vector<Candidate> pick;
  for (const auto& c : cand) {
    if (pick.size() == 2) break;
    if (std::none_of(pick.begin(), pick.end(), [&](const Candidate& p) { return p.id == c.id; })) pick.push_back(c);
  }
  std::sort(pick.begin(), pick.end(), [](const Candidate& a, const Candidate& b) { return a.pos < b.pos; });
  std::string inner(ellipsis);
  for (const auto& p : pick) {
    inner += p.text;
    inner += ellipsis;
  }
  if (inner.size() >= args.size()) return std::string(s);  // nothing gained: keep the arguments
  std::string out(head);
  out += '<';
  out += inner;
  out += '>';
  return out;
}

std::string WithoutNamespaces(std::string_view name) {
  size_t start = 0, i = 0;
  while (i < name.size()) {
    bool anonymous = false;  // `<unnamed>` and `(anonymous namespace)` are namespaces, not arguments
    for (std::string_view a : {std::string_view("<unnamed>"), std::string_view("(anonymous namespace)")}) {
      if (name.substr(i, a.size()) == a) i += a.size(), anonymous = true;
    }
    if (anonymous) continue;
    if (name[i] == '<' || name[i] == '(') break;  // the name's own arguments
    if (name.substr(i, 2) == "::") {
      start = i += 2;
    } else {
      ++i;
    }
  }
  return std::string(name.substr(start));
}

std::string FitKernelName(std::string name, size_t room) {
  if (room == 0 || name.size() <= room) return name;
  name = WithoutNamespaces(name);
  if (name.size() > room) name = name.substr(0, room > 3 ? room - 3 : 0) + "...";
  return name;
}

}  // namespace cpprof::render
