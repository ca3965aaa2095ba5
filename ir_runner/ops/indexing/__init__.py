"""Gathering and scattering by index: Gather, GatherElements, GatherND, Scatter*Update, EmbeddingBag*."""
