"""Empty tensors and scalars through the indexing, movement, selection and Einsum operations: shapes and values
as OpenVINO's reference (or the CPU plugin where no evaluate exists) gives them."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset13 as o  # noqa: E402

import ir_runner  # noqa: E402
from tests.helpers.optest import check_run, cpu_outputs, write_ir  # noqa: E402

F32, I32, I64 = ov.Type.f32, ov.Type.i32, ov.Type.i64


def _p(shape, et=F32, name="data"):
    return o.parameter(ov.PartialShape(shape), et, name=name)


def _c(values, dtype=np.int64):
    return o.constant(np.array(values, dtype=dtype))


def _zeros(shape, dtype=np.float32):
    return np.zeros(shape, dtype)


def _gather_elements():
    d, i = _p([0, 3]), _p([0, 3], I32, "i")
    return o.gather_elements(d, i, 0), [d, i], {"data": _zeros((0, 3)), "i": _zeros((0, 3), np.int32)}, cpu_outputs


def _gather_nd_no_tuples():
    d, i = _p([3, 2]), _p([0, 1], I32, "i")
    return o.gather_nd(d, i), [d, i], {"data": np.ones((3, 2), np.float32), "i": _zeros((0, 1), np.int32)}, cpu_outputs


def _gather_nd_empty_slices():
    d, i = _p([3, 0]), _p([2, 1], I32, "i")
    return o.gather_nd(d, i), [d, i], {"data": _zeros((3, 0)), "i": _zeros((2, 1), np.int32)}, cpu_outputs


def _scatter_update():
    d, i, u = _p([3, 2]), _p([0], I64, "i"), _p([0, 2], name="u")
    node = o.scatter_update(d, i, u, _c(0))
    return node, [d, i, u], {"data": np.ones((3, 2), np.float32), "i": _zeros(0, np.int64), "u": _zeros((0, 2))}, None


def _scatter_elements_sum():
    d, i, u = _p([3, 2]), _p([0, 2], I64, "i"), _p([0, 2], name="u")
    node = o.scatter_elements_update(d, i, u, _c(0), "sum")
    feeds = {"data": np.ones((3, 2), np.float32), "i": _zeros((0, 2), np.int64), "u": _zeros((0, 2))}
    return node, [d, i, u], feeds, None


def _scatter_nd():
    d, i, u = _p([3, 2]), _p([0, 1], I64, "i"), _p([0, 2], name="u")
    feeds = {"data": np.ones((3, 2), np.float32), "i": _zeros((0, 1), np.int64), "u": _zeros((0, 2))}
    return o.scatter_nd_update(d, i, u), [d, i, u], feeds, None


def _scatter_nd_scalar_update():
    d, u = _p([3, 2]), _p([], name="u")
    feeds = {"data": np.ones((3, 2), np.float32), "u": np.array(7, np.float32)}
    return o.scatter_nd_update(d, _c([1, 0]), u), [d, u], feeds, None


def _pad(mode):
    def build():
        d = _p([0, 3])
        return o.pad(d, _c([0, 1]), _c([0, 1]), mode), [d], {"data": _zeros((0, 3))}, None
    return build


def _topk():
    d = _p([0, 3])
    return o.topk(d, _c(2), 1, "max", "value"), [d], {"data": _zeros((0, 3))}, None


def _one_hot(shape, depth):
    def build():
        i = _p(shape, I32, "i")
        node = o.one_hot(i, _c(depth), _c(1, np.float32), _c(0, np.float32), 1 if shape else 0)
        return node, [i], {"i": _zeros(shape, np.int32)}, None
    return build


def _non_zero(shape, value):
    def build():
        d = _p(shape)
        return o.non_zero(d), [d], {"data": np.full(shape, value, np.float32)}, None
    return build


def _einsum():
    a, b = _p([2, 0], name="a"), _p([0, 3], name="b")
    return o.einsum([a, b], "ab,bc->ac"), [a, b], {"a": _zeros((2, 0)), "b": _zeros((0, 3))}, cpu_outputs


def _roll():
    d = _p([0, 3])
    return o.roll(d, _c([1]), _c([0])), [d], {"data": _zeros((0, 3))}, cpu_outputs


CASES = {
    "gather-elements-empty": _gather_elements, "gather-nd-no-tuples": _gather_nd_no_tuples,
    "gather-nd-empty-slices": _gather_nd_empty_slices, "scatter-update-empty": _scatter_update,
    "scatter-elements-sum-empty": _scatter_elements_sum, "scatter-nd-empty": _scatter_nd,
    "scatter-nd-scalar-update": _scatter_nd_scalar_update, "pad-constant-empty": _pad("constant"),
    "pad-symmetric-empty": _pad("symmetric"), "topk-empty-rows": _topk, "one-hot-empty": _one_hot([0, 2], 3),
    "one-hot-depth-0": _one_hot([2], 0), "one-hot-scalar": _one_hot([], 3), "non-zero-empty": _non_zero([0, 3], 1),
    "non-zero-scalar": _non_zero([], 2), "non-zero-scalar-zero": _non_zero([], 0), "einsum-empty-sum": _einsum,
    "roll-empty": _roll,
}


@pytest.mark.parametrize("name", list(CASES))
def test_empty_and_scalar(name, tmp_path):
    node, params, feeds, oracle = CASES[name]()
    check_run(write_ir(node, params, tmp_path), feeds, oracle=oracle)


def test_gather_nd_with_empty_tuples_takes_whole_batch_elements(tmp_path):
    """Index tuples of length 0 pick the whole (batch) element each: the reference kernel's reading (the CPU plugin
    returns uninitialised memory there)."""
    d, i = _p([3, 2]), _p([2, 0], I32, "i")
    path = write_ir(o.gather_nd(d, i), [d, i], tmp_path)
    data = np.arange(6, dtype=np.float32).reshape(3, 2)
    got = next(iter(ir_runner.load(str(path)).run({"data": data, "i": _zeros((2, 0), np.int32)}).values()))
    assert np.array_equal(got, np.stack([data, data]))
