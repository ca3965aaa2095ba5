"""Quantization: FakeQuantize, FakeConvert."""
