"""Reproduction of Wang, Wei, Hsu, Lee (ICML 2024): *Transformers Provably Learn
Sparse Token Selection While Fully-Connected Nets Cannot* (docs/paper.md).

Modules, one concept each (torch is imported only by the ones that train or
evaluate, so the analysis side runs without it):

- ``experiment`` the vocabulary: archs and defaults, results layout, columns, figures, claims
- ``errors``     the pipeline's errors (each names its file, key or cell)
- ``sweep``      config validation and the (arch, q, N, d, steps, width) grid, a cell's cost
- ``seeds``      stable derived seeds (one base seed -> every random stream)
- ``task``       the STS_q distribution: ``sample_batch`` and ``normalized_loss``
- ``positions``  stochastic and fixed positional encodings p_i
- ``models``     the one-layer transformer (W, V; its forward pass) and the FCN
- ``step``       one training step: hand-written for the transformer, autograd otherwise
- ``train``      online training, progress, curves, resumable checkpoints; a cell's seeds
- ``evaluate``   normalized loss and attention diagnostics at any length N'
- ``data``       seed manifests and the fixed evaluation sets
- ``files``, ``checkpoint``  atomic writes, CSV rows, ``weights_only`` loads
- ``theory``     the FCN width floor
- ``critical``   the width each model needs (interpolated, censored) and its fits
- ``tables``, ``figures``, ``claims``  the tidy table, plots and claims table
- ``cli``        ``python -m stsq <command>``, what the rules call
"""

__version__ = "0.1.0"

import os as _os

# MKL's strict conditional numerical reproducibility: its products give the same bits at any thread count.
# Without it, on some CPUs a product on two threads splits its sums otherwise than on one, and an FCN's
# numbers would depend on the threads its job got (docs/robustness.md). MKL reads it at its first call, so it
# is set here, before any module imports torch; a value already set (a pinned code branch) is kept.
_os.environ.setdefault("MKL_CBWR", "AUTO,STRICT")
