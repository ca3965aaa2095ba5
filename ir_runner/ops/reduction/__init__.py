"""Reductions along axes: Reduce*, CumSum."""
