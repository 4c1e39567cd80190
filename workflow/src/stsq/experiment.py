"""The experiment's vocabulary, defined once (no torch: it runs at DAG-parse time).

Everything the rules, the command line, the library, the figures, the claims
and the tests call by name lives here: the architectures and their defaults,
the results layout, the table columns, the figures and the claims.  See
docs/paper.md for the paper's setup these names stand for.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, fields
from pathlib import Path

from .families import FAMILIES


# -- architectures -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Style:
    """How the figures draw an arch: a colour map (its shade is the width: darker = wider), a marker, a
    line ("-" or "--") and whether markers are filled."""

    colours: str
    marker: str
    line: str = "-"
    filled: bool = True


# What the claims read an arch as (``Arch.role``): the paper's model (every transformer claim), the
# FCN (the width-floor claims), or a model compared only (the encodings table and figure).
PAPER_MODEL, FCN_ROLE, COMPARED = "paper", "fcn", "compared"
ROLES = (PAPER_MODEL, FCN_ROLE)  # the roles the claims read one arch of (COMPARED: measured beside them)
# What an arch is expected to do at lengths N' > N (``Arch.length``), each a claim of the claims table:
# generalize at every N' (this paper, stochastic PE), fail beyond N (this paper: a positional table,
# drawn once or learned), generalize up to the positions' range L (Ruoss et al. 2023), or none (measured
# and reported without a verdict).  docs/claims.md says which claim reads which.
EVERY_LENGTH, TRAINING_LENGTH, POSITION_RANGE, NO_VERDICT = "every", "training", "range", ""


@dataclass(frozen=True)
class Arch:
    """One model family of the grid, and everything the pipeline needs to know about it.

    ``width`` of a cell is d_e for a transformer, m for the FCN.  No module but this one spells an arch's
    name: models, the training step, the figures and the claims read these attributes.  Adding an arch
    is one record here (and, for a new encoding, one function in stsq.positions): docs/extending.md.
    """

    name: str
    family: str  # its model family: a key of stsq.families.FAMILIES (the class, the cost's shape, the width)
    encoding: str | None  # the transformer's positional encoding: a key of stsq.positions.ENCODINGS
    step: str  # its training step: "hand" (stsq.step.TransformerStep, closed-form gradient), "autograd", or
               # "fcn" (stsq.step.FCNStep: autograd, the first layer's weight gradient straight into its place)
    style: Style
    # a training step's cost on one CPU core (stsq.cost.estimated_seconds): nanoseconds per unit of
    # work (B N (d + d_e) for a transformer, B n_in m for the FCN) and a fixed cost per step (Python and
    # kernel launches); a transformer's scoring runs at its step's rate too (stsq.families).  Fitted to the
    # per-step times of the paper sweep's pilot, every cell, two jobs on two cores (docs/performance.md,
    # "The cost said up front"); those of the paper sweep's own archs re-fitted to direct timings
    # (`make bench BENCH_ARGS="--only s --arch NAME"`)
    ns_per_unit: float
    step_overhead_s: float
    role: str = COMPARED  # PAPER_MODEL, FCN_ROLE or COMPARED
    length: str = NO_VERDICT  # what is expected at N' > N: EVERY_LENGTH, TRAINING_LENGTH, POSITION_RANGE, NO_VERDICT
    positional_only: bool = False  # W acts on p only and V = [I_d, 0]: the reduced model of the theory
    core: bool = True  # drawn in the main figures; False: in the encodings table and figure only
    projected: bool = False  # its models are projected onto the ground-truth family W_pp = c I, V = v [I, 0]
                             # (stsq.oracle.projection_loss: the family is the stochastic-PE theory's)
    about: str = ""  # one line for the docs and the figures' captions
    display: str = ""  # its name in the figures' legends and titles (the arch's name where empty)

    @property
    def legend(self) -> str:
        """How the figures name it: ``display``, else its name."""
        return self.display or self.name

    @property
    def transformer(self) -> bool:
        """A model with positions and attention (its family's ``attention``): scored at unseen lengths N',
        read by the transformer claims."""
        return FAMILIES[self.family].attention


STEPS = ("hand", "autograd", "fcn")
TRANSFORMER, FCN = "transformer", "fcn"  # the model families of stsq.families.FAMILIES
ARCHS: dict[str, Arch] = {a.name: a for a in [
    # the paper sweep's transformers re-fitted to direct timings of their step at 16 of its shapes each, from the
    # smallest (0.1 M units a step) to the largest (34 M), with the family's weight work (stsq.families): stochastic
    # within 0.86 to 1.17 of each, fixed within 0.51 to 1.29 (the pilot's fit, without the weight work, was 1.4 to
    # 2.6 times and 0.52 to 3.3 times their timings; docs/performance.md, "The cost at the cells that dominate")
    Arch("tf_stochastic", TRANSFORMER, "stochastic", "hand", Style("Blues", "o"), 8.4, 0.14e-3, role=PAPER_MODEL,
         length=EVERY_LENGTH, projected=True, about="fresh unit vectors p_i for every sample (the paper's model)",
         display="stochastic PE"),
    Arch("tf_fixed", TRANSFORMER, "fixed", "hand", Style("Oranges", "s", "--", False), 0.46, 0.80e-3,
         length=TRAINING_LENGTH, about="one table of random unit vectors per seed, drawn once", display="fixed PE"),
    Arch("tf_positional", TRANSFORMER, "stochastic", "autograd", Style("Purples", "^", "--", False), 17.0, 2.0e-3,
         positional_only=True, projected=True,
         about="the reduced model of the theory: W on positions only, V = [I, 0]", display="positional-only"),
    # the FCN's re-fitted to direct timings of its step (one thread, after warm-up) at 16 shapes from the paper
    # sweep's smallest to its largest (1.2 M to 4.6 G units a step): within 0.87 to 1.10 of each
    # (docs/performance.md, "The cost at the cells that dominate")
    Arch("fcn", FCN, None, "fcn", Style("Greens", "D", "--", False), 0.057, 0.61e-3, role=FCN_ROLE,
         about="a ReLU MLP on vec(X) and 1_y", display="FCN"),
    Arch("tf_learned", TRANSFORMER, "learned", "hand", Style("Reds", "v", "--", False), 2.0, 2.5e-3,
         length=TRAINING_LENGTH, core=False,
         about="a trainable table (GPT-style), initialized to tf_fixed's; rows beyond N keep their initial values",
         display="learned PE"),
    Arch("tf_sinusoidal", TRANSFORMER, "sinusoidal", "hand", Style("Greys", "P", "--", False), 2.3, 1.4e-3,
         core=False, about="Vaswani et al.'s sines and cosines, scaled to unit rows", display="sinusoidal PE"),
    Arch("tf_randomized", TRANSFORMER, "randomized", "hand", Style("YlGn", "X"), 13.0, 12.9e-3,
         length=POSITION_RANGE, core=False,
         about="Ruoss et al.: each sample's positions a sorted random subset of rows 0..L-1 of tf_fixed's table",
         display="randomized PE"),
    # a new architecture: one record here (docs/extending.md)
]}


def with_role(role: str) -> list[str]:
    """The archs the claims read in ``role`` (PAPER_MODEL, FCN_ROLE), in the order of ARCHS."""
    return [a.name for a in ARCHS.values() if a.role == role]


def with_length(expected: str) -> list[str]:
    """The transformers expected to do ``expected`` at N' > N (EVERY_LENGTH, TRAINING_LENGTH, POSITION_RANGE)."""
    return [a.name for a in ARCHS.values() if a.transformer and a.length == expected]


class RoleError(ValueError):
    """Two archs of one role where the claims and figures read one (the message names them)."""


_READING: ContextVar[tuple[str, ...] | None] = ContextVar("stsq_reading", default=None)


@contextmanager
def reading(archs):
    """While the block runs, each role (``ROLES``) stands for its arch among ``archs`` (the archs of the table or
    the sweep being read): a sweep with a second FCN arch and no ``fcn`` is read through that one.  Two archs
    of one role among ``archs`` raise ``RoleError`` naming them (the config refuses such a sweep before any
    job: stsq.config.check_roles)."""
    present = tuple(dict.fromkeys(str(a) for a in archs))
    for role in ROLES:
        found = [a for a in with_role(role) if a in present]
        if len(found) > 1:
            raise RoleError(f"{', '.join(found)} share the role {role!r}; the claims and figures read one arch of a "
                            "role: read them in separate tables (or sweeps)")
    token = _READING.set(present)
    try:
        yield
    finally:
        _READING.reset(token)


def role_arch(role: str) -> str:
    """The arch of ``role``: the one among the archs being read (``reading``), else the first of ARCHS."""
    registered = with_role(role)
    present = _READING.get() or ()
    return next((a for a in registered if a in present), registered[0])


def paper_model() -> str:
    """The paper's model (the stochastic-PE transformer): the arch every transformer claim reads."""
    return role_arch(PAPER_MODEL)


def fcn_arch() -> str:
    """The fully-connected net: the arch the width-floor claims read."""
    return role_arch(FCN_ROLE)


def uses_position_range(arch: str) -> bool:
    """Whether the arch draws its positions from a range of L rows (the sweep's ``position_range``)."""
    return ARCHS[arch].length == POSITION_RANGE


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


def family(arch: str):
    """The arch's model family (stsq.families.Family)."""
    return FAMILIES[ARCHS[arch].family]


def width_name(arch: str) -> str:
    """The symbol the width stands for: d_e for a transformer, m for the FCN (its family's)."""
    return family(arch).width_symbol


def eval_factors(factors) -> list[int]:
    """The evaluation length factors of a sweep, always including 1 (the training length)."""
    return sorted({int(f) for f in factors} | {1})


def eval_lengths(N: int, factors) -> list[int]:
    """The evaluation lengths N' = N x factor, always including N itself."""
    return [int(N) * f for f in eval_factors(factors)]


# -- the cell record ------------------------------------------------------------------------------
# A cell is one point of the grid: its axes (the shape, which name its folder) and every setting its
# training reads, each resolved (the learning rate after its width scaling).  These fields are the one
# list of a cell's keys: the grid (stsq.sweep.cell_records) builds each record once, the training job
# and the pilot's get it whole (one JSON argument), the tables, critical widths, claims and the pilot
# group by its axes (``model_keys``), and a trained model's spec (stsq.train.TrainSpec) extends it with
# the seed.  A new setting is one field here; a new axis one field with ``AXIS`` (docs/extending.md).
AXIS = {"axis": True}


class CellRecordError(ValueError):
    """A cell record with an unknown or a missing key (the message names them)."""


@dataclass(frozen=True, kw_only=True)
class CellRecord:
    arch: str = field(metadata=AXIS)
    q: int = field(metadata=AXIS)
    N: int = field(metadata=AXIS)
    d: int = field(metadata=AXIS)
    steps: int = field(metadata=AXIS)  # the training budget
    width: int = field(metadata=AXIS)  # d_e for a transformer, m for the FCN
    lr: float  # resolved: the arch's lr scaled by its width (stsq.sweep.cell_lr)
    optimizer: str = DEFAULTS["optimizer"]
    schedule: str = DEFAULTS["schedule"]
    batch_size: int = DEFAULTS["batch_size"]
    layers: int = DEFAULTS["layers"]  # FCN hidden layers
    query: str = DEFAULTS["query"]
    y_encoding: str = DEFAULTS["y_encoding"]
    log_every: int = DEFAULTS["log_every"]
    checkpoint_every: int = DEFAULTS["checkpoint_every"]
    position_range: int = 0  # L of an encoding that draws positions from rows 0..L-1 (0: none)

    @classmethod
    def keys(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    @classmethod
    def from_dict(cls, record: dict, source: str = "cell record"):
        """The record of ``record``'s keys, every one of them and no other (a ``CellRecordError`` names
        the unknown and the missing ones); each value cast to its field's type."""
        keys = cls.keys()
        unknown = sorted(set(record) - set(keys))
        missing = [k for k in keys if k not in record]
        if unknown or missing:
            raise CellRecordError(f"{source}: " + "; ".join(
                ([f"unknown key(s) {', '.join(unknown)}"] if unknown else [])
                + ([f"missing key(s) {', '.join(missing)}"] if missing else []))
                + f" (a cell record has exactly: {', '.join(keys)})")
        types = {f.name: f.type for f in fields(cls)}
        cast = {"int": int, "float": float, "str": str}
        return cls(**{k: cast[types[k]](record[k]) for k in keys})

    @classmethod
    def from_json(cls, text: str, source: str = "cell record"):
        return cls.from_dict(json.loads(text), source)

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in CellRecord.keys()}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    def axes(self) -> dict:
        return {k: getattr(self, k) for k in AXES}

    @property
    def path(self) -> str:
        """The cell's folder under models/ and checkpoints/ (``cell``)."""
        return cell(**self.axes())


AXES = tuple(f.name for f in fields(CellRecord) if f.metadata.get("axis"))  # the grid's axes, in order
SHAPE_AXES = ("arch", "q", "N", "d", "steps", "width")  # the axes every sweep has; the figures and claims know each


def extra_axes() -> list[str]:
    """The axes beyond ``SHAPE_AXES`` (a new axis, docs/extending.md): the claims are judged per value of them,
    and a figure given a table where one varies says it cannot draw it rather than average over it."""
    return [k for k in AXES if k not in SHAPE_AXES]


def model_keys(*without: str) -> list[str]:
    """What tells one trained model from another: every axis of the grid and the seed (the tables' keys),
    but ``without`` (e.g. width: a model family over widths)."""
    return [k for k in [*AXES, "seed"] if k not in without]


# -- the results layout ---------------------------------------------------------------------------
# Every path is a pattern: called with no arguments it keeps Snakemake's wildcards ({q}, {N}, ...),
# called with values it is a concrete path.  Everything of a sweep lives under results/<sweep>/.
RESULTS = "results"
CELL = "/".join(f"{k}~{{{k}}}" for k in AXES)  # arch~{arch}/q~{q}/N~{N}/d~{d}/steps~{steps}/width~{width}
MANIFEST = "manifest.json"
MODEL, CURVE, CHECKPOINT = "model.pt", "curve.csv", "last.pt"


def cell(**axes) -> str:
    """One cell's folder, from its axes (arch, q, N, d, steps, width); an axis not given keeps its
    wildcard ({arch}, ...): its models share everything but the seed."""
    unknown = sorted(set(axes) - set(AXES))
    if unknown:
        raise CellRecordError(f"unknown cell axis {', '.join(unknown)} (axes: {', '.join(AXES)})")
    return CELL.format(**{k: axes.get(k, f"{{{k}}}") for k in AXES})


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
        self.critical = f"{self.root}/tables/critical.csv"  # the width each model needs (stsq.critical)
        self.encodings = f"{self.root}/tables/encodings.csv"  # every encoding at every N' (stsq.tables)
        self.reach = f"{self.root}/tables/reach.csv"  # how far each transformer generalizes (stsq.reach)
        self.report = f"{self.root}/report.html"

    def data(self, q="{q}", N="{N}", d="{d}") -> str:
        """The evaluation sets of a (q, N, d): one folder per seed."""
        return f"{self.root}/data/q~{q}/N~{N}/d~{d}"

    def data_index(self, q="{q}", N="{N}", d="{d}") -> str:
        return f"{self.data(q, N, d)}/index.json"

    def seed_data(self, q="{q}", N="{N}", d="{d}", seed="{seed}") -> str:
        """One seed's manifest and evaluation sets."""
        return seed_dir(self.data(q, N, d), seed).as_posix()

    def manifest(self, q="{q}", N="{N}", d="{d}", seed="{seed}") -> str:
        return f"{self.seed_data(q, N, d, seed)}/{MANIFEST}"

    def eval_set(self, q="{q}", N="{N}", d="{d}", seed="{seed}", factor="{factor}") -> str:
        return f"{self.seed_data(q, N, d, seed)}/{eval_set_name(factor)}"

    def models(self, c=None) -> str:
        """A cell's trained models, one folder per seed."""
        return f"{self.root}/models/{c or cell()}"

    def model(self, c=None, seed="{seed}", name=MODEL) -> str:
        return f"{seed_dir(self.models(c), seed).as_posix()}/{name}"

    def checkpoints(self, c=None) -> str:
        return f"{self.root}/checkpoints/{c or cell()}"

    def evaluation(self, q="{q}", N="{N}", d="{d}") -> str:
        """Every trained model of a (q, N, d) (every arch, budget, width and seed) at every length N'."""
        return f"{self.root}/eval/q~{q}/N~{N}/d~{d}/evaluation.csv"

    def oracle(self, q="{q}", N="{N}") -> str:
        """The ground-truth family's best loss at every N' for one (q, N), at every d_e of the sweep
        (stsq.oracle; it does not depend on d: the attention reads positions only)."""
        return f"{self.root}/oracle/q~{q}/N~{N}/oracle.csv"

    def claims(self, ext) -> str:
        return f"{self.root}/tables/claims.{ext}"

    def pilot(self, ext) -> str:
        """A pilot's timings and what they say about the real sweep (stsq.pilot)."""
        return f"{self.root}/tables/pilot.{ext}"

    def pilot_training(self, q="{q}", N="{N}", d="{d}") -> str:
        """A pilot's training job of one (q, N, d): each cell's seconds and peak memory (stsq.pilot)."""
        return f"{self.root}/pilot/train_q~{q}_N~{N}_d~{d}.csv"

    def figure(self, name, ext) -> str:
        return f"{self.root}/figures/{name}.{ext}"

    def caption(self, name) -> str:
        """A figure's caption in the report, written with it from the claims table (stsq.report)."""
        return f"{self.root}/report/{name}.rst"

    @property
    def landing(self) -> str:
        """The report's front page (stsq.report.landing)."""
        return f"{self.root}/report/landing.rst"

    def log(self, rule, job="") -> str:
        return f"{self.root}/logs/{rule}/{job}.log" if job else f"{self.root}/logs/{rule}.log"

    def benchmark(self, rule, job) -> str:
        return f"{self.root}/benchmarks/{rule}/{job}.tsv"


# -- the tidy table ---------------------------------------------------------------------------------
IDS = model_keys()  # one trained model: arch, q, N, d, steps (its training budget), width, seed
TABLE_COLUMNS = [*IDS, "step", "split", "N_eval", "metric", "value", "status"]
TABLE_KEYS = TABLE_COLUMNS[:-2]
INT_COLUMNS = [k for k in IDS if k != "arch"] + ["step", "N_eval"]
SPLITS = ("train", "test", "eval")  # training loss; the curve on the fixed test sets; the final model at N'
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
# ... followed, for a transformer, by its loss at each unseen length N' along training (split test, N_eval = N'):
LENGTH_CURVE = f"{LOSS}@"  # column "normalized_loss@<N'>"


def length_curve_column(N_eval: int) -> str:
    return f"{LENGTH_CURVE}{int(N_eval)}"
# The oracle table (stsq.oracle.oracle_rows), width = d_e: the family's best loss at each N' (c, v fitted there).
# The encodings table (stsq.tables.encodings_table): per transformer arch, (q, N, d, d_e) and N', over seeds.
ENCODING_COLUMNS = ["arch", "encoding", *model_keys("arch", "steps", "seed"), "steps", "N_eval", "factor", "status",
                    "loss_mean", "loss_min", "loss_max", "loss_at_N_mean", "attn_mass_y_mean", "seeds",
                    "position_range"]
ORACLE_COLUMNS = ["q", "N", "width", "N_eval", LOSS, "standard_error", "c", "v", "samples"]
# Per trained stochastic-PE model and N' (split eval): the loss of its projection onto the ground-truth
# family, W_pp = c I and V = v [I, 0] with its own c = tr(W_pp) / d_e and v = tr(V_x) / d (stsq.oracle).
PROJECTION = "projection_loss"
LOSS_SE = f"{LOSS}_se"  # the standard error of a final loss over its evaluation set's samples (split eval)
SAMPLING_Z = 2.0  # a loss counts as below an exact floor only when below it by more than this many standard errors


# -- figures ------------------------------------------------------------------------------------
# name -> what it shows.  Rule fig_<name> writes figures/<name>.{pdf,png} and its caption report/<name>.rst
# (stsq.report: the results from the claims table, the drawing from the archs' styles); `python -m stsq
# figure <name>` draws it.  A sweep's report holds the figures its grid has something for (report.figure_plan).
FIGURES = {
    "training": "normalized test loss vs training step",
    "separation": "final loss vs width, with the FCN's width floor",
    "length": "loss at unseen lengths N' = N x factor, stochastic vs fixed PE",
    "mechanism": "attention on y, its evenness, and the ground-truth cosines over training",
    "scaling": "the width needed to reach the target loss, against N d (FCN) and q log N (transformer)",
    "encodings": "loss against N'/N for every positional encoding at one d_e, the positions' range L marked",
    "reach": "the longest N'/N within the bound, against d_e and along training (stochastic PE)",
}
FIGURE_FORMATS = ("pdf", "png")


FIGURE_RULE = "fig_{name}"  # the rule that draws figure {name}
FLOOR_REPORT = 1e-4  # a loss below this is not drawn on a log axis (the panel's title says so)
# The sweeps of config.yaml with their own make target (the cpu sweep's is `make run`); the claims say
# which of them tests each claim (``Claim.tested_by``), the report names the command.
MAKE_SWEEPS = ("cpu", "budget", "encodings", "separation")


# -- claims -------------------------------------------------------------------------------------
# Each claim is a statement of the paper, measured from the tidy table (and the oracle table) of any
# sweep, with what it presupposes.  Its verdict is PASS, FAIL, or NOT TESTED when the sweep cannot test
# it or its presupposition does not hold (the reason is said).  Checks are bounds every correct pipeline
# obeys (theorems): they catch bugs, not the paper being wrong, and are listed apart.
# docs/claims.md explains each threshold.
PASS, FAIL, NOT_TESTED = "PASS", "FAIL", "NOT TESTED"
PAPER, CHECK = "paper", "check"  # a claim's kind: a statement of the paper, or a pipeline check
EPSILON = 0.1  # the target loss of the scaling claims: the width "needed" reaches it (stsq.critical)
EPSILONS = (0.05, 0.1, 0.2)  # the targets the critical widths are computed at (robustness to eps)
RESOLUTION = 2.0  # a critical width counts in a fit only when bracketed by widths at most this far apart
LEARNED_BELOW = 0.1  # "the model learned at N": its worst seed's loss at N' = N is at most this
ORACLE_FACTOR, ORACLE_SLACK = 1.25, 0.01  # "reaches the oracle": loss <= 1.25 x oracle + 0.01
GENERALIZES_WITHIN = 0.15  # stochastic PE at N' > N: loss <= the oracle at N' + this
REACH_MIN_FACTOR = 2  # length_stochastic: the worst seed's reach (stsq.reach) is at least this x N
FIXED_FAILS_ABOVE = 0.3  # fixed PE off its training length: loss above this (predicting 0 scores 1)
TREND_SLOPE_MIN = 0.2  # d log loss(N'max) / d log loss(N) over training, stochastic PE (docs/claims.md)
COS_V_MIN = 0.9  # cos(V, [I, 0]) at the end of training, stochastic PE
COS_W_MIN = 0.5  # cos(W_pp, I) at the end of training, stochastic PE
FCN_SLOPE_MIN = 0.75  # d log m_eps / d log(N d) of the FCN: the floor says 1
PRODUCT_FACTOR = 2.0  # cells with the same N d need FCN widths within this factor of each other
PRODUCT_EXPONENT_GAP = 0.5  # ... and the fitted exponents of N and d differ by at most this (floor: 1 and 1)
TF_D_EXPONENT_MAX = 0.5  # d log d_e,eps / d log d of the transformer: theory 0, the FCN's 1
TF_SLOPE_MAX = 1.5  # d log d_e,eps / d log(q log N) of the transformer: the theory says 1 (or less)


@dataclass(frozen=True)
class Claim:
    key: str
    statement: str  # the paper's statement, in words
    measured: str  # what is measured, from which rows of the table
    threshold: str  # what PASS means
    why: str  # where the threshold comes from
    presupposes: str = ""  # what must hold for the measurement to test the statement (else NOT TESTED)
    kind: str = PAPER
    # the sweeps of MAKE_SWEEPS whose grid tests it; the report names the first other than its own, so the
    # first trains every arch the claim reads
    tested_by: tuple[str, ...] = ("cpu",)
    value: str = ""  # what a row's number (the table's value column) is: the captions and the claims page name it


LEARNED = f"the stochastic-PE transformer (largest d_e) learned at N: worst seed's loss at N' = N <= {LEARNED_BELOW:g}"
CLAIMS = {c.key: c for c in [
    Claim("learns", "the transformer (stochastic PE) learns STS_q by gradient descent",
          "worst seed's final loss at N' = N, largest d_e",
          f"<= {ORACLE_FACTOR:g} x oracle + {ORACLE_SLACK:g}",
          "theory: GD converges to the ground-truth family, whose best loss is the oracle's; the slack "
          "covers finite training (for q <= 2 the oracle is 0 and the loss keeps falling as W_pp's scale grows)",
          "nothing: the claim is that the model learns, so a model that did not is a FAIL",
          value="the worst seed's loss at N' = N"),
    Claim("wider_d_e", "a wider positional encoding lowers the transformer's loss",
          "mean final loss at the largest vs the smallest d_e, N' = N", "largest < smallest",
          "theory: near-orthogonal encodings need d_e = Theta(q log N); the oracle falls with d_e", LEARNED,
          value="the mean loss at the largest d_e minus at the smallest"),
    Claim("directions", "gradient descent converges to the ground-truth directions (stochastic PE)",
          "worst seed's cos(V, [I, 0]) and cos(W_pp, I) at the end of training, largest d_e",
          f"cos V >= {COS_V_MIN:g} and cos W_pp >= {COS_W_MIN:g}",
          "theory: W_pp -> c I, V -> [I, 0]; Adam's per-coordinate steps leave noise on W_pp's d_e^2 "
          "entries, so its cosine stays below V's (measured, docs/claims.md)", LEARNED,
          value="the lowest cosine of any seed, V's or W_pp's"),
    Claim("length_stochastic", "stochastic positional encodings generalize to unseen lengths",
          "the reach (stsq.reach): the longest N' such that the loss at every scored N'' with N < N'' <= N' is "
          f"within the oracle at N'' + {GENERALIZES_WITHIN:g}; worst seed, largest d_e, with the seeds' range, the "
          "loss and the oracle at each N' (and, as the explanation of what was learned, the model's projection "
          "onto the ground-truth family W_pp = c I, V = v [I, 0])",
          f"worst seed's reach >= {REACH_MIN_FACTOR}N",
          "theory: the ground-truth solution does not depend on N; an absolute bound a non-generalizing model "
          f"fails (fixed PE scores above {FIXED_FAILS_ABOVE:g}, predicting 0 scores 1). How far it reaches is "
          "the number reported: a verdict at every N' the sweep scored would depend on where the sweep stops",
          LEARNED,
          value="the worst seed's reach, N'/N"),
    Claim("length_reach", "the reach of stochastic positional encodings grows with d_e and along training",
          "the worst seed's reach (stsq.reach) of the final models at the smallest and the largest d_e that "
          "learned at N; at the largest d_e, at the first checkpoint where it had learned at N and at the last",
          "larger at the largest d_e than at the smallest, and at the last checkpoint than at the first (equal "
          "counts only where both are at the longest N' scored)",
          "theory: N' near-orthogonal unit vectors need d_e ~ q log N', so the width allows a reach exponential "
          "in d_e / q (N^(d_e / d_e,eps), reported beside it); along training the attention's scale c grows and "
          "its leakage (N' - q) e^(-c) at N' falls",
          LEARNED + " at two d_e or more; two checkpoints scored at N' > N after it learned",
          value="the final models' reach at the largest d_e over the reach at the smallest"),
    Claim("length_training", "as training drives the in-distribution loss down, the loss at unseen lengths "
          "goes down with it (stochastic PE)",
          "worst seed's log-log slope of the loss at the longest N' against the loss at N, over the checkpoints "
          "(the fixed-PE model's slope beside it)",
          f">= {TREND_SLOPE_MIN:g}",
          "theory: with W_pp = c I the off-target attention decays like (N' - q) e^(-c) at every length, so "
          "both losses fall together (slope 1 once that leakage dominates; early on the loss at N also holds "
          "V's error, measured 0.4-0.6); a model that does not generalize keeps its long-N' loss (fixed PE: "
          "|slope| < 0.002)", LEARNED + "; at least 3 checkpoints scored at N'",
          value="the worst seed's slope"),
    Claim("length_fixed", "a positional table, drawn once or learned, fails at unseen lengths (the paper's "
          "fixed PE; a learned table's rows beyond N are never trained either)",
          "per arch expected to fail beyond N (tf_fixed, tf_learned): best seed's loss at every N' > N, largest d_e",
          f"> {FIXED_FAILS_ABOVE:g} at every N' > N",
          "paper: fixed PE hinders length generalization; rows N+1..N' of its table were never trained",
          f"the model fits at N: worst seed's loss at N' = N <= {LEARNED_BELOW:g} (else its failure at "
          "N' says nothing about length)",
          tested_by=("encodings", "cpu"),  # the encodings sweep first: it trains both tables, the cpu sweep one
          value="the best seed's lowest loss at an N' > N"),
    Claim("length_randomized", "randomized positions (a sorted random subset of L positions per sample) "
          "generalize to every unseen length up to L (Ruoss et al. 2023)",
          "per arch drawing its positions from L rows (tf_randomized): worst seed's loss at every N with "
          "N < N' <= L, largest d_e, against the oracle at N' (N' > L: not applicable, the model has no position "
          "there)",
          f"<= oracle at N' + {GENERALIZES_WITHIN:g} at every N < N' <= L",
          "Ruoss et al.: every relative arrangement of positions up to L is seen in training; the same absolute "
          "bound as length_stochastic (the ground-truth family works on any near-orthogonal positions)",
          f"the model learned at N: worst seed's loss at N' = N <= {LEARNED_BELOW:g}; an N' with N < N' <= L",
          tested_by=("encodings",),
          value=f"the worst seed's largest loss minus its bound, oracle + {GENERALIZES_WITHIN:g}, over N < N' <= L"),
    Claim("fcn_scaling", "the width an FCN needs grows at least like N d",
          f"slope of log m_eps against log(N d), m_eps the critical width at loss {EPSILON:g} (stsq.critical), "
          "fitted per seed over the resolved points; beside it the slopes at every eps on the same points, the "
          "slope the grid can resolve, and m_eps / m*(eps) at each N d with the slope of that ratio (the part of "
          "the growth the sample budget, not the width floor, explains)",
          f"worst seed >= {FCN_SLOPE_MIN:g}",
          "theory: Omega(N d); the exact floor needs m*(eps) ~ (1 - eps) N d, slope 1 at every eps. The rival: a "
          f"need growing slower than N d (slope < {FCN_SLOPE_MIN:g}). A slope above 1 is the samples binding "
          "(m_eps / m*(eps) rising with N d); fcn_budget measures it at 4x the steps",
          "at least two values of N d with a resolved critical width (not censored, bracketed within "
          f"x{RESOLUTION:g})",
          value="the worst seed's slope"),
    Claim("fcn_product", "what the FCN needs depends on the product N d",
          "geometric-mean critical width of each (N, d) sharing one value of N d; the exponents of N and d "
          "fitted jointly beside it",
          f"largest / smallest <= {PRODUCT_FACTOR:g} at every shared N d, and (where both vary) the exponents of "
          f"N and d within {PRODUCT_EXPONENT_GAP:g} of each other (worst seed)",
          f"theory: the floor depends on N and d almost only through N d (m*(eps) ~ (1 - eps) N d); a factor "
          f"{PRODUCT_FACTOR:g} is the grid's resolution near the transition; a need that depends on N or d "
          "alone has exponents 1 apart",
          "a value of N d reached by two (N, d) with resolved critical widths",
          value="the largest ratio of two (N, d)'s widths at one N d"),
    Claim("fcn_budget", "the FCN's need is a width need: more samples lower it toward the exact floor, never "
          "below it (ours, from the floor)",
          f"geometric-mean m_eps at loss {EPSILON:g} at each (N, d) for each training budget (steps)",
          "the larger budget's m_eps <= the smaller's x 1.25, and the width at which it reached eps >= m*(eps)",
          "the floor holds whatever the training; the sample budget only adds to it (1.25: the seeds' spread)",
          "two budgets with resolved critical widths at one (N, d)",
          tested_by=("budget",),
          value="the largest ratio of the larger budget's m_eps to the smaller's"),
    Claim("tf_d_free", "the width a transformer needs does not grow with d",
          f"exponent of d in a joint fit of log d_e,eps against log(q log N) and log d (loss {EPSILON:g}); the "
          "rival d_e,eps ~ q log N d^0.25, fitted with the theory's q log N below the largest d, against the "
          "need measured at the largest d (stsq.rivals)",
          f"worst seed <= {TF_D_EXPONENT_MAX:g}, and the rival d^0.25 rejected: outside the seeds' range at every "
          "held-out (q, N), the theory closer",
          "theory: the positional width is Theta(q log N), whatever d; the FCN's exponent of d is 1. d^0.25 is the "
          "nearest law the statement denies that a sweep over d x4 can resolve (1.41x)",
          "two values of d (x4 apart or more, so that d^0.25 predicts a need 1.25x or more above d^0) and two of N "
          "with resolved critical widths",
          tested_by=("separation",),
          value="the largest seed's exponent of d"),
    Claim("tf_scaling", "the width a transformer needs grows like q log N or slower, at q >= 3 like q log^2 N: "
          "the summed query's cross-terms, still O~(q log N)",
          f"per q, the slope of log d_e,eps against the log of that q's form, q log N or q log^2 N (loss "
          f"{EPSILON:g}), per seed, over the resolved points; the rival d_e,eps ~ q sqrt(N), and the form, each "
          "fitted below the largest N, against the need measured at the largest N (stsq.rivals)",
          f"worst seed <= {TF_SLOPE_MAX:g}, and the rival q sqrt(N) rejected: outside the seeds' range at every "
          "held-out d, the theory closer",
          "theory: embedding width O~(d + q log N); near-orthogonal encodings need d_e = Theta(q log N), and at "
          "q >= 3 the uneven cross-terms inside y one more log N. sqrt(N) is the smallest power law the statement "
          "denies (over N = 4 .. 16 log N and sqrt(N) both double: a logarithm looks like N^(1/ln N) locally); "
          "any N^a with a >= 0.5 predicts at least its need",
          "at least two values of N with resolved critical widths, none censored above; N wide enough that the "
          "form and q sqrt(N) predict needs 1.25x apart or more at the largest N (q log N from N = 8: N = 128), "
          "the rival above the form (q log^2 N outgrows sqrt(N) up to N ~ 55: at q >= 3 a CPU's N cannot)",
          tested_by=("separation",),
          value="the worst seed's slope against its q's form"),
    Claim("fcn_floor", "no FCN beats the exact width floor",
          "every seed's final loss minus the floor at its width m, at the widths m < N d where the floor is positive",
          f">= -{SAMPLING_Z:g} standard errors of the loss's estimate",
          "exact bound (docs/paper.md): a first layer of width m sees m projections of vec(X); a check of the "
          "pipeline, not a test of the paper: a model that learned nothing obeys it. The floor is an expectation, "
          "the loss a mean over n_eval samples: below it by sampling error is no violation. At m >= N d the floor "
          "is 0 and no loss can violate it",
          "an FCN width below N d", kind=CHECK,
          value="the smallest loss minus the floor, over seeds and widths"),
    Claim("fcn_need_floor", "no FCN needs less width than the exact floor allows",
          "every critical width whose grid has a width below the floor's m*(eps): the smallest grid width at which "
          "the model reached eps, against m*(eps) (the interpolated m_eps beside it)", ">= m*(eps)",
          "exact bound: a check of the pipeline. Only a measured width is evidence; the log-log interpolation "
          "between two grid widths may dip below m*(eps) where the loss curve bends. Where every grid width is "
          "above m*(eps), no model can violate it",
          "a grid width below m*(eps)", kind=CHECK,
          value="the smallest ratio of the width that reached eps to m*(eps)"),
]}
CLAIM_COLUMNS = ["claim", "kind", "statement", "q", "N", "d", "cell", "measured", "value", "threshold", "verdict"]
