"""The pilot of a sweep (stsq.cluster.pilot): every shape of the sweep for a few steps of one seed, into its own
folder, timed; and what that says about the real sweep's cost, computed from the measurements."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import yaml
from helpers import TINY, copy_workflow, snakemake
from stsq.cluster import pilot as pl
from stsq.core.experiment import Layout, cell
from stsq.report.pages import drawn_figures


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _bench(path, seconds, mb=300.0):
    _write(path, "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
                 f"{seconds}\t0:00:01\t{mb}\t0\t0\t0\t0\t0\t90\t{seconds * 0.9}\n")


SWEEP = {"d": 4, "N": [8], "q": [2], "seeds": [0, 1], "eval_length_factors": [1, 2], "n_eval": 256,
         "batch_size": 32, "log_every": 100, "checkpoint_every": 400, "query": "sum",
         "archs": {"fcn": {"widths": [16], "steps": [1000, 2000], "lr": 0.001}}}


def test_the_pilot_keeps_every_shape_and_takes_a_few_steps_of_one_seed():
    p = pl.pilot_sweep(SWEEP)
    assert p["seeds"] == [0] and p["n_eval"] == pl.PILOT_N_EVAL and p["archs"]["fcn"]["steps"] == pl.PILOT_STEPS
    assert p["N"] == SWEEP["N"] and p["eval_length_factors"] == SWEEP["eval_length_factors"]
    assert p["archs"]["fcn"]["widths"] == [16] and SWEEP["archs"]["fcn"]["steps"] == [1000, 2000]  # a copy


def test_a_training_cell_is_extrapolated_from_its_own_timing_to_every_budget_and_seed(tmp_path):
    """The pilot's training job of (q, N, d) = (2, 8, 4) took 5.0 s, its one cell 3.2 s of it: a job's start
    is 1.8 s. The cell's loop took 3.0 s, of which scoring 0.6 s (N and N' = 16: 24 positions) and the first
    step 0.3 s; the rest, 0.2 s, is building, data and saving. The real cell: two budgets of two seeds, the
    test set scored every 100 steps, N' every 400, at 256 / PILOT_N_EVAL times the samples."""
    paths = Layout("s" + pl.PILOT_SUFFIX)
    job = cell(arch="fcn", q=2, N=8, d=4, steps=pl.PILOT_STEPS, width=16)
    _bench(tmp_path / paths.benchmark("train", "q~2_N~8_d~4"), 5.0)
    _write(tmp_path / paths.pilot_training(2, 8, 4),
           ",".join(pl.PILOT_TRAIN_COLUMNS)
           + f"\n{job},fcn,16,cpu,3.2,3.0,0.6,0.3,{pl.PILOT_STEPS},24,300.0,400,0,0,0,0\n")
    rows, start = pl.pilot_rows(SWEEP, "s", tmp_path, max_runtime_min=1.0)
    train = [r for r in rows if r["rule"] == "train"]
    assert len(train) == 1 and train[0]["real_jobs"] == 2 and start == pytest.approx(1.8)
    assert train[0]["measured_s"] == 3.2 and train[0]["measured_mb"] == 300.0
    per_step = (3.0 - 0.6 - 0.3) / (pl.PILOT_STEPS - 1)
    per_position, n_ratio = 0.6 / 24, 256 / pl.PILOT_N_EVAL
    expected = sum(1.8 + 2 * (0.2 + 0.3 + per_step * (s - 1)
                              + n_ratio * per_position * (math.ceil(s / 100) * 8 + math.ceil(s / 400) * 16))
                   for s in (1000, 2000))
    assert train[0]["extrapolated_s"] == pytest.approx(expected)
    assert train[0]["attempts_needed"] == math.ceil(expected / 60 / 1.0)  # at a 1-minute partition limit
    # the jobs that did not run are rows without a measurement, and the summary says so
    assert all(math.isnan(r["measured_s"]) for r in rows if r["rule"] != "train")
    text = pl.summary(rows, start, "s", 1.0, retries=0)
    assert "not measured" in text and "1 cells will not fit" in text and "(CPU-hours)" in text
    # training on a GPU is extrapolated in GPU-hours, and the pilot says so
    for r in train:
        r["device"] = "cuda"
    assert "training in GPU-hours on cuda, the other jobs in CPU-hours" in pl.summary(rows, start, "s", None, 0)


def test_a_jobs_start_leaves_out_the_time_its_cells_steps_were_timed_alone(tmp_path):
    """The same job took 9.0 s: its cell 3.2 s, then its step timed alone for 4.0 s (3.1 s of steps after building
    the model and its warm-up). A job's start is still 1.8 s, not 5.8: a pilot that counted the timing as start
    would extrapolate every job that is not training from nearly nothing beyond it, and add it to every real job.
    A pilot table written before ``timing_s`` existed leaves out its timed steps."""
    paths = Layout("s" + pl.PILOT_SUFFIX)
    job = cell(arch="fcn", q=2, N=8, d=4, steps=pl.PILOT_STEPS, width=16)
    _bench(tmp_path / paths.benchmark("train", "q~2_N~8_d~4"), 9.0)
    table = tmp_path / paths.pilot_training(2, 8, 4)
    _write(table, ",".join(pl.PILOT_TRAIN_COLUMNS)
           + f"\n{job},fcn,16,cpu,3.2,3.0,0.6,0.3,{pl.PILOT_STEPS},24,300.0,400,40,3.1,3.0,4.0\n")
    assert pl.pilot_rows(SWEEP, "s", tmp_path)[1] == pytest.approx(1.8)
    _write(table, ",".join(pl.PILOT_TRAIN_COLUMNS[:-1])
           + f"\n{job},fcn,16,cpu,3.2,3.0,0.6,0.3,{pl.PILOT_STEPS},24,300.0,400,40,3.1,3.0\n")
    assert pl.pilot_rows(SWEEP, "s", tmp_path)[1] == pytest.approx(2.7)


def test_the_pilot_trains_a_q_n_d_smallest_first():
    """So that the process's peak memory after a cell is that cell's own peak or a smaller cell's."""
    sweep = {**SWEEP, "archs": {"fcn": {"widths": [64, 16, 32], "steps": 100, "lr": 0.001},
                                "tf_fixed": {"widths": [8], "steps": 100, "lr": 0.01}}}
    from stsq.cluster.cost import estimated_memory_mb
    order = pl.pilot_cells(pl.pilot_sweep(sweep), 2, 8, 4)
    assert sorted(r.width for r in order if r.arch == "fcn") == [16, 32, 64] and len(order) == 4
    assert all((r.q, r.N, r.d, r.steps) == (2, 8, 4, pl.PILOT_STEPS) for r in order)  # the records, resolved
    mbs = [estimated_memory_mb(sweep, r) for r in order]
    assert mbs == sorted(mbs)


@pytest.mark.slow
def test_the_pilot_of_a_sweep_runs_every_job_into_its_own_folder_and_tables_them(tmp_path):
    work = copy_workflow(tmp_path / "wf")
    sweep = yaml.safe_load(TINY.read_text())["sweeps"]["tiny"]
    r = snakemake(work, "--cores", "2", "--configfile", TINY, "--config", "pilot=true")
    assert "hours extrapolated from the pilot (CPU-hours)" in r.stdout + r.stderr
    assert not (work / "results" / "tiny").exists()  # the real sweep's folder is untouched
    out = work / "results" / "tiny_pilot"
    table = pd.read_csv(out / "tables" / "pilot.csv")
    assert list(table.columns) == pl.PILOT_COLUMNS
    n_cells = sum(len(a["widths"]) for a in sweep["archs"].values())
    # the tidy table, critical widths, encodings and reach tables, claims, the report's front page, each figure
    # the sweep draws
    drawn = drawn_figures(sweep)
    analysis = 6 + len(drawn)
    assert table["rule"].value_counts().to_dict() == {"train": n_cells, "evaluate": 1, "eval_sets": 1, "oracle": 1,
                                                      "analysis": analysis}
    assert (table["measured_s"] > 0).all()
    assert (table[table["rule"] != "analysis"]["measured_mb"] > 0).all()
    # one training process for the (q, N, d), each cell timed in it
    timing = pd.read_csv(out / "pilot" / "train_q~2_N~8_d~4.csv")
    assert len(timing) == n_cells and (timing["loop_s"] > timing["scoring_s"]).all()
    assert (timing["seconds"] >= timing["loop_s"]).all() and (timing["steps"] == pl.PILOT_STEPS).all()
    assert (table["extrapolated_s"] > 0).all() and table["extrapolated_s"].notna().all()
    # every shape: the evaluation at every N' of every transformer, the FCN's beyond N not applicable
    metrics = pd.read_csv(out / "tables" / "metrics.csv")
    ev = metrics[(metrics["split"] == "eval") & (metrics["metric"] == "normalized_loss")]
    assert sorted(ev["N_eval"].unique()) == [8 * f for f in sweep["eval_length_factors"]]
    assert set(metrics["seed"]) == {sweep["seeds"][0]} and set(metrics["steps"]) == {pl.PILOT_STEPS}
    assert (out / "tables" / "claims.csv").exists() and all((out / "figures" / f"{n}.png").exists() for n in drawn)


def test_a_long_cells_step_is_timed_alone_for_its_budget_and_extrapolated_from_that():
    """Where the real job is long, the pilot's pace is that of the step timed alone, in CPU time (timed_cpu_s /
    timed_steps: the wall time waited for a shared core is not the job's), not of its 10 steps; cells of one cost
    shape (differing only in q) are reported with their spread."""
    from stsq.core import sweep as sw
    from stsq.core.experiment import CellRecord
    real = {**SWEEP, "q": [1, 2], "archs": {"fcn": {"widths": [16], "steps": 10**6, "lr": 0.001}}}
    pilot = pl.pilot_sweep(real)
    records = sw.cell_records(pilot)
    assert all(pl.step_budget_s(real, r) == pl.PILOT_BUDGET_S for r in records)  # 10^6 steps: long
    short = {**real, "archs": {"fcn": {"widths": [16], "steps": 100, "lr": 0.001}}}
    assert all(pl.step_budget_s(short, r) == 0 for r in sw.cell_records(pl.pilot_sweep(short)))
    rows = []
    for r, per_step in zip(records, (0.010, 0.013)):
        t = {"seconds": 3.2, "loop_s": 3.0, "scoring_s": 0.6, "first_step_s": 0.3, "steps": pl.PILOT_STEPS,
             "scored_length": 8, "peak_mb": 300.0, "device": "cpu", "timed_steps": 200, "timed_s": 3 * 200 * per_step,
             "timed_cpu_s": 200 * per_step}
        rows += pl._train_rows(real, pilot, {r.path: t}, 1.0, None)
    rows = [x for x in rows if not math.isnan(x["extrapolated_s"])]
    assert len(rows) == 2
    ext = sorted(x["extrapolated_s"] for x in rows)
    assert ext[1] - ext[0] == pytest.approx(2 * 0.003 * (10**6 - 1))  # two seeds, the steps at the timed pace
    (shape, lo, hi, n), = pl.shape_spreads(rows)
    assert n == 2 and "q~" not in shape and hi / lo == pytest.approx(ext[1] / ext[0])
    assert f"({hi / lo:.2f}x)" in pl.summary(rows, 1.0, "s", None, 0)
    # the timing itself: at least PILOT_STEPS steps, and at least the budget
    rec = CellRecord.from_dict({**records[0].to_dict(), "width": 8})
    steps, seconds, cpu = pl.time_steps(rec, 0, 0.2)
    assert steps >= pl.PILOT_STEPS and cpu >= 0.2 and seconds > 0
