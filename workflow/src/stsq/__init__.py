"""Reproduction of Wang, Wei, Hsu, Lee (ICML 2024): *Transformers Provably Learn
Sparse Token Selection While Fully-Connected Nets Cannot*.

Modules, one concept each (torch is imported only by the ones that train or
evaluate, so the analysis side runs without it):

- ``seeds``      stable derived seeds (one base seed -> every random stream)
- ``task``       the STS_q distribution: ``sample_batch`` and ``normalized_loss``
- ``positions``  stochastic and fixed positional encodings p_i
- ``models``     the one-layer transformer (W, V) and the FCN
- ``checkpoint`` atomic writes and ``weights_only`` loads
- ``data``       seed manifests and the fixed evaluation sets
- ``train``      online training, progress, curves, resumable checkpoints
- ``evaluate``   normalized loss and attention diagnostics at any length N'
- ``theory``     the FCN width floor
- ``sweep``      config checks and the (arch, q, N, width) grid
- ``tables``, ``figures``, ``claims``  the tidy table, plots and claims table
"""

__version__ = "0.1.0"

ARCHS = ("tf_stochastic", "tf_fixed", "tf_positional", "fcn")
TRANSFORMER_ARCHS = ("tf_stochastic", "tf_fixed", "tf_positional")
