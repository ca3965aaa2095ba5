"""Review round 4: corners of the Select, Gather and Convert kernels, each run through ``ir_runner.load(...).run``
and compared bit for bit with OpenVINO's reference (``Node.evaluate``, through ``tests/test_vs_openvino.py``'s
helpers), with the kernels' size thresholds lowered so that their chunked, blocked and threaded paths run on
small tensors."""

from __future__ import annotations

import random

import numpy as np
import openvino as ov
import pytest
from openvino import opset1, opset7, opset8

import ir_runner
from ir_runner import parallel
from ir_runner.ops import api, gather, select
from tests import test_vs_openvino as tv
from tests.helpers.bits import assert_same_bits
from tests.irbuild import IRBuilder

THRESHOLDS = {  # (module, name): (tiny, small); "_WORKERS": 3 threads even on a machine with fewer cores
    (parallel, "PARALLEL_MIN_ELEMENTS"): (2, 2000),
    (parallel, "_WORKERS"): (3, 3),
    (gather, "PARALLEL_MIN_ELEMENTS"): (2, 2000),
    (gather, "RANDOM_READ_PARALLEL_MIN_ELEMENTS"): (2, 200),
    (gather, "_INDEX_CHUNK"): (3, 70),
    (select, "BITSELECT_MIN_ELEMENTS"): (1, 1000),
    (select, "ROW_MIN_BYTES"): (1, 32),
    (select, "_CHUNK"): (5, 700),
    (api, "_QUIET_CHUNK"): (2, 900),
}


@pytest.fixture
def tiny_thresholds(monkeypatch):
    """Every chunked, blocked and threaded kernel path taken on tensors of a few elements."""
    for (module, name), (tiny, _) in THRESHOLDS.items():
        monkeypatch.setattr(module, name, tiny)


@pytest.fixture
def small_thresholds(monkeypatch):
    """The same paths on tensors of thousands of elements, in blocks of hundreds."""
    for (module, name), (_, small) in THRESHOLDS.items():
        monkeypatch.setattr(module, name, small)


# ----------------------------------------------------------------------------- Gather strict mode


def gather_ir(data_shape: str, indices, axis: int, version: str = "opset8") -> tuple[bytes, bytes]:
    """f32 data Parameter ``d``; indices a Parameter ``i`` (i64, shape given as text) or a Const (a list)."""
    b = IRBuilder("gather")
    data = b.parameter("d", "f32", data_shape)
    if isinstance(indices, str):
        idx = b.parameter("i", "i64", indices)
        idx_shape = [int(x) for x in indices.split(",") if x]
    else:
        idx = b.const("i", np.array(indices, np.int64))
        idx_shape = list(np.shape(indices))
    dims = [int(x) for x in data_shape.split(",")]
    out = dims[:axis] + idx_shape + dims[axis + 1:]
    node = b.layer("Gather", version, [data, idx, b.const("a", np.array(axis, np.int64))], out_specs=[("f32", out)],
                   name="g")
    b.result(node, "out")
    return b.build()


@pytest.mark.parametrize("data_shape", ["0,3", "3,0", "2,0,3"])
@pytest.mark.parametrize("constant", [False, True], ids=["fed", "const"])
def test_strict_checks_indices_even_when_nothing_is_read(data_shape, constant):
    """An axis of size 0, or an empty output, reads no element; strict mode must still refuse index 5 (and, for
    an axis of size 0, every index), whether the indices are fed or constant (they were only checked when
    constant: the fed ones gave zeros or an empty output)."""
    dims = tuple(int(x) for x in data_shape.split(","))
    feeds = {"d": np.zeros(dims, np.float32)}
    if not constant:
        feeds["i"] = np.array([0, 5])
    built = gather_ir(data_shape, [0, 5] if constant else "2", 0)
    with pytest.raises(ir_runner.IndexOutOfRangeError, match=r"'g'.*index (0|5) at position \[[01]\]"):
        ir_runner.load(*built, strict=True).run(feeds)
    loose = ir_runner.load(*built).run(feeds)["out"]  # without strict: zeros (or nothing) as the reference
    assert loose.shape == (2,) + dims[1:] and not loose.any()


# ----------------------------------------------------------------------------- Select blocking with leading 1s


def record_units(monkeypatch) -> list[tuple[int, int]]:
    """Spy on the Select kernels' ``run_chunked`` (each call's units and elements per unit), with the
    bit-select kernels chosen from the smallest outputs on."""
    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(select, "BITSELECT_MIN_ELEMENTS", 1)

    def spy(total, per_unit, work, **kwargs):
        calls.append((total, per_unit))
        parallel.run_chunked(total, per_unit, work, **kwargs)

    monkeypatch.setattr(select, "run_chunked", spy)
    return calls


@pytest.mark.parametrize("cond_shape, then_shape, else_shape", [
    ((1, 48, 40), (1, 48, 40), ()),  # a batch of 1: blocks along the rows, not one block for everything
    ((1, 1, 48, 40), (48, 40), (40,)),
    ((2, 48, 40), (2, 48, 40), (1,)),  # two huge rows
    ((3, 5000), (3, 5000), (1, 1)),  # rows longer than a block: split along them
])
def test_broadcast_bit_select_works_in_cache_sized_blocks(monkeypatch, cond_shape, then_shape, else_shape):
    """The broadcast bit-select handled an output with a small first axis (a batch of 1, common in IRs) as one
    block of the whole output: full-size temporaries and no threading, 3-4x slower than the same output without
    the leading 1. Every block must now be at most 4 * _CHUNK elements, and the result np.where's bits."""
    monkeypatch.setattr(select, "_CHUNK", 64)
    monkeypatch.setattr(parallel, "_WORKERS", 3)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_ELEMENTS", 1000)
    calls = record_units(monkeypatch)
    rng = np.random.default_rng(3)
    cond = rng.integers(0, 3, cond_shape).astype(np.uint8).view(np.bool_)
    then, else_ = rng.standard_normal(then_shape).astype(np.float32), rng.standard_normal(else_shape).astype(np.float32)
    out_shape = np.broadcast_shapes(cond_shape, then_shape, else_shape)
    kernel = select.choose_kernel(cond_shape, then_shape, else_shape, np.dtype(np.float32))
    assert kernel.func is select.bit_select_broadcast
    assert_same_bits(kernel(cond, then, else_), np.where(cond, then, else_))
    buffer = np.empty(out_shape, np.float32)
    assert kernel(cond, then, else_, out=buffer) is buffer
    assert_same_bits(buffer, np.where(cond, then, else_))
    (units, per_unit), _ = calls
    assert per_unit <= 256 and units * per_unit >= np.prod(out_shape) and units > 1


# ----------------------------------------------------------------------------- random models, every path


def strided(array: np.ndarray) -> np.ndarray:
    """The same values in a non-contiguous view with a negative stride (a feed the kernels must not assume
    contiguous)."""
    spread = np.zeros(array.shape + (2,), array.dtype)
    spread[..., 1] = array
    view = spread[..., 1]
    return np.flip(np.flip(view, 0).copy(), 0) if view.ndim else view


def check_every_way(model: ov.Model, feeds: dict[str, np.ndarray], tmp_path, *, strict: bool = False) -> None:
    """The model's outputs, run on strided feeds, with and without out= buffers (pre-filled with 0xAB bytes),
    twice, equal the reference bits (where ir-run documents a deviation, tv.reference_outputs says so)."""
    path = tmp_path / "model.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    expected = tv.reference_outputs(ov.Core().read_model(str(path)), feeds)
    ours = ir_runner.load(path, strict=strict)
    odd_feeds = {name: strided(value) for name, value in feeds.items()}
    for attempt in range(3):
        buffers = [np.frombuffer(b"\xab" * (int(np.prod(o.shape)) * o.dtype.itemsize), o.dtype).reshape(o.shape).copy()
                   for o in ours.outputs]
        got = ours.run(odd_feeds, out=buffers) if attempt else ours.run(odd_feeds)
        for out, (want, nan_only) in zip(got.values(), expected):
            if nan_only is not None:
                out, want = out[~nan_only], want[~nan_only]
            assert_same_bits(out, want)


@pytest.mark.usefixtures("tiny_thresholds")
@pytest.mark.parametrize("seed", range(60))
@pytest.mark.parametrize("kind", ["select", "gather", "convert"])
def test_random_models_on_every_kernel_path(kind, seed, tmp_path):
    """test_vs_openvino's random models (every broadcast mode, batch_dims, index and element type) with the
    thresholds lowered: blocked bit-selects, row copies, chunked and threaded takes, chunked f16 quietening."""
    rng = random.Random(f"round4-{kind}-{seed}")
    inputs = tv.Inputs(rng)
    make = {"select": tv.random_select, "gather": tv.random_gather, "convert": tv.random_convert}[kind]
    check_every_way(tv.single(make(rng, inputs), inputs, kind), inputs.feeds, tmp_path)


@pytest.mark.usefixtures("tiny_thresholds")
@pytest.mark.parametrize("seed", range(80))
def test_strict_gather_refuses_exactly_the_indices_outside_the_spec(seed, tmp_path):
    """Random Gather models in strict mode: an IndexOutOfRangeError exactly when an index value is outside
    ``[0, dim-1]`` (Gather-1/7) or ``[-dim, dim-1]`` (Gather-8), else the reference result."""
    rng = random.Random(f"round4-strict-{seed}")
    inputs = tv.Inputs(rng)
    node = tv.random_gather(rng, inputs)
    source = node.input_value(1).get_node()
    if source.get_type_name() == "Parameter":
        indices = inputs.feeds[source.get_friendly_name()]
    else:  # i4/u4 unpacked
        indices = tv.from_tensor(source.get_output_element_type(0).get_type_name(), source.get_tensor_view())
    dim = node.get_input_shape(0)[int(node.input_value(2).get_node().get_data().reshape(-1)[0])]
    low = -dim if node.get_type_info().version_id == "opset8" else 0
    outside = any(not low <= int(v) < dim for v in np.asarray(indices).reshape(-1).astype(object))
    model = tv.single(node, inputs, "gather")
    if outside:
        path = tmp_path / "model.xml"
        ov.save_model(model, str(path), compress_to_fp16=False)
        with pytest.raises(ir_runner.IndexOutOfRangeError, match="strict mode"):
            ir_runner.load(path, strict=True).run({k: strided(v) for k, v in inputs.feeds.items()})
    else:
        check_every_way(model, inputs.feeds, tmp_path, strict=True)


# ----------------------------------------------------------------------------- Convert float -> integer limits


def limits(wide: type) -> np.ndarray:
    """Values at and around the 32- and 64-bit truncation limits, NaNs and infinities, in ``wide``."""
    values = [0.0, -0.0, 0.5, -0.99, 2.5, -2.5, 255.5, -129.0, 65535.9, np.nan, -np.nan, np.inf, -np.inf]
    for edge in (2.0**31, 2.0**32, 2.0**63, 2.0**64):
        for sign in (1, -1):
            base = wide(sign * edge)
            values += [base, np.nextafter(base, wide(0)), np.nextafter(base, wide(sign * np.inf))]
    values += [-2147483648.5, -2147483649.0, 2147483647.99, 4294967295.5] if wide is np.float64 else []
    return np.array(values, wide)


@pytest.mark.parametrize("src", ["f32", "f64", "f16", "bf16"])
@pytest.mark.parametrize("dst", ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "u1", "u4", "i4"])
def test_float_to_integer_at_the_truncation_limits(src, dst, tmp_path):
    """Float -> integer truncates, and a value whose truncation is outside the signed 32-bit (i32 and narrower)
    or 64-bit (i64, u64, u32) range, NaN and ±inf give the reference's 'integer indefinite' (then wrapped), as
    OpenVINO's reference computes, around every limit. f32 -> u32 follows the reference's scalar rule (the
    documented deviation: tv.reference_outputs evaluates it one element at a time)."""
    values = limits(np.float64 if src == "f64" else np.float32)
    with np.errstate(over="ignore"):  # f16 and bf16 overflow to inf
        values = np.concatenate([values, -values]).astype(tv.NP[src])
    inputs = tv.Inputs(random.Random(0))
    node = opset1.convert(inputs.add("x", src, values, p_const=0.0), dst)
    check_every_way(tv.single(node, inputs, "convert"), inputs.feeds, tmp_path)


# ----------------------------------------------------------------------------- every f16 bit pattern


ALL_F16 = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16).reshape(256, 256)


@pytest.mark.usefixtures("small_thresholds")
@pytest.mark.parametrize("cond_shape, else_shape", [((256, 256), (256, 256)), ((256, 1), (256, 256)),
                                                    ((1, 256), (256,)), ((), (1, 256))],
                         ids=["bit_select", "rows", "broadcast", "scalar_cond"])
@pytest.mark.parametrize("const", [False, True], ids=["param", "const"])
def test_select_moves_every_f16_pattern_as_the_reference(cond_shape, else_shape, const, tmp_path):
    """All 65,536 f16 patterns (signalling NaNs, -0.0, subnormals) through each Select path: the reference
    returns signalling NaNs quietened, every other pattern unchanged."""
    rng = np.random.default_rng(1)
    inputs = tv.Inputs(random.Random(0))
    cond = inputs.add("cond", "boolean", rng.integers(0, 2, cond_shape).astype(bool), p_const=0.0)
    then = inputs.add("then", "f16", ALL_F16, p_const=float(const))
    other = inputs.add("else", "f16", np.flip(ALL_F16).reshape(-1)[:int(np.prod(else_shape))].reshape(else_shape),
                       p_const=0.0)
    check_every_way(tv.single(opset1.select(cond, then, other), inputs, "select"), inputs.feeds, tmp_path)


@pytest.mark.usefixtures("small_thresholds")
@pytest.mark.parametrize("version, axis, indices_shape, batch_dims", [
    (8, 0, (300,), 0), (7, 1, (2, 150), 0), (8, 1, (256, 3), 1), (1, -1, (), 0)])
@pytest.mark.parametrize("const", [False, True], ids=["param", "const"])
def test_gather_moves_every_f16_pattern_as_the_reference(version, axis, indices_shape, batch_dims, const, tmp_path):
    """All 65,536 f16 patterns gathered with valid, negative and out-of-range indices on each Gather path."""
    rng = np.random.default_rng(2)
    inputs = tv.Inputs(random.Random(0))
    data = inputs.add("data", "f16", ALL_F16, p_const=0.0)
    indices = inputs.add("indices", "i32", rng.integers(-300, 300, indices_shape).astype(np.int32),
                         p_const=float(const))
    axis_node = opset1.constant(np.int64(axis))
    node = (opset1.gather(data, indices, axis_node) if version == 1 else
            (opset7 if version == 7 else opset8).gather(data, indices, axis_node, batch_dims=batch_dims))
    check_every_way(tv.single(node, inputs, "gather"), inputs.feeds, tmp_path)
