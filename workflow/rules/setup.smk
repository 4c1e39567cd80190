# Read first, by every sweep: the package on the path, the shell's prefix, the config's validation.
# No torch import here.
import json
import os
import re
import shlex
import shutil
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

SRC = str(Path(workflow.basedir) / "workflow" / "src")  # the stsq package
sys.path.insert(0, SRC)
# Every shell command finds `python -m stsq` in this checkout, in the venv or a conda env alike.
shell.prefix(f"set -euo pipefail; export PYTHONPATH={shlex.quote(SRC)}; ")

from stsq.provenance.codehash import stage_hash  # noqa: E402  the hash of the code a rule's command runs (its params.code)
from stsq.config import ConfigError, validate_config  # noqa: E402
from stsq.core.measures import measure_of  # noqa: E402  what the sweep measures: its front half's rules, its back half
from stsq.provenance.sidecars import sidecar  # noqa: E402  a result's <stem>.provenance.json
from stsq.cluster import requests as cluster  # noqa: E402  what a cluster job asks for, the partition file, the packs
from stsq.cluster import cost  # noqa: E402  every job's estimated time and memory, the cost said before a run


# The schema (names and defaults from stsq.core.experiment), then the cross-key checks; any error names the key and
# stops before a job runs.
try:
    validate_config(config, Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml")
except ConfigError as e:
    raise WorkflowError(f"Invalid config: {e}") from None

# The chosen sweep's task and what its sweeps measure (stsq.core.measures): the Snakefile includes that measure's rules.
TASK = config["sweeps"][config["sweep"]]["task"]
MEASURE = measure_of(TASK)


def stage_code(command, key=None):
    """The hash of the code ``python -m stsq <command>`` runs in a sweep of this task (a rule's ``params.code``):
    of the registries, only this task's entries (stsq.provenance.codehash), so an edit of another task's code reruns nothing."""
    return stage_hash(command, key, task=TASK)


# -- cluster limits: each job asks for a runtime from its own estimate (stsq.cluster.requests.runtime_request_min),
# growing with every retry and capped at the longest partition of the Slurm partition file the run names
# (`slurm-partition-config` in the profile or on the command line, read from the Slurm executor's settings, or
# $SNAKEMAKE_SLURM_PARTITIONS; docs/cluster.md).  The profiles set no runtime of their own for these.
_MAX_RUNTIME = []


def max_runtime_min():
    """The longest `max_runtime` (minutes) of the run's Slurm partition file (stsq.cluster.requests.partition_file),
    or None (a local run, or a partition without a limit)."""
    if not _MAX_RUNTIME:
        setting = getattr(getattr(workflow, "executor_settings", None), "partition_config", None)
        _MAX_RUNTIME.append(cluster.longest_partition_min(cluster.partition_file(setting, os.environ)))
    return _MAX_RUNTIME[0]


# The back half's figure rules (report.smk): each figure's files, from the paths and figures its measure's rule file
# sets (PATHS, DRAWN).
def figure_output(name):
    """The PDF, the PNG (shown in the report where this sweep draws it) and its caption, written from the claims
    table with the figure (read by the report when it is built)."""
    png = PATHS.figure(name, "png")
    if name in DRAWN:
        png = report(
            png,
            caption=os.path.abspath(PATHS.caption(name)),
            category="Figures",
            # the report lists figures sorted by this label: numbered, they come in reading order
            labels={"figure": f"{DRAWN.index(name) + 1}. {name}"},
        )
    return {"pdf": PATHS.figure(name, "pdf"), "png": png, "caption": PATHS.caption(name)}
