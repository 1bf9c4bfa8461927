// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "cli/cli.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <new>
#include <optional>

#include "base/atomic_file.h"
#include "base/compressed_file.h"
#include "base/spill_buffer.h"
#include "base/stage_timer.h"
#include "cli/build_commit.h"  // generated (CMakeLists.txt)
#include "cli/command.h"
#include "cli/report_output.h"

namespace cpprof::cli {

namespace {

constexpr CommandDef kCommands[] = {
    {"report",
     "the CP readout over the steady state: a verdict, time per module (CP vs serial), waiting vs "
     "transfer, the straggler, overlap, memory",
     "  cpprof report run.sqlite                       # steady-state iterations (warm-up left out)\n"
     "  cpprof report run.sqlite --window all          # the whole capture, start-up included\n"
     "  cpprof report run.sqlite --window iter:3       # one iteration; --window 24.1:25.3 a time range (s)\n"
     "  cpprof report run.sqlite --iteration-range 'train_step' --format md > readout.md\n"
     "  cpprof report run.sqlite --modules modules.json --depth 5   # see --print-modules-config\n"
     "  cpprof report run.sqlite --dims N=1024,c_z=128,grid=1x2,dtype=bf16   # efficiency per module (cost model)\n"
     "  cpprof report --print-cost-model --dims N=1024   # the model's FLOPs and bytes per module (JSON)\n"
     "  cpprof report run.sqlite --format json | jq '.per_rank[0].comm_ns'\n"
     "  cpprof report run.sqlite --format csv --top 20 > run.csv\n"
     "  cpprof report run.sqlite --format html -o run.html\n"
     "  CPPROF_TIMING=1 CPPROF_THREADS=1 cpprof report big.sqlite   # time and memory per stage, one thread\n"
     "  cpprof report run/                             # a run captured per rank or per node: one readout, one clock\n"
     "  cpprof report 'run/rep.*.sqlite' --format md  # the same, by a (quoted) glob\n"
     "  cpprof report --partial rep.7.sqlite -o rep.7.partial.json   # map step; then: cpprof merge\n",
     MakeReportCommand},
    {"merge", "the readout of a run from the partials of its exports ('report --partial'): the reduce step",
     "  cpprof merge run/*.partial.json\n"
     "  cpprof merge run/ --format json -o run.json\n"
     "  sbatch --array=0-63 map.sh && cpprof merge 'out/rep.*.partial.json' --format md   # see docs/multi-node.md\n",
     MakeMergeCommand},
    {"stats", "drop-in for 'nsys stats' reports on an export: same CSV, far faster",
     "  cpprof stats run.sqlite                                  # the default report set, as 'nsys stats'\n"
     "  cpprof stats --report cuda_gpu_kern_sum --format csv run.sqlite\n"
     "  cpprof stats -r cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum --timeunit usec run.sqlite\n"
     "  cpprof stats run.sqlite -o out/run                       # out/run_<report>.csv, one per report\n"
     "  cpprof stats run.nsys-rep                                # exported to run.sqlite beside it first\n"
     "  cpprof stats run/rep.*.sqlite                            # each export's tables in turn, as nsys\n"
     "  cpprof stats --merge run/                                # one table per report over all the exports\n"
     "  cpprof stats --help-reports\n",
     MakeStatsCommand},
    {"export",
     "the export as a Chrome Trace Event JSON for ui.perfetto.dev (a process per rank, a track per stream), or "
     "Kineto traces per rank for Holistic Trace Analysis",
     "  cpprof export --format chrome-trace run.sqlite -o run.json\n"
     "  cpprof export run.sqlite --ranks 0 --flows -o rank0.json\n"
     "  cpprof export run.sqlite --start-ns 11000000000 --end-ns 12000000000 --no-nvtx -o window.json\n"
     "  cpprof export run.sqlite --window iter:2 -o iter2.json   # one iteration; the CP view over it\n"
     "  cpprof export run.sqlite | gzip > run.json.gz\n"
     "  cpprof export run.sqlite --format kineto -o traces/     # one Kineto trace per rank, for HTA\n",
     MakeExportCommand},
    {"doctor", "is this machine ready to profile? finds and vets nsys, GPUs, interconnect, Python",
     "  cpprof doctor\n"
     "  cpprof doctor --gpus 0,1 --python /opt/torch/.venv/bin/python3\n"
     "  cpprof doctor --json | jq -r '.nsys.chosen.path'\n"
     "  cpprof doctor --nsys /opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys --deep\n",
     MakeDoctorCommand, /*buffered=*/false},
    {"trace-json", "write the --python-functions-trace JSON that names the model's own modules",
     "  cpprof trace-json --function cpwork.layers:Trunk.forward -o trace.json\n"
     "  cpprof trace-json --discover cpwork --match 'TriMul|Pairformer|Trunk' --entry-module cpwork.run -o trace.json\n"
     "  cpprof trace-json --spec modules.json --alias boltz=vendor.boltz --domain Boltz --strict -o trace.json\n"
     "  nsys profile --python-functions-trace=trace.json torchrun ... -m cpwork.run\n",
     MakeTraceJsonCommand},
    {"scaffold",
     "write a torchrun-ready profile module for your own model: seeds, control counts, synthetic inputs, "
     "marked iterations",
     "  cpprof scaffold --model mypkg.model:FoldModel --entry infer --contract contract.json -o profile_fold.py\n"
     "  cpprof scaffold --model mypkg.model:FoldModel --cp-wrapper mypkg.cp:wrap_cp --contract contract.json \\\n"
     "                  --count recycles=3 --count steps=20 --call kwargs -o profile_fold.py\n"
     "  cpprof scaffold --model mypkg.model:FoldModel --entry infer_protein --checkpoint ckpt/ -o profile_fold.py\n"
     "  cpprof profile --probe --trace-discover mypkg -- -m profile_fold --n-token 512   # then profile it\n",
     MakeScaffoldCommand},
    {"profile", "profile a multi-GPU run with nsys in one guarded command: plan, run, export, readout",
     "  cpprof profile --dry-run trunk 1024 4\n"
     "  cpprof profile e2e 512 2 --preset full\n"
     "  cpprof profile --name mine --preset full --trace-json trace.json -- -m pkg.entry --n 512\n"
     "  cpprof profile --preset full --trace-function pkg.model:Trunk.forward -- -m pkg.entry --n 512\n"
     "  cpprof profile --probe --trace-discover pkg.model --trace-match 'Trunk|Diffusion' -- -m pkg.entry\n"
     "  cpprof profile --nnodes 2 --nproc-per-node 4 --rdzv-endpoint node0:29500 -- train.py --steps 10\n",
     MakeProfileCommand, /*buffered=*/false},
    {"sweep", "a workload over sizes and CP grids: scaling curves, the largest N per grid, sweep.json/md/html",
     "  cpprof sweep trunk --n 512,1024,2048 --grids 1x1,1x2,2x2 --dtype bf16 --out sweep-trunk\n"
     "  cpprof sweep trunk --n 512,1024,2048 --grids 1x1 --dtype bf16 --largest --step 256 --out s   # + largest N\n"
     "  cpprof sweep --n 256,512 --grids 1x1,1x2 --out s --arg-template '-m pkg.run --n {n} --cp0 {cp0} "
     "--cp1 {cp1} --iters {iters}'\n"
     "  cpprof sweep trunk --n 512,1024 --grids 1x2 --out sweep-trunk   # again: finished points are kept\n",
     MakeSweepCommand, /*buffered=*/false},
    {"diff", "did a launcher or annotation change alter the GPU work? kernel mix, memory, modules; CI gates",
     "  cpprof diff plain.sqlite annotated.sqlite --sanity\n"
     "  cpprof diff before.sqlite after.sqlite\n"
     "  cpprof diff before.sqlite after.sqlite --max-time-delta 5 --max-mem-delta 10   # exit 3 on regression\n"
     "  cpprof diff a.sqlite b.sqlite --format json | jq .same_work\n",
     MakeDiffCommand},
};

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// `text` word-wrapped for a column that starts `indent` characters in and ends at `width`: each
// line after a break (and after each '\n' of the text) starts with `indent` spaces. A word longer
// than the column stays whole.
std::string WrapWords(std::string_view text, size_t width, size_t indent) {
  const size_t room = width > indent + 20 ? width - indent : 20;
  std::string out;
  size_t col = 0;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == ' ') {
      ++i;
      continue;
    }
    if (text[i] == '\n') {
      out.append("\n").append(indent, ' ');
      col = 0;
      ++i;
      continue;
    }
    const size_t end = std::min(text.find_first_of(" \n", i), text.size());
    if (col > 0 && col + 1 + (end - i) > room) {
      out.append("\n").append(indent, ' ');
      col = 0;
    } else if (col > 0) {
      out += ' ';
      ++col;
    }
    out.append(text.substr(i, end - i));
    col += end - i;
    i = end;
  }
  return out;
}

std::string Overview(size_t width) {
  std::string s =
      "cpprof: where GPU time and communication go in a context-parallel multi-GPU run,\n"
      "read from NVIDIA Nsight Systems (nsys) SQLite exports.\n\n"
      "usage: cpprof COMMAND [options] ...\n\ncommands:\n";
  for (const auto& c : kCommands) s += fmt::format("  {:<10}  {}\n", c.name, WrapWords(c.summary, width, 14));
  s += "\n'cpprof help COMMAND' (or 'cpprof COMMAND --help') shows a command's options and\n"
       "examples; 'cpprof help --man' prints the man page, 'cpprof help --completion\n"
       "bash|zsh' a completion script; 'cpprof --version' the version and the commit\n"
       "it was built from.\n"
       "Exit codes: 0 ok, 1 error, 2 bad usage, 3 a check failed, 4 unreadable input,\n"
       "5 not an nsys export, 6 an external program failed (docs/exit-codes.md).\n";
  return s;
}

int UnknownCommand(const std::string& name, std::ostream& err) {
  const CommandDef* best = nullptr;
  size_t best_d = 3;  // suggest only close names
  for (const auto& c : kCommands) {
    size_t d = EditDistance(name, c.name);
    if (d < best_d) best = &c, best_d = d;
  }
  err << fmt::format("cpprof: error: unknown command '{}'.", name);
  if (best) err << fmt::format(" Did you mean '{}'?", best->name);
  err << " 'cpprof help' lists the commands.\n";
  return static_cast<int>(ExitCode::kUsage);
}

// The first argument that looks like a flag the command does not have ("--fromat md"), and the
// flag it is closest to: "unknown flag '--fromat'. Did you mean '--format'?". Empty when every
// flag is known (CLI11's own message is said then).
std::string UnknownFlag(const CLI::App& app, const std::vector<std::string>& args) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options()) {
    for (const auto& l : o->get_lnames()) names.push_back("--" + l);
    for (const auto& n : o->get_snames()) names.push_back("-" + n);
  }
  for (const auto& arg : args) {
    if (arg == "--") break;  // what follows is the workload's
    if (arg.size() < 2 || arg[0] != '-' || std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.') continue;
    std::string name = arg.substr(0, arg.find('='));
    if (name.size() > 2 && name[1] != '-') name = name.substr(0, 2);  // -ofile: -o with its value
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    const std::string* best = nullptr;
    size_t best_d = std::max<size_t>(3, name.size() / 3);  // suggest only close names
    size_t prefix_matches = 0;
    const std::string* prefix = nullptr;
    for (const auto& n : names) {
      size_t d = EditDistance(name, n);
      if (d < best_d) best = &n, best_d = d;
      if (name.size() >= 3 && n.rfind(name, 0) == 0) ++prefix_matches, prefix = &n;
    }
    if (!best && prefix_matches == 1) best = prefix;  // "--time" -> "--timeunit"
    std::string msg = fmt::format("unknown flag '{}'.", name);
    if (best) msg += fmt::format(" Did you mean '{}'?", *best);
    return msg;
  }
  return "";
}

// Runs `fn`, turning an escaped exception into an error Status: whatever happens inside, the user
// gets one line and an exit code, never std::terminate's abort.
template <typename Fn>
StatusOr<int> RunGuarded(const std::string& name, Fn fn) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return Error(ExitCode::kError, fmt::format("out of memory. Try a smaller window (cpprof help {}), fewer ranks, or "
                                               "a machine with more memory.",
                                               name));
  } catch (const std::exception& e) {
    return Error(ExitCode::kError, fmt::format("internal error: {}. This is a bug in cpprof: please report it with "
                                               "the command line (and the export, if you can share it).",
                                               e.what()));
  } catch (...) {
    return Error(ExitCode::kError,
                 "internal error (an unknown exception). This is a bug in cpprof: please report it with the command "
                 "line (and the export, if you can share it).");
  }
}

// The words of a shell command, split at spaces outside quotes.
std::vector<std::string> ShellWords(std::string_view cmd) {
  std::vector<std::string> words(1);
  char quote = 0;
  for (char ch : cmd) {
    if (quote) {
      quote = ch == quote ? 0 : quote;
    } else if (ch == '\'' || ch == '"') {
      quote = ch;
    } else if (ch == ' ') {
      if (!words.back().empty()) words.emplace_back();
      continue;
    }
    words.back() += ch;
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

// One worked example fitted to `width`: a command too long is continued with ' \' at a space
// outside quotes, and a comment that does not fit beside it goes under it, wrapped.
void AppendExample(std::string_view line, size_t width, std::string& out) {
  if (line.size() <= width) {
    out.append(line).append("\n");
    return;
  }
  const size_t indent = line.find_first_not_of(' ');
  const size_t hash = line.find("  # ");
  std::string_view cmd = line.substr(0, hash), comment;
  if (hash != std::string_view::npos) comment = line.substr(line.find('#', hash));
  std::string current(indent, ' ');
  for (const auto& word : ShellWords(cmd)) {
    const bool first = current.size() == indent;
    if (!first && current.size() + 1 + word.size() + 2 > width) {
      out += current + " \\\n";
      current.assign(indent + 4, ' ');
    } else if (!first) {
      current += ' ';
    }
    current += word;
  }
  if (!comment.empty() && current.size() + 3 + comment.size() <= width) {
    out += current + "   " + std::string(comment) + "\n";
  } else if (!comment.empty()) {
    out += current + "\n" + std::string(indent + 4, ' ') + WrapWords(comment, width, indent + 4) + "\n";
  } else {
    out += current + "\n";
  }
}

// --help fitted to the terminal: descriptions wrapped beside the option column, examples fitted.
class FittingFormatter final : public CLI::Formatter {
 public:
  explicit FittingFormatter(size_t width) : width_(width) {}
  std::string make_option_desc(const CLI::Option* opt) const override {
    const size_t column = get_column_width();
    return WrapWords(opt->get_description(), width_ > column + 20 ? width_ - column : column + 20, 0);
  }
  std::string make_description(const CLI::App* app) const override {
    return WrapWords(CLI::Formatter::make_description(app), width_, 0);
  }
  std::string make_footer(const CLI::App* app) const override {
    std::string out;
    const std::string text = app->get_footer();  // a copy: CLI11 returns it by value
    std::string_view footer = text;
    std::string example;  // an example continued over lines (' \\' at their ends) is one
    while (!footer.empty()) {
      const size_t end = std::min(footer.find('\n'), footer.size());
      std::string_view line = footer.substr(0, end);
      footer.remove_prefix(std::min(end + 1, footer.size()));
      if (!example.empty()) line.remove_prefix(std::min(line.find_first_not_of(' '), line.size()));
      example += line;
      if (example.size() >= 2 && example.compare(example.size() - 2, 2, " \\") == 0) {
        example.pop_back();
        continue;
      }
      AppendExample(example, width_, out);
      example.clear();
    }
    return out + "\n";
  }

 private:
  size_t width_;
};

// A Diagnostics sink onto the command's error stream, one whole line at a time from any thread.
class LinesTo final : public Diagnostics {
 public:
  explicit LinesTo(std::ostream& out) : out_(out) {}
  void Line(std::string_view line) override {
    std::lock_guard<std::mutex> lock(mu_);
    out_ << line << '\n';
  }

 private:
  std::ostream& out_;
  std::mutex mu_;
};

// Held output past this size is not dumped onto a terminal (the HTML page and a Chrome trace are
// refused there by their commands before any work).
constexpr size_t kTerminalLimit = size_t{4} << 20;

int RunCommand(const CommandDef& def, const std::vector<std::string>& rest, std::ostream& out, std::ostream& err,
               bool out_is_terminal, const DirectOutput* direct) {
  auto cmd = def.make();
  std::unique_ptr<CLI::App> app_ptr = MakeApp(def, *cmd);
  CLI::App& app = *app_ptr;
  app.formatter(std::make_shared<FittingFormatter>(ColumnsOr(80, out_is_terminal)));
  std::vector<std::string> reversed(rest.rbegin(), rest.rend());  // CLI11 parses a reversed vector
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::string unknown = UnknownFlag(app, rest);
    err << fmt::format("cpprof: error: {}: {} See 'cpprof help {}'.\n", def.name, unknown.empty() ? e.what() : unknown,
                       def.name);
    return static_cast<int>(ExitCode::kUsage);
  }
  SpillBuffer held;
  std::ostream held_out(&held);
  const bool hold = def.buffered && !direct;
  std::optional<TruncateOnSignal> truncate_on_signal;  // Ctrl-C takes the output back too
  if (def.buffered && direct && direct->fd >= 0) truncate_on_signal.emplace(direct->fd, direct->length);
  Context ctx{hold ? held_out : out, err, out_is_terminal, ExecFromEnvironment()};
  LinesTo diagnostics(err);  // notes and timing lines from the command's threads, whole lines each
  ctx.exec.diagnostics = &diagnostics;
  StatusOr<int> rc = RunGuarded(def.name, [&] { return cmd->Run(ctx); });
  if (ctx.invalid_utf8) {
    err << "cpprof: note: some names in the export are not valid UTF-8; each such byte is shown as U+FFFD "
           "(\xEF\xBF\xBD)\n";
  }
  if (!rc.ok()) {
    // One prefix per error: a message that already names the command does not name it again.
    std::string_view message = rc.status().message();
    if (const std::string own = std::string(def.name) + ": "; message.substr(0, own.size()) == own) {
      message.remove_prefix(own.size());
    }
    err << fmt::format("cpprof: error: {}: {}\n", def.name, message);
    // What the command printed is dropped: stdout stays empty (as it was).
    if (def.buffered && direct && direct->fd >= 0) {
      out.flush();
      if (::ftruncate(direct->fd, direct->length) != 0 || ::lseek(direct->fd, direct->length, SEEK_SET) < 0) {
        err << fmt::format("cpprof: error: {}: could not remove the partial output from stdout: discard it\n",
                           def.name);
      }
    }
    return static_cast<int>(rc.status().code());
  }
  if (hold && out_is_terminal && held.size() > kTerminalLimit) {
    held_out.flush();
    err << fmt::format(
        "cpprof: error: {}: the output is {:.1f} MiB, too much for a terminal; nothing was printed. {} (or redirect "
        "stdout: cpprof {} ... > FILE).\n",
        def.name, static_cast<double>(held.size()) / (1 << 20),
        app.get_option_no_throw("-o") ? "Write it to a file with -o FILE" : "Write it to a file", def.name);
    return static_cast<int>(ExitCode::kUsage);
  }
  if (hold && !held.CopyTo(out)) {
    // Main says "could not write the output" when `out` failed; a failed spill file says so here.
    if (out) {
      err << fmt::format(
          "cpprof: error: {}: could not hold the output in a temporary file (is TMPDIR full?). Set "
          "TMPDIR to a folder with room, or write with -o.\n",
          def.name);
    }
    return static_cast<int>(ExitCode::kError);
  }
  return *rc;
}

}  // namespace

std::span<const CommandDef> Commands() { return kCommands; }

std::unique_ptr<CLI::App> MakeApp(const CommandDef& def, Command& cmd) {
  auto app = std::make_unique<CLI::App>(def.summary, std::string("cpprof ") + def.name);
  app->footer(std::string("\nExamples:\n") + def.examples);
  app->set_help_flag("-h,--help", "Show this help and exit");
  cmd.Declare(*app);
  return app;
}

int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool out_is_terminal,
        const DirectOutput* direct) {
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    (args.empty() ? err : out) << Overview(ColumnsOr(80, out_is_terminal));
    return args.empty() ? static_cast<int>(ExitCode::kUsage) : 0;
  }
  if (args[0] == "--version" || args[0] == "version") {
    out << "cpprof " << CPPROF_VERSION << " (commit " << CPPROF_BUILD_COMMIT << ")\n";
    return 0;
  }
  std::string name = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (name == "help") {
    if (rest.empty()) {
      out << Overview(ColumnsOr(80, out_is_terminal));
      return 0;
    }
    if (rest[0] == "--man" && rest.size() == 1) {
      out << ManPage();
      return 0;
    }
    if (rest[0] == "--completion") {
      std::string shell = rest.size() == 2 ? rest[1] : "";
      if (shell == "bash" || shell == "zsh") {
        out << (shell == "bash" ? BashCompletion() : ZshCompletion());
        return 0;
      }
      err << "cpprof: error: help: --completion takes bash or zsh: cpprof help --completion bash > "
             "/etc/bash_completion.d/cpprof\n";
      return static_cast<int>(ExitCode::kUsage);
    }
    name = rest[0];
    rest = {"--help"};
  }
  for (const auto& c : kCommands) {
    if (name == c.name) return RunCommand(c, rest, out, err, out_is_terminal, direct);
  }
  return UnknownCommand(name, err);
}

namespace {

// Whether stdout can take a command's output as it comes and give it back on an error: a regular
// file with nothing after the write position (cpprof ... > FILE, >> FILE) is cut back to that
// position; /dev/null keeps nothing. Elsewhere (a pipe, a terminal, a file with bytes after the
// position) the output is held until the command succeeded: a multi-GB trace is written twice.
std::optional<DirectOutput> StdoutDirect() {
  struct stat out;
  if (::fstat(STDOUT_FILENO, &out) != 0) return std::nullopt;
  if (S_ISCHR(out.st_mode)) {
    struct stat null;
    if (::stat("/dev/null", &null) == 0 && S_ISCHR(null.st_mode) && null.st_rdev == out.st_rdev) {
      return DirectOutput{};
    }
    return std::nullopt;
  }
  if (!S_ISREG(out.st_mode)) return std::nullopt;
  const off_t at = ::lseek(STDOUT_FILENO, 0, SEEK_CUR);
  if (at < 0 || at != out.st_size) return std::nullopt;
  return DirectOutput{STDOUT_FILENO, at};
}

}  // namespace

ExecContext ExecFromEnvironment() {
  ExecContext exec;
  if (const char* env = std::getenv("CPPROF_THREADS")) {
    const long n = std::strtol(env, nullptr, 10);
    if (n >= 1) exec.threads = static_cast<size_t>(n);
  }
  exec.timing = std::getenv("CPPROF_TIMING") != nullptr;
  if (const char* env = std::getenv("CPPROF_NVTX_PART_ROWS")) {
    const long long n = std::strtoll(env, nullptr, 10);
    if (n >= 1) exec.nvtx_part_rows = n;
  }
  if (const char* dir = std::getenv("TMPDIR"); dir && *dir) exec.temp_dir = dir;
  exec.decompressed = std::make_shared<DecompressedFiles>();
  return exec;
}

int Main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  // A closed pipe (cpprof ... | head) is a write error, exit 1 as documented, not death by SIGPIPE
  // (141). Children get the default back (runner/process_runner.cc).
  ::signal(SIGPIPE, SIG_IGN);
  int rc = 0;
  try {
    std::vector<std::string> args(argv + 1, argv + argc);
    const std::optional<DirectOutput> direct = StdoutDirect();
    rc = Run(args, std::cout, std::cerr, ::isatty(STDOUT_FILENO) == 1, direct ? &*direct : nullptr);
  } catch (const std::exception& e) {  // the commands are guarded; this is for the code around them
    std::cerr << "cpprof: error: internal error: " << e.what() << ". This is a bug in cpprof: please report it.\n";
    return static_cast<int>(ExitCode::kError);
  }
  std::cout.flush();
  ExecFromEnvironment().Timing(
      fmt::format("cpprof: timing: done, every object freed, at {:.3f} s", SecondsSinceStart()));
  if (!std::cout) {
    std::cerr << "cpprof: error: could not write the output (disk full or closed pipe?)\n";
    return static_cast<int>(ExitCode::kError);
  }
  return rc;
}

}  // namespace cpprof::cli
