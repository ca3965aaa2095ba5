"""Linear algebra: MatMul, Einsum, Inverse, ScaledDotProductAttention (and, for now, Softmax)."""
