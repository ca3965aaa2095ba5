"""OpenVINO's CPU plugin (``INFERENCE_PRECISION_HINT=f32``) as the oracle for operations whose core node has no
``evaluate`` (LRN, MVN-1, BatchNormInference, NormalizeL2, GroupNormalization, ScaledDotProductAttention): the
template plugin that would run their reference is not shipped in the ``openvino`` wheel."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import ir_runner
from tests.helpers.optest import assert_close, cpu_outputs


def assert_same_values(got: dict[str, np.ndarray], want: list[np.ndarray]) -> None:
    """ir-run's outputs (by name) equal the CPU plugin's (in order): shapes, types and every value. A string
    output with no elements is exempt from the type check: OpenVINO's Python API gives float64 for it."""
    assert len(got) == len(want)
    for (name, g), w in zip(got.items(), want):
        assert g.shape == w.shape, (name, g.shape, w.shape)
        assert g.dtype == w.dtype or (g.dtype.kind == "U" and w.size == 0), (name, g.dtype, w.dtype)
        assert g.tolist() == w.tolist(), name


def check_run_cpu(xml: Path, feeds: dict[str, np.ndarray], *, rtol: float, atol: float = 0.0) -> dict[str, np.ndarray]:
    """Run ``xml`` in ir-run and compare each output with the CPU plugin's within ``atol + rtol·|want|``."""
    got = ir_runner.load(str(xml)).run(feeds)
    want = cpu_outputs(xml, feeds)
    assert len(got) == len(want)
    for (name, g), w in zip(got.items(), want):
        assert g.shape == w.shape, (name, g.shape, w.shape)
        assert g.dtype == w.dtype, (name, g.dtype, w.dtype)
        assert_close(name, g, w, rtol, atol)
    return got
