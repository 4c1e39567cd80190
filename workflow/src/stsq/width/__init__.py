"""The width measure: training per width, evaluation at every N', the tidy table, the widths needed, the reach."""
