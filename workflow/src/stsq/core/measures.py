"""The measures: what a sweep measures per cell, one record each (no torch: it runs at DAG-parse time).

A task (stsq.core.tasks.Task) names its measure in ``Task.measure``.  A measure is everything that differs between a
sweep that measures the width each model needs (STS_q's) and one that measures the samples it needs (sparse token
retrieval's): the rule file of its front half (the jobs per cell and its tables), its cell record and grid, its
runner and pilot, its tables and how its claims read them, the modules whose claims it judges and its judge, the
words of its claims page, and its section of the front page (``FRONT_PAGES``).  The back half is shared: the figure
rules, one ``claims`` rule and one ``landing`` rule (workflow/rules/report.smk), one ``figure``, ``claims`` and
``landing`` command.  No other module spells a measure's name: each reads its record here.

Every field that names code is a string ``"stsq.<module>:<name>"``: this module imports none of it, and the code
hash (stsq.provenance.codehash) follows the strings of the sweep's own measure only, so an edit of one measure's code
reruns no job of the other's.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Measure:
    name: str
    about: str  # one line for the docs
    rules: str  # the rule file of its front half, under workflow/rules/ (it sets the back half's inputs)
    schema: str  # its sweeps' entry of $defs in workflow/schemas/config.schema.yaml (their keys)
    check: str  # "module:function": (config with its sweeps only) -> None, the cross-key checks (ConfigError)
    cell: str  # "module:Class": its cell record (from_json names a missing or an unknown key)
    grid: str  # "module:function": sweep (dict) -> its cell records, in the config's order
    runner: str  # the command that runs one cell, every seed (`python -m stsq <runner>`)
    pilot: str  # "module:function": (real sweep, name, root, partition limit) -> its pilot's rows, start, words
    aggregate: str  # "module:function": the aggregate command's arguments -> its tables, written with their checksums
    read_table: str  # "module:function": (table path, oracle path or None) -> (table, oracle) its claims read
    claims: tuple[str, ...]  # the modules whose Claim records its sweeps judge, in the table's order
    judge: str  # "module:function": (table, oracle, task) -> the claims table (stsq.claims.judge.evaluate_claims)
    columns: str  # "module:NAME": the claims page's paragraph on its columns
    checks: bool  # whether its claims page lists the pipeline's checks apart


MEASURES: dict[str, Measure] = {m.name: m for m in [
    Measure("width", "the width each model needs: training per width, evaluation at every N', the widths needed",
            rules="width.smk", schema="sweep", check="stsq.config:check_width_sweeps",
            cell="stsq.core.experiment:CellRecord", grid="stsq.core.sweep:cell_records", runner="train",
            pilot="stsq.cluster.pilot:width_pilot", aggregate="stsq.cli:aggregate_widths",
            read_table="stsq.width.tables:read_claims_input",
            claims=("stsq.claims.learning", "stsq.claims.length", "stsq.claims.width", "stsq.claims.checks",
                    "stsq.claims.separations"),
            judge="stsq.claims.judge:judge_widths", columns="stsq.claims.table:WIDTH_COLUMNS_TEXT", checks=True),
    Measure("samples", "the samples each model needs until its test loss falls below a threshold (stsq.samples.run)",
            rules="samples.smk", schema="samples_sweep", check="stsq.config:check_samples_sweeps",
            cell="stsq.retrieval.cells:SampleCell", grid="stsq.retrieval.cells:sample_cells", runner="samples",
            pilot="stsq.cluster.pilot:samples_pilot", aggregate="stsq.cli:aggregate_samples",
            read_table="stsq.samples.table:read_claims_input",
            claims=("stsq.claims.retrieval",),
            judge="stsq.claims.judge:judge_table", columns="stsq.claims.table:SAMPLES_COLUMNS_TEXT", checks=False),
    # a new measure: one record here, its rule file and the functions it names (docs/extending.md)
]}


# Each measure's section of the report's front page: "module:function": (sweep name, sweep dict, claims,
# {table name: path}, provenance) -> reStructuredText.  Apart from its record, so that the words of a front page
# rerun the front page only, not the claims that read the record (stsq.provenance.codehash), as a figure's style is
# apart
# from its arch's record.
FRONT_PAGES: dict[str, str] = {
    "width": "stsq.report.pages:width_landing",
    "samples": "stsq.report.retrieval:samples_landing",
}


# Each measure's chance level: "module:function": (task, N, q, d) -> the loss a model that learned nothing scores on
# one drawn batch, as the measure reads losses; 1 where the task's normalization is right
# (stsq.core.guards.check_chance_level).  Apart from the record, as the front pages are: no job reads it, so adding
# it reran none.
CHANCE_LEVELS: dict[str, str] = {
    "width": "stsq.width.evaluate:chance_level",
    "samples": "stsq.samples.run:chance_level",
}


def resolve(spec: str):
    """The object a ``"module:name"`` string names (the module imported on demand)."""
    module, name = spec.split(":")
    return getattr(importlib.import_module(module), name)


def measure_of(task: str) -> Measure:
    """The measure of a task's sweeps (``Task.measure``)."""
    from stsq.core.tasks import TASKS
    return MEASURES[TASKS[task].measure]


def measure_of_sweep(sweep: dict) -> Measure:
    """The measure of a sweep of config.yaml (its ``task``, STS_q's where it names none)."""
    from stsq.core.tasks import DEFAULT_TASK
    return measure_of(sweep.get("task", DEFAULT_TASK))


def tasks_measuring(measure: str) -> list[str]:
    """The tasks whose sweeps measure ``measure``, in the order of TASKS."""
    from stsq.core.tasks import TASKS
    return [t for t in TASKS if TASKS[t].measure == measure]


def scope(task: str) -> tuple[str, ...]:
    """The registry entries a sweep of ``task`` reads: the task, its measure and its measure's figures, its archs
    and their families.  The code hash (stsq.provenance.codehash) keeps only these entries of each registry, so no other
    task's entries reach its jobs."""
    from stsq.core.experiment import ARCHS, archs_of
    from stsq.core.figure_catalog import figures_of
    archs, measure = archs_of(task), measure_of(task).name
    return tuple(dict.fromkeys([task, measure, *figures_of(measure, task), *archs, *(ARCHS[a].family for a in archs)]))
