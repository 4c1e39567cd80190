"""Command line: ``python -m stsq {data,train,evaluate,oracle,aggregate,critical,figure,claims} --help``.

The workflow's rules call these.  Each command parses its arguments and calls
one library function; the names and defaults come from ``stsq.core.experiment``.
torch is imported only by the commands that need it (data, train, evaluate).
A ``PipelineError`` (bad file, divergence, ...) is reported as one line.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from stsq.core import claim_records as cl
from stsq.core import experiment as ex
from stsq.core.errors import PipelineError
from stsq.core.tasks import DEFAULT_TASK, TASKS

log = logging.getLogger("stsq")


def _setup(threads: int | None = None):
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S",
                        stream=sys.stderr, force=True)
    if threads is not None:
        import torch
        torch.set_num_threads(given_threads(threads))


def given_threads(asked: int) -> int:
    """The threads a job runs torch on: what it was asked to (Snakemake's ``{threads}``), at most the cores
    this process may run on (Slurm's allocation, a taskset), at least 1."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(int(asked), cores))


def _device(name: str):
    from stsq.cluster.gpus import pick_device  # auto: a GPU slot of this job's own (stsq.cluster.gpus), else the CPU
    return pick_device(name, log=log.info)


def cmd_data(a):
    _setup(a.threads)
    from stsq.core.files import write_data_index
    from stsq.sts.data import write_data
    if len(a.seeds) != len(a.manifests):
        raise SystemExit(f"--seeds ({len(a.seeds)}) and --manifests ({len(a.manifests)}) must pair up one to one")
    for seed, manifest in zip(a.seeds, a.manifests):
        m = write_data(manifest, q=a.q, N=a.N, d=a.d, seed=seed, eval_lengths=a.eval_lengths, n_eval=a.n_eval,
                       task=a.task)
        log.info("seed %d: wrote %d evaluation sets (n=%d, N'=%s) and the manifest to %s",
                 seed, len(m["eval_sets"]), a.n_eval, ",".join(m["eval_sets"]), manifest)
    write_data_index(a.manifests, a.index, q=a.q, N=a.N)
    from stsq.provenance import sidecars as provenance
    provenance.write(a.index, "data", what="the seed manifests and evaluation sets of this index")
    log.info("indexed %d seed manifests of q=%d N=%d d=%d in %s", len(a.manifests), a.q, a.N, a.d, a.index)


def cmd_train(a):
    _setup(a.threads)
    from stsq.width.train import train_cell
    record = _cell_record(a.cell)
    device = _device(a.device)
    import torch
    log.info("training the cell %s, seeds %s on %s, %d thread(s) (python %s): %s", record.path, a.seeds, device,
             torch.get_num_threads(), sys.executable, record.to_json())
    train_cell(record, a.seeds, a.data_index, a.models, a.curves, a.checkpoint_dir, device=device, log=log.info)


def _cell_record(text: str):
    """The ``--cell`` argument: a cell record as JSON text, or the path of a JSON file holding one."""
    from pathlib import Path
    source = "--cell"
    if not text.lstrip().startswith("{"):
        source, text = text, Path(text).read_text()
    try:
        return ex.CellRecord.from_json(text, source)
    except ValueError as e:  # a CellRecordError names the keys; a JSONDecodeError the position
        raise SystemExit(f"stsq train: {source}: {e}") from None


def cmd_evaluate(a):
    _setup(a.threads)
    from stsq.core.files import write_rows
    from stsq.width.evaluate import evaluate_cell
    device = _device(a.device)
    rows = evaluate_cell(a.models, a.data_index, a.eval_lengths, device, log=log.info,
                         projection_samples=a.projection_samples)
    write_rows(a.out, rows, ex.TABLE_COLUMNS)
    from stsq.provenance import sidecars as provenance
    provenance.write(a.out, "evaluate", device=device)


def cmd_oracle(a):
    _setup(a.threads)
    from stsq.core.files import write_rows
    from stsq.sts.oracle import oracle_rows
    rows, device = [], _device(a.device)
    if TASKS[a.task].oracle is None:  # no ground-truth family: the table has its columns and no row
        log.info("the task %s has no oracle: an empty table", a.task)
    for d_e in a.d_e if TASKS[a.task].oracle is not None else ():
        rows += oracle_rows(a.q, a.N, d_e, a.eval_lengths, n=a.samples, query=a.query, device=device)
        for r in rows[-len(a.eval_lengths):]:
            log.info("oracle q=%d N=%d d_e=%d N'=%d: %.4f (c %.3g, v %.3g, +- %.1e)", a.q, a.N, d_e, r["N_eval"],
                     r[ex.LOSS], r["c"], r["v"], r["standard_error"])
    write_rows(a.out, rows, ex.ORACLE_COLUMNS)
    from stsq.provenance import sidecars as provenance
    provenance.write(a.out, "oracle", device=device)


def cmd_aggregate(a):
    _setup()
    from stsq.core.measures import measure_of, resolve
    resolve(measure_of(a.task).aggregate)(a)  # the tables of the sweep's measure (stsq.core.measures)


def _needs(a, *options):
    missing = [f"--{o.replace('_', '-')}" for o in options if not getattr(a, o)]
    if missing:
        raise SystemExit(f"stsq aggregate --task {a.task}: {', '.join(missing)} required")


def aggregate_widths(a):
    """The width measure's tables: the tidy table of every evaluation and training curve, and the oracle table."""
    _needs(a, "evals", "curves")
    from stsq.width.tables import build_metrics_table, build_oracle_table, write_table
    table = build_metrics_table(a.evals, a.curves)
    write_table(table, a.out)
    log.info("wrote %d rows to %s", len(table), a.out)
    if a.oracle_out:
        oracle = build_oracle_table(a.oracles)
        write_table(oracle, a.oracle_out)
        log.info("wrote %d oracle rows to %s", len(oracle), a.oracle_out)
    from stsq.provenance import sidecars as provenance
    rows_from = provenance.summarize({"train": [Path(c).with_name(ex.MODEL) for c in a.curves],
                                      "evaluate": a.evals, "oracle": a.oracles or []})
    provenance.write(a.out, "aggregate", rows_from=rows_from)
    if a.oracle_out:
        provenance.write(a.oracle_out, "aggregate", rows_from={**rows_from, "stages": {
            "oracle": rows_from["stages"]["oracle"]}, "mixed": [m for m in rows_from["mixed"] if m == "oracle"]})
    for line in provenance.words({"rows_from": rows_from}):
        log.info("provenance: %s", line)


def _table_provenance(a, command: str) -> None:
    """The sidecar of a table made from the tidy table: this command's code, and the rows' origin (the tidy
    table's own sidecar)."""
    from stsq.provenance import sidecars as provenance
    source = provenance.read(a.table)
    provenance.write(a.out if hasattr(a, "out") else a.out_csv, command,
                     rows_from=source.get("rows_from") if source else None)


def cmd_figure(a):
    _setup()
    from stsq.claims.judge import read_claims_input
    from stsq.core.figure_catalog import FIGURES as CATALOG
    from stsq.report.figures import FIGURES
    from stsq.report.legibility import save_figure
    if a.name not in FIGURES:
        raise SystemExit(f"stsq figure: no figure {a.name!r}; the figures are {', '.join(FIGURES)}")
    table, oracle = read_claims_input(a.task, a.table, a.oracle)  # its measure's tables, checked (stsq.core.measures)
    fig = FIGURES[a.name](table, oracle, position_range=a.position_range)
    if a.caption:  # from the figure as drawn, before it is saved and closed
        import pandas as pd

        from stsq.core.files import atomic_write_text
        from stsq.core.measures import resolve
        from stsq.report.pages import caption
        encodings = None
        if getattr(fig, "stsq_selection", None):
            from stsq.width.tables import encodings_table
            enc = encodings_table(table, a.position_range)
            encodings = enc[(enc[list(fig.stsq_selection)] == pd.Series(fig.stsq_selection)).all(axis=1)]
        write = resolve(CATALOG[a.name].caption) if CATALOG[a.name].caption else caption
        atomic_write_text(a.caption, write(a.name, fig, pd.read_csv(a.claims), a.sweep, encodings))
    save_figure(fig, a.out)
    log.info("wrote %s", ", ".join([*a.out, *([a.caption] if a.caption else [])]))


def _sweep_provenance(a, command: str) -> dict:
    """Every table's sidecar and the rows' origin, in one file the front page shows (--provenance-out)."""
    import json

    from stsq.core.files import atomic_write_text
    from stsq.provenance import sidecars as provenance
    summary = provenance.sweep_summary(dict(zip(a.table_names, a.tables)))
    summary["landing"] = provenance.describe(command)
    atomic_write_text(a.provenance_out, json.dumps(summary, indent=1, sort_keys=True) + "\n")
    return summary


def cmd_landing(a):
    _setup()
    import json

    import pandas as pd

    from stsq.core.files import atomic_write_text
    from stsq.core.measures import FRONT_PAGES, measure_of_sweep, resolve
    sweep = json.loads(a.sweep_json)
    summary = _sweep_provenance(a, "landing") if a.provenance_out else None
    writer = resolve(FRONT_PAGES[measure_of_sweep(sweep).name])  # the front page of the sweep's measure
    text = writer(a.sweep, sweep, pd.read_csv(a.claims), dict(zip(a.table_names, a.tables)), summary)
    atomic_write_text(a.out, text)
    log.info("wrote %s", a.out)


def cmd_critical(a):
    _setup()
    from stsq.core.files import write_rows
    from stsq.width.critical import CRITICAL_COLUMNS, critical_widths
    from stsq.width.tables import read_metrics_table
    crit = critical_widths(read_metrics_table(a.table))
    write_rows(a.out, crit.to_dict("records"), CRITICAL_COLUMNS)
    counts = crit[crit["epsilon"] == cl.EPSILON]["censored"].value_counts().to_dict()
    log.info("wrote %d critical widths to %s (at eps %g, censored: %s)", len(crit), a.out, cl.EPSILON, counts)
    _table_provenance(a, "critical")


def cmd_encodings(a):
    _setup()
    from stsq.core.files import write_rows
    from stsq.width.tables import encodings_table, read_metrics_table
    enc = encodings_table(read_metrics_table(a.table), a.position_range)
    write_rows(a.out, enc.to_dict("records"), ex.ENCODING_COLUMNS)
    log.info("wrote %d rows (%d archs) to %s", len(enc), enc["arch"].nunique(), a.out)
    _table_provenance(a, "encodings")


def cmd_reach(a):
    _setup()
    from stsq.core.files import write_rows
    from stsq.width.critical import critical_widths
    from stsq.width.reach import REACH_COLUMNS, needs_at_epsilon, reach_table
    from stsq.width.tables import read_metrics_table, read_oracle_table
    table = read_metrics_table(a.table)
    reach = reach_table(table, read_oracle_table(a.oracle), needs_at_epsilon(critical_widths(table)))
    write_rows(a.out, reach.to_dict("records"), REACH_COLUMNS)
    log.info("wrote %d reach rows (%d final) to %s", len(reach), int(reach["final"].sum()), a.out)
    _table_provenance(a, "reach")


def cmd_pilot_train(a):
    _setup(a.threads)
    from stsq.cluster.pilot import train_pilot
    records = [_cell_record(c) for c in a.cell]
    if len(a.estimated_mb) != len(records):
        raise SystemExit(f"--estimated-mb ({len(a.estimated_mb)}) and --cell ({len(records)}) must pair up")
    budgets = a.budget_s or [0.0] * len(records)
    if len(budgets) != len(records):
        raise SystemExit(f"--budget-s ({len(budgets)}) and --cell ({len(records)}) must pair up")
    train_pilot(records, a.estimated_mb, a.sweep, a.seeds, a.data_index, a.out, device=_device(a.device),
                log=log.info, budgets_s=budgets)


def cmd_pilot(a):
    _setup()
    import json

    from stsq.cluster.pilot import PILOT_COLUMNS, summary
    from stsq.core.files import atomic_write_text, write_rows
    from stsq.core.measures import measure_of_sweep, resolve
    real = json.loads(a.sweep_config)
    limit = a.max_runtime_min or None
    rows, start, timed = resolve(measure_of_sweep(real).pilot)(real, a.sweep, ".", limit)  # its measure's pilot
    write_rows(a.out_csv, rows, PILOT_COLUMNS)
    text = summary(rows, start, a.sweep, limit, a.retries, timed)
    atomic_write_text(a.out_txt, text)
    log.info("wrote %d rows to %s\n%s", len(rows), a.out_csv, text)


def cmd_claims(a):
    _setup()
    from stsq.claims.judge import evaluate_claims, read_claims_input
    from stsq.claims.table import write_claims
    table, oracle = read_claims_input(a.task, a.table, a.oracle)  # its measure's tables, checked (stsq.core.measures)
    claims = evaluate_claims(table, oracle, a.task)
    write_claims(claims, a.out_csv, a.out_html, a.out_md)
    _table_provenance(a, "claims")
    for c in claims.itertuples():
        log.info("%s %s q=%s N=%s: %s", c.verdict, c.claim, c.q, c.N, c.measured)


def cmd_samples(a):
    _setup(a.threads)
    import torch

    from stsq.core.measures import measure_of, resolve
    from stsq.samples.run import samples_cell
    text = a.cell if a.cell.lstrip().startswith("{") else Path(a.cell).read_text()
    try:  # the cell record of the task's measure (stsq.core.measures: ``cell``): exactly its keys
        record = resolve(measure_of(a.task).cell).from_json(text, "--cell")
    except ValueError as e:  # a CellRecordError names the keys; a JSONDecodeError the position
        raise SystemExit(f"stsq samples: {e}") from None
    device = _device(a.device)
    log.info("samples to thresholds %s of the cell %s, seeds %s on %s, %d thread(s): %s",
             list(record.thresholds), record.path, a.seeds, device, torch.get_num_threads(), record.to_json())
    rows = samples_cell(record, a.seeds, a.out, a.checkpoint_dir, device=device, log=log.info)
    for r in rows:
        log.info("seed %d, threshold %g: %s%d samples", r["seed"], r["threshold"], ">= " if r["censored"] else "",
                 r["samples"])
    from stsq.provenance import sidecars as provenance
    provenance.write(a.out, "samples", device=device, threads=torch.get_num_threads())


def aggregate_samples(a):
    """The samples measure's tables: every cell's rows in one table, and the slopes in log N, each checked."""
    _needs(a, "cells", "slopes_out")
    from stsq.samples.table import read_samples, slopes, write_checked
    table = read_samples(a.cells)
    write_checked(table, a.out)
    write_checked(slopes(table), a.slopes_out)
    log.info("wrote %d rows to %s and the slopes to %s", len(table), a.out, a.slopes_out)
    from stsq.provenance import sidecars as provenance
    rows_from = provenance.summarize({"samples": a.cells})
    provenance.write(a.out, "aggregate", rows_from=rows_from)
    provenance.write(a.slopes_out, "aggregate", rows_from=rows_from)


def cmd_quote(a):
    _setup()
    from stsq.report import quote
    text = quote.block(Path(a.tables or Path(ex.Layout(a.sweep).table).parent), a.parts)
    changed = quote.write(Path(a.doc), a.sweep, text, check=a.check)
    log.info("%s: the '%s' block %s", a.doc, a.sweep, "rewritten from this run" if changed else "quotes this run")


def cmd_compare(a):
    _setup()
    from stsq.report.reference import compare, summary
    c = compare(Path(a.run), Path(a.reference))
    print(summary(c, a.run, a.reference), flush=True)
    if not c.ok:
        raise SystemExit(1)


def cmd_freeze(a):
    _setup()
    from stsq.report.reference import freeze
    for path in freeze(Path(a.run), Path(a.reference)):
        log.info("wrote %s", path)


# Each command is a pair: its function ``cmd_<name>`` and its arguments ``args_<name>``, registered by
# ``@arguments``.  The parser is built from the registry, so the code hash of a command (stsq.provenance.codehash)
# reaches its
# own arguments and not another command's.
PARSERS: dict = {}  # command name -> (function, its arguments' function, help, torch options)


def arguments(name: str, func, help: str, torch_options: bool = False):
    """Registers the decorated ``fn(subparser)`` as the arguments of command ``name``, which runs ``func``."""
    def register(fn):
        PARSERS[name] = (func, fn, help, torch_options)
        return fn
    return register


def data_index_option(sp):
    sp.add_argument("--data-index", required=True, help="the (q, N, d)'s index.json of seed manifests")


@arguments("data", cmd_data,
           help="seed manifests and fixed evaluation sets of one (q, N, d), every seed, and their index",
           torch_options=True)
def args_data(sp):
    for k in ("q", "N", "d"):
        sp.add_argument(f"--{k}", type=int, required=True)
    sp.add_argument("--seeds", type=int, nargs="+", required=True)
    sp.add_argument("--eval-lengths", type=int, nargs="+", required=True, help="the lengths N' (N included)")
    sp.add_argument("--n-eval", type=int, required=True, help="samples per evaluation set")
    sp.add_argument("--task", default=DEFAULT_TASK, help="the task whose samples it draws (stsq.core.tasks)")
    sp.add_argument("--manifests", nargs="+", required=True,
                    help="each seed's manifest to write (in --seeds order); its sets eval_x<factor>.pt go beside it")
    sp.add_argument("--index", required=True, help="index.json: every manifest with its SHA-256")


@arguments("train", cmd_train, help="train every seed of one cell (its record: axes and every training setting)",
           torch_options=True)
def args_train(sp):
    sp.add_argument("--cell", required=True,
                    help="the cell's record as JSON (or a .json file of it) with exactly the keys "
                         + ", ".join(ex.CellRecord.keys()) + " (stsq.core.experiment.CellRecord)")
    sp.add_argument("--seeds", type=int, nargs="+", required=True)
    data_index_option(sp)
    sp.add_argument("--models", nargs="+", required=True, help="model.pt to write, one per seed, in --seeds order")
    sp.add_argument("--curves", nargs="+", required=True, help="curve.csv to write, one per seed")
    sp.add_argument("--checkpoint-dir", required=True, help="seed~S/last.pt, resumed from on restart")


@arguments("evaluate", cmd_evaluate, help="score trained models of one (q, N, d) at every length N'",
           torch_options=True)
def args_evaluate(sp):
    sp.add_argument("--models", nargs="+", required=True, help="trained model.pt files (any arch, budget, width, seed)")
    data_index_option(sp)
    sp.add_argument("--eval-lengths", type=int, nargs="+", required=True)
    sp.add_argument("--projection-samples", type=int, default=ex.DEFAULTS["projection_samples"],
                    help="samples per model and N' of the projection onto the ground-truth family")
    sp.add_argument("--out", required=True, help="tidy CSV")


@arguments("oracle", cmd_oracle, help="the ground-truth family's best loss at every N' of one (q, N), at each d_e",
           torch_options=True)
def args_oracle(sp):
    for k in ("q", "N"):
        sp.add_argument(f"--{k}", type=int, required=True)
    sp.add_argument("--d-e", type=int, nargs="+", required=True, help="the widths d_e")
    sp.add_argument("--eval-lengths", type=int, nargs="+", required=True)
    sp.add_argument("--query", default=ex.DEFAULTS["query"], choices=ex.QUERIES)
    sp.add_argument("--task", default=DEFAULT_TASK, help="the sweep's task: one without an oracle gets no row")
    sp.add_argument("--samples", type=int, default=ex.DEFAULTS["oracle_samples"], help="Monte Carlo samples per N'")
    sp.add_argument("--out", required=True)


@arguments("aggregate", cmd_aggregate,
           help="a sweep's tables from its jobs' files: the tidy table (widths), the samples table (samples)")
def args_aggregate(sp):
    sp.add_argument("--task", default=DEFAULT_TASK, help="the sweep's task: its measure's tables (stsq.core.measures)")
    sp.add_argument("--evals", nargs="+", help="the width measure's: every (q, N, d)'s evaluation.csv")
    sp.add_argument("--curves", nargs="+", help="the width measure's: seed~S/curve.csv files under models/<cell>/")
    sp.add_argument("--cells", nargs="+", help="the samples measure's: every cell's samples.csv")
    sp.add_argument("--slopes-out", help="the samples measure's: tables/slopes.csv")
    sp.add_argument("--out", required=True, help="tables/metrics.csv (widths), tables/samples.csv (samples)")
    sp.add_argument("--oracles", nargs="*", default=[], help="oracle CSVs (stsq oracle), joined into --oracle-out")
    sp.add_argument("--oracle-out")


@arguments("figure", cmd_figure, help="draw one figure from the metrics table")
def args_figure(sp):
    sp.add_argument("name", help="a figure's name (stsq.core.figure_catalog.FIGURES)")
    sp.add_argument("--table", required=True, help="the table its measure draws from (stsq.core.measures)")
    sp.add_argument("--oracle", help="tables/oracle.csv, where the measure has one")
    sp.add_argument("--task", default=DEFAULT_TASK, help="the sweep's task: the measure whose tables it reads")
    sp.add_argument("--out", nargs="+", required=True, help="files to write (.pdf, .png)")
    sp.add_argument("--position-range", type=int, default=None, help="L of randomized positions, marked where drawn")
    sp.add_argument("--claims", help="tables/claims.csv: the caption's results (with --caption)")
    sp.add_argument("--caption", help="the caption to write (reStructuredText, for the report)")
    sp.add_argument("--sweep", default="", help="the sweep's name (the caption names the commands of other sweeps)")


@arguments("landing", cmd_landing, help="the report's front page for a sweep (reStructuredText)")
def args_landing(sp):
    sp.add_argument("--claims", required=True, help="tables/claims.csv")
    sp.add_argument("--sweep", required=True, help="the sweep's name")
    sp.add_argument("--sweep-json", required=True, help="the sweep's config, as JSON")
    sp.add_argument("--out", required=True)
    sp.add_argument("--tables", nargs="*", default=[], help="the sweep's tables, whose sidecars the summary reads")
    sp.add_argument("--table-names", nargs="*", default=[], help="their names, in --tables order")
    sp.add_argument("--provenance-out", help="the sweep's provenance.json to write")


@arguments("reach", cmd_reach, help="the longest N' within the bound per model and checkpoint (tables/reach.csv)")
def args_reach(sp):
    sp.add_argument("--table", required=True, help="tables/metrics.csv")
    sp.add_argument("--oracle", required=True, help="tables/oracle.csv")
    sp.add_argument("--out", required=True, help="tables/reach.csv")


@arguments("encodings", cmd_encodings, help="every positional encoding's loss at every N' (tables/encodings.csv)")
def args_encodings(sp):
    sp.add_argument("--table", required=True)
    sp.add_argument("--position-range", type=int, default=None, help="L of randomized positions")
    sp.add_argument("--out", required=True, help="tables/encodings.csv")


@arguments("critical", cmd_critical, help="the width each model needs to reach each target loss (stsq.width.critical)")
def args_critical(sp):
    sp.add_argument("--table", required=True)
    sp.add_argument("--out", required=True, help="tables/critical.csv")


@arguments("pilot-train", cmd_pilot_train,
           help="a pilot's training of one (q, N, d): every cell in one process, each timed",
           torch_options=True)
def args_pilot_train(sp):
    sp.add_argument("--sweep", required=True, help="the pilot sweep's name (its results/<name>/)")
    sp.add_argument("--cell", required=True, action="append",
                    help="one cell's record, as `stsq train --cell` takes it (JSON, or a .json file of it); once per "
                         "cell of the (q, N, d), in the order they train")
    sp.add_argument("--estimated-mb", type=int, nargs="+", required=True,
                    help="each cell's estimated peak memory, in --cell order (stsq.cluster.cost.estimated_memory_mb)")
    sp.add_argument("--budget-s", type=float, nargs="+",
                    help="each cell's seconds of its step timed alone (0: none), in --cell order "
                         "(stsq.cluster.pilot.step_budget_s)")
    sp.add_argument("--seeds", type=int, nargs="+", required=True)
    data_index_option(sp)
    sp.add_argument("--out", required=True, help="each cell's timing and peak memory (CSV)")


@arguments("pilot", cmd_pilot, help="a pilot's timings and the real sweep's extrapolated cost (stsq.cluster.pilot)")
def args_pilot(sp):
    sp.add_argument("--sweep", required=True, help="the real sweep's name (the pilot is <name>_pilot)")
    sp.add_argument("--sweep-config", required=True, help="the real sweep's settings, as JSON")
    sp.add_argument("--max-runtime-min", type=float, default=0, help="the longest partition's limit (0: none)")
    sp.add_argument("--retries", type=int, default=0)
    sp.add_argument("--out-csv", required=True)
    sp.add_argument("--out-txt", required=True)


@arguments("claims", cmd_claims, help="the claims table: measured value, threshold, verdict")
def args_claims(sp):
    sp.add_argument("--table", required=True, help="the table its task's measure judges (stsq.core.measures)")
    sp.add_argument("--oracle", help="tables/oracle.csv, where the measure's claims read one")
    sp.add_argument("--out-csv", required=True)
    sp.add_argument("--out-html", required=True)
    sp.add_argument("--out-md", required=True,
                    help="tables/claims.md: one row per claim (stsq.claims.table.claims_digest)")
    sp.add_argument("--task", default=DEFAULT_TASK,
                    help="the sweep's task (stsq.core.tasks): a claim that reads what the task has not says NOT TESTED")


@arguments("samples", cmd_samples,
           help="samples to each threshold of one cell of a samples sweep (stsq.samples.run), every seed",
           torch_options=True)
def args_samples(sp):
    sp.add_argument("--cell", required=True, help="the cell's record as JSON, or a .json file of it "
                                                  "(stsq.retrieval.cells.SampleCell)")
    sp.add_argument("--task", required=True, help="the sweep's task: its measure's cell record (stsq.core.measures)")
    sp.add_argument("--seeds", type=int, nargs="+", required=True)
    sp.add_argument("--out", required=True, help="the cell's rows (CSV): one per seed and threshold")
    sp.add_argument("--checkpoint-dir", required=True, help="seed~S/last.pt, resumed from on restart")


@arguments("quote", cmd_quote, help="the numbers a doc quotes, from a run's tables (stsq.report.quote)")
def args_quote(sp):
    sp.add_argument("--sweep", required=True, help="the sweep whose block it writes")
    sp.add_argument("--tables", help="its tables directory (default results/<sweep>/tables)")
    sp.add_argument("--parts", nargs="+", default=["digest"], help="digest, needs, losses (stsq.report.quote.PARTS)")
    sp.add_argument("--doc", default="docs/claims.md")
    sp.add_argument("--check", action="store_true", help="only compare: fail where the block differs")


@arguments("compare", cmd_compare,
           help="a finished run against a reference: verdicts, numbers within tolerance, provenance; exits 1 where "
                "they differ (stsq.report.reference)")
def args_compare(sp):
    sp.add_argument("run", help="the run's folder, results/<sweep>")
    sp.add_argument("reference", help="the reference's folder, reference/<sweep>")


@arguments("freeze", cmd_freeze, help="write a reference folder from a finished run's small tables and provenance")
def args_freeze(sp):
    sp.add_argument("run", help="the run's folder, results/<sweep>")
    sp.add_argument("reference", help="the folder to write, reference/<sweep>")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m stsq", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    for name, (func, add_arguments, help, torch_options) in PARSERS.items():
        sp = sub.add_parser(name, help=help)
        if torch_options:
            sp.add_argument("--device", default="auto", help="auto (CUDA when present, else CPU), cpu, cuda, cuda:1")
            sp.add_argument("--threads", type=int, default=int(os.environ.get("STSQ_THREADS", 1)),
                            help="CPU threads for torch (default 1)")
        add_arguments(sp)
        sp.set_defaults(func=func)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except PipelineError as e:
        log.error("%s", e)
        return e.exit_code
    return 0
