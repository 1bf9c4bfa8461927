// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "doctor/nsys_help.h"

#include <algorithm>
#include <cctype>

#include "base/text_lines.h"

namespace cpprof::doctor {

namespace {

// The option an option heading of nsys's help names: "\t-t, --trace=", "\t--pytorch=",
// "\t(Experimental) --x="; empty for any other line.
std::string OptionHeading(std::string_view line) {
  if (line.empty() || line[0] != '\t') return "";
  line.remove_prefix(1);
  if (!line.empty() && line[0] == '(') {
    size_t close = line.find(") ");
    if (close == std::string_view::npos) return "";
    line.remove_prefix(close + 2);
  }
  if (line.size() >= 4 && line[0] == '-' && std::isalpha(static_cast<unsigned char>(line[1])) && line[2] == ',' &&
      line[3] == ' ') {
    line.remove_prefix(4);
  }
  if (line.size() < 3 || line.compare(0, 2, "--") != 0) return "";
  auto name_char = [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-';
  };
  if (line[2] == '-' || !name_char(line[2])) return "";
  size_t end = 2;
  while (end < line.size() && name_char(line[end])) ++end;
  return std::string(line.substr(2, end - 2));
}

// The texts between single quotes.
std::vector<std::string> Quoted(std::string_view s) {
  std::vector<std::string> out;
  size_t p = 0;
  while ((p = s.find('\'', p)) != std::string_view::npos) {
    size_t q = s.find('\'', p + 1);
    if (q == std::string_view::npos) break;
    if (q > p + 1) out.emplace_back(s.substr(p + 1, q - p - 1));
    p = q + 1;
  }
  return out;
}

std::string Trimmed(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace

bool ProfileHelp::HasOption(std::string_view name) const {
  return std::find(options.begin(), options.end(), name) != options.end();
}

std::vector<std::string> PossibleValues(std::string_view help, std::string_view option) {
  // The block of `option`: from its heading to the next heading.
  const std::vector<std::string_view> lines = SplitLines(help);
  std::string block;
  bool in = false;
  for (const auto& line : lines) {
    std::string name = OptionHeading(line);
    if (!name.empty()) {
      if (in) break;
      in = name == option;
      continue;
    }
    if (in) block += Trimmed(line) + " ";
  }
  size_t at = block.find("Possible values are");
  if (at == std::string::npos) return {};
  size_t end = block.find(". ", at);  // the sentence ends at the first ". "
  std::string sentence = block.substr(at, end == std::string::npos ? std::string::npos : end - at);
  return Quoted(sentence);
}

std::vector<std::string> ParseHelpOptions(std::string_view help) {
  std::vector<std::string> options;
  for (const auto& line : SplitLines(help)) {
    if (std::string name = OptionHeading(line); !name.empty()) options.push_back(name);
  }
  return options;
}

ProfileHelp ParseProfileHelp(std::string_view help) {
  ProfileHelp h;
  h.options = ParseHelpOptions(help);
  if (h.HasOption("pytorch")) h.pytorch_tokens = PossibleValues(help, "pytorch");
  // "For PyTorch application, see predefined annotations at '/.../pytorch.json'."
  static constexpr std::string_view kAt = "predefined annotations at '";
  for (size_t p = help.find(kAt); p != std::string_view::npos; p = help.find(kAt, p + 1)) {
    size_t b = p + kAt.size(), e = help.find('\'', b);
    if (e == std::string_view::npos) break;
    std::string_view path = help.substr(b, e - b);
    if (path.size() >= 12 && path.substr(path.size() - 12) == "pytorch.json") {
      h.pytorch_json = std::string(path);
      break;
    }
  }
  h.functions_trace_needs_nvtx = help.find("nvtx package must be installed") != std::string_view::npos;
  return h;
}

StatusEnvironment ParseStatusE(std::string_view text) {
  StatusEnvironment s;
  for (const auto& line : SplitLines(text)) {
    // "Linux Kernel Paranoid Level = 2"
    if (size_t p = line.find("Paranoid Level"); p != std::string::npos) {
      size_t eq = line.find('=', p);
      if (eq != std::string::npos) {
        try {
          s.paranoid = std::stoi(std::string(line.substr(eq + 1)));
        } catch (const std::exception&) {
        }
      }
    }
    // "CPU Profiling Environment (process-tree): OK"
    static constexpr std::string_view kEnv = "CPU Profiling Environment (";
    if (size_t p = line.find(kEnv); p != std::string::npos) {
      size_t close = line.find("):", p);
      if (close == std::string::npos) continue;
      std::string scope(line.substr(p + kEnv.size(), close - p - kEnv.size()));
      std::string value = Trimmed(line.substr(close + 2));
      bool ok = value == "OK";
      if (scope == "process-tree") {
        s.process_tree_sampling = ok;
        s.process_tree_text = value;
      } else if (scope == "system-wide") {
        s.system_wide_sampling = ok;
      }
    }
  }
  return s;
}

}  // namespace cpprof::doctor
