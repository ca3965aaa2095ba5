"""Helpers shared by the tests (the per-operation template lives in optest.py)."""
