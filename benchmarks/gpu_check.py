"""The device check, in one command for a person with a GPU (`make gpu-check`): one file of numbers.

    python benchmarks/gpu_check.py [--out results/gpu-check.txt] [--cores 8] [--tiny]

1. `make bench BENCH_ARGS="--only g"` (benchmarks/bench.py part g): steps/s of ours and of the reference
   for the `paper` sweep's largest cells, and the sweep's GPU-hours from every cell's steps/s;
2. determinism on the device: a `tf_stochastic` cell trained twice, and once killed and resumed from its
   checkpoint, each bit-identical to the first run or not;
3. the `paper` pilot on the GPU (`snakemake --config sweep=paper pilot=true`): its extrapolated hours;
4. one short paper-scale slice through the real workflow (`paper_q4` of docs/paper-slices.yaml: q = 4,
   N = 32, d_e up to 1024, the paper's 5,000 steps), with the device each training job ran on and its claims.

Every row of the file is `section<TAB>name<TAB>value`.  ``--tiny`` runs the same steps on this machine's CPU
at small sizes (part g on the `cpu` sweep's first cells, the tiny test sweep for the pilot and the slice,
two fake GPUs for the slots: stsq.cluster.gpus), so that a typo fails in the test suite (tests/test_gpu_check.py)
and not at a GPU user's first run.  ``--workdir`` runs the workflow in another copy of the checkout.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "workflow" / "src"
TINY_CONFIG = ROOT / "tests" / "configs" / "tiny.yaml"
SLICES = ROOT / "docs" / "paper-slices.yaml"


def _env(extra=None) -> dict:
    """This interpreter's folder first on PATH (the rules call `python`), the library importable."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": str(SRC), **(extra or {})}


def _run(cmd, cwd, env, log) -> str:
    log(f"$ {' '.join(map(str, cmd))}")
    t = time.perf_counter()
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True)
    log(f"  ({time.perf_counter() - t:.1f} s, exit {r.returncode})")
    if r.returncode != 0:
        raise SystemExit(f"failed: {' '.join(map(str, cmd))}\n{r.stdout[-3000:]}\n{r.stderr[-6000:]}")
    return r.stdout + r.stderr


def bench(tiny: bool, device: str, log) -> list[tuple]:
    """Part g of the benchmark, as `make bench BENCH_ARGS="--only g"` runs it."""
    args = ["--only", "g", "--device", device] + (["--sweep", "cpu", "--steps", "4", "--max-cells", "2"] if tiny
                                                  else [])
    out = _run([sys.executable, ROOT / "benchmarks" / "bench.py", *args], ROOT, _env(), log)
    rows = [("bench", "command", f'make bench BENCH_ARGS="{" ".join(args)}"')]
    for line in out.splitlines():
        m = re.match(r"(\S+ q=\d+ N=\d+ width=\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)x\s+([\d.]+)\s+([\d.]+)x", line)
        if m:
            cell = m.group(1).replace(" ", "_")
            rows += [("bench", f"{cell} ours_steps_per_s", m.group(2)), ("bench", f"{cell} ref_steps_per_s",
                                                                          m.group(3)),
                     ("bench", f"{cell} ours_over_ref", m.group(4)),
                     ("bench", f"{cell} stacked_seed_steps_per_s", m.group(5))]
        m = re.search(r"sweep, (\d+) cells x (\d+) seeds, training steps only: ([\d.]+) GPU-hours on one (.*?) \(",
                      line)
        if m:
            rows += [("bench", "sweep_cells_timed", m.group(1)), ("bench", "sweep_gpu_hours_training", m.group(3)),
                     ("bench", "device_name", m.group(4))]
    if not any(r[1] == "sweep_gpu_hours_training" for r in rows):
        raise SystemExit(f"benchmark part g printed no GPU-hours:\n{out[-3000:]}")
    return rows


def determinism(tiny: bool, device: str, workdir: Path, log) -> list[tuple]:
    """A cell trained twice on the device, and once stopped half-way and resumed: bit-identical curves?"""
    sys.path.insert(0, str(SRC))
    import torch
    from stsq.cluster.gpus import deterministic
    from stsq.sts.data import make_eval_set
    from stsq.width.train import TrainSpec, train

    deterministic(device)
    q, N, d, width, steps = (2, 8, 4, 8, 40) if tiny else (4, 32, 16, 1024, 400)
    spec = TrainSpec(arch="tf_stochastic", q=q, N=N, d=d, width=width, seed=0, steps=steps, lr=0.01,
                     log_every=steps // 4, checkpoint_every=steps // 4)
    test = make_eval_set(256, N, q, d, 1)

    def curve(**kw):
        r = train(spec, test, device=device, log=lambda s: None, **kw)
        return None if r is None else ([{k: v for k, v in row.items() if k != "device"} for row in r.curve],
                                       [p.detach().cpu() for p in r.model.parameters()])

    def same(a, b):
        return a[0] == b[0] and all(torch.equal(x, y) for x, y in zip(a[1], b[1]))

    first, second = curve(), curve()
    ck = workdir / "gpu-check-checkpoint.pt"
    ck.unlink(missing_ok=True)
    curve(checkpoint=ck, stop_after=steps // 2)
    resumed = curve(checkpoint=ck)
    ck.unlink(missing_ok=True)
    cell = f"tf_stochastic_q={q}_N={N}_d={d}_width={width}_steps={steps}"
    return [("determinism", "cell", cell), ("determinism", "device", str(device)),
            ("determinism", "rerun_bit_identical", "yes" if same(first, second) else "NO"),
            ("determinism", "kill_resume_bit_identical", "yes" if same(first, resumed) else "NO"),
            ("determinism", "CUBLAS_WORKSPACE_CONFIG", os.environ.get("CUBLAS_WORKSPACE_CONFIG", ""))]


def snakemake_args(cores: int, gpus: int, *targets) -> list:
    """Snakemake with ``--resources gpu=K`` (the targets first: the option takes every word after it)."""
    return [Path(sys.executable).parent / "snakemake", *targets, "--cores", str(cores), "--resources", f"gpu={gpus}"]


def pilot(tiny: bool, workdir: Path, cores: int, gpus: int, env: dict, log) -> list[tuple]:
    """The `paper` sweep's pilot on the device (tiny: the tiny sweep's), and what it extrapolates."""
    sweep = "tiny" if tiny else "paper"
    config = ["--configfile", TINY_CONFIG] if tiny else []
    _run([*snakemake_args(cores, gpus), *config, "--config", f"sweep={sweep}", "pilot=true"], workdir, env, log)
    text = (workdir / "results" / f"{sweep}_pilot" / "tables" / "pilot.txt").read_text()
    m = re.search(r"one device per job: ([\d.]+) hours extrapolated from the pilot \((.*?)\), ([\d.]+) CPU-hours", text)
    if not m:
        raise SystemExit(f"the pilot's summary has no extrapolated hours:\n{text}")
    rows = [("pilot", "sweep", sweep), ("pilot", "extrapolated_hours", m.group(1)), ("pilot", "units", m.group(2)),
            ("pilot", "estimated_cpu_hours_up_front", m.group(3))]
    with open(workdir / "results" / f"{sweep}_pilot" / "tables" / "pilot.csv") as fh:
        train_rows = [r for r in csv.DictReader(fh) if r["rule"] == "train"]
    rows.append(("pilot", "train_devices", ",".join(sorted({r["device"] for r in train_rows}))))
    longest = max(train_rows, key=lambda r: float(r["extrapolated_s"] or 0))
    rows.append(("pilot", "longest_cell", f"{longest['job']} {float(longest['extrapolated_s']) / 3600:.3f} h"))
    return rows


def workflow_slice(tiny: bool, workdir: Path, cores: int, gpus: int, env: dict, log) -> list[tuple]:
    """One short paper-scale slice through the real workflow: the device of each training job (its log) and
    the claims table."""
    sweep, config = ("tiny", TINY_CONFIG) if tiny else ("paper_q4", SLICES)
    t = time.perf_counter()
    claims = f"results/{sweep}/tables/claims.csv"  # the claims need every job but the figures and the report
    _run([*snakemake_args(cores, gpus, claims), "--configfile", config, "--config", f"sweep={sweep}"], workdir, env,
         log)
    rows = [("slice", "sweep", sweep), ("slice", "wall_s", f"{time.perf_counter() - t:.1f}")]
    logs = workdir / "results" / sweep / "logs" / "train"
    for path in sorted(logs.rglob("*.log")):
        text = path.read_text()
        slot = re.search(r"GPU slot (\S+) claimed", text)
        device = re.search(r" on (\S+) \(python", text)
        rows.append(("slice", f"train {path.relative_to(logs).with_suffix('')}", f"{device.group(1) if device else '?'}"
                                                    f" slot {slot.group(1) if slot else 'none'}"))
    with open(workdir / claims) as fh:
        for c in csv.DictReader(fh):
            rows.append(("slice", f"claim {c['claim']} q={c['q']} N={c['N']}", f"{c['verdict']} {c['measured']}"))
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python benchmarks/gpu_check.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=str(ROOT / "results" / "gpu-check.txt"))
    p.add_argument("--tiny", action="store_true", help="on the CPU at small sizes, two fake GPUs (the test)")
    p.add_argument("--cores", type=int, default=os.cpu_count())
    p.add_argument("--gpus", type=int, default=0, help="GPUs for --resources gpu=K (default: all of them)")
    p.add_argument("--workdir", default=str(ROOT), help="the checkout the workflow runs in")
    a = p.parse_args(argv)
    workdir = Path(a.workdir).resolve()
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    if a.tiny:
        device, gpus = "cpu", a.gpus or 2
        env = _env({"STSQ_FAKE_GPUS": str(gpus), "STSQ_GPU_LOCK_DIR": str(workdir / ".gpu-locks")})
    else:
        import torch
        if not torch.cuda.is_available():
            raise SystemExit("make gpu-check needs a CUDA device (GPU_CHECK_ARGS=--tiny runs it on the CPU)")
        device, gpus, env = "cuda", a.gpus or torch.cuda.device_count(), _env()
    rows = [("check", "date", time.strftime("%Y-%m-%d %H:%M")), ("check", "mode", "tiny (CPU)" if a.tiny else "gpu"),
            ("check", "gpus", str(gpus))]
    rows += bench(a.tiny, device, log)
    rows += determinism(a.tiny, device, workdir, log)
    rows += pilot(a.tiny, workdir, a.cores, gpus, env, log)
    rows += workflow_slice(a.tiny, workdir, a.cores, gpus, env, log)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join("\t".join(r) + "\n" for r in rows))
    log(f"wrote {len(rows)} rows to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
