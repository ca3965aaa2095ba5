"""Inverse-14: shapes as OpenVINO infers them (batches, dynamic and interval dims, dynamic rank), IRErrors
naming the layer and input, values within the stated bound of the CPU plugin (the wheel has no reference
evaluate) at f32, f16 and f64, adjugate included, singular matrices, and seeded random graphs."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset14  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError  # noqa: E402
from ir_runner.ops.registry import lookup  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402


def _graph(tmp_path, shape, et=ov.Type.f32, adjoint=False, name="m"):
    x = opset1.parameter(ov.PartialShape(shape), et, name="x")
    node = opset14.inverse(x, adjoint)
    return write_ir(node, [x], tmp_path, name), node


@pytest.mark.parametrize("shape", [[3, 3], [2, 5, 4, 4], [-1, 3], [ov.Dimension(2, 5), ov.Dimension(3, 7)],
                                   [-1, -1, 2, 2], None], ids=str)
def test_shapes(shape, tmp_path):
    path, node = _graph(tmp_path, ov.PartialShape.dynamic() if shape is None else shape)
    check_inference(path)
    check_output_shapes(path, node)


@pytest.mark.parametrize("shape, et, word", [("2,3,4", "f32", "square"), ("3", "f32", "rank 2"),
                                             ("3,3", "i32", "floating-point")])
def test_bad_inputs_are_errors(shape, et, word):
    b = IRBuilder()
    b.result(b.layer("Inverse", "opset14", [b.parameter("x", et, shape)], attrs={"adjoint": "false"}, name="inv"))
    with pytest.raises(InferenceError) as info:
        ir_runner.load(b.build()[0])
    assert word in str(info.value) and "'inv'" in str(info.value) and "Inverse-14" in str(info.value)


def _well_conditioned(rng, shape, npt):
    n = shape[-1]
    return (rng.standard_normal(shape) + n * np.eye(n)).astype(npt)


@pytest.mark.parametrize("adjoint", [False, True])
@pytest.mark.parametrize("et, npt, rtol", [(ov.Type.f32, np.float32, 1e-5), (ov.Type.f64, np.float64, 1e-6),
                                           (ov.Type.f16, np.float16, 4e-3)], ids=str)
def test_values_against_cpu(et, npt, rtol, adjoint, tmp_path):
    path, _ = _graph(tmp_path, [3, 4, 4], et, adjoint)
    data = _well_conditioned(np.random.default_rng(0), [3, 4, 4], npt)
    got = check_run(path, {"x": data}, oracle="cpu", rtol=rtol, atol=rtol)
    want = np.linalg.inv(data.astype(np.float64))  # (f64: the CPU plugin computes in f32; ir-run in f64)
    want = want.transpose(0, 2, 1) if adjoint else want
    assert np.abs(next(iter(got.values())) - want).max() <= (1e-13 if npt is np.float64 else rtol)


def test_pivoting_and_exact_cases(tmp_path):
    path, _ = _graph(tmp_path, [3, 2, 2])
    data = np.array([[[0, 1], [1, 0]], [[2, 0], [0, 4]], [[1, 2], [3, 4]]], np.float32)
    got = next(iter(ir_runner.load(str(path)).run({"x": data}).values()))
    assert got.tolist() == [[[0, 1], [1, 0]], [[0.5, 0], [0, 0.25]], [[-2, 1], [1.5, -0.5]]]
    check_run(path, {"x": data}, oracle="cpu", rtol=1e-6, atol=1e-6)


def test_singular_gives_non_finite_values(tmp_path):
    path, _ = _graph(tmp_path, [2, 2])
    got = next(iter(ir_runner.load(str(path)).run({"x": np.zeros((2, 2), np.float32)}).values()))
    assert not np.isfinite(got).any()


def test_empty_batch(tmp_path):
    path, _ = _graph(tmp_path, [0, 3, 3])
    assert next(iter(ir_runner.load(str(path)).run({"x": np.zeros((0, 3, 3), np.float32)}).values())).shape == (0, 3, 3)


def test_batch_rule():
    op = lookup("Inverse", "opset14")
    from ir_runner.types import PartialShape, TensorSpec, element_type

    spec = TensorSpec(element_type("f32"), PartialShape.of((4, 3, 3)))
    assert op.batch({}, [spec], [spec], [0]) == [0]
    assert isinstance(op.batch({}, [spec], [spec], [1]), str)


@pytest.mark.parametrize("seed", range(10))
def test_random_graphs(seed, tmp_path):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 6))
    shape = [int(d) for d in rng.integers(1, 3, size=int(rng.integers(0, 3)))] + [n, n]
    path, _ = _graph(tmp_path, shape, adjoint=bool(seed % 2))
    check_inference(path)
    data = _well_conditioned(rng, shape, np.float32)
    check_run(path, {"x": data}, oracle="cpu", rtol=1e-5, atol=1e-5)
