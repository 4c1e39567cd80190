"""Where a number comes from: the code hash, the sidecars, the reference and compare."""
