"""What a cluster job asks for: runtime and memory from its own estimate (stsq.sweep), growing with the
attempt, capped at the longest partition of the profile's Slurm partition file, and a training cell that no
number of allowed attempts can finish refused before anything is submitted (docs/cluster.md)."""

from __future__ import annotations

import math
import re

import pytest
from helpers import ROOT, copy_workflow, snakemake, validated_config
from stsq import sweep as sw


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


def test_every_paper_training_job_asks_for_at_least_its_own_estimate(work):
    sweep = validated_config()["sweeps"]["paper"]
    jobs = _jobs(_paper(work).stdout, "train")
    assert len(jobs) == len(sw.cells(sweep))
    minutes = []
    for wc, res in jobs:
        est = sw.estimated_seconds(sweep, wc["arch"], int(wc["N"]), int(wc["d"]), int(wc["steps"]), int(wc["width"]))
        assert int(res["runtime"]) >= est / 60 * sw.RUNTIME_HEADROOM, (wc, res, est)
        assert int(res["mem_mb"]) >= sw.estimated_memory_mb(sweep, wc["arch"], int(wc["N"]), int(wc["d"]),
                                                            int(wc["width"])), (wc, res)
        minutes.append((int(res["runtime"]), est, wc))
    longest = max(minutes, key=lambda m: m[0])
    print(f"\n[measured] paper sweep: {len(jobs)} training jobs ask for {min(m[0] for m in minutes)} to "
          f"{longest[0]} minutes; the longest, {longest[2]}, is estimated at {longest[1] / 3600:.1f} h")
    assert len({m[0] for m in minutes}) > 10  # from each cell's cost, not one fixed limit


def test_evaluation_oracle_and_data_jobs_ask_for_their_own_estimates(work):
    sweep = validated_config()["sweeps"]["paper"]
    grid = sw.cells(sweep)
    out = _paper(work).stdout

    def d_es(q, N):
        return grid[(grid["arch"] == "tf_stochastic") & (grid["q"] == q) & (grid["N"] == N)]["width"].unique()

    estimate = {
        "evaluate": lambda w: sw.estimated_evaluation_seconds(sweep, int(w["q"]), int(w["N"]), int(w["d"])),
        "oracle": lambda w: sw.estimated_oracle_seconds(sweep, int(w["q"]), int(w["N"]),
                                                        d_es(int(w["q"]), int(w["N"]))),
        "eval_sets": lambda w: sw.estimated_data_seconds(sweep, int(w["N"]), int(w["d"])),
    }
    for rule, est in estimate.items():
        jobs = _jobs(out, rule)
        assert jobs, rule
        for wc, res in jobs:
            assert int(res["runtime"]) == sw.runtime_request_min(est(wc), 1), (rule, wc, res)
        print(f"\n[measured] {rule}: {len(jobs)} jobs ask for {sorted({int(r['runtime']) for _, r in jobs})} min")


def test_a_partition_maximum_caps_every_request_and_refuses_what_cannot_finish(work):
    r = _paper(work, "--slurm-partition-config", "partitions.yaml")
    requests = [int(res["runtime"]) for rule in ("train", "evaluate", "oracle", "eval_sets")
                for _, res in _jobs(r.stdout, rule)]
    assert requests and max(requests) <= 240
    assert max(requests) == 240  # the paper sweep's longest cells reach the cap
    # with no retry a cell estimated above 4 h cannot finish: refused, naming it, before any submission
    r = _paper(work, "--slurm-partition-config", "partitions.yaml", "--retries", "0", check=False)
    assert r.returncode != 0
    assert re.search(r"the cell arch~fcn/\S+ is estimated at [\d.]+ hours on one core, and the longest partition "
                     r"of the partition file allows 240 minutes: it needs \d attempts", r.stderr + r.stdout)
    assert "Nothing was submitted" in r.stderr + r.stdout


def test_a_retry_asks_for_more_time_and_memory():
    assert sw.runtime_request_min(3600, 2) == 2 * sw.runtime_request_min(3600, 1)
    assert sw.memory_request_mb(1000, 2) > sw.memory_request_mb(1000, 1) >= 1000
    assert sw.runtime_request_min(3600, 3, max_minutes=240) == 240
    assert sw.attempts_needed(9 * 3600, 240) == math.ceil(9 * 60 / 240)


def test_the_profiles_set_no_fixed_runtime_for_the_jobs_that_estimate_theirs():
    import yaml
    for name in ("slurm", "slurm-grouped"):
        profile = yaml.safe_load((ROOT / "profiles" / name / "config.yaml").read_text())
        for rule in ("train", "evaluate", "oracle", "eval_sets"):
            assert "runtime" not in (profile.get("set-resources", {}).get(rule) or {}), (name, rule)
            assert "mem_mb" not in (profile.get("set-resources", {}).get(rule) or {}), (name, rule)
        assert profile["slurm-requeue"] is True, name


def test_the_grouped_profile_puts_every_rule_of_the_workflow_in_a_group():
    """A rule missing from `groups` runs as its own submission per job; the list must follow the workflow."""
    import yaml
    out = snakemake(ROOT, "--list-rules", "--config", "sweep=cpu", timeout=120)
    rules = set(out.stdout.split()) - {"all"}
    assert {"train", "evaluate", "fig_encodings", "encodings"} <= rules  # the listing parsed
    profile = yaml.safe_load((ROOT / "profiles" / "slurm-grouped" / "config.yaml").read_text())
    grouped = {g.split("=")[0] for g in profile["groups"]}
    assert grouped == rules, (sorted(rules - grouped), sorted(grouped - rules))
