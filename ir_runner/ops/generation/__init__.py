"""Tensors made from scalars: Eye, RandomUniform."""
