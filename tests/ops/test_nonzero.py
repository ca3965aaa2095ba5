"""NonZero-3 (ir_runner/ops/indexing/nonzero.py): output shapes as OpenVINO infers them (data-dependent counts:
dynamic at load, concrete at run) and values against its reference (Node.evaluate)."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset13  # noqa: E402

import ir_runner  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, cpu_outputs, write_ir  # noqa: E402
from tests.helpers.ov_random import parameter  # noqa: E402


def _param(shape, et=ov.Type.f32, name="data"):
    return opset13.parameter(ov.PartialShape(shape), et, name=name)


@pytest.mark.parametrize("shape", [[2, 3], [-1, 3], [(1, 4), 3], [5], ov.PartialShape.dynamic(), [],
                                   [0, 2, 4, -1], [-1, (0, 0), 3]])  # (a zero dim: the count is 0; the fuzzer)
def test_non_zero_shapes_at_load(shape, tmp_path):
    d = _param(shape)
    node = opset13.non_zero(d, "i64")
    check_output_shapes(write_ir(node, [d], tmp_path), node)


@pytest.mark.parametrize("output_type", ["i64", "i32"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.int32, np.uint8, np.bool_])
def test_non_zero_values_are_concrete_at_run(output_type, dtype, tmp_path):
    et = ov.Type.boolean if dtype == np.bool_ else ov.Type(np.dtype(dtype))
    d = _param([3, 4], et)
    path = write_ir(opset13.non_zero(d, output_type), [d], tmp_path)
    model = ir_runner.load(str(path))
    rng = np.random.default_rng(1)
    for density in (0.0, 0.5, 1.0):
        data = (rng.random((3, 4)) < density).astype(dtype)
        if dtype == np.float32:
            data[0, 0], data[0, 1] = np.nan, -0.0
        got = check_run(path, {"data": data})
        assert next(iter(got.values())).shape == (2, int(np.count_nonzero(data)))
    assert model.outputs[0].shape == (2, None)


@pytest.mark.parametrize("output_type", ["i32", "i64"])
@pytest.mark.parametrize("shape", [(1, 1), (1, 1, 1)])
def test_non_zero_of_one_element_gives_every_coordinate(output_type, shape, tmp_path):
    """The reference leaves all rows but the first uninitialised here (docs/semantics.md); ir-run gives zeros."""
    d = _param(list(shape), ov.Type.i32)
    path = write_ir(opset13.non_zero(d, output_type), [d], tmp_path)
    got = next(iter(ir_runner.load(str(path)).run({"data": np.full(shape, 7, np.int32)}).values()))
    assert got.dtype == np.dtype(output_type.replace("i", "int")) and got.tolist() == [[0]] * len(shape)


def test_non_zero_of_a_constant_is_static(tmp_path):
    values = np.array([[0, 3, 0], [1, 0, 2]], np.int32)
    d = _param([2, 3])
    node = opset13.non_zero(opset13.constant(values), "i32")
    path = write_ir([node, d], [d], tmp_path)
    check_inference(path)
    got = ir_runner.load(str(path)).run({"data": np.zeros((2, 3), np.float32)})
    assert next(iter(got.values())).tolist() == [[0, 1, 1], [1, 0, 2]]


def test_non_zero_chain_has_concrete_shapes_at_run(tmp_path):
    """NonZero of a fed mask -> Einsum (transpose) -> GatherND: the downstream shapes follow each run's count."""
    mask, data = _param([2, 3], ov.Type.boolean, "mask"), _param([2, 3], name="data")
    picked = opset13.gather_nd(data, opset13.einsum([opset13.non_zero(mask, "i64")], "ij->ji"))
    path = write_ir(picked, [mask, data], tmp_path)
    check_output_shapes(path, picked)
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    for bits in ([1, 0, 1, 1, 0, 0], [0] * 6, [1] * 6):
        got = check_run(path, {"mask": np.array(bits, bool).reshape(2, 3), "data": values}, oracle=cpu_outputs)
        assert next(iter(got.values())).tolist() == values.reshape(-1)[np.array(bits, bool)].tolist()


# -- empty and scalar tensors --------------------------------------------------------------------------------

@pytest.mark.parametrize(("shape", "value"), [([0, 3], 1), ([], 2), ([], 0)], ids=["empty", "scalar", "scalar-zero"])
def test_empty_and_scalar(shape, value, tmp_path):
    d = parameter("data", "f32", shape)
    check_run(write_ir(opset13.non_zero(d), [d], tmp_path), {"data": np.full(shape, value, np.float32)})
