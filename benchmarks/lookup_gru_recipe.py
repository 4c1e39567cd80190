"""Why the index-lookup GRU trains on batches of 256 at a constant learning rate (docs/separations.md, "Where the
grids stop"): the same cells of the `lookup` sweep trained through the pipeline's own training loop
(stsq.width.train.train, the sweep's seeds and evaluation sets), with one setting changed at a time.

- batch: N = 16, widths 16 and 32, 6,000 cosine steps (the sweep's first recipe), a batch of 64 against 256;
- schedule: a batch of 256, a constant rate against a cosine one, at N = 16 (width 16, 8,000 steps) and at N = 32
  (width 64, 12,000 steps; seed 0 only, about 5 min a run on one core).

Each row: the normalized cross-entropy at N on the seed's evaluation set (512 samples), at every 2,000 steps and at
the end; the target is 0.1.  Runs two cells at a time (one thread each):

    python benchmarks/lookup_gru_recipe.py
"""
from __future__ import annotations

import sys
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "src"))

RUNS = [  # (what it shows, N, width, batch_size, schedule, steps, seed)
    *[("batch", 16, m, b, "cosine", 6000, s) for m in (16, 32) for b in (64, 256) for s in (0, 1)],
    *[("schedule", 16, 16, 256, sc, 8000, s) for sc in ("cosine", "constant") for s in (0, 1)],
    *[("schedule", 32, 64, 256, sc, 12000, 0) for sc in ("cosine", "constant")],
]
EVERY = 2000


def run(args) -> tuple:
    import torch
    from stsq.sts.data import make_eval_set, seed_streams
    from stsq.width.train import TrainSpec, train

    torch.set_num_threads(1)
    what, N, width, batch, schedule, steps, seed = args
    streams = seed_streams(1, N, 2, seed)
    spec = TrainSpec(arch="lookup_gru", task="lookup", q=1, N=N, d=2, width=width, steps=steps, lr=0.01,
                     batch_size=batch, schedule=schedule, log_every=EVERY, checkpoint_every=steps, seed=seed,
                     streams=streams)
    test = make_eval_set(512, N, 1, 2, streams["eval_data"], "lookup")
    result = train(spec, test, log=lambda line: None)
    return args, [(row["step"], row["normalized_loss"]) for row in result.curve], result.seconds


def main() -> None:
    print("| shows | N | width | batch | schedule | seed | normalized loss every 2,000 steps | end | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    with Pool(2) as pool:
        for (what, N, width, batch, schedule, steps, seed), curve, seconds in pool.imap(run, RUNS):
            along = ", ".join(f"{loss:.3g}" for step, loss in curve if step % EVERY == 0 and step < steps)
            print(f"| {what} | {N} | {width} | {batch} | {schedule} | {seed} | {along} | {curve[-1][1]:.3g} | "
                  f"{seconds:.0f} |", flush=True)


if __name__ == "__main__":
    main()
