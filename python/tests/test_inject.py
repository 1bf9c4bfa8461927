"""Fault injection in cpfold.run (--inject-delay / --inject-slow): the delay lands on the named
rank only, once per p2p batch (the comm counters' count), MATCH filters by tag, the wall time
grows by delays x MS, the slowdown repeats the TriMul GEMMs, bad flags are argparse errors.
CPU + gloo, 2 ranks, tiny preset (one Pairformer block, no recycling): three short launches."""

import pytest

from conftest import parse_prefixed
from cpfold import expect
from cpfold.cp import cannon
from cpfold.local_ranks import launch
from cpfold.run import P2P_TAGS, build_parser, main, parse_inject_delay, parse_inject_slow

WARMUP, ITERS = 1, 3
BASE = ["--mode", "trunk", "--n-token", "16", "--cp0", "1", "--cp1", "2", "--preset", "tiny",
        "--recycles", "0", "--blocks", "1", "--msa-depth", "4", "--iters", str(ITERS),
        "--warmup", str(WARMUP)]
MS = 30.0
_RUNS = {}


def _run(*extra):
    """Launch cpfold.run on 2 ranks (cached per flag set); return (rank-0 result, inject lines)."""
    if extra not in _RUNS:
        r = launch("cpfold.run", BASE + list(extra), 2, timeout=180)
        assert r.ok, r.logs
        inject = [parse_prefixed(log, "cpfold-inject: ") for log in r.logs]
        assert [i["rank"] for i in inject] == [0, 1]
        assert r.logs[0].strip().splitlines()[-1].startswith("cpfold: ")   # still the last line
        _RUNS[extra] = (parse_prefixed(r.logs[0], "cpfold: "), inject)
    return _RUNS[extra]


def _p2p_batches(counts, match=None):
    return sum(ops.get("p2p_batch", 0) for tag, ops in counts.items() if match is None or match in tag)


def test_delay_only_on_named_rank_once_per_p2p_batch():
    res, inj = _run("--inject-delay", f"1:{MS:g}")
    r0, r1 = inj
    assert r0["delays_total"] == 0 and r0["delay_ms"] == 0 and r0["delay_rank"] == 1
    assert r1["delay_ms"] == MS and r1["match"] is None and r1["slow_factor"] == 1
    # one delay per posted p2p batch, in warm-up and timed iterations alike
    assert r1["delays_per_iter"] == r1["p2p_batches_per_iter"]
    assert len(r1["delays_per_iter"]) == WARMUP + ITERS
    assert r1["delays_total"] == sum(r1["delays_per_iter"]) == r1["p2p_batches_total"]
    assert r1["delays_timed"] == sum(r1["delays_per_iter"][WARMUP:])
    # cpfold's comm counters (rank 0, first timed iteration; the 1 x 2 schedule is symmetric)
    # and the expect.json oracle for rank 1 agree with the count
    per_iter = _p2p_batches(res["comm_counts_rank0"])
    want = _p2p_batches(expect.expected_counts("trunk", 1, 2, 1, passes=1, pairformer_blocks=1,
                                               msa_blocks=1, confidence_blocks=0, samples=0,
                                               diffusion_steps=0))
    assert per_iter == want == 8          # 2 pair stacks x (TriMul 1 + 1, TriAtt start 2)
    assert r1["delays_per_iter"] == [per_iter] * (WARMUP + ITERS)
    assert r1["delays_timed"] == ITERS * per_iter


def test_delay_makes_the_iterations_longer_by_delays_times_ms():
    base, _ = _run()
    slow, inj = _run("--inject-delay", f"1:{MS:g}")
    per_iter = inj[1]["delays_timed"] / ITERS
    expected = per_iter * MS / 1000.0                 # 8 x 30 ms = 0.24 s per iteration
    # The late rank's sleep first uses up the time it used to wait for its peer at each of the 8
    # points (a few ms each on a busy 2-core CI machine, where the two ranks share the cores with
    # other work): the iteration grows by the delays less that slack. 0.75 x leaves 60 ms of it
    # over 8 points and still fails by far if the delay were not injected (growth ~0).
    for rank in (0, 1):                               # rank 0 waits for the late rank 1
        b = min(base["per_rank"][rank]["iter_wall_s"])
        s = min(slow["per_rank"][rank]["iter_wall_s"])
        grew = s - b
        assert grew >= 0.75 * expected, (rank, b, s, expected)
        assert grew <= expected + max(0.25, 2 * b), (rank, b, s, expected)


def test_delay_match_filters_by_tag():
    res, inj = _run("--inject-delay", "0:1:TriangleMultiplication", "--inject-slow", "1:3")
    r0, r1 = inj
    assert r0["match"] == "TriangleMultiplication" and r1["delays_total"] == 0
    trimul = _p2p_batches(res["comm_counts_rank0"], "TriangleMultiplication")
    assert trimul == 4 and _p2p_batches(res["comm_counts_rank0"]) == 8
    assert r0["delays_per_iter"] == [trimul] * (WARMUP + ITERS)
    assert r0["delays_timed"] == ITERS * trimul
    assert r0["p2p_batches_timed"] == ITERS * 8


def test_slow_repeats_the_trimul_gemms_on_the_named_rank():
    _, inj = _run("--inject-delay", "0:1:TriangleMultiplication", "--inject-slow", "1:3")
    r0, r1 = inj
    assert r0["slow_factor"] == 1 and r0["slow_extra_gemms_total"] == 0 and r0["slow_rank"] == 1
    # per iteration: 4 distributed TriMul products (2 pair stacks x out/in), each a 2-step ring
    # of one GEMM per step, run 3 times: 2 extra GEMMs each
    assert r1["slow_factor"] == 3
    assert r1["slow_extra_gemms_timed"] == ITERS * 4 * 2 * 2
    assert r1["slow_extra_gemms_total"] == (WARMUP + ITERS) * 4 * 2 * 2


def test_slow_gemm_repeats_and_keeps_the_result():
    import torch
    calls = []

    def fn(a, b):
        calls.append(1)
        return a @ b
    a, b = torch.randn(2, 3, 4), torch.randn(2, 4, 5)
    try:
        cannon.set_slow_factor(3)
        out = cannon._gemm(fn, a, b)
        assert len(calls) == 3 and cannon.SLOW.extra == 2
        assert torch.equal(out, a @ b)
        assert torch.equal(cannon.local_matmul(a, b.transpose(1, 2), False, True), a @ b)
    finally:
        cannon.set_slow_factor(1)
    with pytest.raises(ValueError):
        cannon.set_slow_factor(0)


def test_inject_no_flags_prints_zero_line():
    _, inj = _run()
    for i in inj:
        assert i["delay_rank"] is None and i["delays_total"] == 0 and i["slow_extra_gemms_total"] == 0
        assert i["p2p_batches_per_iter"] == [8] * (WARMUP + ITERS)


def test_inject_flag_values_parse():
    assert parse_inject_delay("1:2") == dict(rank=1, ms=2.0, match=None)
    assert parse_inject_delay("0:0.5:TriangleMultiplicationOutgoing") == dict(
        rank=0, ms=0.5, match="TriangleMultiplicationOutgoing")
    assert parse_inject_delay("3:2:a:b") == dict(rank=3, ms=2.0, match="a:b")
    assert parse_inject_slow("1:3") == dict(rank=1, factor=3)
    a = build_parser().parse_args(["--inject-delay", "1:2", "--inject-slow", "0:2"])
    assert a.inject_delay["rank"] == 1 and a.inject_slow["factor"] == 2
    assert all(t.startswith(("TriangleMultiplication", "TriangleAttention")) for t in P2P_TAGS)


@pytest.mark.parametrize("flags,message", [
    (["--inject-delay", "2:5"], "rank 2 is out of range for the 1x2 grid"),
    (["--inject-slow", "5:2"], "rank 5 is out of range for the 1x2 grid"),
    (["--inject-delay", "1:-3"], "MS must be a finite number >= 0"),
    (["--inject-delay", "1:abc"], "MS must be a number"),
    (["--inject-delay", "1"], "expected RANK:MS[:MATCH]"),
    (["--inject-delay", "x:1"], "RANK must be an integer"),
    (["--inject-delay", "1:2:"], "MATCH is empty"),
    (["--inject-slow", "1:0"], "FACTOR must be an integer >= 1"),
    (["--inject-slow", "1:1.5"], "FACTOR must be an integer >= 1"),
    (["--inject-slow", "1"], "expected RANK:FACTOR"),
], ids=["delay-rank", "slow-rank", "neg-ms", "ms-nan", "no-ms", "bad-rank", "empty-match",
        "factor0", "factor-float", "no-factor"])
def test_inject_bad_syntax_is_an_argparse_error(flags, message, capsys):
    with pytest.raises(SystemExit) as e:
        main(["--cp0", "1", "--cp1", "2"] + flags)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "error:" in err and message in err, err



ONE_GPU = ["--mode", "trunk", "--n-token", "16", "--preset", "tiny", "--recycles", "0", "--blocks", "1",
           "--msa-depth", "4", "--iters", "1", "--warmup", "1"]


def test_inject_slow_reaches_the_one_gpu_path():
    """1 x 1: the unsharded TriMul product is one local GEMM, repeated FACTOR times as well."""
    r = launch("cpfold.run", ONE_GPU + ["--inject-slow", "0:3"], 1, timeout=180)
    assert r.ok, r.logs
    inj = parse_prefixed(r.logs[0], "cpfold-inject: ")
    assert inj["slow_factor"] == 3 and inj["slow_extra_gemms_timed"] > 0


def test_cuda_graph_needs_one_gpu_and_says_why_not_without_cuda(capsys):
    with pytest.raises(SystemExit):
        main(BASE + ["--cuda-graph"])          # 1 x 2: refused before anything runs
    assert "--cuda-graph needs one GPU" in capsys.readouterr().err
    r = launch("cpfold.run", ONE_GPU + ["--cuda-graph"], 1, timeout=180)
    assert r.ok, r.logs
    assert parse_prefixed(r.logs[0], "cpfold-graph: ") == {"captured": False, "why": "no CUDA"}
