"""A fake workload for cpprof profile's tests: prints its arguments, can hang or crash a rank."""
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
a = p.parse_args()
rank = int(os.environ.get("RANK", "0"))
if a.pid_dir:
    with open(os.path.join(a.pid_dir, f"rank{rank}.pid"), "w") as f:
        f.write(str(os.getpid()))
print(f"fakework rank {rank}: argv={json.dumps(sys.argv[1:])}", flush=True)
if rank == a.crash_rank:
    sys.stderr.write(f"fakework rank {rank}: RuntimeError: boom\n")
    sys.exit(1)
if a.hang:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(3600)
print("cpfold: " + json.dumps({"rank": rank, "n": a.n, "median_iter_s": 0.5}), flush=True)
