"""`make bench` (benchmarks/bench.py) runs: its parts finish on small sizes and return what they
print.  The numbers themselves come from `make bench`, never from a test; these check that the
benchmark measures what it says (same loss as the reference, phases that add up, every cell timed)."""

import sys

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import bench  # noqa: E402
from stsq.cluster import cost  # noqa: E402
from stsq.core import experiment as ex  # noqa: E402

TINY_SWEEP = {"d": 4, "batch_size": 8, "N": [6, 8], "q": [1, 2], "seeds": [0, 1],
              "archs": {"tf_stochastic": {"widths": [8], "steps": 10, "lr": 0.01},
                        "tf_fixed": {"widths": [8], "steps": 10, "lr": 0.01},
                        "fcn": {"widths": [16], "steps": 10, "lr": 0.001}}}


def test_the_benchmark_uses_the_cpu_sweep_of_config_yaml():
    cpu = bench.sweep_config("cpu")
    assert bench.CPU["N"] == max(cpu["N"]) and bench.CPU["batch_size"] == cpu["batch_size"]
    assert bench.CPU["d"] == max(cpu["d"])
    # the widest cell of each arch; the FCN's widths are multiples of N d
    fcn = cpu["archs"]["fcn"]["widths"]
    assert fcn["relative_to"] == "N d"
    assert bench.WIDTH == {"tf_stochastic": max(cpu["archs"]["tf_stochastic"]["widths"]),
                           "tf_fixed": max(cpu["archs"]["tf_fixed"]["widths"]),
                           "fcn": round(max(fcn["factors"]) * max(cpu["N"]) * max(cpu["d"]))}
    assert all(bench._lr(a) == cpu["archs"][a]["lr"] for a in bench.ARCHS)


def test_reference_and_ours_reach_the_same_loss():
    # bench_reference asserts the losses agree within LOSS_TOLERANCE: a wrong step fails it
    ratios = bench.bench_reference(repeats=1, steps=30)
    assert set(ratios) == set(bench.ARCHS) and all(r > 0 for r in ratios.values())


def test_a_broken_step_makes_the_reference_comparison_fail(monkeypatch):
    def drifting(arch, width, steps, **kw):
        t, losses = ours(arch, width, steps, **kw)
        return t, [v + 1e-3 for v in losses]

    ours = bench.our_steps
    monkeypatch.setattr(bench, "our_steps", drifting)
    with pytest.raises(AssertionError, match="disagree"):
        bench.bench_reference(repeats=1, steps=5)


def test_the_profile_times_every_phase_of_both_steps():
    prof = bench.bench_profile(repeats=1, steps=20)
    assert set(prof) == {(a, "after") for a in bench.ARCHS} | {(a, "before") for a in ("tf_stochastic", "tf_fixed")}
    for phases in prof.values():
        assert all(phases[k] > 0 for k in ("xy", "fwd", "bwd", "opt"))
        # the ratio is measured (its size is make bench's to report: a timing here fails under load)
        assert 0 < phases["step/draws"] < float("inf")


def test_gpu_part_runs_on_any_device_and_times_every_cell():
    out = bench.bench_gpu(steps=4, device="cpu", sweep=TINY_SWEEP, S=2)
    assert out["cells"] == 12 and out["seeds"] == 2  # 3 archs x 2 q x 2 N x 1 width
    assert 0 < out["gpu_hours"] < 1


def test_part_p_times_every_encodings_step_beside_tf_fixeds_in_one_run():
    out = bench.bench_encodings(repeats=1, steps=10)
    transformers = {a for a, r in ex.ARCHS.items() if r.transformer and not r.positional_only and r.task == "sts"}
    assert set(out) == transformers and out["tf_fixed"][1] == 1.0
    assert all(ms > 0 and ratio > 0 for ms, ratio in out.values())


def test_the_fcn_rate_threads_and_cost_parts_time_the_sweeps_largest_cells():
    """Parts f, t and k on a tiny sweep: the FCN's largest shapes against their floor, its largest cells at every
    thread count, and the estimate beside a direct timing of its most expensive cells."""
    sweep = {**TINY_SWEEP, "n_eval": 16, "eval_length_factors": [1, 2], "log_every": 5, "checkpoint_every": 5}
    rates = bench.bench_fcn_rate(repeats=1, steps=2, sweep=sweep)
    assert len(rates) == 2 and all(o > 0 and r > 0 and 0 < f for o, r, f in rates.values())  # N = 6, 8
    parts = bench.fcn_breakdown(steps=2, sweep=sweep)
    assert list(parts) == list(rates) and all(
        set(ms) == {"data", "forward", "backward", "update", "forward mm", "backward mm", "fused Adam"}
        and min(ms.values()) > 0 for ms in parts.values())
    threads = bench.bench_threads(steps=2, sweep=sweep, n=1)
    assert len(threads) == 2 and all(len(ms) == bench.os.cpu_count() for ms in threads.values())
    cost = bench.bench_cost(sweep=sweep, n=3)
    top = [r.path for _, r in bench._cells_by_cost(sweep)[:3]]
    assert list(cost) == top and all(e > 0 and d > 0 for e, d in cost.values())


def test_the_cost_fit_recovers_the_constants_of_a_step_linear_in_its_units(monkeypatch):
    """Part s: where an arch's step takes exactly a x units + w x weight units + b, the fit returns a (ns per unit)
    and b (s) with the family's w held, and all three with ``weights``, from every distinct shape of the sweep
    (q does not change a step's work); a time off the line moves them."""
    sweep = {**TINY_SWEEP, "n_eval": 16, "eval_length_factors": [1, 2], "log_every": 5, "checkpoint_every": 5,
             "archs": {**TINY_SWEEP["archs"], "tf_stochastic": {"widths": [8, 32, 128], "steps": 10,
                                                                               "lr": 0.01}}}
    fam, timed = ex.family("tf_stochastic"), []
    held_w = cost.weight_rate(fam)

    def linear(arch, width, steps, sizes, w=held_w, extra=0.0):
        B, N, d = sizes["batch_size"], sizes["N"], sizes["d"]
        timed.append((N, width))
        return (7.5 * fam.step_units(B, N, d, width, 1) + w * fam.weight_units(B, N, d, width, 1)) * 1e-9 \
            + 0.4e-3 + extra * (width == 32), []

    monkeypatch.setattr(bench, "our_steps", lambda arch, width, steps, sizes: linear(arch, width, steps, sizes))
    ns, wns, overhead = bench.fit_step_cost("tf_stochastic", sweep=sweep, min_s=0)
    assert ns == pytest.approx(7.5, rel=1e-6) and overhead == pytest.approx(0.4e-3, rel=1e-6)
    assert wns == cost.weight_rate(fam) > 0
    assert set(timed) == {(N, w) for N in (6, 8) for w in (8, 32, 128)}
    monkeypatch.setattr(bench, "our_steps", lambda arch, width, steps, sizes: linear(arch, width, steps, sizes, 0.3))
    assert bench.fit_step_cost("tf_stochastic", sweep=sweep, min_s=0, weights=True) == pytest.approx((7.5, 0.3, 4e-4),
                                                                                                   rel=1e-6)
    monkeypatch.setattr(bench, "our_steps", lambda arch, width, steps, sizes: linear(arch, width, steps, sizes,
                                                                                     extra=1e-3))
    assert bench.fit_step_cost("tf_stochastic", sweep=sweep, min_s=0)[0] != pytest.approx(7.5, rel=0.05)
