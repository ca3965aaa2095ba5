"""The expand module (ir_runner/ops/shape_movement/expand.py): Broadcast-1/3 (numpy, bidirectional, explicit, pdpd)
and Tile. Shapes as OpenVINO infers them (``check_shapes``, bounds included), runs bit for bit against its
reference, and the refusals of a target shape input (huge, negative, INT64_MAX) that Reshape shares.
"""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset3, opset13  # noqa: E402

import ir_runner  # noqa: E402
from tests.helpers.optest import check_run, write_ir  # noqa: E402
from tests.helpers.shape_cases import P, const, run_cases  # noqa: E402
from tests.helpers.shapes import check_shapes  # noqa: E402

# -- Broadcast / Tile ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,target,mode,axes", [
    (P(3, 1), [2, 3, 4], "numpy", None), (P(1), [5], "numpy", None), (P(), [2, 2], "numpy", None),
    (P(3, 1), [1, 4], "bidirectional", None), (P(3, 1), [2, 1, 1], "bidirectional", None),
    (P(-1, 1), [1, 4], "bidirectional", None), (P(3), [2, 3, 4], "explicit", [1]),
    (P(3, 4), [3, 2, 4], "explicit", [0, 2]), (P(-1), [5], "numpy", None),
])
def test_broadcast_shapes(shape, target, mode, axes, tmp_path):
    x = opset13.parameter(shape, ov.Type.f32, name="x")
    b = (opset3.broadcast(x, const(target), const(axes), "explicit") if axes is not None
         else opset3.broadcast(x, const(target), broadcast_spec=mode))
    path = write_ir(b, [x], tmp_path)
    check_shapes(path)
    shp = [d.get_length() if d.is_static else (target[i] if mode != "bidirectional" else 3)
           for i, d in enumerate(shape)]
    check_run(path, {"x": np.random.default_rng(5).standard_normal(shp).astype(np.float32)})


def test_broadcast1_modes(tmp_path):
    x = opset1.parameter([3, 1], ov.Type.i32, name="x")
    outs = [opset1.broadcast(x, const([2, 3, 4])), opset1.broadcast(x, const([3, 5, 1]), const([0, 2]), "explicit")]
    path = write_ir(outs, [x], tmp_path)
    check_shapes(path)
    check_run(path, {"x": np.arange(3, dtype=np.int32).reshape(3, 1)})


@pytest.mark.parametrize("shape,repeats", [
    (P(2, 3), [2, 1]), (P(2, 3), [3]), (P(2, 3), [2, 1, 2]), (P(-1, 3), [2, 2]), (P((1, 4), 3), [3, 1]),
    (P(2, 3), [0, 1]), (P(), [3]),
])
def test_tile_shapes(shape, repeats, tmp_path):
    x = opset13.parameter(shape, ov.Type.f32, name="x")
    t = opset13.tile(x, const(repeats))
    run_cases(write_ir(t, [x], tmp_path), [x], np.random.default_rng(6))


# -- found by scripts/fuzz_ops.py ---------------------------------------------------------------------------

@pytest.mark.parametrize(("shape", "target"), [([3, 1], [3, 4]), ([3, 1], [1, 4]), ([3, 4], [1, 1]), ([1], [5]),
                                               ([2, 3], [2, 3]), ([], [])])
@pytest.mark.parametrize("version", [1, 3])
def test_broadcast_pdpd_merges_dims_of_equal_ranks(shape, target, version, tmp_path):
    """pdpd (its axis is not written in the IR: 0) as the reference: a 1 on either side gives the other."""
    from openvino.utils.node_factory import NodeFactory

    data = opset1.parameter(shape, ov.Type.f32, name="x")
    args = [data, ov.op.Constant(np.array(target, np.int64))]
    if version == 1:
        args.append(ov.op.Constant(np.arange(len(shape), dtype=np.int64)))
    node = NodeFactory(f"opset{version}").create("Broadcast", args, {"mode": "pdpd"})
    path = write_ir(node, [data], tmp_path)
    check_shapes(path)
    check_run(path, {"x": np.arange(np.prod(shape), dtype=np.float32).reshape(shape)})


def test_broadcast_pdpd_dynamic_dims(tmp_path):
    from openvino.utils.node_factory import NodeFactory

    outs, params = [], []
    for shape, target in (([-1, 1], [2, 4]), ([-1, 1], [1, 4]), ([-1, 3], [2, -1])):
        data = opset1.parameter(shape, ov.Type.f32)
        params.append(data)
        outs.append(NodeFactory("opset3").create("Broadcast", [data, ov.op.Constant(np.array(target, np.int64))],
                                                 {"mode": "pdpd"}))
    check_shapes(write_ir(outs, params, tmp_path))


@pytest.mark.parametrize("target", [[], [3], [2, 1]])
def test_broadcast_pdpd_of_data_of_unknown_rank_has_the_target_rank(target, tmp_path):
    """Found by the fuzzer: OpenVINO infers the target's rank with every dim ?, ([] for an empty target)."""
    from openvino.utils.node_factory import NodeFactory

    data = opset1.parameter(ov.PartialShape.dynamic(), ov.Type.i32, name="x")
    node = NodeFactory("opset3").create("Broadcast", [data, ov.op.Constant(np.array(target, np.int64))],
                                        {"mode": "pdpd"})
    path = write_ir(node, [data], tmp_path)
    check_shapes(path)
    feed = np.arange(int(np.prod(target)), dtype=np.int32).reshape(target) if target else np.array(-4, np.int32)
    check_run(path, {"x": feed})


def _target_model(op: str, version: str, attrs: dict | None, target_length: int | None = None,
                  target: list[int] | None = None, data: str = "2,3"):
    """x (f32 ``data``) -> ``op`` with a target shape input: a Parameter of ``target_length`` elements, or a
    Const holding ``target``."""
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder()
    x = b.parameter("x", "f32", data)
    if target is None:
        t = b.parameter("t", "i64", str(target_length))
    else:
        t = b.const("t", np.array(target, np.int64))
    rank = target_length if target is None and target_length <= 64 else 1 if target is None else len(target)
    b.result(b.layer(op, version, [x, t], attrs=attrs, out_specs=[("FP32", [-1] * rank)]))
    return b.build()


@pytest.mark.parametrize("length", [2**62, 2**40])
@pytest.mark.parametrize("op,version,attrs", [("Broadcast", "opset3", {"mode": "numpy"}),
                                              ("Broadcast", "opset3", {"mode": "bidirectional"}),
                                              ("Broadcast", "opset1", {"mode": "numpy"}),
                                              ("Reshape", "opset1", {"special_zero": "false"}),
                                              ("Tile", "opset1", None)])
def test_a_target_of_huge_unknown_length_is_an_error_naming_the_layer(op, version, attrs, length):
    """An output rank taken from a target's length was made as a tuple of that many dims: OverflowError
    (2**62) or MemoryError (2**40) escaped at load and validate."""
    xml, weights = _target_model(op, version, attrs, target_length=length)
    with pytest.raises(ir_runner.UnsupportedError, match=f"rank would be {length}.*numpy's limit") as caught:
        ir_runner.load(xml, weights)
    assert f"{op}-{version[5:]}" in str(caught.value)
    assert not ir_runner.validate(xml, weights).ok


@pytest.mark.parametrize("mode", ["numpy", "bidirectional"])
def test_a_negative_broadcast_target_is_refused_when_its_value_is_known(mode):
    """A target dim of -2 fed at run time left the output shape unknown and the kernel failed ("'<' not
    supported between NoneType and int", a KernelError); a Const target is refused at load."""
    xml, weights = _target_model("Broadcast", "opset3", {"mode": mode}, target_length=2, data="1")
    model = ir_runner.load(xml, weights)
    with pytest.raises(ir_runner.InputError, match="element 1 of target_shape is -2: a dim cannot be negative"):
        model.run({"x": np.ones(1, np.float32), "t": np.array([3, -2])})
    (out,) = model.run({"x": np.ones(1, np.float32), "t": np.array([3, 2])}).values()
    assert out.shape == (3, 2)
    xml, weights = _target_model("Broadcast", "opset3", {"mode": mode}, target=[3, -2], data="1")
    with pytest.raises(ir_runner.InferenceError, match="-2: a dim cannot be negative"):
        ir_runner.load(xml, weights)


@pytest.mark.parametrize("op,version,attrs", [("Broadcast", "opset3", {"mode": "numpy"}),
                                              ("Reshape", "opset1", {"special_zero": "false"})])
def test_a_target_of_the_largest_int64_is_that_dim_not_an_unknown_one(op, version, attrs):
    """Exactly INT64_MAX was read as 'unbounded' (the bounds' convention), so a target of [2**63-1]*4 fed at
    run time left the shape unknown and the kernel failed (KernelError); it is a dim, refused as too large."""
    xml, weights = _target_model(op, version, attrs, target_length=4, data="?,?")
    model = ir_runner.load(xml, weights)
    with pytest.raises(ir_runner.IRError) as caught:
        model.run({"x": np.ones((2, 3), np.float32), "t": np.array([2**63 - 1] * 4)})
    assert not isinstance(caught.value, ir_runner.KernelError) and "9223372036854775807" in str(caught.value)
    xml, weights = _target_model(op, version, attrs, target=[2**63 - 1] * 4, data="1" if op == "Broadcast" else "2,3")
    with pytest.raises(ir_runner.IRError, match="9223372036854775807"):
        ir_runner.load(xml, weights)
