"""Elementwise operations: binary arithmetic, comparison, logical and bitwise operations, unary math and
activations, IsNaN/IsInf/IsFinite, Select."""
