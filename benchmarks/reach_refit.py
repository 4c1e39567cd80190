"""Why a trained transformer's reach stops where it does: each model rescored at the longer lengths with one of
its two scales refitted there, beside the ground-truth family with its parameters fixed at N and refitted.

For each stochastic-PE model of a finished width sweep (its ``models/`` and ``data/``) and each evaluation length
N' > N, the normalized loss on that length's evaluation set:

- ``trained``: the model as trained (what the evaluation table holds);
- ``value``: V multiplied by the one factor of ``SCALES`` that scores best at N' (the value scale refitted);
- ``temperature``: W multiplied by the best factor (the attention's temperature refitted);
- ``both``: the best pair.

Each factor is fitted on the evaluation set it is scored on: one number per length, fitted on 512 samples or
more; it says what a scale refitted at N' could reach, not a held-out loss.  Beside each (q, N, d_e) the
ground-truth family (stsq.sts.oracle) at N': its loss with the (c, v) fitted at N (``family_fixed``), with v
refitted and c kept (``family_value``), and refitted in both (``family_refit``, the oracle table's).

    python benchmarks/reach_refit.py results/paper_q4 --out reach_refit.csv
"""
from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

SCALES = [round(0.8 + 0.1 * k, 2) for k in range(23)]  # 0.8 .. 3.0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", type=Path, help="a finished width sweep, results/<sweep>")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--arch", default="tf_stochastic")
    p.add_argument("--family-samples", type=int, default=4096)
    p.add_argument("--d-e", type=int, nargs="*", default=[], help="only the models of these widths")
    a = p.parse_args(argv)
    import torch
    from stsq.core.experiment import LOSS
    from stsq.sts.data import load_eval_set, seed_manifest
    from stsq.sts.oracle import SCALES as C_GRID
    from stsq.sts.oracle import family_loss, family_moments, oracle_loss
    from stsq.sts.scoring import score
    from stsq.width.train import load_model
    torch.set_num_threads(1)

    models = sorted((a.run / "models" / f"arch~{a.arch}").glob("**/model.pt"))
    if not models:
        p.error(f"no {a.arch} model under {a.run / 'models'}")
    rows, family = [], {}
    for path in models:
        model, spec = load_model(path)
        if a.d_e and model.d_e not in a.d_e:
            continue
        index = a.run / "data" / f"q~{spec.q}" / f"N~{spec.N}" / f"d~{spec.d}" / "index.json"
        folder, manifest = seed_manifest(index, spec.seed, q=spec.q, N=spec.N, d=spec.d)
        seed = manifest["streams"]["eval_positions"]
        lengths = sorted(int(L) for L in manifest["eval_sets"] if int(L) > spec.N)
        W0, V0 = model.W.detach().clone(), model.V.detach().clone()

        def loss_at(data, w, v, model=model, W0=W0, V0=V0, seed=seed):
            with torch.no_grad():
                model.W.copy_(W0 * w)
                model.V.copy_(V0 * v)
            return score(model, data, seed)[LOSS]

        key = (spec.q, spec.N, model.d_e)
        if key not in family:
            fit = oracle_loss(spec.q, spec.N, model.d_e, n=a.family_samples, query=model.query)
            family[key] = (fit["c"], fit["v"], {})
        c, v, fam = family[key]
        for L in lengths:
            data = load_eval_set(folder, L, manifest)
            trained = loss_at(data, 1.0, 1.0)
            value = min(loss_at(data, 1.0, s) for s in SCALES)
            temperature = min(loss_at(data, s, 1.0) for s in SCALES)
            both = min(loss_at(data, t, s) for t in SCALES[::3] for s in SCALES[::3])
            if L not in fam:
                mass, sq = family_moments(spec.q, L, model.d_e, C_GRID, n=a.family_samples, query=model.query)
                m, s2 = mass.mean(0), sq.mean(0)
                k = C_GRID.index(c)
                fam[L] = (float(spec.q * v * v * s2[k] - 2 * v * m[k] + 1), float(family_loss(spec.q, m, s2)[k]),
                          float(family_loss(spec.q, m, s2).min()))
            rows.append({"q": spec.q, "N": spec.N, "d": spec.d, "d_e": model.d_e, "steps": spec.steps,
                         "seed": spec.seed, "N_eval": L, "trained": trained, "value": value,
                         "temperature": temperature, "both": both, "family_fixed": fam[L][0],
                         "family_value": fam[L][1], "family_refit": fam[L][2]})
            print(" ".join(f"{k}={x:.4g}" if isinstance(x, float) else f"{k}={x}" for k, x in rows[-1].items()),
                  flush=True)
    with a.out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
