"""The samples measure: samples to each threshold per cell, and its tables."""
