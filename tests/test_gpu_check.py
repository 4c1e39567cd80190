"""`make gpu-check` (benchmarks/gpu_check.py) in its tiny mode, on the CPU with two fake GPUs: every step of
the device check runs and writes its rows, so its first use on a GPU does not fail on a typo."""

import subprocess
import sys

from conftest import ROOT
from helpers import copy_workflow, env


def test_the_device_check_runs_in_tiny_mode(tmp_path):
    work = copy_workflow(tmp_path / "work")
    out = tmp_path / "gpu-check.txt"
    r = subprocess.run([sys.executable, ROOT / "benchmarks" / "gpu_check.py", "--tiny", "--cores", "2",
                        "--workdir", work, "--out", out], env=env(), capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-8000:]
    rows = [line.split("\t") for line in out.read_text().splitlines()]
    assert all(len(row) == 3 for row in rows)
    values = {(s, n): v for s, n, v in rows}
    assert values["bench", "command"].startswith('make bench BENCH_ARGS="--only g')
    assert float(values["bench", "sweep_gpu_hours_training"]) >= 0
    assert values["determinism", "rerun_bit_identical"] == values["determinism", "kill_resume_bit_identical"] == "yes"
    assert float(values["pilot", "extrapolated_hours"]) > 0
    slots = [v for (s, n), v in values.items() if s == "slice" and n.startswith("train ")]
    assert len(slots) == 4 and {v.split()[-1] for v in slots} <= {"gpu0-0", "gpu1-0"}  # each job claimed a slot
    assert any(n.startswith("claim learns") for s, n in values)
