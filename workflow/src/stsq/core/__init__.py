"""What every task and measure shares: the vocabulary and the registries (archs, tasks, families, measures,
figures, claim records), the grid, files, seeds, errors, checkpoints.  No torch but in checkpoint."""
