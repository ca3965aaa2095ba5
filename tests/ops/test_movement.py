"""Pad-1/12, Reverse-1, Roll-7, OneHot-1: shapes as OpenVINO infers them, values against its reference
(Pad, Reverse, OneHot: Node.evaluate; Roll has none: the CPU plugin), mode limits, seeded differential runs."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset13  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import IRError  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, cpu_outputs, write_ir  # noqa: E402
from tests.helpers.ov_random import parameter  # noqa: E402


def _param(shape, et=ov.Type.f32, name="data"):
    return opset13.parameter(ov.PartialShape(shape), et, name=name)


def _const(values, dtype=np.int64):
    return opset13.constant(np.array(values, dtype=dtype))


# -- Pad -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [opset1.pad, opset13.pad])
@pytest.mark.parametrize("shape, begin, end", [
    ([3, 4], [1, 2], [2, 3]), ([3, -1], [0, 1], [1, 0]), ([2, 3, 4], [0, 0, 0], [0, 0, 0]), ([5], [-2], [1]),
    ([-1, 4], [1, -1], [0, -2]), ([4, (2, 6)], [0, -3], [0, 1]), ([4, (2, 6)], [0, 3], [0, 1]), ([-1], [-1], [0]),
])
def test_pad_shapes(make, shape, begin, end, tmp_path):
    d = _param(shape)
    node = make(d, _const(begin), _const(end), "constant")
    check_output_shapes(write_ir(node, [d], tmp_path), node)


def test_pad_with_computed_pads_has_dynamic_dims_then_runs(tmp_path):
    d, b = _param([2, 3]), _param([2], ov.Type.i64, "begin")
    path = write_ir(opset13.pad(d, b, _const([1, 1]), "constant", opset13.constant(np.float32(7))), [d, b], tmp_path)
    check_inference(path)
    feeds = {"data": np.arange(6, dtype=np.float32).reshape(2, 3), "begin": np.array([2, -1])}
    assert check_run(path, feeds)[next(iter(ir_runner.load(str(path)).run(feeds)))].shape == (5, 3)


PAD_CASES = [([1, 2], [2, 3]), ([0, -1], [-1, 2]), ([0, 3], [0, 3]), ([0, -2], [0, 3]), ([0, 4], [0, -3]),
             ([2, 0], [-1, 0])]


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric"])
@pytest.mark.parametrize("begin, end", PAD_CASES)
@pytest.mark.parametrize("version", [1, 12])
def test_pad_modes_against_reference(mode, begin, end, version, tmp_path):
    d = _param([3, 4])
    make = opset1.pad if version == 1 else opset13.pad
    if mode == "reflect" and max(begin + end) > 3:
        return  # beyond the reference's limit: tested below
    node = make(d, _const(begin), _const(end), mode, opset13.constant(np.float32(-1.5)))
    path = write_ir(node, [d], tmp_path)
    check_inference(path)
    check_run(path, {"data": np.arange(12, dtype=np.float32).reshape(3, 4)})


@pytest.mark.parametrize("mode", ["reflect", "symmetric", "edge", "constant"])
def test_pad_kernel_matches_numpy_pad(mode):
    """The slice-copy Pad kernel (prepared per plan) against np.pad then a crop, over random ranks, shapes and
    pads up to each mode's limit, negative ones included."""
    from ir_runner.ops.shape_movement.movement import PadKernel
    rng = np.random.default_rng(len(mode))
    limit = {"reflect": lambda n: n - 1, "symmetric": lambda n: n}.get(mode, lambda n: 3)
    for _ in range(150):
        shape = tuple(int(v) for v in rng.integers(1, 5, size=int(rng.integers(1, 4))))
        begin = tuple(int(rng.integers(-n, limit(n) + 1)) for n in shape)
        end = tuple(int(rng.integers(-n, limit(n) + 1)) for n in shape)
        if any(n + b + e < 0 for n, b, e in zip(shape, begin, end)):
            continue
        data = rng.standard_normal(shape).astype(np.float32)
        want = np.pad(data, [(max(b, 0), max(e, 0)) for b, e in zip(begin, end)], mode=mode)
        want = want[tuple(slice(max(-b, 0), want.shape[i] - max(-e, 0)) for i, (b, e) in enumerate(zip(begin, end)))]
        got = PadKernel(shape, begin, end, mode)(data)
        assert got.shape == want.shape and np.array_equal(got, want), (shape, begin, end)
        assert not np.shares_memory(got, data)


def test_pad_without_pad_value_pads_zeros(tmp_path):
    d = _param([2, 2], ov.Type.i32)
    path = write_ir(opset13.pad(d, _const([1, 0]), _const([0, 1]), "constant"), [d], tmp_path)
    assert check_run(path, {"data": np.ones((2, 2), np.int32)})
    assert "pad_value" not in path.read_text() or path.read_text().count("<edge ") == 3


@pytest.mark.parametrize("mode, pad", [("reflect", 4), ("symmetric", 5)])
def test_pad_beyond_the_mode_limit_is_refused(mode, pad, tmp_path):
    d = _param([3, 4])
    path = write_ir(opset13.pad(d, _const([0, 0]), _const([0, 1]), mode), [d], tmp_path)
    path.write_text(path.read_text())
    text = path.read_text()
    # change the Const pads_end to the limit: rewrite the .bin value in place
    raw = bytearray(path.with_suffix(".bin").read_bytes())
    ends = np.frombuffer(bytes(raw[16:32]), np.int64)
    assert ends.tolist() == [0, 1], text
    raw[16:32] = np.array([0, pad], np.int64).tobytes()
    path.with_suffix(".bin").write_bytes(bytes(raw))
    with pytest.raises(IRError, match=f"pad_mode={mode}"):
        ir_runner.load(str(path))


# -- Reverse (no Python builder: an IR written by hand, then re-written by OpenVINO) ------------------

_REVERSE_XML = """<?xml version="1.0"?>
<net name="reverse" version="11"><layers>
<layer id="0" name="data" type="Parameter" version="opset1"><data shape="{shape}" element_type="{et}"/>
<output><port id="0" precision="{precision}" names="data">{dims}</port></output></layer>
<layer id="1" name="axes" type="Parameter" version="opset1"><data shape="{n}" element_type="{axes_et}"/>
<output><port id="0" precision="{axes_precision}" names="axes"><dim>{n}</dim></port></output></layer>
<layer id="2" name="rev" type="Reverse" version="opset1"><data mode="{mode}"/>
<input><port id="0" precision="{precision}">{dims}</port><port id="1" precision="{axes_precision}"><dim>{n}</dim></port>
</input><output><port id="2" precision="{precision}">{dims}</port></output></layer>
<layer id="3" name="out" type="Result" version="opset1">
<input><port id="0" precision="{precision}">{dims}</port></input></layer></layers>
<edges><edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>
<edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>
<edge from-layer="2" from-port="2" to-layer="3" to-port="0"/>
</edges></net>"""


def _reverse_ir(tmp_path, shape, n, mode):
    dims = "".join(f"<dim>{d}</dim>" for d in shape)
    axes_et, axes_precision = ("boolean", "BOOL") if mode == "mask" else ("i64", "I64")
    text = _REVERSE_XML.format(shape=",".join(map(str, shape)), et="f32", precision="FP32", dims=dims, n=n,
                               axes_et=axes_et, axes_precision=axes_precision, mode=mode)
    source = tmp_path / "hand.xml"
    source.write_text(text)
    model = ov.Core().read_model(str(source))
    path = tmp_path / "model.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


@pytest.mark.parametrize("axes", [[0], [1, 2], [-1], [2, 0, 2], []])
def test_reverse_index_mode(axes, tmp_path):
    path = _reverse_ir(tmp_path, [2, 3, 4], len(axes), "index")
    check_inference(path)
    check_run(path, {"data": np.arange(24, dtype=np.float32).reshape(2, 3, 4), "axes": np.array(axes, np.int64)})


@pytest.mark.parametrize("mask", [[True, False, True], [False, False, False], [True, True, True]])
def test_reverse_mask_mode(mask, tmp_path):
    path = _reverse_ir(tmp_path, [2, 3, 4], 3, "mask")
    check_inference(path)
    check_run(path, {"data": np.arange(24, dtype=np.float32).reshape(2, 3, 4), "axes": np.array(mask)})


# -- Roll ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shift, axes", [([1], [0]), ([-5, 2], [1, -1]), (7, [0, 1]), ([3, 4], [1, 1]), ([0], [2])])
def test_roll_against_cpu(shift, axes, tmp_path):
    d = _param([3, 4, 2], ov.Type.i32)
    node = opset13.roll(d, _const(shift), _const(axes, np.int32))
    path = write_ir(node, [d], tmp_path)
    check_inference(path)
    data = np.arange(24, dtype=np.int32).reshape(3, 4, 2)
    if np.ndim(shift) == 0:  # the CPU plugin refuses a scalar shift with several axes
        got = ir_runner.load(str(path)).run({"data": data})
    else:
        got = check_run(path, {"data": data}, oracle=cpu_outputs)
    total = {}
    for s, a in zip(np.broadcast_to(shift, len(axes)), axes):
        total[a % 3] = total.get(a % 3, 0) + int(s)
    assert np.array_equal(next(iter(got.values())), np.roll(data, tuple(total.values()), tuple(total)))


# -- OneHot --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, axis", [([3], -1), ([2, 3], 0), ([2, 3], 1), ([-1, 3], -1), ([], 0)])
def test_one_hot_shapes(shape, axis, tmp_path):
    i = _param(shape, ov.Type.i64, "indices")
    node = opset13.one_hot(i, _const(4), opset13.constant(np.float32(1)), opset13.constant(np.float32(0)), axis)
    check_inference(write_ir(node, [i], tmp_path))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.int32, np.uint8, np.int64, np.bool_])
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot_values_with_negative_and_large_indices(dtype, axis, tmp_path):
    i = _param([2, 4], ov.Type.i32, "indices")
    on, off = (np.array(True), np.array(False)) if dtype == np.bool_ else (np.array(5, dtype), np.array(-1 if np.dtype(
        dtype).kind != "u" else 2, dtype))
    node = opset13.one_hot(i, _const(3), opset13.constant(on), opset13.constant(off), axis)
    path = write_ir(node, [i], tmp_path)
    check_inference(path)
    check_run(path, {"indices": np.array([[0, 2, 3, -1], [-3, 1, 7, -4]], np.int32)})


# -- differential --------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(25))
def test_pad_differential(seed, tmp_path):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 4))
    shape = tuple(int(n) for n in rng.integers(1, 5, size=rank))
    mode = ["constant", "edge", "reflect", "symmetric"][int(rng.integers(4))]
    limit = {"reflect": -1, "symmetric": 0}.get(mode, 2)
    begin = [int(rng.integers(-n + 1, n + limit + 1)) if mode != "constant" else int(rng.integers(-n, 4))
             for n in shape]
    end = [int(rng.integers(-(n + b) + 1 if b < 0 else -n + 1, n + limit + 1)) for n, b in zip(shape, begin)]
    end = [max(e, -(n + b)) for n, b, e in zip(shape, begin, end)]
    dtype = [np.float32, np.int8, np.float16, np.int64, np.bool_][int(rng.integers(5))]
    et = ov.Type.boolean if dtype == np.bool_ else ov.Type(np.dtype(dtype))
    d = _param(shape, et)
    value = opset13.constant(np.array(True if dtype == np.bool_ else 3, dtype))
    path = write_ir(opset13.pad(d, _const(begin), _const(end), mode, value), [d], tmp_path)
    check_inference(path)
    data = rng.random(shape) < 0.5 if dtype == np.bool_ else (rng.standard_normal(shape) * 9).astype(dtype)
    check_run(path, {"data": data})


@pytest.mark.parametrize("op", ["pad", "reverse_roll", "one_hot"])
def test_bf16_moves_bits(op, tmp_path):
    import ml_dtypes

    rng = np.random.default_rng(3)
    d = _param([4, 5], ov.Type.bf16)
    if op == "pad":
        node, params = opset13.pad(d, _const([1, -1]), _const([0, 2]), "reflect"), [d]
    elif op == "reverse_roll":
        node, params = opset13.roll(d, _const([2]), _const([1])), [d]
    else:
        on, off = _param([], ov.Type.bf16, "on"), _param([], ov.Type.bf16, "off")
        i = _param([3], ov.Type.i32, "indices")
        node, params = opset13.one_hot(i, _const(4), on, off, 0), [i, on, off]
    path = write_ir(node, params, tmp_path)
    check_inference(path)
    data = rng.standard_normal((4, 5)).astype(ml_dtypes.bfloat16)
    feeds = {"data": data}
    if op == "one_hot":
        feeds = {"indices": np.array([0, 3, -1], np.int32), "on": np.array(2.5, ml_dtypes.bfloat16),
                 "off": np.array(-0.0, ml_dtypes.bfloat16)}
    check_run(path, feeds, oracle=cpu_outputs if op == "reverse_roll" else None)


def test_batch_rules():
    from ir_runner.ops.registry import lookup

    pad, roll, one_hot = lookup("Pad", "opset12"), lookup("Roll", "opset7"), lookup("OneHot", "opset1")
    assert pad.batch({"begin": (0, 1), "end": (0, 2)}, [], [], [0, None, None]) == [0]
    assert isinstance(pad.batch({"begin": (1, 1), "end": (0, 2)}, [], [], [0, None, None]), str)
    assert roll.batch({"axes": (1, 2)}, [], [], [0, None, None]) == [0]
    assert isinstance(roll.batch({"axes": (0,)}, [], [], [0, None, None]), str)
    assert one_hot.batch({"axis": 0, "depth": 3}, [], [], [0, None, None, None]) == [1]
    assert one_hot.batch({"axis": 2, "depth": 3}, [], [], [0, None, None, None]) == [0]


def test_one_hot_with_a_computed_depth_is_dynamic_at_load(tmp_path):
    i, depth = _param([2], ov.Type.i32, "indices"), _param([], ov.Type.i64, "depth")
    node = opset13.one_hot(i, depth, opset13.constant(np.float32(1)), opset13.constant(np.float32(0)), -1)
    path = write_ir(node, [i, depth], tmp_path)
    check_output_shapes(path, node)
    for value in (1, 4):
        got = check_run(path, {"indices": np.array([0, 2], np.int32), "depth": np.array(value, np.int64)})
        assert next(iter(got.values())).shape == (2, value)


# -- found by scripts/fuzz_ops.py ---------------------------------------------------------------------------

def test_pad_cropping_past_empty_declares_a_dynamic_dim(tmp_path):
    """OpenVINO declares ``?`` for an axis cropped below 0 elements (2 - 2 - 2); ir-run infers the same and
    refuses at run, as the reference does."""
    data = opset1.parameter([2, 2], ov.Type.f32, name="x")
    node = opset13.pad(data, np.array([-2, 0], np.int64), np.array([-2, 0], np.int64), "constant")
    path = write_ir(node, [data], tmp_path)
    check_inference(path)
    with pytest.raises(IRError, match="would have -2 elements"):
        ir_runner.load(str(path)).run({"x": np.zeros((2, 2), np.float32)})


def test_pad_of_dynamic_rank_keeps_the_rank_dynamic(tmp_path):
    """Even when the pads' length tells the rank, as OpenVINO infers it."""
    data = opset1.parameter(ov.PartialShape.dynamic(), ov.Type.i8, name="x")
    node = opset13.pad(data, np.array([1], np.int64), np.array([2], np.int64), "constant")
    path = write_ir(node, [data], tmp_path)
    check_inference(path)
    check_output_shapes(path, node)
    check_run(path, {"x": np.arange(4, dtype=np.int8)})


# -- empty and scalar tensors --------------------------------------------------------------------------------

def _pad_empty(mode):
    def build():
        d = parameter("data", "f32", [0, 3])
        pads = opset13.constant(np.array([0, 1], np.int64))
        return opset13.pad(d, pads, pads, mode), [d], {"data": np.zeros((0, 3), np.float32)}, None
    return build


def _roll_empty():
    d = parameter("data", "f32", [0, 3])
    node = opset13.roll(d, opset13.constant(np.array([1], np.int64)), opset13.constant(np.array([0], np.int64)))
    return node, [d], {"data": np.zeros((0, 3), np.float32)}, cpu_outputs


EMPTY_CASES = {"pad-constant-empty": _pad_empty("constant"), "pad-symmetric-empty": _pad_empty("symmetric"),
               "roll-empty": _roll_empty}


@pytest.mark.parametrize("name", list(EMPTY_CASES))
def test_empty_and_scalar(name, tmp_path):
    node, params, feeds, oracle = EMPTY_CASES[name]()
    check_run(write_ir(node, params, tmp_path), feeds, oracle=oracle)
