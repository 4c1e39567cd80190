"""The experiment's vocabulary, defined once (no torch: it runs at DAG-parse time).

Everything the rules, the command line, the library, the figures, the claims
and the tests call by name lives here: the architectures and their defaults,
the results layout, the table columns, the figures and the claims.  See
docs/paper.md for the paper's setup these names stand for.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


# -- architectures -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Arch:
    """One model family of the grid.  ``width`` of a cell is d_e for a transformer, m for the FCN."""

    name: str
    transformer: bool
    encoding: str | None  # the transformer's positional encoding: "stochastic" or "fixed"
    positional_only: bool  # W acts on p only and V = [I_d, 0]: the reduced model of the theory
    lr: float  # default learning rate (the sweeps in config.yaml set their own)
    label: str  # what figures and claims call it


ARCHS: dict[str, Arch] = {a.name: a for a in [
    Arch("tf_stochastic", True, "stochastic", False, 1e-2, "transformer, stochastic PE"),
    Arch("tf_fixed", True, "fixed", False, 1e-2, "transformer, fixed PE"),
    Arch("tf_positional", True, "stochastic", True, 1e-2, "transformer, positions only"),
    Arch("fcn", False, None, False, 1e-3, "FCN"),
]}
TRANSFORMER_ARCHS = tuple(a for a in ARCHS if ARCHS[a].transformer)
FCN_ARCH = "fcn"
STOCHASTIC, FIXED = "tf_stochastic", "tf_fixed"

OPTIMIZERS = ("adam", "sgd")
QUERIES = ("sum", "mean")  # p_y as the sum or the mean of the selected p_j
FCN_LAYERS = (1, 2)
Y_ENCODINGS = ("indicator", "indices")  # how the FCN sees y: 1_y in {0,1}^N, or y as q numbers

# The one default of each training setting (library, CLI and the schema's defaults).
DEFAULTS = {
    "optimizer": "adam",
    "layers": 1,
    "query": "sum",
    "y_encoding": "indicator",
    "batch_size": 256,
    "log_every": 100,
    "checkpoint_every": 500,
}


def is_transformer(arch: str) -> bool:
    return ARCHS[arch].transformer


def width_name(arch: str) -> str:
    """The symbol the width stands for: d_e for a transformer, m for the FCN."""
    return "d_e" if is_transformer(arch) else "m"


def eval_factors(factors) -> list[int]:
    """The evaluation length factors of a sweep, always including 1 (the training length)."""
    return sorted({int(f) for f in factors} | {1})


def eval_lengths(N: int, factors) -> list[int]:
    """The evaluation lengths N' = N x factor, always including N itself."""
    return [int(N) * f for f in eval_factors(factors)]


# -- the results layout ---------------------------------------------------------------------------
# Every path is a pattern: called with no arguments it keeps Snakemake's wildcards ({q}, {N}, ...),
# called with values it is a concrete path.  Everything of a sweep lives under results/<sweep>/.
RESULTS = "results"
CELL = "arch~{arch}/q~{q}/N~{N}/width~{width}"
MANIFEST = "manifest.json"
MODEL, CURVE, CHECKPOINT = "model.pt", "curve.csv", "last.pt"


def cell(arch="{arch}", q="{q}", N="{N}", width="{width}") -> str:
    return CELL.format(arch=arch, q=q, N=N, width=width)


def seed_dir(folder, seed) -> Path:
    """A cell's (or a (q, N)'s) folder for one seed."""
    return Path(folder) / f"seed~{seed}"


def eval_set_name(factor) -> str:
    """The file of the evaluation set at N' = factor x N (named by the factor, so a rule can declare
    every set of a seed as an output pattern)."""
    return f"eval_x{factor}.pt"


class Layout:
    """Where a sweep's files live: ``Layout("cpu").table`` is results/cpu/tables/metrics.csv."""

    def __init__(self, sweep: str):
        self.sweep = sweep
        self.root = f"{RESULTS}/{sweep}"
        self.table = f"{self.root}/tables/metrics.csv"  # the tidy table
        self.checksum = f"{self.table}.sha256"
        self.report = f"{self.root}/report.html"

    def data(self, q="{q}", N="{N}") -> str:
        """The evaluation sets of a (q, N): one folder per seed."""
        return f"{self.root}/data/q~{q}/N~{N}"

    def data_index(self, q="{q}", N="{N}") -> str:
        return f"{self.data(q, N)}/index.json"

    def seed_data(self, q="{q}", N="{N}", seed="{seed}") -> str:
        """One seed's manifest and evaluation sets."""
        return seed_dir(self.data(q, N), seed).as_posix()

    def manifest(self, q="{q}", N="{N}", seed="{seed}") -> str:
        return f"{self.seed_data(q, N, seed)}/{MANIFEST}"

    def eval_set(self, q="{q}", N="{N}", seed="{seed}", factor="{factor}") -> str:
        return f"{self.seed_data(q, N, seed)}/{eval_set_name(factor)}"

    def models(self, c=None) -> str:
        """A cell's trained models, one folder per seed."""
        return f"{self.root}/models/{c or cell()}"

    def model(self, c=None, seed="{seed}", name=MODEL) -> str:
        return f"{seed_dir(self.models(c), seed).as_posix()}/{name}"

    def checkpoints(self, c=None) -> str:
        return f"{self.root}/checkpoints/{c or cell()}"

    def evaluation(self, c=None) -> str:
        return f"{self.root}/eval/{c or cell()}.csv"

    def claims(self, ext) -> str:
        return f"{self.root}/tables/claims.{ext}"

    def figure(self, name, ext) -> str:
        return f"{self.root}/figures/{name}.{ext}"

    def log(self, rule, job="") -> str:
        return f"{self.root}/logs/{rule}/{job}.log" if job else f"{self.root}/logs/{rule}.log"

    def benchmark(self, rule, job) -> str:
        return f"{self.root}/benchmarks/{rule}/{job}.tsv"


# -- the tidy table ---------------------------------------------------------------------------------
IDS = ["arch", "q", "N", "d", "width", "seed"]  # one trained model
TABLE_COLUMNS = [*IDS, "step", "split", "N_eval", "metric", "value", "status"]
TABLE_KEYS = TABLE_COLUMNS[:-2]
INT_COLUMNS = ["q", "N", "d", "width", "seed", "step", "N_eval"]
SPLITS = ("train", "test", "eval")  # training loss; the curve on the fixed test set; the final model at N'
OK, NOT_APPLICABLE = "ok", "not_applicable"
LOSS = "normalized_loss"
MECHANISM_METRICS = {  # metric -> what figures call it
    "attn_mass_y": "attention mass on y",
    "attn_evenness_y": "evenness inside y",
    "cos_W_pp_identity": "cos(W_pp, I)",
    "cos_V_ground_truth": "cos(V, [I, 0])",
}
CURVE_METRICS = [LOSS, *MECHANISM_METRICS]
CURVE_COLUMNS = [*IDS, "step", "train_loss", *CURVE_METRICS]  # the wide training curve, one row per logged step


# -- figures ------------------------------------------------------------------------------------
# name -> what it shows.  Rule fig_<name> writes figures/<name>.{pdf,png}, captioned by
# workflow/report/<name>.rst; `python -m stsq figure <name>` draws it.
FIGURES = {
    "training": "normalized test loss vs training step",
    "separation": "final loss vs width, with the FCN's width floor",
    "length": "loss at unseen lengths N' = N x factor, stochastic vs fixed PE",
    "mechanism": "attention on y, its evenness, and the ground-truth cosines over training",
}
FIGURE_FORMATS = ("pdf", "png")


FIGURE_RULE = "fig_{name}"  # the rule that draws figure {name}


# -- claims -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LossClaim:
    """A statement about one arch's final normalized loss at N' = factor x N (largest d_e of the sweep)."""

    statement: str
    arch: str
    factor: int
    op: str  # "<" or ">": every seed's loss must be on this side of the threshold
    threshold: float


LOSS_CLAIMS = [
    LossClaim("transformer (stochastic PE) learns STS_q", STOCHASTIC, 1, "<", 0.02),
    LossClaim("stochastic PE generalizes to 4x the training length", STOCHASTIC, 4, "<", 0.1),
    LossClaim("fixed PE fails at 2x the training length", FIXED, 2, ">", 0.3),
]
FCN_FAILS = LossClaim("FCN does not learn STS_q at the sweep's sample budget", FCN_ARCH, 1, ">", 0.5)
FCN_ABOVE_FLOOR = "every FCN stays above its width floor (loss - floor)"
CLAIM_COLUMNS = ["claim", "q", "N", "cell", "measured", "worst", "threshold", "passed"]
