"""The report: the figures, their captions, the front pages, the docs' quoted numbers."""
