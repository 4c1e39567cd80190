# The front half of a sweep whose task measures widths (STS_q's sweeps; stsq.core.measures): training per
# (arch, q, N, d, steps, width) cell, evaluation at every N', the widths needed.  The figures, the claims and the
# front page are the back half's (report.smk).
include: "common.smk"
include: "data.smk"
include: "train.smk"
include: "evaluate.smk"
include: "figures.smk"
include: "pilot.smk"


# Every file a rule writes is a target of `all` (the Snakefile), so a deleted one (a model, an evaluation set) is
# rebuilt with what depends on it, and nothing else.
ALL_TARGETS = [
    rules.aggregate.output,
    rules.critical.output,
    rules.encodings.output,
    rules.reach.output,
    rules.pilot.output if PILOT else [],
    seed_files(ex.MODEL),
    all_eval_sets(),
]
