"""Command line: ``python -m stsq {data,train,evaluate,aggregate,figure,claims} --help``.

The workflow's rules call these; each writes its outputs atomically.  torch is
imported only by the commands that need it (data, train, evaluate).
"""

from __future__ import annotations

import argparse
import csv
import io
import logging
import os
import sys
from pathlib import Path

log = logging.getLogger("stsq")


def _setup(threads: int | None = None):
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S",
                        stream=sys.stderr, force=True)
    if threads is not None:
        import torch
        torch.set_num_threads(threads)


def _device(name: str):
    import torch
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def _cell(v):
    """Empty for None, full precision for floats."""
    return "" if v is None else repr(v) if isinstance(v, float) else v


def _csv_text(rows: list[dict], columns: list[str]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n", extrasaction="raise")
    w.writeheader()
    for r in rows:
        w.writerow({k: _cell(r.get(k)) for k in columns})
    return buf.getvalue()


# -- data ------------------------------------------------------------------------------------------
def cmd_data(a):
    _setup(a.threads)
    from .data import write_data
    m = write_data(a.out_dir, q=a.q, N=a.N, d=a.d, seed=a.seed, eval_lengths=a.eval_lengths, n_eval=a.n_eval)
    log.info("wrote %d evaluation sets (n=%d, N'=%s) and the manifest to %s",
             len(m["eval_sets"]), a.n_eval, ",".join(m["eval_sets"]), a.out_dir)


# -- train -----------------------------------------------------------------------------------------
CURVE_COLUMNS = ["arch", "q", "N", "d", "width", "seed", "step", "train_loss", "normalized_loss", "attn_mass_y",
                 "attn_evenness_y", "cos_W_pp_identity", "cos_V_ground_truth"]


def cmd_train(a):
    _setup(a.threads)
    from .data import MANIFEST, load_eval_set, read_manifest
    from .files import atomic_write_text
    from .train import TrainSpec, save_model, train

    device = _device(a.device)
    log.info("training %s q=%d N=%d width=%d seeds %s on %s", a.arch, a.q, a.N, a.width, a.seeds, device)
    for seed in a.seeds:
        data_dir = Path(a.data_dir) / f"seed~{seed}"
        manifest = read_manifest(data_dir / MANIFEST)
        if (manifest["q"], manifest["N"], manifest["d"]) != (a.q, a.N, a.d):
            raise SystemExit(f"{data_dir / MANIFEST}: made for q={manifest['q']} N={manifest['N']} "
                             f"d={manifest['d']}, not q={a.q} N={a.N} d={a.d}")
        spec = TrainSpec(arch=a.arch, q=a.q, N=a.N, d=a.d, width=a.width, seed=seed, steps=a.steps, lr=a.lr,
                         optimizer=a.optimizer, batch_size=a.batch_size, layers=a.layers, query=a.query,
                         log_every=a.log_every, checkpoint_every=a.checkpoint_every, streams=manifest["streams"])
        ckpt = Path(a.checkpoint_dir) / f"seed~{seed}" / "last.pt"
        result = train(spec, load_eval_set(data_dir, a.N, manifest), checkpoint=ckpt, device=device, log=log.info)
        out = Path(a.out_dir) / f"seed~{seed}"
        ids = {"arch": a.arch, "q": a.q, "N": a.N, "d": a.d, "width": a.width, "seed": seed}
        atomic_write_text(out / "curve.csv", _csv_text([{**ids, **r} for r in result.curve], CURVE_COLUMNS))
        save_model(result, spec, out / "model.pt")
        log.info("%s done: %d steps (%d resumed) in %.1fs", spec.cell, result.steps_done,
                 result.resumed_from, result.seconds)


# -- evaluate --------------------------------------------------------------------------------------
EVAL_COLUMNS = ["arch", "q", "N", "d", "width", "seed", "step", "split", "N_eval", "metric", "value", "status"]


def cmd_evaluate(a):
    _setup(a.threads)
    from .data import MANIFEST, load_eval_set, read_manifest
    from .evaluate import accepts_length, score
    from .files import atomic_write_text
    from .train import load_model

    device = _device(a.device)
    rows = []
    for seed in a.seeds:
        model, spec = load_model(Path(a.models_dir) / f"seed~{seed}" / "model.pt", device)
        data_dir = Path(a.data_dir) / f"seed~{seed}"
        manifest = read_manifest(data_dir / MANIFEST)
        base = {"arch": spec.arch, "q": spec.q, "N": spec.N, "d": spec.d, "width": spec.width, "seed": seed,
                "step": spec.steps, "split": "eval"}
        for L in a.eval_lengths:
            if not accepts_length(model, L):  # the FCN off its training length: no number, ever
                rows.append({**base, "N_eval": L, "metric": "normalized_loss", "value": None,
                             "status": "not_applicable"})
                continue
            metrics = score(model, load_eval_set(data_dir, L, manifest), manifest["streams"]["eval_positions"],
                            device)
            for metric, value in metrics.items():
                rows.append({**base, "N_eval": L, "metric": metric, "value": value, "status": "ok"})
            log.info("%s N'=%d %s", spec.cell, L, " ".join(f"{k} {v:.4f}" for k, v in metrics.items()))
    atomic_write_text(a.out, _csv_text(rows, EVAL_COLUMNS))


# -- analysis (no torch) ---------------------------------------------------------------------------
def cmd_aggregate(a):
    _setup()
    from .tables import build_metrics_table, write_table
    table = build_metrics_table(a.evals, a.curves)
    write_table(table, a.out)
    log.info("wrote %d rows to %s", len(table), a.out)


def cmd_figure(a):
    _setup()
    from .figures import FIGURES, save_figure
    from .tables import read_metrics_table
    table = read_metrics_table(a.table)
    fig = FIGURES[a.name](table)
    save_figure(fig, a.out)
    log.info("wrote %s", ", ".join(a.out))


def cmd_claims(a):
    _setup()
    from .claims import evaluate_claims, write_claims
    from .tables import read_metrics_table
    claims = evaluate_claims(read_metrics_table(a.table))
    write_claims(claims, a.out_csv, a.out_html)
    for c in claims.itertuples():
        log.info("%s %s: %s", "PASS" if c.passed else "FAIL", c.claim, c.measured)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m stsq", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)

    def common(sp, torch_cmd=True):
        if torch_cmd:
            sp.add_argument("--device", default="auto", help="auto (CUDA when present, else CPU), cpu, cuda, cuda:1")
            sp.add_argument("--threads", type=int, default=int(os.environ.get("STSQ_THREADS", 1)),
                            help="CPU threads for torch (default 1)")

    sp = sub.add_parser("data", help="seed manifest and fixed evaluation sets of one (q, N, seed)")
    sp.add_argument("--q", type=int, required=True)
    sp.add_argument("--N", type=int, required=True)
    sp.add_argument("--d", type=int, required=True)
    sp.add_argument("--seed", type=int, required=True)
    sp.add_argument("--eval-lengths", type=int, nargs="+", required=True, help="the lengths N' to draw sets at")
    sp.add_argument("--n-eval", type=int, required=True, help="samples per evaluation set")
    sp.add_argument("--out-dir", required=True)
    common(sp)
    sp.set_defaults(func=cmd_data)

    sp = sub.add_parser("train", help="train every seed of one (arch, q, N, width) cell")
    sp.add_argument("--arch", required=True, choices=["tf_stochastic", "tf_fixed", "tf_positional", "fcn"])
    for k in ("q", "N", "d", "width", "steps"):
        sp.add_argument(f"--{k}", type=int, required=True)
    sp.add_argument("--seeds", type=int, nargs="+", required=True)
    sp.add_argument("--lr", type=float, required=True)
    sp.add_argument("--optimizer", default="adam", choices=["adam", "sgd"])
    sp.add_argument("--batch-size", type=int, default=256)
    sp.add_argument("--layers", type=int, default=1, choices=[1, 2], help="FCN hidden layers")
    sp.add_argument("--query", default="sum", choices=["sum", "mean"], help="p_y as sum or mean")
    sp.add_argument("--log-every", type=int, default=100)
    sp.add_argument("--checkpoint-every", type=int, default=500)
    sp.add_argument("--data-dir", required=True, help="folder with seed~S/manifest.json per seed")
    sp.add_argument("--out-dir", required=True, help="writes seed~S/model.pt and seed~S/curve.csv")
    sp.add_argument("--checkpoint-dir", required=True, help="seed~S/last.pt, resumed from on restart")
    common(sp)
    sp.set_defaults(func=cmd_train)

    sp = sub.add_parser("evaluate", help="score every seed of a trained cell at every length N'")
    sp.add_argument("--models-dir", required=True)
    sp.add_argument("--data-dir", required=True)
    sp.add_argument("--seeds", type=int, nargs="+", required=True)
    sp.add_argument("--eval-lengths", type=int, nargs="+", required=True)
    sp.add_argument("--out", required=True, help="tidy CSV")
    common(sp)
    sp.set_defaults(func=cmd_evaluate)

    sp = sub.add_parser("aggregate", help="one tidy table of every evaluation and training curve")
    sp.add_argument("--evals", nargs="+", required=True)
    sp.add_argument("--curves", nargs="+", required=True, help="seed~S/curve.csv files under models/<cell>/")
    sp.add_argument("--out", required=True)
    sp.set_defaults(func=cmd_aggregate)

    sp = sub.add_parser("figure", help="draw one figure from the metrics table")
    sp.add_argument("name", choices=["training", "separation", "length", "mechanism"])
    sp.add_argument("--table", required=True)
    sp.add_argument("--out", nargs="+", required=True, help="files to write (.pdf, .png)")
    sp.set_defaults(func=cmd_figure)

    sp = sub.add_parser("claims", help="the claims table: measured value, threshold, pass/fail")
    sp.add_argument("--table", required=True)
    sp.add_argument("--out-csv", required=True)
    sp.add_argument("--out-html", required=True)
    sp.set_defaults(func=cmd_claims)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    from .files import CorruptFileError
    try:
        args.func(args)
    except CorruptFileError as e:
        log.error("%s", e)
        return 2
    except Exception as e:
        if type(e).__name__ in ("DivergenceError", "LengthError"):
            log.error("%s", e)
            return 3
        raise
    return 0
