"""Sparse token retrieval's science: its task, its model families, its cells."""
