# Helpers shared by the rules: the config checks the schema cannot express,
# the (arch, q, N, width) grid, and the paths.  No rules here; no torch import.
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import Paramspace

SRC = str(Path(workflow.basedir) / "workflow" / "src")  # the stsq package, for PYTHONPATH
sys.path.insert(0, SRC)

from stsq.sweep import ConfigError, cells, check_config, eval_lengths  # noqa: E402

try:
    check_config(config)
except ConfigError as e:
    raise WorkflowError(str(e))

SWEEP_NAME = config["sweep"]
SWEEP = config["sweeps"][SWEEP_NAME]
SEEDS = [int(s) for s in SWEEP["seeds"]]
R = f"results/{SWEEP_NAME}"  # every output of this sweep lives under here

# The grid; wildcards (plain strings) are what rules pass on, never Paramspace's numpy scalars.
GRID = Paramspace(cells(SWEEP), filename_params=None)
CELL = GRID.wildcard_pattern  # arch~{arch}/q~{q}/N~{N}/width~{width}
CELLS = list(GRID.instance_patterns)


wildcard_constraints:
    arch="tf_stochastic|tf_fixed|tf_positional|fcn",
    q=r"\d+",
    N=r"\d+",
    width=r"\d+",
    seed=r"\d+",


def data_dir(w):
    return f"{R}/data/q~{w.q}/N~{w.N}"


def manifests(w):
    return [f"{data_dir(w)}/seed~{s}/manifest.json" for s in SEEDS]


def arch_setting(w, key):
    """A training setting of the cell's arch, as a plain Python value (schema defaults filled in)."""
    a = SWEEP["archs"][w.arch]
    return a.get(key, {"optimizer": "adam", "layers": 1}.get(key))


def lengths_of(w):
    return " ".join(str(L) for L in eval_lengths(SWEEP, int(w.N)))


def cell_outputs(kind):
    """Every seed's file ``kind`` (model.pt, curve.csv) of every cell."""
    return [f"{R}/models/{c}/seed~{s}/{kind}" for c in CELLS for s in SEEDS]
