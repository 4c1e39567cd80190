"""The authors' sparse token retrieval experiment, run at a grid and settings of our choosing.

It imports their ``setup.py`` from a checkout of their repository (``--repo``; mousavih/transformers-separation)
and calls their code: their input sampler, embedding, models and ``find_sample_complexity``.  It copies none of it.
It replays the order of their script's ``__main__``: ``torch.manual_seed(42)``, one unit vector u, one table of
sign codes per N, then per repeat and per N a fresh test set, a fresh model and a run to threshold.

What it changes, each a setting their script fixes in ``__main__`` or in a default:

- ``--N``: the grid (theirs: 2, 4, ..., 12, or 25, 27, ..., 33 in the simple mode);
- ``--repeats`` (theirs: 5);
- ``--test-mode``: ``simple`` (theirs, for both tasks) or ``cell`` (the task's own mode, ours);
- ``--width`` of the GRU (theirs: 500);
- ``--init gaussian``: every weight matrix of their model redrawn from N(0, 1 / fan-in), fan-in its second
  dimension, the rule this project's models use (theirs: torch's defaults, uniform, of a third of that
  variance for a linear layer); the biases as torch drew them;
- ``--tables per-repeat``: u and the codes' tables drawn anew at the start of every repeat, as this project draws
  them per seed (theirs: once, shared by every repeat);
- ``--cap``: where their function raises, the row is kept as censored at the cap;
- one torch thread.

One threshold a run, as theirs: every cell draws from one global generator, so a run that stops later moves the
draws of every cell after it.  With their grid, repeats and settings it writes the samples their script returns
(checked for the transformer on the general task).  Each row: family, mode, test mode, check_every, n_test, GRU
width, init, tables, repeat, N, threshold, samples, censored.

    python benchmarks/authors_protocol.py --repo PATH --model tr --N 4 8 16 32 --repeats 3 \\
        --threshold 0.3 --check-every 10 --n-test 1000 --cap 200000 --test-mode cell --out FILE.csv
"""
from __future__ import annotations

import argparse
import csv
import importlib
import sys
from pathlib import Path

FAMILY = {"tr": "qstr_transformer", "ffn": "qstr_ffn", "rnn": "qstr_rnn"}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repo", required=True, type=Path, help="a checkout of mousavih/transformers-separation")
    p.add_argument("--model", required=True, choices=sorted(FAMILY))
    p.add_argument("--simple", action="store_true", help="the simple mode (one pointer for every position)")
    p.add_argument("--N", required=True, type=int, nargs="+")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--threshold", type=float, required=True)
    p.add_argument("--check-every", type=int, default=10)
    p.add_argument("--n-test", type=int, default=5000)
    p.add_argument("--cap", type=int, default=1_000_000)
    p.add_argument("--test-mode", choices=("simple", "cell"), default="simple")
    p.add_argument("--width", type=int, default=500, help="the GRU's width")
    p.add_argument("--init", choices=("torch", "gaussian"), default="torch")
    p.add_argument("--tables", choices=("shared", "per-repeat"), default="shared")
    p.add_argument("--out", required=True, type=Path)
    a = p.parse_args(argv)
    if not (a.repo / "setup.py").is_file():
        p.error(f"--repo: no setup.py in {a.repo}")
    sys.path.insert(0, str(a.repo.resolve()))
    setup = importlib.import_module("setup")
    import numpy as np
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    torch.set_num_threads(1)

    d, test_simple = 10, a.test_mode == "simple" or a.simple
    torch.manual_seed(42)

    def tables():
        u = torch.randn(d, 1)
        u /= torch.norm(u)
        codes = {}
        for N in a.N:
            de = int(np.log(N) * 5)
            codes[N] = 2 * (torch.bernoulli(0.5 * torch.ones(N, de)) - 0.5) / np.sqrt(de)
        return u, codes

    u, codes = tables()

    new = not a.out.exists()
    with a.out.open("a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(["family", "mode", "test_mode", "check_every", "n_test", "width", "init", "tables", "repeat",
                        "N", "threshold", "samples", "censored"])
        for rep in range(a.repeats):
            if rep and a.tables == "per-repeat":
                u, codes = tables()
            for N in a.N:
                de = int(np.log(N) * 5)
                if a.model == "ffn":
                    model = setup.FFN(d + 2 * de, N, [N * d, 1000])
                elif a.model == "rnn":
                    model = setup.BGRU(d, de, h_size=a.width, bidirectional=True)
                else:
                    model = setup.SimpleTransformer(d, de, 100)
                if a.init == "gaussian":
                    with torch.no_grad():
                        for weight in (x for x in model.parameters() if x.dim() == 2):
                            weight.normal_(0.0, weight.shape[1] ** -0.5)
                X, t = setup.generate_input(a.n_test, N, d, simple=test_simple)
                loader = DataLoader(TensorDataset(setup.embed_input(X, t, codes[N]), setup.ground_truth(X, t, u)),
                                    batch_size=1000, shuffle=False)
                try:
                    got = setup.find_sample_complexity(N, d, de, model, u, codes[N], loader, max_n_train=a.cap,
                                                       loss_thr=a.threshold, lr=0.001, check_every=a.check_every,
                                                       simple=a.simple)
                except Exception as e:  # their cap: "Did not converge"
                    if "converge" not in str(e):
                        raise
                    got = None
                modes = ["simple" if a.simple else "general", "simple" if test_simple else "general"]
                w.writerow([FAMILY[a.model], *modes, a.check_every, a.n_test, a.width if a.model == "rnn" else "",
                            a.init, a.tables, rep, N, a.threshold, a.cap if got is None else got, got is None])
                f.flush()
                print(f"repeat {rep} N {N}: {got}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
