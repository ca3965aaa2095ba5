"""Normalisation: LRN, MVN, BatchNormInference, NormalizeL2, GRN, GroupNormalization, RMS."""
