# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Run a workload under torchrun without torchrun parsing the workload's arguments.

torchrun's parser takes abbreviations of its own options: ``torchrun ... -m pkg.entry --n 512``
fails with "ambiguous option: --n could match --nnodes, --nproc_per_node, ...". cpprof profile
launches instead::

    torchrun [torchrun options] launch_workload.py -- (-m MODULE | SCRIPT) ARGS...

For torchrun's parser everything after that ``--`` is positional, so ARGS reach the workload
exactly as given. Some argparse versions pass the ``--`` on, others drop it: both are accepted.
The workload runs as ``__main__`` as with ``python -m MODULE`` / ``python SCRIPT``.
"""
import os
import runpy
import sys


def main(argv):
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv or (argv[0] == "-m" and len(argv) < 2):
        sys.stderr.write("launch_workload.py: usage: launch_workload.py -- (-m MODULE | SCRIPT) ARGS...\n")
        return 2
    if argv[0] == "-m":
        module, rest = argv[1], argv[2:]
        sys.argv = [module] + rest
        sys.path[0] = os.getcwd()  # as `python -m` does
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        script, rest = argv[0], argv[1:]
        sys.argv = [script] + rest
        sys.path[0] = os.path.dirname(os.path.abspath(script))  # as `python SCRIPT` does
        runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
