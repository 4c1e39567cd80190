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


wildcard_constraints:
    arch="tf_stochastic|tf_fixed|tf_positional|fcn",
    q=r"\d+",
    N=r"\d+",
    width=r"\d+",
    seed=r"\d+",
