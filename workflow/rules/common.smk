# Helpers shared by the rules: config validation, the (arch, q, N, width) grid,
# and the paths.  No rules here; no torch import.
import shlex
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import Paramspace, validate

SRC = str(Path(workflow.basedir) / "workflow" / "src")  # the stsq package
sys.path.insert(0, SRC)
# Every shell command finds `python -m stsq` in this checkout, in the venv or a conda env alike.
shell.prefix(f"set -euo pipefail; export PYTHONPATH={shlex.quote(SRC)}; ")

from stsq.sweep import ConfigError, cells, check_config, estimated_seconds, eval_lengths, schema_errors  # noqa: E402
from stsq.files import write_data_index  # noqa: E402

SCHEMA = str(Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml")


def validate_config(config):
    """The JSON schema (snakemake.utils.validate, which also fills its defaults), then the
    cross-key checks; any error names the key and stops before a job runs."""
    try:
        validate(config, SCHEMA)
    except WorkflowError:
        lines = schema_errors(config, SCHEMA) or ["(see the validator's message above)"]
        raise WorkflowError("Invalid config (schema: workflow/schemas/config.schema.yaml):\n  "
                            + "\n  ".join(lines)) from None
    try:
        check_config(config)
    except ConfigError as e:
        raise WorkflowError(f"Invalid config: {e}") from None


def cell_priority(w):
    return PRIORITY[CELL.format(**w)]


def arch_args(w):
    """The training settings of the cell's arch as CLI arguments (the schema filled in the defaults)."""
    return ARCH_ARGS[w.arch]


def lengths_of(w):
    return " ".join(str(L) for L in eval_lengths(SWEEP, int(w.N)))


def cell_outputs(kind):
    """Every seed's file ``kind`` (model.pt, curve.csv) of every cell."""
    return [f"{R}/models/{c}/seed~{s}/{kind}" for c in CELLS for s in SEEDS]


def figure_rule_output(name):
    """The PDF and the PNG (shown in the report, with its caption) of one figure."""
    return {
        "pdf": f"{R}/figures/{name}.pdf",
        "png": report(
            f"{R}/figures/{name}.png",
            caption=f"../report/{name}.rst",
            category="Figures",
            labels={"figure": name.replace("_", " ")},
        ),
    }
