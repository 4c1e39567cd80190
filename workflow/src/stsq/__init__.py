"""Reproduction of Wang, Wei, Hsu, Lee (ICML 2024): *Transformers Provably Learn
Sparse Token Selection While Fully-Connected Nets Cannot* (docs/paper.md).

Folders, one part of the architecture each (docs/library.md is their map):

- ``core``        the vocabulary and every registry: archs, tasks, families, measures, figures, claim records
- ``provenance``  the code hash and the sidecars: where each number comes from
- ``sts``         STS_q's science: the task, positions, models, the training step, data, oracle, width floor
- ``retrieval``   sparse token retrieval's science: its task, its model families, its cells
- ``width``       the width measure: training per width, evaluation at every N', the widths needed
- ``samples``     the samples measure: samples to each threshold, its tables
- ``claims``      the judge, the claims by subject, the claims table written out
- ``report``      the figures, their captions, the front pages, the docs' numbers, the reference
- ``cluster``     the cost of every job, the cluster's requests, GPU slots, the pilot
- ``config``      the config's validation; ``cli``: ``python -m stsq <command>``, what the rules call

torch is imported only by the modules that train or evaluate, so the analysis side runs without it.
"""

__version__ = "0.1.0"

import os as _os

# MKL's strict conditional numerical reproducibility: its products give the same bits at any thread count.
# Without it, on some CPUs a product on two threads splits its sums otherwise than on one, and an FCN's
# numbers would depend on the threads its job got (docs/robustness.md). MKL reads it at its first call, so it
# is set here, before any module imports torch; a value already set (a pinned code branch) is kept.
_os.environ.setdefault("MKL_CBWR", "AUTO,STRICT")
# Intel's conditions for reproducible numbers also ask that MKL and OpenMP never change a call's thread count at run
# time (a busy machine can make them); the count is then the job's, and the strict mode makes it not matter.  These
# two are set whatever the shell says: an inherited TRUE would turn the condition off unseen, and neither chooses a
# float path (tests/test_robustness.py holds all three).
_os.environ["MKL_DYNAMIC"] = "FALSE"
_os.environ["OMP_DYNAMIC"] = "FALSE"
