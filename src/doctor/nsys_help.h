// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Parsers for what nsys says about itself (pure functions; the doctor runs the commands):
// `nsys profile --help` (its options, the accepted --pytorch tokens, where the shipped
// functions-trace files are), `nsys export --help` (whether it can keep NVTX payloads) and
// `nsys status -e` (whether CPU sampling works here).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cpprof::doctor {

struct ProfileHelp {
  std::vector<std::string> options;         // long option names, without "--": "trace", "pytorch"
  std::vector<std::string> pytorch_tokens;  // "autograd-nvtx", "autograd-shapes-nvtx", ...
  std::string pytorch_json;                 // the shipped PythonFunctionsTrace/pytorch.json it names
  bool functions_trace_needs_nvtx = false;  // "nvtx package must be installed on the target Python"

  bool HasOption(std::string_view name) const;
};

ProfileHelp ParseProfileHelp(std::string_view help);

// The long options any nsys command's help lists (`nsys export --help`: "include-json", ...).
std::vector<std::string> ParseHelpOptions(std::string_view help);

// The values of one option's "Possible values are 'a', 'b' or 'c'." sentence.
std::vector<std::string> PossibleValues(std::string_view help, std::string_view option);

struct StatusEnvironment {
  std::optional<int> paranoid;                // "Linux Kernel Paranoid Level = 2"
  std::optional<bool> process_tree_sampling;  // "CPU Profiling Environment (process-tree): OK"
  std::optional<bool> system_wide_sampling;
  std::string process_tree_text;  // what followed the colon, for the report
};

StatusEnvironment ParseStatusE(std::string_view text);

}  // namespace cpprof::doctor
