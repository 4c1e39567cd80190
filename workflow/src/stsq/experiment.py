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
    # a training step's cost on one CPU core (stsq.sweep.estimated_seconds): nanoseconds per unit of
    # work (B N (d + d_e) for a transformer, B n_in m for the FCN; `make bench`, part b) and a fixed
    # cost per step (Python and kernel launches, fitted to the cpu sweep's training jobs)
    ns_per_unit: float
    step_overhead_s: float


ARCHS: dict[str, Arch] = {a.name: a for a in [
    Arch("tf_stochastic", True, "stochastic", False, 5.5, 0.4e-3),
    Arch("tf_fixed", True, "fixed", False, 2.0, 0.4e-3),
    Arch("tf_positional", True, "stochastic", True, 5.5, 0.9e-3),  # the reduced model of the theory
    Arch("fcn", False, None, False, 0.066, 0.9e-3),
]}
FCN_ARCH = "fcn"
STOCHASTIC, FIXED = "tf_stochastic", "tf_fixed"

OPTIMIZERS = ("adam", "sgd")
SCHEDULES = ("constant", "cosine")  # the learning rate over training: fixed, or lr (1 + cos(pi t / T)) / 2
QUERIES = ("sum", "mean")  # p_y as the sum or the mean of the selected p_j
FCN_LAYERS = (1, 2)
Y_ENCODINGS = ("indicator", "indices")  # how the FCN sees y: 1_y in {0,1}^N, or y as q numbers

# The one default of each training setting (library, CLI and the schema's defaults).
DEFAULTS = {
    "optimizer": "adam",
    "schedule": "constant",
    "lr_width_exponent": 0,  # widths above lr_reference_width train at lr (reference / width)^exponent
    "lr_reference_width": 64,
    "layers": 1,
    "query": "sum",
    "y_encoding": "indicator",
    "batch_size": 256,
    "log_every": 100,
    "checkpoint_every": 500,
    "oracle_samples": 2048,  # Monte Carlo samples per N' of the oracle (stsq.oracle)
    "projection_samples": 512,  # ... of a trained model's projection onto the family (per model and N')
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
        self.oracle_table = f"{self.root}/tables/oracle.csv"  # the oracle at every (q, N, d_e, N')
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

    def oracle(self, q="{q}", N="{N}", d_e="{width}") -> str:
        """The ground-truth family's best loss at every N' for one (q, N, d_e) (stsq.oracle)."""
        return f"{self.root}/oracle/q~{q}/N~{N}/d_e~{d_e}.csv"

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
# The oracle table (stsq.oracle.oracle_rows), width = d_e: the family's best loss at each N' (c, v fitted there).
ORACLE_COLUMNS = ["q", "N", "d", "width", "N_eval", LOSS, "standard_error", "c", "v", "samples"]
# Per trained stochastic-PE model and N' (split eval): the loss of its projection onto the ground-truth
# family, W_pp = c I and V = v [I, 0] with its own c = tr(W_pp) / d_e and v = tr(V_x) / d (stsq.oracle).
PROJECTION = "projection_loss"


# -- figures ------------------------------------------------------------------------------------
# name -> what it shows.  Rule fig_<name> writes figures/<name>.{pdf,png}, captioned by
# workflow/report/<name>.rst; `python -m stsq figure <name>` draws it.
FIGURES = {
    "training": "normalized test loss vs training step",
    "separation": "final loss vs width, with the FCN's width floor",
    "length": "loss at unseen lengths N' = N x factor, stochastic vs fixed PE",
    "mechanism": "attention on y, its evenness, and the ground-truth cosines over training",
    "scaling": "the width needed to reach loss EPSILON against N d (FCN) and q log N (transformer)",
}
FIGURE_FORMATS = ("pdf", "png")


FIGURE_RULE = "fig_{name}"  # the rule that draws figure {name}


# -- claims -------------------------------------------------------------------------------------
# Each claim is a statement of the paper, measured from the tidy table (and the oracle table) of any
# sweep.  Its verdict is PASS, FAIL, or NOT TESTED when the sweep cannot test it (a scaling claim with
# one N, a width claim with one d_e).  docs/claims.md explains each threshold.
PASS, FAIL, NOT_TESTED = "PASS", "FAIL", "NOT TESTED"
EPSILON = 0.1  # the target loss of the scaling claims: the width "needed" is the smallest reaching it
ORACLE_FACTOR, ORACLE_SLACK = 1.25, 0.01  # "reaches the oracle": loss <= 1.25 x oracle + 0.01
FIXED_FAILS_ABOVE = 0.3  # fixed PE off its training length: loss above this (predicting 0 scores 1)
COS_V_MIN = 0.9  # cos(V, [I, 0]) at the end of training, stochastic PE
COS_W_MIN = 0.5  # cos(W_pp, I) at the end of training, stochastic PE
FCN_SLOPE_MIN = 0.75  # d log m_eps / d log(N d) of the FCN: the floor says 1
TF_SLOPE_MAX = 1.5  # d log d_e,eps / d log(q log N) of the transformer: the theory says 1 (or less)


@dataclass(frozen=True)
class Claim:
    key: str
    statement: str  # the paper's statement, in words
    measured: str  # what is measured, from which rows of the table
    threshold: str  # what PASS means
    why: str  # where the threshold comes from


CLAIMS = {c.key: c for c in [
    Claim("learns", "the transformer (stochastic PE) learns STS_q by gradient descent",
          "worst seed's final loss at N' = N, largest d_e",
          f"<= {ORACLE_FACTOR:g} x oracle + {ORACLE_SLACK:g}",
          "theory: GD converges to the ground-truth family, whose best loss is the oracle's; the slack "
          "covers finite training (for q <= 2 the oracle is 0 and the loss keeps falling as W_pp's scale grows)"),
    Claim("wider_d_e", "a wider positional encoding lowers the transformer's loss",
          "mean final loss at the largest vs the smallest d_e, N' = N", "largest < smallest",
          "theory: near-orthogonal encodings need d_e = Theta(q log N); the oracle falls with d_e"),
    Claim("directions", "gradient descent converges to the ground-truth directions (stochastic PE)",
          "worst seed's cos(V, [I, 0]) and cos(W_pp, I) at the end of training, largest d_e",
          f"cos V >= {COS_V_MIN:g} and cos W_pp >= {COS_W_MIN:g}",
          "theory: W_pp -> c I, V -> [I, 0]; Adam's per-coordinate steps leave noise on W_pp's d_e^2 "
          "entries, so its cosine stays below V's (measured, docs/claims.md)"),
    Claim("length_stochastic", "stochastic positional encodings generalize to unseen lengths",
          "each seed's loss at every N' > N, largest d_e, against its projection onto the ground-truth family "
          "(W_pp = c I, V = v [I, 0] with the model's own c and v) at N'",
          f"<= {ORACLE_FACTOR:g} x projection + {ORACLE_SLACK:g}",
          "theory: the ground-truth solution does not depend on N, so a model that converged to its directions "
          "scores at N' what that solution at the same scale c does; the scale is the training progress (for "
          "q <= 2 the loss at long N' keeps falling as c grows)"),
    Claim("length_fixed", "fixed positional encodings fail at unseen lengths",
          "best seed's loss at every N' > N, largest d_e (and at N' = N it fits)",
          f"> {FIXED_FAILS_ABOVE:g} at every N' > N",
          "paper: fixed PE hinders length generalization; rows N+1..N' of its table were never trained"),
    Claim("fcn_floor", "no FCN beats the exact width floor",
          "every seed's final loss minus the floor at its width m", ">= 0",
          "exact bound (docs/paper.md): a first layer of width m sees m projections of vec(X)"),
    Claim("fcn_scaling", "the width an FCN needs grows like N d",
          f"slope of log m_eps vs log(N d), m_eps the smallest m reaching loss {EPSILON:g} (per seed; "
          "not reached: the largest m, a lower bound)", f"worst seed >= {FCN_SLOPE_MIN:g}",
          "theory: Omega(N d); the exact floor needs m*(eps) ~ (1 - eps) N d, slope 1"),
    Claim("tf_scaling", "the width a transformer needs grows like q log N or slower",
          f"slope of log d_e,eps vs log(q log N), d_e,eps the smallest d_e reaching loss {EPSILON:g} (per seed)",
          f"worst seed <= {TF_SLOPE_MAX:g}",
          "theory: embedding width O(d + q log N); near-orthogonal encodings need d_e = Theta(q log N)"),
]}
CLAIM_COLUMNS = ["claim", "statement", "q", "N", "cell", "measured", "value", "threshold", "verdict"]
