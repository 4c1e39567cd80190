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

from stsq.core.families import FAMILIES
from stsq.core.tasks import DEFAULT_TASK


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
    is one record here (and, for a new encoding, one function in stsq.sts.positions): docs/extending.md.
    """

    name: str
    family: str  # its model family: a key of stsq.core.families.FAMILIES (the class, the cost's shape, the width)
    encoding: str | None  # the transformer's positional encoding: a key of stsq.sts.positions.ENCODINGS
    step: str  # its training step: "hand" (stsq.sts.step.TransformerStep, closed-form gradient), "autograd", or
               # "fcn" (stsq.sts.step.FCNStep: autograd, the first layer's weight gradient straight into its place)
    # its cost per step is not here: stsq.cluster.cost.STEP_RATES (a cost constant changes no result)
    role: str = COMPARED  # PAPER_MODEL, FCN_ROLE or COMPARED
    length: str = NO_VERDICT  # what is expected at N' > N: EVERY_LENGTH, TRAINING_LENGTH, POSITION_RANGE, NO_VERDICT
    positional_only: bool = False  # W acts on p only and V = [I_d, 0]: the reduced model of the theory
    core: bool = True  # drawn in the main figures; False: in the encodings table and figure only
    projected: bool = False  # its models are projected onto the ground-truth family W_pp = c I, V = v [I, 0]
                             # (stsq.sts.oracle.projection_loss: the family is the stochastic-PE theory's)
    about: str = ""  # one line for the docs and the figures' captions
    display: str = ""  # its name in the figures' legends and titles (the arch's name where empty)
    # the task whose sweeps train it (stsq.core.tasks.TASKS): its models read that task's inputs
    task: str = DEFAULT_TASK

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
TRANSFORMER, FCN = "transformer", "fcn"  # the model families of stsq.core.families.FAMILIES
ARCHS: dict[str, Arch] = {a.name: a for a in [
    Arch("tf_stochastic", TRANSFORMER, "stochastic", "hand", role=PAPER_MODEL,
         length=EVERY_LENGTH, projected=True, about="fresh unit vectors p_i for every sample (the paper's model)",
         display="stochastic PE"),
    Arch("tf_fixed", TRANSFORMER, "fixed", "hand",
         length=TRAINING_LENGTH, about="one table of random unit vectors per seed, drawn once", display="fixed PE"),
    Arch("tf_positional", TRANSFORMER, "stochastic", "autograd",
         positional_only=True, projected=True,
         about="the reduced model of the theory: W on positions only, V = [I, 0]", display="positional-only"),
    Arch("fcn", FCN, None, "fcn", role=FCN_ROLE,
         about="a ReLU MLP on vec(X) and 1_y", display="FCN"),
    Arch("tf_learned", TRANSFORMER, "learned", "hand",
         length=TRAINING_LENGTH, core=False,
         about="a trainable table (GPT-style), initialized to tf_fixed's; rows beyond N keep their initial values",
         display="learned PE"),
    Arch("tf_sinusoidal", TRANSFORMER, "sinusoidal", "hand",
         core=False, about="Vaswani et al.'s sines and cosines, scaled to unit rows", display="sinusoidal PE"),
    Arch("tf_randomized", TRANSFORMER, "randomized", "hand",
         length=POSITION_RANGE, core=False,
         about="Ruoss et al.: each sample's positions a sorted random subset of rows 0..L-1 of tf_fixed's table",
         display="randomized PE"),
    # the retrieval task's (stsq.retrieval.task, docs/retrieval.md): the three families of Mousavi-Hosseini et al.
    Arch("qstr_transformer", "retrieval_transformer", None, "autograd", core=False, task="qstr",
         about="one layer of softmax-attention heads, then a ReLU MLP at every position", display="transformer"),
    Arch("qstr_ffn", "flat_ffn", None, "autograd", core=False, task="qstr",
         about="a ReLU net on the flattened sequence, hidden widths N d and m", display="FFN"),
    Arch("qstr_rnn", "bigru", None, "autograd", core=False, task="qstr",
         about="a bidirectional GRU of width m, read at every position", display="bidirectional GRU"),
    # index lookup's and bounded Dyck's (stsq.tokens, docs/separations.md): each task's one-layer transformer and GRU
    Arch("lookup_tf", "token_transformer", None, "autograd", core=False, task="lookup",
         about="one layer, one softmax head of width m, queried by y's position vector", display="transformer"),
    Arch("lookup_gru", "token_gru", None, "autograd", core=False, task="lookup",
         about="a GRU of width m reading the symbols, then y", display="GRU"),
    Arch("dyck_tf", "token_transformer", None, "autograd", core=False, task="dyck",
         about="one layer, one softmax head of width m, queried by a trained vector", display="transformer"),
    Arch("dyck_gru", "token_gru", None, "autograd", core=False, task="dyck",
         about="a GRU of width m reading the brackets", display="GRU"),
    # a new architecture: one record here (docs/extending.md)
]}


# How the figures draw each arch (stsq.report.figures, stsq.report.pages): apart from its record, so that a colour or a
# marker
# changes the figures and their captions only, not the training that reads the record (stsq.provenance.codehash).
STYLES: dict[str, Style] = {
    "tf_stochastic": Style("Blues", "o"),
    "tf_fixed": Style("Oranges", "s", "--", False),
    "tf_positional": Style("Purples", "^", "--", False),
    "fcn": Style("Greens", "D", "--", False),
    "tf_learned": Style("Reds", "v", "--", False),
    "tf_sinusoidal": Style("Greys", "P", "--", False),
    "tf_randomized": Style("YlGn", "X"),
    "qstr_transformer": Style("Blues", "o"),
    "qstr_ffn": Style("Greens", "D", "--", False),
    "qstr_rnn": Style("Oranges", "s", "--", False),
    "lookup_tf": Style("Blues", "o"),
    "lookup_gru": Style("Oranges", "s", "--", False),
    "dyck_tf": Style("Blues", "o"),
    "dyck_gru": Style("Oranges", "s", "--", False),
}


def style_of(arch: str) -> Style:
    """The arch's ``Style`` in the figures (a new arch: one entry of ``STYLES``)."""
    return STYLES[arch]


def archs_of(task: str = DEFAULT_TASK) -> list[str]:
    """The archs a sweep of ``task`` trains (``Arch.task``), in the order of ARCHS."""
    return [a.name for a in ARCHS.values() if a.task == task]


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
    "oracle_samples": 2048,  # Monte Carlo samples per N' of the oracle (stsq.sts.oracle)
    "projection_samples": 512,  # ... of a trained model's projection onto the family (per model and N')
}


def is_transformer(arch: str) -> bool:
    return ARCHS[arch].transformer


def family(arch: str):
    """The arch's model family (stsq.core.families.Family)."""
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
# list of a cell's keys: the grid (stsq.core.sweep.cell_records) builds each record once, the training job
# and the pilot's get it whole (one JSON argument), the tables, critical widths, claims and the pilot
# group by its axes (``model_keys``), and a trained model's spec (stsq.width.train.TrainSpec) extends it with
# the seed.  A new setting is one field here; a new axis one field with ``AXIS`` (docs/extending.md).
AXIS = {"axis": True}


class CellRecordError(ValueError):
    """A cell record with an unknown or a missing key (the message names them)."""


class Record:
    """What every measure's cell record shares (a dataclass of plain values, stsq.core.measures: ``cell``): it travels
    whole to its job as one JSON argument and is rebuilt there from exactly its keys."""

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
                + f" (a {cls.__name__} has exactly: {', '.join(keys)})")
        types = {f.name: f.type for f in fields(cls)}
        cast = {"int": int, "float": float, "str": str, "tuple[float, ...]": lambda v: tuple(float(x) for x in v)}
        return cls(**{k: cast[types[k]](record[k]) for k in keys})

    @classmethod
    def from_json(cls, text: str, source: str = "cell record"):
        return cls.from_dict(json.loads(text), source)

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.keys()}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)


@dataclass(frozen=True, kw_only=True)
class CellRecord(Record):
    arch: str = field(metadata=AXIS)
    q: int = field(metadata=AXIS)
    N: int = field(metadata=AXIS)
    d: int = field(metadata=AXIS)
    steps: int = field(metadata=AXIS)  # the training budget
    width: int = field(metadata=AXIS)  # d_e for a transformer, m for the FCN
    lr: float  # resolved: the arch's lr scaled by its width (stsq.core.sweep.cell_lr)
    optimizer: str = DEFAULTS["optimizer"]
    schedule: str = DEFAULTS["schedule"]
    batch_size: int = DEFAULTS["batch_size"]
    layers: int = DEFAULTS["layers"]  # FCN hidden layers
    query: str = DEFAULTS["query"]
    y_encoding: str = DEFAULTS["y_encoding"]
    log_every: int = DEFAULTS["log_every"]
    checkpoint_every: int = DEFAULTS["checkpoint_every"]
    position_range: int = 0  # L of an encoding that draws positions from rows 0..L-1 (0: none)
    task: str = DEFAULT_TASK  # what it learns: a key of stsq.core.tasks.TASKS (the sweep's ``task``)

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


def at_largest_budget(df):
    """The rows of each arch at its largest budget (steps) at each (q, N, d): one budget per shape, also where an
    arch's budget grows with N (a sweep's ``steps_by_N``)."""
    return df[df["steps"] == df.groupby(["arch", "q", "N", "d"])["steps"].transform("max")]


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
        self.critical = f"{self.root}/tables/critical.csv"  # the width each model needs (stsq.width.critical)
        self.encodings = f"{self.root}/tables/encodings.csv"  # every encoding at every N' (stsq.width.tables)
        self.reach = f"{self.root}/tables/reach.csv"  # how far each transformer generalizes (stsq.width.reach)
        self.report = f"{self.root}/report.html"
        self.provenance = f"{self.root}/provenance.json"  # where every result came from (stsq.provenance.sidecars)

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
        (stsq.sts.oracle; it does not depend on d: the attention reads positions only)."""
        return f"{self.root}/oracle/q~{q}/N~{N}/oracle.csv"

    def claims(self, ext) -> str:
        return f"{self.root}/tables/claims.{ext}"

    def pilot(self, ext) -> str:
        """A pilot's timings and what they say about the real sweep (stsq.cluster.pilot)."""
        return f"{self.root}/tables/pilot.{ext}"

    def pilot_training(self, q="{q}", N="{N}", d="{d}") -> str:
        """A pilot's training job of one (q, N, d): each cell's seconds and peak memory (stsq.cluster.pilot)."""
        return f"{self.root}/pilot/train_q~{q}_N~{N}_d~{d}.csv"

    def figure(self, name, ext) -> str:
        return f"{self.root}/figures/{name}.{ext}"

    def caption(self, name) -> str:
        """A figure's caption in the report, written with it from the claims table (stsq.report.pages)."""
        return f"{self.root}/report/{name}.rst"

    @property
    def landing(self) -> str:
        """The report's front page (stsq.report.pages.landing)."""
        return f"{self.root}/report/landing.rst"

    def log(self, rule, job="") -> str:
        return f"{self.root}/logs/{rule}/{job}.log" if job else f"{self.root}/logs/{rule}.log"

    def benchmark(self, rule, job) -> str:
        return f"{self.root}/benchmarks/{rule}/{job}.tsv"


# -- the tidy table ---------------------------------------------------------------------------------
IDS = model_keys()  # one trained model: arch, q, N, d, steps (its training budget), width, seed
TABLE_COLUMNS = [*IDS, "step", "split", "N_eval", "metric", "value", "status"]
TABLE_KEYS = TABLE_COLUMNS[:-2]
_TYPES = {f.name: f.type for f in fields(CellRecord)}
INT_COLUMNS = [k for k in IDS if _TYPES.get(k, "int") == "int"] + ["step", "N_eval"]  # a float axis stays float
SPLITS = ("train", "test", "eval")  # training loss; the curve on the fixed test sets; the final model at N'
OK, NOT_APPLICABLE = "ok", "not_applicable"
LOSS = "normalized_loss"
ACCURACY = "accuracy"  # a classification task's share of the evaluation set classified right (split eval)
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
# The oracle table (stsq.sts.oracle.oracle_rows), width = d_e: the family's best loss at each N' (c, v fitted there).
# The encodings table (stsq.width.tables.encodings_table): per transformer arch, (q, N, d, d_e) and N', over seeds.
ENCODING_COLUMNS = ["arch", "encoding", *model_keys("arch", "steps", "seed"), "steps", "N_eval", "factor", "status",
                    "loss_mean", "loss_min", "loss_max", "loss_at_N_mean", "attn_mass_y_mean", "seeds",
                    "position_range"]
ORACLE_COLUMNS = ["q", "N", "width", "N_eval", LOSS, "standard_error", "c", "v", "samples"]
# Per trained stochastic-PE model and N' (split eval): the loss of its projection onto the ground-truth
# family, W_pp = c I and V = v [I, 0] with its own c = tr(W_pp) / d_e and v = tr(V_x) / d (stsq.sts.oracle).
PROJECTION = "projection_loss"
LOSS_SE = f"{LOSS}_se"  # the standard error of a final loss over its evaluation set's samples (split eval)
