"""The numbers docs/claims.md quotes, written from a run's tables so that they cannot go stale.

Each sweep's section of docs/claims.md holds one generated block between the lines
``<!-- <sweep> digest: start -->`` and ``<!-- <sweep> digest: end -->``.  ``block`` builds it from the
sweep's tables (its committed reference, ``reference/<sweep>``, or a run's ``results/<sweep>/tables``), in parts:

- ``digest``: the claims rule's digest (``tables/claims.md``, stsq.claims.table.claims_digest);
- ``needs``: the needed width at eps = EPSILON per (arch, q, d, steps) and N (``tables/critical.csv``):
  geometric mean over seeds with the seed range, ``> w`` where no width of the grid reached eps, ``< w``
  where the smallest did; for the FCN the exact floor's m*(eps) beside;
- ``losses``: the loss at each evaluation length per (N, arch) (``tables/encodings.csv``): mean and seed range;
- ``samples``: a samples sweep's samples to each threshold per curve and N (``tables/samples.csv``): median and seed
  range, ``>= cap`` where a seed stopped at the cap;
- ``slopes``: its slopes of log samples against log N per curve and threshold (``tables/slopes.csv``);
- ``authors``: the authors' script beside this pipeline at one grid, test set and threshold, twice: their script at
  our grid (``AUTHORS_OURS``) beside the sweep's own samples, and their script at their grid (``AUTHORS``) beside
  the sweep ``qstr_theirs`` (``reference/qstr_theirs``, docs/authors-grid.yaml); per family, mode and threshold the
  slope of the median samples with the repeats' range, and the medians per N.

``write`` replaces the block in place (`make docs`, from each sweep's committed reference); with
``check`` it only compares, and fails naming the file and the sweep where the text differs.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from stsq.core.claim_records import EPSILON
from stsq.core.errors import PipelineError
from stsq.core.experiment import ARCHS, FCN_ROLE, model_keys
from stsq.sts.theory import width_needed
from stsq.width.critical import ABOVE, BELOW

PARTS = ("digest", "needs", "losses", "samples", "slopes", "authors")
# the authors' own script's samples, run here at their grid and at ours (each file's header says how)
AUTHORS = Path(__file__).resolve().parents[4] / "docs" / "retrieval_authors.csv"
AUTHORS_OURS = AUTHORS.with_name("retrieval_authors_ourgrid.csv")
# this pipeline at the authors' grid and test set (docs/authors-grid.yaml), beside the sweep's reference
THEIR_GRID = "qstr_theirs"
# the settings benchmarks/authors_protocol.py can change in their script, said in words
VARIANTS = {("init", "torch"): "", ("init", "gaussian"): "`--init gaussian`: every weight matrix from N(0, 1 / fan-in)",
            ("tables", "shared"): "", ("tables", "per-repeat"): "`--tables per-repeat`: u and the codes drawn anew "
            "for each repeat"}


def markers(sweep: str) -> tuple[str, str]:
    return f"<!-- {sweep} digest: start -->", f"<!-- {sweep} digest: end -->"


def _path(tables: Path, name: str) -> Path:
    path = Path(tables) / name
    if not path.exists():
        raise PipelineError(f"{path}: missing; run the sweep first (its make target) to write its tables")
    return path


def _read(tables: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(_path(tables, name))


def _range(g: pd.Series) -> str:
    mean = float(np.exp(np.log(g).mean()))
    return f"{mean:.3g}" if len(g) == 1 else f"{mean:.3g} [{g.min():.3g}, {g.max():.3g}]"


def _need_cell(g: pd.DataFrame) -> str:
    """One (arch, q, N, d, steps)'s need over seeds: the resolved ones' geometric mean and range, and how
    many seeds only bound it."""
    ok = g[~g["censored"].isin([ABOVE, BELOW])]["critical_width"]
    text = _range(ok) if len(ok) else ""
    for kind, sign in ((ABOVE, ">"), (BELOW, "<")):
        bound = g[g["censored"] == kind]["critical_width"]
        if len(bound):
            text += (" " if text else "") + f"({len(bound)} seed{'s' * (len(bound) > 1)} {sign} {bound.iloc[0]:.3g})"
    return text


def needs_table(tables: Path) -> str:
    crit = _read(tables, "critical.csv")
    crit = crit[np.isclose(crit["epsilon"], EPSILON)]
    Ns = sorted(crit["N"].unique())
    lines = [f"Needed width at eps = {EPSILON:g} (`tables/critical.csv`; geometric mean [seed range]):", "",
             "| arch | q | d | steps | " + " | ".join(f"N = {N}" for N in Ns) + " |",
             "|---|---|---|---|" + "---|" * len(Ns)]
    for (arch, q, d, steps, *_), g in crit.groupby(model_keys("N", "width", "seed"), sort=True):
        cells = {N: _need_cell(h) for N, h in g.groupby("N")}
        lines.append(f"| `{arch}` | {q} | {d} | {steps} | " + " | ".join(cells.get(N, "") for N in Ns) + " |")
        if arch in ARCHS and ARCHS[arch].role == FCN_ROLE:  # the floor is the FCN's, on STS_q
            floor = {N: f"{width_needed(int(N), int(d), int(q), EPSILON):.3g}" for N in cells}
            lines.append(f"| exact floor m*({EPSILON:g}) | {q} | {d} | | "
                         + " | ".join(floor.get(N, "") for N in Ns) + " |")
    return "\n".join(lines) + "\n"


def losses_table(tables: Path) -> str:
    enc = _read(tables, "encodings.csv")
    enc = enc[enc["status"] == "ok"]
    factors = sorted(enc["factor"].unique())
    lines = ["Loss at N' = factor x N (`tables/encodings.csv`; mean [seed range]) and the attention mass on y:", "",
             "| q | N | d | d_e | arch | " + " | ".join(f"{f:g}N" for f in factors) + " | attention on y |",
             "|---|---|---|---|---|" + "---|" * len(factors) + "---|"]
    keys = model_keys("seed")  # one model family: arch, q, N, d, steps, width (and any new axis)
    enc = enc.sort_values([*model_keys("arch", "steps", "seed"), "arch"], kind="stable")  # by shape, then arch
    for key, g in enc.groupby(keys, sort=False):
        named = dict(zip(keys, key))
        arch, q, N, d, w = named["arch"], named["q"], named["N"], named["d"], named["width"]
        at = {f: r for f, r in zip(g["factor"], g.itertuples())}
        loss = [f"{at[f].loss_mean:.3g} [{at[f].loss_min:.3g}, {at[f].loss_max:.3g}]" if f in at else ""
                for f in factors]
        attn = " / ".join(f"{at[f].attn_mass_y_mean:.2f}" for f in factors if f in at
                          and not math.isnan(at[f].attn_mass_y_mean))
        lines.append(f"| {q} | {N} | {d} | {w} | `{arch}` | " + " | ".join(loss) + f" | {attn} |")
    return "\n".join(lines) + "\n"


def _curve_name(r) -> str:
    return f"`{r['arch']}`" + (f", {r['heads']} head{'s' * (r['heads'] > 1)}" if r["q"] > 1 else "")


def samples_table(tables: Path) -> str:
    t = _read(tables, "samples.csv")
    Ns = sorted(t["N"].unique())
    lines = ["Samples to threshold (`tables/samples.csv`; median [seed range]; >= where half the seeds or more "
             "stopped at the cap, so that the median is a lower bound):",
             "", "| curve | q | mode | threshold | " + " | ".join(f"N = {N}" for N in Ns) + " |",
             "|---|---|---|---|" + "---|" * len(Ns)]
    for (arch, q, mode, heads, thr), g in t.groupby(["arch", "q", "mode", "heads", "threshold"], sort=False):
        cells = {}
        for N, h in g.groupby("N"):
            cens = h["censored"].astype(str).str.lower() == "true"
            bound = ">= " if 2 * cens.sum() >= len(h) else ""
            text = f"{bound}{h['samples'].median():.0f} [{h['samples'].min():.0f}, {h['samples'].max():.0f}]"
            cells[N] = (f">= {h['samples'].max():.0f} ({cens.sum()} of {len(h)} at the cap)" if cens.all() else
                        text + (f" ({cens.sum()} at the cap)" if cens.any() else ""))
        name = _curve_name({"arch": arch, "q": q, "heads": heads})
        lines.append(f"| {name} | {q} | {mode} | {thr:g} | " + " | ".join(cells.get(N, "") for N in Ns) + " |")
    return "\n".join(lines) + "\n"


def slopes_table(tables: Path) -> str:
    t = _read(tables, "slopes.csv")
    lines = ["Slope of log samples against log N (`tables/slopes.csv`): of the seeds' median [seed range], over the N "
             "before the first N where a seed stopped at the cap; from the smallest N to that N, the floor of the "
             "growth (the lowest seed's, its samples there at the cap):", "",
             "| curve | q | mode | threshold | slope | over N | stopped at the cap at N | floor of the growth to it |",
             "|---|---|---|---|---|---|---|---|"]
    for r in t.to_dict("records"):
        slope = ("-" if math.isnan(r["slope"]) else f"{r['slope']:.2f} [{r['slope_low']:.2f}, {r['slope_high']:.2f}]")
        over = str(r["Ns"]).replace(" ", ", ") if isinstance(r["Ns"], str) else "-"
        cens = str(r["censored_Ns"]).replace(" ", ", ") if isinstance(r["censored_Ns"], str) else "-"
        floor = "-" if math.isnan(r["floor"]) else f">= {r['floor']:.2f}"
        lines.append(f"| {_curve_name(r)} | {r['q']} | {r['mode']} | {r['threshold']:g} | {slope} | {over} | {cens} "
                     f"| {floor} |")
    return "\n".join(lines) + "\n"


def _side(t: pd.DataFrame, run: str) -> pd.DataFrame:
    """One side of a comparison: per (family, mode, threshold, N) the median samples and whether it is censored,
    and per run (``run``: repeat or seed) the samples, keyed alike."""
    censored = t["censored"].astype(str).str.lower() == "true"
    t = t.rename(columns={"arch": "family"}).assign(run=t[run], censored=censored)
    return t[["family", "mode", "threshold", "N", "run", "samples", "censored"]]


def _curve_text(g: pd.DataFrame):
    """(slope of the median [range over runs], {N: median text}) over the N where no run stopped at the cap."""
    from stsq.samples.table import fit
    open_ = g.groupby("N")["censored"].any()
    Ns = [N for N in sorted(open_.index) if not open_[N]]
    med = g.groupby("N")["samples"].median()
    per = [fit(Ns, h.set_index("N").loc[Ns, "samples"]) for _, h in g.groupby("run")] if len(Ns) > 1 else []
    slope = f"{fit(Ns, med.loc[Ns]):.2f} [{min(per):.2f}, {max(per):.2f}]" if per else "-"
    cells = {N: (">= " if open_[N] else "") + f"{med[N]:,.0f}" for N in med.index}
    return slope, cells, Ns


def _pairs(theirs: pd.DataFrame, ours: pd.DataFrame, names=("theirs", "ours")) -> list[str]:
    a, b = names
    lines = [f"| family | mode | threshold | slope, {a} | slope, {b} | over N | samples per N, {a} / {b} |",
             "|---|---|---|---|---|---|---|"]
    for (fam, mode, thr), g in theirs.groupby(["family", "mode", "threshold"], sort=False):
        o = ours[(ours["family"] == fam) & (ours["mode"] == mode) & np.isclose(ours["threshold"], thr)
                 & ours["N"].isin(g["N"].unique())]
        if not len(o):
            continue
        common = sorted(set(g["N"]) & set(o["N"]))  # both slopes over the N both ran
        s1, _, n1 = _curve_text(g[g["N"].isin(common)])
        s2, _, n2 = _curve_text(o[o["N"].isin(common)])
        c1, c2 = _curve_text(g)[1], _curve_text(o)[1]
        both = [N for N in n1 if N in n2]
        over = ", ".join(str(N) for N in both) if n1 == n2 else f"{', '.join(map(str, n1))} / {', '.join(map(str, n2))}"
        per_n = "; ".join(f"{N}: {c1.get(N, '-')} / {c2.get(N, '-')}" for N in sorted(set(c1) | set(c2)))
        lines.append(f"| `{fam}` | {mode} | {thr:g} | {s1} | {s2} | {over} | {per_n} |")
    return lines


def authors_table(tables: Path) -> str:
    """Their script beside this pipeline, at our grid and at theirs (see ``AUTHORS_OURS`` and ``AUTHORS``)."""
    ours = _side(_read(tables, "samples.csv").query("q == 1"), "seed")
    runs = pd.read_csv(AUTHORS_OURS, comment="#")
    base = (runs["init"] == "torch") & (runs["tables"] == "shared")
    lines = ["At this sweep's grid: the authors' script run here at the sweep's N, test set (the cell's mode), "
             "checks (every 10 steps on 1,000 samples), cap and GRU width (`docs/retrieval_authors_ourgrid.csv`, its "
             "commands in its header), 3 repeats, beside the sweep's 3 seeds. Slope of log samples against log N, of "
             "the median [range over repeats or seeds], over the N where none stopped at the cap (>=):", "",
             *_pairs(_side(runs[base], "repeat"), ours)]
    for (init, drawn), v in runs[~base].groupby(["init", "tables"], sort=False):
        mine = _side(v, "repeat")
        theirs = _side(runs[base], "repeat").merge(mine[["family", "mode", "threshold"]].drop_duplicates())
        what = ", ".join(w for w in (VARIANTS["init", init], VARIANTS["tables", drawn]) if w)
        lines += ["", f"Their script at the same grid, changed in one setting ({what}), beside it unchanged:", "",
                  *_pairs(theirs, mine, ("theirs", "changed"))]
    theirs_grid = Path(tables).parent / THEIR_GRID
    if (theirs_grid / "samples.csv").exists():
        at_theirs = pd.read_csv(AUTHORS, comment="#")
        mine = _side(_read(theirs_grid, "samples.csv"), "seed")
        lines += ["", "At the authors' grid: their script at their settings (`docs/retrieval_authors.csv`; the "
                  "general task, N = 2 to 12, the test set drawn in the simple mode, 5 repeats, the GRU 1 repeat "
                  "checked every 100 steps) beside this pipeline at the same grid, test set and checks "
                  f"(`docs/authors-grid.yaml`, `reference/{THEIR_GRID}`), 3 seeds:", "",
                  *_pairs(_side(at_theirs.assign(threshold=0.5), "repeat"), mine)]
    return "\n".join(lines) + "\n"


def block(tables: Path, parts) -> str:
    """The generated text of one sweep's block, from its tables directory."""
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        raise PipelineError(f"--parts: unknown {unknown}; known: {', '.join(PARTS)}")
    out = []
    for p in parts:
        if p == "digest":
            out.append(_path(tables, "claims.md").read_text())
        elif p == "needs":
            out.append(needs_table(Path(tables)))
        elif p == "samples":
            out.append(samples_table(Path(tables)))
        elif p == "slopes":
            out.append(slopes_table(Path(tables)))
        elif p == "authors":
            out.append(authors_table(Path(tables)))
        else:
            out.append(losses_table(Path(tables)))
    return "\n".join(out)


def quoted(doc_text: str, sweep: str, doc: str = "docs/claims.md") -> str:
    """The text between a sweep's markers in the doc."""
    start, end = markers(sweep)
    if doc_text.count(start) != 1 or doc_text.count(end) != 1:
        raise PipelineError(f"{doc}: needs exactly one '{start}' and one '{end}' line")
    return doc_text.split(start)[1].split(end)[0].strip("\n")


def write(doc: Path, sweep: str, text: str, check: bool = False) -> bool:
    """Put ``text`` between the sweep's markers in ``doc`` (True where it changed); with ``check``, raise
    where it differs instead."""
    doc = Path(doc)
    current = doc.read_text()
    old = quoted(current, sweep, str(doc))
    new = text.strip("\n")
    if old == new:
        return False
    if check:
        raise PipelineError(f"{doc}: the '{sweep}' block differs from these tables; "
                            f"`make docs` rewrites it from the references")
    start, end = markers(sweep)
    head, rest = current.split(start)
    doc.write_text(f"{head}{start}\n{new}\n{end}{rest.split(end, 1)[1]}")
    return True
