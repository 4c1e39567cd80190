"""The tidy metrics table: one row per (cell, seed, step, split, N_eval, metric).

Columns: arch, q, N, d, width, seed, step, split, N_eval, metric, value, status.

- split "train": the training loss (mean over the last log interval), N_eval = N;
- split "test":  the curve on the fixed in-distribution evaluation set, N_eval = N (and, for a
                 transformer, its loss on the sets at unseen N' at every checkpoint, N_eval = N');
- split "eval":  the final model at every evaluation length N'.
status is "ok", or "not_applicable" (value empty) for an FCN asked for N' != N.

The table is written with a SHA-256 sidecar; reading checks it, so an edited
table is refused instead of drawn.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from stsq.core.experiment import CURVE_METRICS, IDS, INT_COLUMNS, LENGTH_CURVE, LOSS, OK, ORACLE_COLUMNS
from stsq.core.experiment import TABLE_COLUMNS as COLUMNS
from stsq.core.experiment import TABLE_KEYS as KEYS
from stsq.core.files import CorruptFileError, atomic_write_text, sha256_of


def _read_csv(path) -> pd.DataFrame:
    try:
        return pd.read_csv(path, keep_default_na=True)
    except Exception as e:
        raise CorruptFileError(f"{path}: cannot be read as CSV ({type(e).__name__}: {e})") from None


def curve_rows(curve: pd.DataFrame) -> pd.DataFrame:
    """A wide training curve (one row per logged step) as tidy rows; its loss at an unseen length N'
    (column normalized_loss@<N'>) becomes split "test" rows with N_eval = N'."""
    ids = [*IDS, "step"]
    train = curve[ids].assign(split="train", metric=LOSS, value=curve["train_loss"])
    present = [m for m in CURVE_METRICS if m in curve and curve[m].notna().any()]
    test = curve.melt(id_vars=ids, value_vars=present, var_name="metric", value_name="value")
    test = test.assign(split="test").dropna(subset=["value"])
    out = pd.concat([train, test], ignore_index=True).assign(N_eval=lambda t: t["N"])
    lengths = [c for c in curve.columns if c.startswith(LENGTH_CURVE)]
    if lengths:
        at = curve.melt(id_vars=ids, value_vars=lengths, var_name="N_eval", value_name="value").dropna(subset=["value"])
        at = at.assign(split="test", metric=LOSS, N_eval=at["N_eval"].str[len(LENGTH_CURVE):].astype(int))
        out = pd.concat([out, at], ignore_index=True)
    return out.assign(status=OK)


def build_metrics_table(eval_csvs, curve_csvs) -> pd.DataFrame:
    parts = [_read_csv(p) for p in eval_csvs] + [curve_rows(_read_csv(p)) for p in curve_csvs]
    table = pd.concat(parts, ignore_index=True)[COLUMNS]
    for c in INT_COLUMNS:
        table[c] = table[c].astype(int)
    return table.sort_values(KEYS, kind="stable").reset_index(drop=True)


def write_table(table: pd.DataFrame, path) -> None:
    """CSV with full float precision, plus ``<path>.sha256``."""
    buf = io.StringIO()
    table.to_csv(buf, index=False, float_format="%.17g", lineterminator="\n")
    atomic_write_text(path, buf.getvalue())
    atomic_write_text(f"{path}.sha256", sha256_of(path) + "\n")


def check_sidecar(path: Path, rule: str = "aggregate") -> None:
    """A table the pipeline wrote with ``write_table`` (or its own writer and sidecar): refused where its
    ``<path>.sha256`` is missing or differs, naming the rule that rebuilds it."""
    side = Path(f"{path}.sha256")
    if not side.exists():
        raise CorruptFileError(f"{path}: its checksum file {side.name} is missing; rerun the {rule} rule")
    if side.read_text().strip() != sha256_of(path):
        raise CorruptFileError(f"{path}: edited after it was written (SHA-256 differs from {side.name}); "
                               f"rerun `snakemake --forcerun {rule}` to rebuild it")


def read_checked(path, columns, rule: str = "aggregate") -> pd.DataFrame:
    """A table the pipeline wrote: its sidecar hash matches and it has ``columns``."""
    check_sidecar(Path(path), rule)
    table = _read_csv(path)
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise CorruptFileError(f"{path}: missing columns {missing}")
    return table


def read_metrics_table(path) -> pd.DataFrame:
    """Read and check the table: its sidecar hash, its columns, and no NaN posing as a result."""
    table = read_checked(path, COLUMNS)
    ok = table["status"] == OK
    bad = ok & ~np.isfinite(table["value"].astype(float))
    if bad.any():
        r = table[bad].iloc[0]
        raise CorruptFileError(f"{path}: non-finite value for {r['arch']} q={r['q']} N={r['N']} "
                               f"width={r['width']} seed={r['seed']} {r['metric']} at N'={r['N_eval']}")
    return table


def build_oracle_table(oracle_csvs) -> pd.DataFrame:
    """The oracle rows of every (q, N, d_e), one table (stsq.core.experiment.ORACLE_COLUMNS)."""
    if not oracle_csvs:  # a sweep without a stochastic-PE transformer
        return pd.DataFrame(columns=ORACLE_COLUMNS)
    table = pd.concat([_read_csv(p) for p in oracle_csvs], ignore_index=True)[ORACLE_COLUMNS]
    return table.sort_values(["q", "N", "width", "N_eval"], kind="stable").reset_index(drop=True)


def read_oracle_table(path) -> pd.DataFrame:
    """The oracle table, checked like the metrics table (sidecar hash, columns)."""
    return read_checked(path, ORACLE_COLUMNS)


def read_claims_input(table, oracle) -> tuple[pd.DataFrame, pd.DataFrame]:
    """What the width measure's claims read (stsq.core.measures): the tidy table and the oracle table, each checked."""
    return read_metrics_table(table), read_oracle_table(oracle)


def encodings_table(table: pd.DataFrame, position_range: int | None = None) -> pd.DataFrame:
    """Every transformer's final loss at every N' (split eval), over seeds: mean, min and max, its mean loss
    at N and its mean attention mass on y at N' (stsq.core.experiment.ENCODING_COLUMNS), at each arch's largest
    budget.  A length the model cannot take (randomized positions above L) is one ``not_applicable`` row."""
    from stsq.core import experiment
    from stsq.core.experiment import ARCHS, ENCODING_COLUMNS, NOT_APPLICABLE, model_keys, uses_position_range

    ev = table[(table["split"] == "eval") & table["arch"].map(lambda a: ARCHS[a].transformer).astype(bool)]
    ev = experiment.at_largest_budget(ev)
    if ev.empty:
        return pd.DataFrame(columns=ENCODING_COLUMNS)
    cell = model_keys("seed")  # one cell: every axis
    loss = ev[ev["metric"] == LOSS]
    ok = loss[loss["status"] == OK]
    g = ok.groupby([*cell, "N_eval"])["value"]
    out = pd.DataFrame({"loss_mean": g.mean(), "loss_min": g.min(), "loss_max": g.max(), "seeds": g.size()})
    mass = ev[(ev["metric"] == "attn_mass_y") & (ev["status"] == OK)].groupby([*cell, "N_eval"])["value"].mean()
    out = out.join(mass.rename("attn_mass_y_mean")).reset_index().assign(status=OK)
    at_N = ok[ok["N_eval"] == ok["N"]].groupby(cell)["value"].mean().rename("loss_at_N_mean")
    out = out.merge(at_N.reset_index(), on=cell, how="left")
    na = loss[loss["status"] == NOT_APPLICABLE].drop_duplicates([*cell, "N_eval"])[[*cell, "N_eval"]]
    out = pd.concat([out, na.assign(status=NOT_APPLICABLE, seeds=0)], ignore_index=True)
    out["encoding"] = out["arch"].map(lambda a: ARCHS[a].encoding)
    out["factor"] = out["N_eval"] / out["N"]
    out["position_range"] = [position_range if position_range and uses_position_range(a) else None
                             for a in out["arch"]]
    out["seeds"] = out["seeds"].astype(int)
    return out[ENCODING_COLUMNS].sort_values([*model_keys("arch", "steps", "seed"), "arch", "N_eval"],
                                             kind="stable").reset_index(drop=True)
