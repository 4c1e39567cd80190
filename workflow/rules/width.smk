# A sweep whose task measures widths (STS_q's sweeps): training per (arch, q, N, d, steps, width) cell,
# evaluation at every N', the widths needed, the figures, the claims and the report.
include: "common.smk"


# The report's front page, written by rule landing from this sweep's claims table (stsq.report).
report: os.path.abspath(PATHS.landing)  # where the results are (the working directory), not the Snakefile


include: "data.smk"
include: "train.smk"
include: "evaluate.smk"
include: "figures.smk"
include: "pilot.smk"


# Every file a rule writes is a target of `all` (the Snakefile), so a deleted one (a model, an evaluation set) is
# rebuilt with what depends on it, and nothing else.
ALL_TARGETS = [
    rules.aggregate.output,
    rules.claims.output,
    rules.critical.output,
    rules.encodings.output,
    rules.reach.output,
    rules.landing.output,
    rules.pilot.output if PILOT else [],
    FIGURE_FILES,
    seed_files(ex.MODEL),
    all_eval_sets(),
]
