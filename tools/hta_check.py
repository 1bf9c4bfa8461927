#!/usr/bin/env python3
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Runs Holistic Trace Analysis on a folder of Kineto traces (`cpprof export --format kineto -o DIR`)
exactly as a user would (`TraceAnalysis(trace_dir=DIR)`), then each analysis docs/kineto.md lists,
and prints what each one found (or its error), one line each, then a JSON summary.

    tools/hta_check.py --hta /path/to/HolisticTraceAnalysis DIR

HTA is not vendored: give a checkout (git clone, or `git archive v0.5.0 hta | tar -x`). It needs
pandas, numpy, networkx and plotly (Debian: python3-pandas python3-numpy python3-networkx
python3-plotly). Not part of the test suite: the machines it runs on have no HTA.
"""
import argparse
import json
import logging
import sys
import traceback


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hta", required=True, help="an HTA checkout (the folder that holds hta/)")
    ap.add_argument("trace_dir", help="the folder of rank*.json written by cpprof export --format kineto")
    ap.add_argument("--json", help="also write the summary to this file")
    ap.add_argument("--include-last-step", action="store_true",
                    help="TraceAnalysis(include_last_profiler_step=True): keep the last ProfilerStep (HTA drops it by "
                    "default), so that the analyses cover the readout's window")
    args = ap.parse_args()
    sys.path.insert(0, args.hta)
    from hta.configs.config import logger  # noqa: E402
    from hta.trace_analysis import TraceAnalysis  # noqa: E402

    logger.setLevel(logging.ERROR)
    summary = {}
    analyzer = TraceAnalysis(trace_dir=args.trace_dir, include_last_profiler_step=args.include_last_step)
    ranks = sorted(analyzer.t.traces.keys())
    summary["ranks"] = ranks
    print(f"ranks loaded: {ranks}")

    def run(name, fn):
        try:
            value = fn()
            summary[name] = {"ok": True, "value": value}
            print(f"OK    {name}: {value}")
        except Exception as e:  # report every analysis, whatever breaks
            summary[name] = {"ok": False, "error": f"{type(e).__name__}: {e}"}
            print(f"ERROR {name}: {type(e).__name__}: {e}")
            traceback.print_exc(limit=3, file=sys.stderr)

    def frame(df):
        return None if df is None else json.loads(df.to_json(orient="records"))

    def per_rank(d):
        return {int(r): (None if df is None else len(df)) for r, df in d.items()}

    run("profiler_steps", lambda: [int(s) for s in analyzer.get_profiler_steps()])
    run("temporal_breakdown", lambda: frame(analyzer.get_temporal_breakdown(visualize=False)))
    run("comm_comp_overlap", lambda: frame(analyzer.get_comm_comp_overlap(visualize=False)))

    def kernels():
        by_type, by_kernel = analyzer.get_gpu_kernel_breakdown(visualize=False)
        return {"by_type": frame(by_type), "kernels": len(by_kernel)}

    run("gpu_kernel_breakdown", kernels)

    def idle():
        out = analyzer.get_idle_time_breakdown(ranks=ranks, visualize=False)
        df = out[0] if isinstance(out, tuple) else out
        return frame(df)

    run("idle_time_breakdown", idle)
    run("cuda_kernel_launch_stats", lambda: per_rank(analyzer.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False)))
    run("queue_length_summary", lambda: len(analyzer.get_queue_length_summary(ranks=ranks)))
    def blocked():
        df = analyzer.get_time_spent_blocked_on_full_queue(analyzer.get_queue_length_time_series(ranks=ranks))
        return None if df is None else len(df)

    run("time_blocked_on_full_queue", blocked)
    run("memory_bw_summary", lambda: frame(analyzer.get_memory_bw_summary(ranks=ranks)))
    run("gpu_user_annotation_breakdown",
        lambda: len(analyzer.get_gpu_user_annotation_breakdown(visualize=False)))
    run("gpu_kernels_with_user_annotations",
        lambda: int((analyzer.get_gpu_kernels_with_user_annotations(rank=ranks[0])["user_annotation"] >= 0).sum()))
    run("potential_stragglers", lambda: [int(r) for r in analyzer.get_potential_stragglers(num_candidates=1)])

    def critical_path():
        _, ok = analyzer.critical_path_analysis(rank=ranks[0], annotation="ProfilerStep", instance_id=0)
        return bool(ok)

    run("critical_path_analysis", critical_path)

    def trace_diff():  # the folder against itself, GPU kernels of the first step
        from hta.trace_diff import DeviceType, LabeledTrace, TraceDiff

        a = LabeledTrace(label="a", trace_dir=args.trace_dir)
        b = LabeledTrace(label="b", trace_dir=args.trace_dir)
        return len(TraceDiff.compare_traces(a, b, device_type=DeviceType.GPU))

    run("trace_diff", trace_diff)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1, default=str)
    return 0 if all(v.get("ok", True) for v in summary.values() if isinstance(v, dict)) else 1


if __name__ == "__main__":
    sys.exit(main())
