# The chosen sweep, its (arch, q, N, width) grid and where its outputs live.
# Included after the config is validated.

SWEEP_NAME = config["sweep"]
SWEEP = config["sweeps"][SWEEP_NAME]
SEEDS = [int(s) for s in SWEEP["seeds"]]
R = f"results/{SWEEP_NAME}"  # every output of this sweep lives under here

# The grid; wildcards (plain strings) are what rules pass on, never Paramspace's numpy scalars.
GRID = Paramspace(cells(SWEEP), filename_params=None)
CELL = GRID.wildcard_pattern  # arch~{arch}/q~{q}/N~{N}/width~{width}
CELLS = list(GRID.instance_patterns)

# Paths as patterns of the wildcards, not functions of them: Snakemake calls a
# function once per job and path, which costs a 10,000-cell sweep's DAG seconds
# (`make bench`, part e).
DATA = f"{R}/data/q~{{q}}/N~{{N}}"  # the evaluation sets of a (q, N)
MANIFESTS = [f"{DATA}/seed~{s}/manifest.json" for s in SEEDS]
DATA_INDEX = f"{DATA}/index.json"  # stands for MANIFESTS: one input per cell job instead of one per seed
MODELS = f"{R}/models/{CELL}"  # a cell's trained models, one folder per seed
CHECKPOINTS = f"{R}/checkpoints/{CELL}"
# Longest cell first: each cell job's priority is its estimated training time in seconds.
PRIORITY = {c: max(1, round(estimated_seconds(SWEEP, a, int(N), int(w))))
            for c, (a, N, w) in zip(CELLS, GRID.dataframe[["arch", "N", "width"]].itertuples(index=False))}
# The training settings of each arch as CLI arguments (the schema filled in the defaults).
ARCH_ARGS = {
    arch: f"--steps {int(a['steps'])} --lr {float(a['lr'])} --optimizer {a['optimizer']} --layers {int(a['layers'])}"
    for arch, a in SWEEP["archs"].items()
}


wildcard_constraints:
    arch="tf_stochastic|tf_fixed|tf_positional|fcn",
    q=r"\d+",
    N=r"\d+",
    width=r"\d+",
    seed=r"\d+",
