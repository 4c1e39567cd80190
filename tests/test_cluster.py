"""What a cluster job asks for: runtime and memory from its own estimate (stsq.cluster.cost, stsq.cluster.requests),
growing with the
attempt, capped at the longest partition of the profile's Slurm partition file, and a training cell that no
number of allowed attempts can finish refused before anything is submitted (docs/cluster.md)."""

from __future__ import annotations

import math
import os
import re

import pytest
from helpers import ROOT, TINY, copy_workflow, snakemake, validated_config, venv_at
from stsq.cluster import cost
from stsq.cluster import requests as cluster
from stsq.core import sweep as sw
from stsq.core.experiment import cell as _cell


def sw_cell(wc: dict) -> str:
    return _cell(**{k: wc[k] for k in ("arch", "q", "N", "d", "steps", "width")})


def _jobs(dry_run: str, rule: str) -> list[tuple[dict, dict]]:
    """(wildcards, resources) of every job of ``rule`` in a dry run's output."""
    out = []
    for block in re.split(r"\n(?=\[[^\]]+\]\n(?:local)?rule )", dry_run):
        if not re.search(rf"^(local)?rule {rule}:", block, re.M):
            continue
        wc = dict(re.findall(r"(\w+)=([^,\s]+)", re.search(r"wildcards: (.*)", block).group(1)))
        res = dict(re.findall(r"(\w+)=([^,\s]+)", re.search(r"resources: (.*)", block).group(1)))
        out.append((wc, res))
    return out


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    work = copy_workflow(tmp_path_factory.mktemp("cluster") / "wf")
    (work / "partitions.yaml").write_text("partitions:\n  cpu:\n    max_runtime: 240\n    max_mem_mb: 64000\n")
    return work


def _paper(work, *extra, check=True):
    return snakemake(work, "-n", "--forceall", "--profile", "profiles/slurm", *extra, "--config", "sweep=paper",
                     check=check)


@pytest.fixture(scope="module")
def paper_plan(work) -> str:
    """The paper sweep's dry run through profiles/slurm, as planned: the requests every job asks for."""
    return _paper(work).stdout


def paper_training_jobs(sweep) -> dict[str, float]:
    """Every training job of a sweep (a cell, or a long cell's <cell>/seed~S) and its estimated seconds."""
    return cluster.training_jobs({r.path: (cost.estimated_seconds(sweep, r), cost.seed_seconds(sweep, r))
                                  for r in sw.cell_records(sweep)}, sweep["seeds"], cost.JOB_START_S)


def test_every_paper_training_job_asks_for_at_least_its_own_estimate(paper_plan):
    sweep = validated_config()["sweeps"]["paper"]
    out = paper_plan
    jobs = _jobs(out, "train") + _jobs(out, "train_seed")
    expected = paper_training_jobs(sweep)
    assert len(jobs) == len(expected) > len(sw.cells(sweep))  # the long cells: one job per seed
    minutes = []
    record_of = {r.path: r for r in sw.cell_records(sweep)}
    for wc, res in jobs:
        if "cell" in wc:
            job, c = f"{wc['cell']}/seed~{wc['seed']}", wc["cell"]
        else:
            job = c = sw_cell(wc)
        est = expected[job]
        assert int(res["runtime"]) >= est / 60 * cluster.RUNTIME_HEADROOM, (wc, res, est)
        assert int(res["mem_mb"]) >= cost.estimated_memory_mb(sweep, record_of[c]), (wc, res)
        minutes.append((int(res["runtime"]), est, wc))
    longest = max(minutes, key=lambda m: m[0])
    print(f"\n[measured] paper sweep: {len(jobs)} training jobs ask for {min(m[0] for m in minutes)} to "
          f"{longest[0]} minutes; the longest, {longest[2]}, is estimated at {longest[1] / 3600:.1f} h")
    assert len({m[0] for m in minutes}) > 10  # from each cell's cost, not one fixed limit


def test_evaluation_oracle_and_data_jobs_ask_for_their_own_estimates(paper_plan):
    sweep = validated_config()["sweeps"]["paper"]
    grid = sw.cells(sweep)
    out = paper_plan

    def d_es(q, N):
        return grid[(grid["arch"] == "tf_stochastic") & (grid["q"] == q) & (grid["N"] == N)]["width"].unique()

    estimate = {
        "evaluate": lambda w: cost.estimated_evaluation_seconds(sweep, int(w["q"]), int(w["N"]), int(w["d"])),
        "oracle": lambda w: cost.estimated_oracle_seconds(sweep, int(w["q"]), int(w["N"]),
                                                        d_es(int(w["q"]), int(w["N"]))),
        "eval_sets": lambda w: cost.estimated_data_seconds(sweep, int(w["N"]), int(w["d"])),
    }
    for rule, est in estimate.items():
        jobs = _jobs(out, rule)
        assert jobs, rule
        for wc, res in jobs:
            assert int(res["runtime"]) == cluster.runtime_request_min(est(wc), 1), (rule, wc, res)
        print(f"\n[measured] {rule}: {len(jobs)} jobs ask for {sorted({int(r['runtime']) for _, r in jobs})} min")


def test_a_partition_maximum_caps_every_request_and_refuses_what_cannot_finish(work, monkeypatch):
    sweep = validated_config()["sweeps"]["paper"]
    jobs = paper_training_jobs(sweep)
    # under 4 h, one seed a job: every training job finishes in its first attempt, the profile's retries suffice
    assert max(cluster.attempts_needed(s, 240) for s in jobs.values()) == 1
    # a dry run is given no executor settings (Snakemake 9): it reads the partition file from the plugin's variable
    monkeypatch.setenv("SNAKEMAKE_SLURM_PARTITIONS", "partitions.yaml")
    r = _paper(work)
    requests = [int(res["runtime"]) for rule in ("train", "train_seed", "evaluate", "oracle", "eval_sets")
                for _, res in _jobs(r.stdout, rule)]
    assert requests and max(requests) == 240  # capped, and the longest jobs reach the cap
    # under 20 min the longest seed jobs need more attempts than the profile's 3: refused, named, before any submission
    need = max(cluster.attempts_needed(s, 20) for s in jobs.values())
    assert need > 3
    (work / "partitions20.yaml").write_text("partitions:\n  cpu:\n    max_runtime: 20\n    max_mem_mb: 64000\n")
    monkeypatch.setenv("SNAKEMAKE_SLURM_PARTITIONS", "partitions20.yaml")
    r = _paper(work, check=False)
    assert r.returncode != 0
    m = re.search(r"(\d+) training cells need more attempts than this run allows \(3; retries: 2\) under the longest "
                  r"partition of the partition file, 20 minutes .*? The longest, the cell (arch~fcn/\S+), is "
                  r"estimated at ([\d.]+) hours on one core and needs (\d+) attempts", r.stderr + r.stdout)
    assert m and int(m.group(4)) == need, (r.stderr + r.stdout)[-3000:]
    said = r.stderr + r.stdout
    assert f"Raise `retries` to at least {need - 1}" in said and "Nothing was submitted" in said
    print(f"\n[measured] paper sweep under a 20 min partition with retries 2: {m.group(1)} jobs refused; the longest, "
          f"{m.group(2)}, estimated at {m.group(3)} h, needs {need} attempts")


def test_a_retry_asks_for_more_time_and_memory():
    assert cluster.runtime_request_min(3600, 2) == 2 * cluster.runtime_request_min(3600, 1)
    assert cluster.memory_request_mb(1000, 2) > cluster.memory_request_mb(1000, 1) >= 1000
    assert cluster.runtime_request_min(3600, 3, max_minutes=240) == 240
    # up to 4x the first request: the packs of slurm-grouped do not shrink with more retries
    first = cluster.runtime_request_min(3600, 1)
    assert cluster.runtime_request_min(3600, 3) == cluster.runtime_request_min(3600, 9) == 4 * first
    assert cluster.attempts_needed(9 * 3600, 240) == math.ceil(9 * 60 / 240)


def test_the_partition_file_is_found_where_the_slurm_plugin_finds_it(work, monkeypatch):
    """A run's Slurm executor settings (`slurm-partition-config` on the command line or in the profile) name it; else
    $SNAKEMAKE_SLURM_PARTITIONS, the plugin's own variable, which a dry run reads (Snakemake 9 gives a dry run no
    executor settings)."""
    env = {"SNAKEMAKE_SLURM_PARTITIONS": "from-env.yaml"}
    assert cluster.partition_file("running.yaml", env) == "running.yaml"
    assert cluster.partition_file(None, env) == "from-env.yaml"
    assert cluster.partition_file(None, {}) is None
    assert cluster.longest_partition_min(None) is None
    (work / "parts2.yaml").write_text("partitions:\n  cpu:\n    max_runtime: 2\n")  # below every tiny job's request

    def longest():
        r = snakemake(work, "-n", "--forceall", "--profile", "profiles/slurm", "--configfile", TINY)
        return max(int(res["runtime"]) for rule in ("train", "evaluate") for _, res in _jobs(r.stdout, rule))

    assert longest() == cluster.MIN_RUNTIME_MIN
    monkeypatch.setenv("SNAKEMAKE_SLURM_PARTITIONS", "parts2.yaml")
    assert longest() == 2


def test_the_longest_partition_of_a_file_caps_the_requests(tmp_path):
    f = tmp_path / "partitions.yaml"
    f.write_text("partitions:\n  short:\n    max_runtime: 60\n  long:\n    max_runtime: 2880\n")
    assert cluster.longest_partition_min(str(f)) == 2880
    f.write_text("partitions:\n  short:\n    max_runtime: 60\n  open: {}\n")
    assert cluster.longest_partition_min(str(f)) is None  # a partition without a limit: nothing caps


def test_a_job_joins_its_pack_only_where_the_pack_fits_the_longest_partition():
    assert cluster.pack_group("train", 1, 500, 240) is None  # the run packs nothing
    assert cluster.pack_group("train", 4, 60, 240) == "train"  # 4 x 60 fits 240
    assert cluster.pack_group("train", 4, 61, 240) == "train_alone"
    assert cluster.pack_group("oracle", 4, 10**6, None) == "evaluate"  # no partition file: every job packs
    said = cluster.packing_summary({"train": [60, 61, 10], "evaluate": [5]}, {"train": 4, "evaluate": 1}, 240, 3)
    assert said == ("packs (group-components; longest partition 240 min): train: 2 of 3 jobs in packs of up to 4 "
                    "(a pack asks for at most 240 min at attempt 3), 1 alone (at most 61 min)")
    assert cluster.packing_summary({"train": [60]}, {"train": 1}, 240, 3) is None


def test_cells_needing_more_attempts_than_allowed_are_named_longest_first():
    seconds = {"arch~a/short": 3600.0, "arch~a/long": 20 * 3600.0, "arch~a/longer": 30 * 3600.0}
    assert cluster.too_many_attempts(seconds, 240, retries=9) is None  # 30 h in 4 h attempts: 8
    said = cluster.too_many_attempts(seconds, 240, retries=2)
    assert said.startswith("2 training cells need more attempts than this run allows (3; retries: 2)")
    assert "The longest, the cell arch~a/longer, is estimated at 30.0 hours on one core and needs 8 attempts" in said
    assert "arch~a/long (20.0 h, 5)" in said and "Raise `retries` to at least 7" in said


def test_the_profiles_set_no_fixed_runtime_for_the_jobs_that_estimate_theirs():
    import yaml
    for name in ("slurm", "slurm-grouped"):
        profile = yaml.safe_load((ROOT / "profiles" / name / "config.yaml").read_text())
        assert profile["set-resources"]["train_seed"] == profile["set-resources"]["train"], name  # one request
        for rule in ("train", "train_seed", "evaluate", "oracle", "eval_sets"):
            assert "runtime" not in (profile.get("set-resources", {}).get(rule) or {}), (name, rule)
            assert "mem_mb" not in (profile.get("set-resources", {}).get(rule) or {}), (name, rule)
        assert profile["slurm-requeue"] is True, name


def test_the_grouped_profile_puts_every_rule_of_the_workflow_in_a_group():
    """A rule in no group runs as its own submission per job: the profile's `groups` and the rules the
    workflow packs itself (PACKED_GROUPS) must together cover the workflow's rules, and not overlap (the
    profile's setting would override the workflow's)."""
    import yaml
    out = snakemake(ROOT, "--list-rules", "--config", "sweep=cpu", timeout=120)
    rules = set(out.stdout.split()) - {"all"}
    assert {"train", "evaluate", "fig_encodings", "encodings"} <= rules  # the listing parsed
    profile = yaml.safe_load((ROOT / "profiles" / "slurm-grouped" / "config.yaml").read_text())
    grouped = {g.split("=")[0] for g in profile["groups"]}
    packed = set(cluster.PACKED_GROUPS)
    assert packed == {"train", "train_seed", "evaluate", "oracle", "eval_sets"}, packed
    assert not grouped & packed, grouped & packed
    # train_seed exists only in a sweep with cells over an hour (not the cpu sweep), fig_needs only in the lookup and
    # dyck sweeps (its record's tasks)
    assert grouped | packed == rules | {"train_seed", "fig_needs"}, (sorted(rules - grouped - packed),
                                                      sorted((grouped | packed) - rules))
    # and each has its resources set there (its slots, so a pack runs its jobs one after another)
    assert rules <= set(profile["set-resources"]), sorted(rules - set(profile["set-resources"]))


# -- GPU requests as clusters differ: each variant of profiles/slurm's comments, submitted to an `sbatch`
# that records its flags and refuses the job (no Slurm needed), and the flags it got
GPU_VARIANTS = {  # the train rule's set-resources -> flags sbatch must get, flags it must not
    "as shipped": ([], ["--gpus=1", "--cpus-per-task=1"], ["--gres"]),
    "gpu_model": (["train:gpu_model=a100"], ["--gpus=a100:1"], ["--gres"]),
    "gres": (["train:gpu=0", "train:gres=gpu:1"], ["--gres=gpu:1"], ["--gpus"]),
    "gres with a model, cpus_per_gpu": (["train:gpu=0", "train:gres=gpu:a100:1", "train:cpus_per_gpu=4"],
                                        ["--gres=gpu:a100:1", "--cpus-per-gpu=4"], ["--gpus", "--cpus-per-task"]),
}
RECORDING_SBATCH = '#!/bin/sh\necho "$*" >> "$SBATCH_CAPTURE"\necho "sbatch: error: recorded by the test" >&2\nexit 1\n'


@pytest.fixture(scope="module")
def gpu_work(tmp_path_factory):
    """The tiny sweep with its data made locally (so its training jobs are the first submitted), and a bin
    folder whose Slurm commands answer nothing and whose sbatch records its flags."""
    base = tmp_path_factory.mktemp("gpu")
    work = copy_workflow(base / "wf")
    # its own environment, in a path without spaces (a checkout's path with one is refused for Slurm: test_slurm)
    venv_at(work / ".venv")
    snakemake(work, "--cores", "1", "--configfile", TINY, "--", "results/tiny/data/q~2/N~8/d~4/index.json")
    fake = base / "bin"
    fake.mkdir()
    for tool in ("sinfo", "squeue", "sacct", "sacctmgr", "scontrol", "sshare", "scancel"):
        (fake / tool).write_text("#!/bin/sh\nexit 0\n")
    (fake / "sbatch").write_text(RECORDING_SBATCH)
    for f in fake.iterdir():
        f.chmod(0o755)
    return work, fake


@pytest.mark.parametrize("variant", list(GPU_VARIANTS))
def test_each_documented_gpu_request_reaches_sbatch_as_its_flags(gpu_work, variant, monkeypatch):
    work, fake = gpu_work
    settings, wanted, unwanted = GPU_VARIANTS[variant]
    capture = work / f"sbatch-{variant.replace(' ', '_').replace(',', '')}.txt"
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SBATCH_CAPTURE", str(capture))
    target = "results/tiny/models/arch~fcn/q~2/N~8/d~4/steps~60/width~16/seed~0/model.pt"
    r = snakemake(work, "--profile", "profiles/slurm", "--retries", "0", "--slurm-init-seconds-before-status-checks",
                  "1", "--configfile", TINY, *(["--set-resources", *settings] if settings else []),
                  "--", target, check=False, timeout=180)
    assert capture.exists(), r.stderr[-3000:]
    call = re.sub(r" --wrap=.*", "", capture.read_text().splitlines()[0])
    flags = call.split()
    assert "rule_train_wildcards_fcn_2_8_4_60_16" in call, call  # the training job was the one submitted
    for f in wanted:
        assert f in flags, (variant, f, call)
    for f in unwanted:
        assert not any(x.startswith(f) for x in flags), (variant, f, call)
    print(f"\n[measured] GPU request '{variant}' ({' '.join(settings) or 'the profile'}): sbatch ..."
          + re.sub(r" -D \S+", "", call[call.index(" -t "):]))


@pytest.mark.parametrize("longest, packs", [(60, [20]), (30, [5, 5, 5, 5])])
def test_grouped_packs_fit_the_longest_partition_or_go_alone(gpu_work, longest, packs, monkeypatch):
    """The tiny sweep's four training jobs each ask for 5 minutes (the floor) at every attempt: eight of them
    fit a 60-minute partition, so they share one submission (asking for their sum); under a 30-minute one
    they would not, so each is submitted alone."""
    work, fake = gpu_work
    (work / f"parts{longest}.yaml").write_text(f"partitions:\n  cpu:\n    max_runtime: {longest}\n")
    capture = work / f"sbatch-grouped-{longest}.txt"
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SBATCH_CAPTURE", str(capture))
    models = [f"results/tiny/models/arch~{a}/q~2/N~8/d~4/steps~60/width~{w}/seed~0/model.pt"
              for a, w in (("tf_stochastic", 8), ("tf_fixed", 8), ("fcn", 16), ("fcn", 32))]
    r = snakemake(work, "--profile", "profiles/slurm-grouped", "--slurm-partition-config", f"parts{longest}.yaml",
                  "--retries", "0", "--slurm-init-seconds-before-status-checks", "1", "--configfile", TINY,
                  "--", *models, check=False, timeout=180)
    assert capture.exists(), r.stderr[-3000:]
    calls = capture.read_text().splitlines()
    minutes = sorted(int(re.search(r" -t (\d+)", c).group(1)) for c in calls)
    assert minutes == packs, (minutes, [re.sub(r" --wrap=.*", "", c) for c in calls])
    assert all(m <= longest for m in minutes)
    assert f"longest partition {longest} min" in r.stderr
    print(f"\n[measured] slurm-grouped, longest partition {longest} min: {len(calls)} submissions for 4 training "
          f"jobs, asking for {minutes} min; " + re.search(r"packs \(.*", r.stderr).group(0)[:200])


def test_a_cell_over_the_threshold_trains_one_job_per_seed_the_others_keep_their_seeds():
    cells = {"arch~a/long": (2 * 3600.0, 1400.0), "arch~a/short": (3000.0, 600.0), "arch~a/edge": (3600.0, 700.0)}
    jobs = cluster.training_jobs(cells, [0, 1, 2], start_s=4.0)
    assert jobs == {"arch~a/long/seed~0": 1404.0, "arch~a/long/seed~1": 1404.0, "arch~a/long/seed~2": 1404.0,
                    "arch~a/short": 3000.0, "arch~a/edge": 3600.0}
    assert not cluster.trains_per_seed(10 * 3600.0, seeds=1)  # one seed: nothing to split
    assert cluster.trains_per_seed(3601.0, 2) and not cluster.trains_per_seed(3600.0, 2)


def test_the_cpu_sweep_keeps_its_seeds_together_and_the_paper_sweeps_long_cells_split():
    config = validated_config()
    cpu, paper = config["sweeps"]["cpu"], config["sweeps"]["paper"]
    assert set(paper_training_jobs(cpu)) == {r.path for r in sw.cell_records(cpu)}  # the cpu sweep's DAG unchanged
    jobs = paper_training_jobs(paper)
    split = {j.rsplit("/seed~", 1)[0] for j in jobs if "/seed~" in j}
    assert split and all(cost.estimated_seconds(paper, r) > cluster.SEED_JOB_S
                         for r in sw.cell_records(paper) if r.path in split)
    longest = max(jobs.values())
    whole = max(cost.estimated_seconds(paper, r) for r in sw.cell_records(paper))
    assert longest < whole / 4  # five seeds: the longest job a fifth of the longest cell's, and a start
    print(f"\n[measured] paper sweep: {len(jobs)} training jobs ({len(split)} cells one job per seed); the longest "
          f"{longest / 3600:.2f} h (its cell's multi-seed job {whole / 3600:.2f} h); over 4 h: "
          f"{sum(s > 4 * 3600 for s in jobs.values())}, over 1 h: {sum(s > 3600 for s in jobs.values())}")


def test_a_training_job_asks_for_threads_where_its_step_is_one_large_product():
    config = validated_config()
    cpu, paper = config["sweeps"]["cpu"], config["sweeps"]["paper"]
    assert {cost.train_threads(r) for r in sw.cell_records(cpu)} == {1}
    record_of = {r.path: r for r in sw.cell_records(paper)}
    threads = {c: cost.train_threads(r) for c, r in record_of.items()}
    assert all(t == 1 for c, t in threads.items() if not c.startswith("arch~fcn/"))  # the transformers: one
    largest = "arch~fcn/q~1/N~128/d~16/steps~20000/width~8192"
    assert threads[largest] == cost.TRAIN_THREADS_MAX and cost.train_threads(record_of[largest], cap=2) == 2
    assert threads["arch~fcn/q~1/N~16/d~8/steps~20000/width~32"] == 1
    assert cost.train_threads(record_of[largest], cap=0) == cost.TRAIN_THREADS_MAX  # no cap given


def test_requests_from_a_pilot_scale_each_shape_and_take_headroom_from_its_spread():
    def row(q, est, ext, width=64):
        return {"rule": "train", "job": f"arch~fcn/q~{q}/N~8/d~4/steps~10/width~{width}", "real_estimated_s": est,
                "extrapolated_s": ext}
    rows = [row(1, 100, 200), row(2, 100, 260), row(4, 100, 220), row(1, 50, 25, width=16),
            {"rule": "evaluate", "job": "q~1_N~8_d~4", "real_estimated_s": 10, "extrapolated_s": 99},
            row(2, 50, float("nan"), width=16)]
    factors, headrooms = cluster.pilot_factors(rows)
    assert factors == {("fcn", 8, 4, 64): 2.2, ("fcn", 8, 4, 16): 0.5}
    # each shape its own spread: 260 / 200 at m = 64; m = 16's one measured cell has none, and the minimum
    assert headrooms == pytest.approx({("fcn", 8, 4, 64): cluster.PILOT_HEADROOM_MIN * 1.3,
                                       ("fcn", 8, 4, 16): cluster.PILOT_HEADROOM_MIN})
    headroom = headrooms["fcn", 8, 4, 64]
    assert cluster.runtime_request_min(3600, 1, headroom=headroom) == math.ceil(60 * headroom)


def test_requests_from_the_pilot_need_its_table_and_ask_for_its_measurement_with_its_headroom(work):
    """`--config requests=pilot`: refused, naming the file, before the pilot ran; with a pilot that measured every
    cell at its estimate (no spread) but one small shape's, every long training job asks for 1.5x its estimate
    instead of 3x (not the 6x of that shape's spread)."""
    import csv

    from stsq.cluster import pilot as pl
    from stsq.core.experiment import Layout
    sweep = validated_config()["sweeps"]["paper"]
    table = work / Layout("paper" + pl.PILOT_SUFFIX).pilot("csv")
    table.unlink(missing_ok=True)
    r = snakemake(work, "-n", "--forceall", "--profile", "profiles/slurm", "--config", "sweep=paper",
                  "requests=pilot", check=False)
    assert r.returncode != 0 and "run the pilot first" in r.stdout + r.stderr and str(table.name) in r.stdout + r.stderr
    table.parent.mkdir(parents=True, exist_ok=True)
    with open(table, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=pl.PILOT_COLUMNS, restval="")
        w.writeheader()
        for c in sw.cell_records(sweep):
            est = cost.estimated_seconds(sweep, c)
            # one small shape measured noisily (its cells 1x, 2x and 4x their estimate): its own headroom only
            noisy = c.q if (c.arch, c.N, c.d, c.width) == ("tf_fixed", 16, 8, 16) else 1
            w.writerow({"rule": "train", "job": _cell(**{**c.axes(), "steps": pl.PILOT_STEPS}),
                        "real_estimated_s": est, "extrapolated_s": est * noisy})
    try:
        out = snakemake(work, "-n", "--forceall", "--profile", "profiles/slurm", "--config", "sweep=paper",
                        "requests=pilot").stdout
    finally:
        table.unlink()
    expected = paper_training_jobs(sweep)
    jobs = _jobs(out, "train_seed")
    assert jobs
    for wc, res in jobs:
        est = expected[f"{wc['cell']}/seed~{wc['seed']}"]
        assert int(res["runtime"]) == cluster.runtime_request_min(est, 1, None, cluster.PILOT_HEADROOM_MIN), (wc, res)
        assert int(res["runtime"]) < cluster.runtime_request_min(est, 1) or int(res["runtime"]) == 5
