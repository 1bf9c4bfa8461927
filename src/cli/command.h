// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// One subcommand: its flags (declared on a CLI11 App, so help is generated from them), its
// worked examples, and what it does. Each lives in its own file and is listed in cli.cc.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>
#include <span>
#include <string>

#include "base/exec_context.h"
#include "base/status.h"

namespace cpprof::cli {

struct Context {
  std::ostream& out;  // data only
  std::ostream& err;  // diagnostics, progress, errors
  // stdout is a terminal (cpprof run by a person): output meant for files (a Chrome trace, a
  // multi-megabyte table) is refused there with a hint to write it to a file.
  bool out_is_terminal = false;
  // How the command runs (threads, timing, test knobs): read from the environment once, by the
  // CLI (ExecFromEnvironment); passed down in the options of what the command calls.
  ExecContext exec;
  // Set by the command when some text it read was not UTF-8 (a result's invalid_utf8): the CLI
  // then says so once.
  bool invalid_utf8 = false;
};

// The ExecContext the environment asks for: CPPROF_THREADS (1 or more; else the machine's
// cores), CPPROF_TIMING (set: print stage timings), CPPROF_NVTX_PART_ROWS (a test knob), TMPDIR
// (where compressed exports are decompressed; else /tmp), with a fresh cache of decompressed files.
ExecContext ExecFromEnvironment();

class Command {
 public:
  virtual ~Command() = default;
  virtual void Declare(CLI::App& app) = 0;
  // Returns the exit code; errors are printed by the caller from the Status.
  virtual StatusOr<int> Run(Context& ctx) = 0;
};

struct CommandDef {
  const char* name;
  const char* summary;
  const char* examples;  // shown by `cpprof help NAME` and `cpprof NAME --help`
  std::unique_ptr<Command> (*make)();
  // Data commands: stdout is held until the command succeeds (all-or-nothing: on an error stdout
  // stays empty). Off for commands that show progress as they go (doctor, profile).
  bool buffered = true;
};

// The command table (cli.cc), in the order `cpprof help` lists it.
std::span<const CommandDef> Commands();
// The CLI11 parser of one command, its flags declared by `cmd` (what parses the command line,
// prints its --help, and generates the man page and the completions).
std::unique_ptr<CLI::App> MakeApp(const CommandDef& def, Command& cmd);

// The man page (roff) and shell completions, generated from Commands() and each MakeApp()
// (cli_docs.cc): `cpprof help --man`, `cpprof help --completion bash|zsh`.
std::string ManPage();
std::string BashCompletion();
std::string ZshCompletion();

// Subcommand factories (one file each).
std::unique_ptr<Command> MakeReportCommand();
std::unique_ptr<Command> MakeStatsCommand();
std::unique_ptr<Command> MakeDoctorCommand();
std::unique_ptr<Command> MakeTraceJsonCommand();
std::unique_ptr<Command> MakeScaffoldCommand();
std::unique_ptr<Command> MakeProfileCommand();
std::unique_ptr<Command> MakeDiffCommand();
std::unique_ptr<Command> MakeExportCommand();
std::unique_ptr<Command> MakeMergeCommand();
std::unique_ptr<Command> MakeSweepCommand();

}  // namespace cpprof::cli
