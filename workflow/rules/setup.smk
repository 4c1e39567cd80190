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

from stsq.codehash import stage_hash  # noqa: E402  the hash of the code a rule's command runs (its params.code)
from stsq.config import ConfigError, measures_samples, validate_config  # noqa: E402
from stsq.provenance import sidecar  # noqa: E402  a result's <stem>.provenance.json


# The schema (names and defaults from stsq.experiment), then the cross-key checks; any error names the key and
# stops before a job runs.
try:
    validate_config(config, Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml")
except ConfigError as e:
    raise WorkflowError(f"Invalid config: {e}") from None
