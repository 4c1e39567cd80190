"""`make bench` runs: its parts finish on small sizes and print what the README quotes (a smoke test;
the numbers themselves come from `make bench`, never from a test)."""

from stsq import bench

TINY_SWEEP = {"d": 4, "batch_size": 8, "N": [6, 8], "q": [1, 2], "seeds": [0, 1],
              "archs": {"tf_stochastic": {"widths": [8], "steps": 10, "lr": 0.01},
                        "tf_fixed": {"widths": [8], "steps": 10, "lr": 0.01},
                        "fcn": {"widths": [16], "steps": 10, "lr": 0.001}}}


def test_reference_and_ours_reach_the_same_loss_and_the_profile_runs(capsys):
    ratios = bench.bench_reference(repeats=1, steps=30)
    bench.bench_profile(repeats=1, steps=30)
    out = capsys.readouterr().out
    assert set(ratios) == {"tf_stochastic", "tf_fixed", "fcn"} and all(r > 0 for r in ratios.values())
    assert "step/draws" in out and "before" in out and "after" in out


def test_gpu_part_runs_on_any_device_and_prints_the_gpu_hours(capsys):
    bench.bench_gpu(steps=4, device="cpu", sweep=TINY_SWEEP, S=2)
    out = capsys.readouterr().out
    assert "GPU-hours" in out and "12 cells x 2 seeds" in out  # 3 archs x 2 q x 2 N x 1 width
