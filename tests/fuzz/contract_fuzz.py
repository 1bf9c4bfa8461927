#!/usr/bin/env python3
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Fuzzes input contracts (issue 39, Deliver 6): the real contract of the toy user model
(python/tests/toy_user_model/contract.json) damaged by a seeded program (values swapped for
extremes, other types, long or nested expressions; keys removed; inputs copied), then read by
cpprof_workload's load_contract, made into inputs by synthetic_inputs (within a memory cap) and
checked by validate_inputs. Anything but a ContractError or InputError, or a case that runs past
--case-timeout seconds, is a finding: the case is written to tests/fuzz/crashes/ and the run fails.

    tests/fuzz/contract_fuzz.py --runs 2000 --seed 1     # the CI budget (bench/fuzz.sh --ci)
    tests/fuzz/contract_fuzz.py --minutes 15             # a long run
"""
import argparse
import copy
import json
import os
import random
import signal
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))

import cpprof_workload as cw  # noqa: E402

SEED_CONTRACT = os.path.join(ROOT, "python", "tests", "toy_user_model", "contract.json")
EXTREMES = [0, -1, 1, 2 ** 31, 2 ** 62, 2 ** 63 - 1, 2 ** 63, -2 ** 63, 2 ** 64, 10 ** 30, 1e308, -0.0, True, None]
EXPRS = ["N_token*N_token", "N_token//0", "N_token-N_token", "(" * 200 + "1" + ")" * 200, "1" + "*N_token" * 40,
         "N_token**2", "__import__('os')", "N_atom", "a" * 300, "-N_token", "N_token*" * 100 + "1", "\udcff", ""]


def damaging_value(rng):
    pick = rng.randrange(6)
    if pick == 0:
        return rng.choice(EXTREMES)
    if pick == 1:
        return rng.choice(EXPRS)
    if pick == 2:
        return rng.randint(-2 ** 70, 2 ** 70)
    if pick == 3:
        return rng.choice([[], {}, [1, "N_token"], {"a": 1}, "float32", "one-hot", "atom_to_token"])
    if pick == 4:
        return "".join(chr(rng.randrange(1, 0x3000)) for _ in range(rng.randrange(0, 12)))
    return rng.random() * rng.choice([1, 1e9, -1])


def damage(doc, rng):
    """One value somewhere in `doc` replaced, removed or copied."""
    path = []
    at = doc
    for _ in range(rng.randrange(0, 5)):
        if isinstance(at, dict) and at:
            key = rng.choice(sorted(at))
        elif isinstance(at, list) and at:
            key = rng.randrange(len(at))
        else:
            break
        path.append((at, key))
        at = at[key]
    if not path:
        return damaging_value(rng) if rng.random() < 0.1 else doc
    parent, key = path[-1]
    op = rng.randrange(5)
    if op == 0:
        del parent[key]
    elif op == 1 and isinstance(parent, list):
        parent.extend(copy.deepcopy(parent[key]) for _ in range(rng.randrange(1, 20)))
    elif op == 2 and isinstance(parent, dict) and key == "dims":
        parent[key] = {f"d{i}": (f"d{i - 1}*d{i - 1}" if i else "N_token*N_token") for i in range(rng.randrange(1, 40))}
    else:
        parent[key] = damaging_value(rng)
    return doc


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def one_case(contract, rng):
    n_token = rng.choice([1, 4, 8, 16, 2 ** 20, 0, -3])
    try:
        batch = cw.synthetic_inputs(contract, n_token=n_token, seed=rng.randrange(100), max_bytes=64 << 20)
        cw.validate_inputs(batch, contract)
    except (cw.ContractError, cw.InputError):
        pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=0, help="cases to run (0: until --minutes)")
    ap.add_argument("--minutes", type=float, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--case-timeout", type=float, default=20, help="seconds one case may take before it is a hang")
    ap.add_argument("--crashes", default=os.path.join(HERE, "crashes"))
    args = ap.parse_args()
    with open(SEED_CONTRACT) as fh:
        seed_contract = json.load(fh)
    rng = random.Random(args.seed)
    signal.signal(signal.SIGALRM, _alarm)
    end = time.monotonic() + args.minutes * 60 if args.minutes else None
    runs = 0
    while (args.runs and runs < args.runs) or (end and time.monotonic() < end):
        contract = copy.deepcopy(seed_contract)
        for _ in range(rng.randrange(1, 5)):
            contract = damage(contract, rng)
        case_rng = random.Random(rng.random())
        signal.setitimer(signal.ITIMER_REAL, args.case_timeout)
        try:
            one_case(contract, case_rng)
        except Exception as exc:  # noqa: BLE001: every other exception is a finding
            signal.setitimer(signal.ITIMER_REAL, 0)
            os.makedirs(args.crashes, exist_ok=True)
            path = os.path.join(args.crashes, f"contract-{args.seed}-{runs}.json")
            with open(path, "w") as fh:
                json.dump(contract, fh, default=repr)
            what = "a hang" if isinstance(exc, Hang) else traceback.format_exc()
            print(f"contract_fuzz: case {runs} (seed {args.seed}): {what}\n  kept as {path}", file=sys.stderr)
            return 1
        signal.setitimer(signal.ITIMER_REAL, 0)
        runs += 1
    print(f"contract_fuzz: {runs} cases from seed {args.seed}, no finding")
    return 0


if __name__ == "__main__":
    sys.exit(main())
