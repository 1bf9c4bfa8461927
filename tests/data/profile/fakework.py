# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""A fake workload for cpprof profile's tests: prints its arguments, can hang or crash a rank, and
speaks the probe protocol with made-up numbers: the one iteration line cpfold and cpprof_workload
print (`cpprof-iter: {...}`, docs/workload-kit.md, "The iteration line"; `--planned N` adds
`planned`), all `--iter-lines` of them, or with `--schedule` only the first $CPPROF_PROBE_ITERS under
the probe, as cpprof_workload.schedule runs them. `--probe-sleep S` makes only the probe (the
run with $CPPROF_PROBE_ITERS) sleep S s after its lines, ignoring SIGTERM, to test --probe-cap."""
import argparse
import json
import os
import signal
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--n", type=int)
p.add_argument("--hang", action="store_true", help="sleep, ignoring SIGTERM (only SIGKILL stops it)")
p.add_argument("--crash-rank", type=int, default=-1)
p.add_argument("--pid-dir")
p.add_argument("--iter-lines", type=int, default=0, help="print this many iteration lines per rank")
p.add_argument("--iter-s", type=float, default=0.25, help="the wall_s they claim (nothing sleeps)")
p.add_argument("--peak-bytes", type=int, default=1 << 30, help="the peak_mem_bytes they claim")
p.add_argument("--schedule", action="store_true",
               help="under the probe, only the first $CPPROF_PROBE_ITERS lines (as cpprof_workload.schedule)")
p.add_argument("--planned", type=int, default=0, help="the `planned` the lines say (0: none)")
p.add_argument("--probe-sleep", type=float, default=0, help="under the probe: sleep this long after the lines")
a = p.parse_args()
rank = int(os.environ.get("RANK", "0"))


def say(line):
    # One write per line: the ranks share the pipe (print() writes the text and its newline
    # apart when Python is unbuffered, and two ranks' lines then interleave).
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


cap = os.environ.get("CPPROF_PROBE_ITERS")
if a.pid_dir:  # the probe's ranks write probe-rankN.pid, the profiled run's rankN.pid
    with open(os.path.join(a.pid_dir, f"{'probe-' if cap else ''}rank{rank}.pid"), "w") as f:
        f.write(str(os.getpid()))
say(f"fakework rank {rank}: argv={json.dumps(sys.argv[1:])}")
if rank == a.crash_rank:
    sys.stderr.write(f"fakework rank {rank}: RuntimeError: boom\n")
    sys.exit(1)
if a.hang:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(3600)
say(f"fakework rank {rank}: CPPROF_PROBE_ITERS={cap}")
for it in range(min(a.iter_lines, int(cap)) if cap and a.schedule else a.iter_lines):
    line = {"rank": rank, "iter": it, "warmup": False, "wall_s": a.iter_s, "peak_mem_bytes": a.peak_bytes + rank}
    if a.planned:
        line["planned"] = a.planned
    say("cpprof-iter: " + json.dumps(line))
if cap and a.probe_sleep > 0:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(a.probe_sleep)
    say(f"fakework rank {rank}: the probe slept {a.probe_sleep:g} s")
say("cpfold: " + json.dumps({"rank": rank, "n": a.n, "median_iter_s": 0.5}))
