"""The workflow end to end: the grid is what config.yaml says, a tiny sweep runs through
Snakemake to a tidy table, figures, claims table and report, and reruns do only what is needed."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
import time

import pandas as pd
import pytest
import yaml
from helpers import ROOT, TINY, copy_finished, copy_workflow, job_counts, snakemake, validated_config, venv_at
from stsq.claims.judge import claims_of
from stsq.cluster import cost
from stsq.cluster.cost import sweep_cost
from stsq.cluster.requests import SEED_JOB_S
from stsq.core import claim_records as cl
from stsq.core import experiment as ex
from stsq.core import figure_catalog as catalog
from stsq.report.pages import drawn_figures as drawn

pytestmark = pytest.mark.workflow


def expected_counts(sweep: dict, cost_sweep: dict | None = None) -> dict[str, int]:
    """The jobs of a sweep, counted here from the config (not through stsq.core.sweep.cells); ``cost_sweep``: the
    sweep validated (its defaults filled in), for the cost model's estimates."""
    ds = sweep["d"] if isinstance(sweep["d"], list) else [sweep["d"]]

    def widths(a, q, N, d):
        w = a["widths"]
        if isinstance(w, list):
            return w
        size = N * d if w["relative_to"] == "N d" else q * math.log(N)
        return sorted({max(1, round(f * size)) for f in w.get("factors_by_q", {}).get(q, w["factors"])})

    def budgets(a):
        return len(a["steps"]) if isinstance(a["steps"], list) else 1

    def own(a, axis):  # an arch's own q, N or d (a subset of the sweep's), else the sweep's
        v = a.get(axis, sweep[axis] if axis != "d" else ds)
        return v if isinstance(v, list) else [v]

    def shapes(a):  # less those matching an entry of the arch's exclude (a partial q, N, d)
        return [(q, N, d) for q in own(a, "q") for N in own(a, "N") for d in own(a, "d")
                if not any(all({"q": q, "N": N, "d": d}[k] == v for k, v in e.items()) for e in a.get("exclude", []))]

    def steps_of(a):
        return a["steps"] if isinstance(a["steps"], list) else [a["steps"]]

    # a cell trains its seeds in one job, or one job per seed where that job is estimated over the threshold
    # (stsq.cluster.requests.SEED_JOB_S; the estimate is the cost model's, the cells are counted here)
    valid = cost_sweep or sweep
    seeds = len(sweep["seeds"])
    def record(name, a, q, N, d, steps, w):  # what the cost reads of a cell: its arch, shape, batch size and layers
        return ex.CellRecord(arch=name, q=q, N=N, d=d, steps=steps, width=w, lr=0.0, batch_size=valid["batch_size"],
                             layers=a.get("layers", ex.DEFAULTS["layers"]))

    jobs = [cost.estimated_seconds(valid, record(name, a, q, N, d, steps, w)) > SEED_JOB_S and seeds > 1
            for name, a in sweep["archs"].items() for q, N, d in shapes(a) for steps in steps_of(a)
            for w in widths(a, q, N, d)]
    n_cells = sum(len(widths(a, q, N, d)) * budgets(a) for a in sweep["archs"].values() for q, N, d in shapes(a))
    assert len(jobs) == n_cells
    qNd = {s for a in sweep["archs"].values() for s in shapes(a)}
    # the oracle: for the paper's model and randomized positions, one job per (q, N), every d_e in it
    oracles = {(q, N) for name, a in sweep["archs"].items() if name == ex.paper_model() or ex.uses_position_range(name)
               for q, N, d in shapes(a)}
    split = {"train_seed": seeds * sum(jobs)} if any(jobs) else {}
    return {"eval_sets": len(qNd), "train": n_cells - sum(jobs), **split, "evaluate": len(qNd), "aggregate": 1,
            "critical": 1, "encodings": 1, "reach": 1, "claims": 1, "landing": 1, "all": 1, "oracle": len(oracles),
            **{catalog.FIGURE_RULE.format(name=name): 1 for name in drawn(sweep)}}


@pytest.mark.parametrize("sweep", ["paper", "cpu", "separation"])
def test_dry_run_enumerates_the_whole_grid(tmp_path, sweep):
    work = copy_workflow(tmp_path / "wf")
    t0 = time.perf_counter()
    r = snakemake(work, "-n", "--config", f"sweep={sweep}")
    seconds = time.perf_counter() - t0
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    counts = job_counts(r.stdout)
    print(f"\n[measured] dry run of {sweep}: {sum(counts.values())} jobs in {seconds:.1f}s: {counts}")
    assert counts == expected_counts(config["sweeps"][sweep], validated_config()["sweeps"][sweep])
    # the cost is said before any job: the sweep's size, its estimated CPU time, and for a long sweep
    # without a GPU, how to run the small one instead
    said = sweep_cost(validated_config()["sweeps"][sweep])
    assert f"sweep '{sweep}': {counts['train'] + counts.get('train_seed', 0)} training jobs" in r.stderr
    assert ("--config sweep=cpu" in r.stderr) == (said["cpu_hours"] > 1 and sweep != "cpu")


def test_paper_sweep_is_the_default_and_fcns_get_4x_the_samples():
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    assert config["sweep"] == "paper"
    archs = config["sweeps"]["paper"]["archs"]
    assert archs["fcn"]["steps"] >= 4 * archs["tf_stochastic"]["steps"]
    assert archs["fcn"]["widths"]["relative_to"] == "N d"  # every (q, N, d) samples its own transition
    cpu = config["sweeps"]["cpu"]["archs"]
    assert cpu["fcn"]["steps"] == cpu["tf_stochastic"]["steps"] == cpu["tf_fixed"]["steps"]


def test_lint_is_clean():
    r = snakemake(ROOT, "--lint", check=False, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """The tiny sweep, run once from a checkout whose path has spaces and a quote, with its own venv
    inside it (the rules' `python` and Snakemake's interpreter both live under that path), under umask
    002 as on a project directory a group shares."""
    work = copy_workflow(tmp_path_factory.mktemp("e2e") / "it's a folder with spaces")
    venv_at(work / ".venv")
    r = snakemake(work, "--cores", "2", "--configfile", TINY, umask=0o002)
    return work, r


def test_every_output_is_readable_and_writable_by_the_group_under_umask_002(tiny_run):
    work, _ = tiny_run
    files = [p for p in (work / "results" / "tiny").rglob("*") if p.is_file()]
    closed = [f"{p.relative_to(work)} {oct(p.stat().st_mode & 0o777)}" for p in files
              if p.stat().st_mode & 0o060 != 0o060]
    print(f"\n[measured] {len(files)} files under results/tiny, {len(closed)} not group read-write")
    assert len(files) > 50 and not closed, closed[:10]


def test_the_run_used_the_checkouts_own_venv(tiny_run):
    work, _ = tiny_run
    log = (work / "results/tiny/logs/train/arch~tf_stochastic/q~2/N~8/d~4/steps~60/width~8.log").read_text()
    assert "'" in str(work) and " " in str(work)
    assert f"(python {work / '.venv' / 'bin' / 'python'})" in log


def test_tiny_sweep_runs_end_to_end(tiny_run):
    work, r = tiny_run
    sweep = yaml.safe_load(TINY.read_text())["sweeps"]["tiny"]
    assert job_counts(r.stderr) == expected_counts(sweep)
    out = work / "results" / "tiny"
    table = pd.read_csv(out / "tables" / "metrics.csv")
    assert list(table.columns) == ex.TABLE_COLUMNS
    assert set(table["split"]) == set(ex.SPLITS)
    assert set(table["arch"]) == set(sweep["archs"])
    for name in drawn(sweep):
        for ext in catalog.FIGURE_FORMATS:
            f = out / "figures" / f"{name}.{ext}"
            assert f.exists() and f.stat().st_size > 1000, f
    assert not (out / "figures" / "encodings.png").exists()  # the sweep has no compared encoding
    claims = pd.read_csv(out / "tables" / "claims.csv")
    assert list(claims.columns) == cl.CLAIM_COLUMNS and set(claims["claim"]) == set(claims_of())
    # one N in the tiny sweep: the scaling claims cannot be tested there, and say so
    scaling = claims[claims["claim"].isin(["fcn_scaling", "tf_scaling"])]
    assert (scaling["verdict"] == cl.NOT_TESTED).all() and scaling["measured"].str.contains("one N").all()


def test_fcn_beyond_its_length_is_not_applicable_never_a_number(tiny_run):
    work, _ = tiny_run
    table = pd.read_csv(work / "results" / "tiny" / "tables" / "metrics.csv")
    fcn = table[(table["arch"] == "fcn") & (table["split"] == "eval")]
    off = fcn[fcn["N_eval"] != fcn["N"]]
    assert len(off) > 0 and (off["status"] == "not_applicable").all() and off["value"].isna().all()
    on = fcn[fcn["N_eval"] == fcn["N"]]
    assert (on["status"] == "ok").all() and on["value"].notna().all()


def test_every_rule_writes_its_log_and_training_reports_progress(tiny_run):
    work, _ = tiny_run
    logs = list((work / "results" / "tiny" / "logs").rglob("*.log"))
    assert len(logs) >= 12 and all(p.stat().st_size > 0 for p in logs)
    train_log = (work / "results/tiny/logs/train/arch~tf_stochastic/q~2/N~8/d~4/steps~60/width~8.log").read_text()
    assert "step 20/60" in train_log and "test" in train_log


def test_second_run_does_nothing(tiny_run):
    work, _ = tiny_run
    r = snakemake(work, "--cores", "2", "--configfile", TINY)
    assert "Nothing to be done" in r.stdout + r.stderr


def test_a_deleted_evaluation_set_and_model_are_rebuilt_with_what_depends_on_them(tiny_run):
    work, _ = tiny_run
    out = work / "results" / "tiny"
    before = (out / "tables" / "metrics.csv").read_bytes()
    (out / "data/q~2/N~8/d~4/seed~1/eval_x4.pt").unlink()
    (out / "models/arch~tf_fixed/q~2/N~8/d~4/steps~60/width~8/seed~0/model.pt").unlink()
    plan = job_counts(snakemake(work, "-n", "--configfile", TINY).stdout)
    # the (q, N, d)'s evaluation sets (every seed: the same bytes again), the one cell whose model is
    # missing (its other seeds resume from their final checkpoints), the (q, N, d)'s evaluation, and the
    # table with what is drawn from it
    tiny = yaml.safe_load(TINY.read_text())["sweeps"]["tiny"]
    assert plan == {"eval_sets": 1, "train": 1, "evaluate": 1, "aggregate": 1, "critical": 1, "encodings": 1,
                    "reach": 1, "claims": 1, "landing": 1, "all": 1,
                    **{catalog.FIGURE_RULE.format(name=name): 1 for name in drawn(tiny)}}
    snakemake(work, "--cores", "2", "--configfile", TINY)
    assert (out / "data/q~2/N~8/d~4/seed~1/eval_x4.pt").exists()
    assert (out / "tables" / "metrics.csv").read_bytes() == before


@pytest.mark.parametrize("target", ["fig_length", "results/tiny/figures/length.pdf"])
def test_a_deleted_figure_is_rebuilt_alone_by_rule_or_file_name(tiny_run, target):
    work, _ = tiny_run
    pdf = work / "results" / "tiny" / "figures" / "length.pdf"
    pdf.unlink()
    r = snakemake(work, target, "--cores", "1", "--configfile", TINY)
    assert job_counts(r.stderr) == {"fig_length": 1}
    assert pdf.exists()
    assert "Nothing to be done" in snakemake(work, "--cores", "1", "--configfile", TINY).stderr


def test_report_shows_every_figure_and_the_claims_table(tiny_run):
    work, _ = tiny_run
    snakemake(work, "--configfile", TINY, "--report", "results/tiny/report.html")
    html = (work / "results" / "tiny" / "report.html").read_text(errors="replace")
    # Snakemake's report embeds each report() file under its name, with its caption (written with the
    # figure from the claims table); a figure the sweep does not draw is not in it
    figures = drawn(yaml.safe_load(TINY.read_text())["sweeps"]["tiny"])
    for name in figures:
        assert f"{name}.png" in html, name
        # the caption's drawing paragraph (plain text), its first words
        text = (work / "results" / "tiny" / "report" / f"{name}.rst").read_text()
        words = next(p for p in text.split("\n\n") if not p.startswith(("**", "- "))).split()[:4]
        assert " ".join(words) in html, (name, words)
    assert "encodings.png" not in html
    assert "claims.html" in html
    # the landing page's links open the claims table, then each figure in reading order, in the main
    # panel (Snakemake's own `name`_ links only open a result's description): each names a result the
    # report embeds, as html or image
    embedded = set(json.loads(re.search(r"var results = (\{.*?\});\n", html).group(1)))
    links = re.findall(r"javascript:app.setView\(\{navbarMode:'resultinfo',resultPath:'([^']+)',"
                       r"content:'(html|img)',contentPath:results\['([^']+)'\].data_uri\}\)", html)
    assert [(path, kind) for path, kind, _ in links] == [
        ("results/tiny/tables/claims.html", "html"), *((f"results/tiny/figures/{n}.png", "img") for n in figures)]
    assert all(path == data and path in embedded for path, _, data in links), (links, sorted(embedded))


def test_a_starved_sweep_over_d_and_budgets_credits_the_models_with_no_claim(tmp_path):
    """Models that learned nothing (a few steps at a tiny learning rate), on a grid with d as an axis, FCN
    widths relative to N d and two budgets: the claims table has no PASS but the width-floor check, and
    says why for each claim it does not test."""
    work = copy_workflow(tmp_path / "wf")
    sweep = yaml.safe_load(TINY.read_text())["sweeps"]["tiny"]
    sweep.update(d=[4, 8], seeds=[0, 1], archs={
        "tf_stochastic": {"widths": [4, 8], "steps": 3, "lr": 1e-6},
        "tf_fixed": {"widths": [8], "steps": 3, "lr": 1e-6},
        "fcn": {"widths": {"relative_to": "N d", "factors": [0.5, 1]}, "steps": [3, 6], "lr": 1e-6}})
    (work / "starved.yaml").write_text(yaml.safe_dump({"sweep": "starved", "sweeps": {"starved": sweep}}))
    r = snakemake(work, "--cores", "2", "--configfile", "starved.yaml")
    assert job_counts(r.stdout + r.stderr) == expected_counts(sweep)
    layout = ex.Layout("starved")
    claims = pd.read_csv(work / layout.claims("csv"))
    with pd.option_context("display.width", 250, "display.max_colwidth", 100):
        print(f"\n[measured] the starved sweep's claims:\n{claims[['claim', 'kind', 'N', 'd', 'measured', 'verdict']]}")
    passed = claims[claims["verdict"] == cl.PASS]
    assert set(passed["claim"]) <= {"fcn_floor"} and (passed["kind"] == cl.CHECK).all(), passed
    assert set(claims[claims["claim"] == "learns"]["verdict"]) == {cl.FAIL}
    untested = claims[claims["verdict"] == cl.NOT_TESTED]
    assert untested["measured"].str.startswith("not tested: ").all()
    metrics = pd.read_csv(work / layout.table)
    assert set(metrics["d"]) == {4, 8} and set(metrics[metrics["arch"] == ex.fcn_arch()]["steps"]) == {3, 6}
    assert set(metrics[metrics["arch"] == ex.fcn_arch()]["width"]) == {16, 32, 64}  # (1/2, 1) x N d, N = 8
    critical = pd.read_csv(work / layout.critical)
    assert list(critical.columns[:9]) == ["arch", "q", "N", "d", "steps", "epsilon", "seed", "critical_width",
                                          "censored"]
    assert set(critical["censored"]) == {"above"}  # nothing learned: every needed width only bounded below


def test_every_model_evaluation_and_table_records_the_code_and_machine_that_made_it(tiny_run):
    work, _ = tiny_run
    out = work / "results" / "tiny"
    made = json.loads((out / "models/arch~tf_stochastic/q~2/N~8/d~4/steps~60/width~8/seed~0/"
                              "model.provenance.json").read_text())["made_by"]
    assert made["command"] == "train" and re.fullmatch(r"[0-9a-f]{16}", made["code"]["code_hash"])
    assert made["code"]["commit"] is None and made["code"]["version"]  # a copy, not a git checkout: its version
    assert made["device"].startswith("cpu: ") and made["threads"] == 1
    assert made["python"] and made["torch"] and made["numpy"]
    assert json.loads((out / "eval/q~2/N~8/d~4/evaluation.provenance.json").read_text())["made_by"]["command"] \
        == "evaluate"
    table = json.loads((out / "tables/metrics.provenance.json").read_text())
    assert table["rows_from"]["stages"]["train"]["code"][0]["count"] == 8 and not table["rows_from"]["mixed"]
    for name in ("critical", "reach", "encodings", "claims"):
        t = json.loads((out / f"tables/{name}.provenance.json").read_text())
        assert t["made_by"]["command"] == name and t["rows_from"] == table["rows_from"]
    sweep = json.loads((out / "provenance.json").read_text())
    assert set(sweep["tables"]) == {"metrics", "oracle", "critical", "encodings", "reach", "claims"}
    landing = (out / "report" / "landing.rst").read_text()
    assert "**Provenance**" in landing and made["code"]["code_hash"][:8] in landing
    assert "mix code versions" not in landing


@pytest.fixture(scope="module")
def edited_run(tmp_path_factory, finished_tiny):
    """The tiny sweep, finished, in a copy whose library the tests below edit."""
    work = copy_finished(finished_tiny, tmp_path_factory.mktemp("edits") / "w")
    assert "Nothing to be done" in snakemake(work, "-n", "--configfile", TINY).stdout
    return work


def _edit(work, module, old, new):
    path = work / "workflow" / "src" / "stsq" / module
    text = path.read_text()
    assert old in text, (module, old)
    path.write_text(text.replace(old, new, 1))
    return path, text


TRAINED = {"train": 4, "evaluate": 1, "aggregate": 1, "critical": 1, "encodings": 1, "reach": 1, "claims": 1,
           "landing": 1, "all": 1}
RERUNS = {  # edit -> the jobs `snakemake -n` schedules on the finished tiny sweep
    "a comment in step.py": ("sts/step.py", "import torch\n", "import torch  # a comment\n", {}),
    "the loss in task.py": ("sts/task.py", ".mean() / power(task, d, q)", ".mean() / power(task, d, q) * 2",
                            "trained"),
    "a claim's threshold": ("claims/learning.py", "COS_V_MIN = 0.9", "COS_V_MIN = 0.8", "claims"),
    "a cost constant": ("cluster/cost.py", "StepRate(8.4, 0.14e-3)", "StepRate(9.0, 0.14e-3)", {}),
    "a caption's text": ("core/figure_catalog.py", '"Normalized loss on the fixed', '"The normalized loss on the fixed',
                         {"fig_training": 1, "all": 1}),
}


@pytest.mark.parametrize("edit", list(RERUNS))
def test_a_code_change_reruns_exactly_the_jobs_it_changes(edited_run, edit):
    module, old, new, expected = RERUNS[edit]
    tiny = yaml.safe_load(TINY.read_text())["sweeps"]["tiny"]
    figures = {catalog.FIGURE_RULE.format(name=n): 1 for n in drawn(tiny)}
    if expected == "trained":
        expected = {**TRAINED, **figures}
    elif expected == "claims":
        expected = {"claims": 1, "landing": 1, "all": 1, **figures}  # the captions quote the claims table
    path, text = _edit(edited_run, module, old, new)
    try:
        plan = job_counts(snakemake(edited_run, "-n", "--configfile", TINY).stdout)
    finally:
        path.write_text(text)
    print(f"\n[measured] {edit}: {plan or 'nothing'}")
    assert plan == expected


QSTR_TINY = ROOT / "tests" / "configs" / "qstr_tiny.yaml"


# qstr_tiny at one N, one mode and one seed, with the transformer and the RNN: the two cells the edits below reach
QSTR_TWO_CELLS = {"N": [4], "q": [1], "modes": ["general"], "seeds": [0],
                  "archs": {"qstr_transformer": {"width": 16}, "qstr_rnn": {"width": 16}}}


@pytest.fixture(scope="module")
def both_tasks(edited_run):
    """The finished tiny sweep (STS_q's, it measures widths) and, in the same copy, a finished sweep of sparse token
    retrieval (qstr_tiny at two cells: it measures samples)."""
    config = yaml.safe_load(QSTR_TINY.read_text())
    config["sweeps"]["qstr_tiny"].update(QSTR_TWO_CELLS)
    (edited_run / "qstr_two_cells.yaml").write_text(yaml.safe_dump(config))
    snakemake(edited_run, "--cores", "2", "--configfile", "qstr_two_cells.yaml")
    return edited_run


CROSS_TASK = {  # edit -> (module, old, new, the task whose jobs it may rerun, a job it must rerun there or None)
    # a description no job reads (the docs' words): nothing reruns
    "a retrieval arch's description": ("core/experiment.py",
                                       'about="a bidirectional GRU of width m, read at every position"',
                                       'about="a bidirectional GRU, read at every position"', "qstr", None),
    # read by the record's class (Arch.legend): every reader of the record reaches it, the samples jobs too
    "a retrieval arch's legend": ("core/experiment.py", 'display="bidirectional GRU"', 'display="BiGRU"', "qstr",
                                  "fig_samples"),
    "a retrieval model's activation": ("retrieval/models.py", "f = torch.relu(heads @ self.hidden",
                                       "f = torch.nn.functional.gelu(heads @ self.hidden", "qstr", "samples"),
    "a retrieval claim's threshold": ("claims/retrieval.py", "AT = 0.3", "AT = 0.5", "qstr", "claims"),
    "an STS_q model's positions": ("sts/models.py", 'table_seed=derive_seed(seed, "fixed_pe")',
                                   'table_seed=derive_seed(seed, "fixed_pe2")', "sts", "train"),
    "an STS_q claim's threshold": ("claims/learning.py", "COS_V_MIN = 0.9", "COS_V_MIN = 0.8", "sts", "claims"),
    # a third task's model (index lookup's, docs/separations.md): neither STS_q nor retrieval reruns a job
    "an index-lookup model's query": ("tokens/models.py", "z0 = P[y[:, 0]] if self.points",
                                      "z0 = 2 * P[y[:, 0]] if self.points", "lookup", None),
}


@pytest.mark.parametrize("edit", list(CROSS_TASK))
def test_an_edit_of_one_task_reruns_none_of_the_other_tasks_jobs(both_tasks, edit):
    """Each registry is hashed per entry and each measure names its own code (stsq.provenance.codehash,
    stsq.core.measures): on
    finished sweeps of both tasks, `snakemake -n` schedules jobs of the edited task only."""
    module, old, new, task, must = CROSS_TASK[edit]
    path, text = _edit(both_tasks, module, old, new)
    try:
        plans = {"sts": job_counts(snakemake(both_tasks, "-n", "--configfile", TINY).stdout),
                 "qstr": job_counts(snakemake(both_tasks, "-n", "--configfile", "qstr_two_cells.yaml").stdout)}
    finally:
        path.write_text(text)
    print(f"\n[measured] {edit}: STS_q {plans['sts'] or 'nothing'}; retrieval {plans['qstr'] or 'nothing'}")
    if task not in plans:  # a third task's edit: neither of these two reruns anything
        assert plans == {"sts": {}, "qstr": {}}, f"{edit} reruns {plans}"
        return
    other = "qstr" if task == "sts" else "sts"
    assert plans[other] == {}, f"{edit} reruns {plans[other]} of the other task"
    assert must in plans[task] if must else plans[task] == {}


def test_a_cell_added_after_a_code_change_is_said_to_mix_code_versions(edited_run, tmp_path):
    """With the escape hatch (`--rerun-triggers mtime input`), a cell added after the loss changed trains with the
    new code beside models of the old: the table's provenance, the front page and `compare` name it."""
    conf = yaml.safe_load(TINY.read_text())
    conf["sweeps"]["tiny"]["archs"]["fcn"]["widths"] = [16, 32, 64]
    bigger = tmp_path / "bigger.yaml"
    bigger.write_text(yaml.safe_dump(conf))
    out = edited_run / "results" / "tiny"
    shutil.copytree(out, tmp_path / "before")  # the run before the change, as a reference
    path, text = _edit(edited_run, "sts/task.py", ".mean() / power(task, d, q)", ".mean() / power(task, d, q) * 2")
    try:
        r = snakemake(edited_run, "--cores", "2", "--configfile", bigger, "--rerun-triggers", "mtime", "input")
        assert job_counts(r.stderr)["train"] == 1
        prov = json.loads((out / "provenance.json").read_text())
        assert "train" in prov["rows_from"]["mixed"]
        versions = prov["rows_from"]["stages"]["train"]["code"]
        new = min(versions, key=lambda v: v["count"])
        assert new["count"] == 2 and all("width~64" in c for c in new["cells"])
        landing = (out / "report" / "landing.rst").read_text()
        assert "These results mix code versions" in landing and "width~64" in landing
        c = subprocess.run([sys.executable, "-m", "stsq", "compare", out, tmp_path / "before"], capture_output=True,
                           text=True, env={"PYTHONPATH": str(ROOT / "workflow" / "src"), "PATH": "/usr/bin:/bin"})
        print(c.stdout)
        assert c.returncode == 1 and "MIXED: train" in c.stdout and "only in the run" in c.stdout
        # without the escape hatch, the run would retrain every model the old code made
        plan = job_counts(snakemake(edited_run, "-n", "--configfile", bigger).stdout)
        assert plan["train"] == 4
    finally:
        path.write_text(text)
