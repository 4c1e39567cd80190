"""A wrong config is refused before any job runs, with a message naming the key and the value,
and nothing under results/ is touched.  Each case is one mutation of config.yaml, checked through the
validation the Snakefile runs (stsq.config.validate_config, in this process); a few of them, and the valid
config, also through `snakemake -n`, which shows the Snakefile refusing them with that message."""

from __future__ import annotations

import copy
import hashlib
import json
from concurrent.futures import ThreadPoolExecutor

import pytest
import yaml
from helpers import ROOT, copy_workflow, snakemake

DELETE = object()

# (case, path in the config, new value or DELETE, fragments the error must contain)
CATALOG = [
    ("unknown top-level key", ("sweeep",), "cpu", ["config key 'sweeep': unknown key"]),
    ("typo in a sweep key", ("sweeps", "cpu", "seed"), [0], ["config key 'sweeps.cpu.seed': unknown key"]),
    ("typo in an arch key", ("sweeps", "cpu", "archs", "fcn", "lrr"), 0.1,
     ["config key 'sweeps.cpu.archs.fcn.lrr': unknown key"]),
    ("d of the wrong type", ("sweeps", "cpu", "d"), "sixteen", ["'sweeps.cpu.d'", "'sixteen' is not of type"]),
    ("d as a boolean", ("sweeps", "cpu", "d"), True, ["'sweeps.cpu.d'", "True is not of type"]),
    ("N as a scalar", ("sweeps", "cpu", "N"), 32, ["'sweeps.cpu.N'", "32 is not of type 'array'"]),
    ("lr as a string", ("sweeps", "cpu", "archs", "tf_fixed", "lr"), "fast",
     ["'sweeps.cpu.archs.tf_fixed.lr'", "'fast' is not of type"]),
    ("fractional seed", ("sweeps", "cpu", "seeds"), [0.5], ["'sweeps.cpu.seeds.0'", "0.5 is not of type"]),
    ("q > N", ("sweeps", "cpu", "q"), [64], ["'sweeps.cpu.q'", "q=64 exceeds N="]),
    ("q < 1", ("sweeps", "cpu", "q"), [0], ["'sweeps.cpu.q.0'", "0 is less than the minimum of 1"]),
    ("N < 1", ("sweeps", "cpu", "N"), [0], ["'sweeps.cpu.N.0'", "0 is less than the minimum of 1"]),
    ("d < 1", ("sweeps", "cpu", "d"), 0, ["'sweeps.cpu.d'", "0 is less than the minimum of 1"]),
    ("FCN width < 1", ("sweeps", "cpu", "archs", "fcn", "widths"), [0, 64],
     ["'sweeps.cpu.archs.fcn.widths.0'", "0 is less than the minimum of 1"]),
    ("d_e < 1", ("sweeps", "cpu", "archs", "tf_stochastic", "widths"), [-4],
     ["'sweeps.cpu.archs.tf_stochastic.widths.0'", "-4 is less than the minimum of 1"]),
    ("unknown arch", ("sweeps", "cpu", "archs", "tf_rotary"), {"widths": [8], "steps": 10, "lr": 0.1},
     ["'sweeps.cpu.archs'", "'tf_rotary' is not one of"]),
    ("empty grid: no archs", ("sweeps", "cpu", "archs"), {}, ["'sweeps.cpu.archs'", "{} should be non-empty"]),
    ("empty grid: no N", ("sweeps", "cpu", "N"), [], ["'sweeps.cpu.N'", "[] should be non-empty"]),
    ("empty grid: no seeds", ("sweeps", "cpu", "seeds"), [], ["'sweeps.cpu.seeds'", "[] should be non-empty"]),
    ("empty grid: no widths", ("sweeps", "cpu", "archs", "fcn", "widths"), [],
     ["'sweeps.cpu.archs.fcn.widths'", "[] should be non-empty"]),
    ("duplicate seeds", ("sweeps", "cpu", "seeds"), [0, 1, 0], ["'sweeps.cpu.seeds'", "[0, 1, 0] has non-unique"]),
    ("zero steps", ("sweeps", "cpu", "archs", "tf_stochastic", "steps"), 0,
     ["'sweeps.cpu.archs.tf_stochastic.steps'", "0 is less than the minimum of 1"]),
    ("negative steps", ("sweeps", "cpu", "archs", "fcn", "steps"), -5,
     ["'sweeps.cpu.archs.fcn.steps'", "-5 is less than the minimum of 1"]),
    ("zero batch size", ("sweeps", "cpu", "batch_size"), 0, ["'sweeps.cpu.batch_size'", "0 is less than"]),
    ("zero learning rate", ("sweeps", "cpu", "archs", "fcn", "lr"), 0,
     ["'sweeps.cpu.archs.fcn.lr'", "0 is less than or equal to the minimum of 0"]),
    ("negative learning rate", ("sweeps", "cpu", "archs", "tf_fixed", "lr"), -0.01,
     ["'sweeps.cpu.archs.tf_fixed.lr'", "-0.01 is less than or equal to the minimum of 0"]),
    ("evaluation length factor < 1", ("sweeps", "cpu", "eval_length_factors"), [1, 0],
     ["'sweeps.cpu.eval_length_factors.1'", "0 is less than the minimum of 1"]),
    ("zero evaluation samples", ("sweeps", "cpu", "n_eval"), 0, ["'sweeps.cpu.n_eval'", "0 is less than"]),
    ("zero log interval", ("sweeps", "cpu", "log_every"), 0, ["'sweeps.cpu.log_every'", "0 is less than"]),
    ("unknown optimizer", ("sweeps", "cpu", "archs", "fcn", "optimizer"), "rmsprop",
     ["'sweeps.cpu.archs.fcn.optimizer'", "'rmsprop' is not one of"]),
    ("three FCN layers", ("sweeps", "cpu", "archs", "fcn", "layers"), 3,
     ["'sweeps.cpu.archs.fcn.layers'", "3 is not one of"]),
    ("unknown query", ("sweeps", "cpu", "query"), "max", ["'sweeps.cpu.query'", "'max' is not one of"]),
    ("unknown sweep name", ("sweep",), "cpux",
     ["config key 'sweep': unknown sweep 'cpux'", "budget, cpu, dyck, encodings, lookup, paper"]),
    ("missing required sweep key", ("sweeps", "cpu", "d"), DELETE, ["config key 'sweeps.cpu.d': missing"]),
    ("missing required arch key", ("sweeps", "cpu", "archs", "fcn", "steps"), DELETE,
     ["config key 'sweeps.cpu.archs.fcn.steps': missing"]),
    ("missing sweeps", ("sweeps",), DELETE, ["config key 'sweeps': missing"]),
    ("error in the sweep not chosen", ("sweeps", "paper", "archs", "fcn", "lr"), -1,
     ["'sweeps.paper.archs.fcn.lr'", "-1 is less than or equal to"]),
    # numbers that cannot be trained on (YAML .nan / .inf)
    ("learning rate .nan", ("sweeps", "cpu", "archs", "fcn", "lr"), float("nan"),
     ["config key 'sweeps.cpu.archs.fcn.lr': nan is not a finite number"]),
    ("learning rate .inf", ("sweeps", "cpu", "archs", "tf_fixed", "lr"), float("inf"),
     ["config key 'sweeps.cpu.archs.tf_fixed.lr': inf is not a finite number"]),
    ("d as .inf", ("sweeps", "cpu", "d"), float("inf"), ["'sweeps.cpu.d'", "inf is not of type 'integer'"]),
    ("a width as -.inf", ("sweeps", "cpu", "archs", "fcn", "widths"), [64, float("-inf")],
     ["'sweeps.cpu.archs.fcn.widths.1'", "-inf is not of type 'integer'"]),
    # a cell no job could train: refused with the memory estimate, not sent to a cluster
    ("a cell too large to train", ("sweeps", "cpu", "archs", "fcn", "widths"), [64, 30_000_000],
     ["config key 'sweeps.cpu.archs.fcn.widths': the cell fcn N=", "width=30000000 needs about",
      "GiB to train", "above the cap of 96 GiB"]),
    # sweep names that would put outputs outside results/<name>/
    ("sweep name with a path separator", ("sweep",), "../elsewhere",
     ["config key 'sweep': sweep name '../elsewhere' is not a plain folder name"]),
    ("sweep name '..'", ("sweep",), "..", ["config key 'sweep': sweep name '..' is not a plain folder name"]),
    ("empty sweep name", ("sweep",), "", ["config key 'sweep': sweep name '' is not a plain folder name"]),
    ("sweep defined under a hidden name", ("sweeps", ".hidden"), "<cpu>",
     ["config key 'sweeps..hidden': sweep name '.hidden' is not a plain folder name"]),
    ("sweep defined under a nested path", ("sweeps", "a/b"), "<cpu>",
     ["config key 'sweeps.a/b': sweep name 'a/b' is not a plain folder name"]),
    ("an arch's own d outside the sweep's", ("sweeps", "cpu", "archs", "tf_fixed", "d"), 16,
     ["config key 'sweeps.cpu.archs.tf_fixed.d': [16] not in the sweep's d"]),
    ("an arch's own N outside the sweep's", ("sweeps", "cpu", "archs", "fcn", "N"), [4, 32],
     ["config key 'sweeps.cpu.archs.fcn.N': [32] not in the sweep's N"]),
    ("an arch's own q outside the sweep's", ("sweeps", "cpu", "archs", "fcn", "q"), 3,
     ["config key 'sweeps.cpu.archs.fcn.q': [3] not in the sweep's q"]),
    ("position range < 1", ("sweeps", "cpu", "position_range"), 0,
     ["'sweeps.cpu.position_range'", "0 is less than the minimum of 1"]),
    ("pilot as a number", ("pilot",), 3, ["config key 'pilot': 3 is not of type 'boolean'"]),
    ("pilot as another word", ("pilot",), "yes", ["config key 'pilot': 'yes' is not of type 'boolean'"]),
]
# run through `snakemake -n` as well: one of each kind of check (schema, cross-key, non-finite, memory)
THROUGH_SNAKEMAKE = {"typo in an arch key", "q > N", "unknown sweep name", "learning rate .nan",
                     "a cell too large to train"}


def mutate(config, path, value):
    c = copy.deepcopy(config)
    node = c
    for key in path[:-1]:
        node = node[key]
    if value is DELETE:
        del node[path[-1]]
    elif value == "<cpu>":  # a copy of the cpu sweep under another name
        node[path[-1]] = copy.deepcopy(c["sweeps"]["cpu"])
    else:
        node[path[-1]] = value
    return c


def tree_digest(folder):
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """Run every case as `snakemake --cores 1` of the cpu sweep (the valid config, the control, as a dry run)."""
    work = copy_workflow(tmp_path_factory.mktemp("bad configs"))
    results = work / "results" / "cpu" / "tables"
    results.mkdir(parents=True)
    (results / "metrics.csv").write_text("arch,q\nfcn,2\n")  # stands for earlier work
    before = tree_digest(work / "results")
    base = yaml.safe_load((ROOT / "config.yaml").read_text())
    base["sweep"] = "cpu"
    cases = [("valid config (control)", base)] + [(name, mutate(base, p, v)) for name, p, v, _ in CATALOG
                                                    if name in THROUGH_SNAKEMAKE]

    def run(case):
        name, config = case
        path = work / f"{abs(hash(name))}.yaml"
        path.write_text(yaml.safe_dump(config))
        # a refused config runs for real: were it accepted, its jobs would write under results/
        how = ("-n",) if name == "valid config (control)" else ("--cores", "1")
        r = snakemake(work, *how, "--quiet", "rules", "--replace-workflow-config", "--configfile", path,
                      check=False, timeout=120)
        return name, r

    with ThreadPoolExecutor(2) as pool:
        out = dict(pool.map(run, cases))
    out["__unchanged__"] = tree_digest(work / "results") == before
    return out


def test_the_valid_config_passes(outcomes):
    r = outcomes["valid config (control)"]
    assert r.returncode == 0, r.stderr[-2000:]


def refusal(config) -> str | None:
    """The validation's message for ``config`` (None: accepted), as the Snakefile runs it."""
    from stsq.config import ConfigError, validate_config
    try:
        validate_config(copy.deepcopy(config), ROOT / "workflow" / "schemas" / "config.schema.yaml")
    except ConfigError as e:
        return str(e)
    return None


@pytest.mark.parametrize("name,path,value,fragments", CATALOG, ids=[c[0] for c in CATALOG])
def test_bad_config_is_refused_naming_the_key(name, path, value, fragments):
    base = yaml.safe_load((ROOT / "config.yaml").read_text())
    base["sweep"] = "cpu"
    text = refusal(mutate(base, path, value))
    assert text is not None, f"{name}: accepted"
    for f in fragments:
        assert f in text, f"{name}: {f!r} not in the message:\n{text[-1500:]}"


def test_the_valid_config_is_accepted_by_the_validation():
    base = yaml.safe_load((ROOT / "config.yaml").read_text())
    assert refusal(base) is None


@pytest.mark.parametrize("name", sorted(THROUGH_SNAKEMAKE))
def test_snakemake_refuses_a_bad_config_with_the_message_before_any_job(outcomes, name):
    fragments = next(c[3] for c in CATALOG if c[0] == name)
    r = outcomes[name]
    text = r.stdout + r.stderr
    assert r.returncode != 0, f"{name}: accepted"
    for f in fragments:
        assert f in text, f"{name}: {f!r} not in the message:\n{text[-1500:]}"
    assert "Invalid config" in text
    assert "Traceback" not in text  # a message, not a crash


def test_a_refused_config_leaves_results_untouched(outcomes):
    assert outcomes["__unchanged__"]



def test_a_sweep_naming_two_archs_of_one_role_is_refused_before_any_job(monkeypatch):
    """The claims and the figures read one arch per role: a second FCN in one sweep would train and never be
    read, so the config is refused, naming both."""
    import dataclasses

    from stsq.config import ConfigError, validate_config
    from stsq.core import experiment as ex
    monkeypatch.setitem(ex.ARCHS, "fcn2", dataclasses.replace(ex.ARCHS["fcn"], name="fcn2"))
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    config["sweeps"]["cpu"]["archs"]["fcn2"] = {**config["sweeps"]["cpu"]["archs"]["fcn"], "layers": 2}
    with pytest.raises(ConfigError, match=r"'sweeps.cpu.archs': fcn, fcn2 share the role 'fcn'"):
        validate_config(config, ROOT / "workflow" / "schemas" / "config.schema.yaml")
    del config["sweeps"]["cpu"]["archs"]["fcn"]  # fcn2 alone: accepted (and read by the claims in its place)
    validate_config(config, ROOT / "workflow" / "schemas" / "config.schema.yaml")


def test_factors_by_q_and_exclude_shape_an_archs_grid_and_bad_entries_are_named():
    """A relative width grid may place its factors per q (a need whose multiple of q log N grows with q), and
    an arch may leave shapes of its q x N x d product out; an entry naming a q, N or d the arch does not
    train at is refused, naming its key."""
    import math

    from stsq.config import ConfigError, validate_config
    from stsq.core.sweep import cell_records
    schema = ROOT / "workflow" / "schemas" / "config.schema.yaml"
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    a = config["sweeps"]["separation"]["archs"]["tf_stochastic"]
    a["widths"]["factors_by_q"] = {**a["widths"].get("factors_by_q", {}), 2: [10]}
    a["exclude"] = a.get("exclude", []) + [{"q": 1, "N": 128}]
    validate_config(config, schema)
    cells = {(r.q, r.N, r.d, r.width) for r in cell_records(config["sweeps"]["separation"])
             if r.arch == "tf_stochastic"}
    assert {(q, N) for q, N, _, _ in cells} == {(1, 8), (1, 32), (2, 8), (2, 32), (2, 128), (4, 8), (4, 32)}
    assert {w for q, N, _, w in cells if q == 2 and N == 32} == {round(10 * 2 * math.log(32))}
    assert len({w for q, N, _, w in cells if q == 1 and N == 32}) == len(a["widths"]["factors"])
    for key, bad, where in (("exclude", [{"q": 3}], "exclude.0.q"),
                            ("widths", {**a["widths"], "factors_by_q": {5: [1]}}, "widths.factors_by_q")):
        broken = copy.deepcopy(config)
        broken["sweeps"]["separation"]["archs"]["tf_stochastic"][key] = bad
        with pytest.raises(ConfigError, match=f"sweeps.separation.archs.tf_stochastic.{where}"):
            validate_config(broken, schema)


def test_an_arch_batch_size_replaces_the_sweeps_for_its_cells_only():
    """An arch may train on batches of its own size (the index-lookup GRU learns in fewer steps on larger ones):
    its cells carry it, the sweep's other archs keep the sweep's; a size of 0 is refused, naming the key."""
    from stsq.config import ConfigError, validate_config
    from stsq.core.sweep import cell_records
    schema = ROOT / "workflow" / "schemas" / "config.schema.yaml"
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    sweep = config["sweeps"]["lookup"]
    sweep["batch_size"], sweep["archs"]["lookup_gru"]["batch_size"] = 64, 128
    validate_config(config, schema)
    sizes = {(r.arch, r.batch_size) for r in cell_records(sweep)}
    assert sizes == {("lookup_tf", 64), ("lookup_gru", 128)}
    sweep["archs"]["lookup_gru"]["batch_size"] = 0
    with pytest.raises(ConfigError, match="sweeps.lookup.archs.lookup_gru.batch_size"):
        validate_config(config, schema)


def test_widths_by_N_gives_an_arch_its_widths_at_the_N_it_names_and_refuses_an_N_it_does_not_train_at():
    """A need that moves with N further than one grid affords (the index-lookup GRU's): the cells at an N named in
    ``widths_by_N`` take its widths, the other N ``widths``, also from a sweep passed as JSON (N as text); an N
    the arch does not train at is refused, naming the key."""
    from stsq.config import ConfigError, validate_config
    from stsq.core.sweep import cell_records
    schema = ROOT / "workflow" / "schemas" / "config.schema.yaml"
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    sweep = config["sweeps"]["lookup"]
    a = sweep["archs"]["lookup_gru"]
    a.pop("steps_by_N", None)
    a["N"], a["widths"], a["widths_by_N"] = [4, 8, 16], [2, 4, 8], {16: [8, 16, 32]}
    validate_config(config, schema)
    widths = {(r.N, r.width) for r in cell_records(sweep) if r.arch == "lookup_gru"}
    assert widths == {(4, 2), (4, 4), (4, 8), (8, 2), (8, 4), (8, 8), (16, 8), (16, 16), (16, 32)}
    assert cell_records(json.loads(json.dumps(sweep))) == cell_records(sweep)
    a["widths_by_N"] = {32: [64]}
    with pytest.raises(ConfigError, match=r"'sweeps.lookup.archs.lookup_gru.widths_by_N': N=32 is not an N"):
        validate_config(config, schema)


def test_steps_by_N_gives_an_arch_a_budget_per_N_and_is_refused_where_the_claims_fit_one_budget():
    """An index-lookup arch may train longer at a larger N (its claims read each N at its own budget): the cells
    at the N named there take that budget, the others ``steps``; an N the arch does not train at is refused, and so
    is a budget per N on STS_q, whose width claims fit one budget across N, each naming its key."""
    from stsq.cluster.pilot import pilot_sweep
    from stsq.config import ConfigError, validate_config
    from stsq.core.sweep import cell_records
    schema = ROOT / "workflow" / "schemas" / "config.schema.yaml"
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    a = config["sweeps"]["lookup"]["archs"]["lookup_tf"]
    a["steps"], a["steps_by_N"] = 3000, {64: [5000, 7000]}
    validate_config(config, schema)
    steps = {(r.N, r.steps) for r in cell_records(config["sweeps"]["lookup"]) if r.arch == "lookup_tf"}
    assert steps == {(8, 3000), (16, 3000), (32, 3000), (64, 5000), (64, 7000), (128, 3000)}
    assert {r.steps for r in cell_records(pilot_sweep(config["sweeps"]["lookup"]))} == {10}
    as_json = json.loads(json.dumps(config["sweeps"]["lookup"]))  # a command's --sweep-json: N as text
    assert cell_records(as_json) == cell_records(config["sweeps"]["lookup"])
    for sweep, arch, by_N, where in (("lookup", "lookup_tf", {4: 5000}, "N=4 is not an N this arch trains at"),
                                     ("cpu", "tf_stochastic", {8: 5000}, "fit one budget across N")):
        broken = copy.deepcopy(config)
        broken["sweeps"][sweep]["archs"][arch]["steps_by_N"] = by_N
        with pytest.raises(ConfigError, match=f"'sweeps.{sweep}.archs.{arch}.steps_by_N': .*{where}"):
            validate_config(broken, schema)
