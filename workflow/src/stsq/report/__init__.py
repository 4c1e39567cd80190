"""The report: the figures, their captions, the front pages, the docs' quoted numbers, and a run against its
committed reference (compare, freeze)."""
