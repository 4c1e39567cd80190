"""`make bench`: what a sweep costs, measured side by side and printed as ratios.

    make bench                                   (= python benchmarks/bench.py, stsq on PYTHONPATH)
    python benchmarks/bench.py [--repeats 5] [--steps 200] [--only a b c d e f g k p s t] [--device cuda]

a. our training step vs a naive reference (same math, same seed, same data);
b. where one step's time goes, and our step over the random draws alone;
c. seeds stacked in one model vs one after another;
d. parallel scaling of the `cpu` sweep (--cores 1 over --cores 2);
e. dry-run time of the `paper` sweep and of a synthetic grid of >= 10,000 training jobs;
f. the FCN step at the `paper` sweep's three largest FCN shapes: ours, nn.Linear + torch.optim.Adam, the sgemm floor,
   and where our step's time goes;
t. the sweep's largest cells at 1, 2, ... threads (up to the machine's cores);
k. the estimate said up front against a direct timing at the sweep's 10 most expensive cells;
s. an arch's step cost re-fitted (``--arch``, ``--fit-weights``): its step timed at the sweep's shapes, the
   least-squares nanoseconds per unit (and per weight unit) and cost per step beside the ones held;
g. (only when named, on a GPU) the `paper` sweep's largest cells, and its GPU-hours;
p. every positional encoding's training step beside tf_fixed's (d_e = 64).

Sizes and learning rates are those of config.yaml's `cpu` sweep (its largest q, N and widths).

Every ratio is the median of ``--repeats`` runs, with the min-max spread.  The
reference (benchmarks/reference_models.py) is written the way research code usually is: an
nn.Module that concatenates the tokens [x_i; p_i] with torch.cat every step,
applies W and V to every full token (keys W z_i, values V z_i, as attention
layers do), torch.optim.Adam, and .item() every step.  A second, tuned
reference (the same tokens, contracted in einsum's cheap order) is printed
beside it, so the gain of the concatenation-free split alone is visible too.
Both references and ours draw the same data from the same seed, through
stsq.sts.task.sample_batch and the model's positions().
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
import yaml
from reference_models import EinsumTransformer, NaiveFCN, NaiveTransformer, StackedFCN, StackedTransformer
from stsq.core.experiment import ARCHS as ALL_ARCHS
from stsq.core.experiment import is_transformer
from stsq.core.seeds import generator
from stsq.core.sweep import as_list, cells
from stsq.sts.step import AutogradStep, make_step
from stsq.sts.task import sample_batch
from stsq.width.train import TrainSpec, setup, train_step

ROOT = Path(__file__).resolve().parents[1]  # the checkout: its config.yaml and its workflow


def sweep_config(name):
    return yaml.safe_load((ROOT / "config.yaml").read_text())["sweeps"][name]


CPU_SWEEP = sweep_config("cpu")
# parts a and c: the cpu sweep's archs of the main figures (the references rebuild them); part p: every encoding
ARCHS = tuple(a for a in CPU_SWEEP["archs"] if ALL_ARCHS[a].core)
def largest_widths(sweep) -> dict:
    """Each arch's largest width anywhere in the sweep's grid (widths may be relative to N d)."""
    return cells(sweep).groupby("arch")["width"].max().astype(int).to_dict()


CPU = dict(q=max(CPU_SWEEP["q"]), N=max(CPU_SWEEP["N"]), d=max(as_list(CPU_SWEEP["d"])),
           batch_size=CPU_SWEEP["batch_size"])
WIDTH = {a: w for a, w in largest_widths(CPU_SWEEP).items() if a in ARCHS}
ENCODING_WIDTH = 64  # part p: every encoding at this d_e


def reference_steps(arch, width, steps, seed=0, einsum=False, sizes=CPU, device="cpu"):
    """The reference loop: returns (seconds per step, losses)."""
    spec = TrainSpec(arch=arch, width=width, seed=seed, steps=steps, lr=_lr(arch), **sizes)
    ours = spec.build(device)
    if not is_transformer(arch):
        model = NaiveFCN(ours)
    else:
        model = (EinsumTransformer if einsum else NaiveTransformer)(spec.d, width)
    model = model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=spec.lr)
    g = generator(spec.streams["train_data"], device)
    losses = []
    t0 = time.perf_counter()
    for _ in range(steps):
        b = sample_batch(spec.batch_size, spec.N, spec.q, spec.d, g)
        P = ours.positions(spec.batch_size, spec.N, g)
        loss = ((model(b.X, b.y, P) - b.target) ** 2).sum(-1).mean() / (spec.d / spec.q)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return (time.perf_counter() - t0) / steps, losses


def _our_step(arch, width, steps, seed=0, sizes=CPU, device="cpu"):
    """The cell's spec, our step on its fresh model, and its training-data stream, as train() builds them."""
    spec = TrainSpec(arch=arch, width=width, seed=seed, steps=steps, lr=_lr(arch), **sizes,
                     position_range=_position_range())
    _, step, g = setup(spec, device)
    return spec, step, g


def our_steps(arch, width, steps, seed=0, sizes=CPU, device="cpu"):
    """Our training step (stsq.width.train.train_step), as train() runs it: returns (seconds per step, losses)."""
    spec, step, g = _our_step(arch, width, steps, seed, sizes, device)
    pending = []
    t0 = time.perf_counter()
    for _ in range(steps):
        pending.append(train_step(step, spec, g))
    losses = torch.stack(pending).tolist()
    return (time.perf_counter() - t0) / steps, losses


def _lr(arch):
    return CPU_SWEEP["archs"][arch]["lr"] if arch in CPU_SWEEP["archs"] else CPU_SWEEP["archs"]["tf_fixed"]["lr"]


def bench_reference(repeats, steps):
    print(f"\n## a. training step vs the naive reference ({steps} steps, cpu sweep sizes, 1 thread)")
    print("ref: W and V applied to every concatenated token; einsum ref: the same tokens, einsum's order")
    print(f"{'arch':15s} {'ours ms':>8s} {'ref ms':>8s} {'ratio ref/ours':>21s} {'einsum ms':>10s} "
          f"{'ratio einsum/ours':>21s} {'loss ours':>10s} {'ref':>8s} {'einsum':>8s} {'max|diff|':>9s}")
    out = {}
    for arch, width in WIDTH.items():
        ms = {"ours": [], "ref": [], "ein": []}
        for _ in range(repeats):
            t, l_ours = our_steps(arch, width, steps)
            ms["ours"].append(t * 1e3)
            t, l_ref = reference_steps(arch, width, steps)
            ms["ref"].append(t * 1e3)
            if is_transformer(arch):
                t, l_ein = reference_steps(arch, width, steps, einsum=True)
                ms["ein"].append(t * 1e3)
        ratios = [r / o for r, o in zip(ms["ref"], ms["ours"])]
        out[arch] = statistics.median(ratios)
        losses = [sum(v[-20:]) / 20 for v in (l_ours, l_ref)] + ([sum(l_ein[-20:]) / 20] if ms["ein"] else [])
        diff = max(abs(v - losses[0]) for v in losses)
        ein = (f"{statistics.median(ms['ein']):10.2f} {_spread([e / o for e, o in zip(ms['ein'], ms['ours'])]):>21s}"
               if ms["ein"] else f"{'-':>10s} {'-':>21s}")
        print(f"{arch:15s} {statistics.median(ms['ours']):8.2f} {statistics.median(ms['ref']):8.2f} "
              f"{_spread(ratios):>21s} {ein} " + " ".join(f"{v:{w}.5f}" for v, w in zip(losses, (10, 8, 8)))
              + f"{'':>{9 * (3 - len(losses))}} {diff:9.1e}")
        assert diff < LOSS_TOLERANCE, f"{arch}: ours and the reference disagree after {steps} steps ({diff:.2e})"
    print(f"(loss: mean of the last 20 of {steps} training losses, same seed and data; they must agree "
          f"within {LOSS_TOLERANCE:g})")
    return out


LOSS_TOLERANCE = 1e-4


# -- p. every positional encoding's step ---------------------------------------------------------------
def bench_encodings(repeats, steps, baseline="tf_fixed"):
    """Each transformer (its encoding, its step: stsq.core.experiment.ARCHS) at the cpu sweep's sizes and
    d_e = ENCODING_WIDTH: ms per step as train() runs it, and its ratio over ``baseline``'s, measured in
    the same run (interleaved repeats).  Returns {arch: (median ms, median ratio over the baseline)}."""
    archs = [a for a, r in ALL_ARCHS.items() if r.transformer and not r.positional_only and r.task == "sts"]
    print(f"\n## p. every positional encoding's training step (d_e = {ENCODING_WIDTH}, cpu sweep sizes, "
          f"{steps} steps, median of {repeats})")
    print(f"{'arch':15s} {'encoding':11s} {'step':9s} {'ms/step':>8s} {'draw p ms':>10s} {'over ' + baseline:>22s}")
    ms = {a: [] for a in archs}
    draws = {a: [] for a in archs}
    for _ in range(repeats):
        for a in archs:
            ms[a].append(our_steps(a, ENCODING_WIDTH, steps)[0] * 1e3)
            spec = TrainSpec(arch=a, width=ENCODING_WIDTH, seed=0, steps=steps, lr=_lr(a), **CPU,
                             position_range=_position_range())
            draws[a].append(_positions_only(spec, steps))
    out = {}
    for a in archs:
        ratios = [x / b for x, b in zip(ms[a], ms[baseline])]
        out[a] = (statistics.median(ms[a]), statistics.median(ratios))
        print(f"{a:15s} {ALL_ARCHS[a].encoding:11s} {ALL_ARCHS[a].step:9s} {out[a][0]:8.3f} "
              f"{statistics.median(draws[a]):10.3f} {_spread(ratios):>22s}")
    print("(draw p: the positions of one batch alone; randomized: a sorted random subset of L rows per sample)")
    return out


def _position_range():
    from stsq.core.sweep import position_range
    return position_range(CPU_SWEEP)


def _positions_only(spec, steps):
    model = spec.build()
    g = generator(spec.streams["train_data"])
    t0 = time.perf_counter()
    for _ in range(steps):
        model.positions(spec.batch_size, spec.N, g)
    return (time.perf_counter() - t0) / steps * 1e3


# -- b. where a step's time goes ---------------------------------------------------------------------
def bench_profile(repeats, steps):
    """Prints the per-phase table; returns {(arch, "after" | "before"): {phase: median ms, "step/draws": ratio}}."""
    out = {}
    print(f"\n## b. where one step's time goes (ms per step, median of {repeats} x {steps} steps)")
    print("after: the step train() runs (hand-written for the transformers); before: autograd + the same flat Adam")
    print(f"{'arch':15s} {'step':7s} {'draw X,y':>9s} {'draw p':>8s} {'forward':>8s} {'backward':>9s} "
          f"{'optim':>7s} {'log':>6s} {'total':>7s} {'step/draws':>18s}")
    for arch, width in WIDTH.items():
        for label, make in [("after", make_step),
                            ("before", lambda model, spec: AutogradStep(model, spec.optimizer, spec.lr))]:
            if not is_transformer(arch) and label == "before":
                continue  # the FCN's step is the autograd one
            rows, ratios = [], []
            for _ in range(repeats):
                spec = TrainSpec(arch=arch, width=width, seed=0, steps=steps, lr=_lr(arch), **CPU)
                ms = _profile(make(spec.build(), spec), spec, steps)
                rows.append(ms)
                ratios.append(sum(ms.values()) / _draws_only(spec, spec.build(), steps))
            med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
            print(f"{arch:15s} {label:7s} {med['xy']:9.3f} {med['p']:8.3f} {med['fwd']:8.3f} {med['bwd']:9.3f} "
                  f"{med['opt']:7.3f} {med['log']:6.3f} {sum(med.values()):7.3f} {_spread(ratios):>18s}")
            out[arch, label] = {**med, "step/draws": statistics.median(ratios)}
    print("(step/draws: a whole step over drawing its random numbers alone, timed separately;")
    print(" log: the loss kept without a sync, checked every 100 steps as train() does)")
    return out


def _profile(step, spec, steps):
    g = generator(spec.streams["train_data"])
    t = dict.fromkeys(["xy", "p", "fwd", "bwd", "opt", "log"], 0.0)
    pending = []
    for i in range(steps):
        t0 = time.perf_counter()
        b = sample_batch(spec.batch_size, spec.N, spec.q, spec.d, g)
        t1 = time.perf_counter()
        P = step.model.positions(spec.batch_size, spec.N, g)
        t2 = time.perf_counter()
        cache, loss = step.forward(b.X, b.y, P, b.target)
        t3 = time.perf_counter()
        step.backward(cache)
        t4 = time.perf_counter()
        step.update()
        t5 = time.perf_counter()
        pending.append(loss)
        if (i + 1) % 100 == 0:
            torch.isfinite(torch.stack(pending)).all().item()
            pending.clear()
        t6 = time.perf_counter()
        for k, (a, z) in zip(t, [(t0, t1), (t1, t2), (t2, t3), (t3, t4), (t4, t5), (t5, t6)]):
            t[k] += z - a
    return {k: v / steps * 1e3 for k, v in t.items()}


def _draws_only(spec, model, steps):
    g = generator(spec.streams["train_data"])
    t0 = time.perf_counter()
    for _ in range(steps):
        sample_batch(spec.batch_size, spec.N, spec.q, spec.d, g)
        model.positions(spec.batch_size, spec.N, g)
    return (time.perf_counter() - t0) / steps * 1e3


def bench_stacking(repeats, steps, S=3):
    print(f"\n## c. {S} seeds stacked in one model vs one after another ({steps} steps each)")
    print(f"{'arch':15s} {'sequential s':>13s} {'stacked s':>10s} {'ratio seq/stacked':>24s}")
    for arch, width in WIDTH.items():
        ratios, seq_s, stk_s = [], [], []
        for _ in range(repeats):
            t0 = time.perf_counter()
            for seed in range(S):
                our_steps(arch, width, steps, seed)
            seq = time.perf_counter() - t0
            stk = _stacked_steps(arch, width, steps, S)
            seq_s.append(seq)
            stk_s.append(stk)
            ratios.append(seq / stk)
        print(f"{arch:15s} {statistics.median(seq_s):13.2f} {statistics.median(stk_s):10.2f} {_spread(ratios):>24s}")
    print("(the workflow trains the seeds of a cell one after another: stacking with separate data per seed")
    print(" does not pay on the CPU; see docs/measurements.md)")


def _stacked_steps(arch, width, steps, S, sizes=CPU, device="cpu"):
    specs = [TrainSpec(arch=arch, width=width, seed=s, steps=steps, lr=_lr(arch), **sizes) for s in range(S)]
    sp = specs[0]
    if not is_transformer(arch):
        model = StackedFCN(S, sp.N * sp.d + sp.N, width, sp.d)
    else:
        model = StackedTransformer(S, sp.d, width)
    model = model.to(device)
    singles = [s.build(device) for s in specs]
    opt = torch.optim.Adam(model.parameters(), lr=sp.lr)
    gens = [generator(s.streams["train_data"], device) for s in specs]
    t0 = time.perf_counter()
    for _ in range(steps):
        batches = [sample_batch(sp.batch_size, sp.N, sp.q, sp.d, g) for g in gens]
        Ps = [m.positions(sp.batch_size, sp.N, g) for m, g in zip(singles, gens)]
        X = torch.stack([b.X for b in batches])
        y = torch.stack([b.y for b in batches])
        t = torch.stack([b.target for b in batches])
        P = None if Ps[0] is None else torch.stack(Ps)
        f = model(X, y, P)
        loss = ((f - t) ** 2).sum(-1).mean() / (sp.d / sp.q) * S
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    loss.item()  # waits for a GPU to finish
    return time.perf_counter() - t0


# -- d. parallel scaling of the cpu sweep ------------------------------------------------------------
def bench_scaling(repeats):
    print(f"\n## d. parallel scaling of the `cpu` sweep (wall time, {repeats} run(s) each)")
    ratios, one, two = [], [], []
    for _ in range(repeats):
        t1 = _sweep_wall(1)
        t2 = _sweep_wall(2)
        one.append(t1)
        two.append(t2)
        ratios.append(t1 / t2)
        print(f"  run: --cores 1 {t1:.0f}s, --cores 2 {t2:.0f}s, ratio {t1 / t2:.2f}", flush=True)
    print(f"--cores 1 {statistics.median(one):.0f}s, --cores 2 {statistics.median(two):.0f}s, "
          f"ratio {_spread(ratios)}")


def _sweep_wall(cores):
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name in ("Snakefile", "config.yaml"):
            shutil.copy2(ROOT / name, work / name)
        for name in ("workflow", "envs"):
            shutil.copytree(ROOT / name, work / name, ignore=shutil.ignore_patterns("__pycache__"))
        t0 = time.perf_counter()
        subprocess.run([str(Path(sys.executable).parent / "snakemake"), "--cores", str(cores), "--config",
                        "sweep=cpu", "--quiet", "all"], cwd=work, check=True, capture_output=True, env=_venv_env())
        return time.perf_counter() - t0


# -- e. DAG scale ------------------------------------------------------------------------------------
def synthetic_config(widths) -> dict:
    """A grid of 3 archs x len(widths) widths x 4 q x 5 N training cells (the cpu sweep's other settings)."""
    sweep = {k: CPU_SWEEP[k] for k in ("d", "batch_size", "log_every", "checkpoint_every")}
    sweep["d"] = max(as_list(sweep["d"]))
    sweep.update(N=[16, 32, 64, 128, 256], q=[1, 2, 3, 4], seeds=[0, 1, 2, 3, 4], eval_length_factors=[1, 2, 4],
                 n_eval=128, archs={a: {"widths": widths, "steps": 1000, "lr": _lr(a)} for a in ARCHS})
    return {"sweep": "synthetic", "sweeps": {"synthetic": sweep}}


def bench_dag(repeats):
    print(f"\n## e. DAG scale: dry-run wall time ({repeats} runs each)")
    config = synthetic_config([8 * (i + 1) for i in range(170)])  # 3 x 170 x 4 x 5 = 10,200 cells
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "synthetic.yaml"
        cfg.write_text(yaml.safe_dump(config))
        for label, args in [("paper sweep", ["--config", "sweep=paper"]),
                            ("synthetic grid, 10,200 training jobs", ["--configfile", str(cfg)])]:
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                r = subprocess.run([str(Path(sys.executable).parent / "snakemake"), "-n", "--quiet", "all", *args],
                                   cwd=ROOT, capture_output=True, text=True)
                times.append(time.perf_counter() - t0)
                assert r.returncode == 0, r.stderr[-2000:]
            print(f"{label:40s} {_spread(times, 's')}")


# -- f, t, k: the cells that dominate a sweep (its `--sweep`, the paper sweep by default) ---------------
def _cells_by_cost(sweep, archs=None):
    """The sweep's cells, most expensive first (stsq.cluster.cost.estimated_seconds), as (seconds, record)."""
    from stsq.cluster.cost import estimated_seconds
    from stsq.core.sweep import cell_records
    recs = [r for r in cell_records(sweep) if archs is None or r.arch in archs]
    return sorted(((estimated_seconds(sweep, r), r) for r in recs),
                  key=lambda x: -x[0])


def _shapes(sweep, archs=None, n=3):
    """The ``n`` most expensive distinct cost shapes (arch, N, d, width: q does not change a step's work)."""
    out = {}
    for _, r in _cells_by_cost(sweep, archs):
        out.setdefault((r.arch, r.N, r.d, r.width), r)
    return list(out.values())[:n]


def _sizes(r):
    return dict(q=r.q, N=r.N, d=r.d, batch_size=r.batch_size)


def sgemm_rate(repeats=5, n=2048):
    """This core's float32 GEMM rate (FLOP/s): the median of ``repeats`` n^3 products."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    return 2 * n**3 / (_median_ms(lambda: a @ b, repeats) / 1e3)


def bench_fcn_rate(repeats, steps=20, sweep=None):
    """The FCN step at the sweep's three largest FCN shapes: ours, nn.Linear + torch.optim.Adam, and the sgemm
    floor 4 B P / rate (forward and weight gradient, 2 B P FLOPs each), P the parameters, rate this core's 2048^3
    sgemm; each measured after 3 warm-up steps, interleaved.  Returns {shape: (ours ms, ref ms, floor ms)}."""
    sweep = sweep or sweep_config("paper")
    print(f"\n## f. the FCN step against the sgemm floor ({steps} steps after 3 warm-up, 1 thread, "
          f"median of {repeats})")
    print(f"{'cell':28s} {'params':>9s} {'ours ms':>8s} {'ref ms':>8s} {'floor ms':>9s} {'ours/sgemm rate':>16s} "
          f"{'ref/sgemm':>10s} {'sgemm GF/s':>11s}")
    out = {}
    for r in _shapes(sweep, ["fcn"]):
        P = (r.N * r.d + r.N) * r.width + r.width + r.width * r.d + r.d
        ours, ref, floors = [], [], []
        for _ in range(repeats):
            rate = sgemm_rate(3)
            floors.append(4 * r.batch_size * P / rate * 1e3)
            our_steps("fcn", r.width, 3, sizes=_sizes(r))
            ours.append(our_steps("fcn", r.width, steps, sizes=_sizes(r))[0] * 1e3)
            reference_steps("fcn", r.width, 3, sizes=_sizes(r))
            ref.append(reference_steps("fcn", r.width, steps, sizes=_sizes(r))[0] * 1e3)
        o, f, fl = statistics.median(ours), statistics.median(ref), statistics.median(floors)
        label = f"N={r.N} d={r.d} m={r.width}"
        print(f"{label:28s} {P:9d} {o:8.1f} {f:8.1f} {fl:9.1f} "
              f"{_spread([a / b for a, b in zip(floors, ours)], ''):>16s} {fl / f:10.2f} "
              f"{4 * r.batch_size * P / fl / 1e6:11.1f}")
        out[label] = (o, f, fl)
    print("(rate: the floor over the step, i.e. the step's FLOP rate over the same core's sgemm rate; ref: "
          "nn.Linear layers and torch.optim.Adam, the same data)")
    fcn_breakdown(steps, sweep)
    return out


def _median_ms(fn, steps):
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def fcn_breakdown(steps=20, sweep=None):
    """Where the FCN step's time goes at the sweep's three largest FCN shapes: its forward, backward and update
    (FCNStep's own methods, each timed alone), its two products alone on the same tensors (against their share
    of the sgemm floor, 2 B P FLOPs each), and torch's fused CPU Adam (torch.optim.Adam(fused=True), which this
    project does not use: its last bits differ) on vectors of the same size.  "free" is the floor over the step
    without its update: the rate no optimizer, however fast, can take the step past on this core.
    Returns {shape: {part: ms}}."""
    sweep = sweep or sweep_config("paper")
    print(f"\n## f. where the FCN step's time goes (median of {steps} steps after 3 warm-up, ms; "
          "% of sgemm: each product's share of the floor over its time)")
    print(f"{'cell':28s} {'data':>6s} {'fwd':>7s} {'its mm':>13s} {'bwd':>7s} {'its mm':>13s} {'Adam':>7s} "
          f"{'fused':>7s} {'rate':>5s} {'free':>5s} {'w/ fused':>8s}")
    out = {}
    for r in _shapes(sweep, ["fcn"]):
        spec, step, g = _our_step("fcn", r.width, steps, sizes=_sizes(r))
        parts = {k: [] for k in ("data", "forward", "backward", "update")}
        for i in range(steps + 3):
            t = [time.perf_counter()]
            b = sample_batch(spec.batch_size, spec.N, spec.q, spec.d, g)
            P = step.model.positions(spec.batch_size, spec.N, g)
            t.append(time.perf_counter())
            cache, _ = step.forward(b.X, b.y, P, b.target)
            t.append(time.perf_counter())
            step.backward(cache)
            t.append(time.perf_counter())
            step.update()
            t.append(time.perf_counter())
            if i >= 3:
                for k, t0, t1 in zip(parts, t, t[1:]):
                    parts[k].append((t1 - t0) * 1e3)
        ms = {k: statistics.median(v) for k, v in parts.items()}
        ms.update(_products_ms(step, cache, steps))
        ms["fused Adam"] = _fused_adam_ms(step.flat.numel(), steps)
        rate = sgemm_rate(3)
        share = 2 * r.batch_size * step.first.weight.numel() / rate * 1e3  # one product's floor
        P_all = step.flat.numel()
        floor = 4 * r.batch_size * P_all / rate * 1e3
        total = sum(ms[k] for k in parts)
        free = total - ms["update"]
        label = f"N={r.N} d={r.d} m={r.width}"
        print(f"{label:28s} {ms['data']:6.1f} {ms['forward']:7.1f} "
              f"{ms['forward mm']:6.1f} ({share / ms['forward mm']:4.0%}) {ms['backward']:7.1f} "
              f"{ms['backward mm']:6.1f} ({share / ms['backward mm']:4.0%}) {ms['update']:7.1f} "
              f"{ms['fused Adam']:7.1f} {floor / total:5.2f} {floor / free:5.2f} "
              f"{floor / (free + ms['fused Adam']):8.2f}")
        out[label] = ms
    print("(rate: the floor over the sum of the four parts; free: over the step without its update; w/ fused: "
          "with torch's fused Adam's time in its place)")
    return out


def _products_ms(step, cache, steps):
    """FCNStep's two products, each alone on the tensors of its last step: the forward's addmm and the first
    layer's weight gradient."""
    _, h0, z1 = cache
    W, b, gz = step.first.weight.detach(), step.first.bias.detach(), z1.grad
    return {"forward mm": _median_ms(lambda: torch.addmm(b, h0, W.t()), steps),
            "backward mm": _median_ms(lambda: torch.mm(gz.t(), h0, out=step.gW1), steps)}


def _fused_adam_ms(n, steps):
    """torch.optim.Adam(fused=True) on one parameter vector of n elements and a fixed gradient."""
    p = torch.nn.Parameter(torch.randn(n))
    p.grad = torch.randn(n)
    opt = torch.optim.Adam([p], lr=1e-3, fused=True)
    for _ in range(3):
        opt.step()
    return _median_ms(opt.step, steps)


def bench_threads(steps=10, sweep=None, n=3):
    """The sweep's most expensive cells (its three largest FCN shapes and its largest transformer) at 1, 2, ...
    threads (up to this machine's cores): ms per step and the speed-up over one thread, beside the threads each
    cell's job asks for (stsq.cluster.cost.train_threads)."""
    from stsq.cluster.cost import train_threads
    sweep = sweep or sweep_config("paper")
    counts = list(range(1, (os.cpu_count() or 1) + 1))
    print(f"\n## t. threads: the sweep's largest cells ({steps} steps after 3 warm-up, ms per step)")
    print(f"{'cell':40s} {'asks':>5s} " + " ".join(f"{f'{k} thr':>9s}" for k in counts)
          + " " + " ".join(f"{f'x{k}':>6s}" for k in counts[1:]))
    archs = [a for a in sweep["archs"] if not ALL_ARCHS[a].transformer]
    cells_ = _shapes(sweep, archs, n) + _shapes(sweep, [a for a in sweep["archs"] if a not in archs], 1)
    out = {}
    try:
        for r in cells_:
            ms = []
            for k in counts:
                torch.set_num_threads(k)
                our_steps(r.arch, r.width, 3, sizes=_sizes(r))
                ms.append(our_steps(r.arch, r.width, steps, sizes=_sizes(r))[0] * 1e3)
            label = f"{r.arch} N={r.N} d={r.d} width={r.width}"
            asks = train_threads(r)
            print(f"{label:40s} {asks:5d} " + " ".join(f"{m:9.1f}" for m in ms) + " "
                  + " ".join(f"{ms[0] / m:5.2f}x" for m in ms[1:]), flush=True)
            out[label] = ms
    finally:
        torch.set_num_threads(1)
    return out


def direct_seconds(r, sweep, steps=20):
    """A cell's training job on one core, timed directly: its steps (``steps`` of them after 3 warm-up, times
    the real steps) and its curve's scoring (each scored set once, times the scorings of a real run), per seed,
    and a job's start (stsq.cluster.cost.JOB_START_S)."""
    from stsq.cluster.cost import JOB_START_S
    from stsq.sts.data import make_eval_set
    from stsq.sts.scoring import score
    our_steps(r.arch, r.width, 3, sizes=_sizes(r))
    per_step = our_steps(r.arch, r.width, steps, sizes=_sizes(r))[0]
    spec = TrainSpec(**r.to_dict(), seed=0)
    model = spec.build()
    lengths = [r.N]
    if is_transformer(r.arch):
        lengths += [r.N * int(f) for f in sweep["eval_length_factors"] if int(f) != 1 and model.accepts_length(
            r.N * int(f))]
    scored = 0.0
    for L in lengths:
        s = make_eval_set(sweep["n_eval"], L, r.q, r.d, spec.streams["eval_data"])
        t0 = time.perf_counter()
        score(model, s, spec.streams["eval_positions"], "cpu")
        every = r.log_every if L == r.N else r.checkpoint_every
        scored += (time.perf_counter() - t0) * math.ceil(r.steps / every)
    return JOB_START_S + len(sweep["seeds"]) * (r.steps * per_step + scored), per_step


def bench_cost(sweep=None, n=10):
    """The estimate said up front (stsq.cluster.cost.estimated_seconds) against a direct timing (``direct_seconds``) at
    the
    sweep's ``n`` most expensive cells, one thread: the ratio each, which the cost model keeps within 1.5x."""
    sweep = sweep or sweep_config("paper")
    print(f"\n## k. the estimate against a direct timing at the sweep's {n} most expensive cells (1 thread)")
    print(f"{'cell':58s} {'estimate h':>11s} {'direct h':>9s} {'ms/step':>8s} {'estimate/direct':>16s}")
    out = {}
    timed = {}
    for est, r in _cells_by_cost(sweep)[:n]:
        key = (r.arch, r.N, r.d, r.width, r.steps)
        if key not in timed:  # q does not change a step's work: one timing per shape
            timed[key] = direct_seconds(r, sweep)
        direct, per_step = timed[key]
        out[r.path] = (est, direct)
        print(f"{r.path:58s} {est / 3600:11.2f} {direct / 3600:9.2f} {per_step * 1e3:8.1f} {est / direct:16.2f}",
              flush=True)
    ratios = [e / d for e, d in out.values()]
    print(f"estimate / direct: {min(ratios):.2f} to {max(ratios):.2f}")
    return out


def fit_step_cost(arch, sweep=None, n=16, min_s=1.0, weights=False):
    """The arch's ``stsq.cluster.cost.STEP_RATES`` entry re-fitted: the arch's step timed directly (one thread,
    3 warm-up steps, then steps until ``min_s`` has passed, at least 5) at up to ``n`` of the sweep's distinct
    shapes, spread from its smallest to its largest units of work a step, and the least-squares fit in relative
    error (each shape weighs the same, small or large) of t = units x ns + weight units x weight ns + overhead,
    the family's weight rate held (``stsq.cluster.cost.WEIGHT_RATES``) or, with ``weights``, fitted too.  Prints each
    shape's time and the fitted and the held constants' prediction over it; returns (ns, weight ns, overhead s)."""
    import numpy as np
    from stsq.cluster.cost import step_rate, step_weight_units, weight_rate
    from stsq.core.experiment import DEFAULTS, family
    sweep = sweep or sweep_config("paper")
    fam, held = family(arch), step_rate(arch)
    layers = sweep["archs"][arch].get("layers", DEFAULTS["layers"])
    shapes = sorted({(r.arch, r.N, r.d, r.width): r for _, r in _cells_by_cost(sweep, [arch])}.values(),
                    key=lambda r: fam.step_units(r.batch_size, r.N, r.d, r.width, layers))
    k = min(n, len(shapes))
    picks = sorted({round(i * (len(shapes) - 1) / max(1, k - 1)) for i in range(k)})
    print(f"\n## s. {arch}'s step cost fitted to direct timings at {len(picks)} of the sweep's {len(shapes)} shapes "
          f"(1 thread, at least {min_s:g} s each)")
    rows = []
    for r in (shapes[i] for i in picks):
        units = fam.step_units(r.batch_size, r.N, r.d, r.width, layers)
        wunits = step_weight_units(fam, r.batch_size, r.N, r.d, r.width, layers)
        our_steps(arch, r.width, 3, sizes=_sizes(r))
        per_step, steps = our_steps(arch, r.width, 5, sizes=_sizes(r))[0], 5
        if per_step * steps < min_s:
            steps = int(math.ceil(min_s / per_step))
            per_step = our_steps(arch, r.width, steps, sizes=_sizes(r))[0]
        rows.append((r, units, wunits, per_step))
    u, w, t = (np.array([x[i] for x in rows], dtype=float) for i in (1, 2, 3))
    if weights:
        (ns, wns, overhead), *_ = np.linalg.lstsq(np.stack([u * 1e-9 / t, w * 1e-9 / t, 1 / t], 1), np.ones_like(t),
                                                  rcond=None)
    else:
        wns = weight_rate(fam)
        (ns, overhead), *_ = np.linalg.lstsq(np.stack([u * 1e-9 / t, 1 / t], 1), 1 - w * wns * 1e-9 / t, rcond=None)
    print(f"{'shape':28s} {'units':>12s} {'weight units':>13s} {'ms/step':>8s} {'fit/direct':>11s} "
          f"{'held/direct':>12s}")
    for r, units, wunits, per_step in rows:
        fit = (units * ns + wunits * wns) * 1e-9 + overhead
        was = (units * held.ns_per_unit + wunits * weight_rate(fam)) * 1e-9 + held.overhead_s
        print(f"{f'N={r.N} d={r.d} width={r.width}':28s} {units:12d} {wunits:13.0f} {per_step * 1e3:8.2f} "
              f"{fit / per_step:11.2f} {was / per_step:12.2f}", flush=True)
    print(f"fitted: {ns:.3g} ns per unit, {wns:.3g} ns per weight unit{'' if weights else ' (held)'}, "
          f"{overhead * 1e3:.2f} ms per step (held: {held.ns_per_unit} ns, {weight_rate(fam):.3g} ns, "
          f"{held.overhead_s * 1e3:.2f} ms; stsq.cluster.cost.STEP_RATES, WEIGHT_RATES)")
    return ns, wns, overhead


# -- g. GPU: the paper sweep's largest cells, and its GPU-hours ---------------------------------------
def bench_gpu(steps, device="cuda", max_cells=None, S=5, sweep=None):
    """Steps/s of ours and of the reference for the `paper` sweep's largest transformer and FCN
    cells, seeds one after another and stacked; then our steps/s of every cell of the sweep, and
    from those the GPU-hours of the whole sweep (its seeds one after another, as the workflow runs)."""
    sweep = sweep or sweep_config("paper")
    warm = min(10, steps)
    sizes = dict(d=max(as_list(sweep["d"])), batch_size=sweep["batch_size"])
    name = torch.cuda.get_device_name() if str(device).startswith("cuda") else platform.machine()
    print(f"\n## g. GPU ({name}): the `paper` sweep's largest cells ({steps} timed steps after {warm} warm-up)")
    print(f"{'cell':38s} {'ours steps/s':>13s} {'ref steps/s':>12s} {'ours/ref':>9s} "
          f"{f'{S} stacked, seed-steps/s':>24s} {'stacked/seq':>12s}")
    N, q = max(sweep["N"]), max(sweep["q"])
    widest = largest_widths(sweep)
    for arch in ARCHS:
        width = widest[arch]
        cell = dict(sizes, N=N, q=q)
        our_steps(arch, width, warm, sizes=cell, device=device)  # warm-up: kernels, cuBLAS handles
        ours = 1 / our_steps(arch, width, steps, sizes=cell, device=device)[0]
        reference_steps(arch, width, warm, sizes=cell, device=device)
        ref = 1 / reference_steps(arch, width, steps, sizes=cell, device=device)[0]
        _stacked_steps(arch, width, warm, S, sizes=cell, device=device)
        stacked = S * steps / _stacked_steps(arch, width, steps, S, sizes=cell, device=device)
        label = f"{arch} q={q} N={N} width={width}"
        print(f"{label:38s} {ours:13.1f} {ref:12.1f} {ours / ref:8.2f}x {stacked:24.1f} {stacked / ours:11.2f}x",
              flush=True)

    total_s = 0.0
    rows = [(r.arch, int(r.q), int(r.N), int(r.d), int(r.width), int(r.steps)) for r in cells(sweep).itertuples()]
    rows = rows[:max_cells] if max_cells else rows
    for arch, q, N, d, width, n_steps in rows:
        cell = dict(sizes, N=N, q=q, d=d)
        our_steps(arch, width, 3, sizes=cell, device=device)
        sec = our_steps(arch, width, max(5, steps // 4), sizes=cell, device=device)[0]
        total_s += sec * n_steps * len(sweep["seeds"])
    print(f"paper sweep, {len(rows)} cells x {len(sweep['seeds'])} seeds, training steps only: "
          f"{total_s / 3600:.2f} GPU-hours on one {name} (seeds one after another)")
    return {"cells": len(rows), "seeds": len(sweep["seeds"]), "gpu_hours": total_s / 3600}


def _venv_env():
    """This interpreter's folder first on PATH, as in an activated venv (the rules call `python`)."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def _spread(values, unit="x"):
    return f"{statistics.median(values):.2f}{unit} [{min(values):.2f}, {max(values):.2f}]"


def main(argv=None):
    p = argparse.ArgumentParser(prog="python benchmarks/bench.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--sweep-repeats", type=int, default=5, help="runs of (d); each takes minutes")
    p.add_argument("--skip-sweep", action="store_true")
    p.add_argument("--skip-dag", action="store_true")
    p.add_argument("--only", choices=["a", "b", "c", "d", "e", "f", "g", "k", "p", "s", "t"], nargs="+",
                   help="g (GPU) and s (a cost fit) run only when named here")
    p.add_argument("--arch", default="tf_stochastic", help="part s: the arch whose step cost is fitted")
    p.add_argument("--fit-weights", action="store_true", help="part s: fit the family's weight rate too")
    p.add_argument("--device", default="cuda", help="device of part g")
    p.add_argument("--max-cells", type=int, help="part g: time only the first cells of the sweep (a smoke test)")
    p.add_argument("--sweep", default="paper", help="parts f, g, k, t: the sweep of config.yaml whose cells are timed")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    only = set(a.only or "abcdepftk")
    print(f"# stsq benchmark, {time.strftime('%Y-%m-%d')}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, torch {torch.__version__}, 1 thread per process")
    if "a" in only:
        bench_reference(a.repeats, a.steps)
    if "p" in only:
        bench_encodings(a.repeats, a.steps)
    if "b" in only:
        bench_profile(a.repeats, a.steps)
    if "c" in only:
        bench_stacking(a.repeats, a.steps)
    if "d" in only and not a.skip_sweep:
        bench_scaling(a.sweep_repeats)
    if "e" in only and not a.skip_dag:
        bench_dag(a.repeats)
    if "f" in only:
        bench_fcn_rate(min(a.repeats, 3), sweep=sweep_config(a.sweep))
    if "t" in only:
        bench_threads(sweep=sweep_config(a.sweep))
    if "k" in only:
        bench_cost(sweep=sweep_config(a.sweep))
    if "s" in only:
        fit_step_cost(a.arch, sweep=sweep_config(a.sweep), weights=a.fit_weights)
    if "g" in only:
        bench_gpu(a.steps, a.device, a.max_cells, sweep=sweep_config(a.sweep))


if __name__ == "__main__":
    main()
