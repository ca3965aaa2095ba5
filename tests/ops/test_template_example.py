"""The per-operation template (tests/helpers/optest.py) on operations that exist: Select and Gather in a graph
written by OpenVINO, inferred equal to what it declares, run against OpenVINO's reference bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset8  # noqa: E402

from tests.helpers.optest import check_inference, check_run, ulp_distance, write_ir  # noqa: E402


def _graph(rng: np.random.Generator, tmp_path):
    rows, cols = (int(n) for n in rng.integers(1, 6, size=2))
    cond = opset8.parameter([rows, cols], ov.Type.boolean, name="cond")
    then = opset8.parameter([rows, cols], ov.Type.f32, name="then")
    other = opset8.parameter([1, cols], ov.Type.f32, name="else")
    picked = opset8.select(cond, then, other)
    indices = opset8.constant(rng.integers(-cols, cols, size=3).astype(np.int32))
    gathered = opset8.gather(picked, indices, opset8.constant(np.int64(1)))
    path = write_ir(gathered, [cond, then, other], tmp_path)
    feeds = {"cond": rng.random((rows, cols)) < 0.5, "then": rng.standard_normal((rows, cols)).astype(np.float32),
             "else": rng.standard_normal((1, cols)).astype(np.float32)}
    return path, feeds


@pytest.mark.parametrize("seed", range(5))
def test_template_differential(seed, tmp_path):
    path, feeds = _graph(np.random.default_rng(seed), tmp_path)
    check_inference(path)
    check_run(path, feeds)


def test_ulp_distance_counts_representable_steps():
    one = np.float32(1)
    steps = np.array([one, np.nextafter(one, np.float32(2)), -np.float32(0)], np.float32)
    assert ulp_distance(steps, np.array([one, one, np.float32(0)], np.float32)).tolist() == [0, 1, 0]
    assert ulp_distance(np.array([np.nan], np.float32), np.array([np.nan], np.float32)).tolist() == [0]
