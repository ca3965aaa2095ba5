"""The shape module (ir_runner/ops/shape_movement/shape.py): ShapeOf, Reshape, Squeeze, Unsqueeze, Concat, Split,
VariadicSplit, Transpose; and the data movement of the whole family in every element type and on empty tensors.

1. Shape cases (after OpenVINO's type_prop tests: dynamic dims, intervals, special_zero...): graphs built with
   OpenVINO's Python API and written by it; every inferred spec equals the declared one and every output shape
   equals OpenVINO's, bounds included (``check_shapes``); then a run on concrete inputs is compared bit for bit
   with OpenVINO's reference.
2. Value cases (after op_reference): every element type, empty tensors, negative axes.
3. Cases found by scripts/fuzz_ops.py.
"""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset3, opset8, opset13  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import IRError  # noqa: E402
from tests.helpers.optest import check_run, write_ir  # noqa: E402
from tests.helpers.shape_cases import P, const, run_cases  # noqa: E402
from tests.helpers.shapes import check_shapes  # noqa: E402

# -- Reshape ------------------------------------------------------------------------------------------------

RESHAPES = [
    (P(2, 3, 4), [6, -1], False),
    (P(2, 3, 4), [0, -1], True),
    (P(2, 3, 4), [0, 0, 0], True),
    (P(-1, 3, 4), [0, -1], True),
    (P(-1, 3, 4), [-1, 12], False),
    (P(-1, 3, 4), [2, -1], False),
    (P((2, 8), 6), [2, -1], False),
    (P((2, 8), 6), [-1, 3], False),
    (P((1, 10), 3), [0, 3, -1], True),
    (P(-1, -1), [-1], False),
    (P(0, 3), [0, -1], False),
    (P(1), [], False),
    (P(2, 3, 4), [4, 0, -1], True),
]


@pytest.mark.parametrize("shape,target,special_zero", RESHAPES)
def test_reshape_shapes(shape, target, special_zero, tmp_path):
    x = opset13.parameter(shape, ov.Type.f32, name="x")
    r = opset13.reshape(x, const(target), special_zero)
    run_cases(write_ir(r, [x], tmp_path), [x], np.random.default_rng(0))


@pytest.mark.parametrize("shape,target,special_zero", [
    ([2, 3], [4, -1], False),  # 6 not divisible by 4
    ([2, 3], [7], False),
    ([2, 3], [-1, -1], False),
    ([2, 3], [1, 2, 0, 0], True),  # zero past the input rank
])
def test_reshape_errors(shape, target, special_zero, tmp_path):
    """Invalid targets: one IRError naming the Reshape layer (written by hand: OpenVINO refuses to build them)."""
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder("bad")
    x = b.parameter("x", "f32", ",".join(map(str, shape)))
    t = b.const("t", np.array(target, np.int64), "i64")
    node = b.layer("Reshape", "opset1", [x, t], attrs={"special_zero": str(special_zero).lower()},
                   out_specs=[("f32", [1])], name="bad_reshape")
    b.result(node, "out")
    path = tmp_path / "bad.xml"
    xml, weights = b.build()
    path.write_bytes(xml)
    path.with_suffix(".bin").write_bytes(weights)
    with pytest.raises(IRError) as info:
        ir_runner.load(str(path))
    assert "bad_reshape" in str(info.value)


@pytest.mark.parametrize("et", [ov.Type.f32, ov.Type.f16, ov.Type.bf16, ov.Type.i8, ov.Type.i64, ov.Type.boolean])
def test_reshape_of_transposed_patches_as_mobilevit_unfolds_them(et, tmp_path):
    """MobileViT's unfold into 2x2 patches and its fold back: Reshape -> Transpose -> Reshape chains whose
    Reshapes copy a Transpose's view with runs of 2 elements (moved as one wider integer, a short dim looped):
    bit for bit the reference's, NaN payloads and -0.0 included."""
    x = opset13.parameter([1, 12, 8, 8], et, name="x")
    patches = opset13.transpose(opset13.reshape(x, const([48, 2, 4, 2]), False), const([0, 2, 1, 3]))
    tokens = opset13.transpose(opset13.reshape(patches, const([1, 12, 16, 4]), False), const([0, 3, 2, 1]))
    back = opset13.reshape(tokens, const([4, 16, 12]), False)
    folded = opset13.transpose(opset13.reshape(opset13.transpose(opset13.reshape(back, const([1, 4, 16, 12]), False),
                                                                 const([0, 3, 2, 1])), const([48, 4, 2, 2]), False),
                               const([0, 2, 1, 3]))
    out = opset13.reshape(folded, const([1, 12, 8, 8]), False)
    path = write_ir(out, [x], tmp_path)
    rng = np.random.default_rng(3)
    dtype = et.to_dtype() if et != ov.Type.bf16 else np.dtype("bfloat16")
    if dtype.kind == "f" or et == ov.Type.bf16:
        data = (rng.standard_normal((1, 12, 8, 8)) * 4).astype(dtype)
        bits = data.view(f"u{dtype.itemsize}")
        bits[0, 0, 0, :3] = [0x7FC1 if dtype.itemsize == 2 else 0x7FC00001, 1 << (8 * dtype.itemsize - 1), 1]
    else:
        data = rng.integers(-100, 100, (1, 12, 8, 8)).astype(dtype)
    got = check_run(path, {"x": data})
    assert np.array_equal(next(iter(got.values())).view(f"u{dtype.itemsize}"), data.view(f"u{dtype.itemsize}"))
    check_run(write_ir(back, [x], tmp_path / "unfold"), {"x": data})


@pytest.mark.parametrize("view", [
    lambda a: a.reshape(768, 2, 4, 2).transpose(0, 2, 1, 3), lambda a: a.reshape(1536, 2, 2, 2).transpose(0, 2, 3, 1),
    lambda a: a.reshape(12, 64, 16).transpose(1, 0, 2)[:, ::-1], lambda a: a[:, :, ::2, 1::2],
    lambda a: a.reshape(48, 256)[None, :, None, ::-1], lambda a: a.reshape(12288, 1).T.reshape(2, 6144)[:, ::3],
    lambda a: a[:1, :4].transpose(0, 2, 3, 1)])  # (the last: 1024 elements, numpy's own copy)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.uint8, np.int64, np.complex64, bool, object])
def test_c_ordered_copy_is_numpys_copy_bit_for_bit(view, dtype):
    """The strided copy (runs of 2-8 bytes as one integer, a short last dim looped) equals numpy's C-ordered
    copy bit for bit on views with short runs, reversed and sliced dims, size-1 dims, any dtype."""
    from ir_runner.strided_copy import c_ordered_copy

    base = np.random.default_rng(1).standard_normal((4, 12, 16, 16)) * 50
    a = view(base.astype(dtype) if dtype is not object else base.astype(str).astype(object))
    got = c_ordered_copy(a)
    assert got.flags.c_contiguous and got.shape == a.shape and got.dtype == a.dtype
    if dtype is object:
        assert (got == a).all()
    else:
        assert got.tobytes() == np.ascontiguousarray(a).tobytes()



@pytest.mark.parametrize("view", [lambda a: a.transpose(0, 2, 3, 1), lambda a: a.reshape(1024, 512, 2, 2)
                                  .transpose(0, 2, 1, 3), lambda a: a[:, ::-1, :, 1:],
                                  lambda a: a.reshape(1, 1, 1024, 512, 4).transpose(0, 1, 4, 2, 3)])
def test_a_large_strided_copy_split_over_threads_is_numpys_copy(view, monkeypatch):
    """Above PARALLEL_MIN_ELEMENTS the copy is cut along its first axis longer than 1 (a batch of one too) over
    the pool (one piece per worker, 2 here whatever the machine): the same bytes as numpy's copy, into a new
    array and into a given one."""
    from ir_runner import parallel, strided_copy

    monkeypatch.setattr(parallel, "_WORKERS", 2)
    monkeypatch.setattr(parallel, "_serial_until", 0.0)
    cuts = []

    def spy(total, per_unit, work, **kwargs):
        cuts.append(total)
        parallel.run_chunked(total, per_unit, work, **kwargs)

    monkeypatch.setattr(strided_copy, "run_chunked", spy)
    a = view(np.random.default_rng(2).standard_normal((2, 512, 512, 4)).astype(np.float32))
    assert a.size >= parallel.PARALLEL_MIN_ELEMENTS and not a.flags.c_contiguous
    want = np.ascontiguousarray(a).tobytes()
    assert strided_copy.c_ordered_copy(a).tobytes() == want
    target = np.empty(a.shape, a.dtype)
    strided_copy.copy_into(target, a)
    assert target.tobytes() == want
    assert cuts == [next(n for n in a.shape if n > 1)] * 2

# -- Squeeze / Unsqueeze ------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,axes", [
    (P(1, 3, 1, 4), [0, 2]), (P(1, 3, 1, 4), [-2]), (P(-1, 3, 1), [2]), (P(-1, 3, 1), [0]), (P((1, 5), 3), [0]),
    (P(2, 3), [0]), (P(1), [0]), (P(2, 3), []), (P(1, 1, 2), []),
])
def test_squeeze_shapes(shape, axes, tmp_path):
    x = opset13.parameter(shape, ov.Type.f32, name="x")
    s = opset1.squeeze(x, const(axes))
    path = write_ir(s, [x], tmp_path)
    check_shapes(path)
    shp = tuple(1 if (not d.is_static) else d.get_length() for d in shape)
    check_run(path, {"x": np.arange(int(np.prod(shp)), dtype=np.float32).reshape(shp)})


@pytest.mark.parametrize("shape,axes", [
    (P(3, 4), [0]), (P(3, 4), [-1]), (P(3, 4), [0, 3]), (P(3, 4), [2, 0, -1]), (P(-1, 4), [1]),
    (P((2, 6)), [0, 0]), (P(), [0]), (P.__call__(), [-1]),
])
def test_unsqueeze_shapes(shape, axes, tmp_path):
    x = opset13.parameter(shape, ov.Type.f32, name="x")
    u = opset13.unsqueeze(x, const(axes))
    run_cases(write_ir(u, [x], tmp_path), [x], np.random.default_rng(1))


def test_unsqueeze_dynamic_rank_and_unknown_axes(tmp_path):
    x = opset13.parameter(ov.PartialShape.dynamic(), ov.Type.f32, name="x")
    a = opset13.parameter([1], ov.Type.i64, name="a")
    y = opset13.parameter([2, -1], ov.Type.f32, name="y")
    outs = [opset13.unsqueeze(x, const([0])), opset13.unsqueeze(y, a), opset13.squeeze(y, a)]
    check_shapes(write_ir(outs, [x, a, y], tmp_path))



# -- Concat -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shapes,axis", [
    ([P(2, 3), P(4, 3)], 0), ([P(2, 3), P(2, 5), P(2, 1)], -1), ([P(-1, 3), P(4, -1)], 0),
    ([P((1, 4), 3), P((2, 6), 3)], 0), ([P(-1, 3), P(2, -1)], 1), ([P(0, 3), P(2, 3)], 0),
    ([P(2, (1, 5)), P((1, 3), 4)], 1),
])
def test_concat_shapes(shapes, axis, tmp_path):
    params = [opset13.parameter(s, ov.Type.f32, name=f"x{i}") for i, s in enumerate(shapes)]
    c = opset13.concat(params, axis)
    path = write_ir(c, params, tmp_path)
    check_shapes(path)
    rng = np.random.default_rng(2)
    out = ov.PartialShape(c.get_output_partial_shape(0))
    fixed = [d.get_length() if d.is_static else 3 for d in out]
    feeds = {}
    for i, s in enumerate(shapes):
        shp = [d.get_length() if d.is_static else fixed[j] if j != (axis % len(fixed)) else 2 for j, d in enumerate(s)]
        feeds[f"x{i}"] = rng.standard_normal(shp).astype(np.float32)
    check_run(path, feeds)


@pytest.mark.parametrize("shapes,axis", [
    ([(3, 260, 700), (3, 260, 600)], 2), ([(2, 600, 900), (1, 600, 900)], 0), ([(1, 1, 2**20), (1, 1, 5)], 2),
    ([(1100, 1000), (1100, 1)], 1),
])
def test_concat_of_large_inputs_in_slabs_over_threads(shapes, axis, tmp_path):
    """Large outputs are copied in slabs cut along another axis (or in one call when every other dim is 1),
    fresh and into a caller's out= array: the same bits as numpy."""
    params = [opset13.parameter(list(s), ov.Type.f32, name=f"x{i}") for i, s in enumerate(shapes)]
    path = write_ir(opset13.concat(params, axis), params, tmp_path)
    rng = np.random.default_rng(5)
    feeds = {f"x{i}": rng.standard_normal(s).astype(np.float32) for i, s in enumerate(shapes)}
    want = np.concatenate(list(feeds.values()), axis)
    model = ir_runner.load(str(path))
    (name, got), = model.run(feeds).items()
    buffer = np.full(want.shape, np.nan, np.float32)
    model.run(feeds, out={name: buffer})
    assert np.array_equal(got, want) and np.array_equal(buffer, want)



# -- Split / VariadicSplit ----------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,axis,n", [
    (P(6, 4), 0, 3), (P(6, 4), -1, 2), (P(-1, 4), 0, 2), (P((2, 10), 4), 0, 2), (P(6, -1), 1, 1),
])
def test_split_shapes(shape, axis, n, tmp_path):
    x = opset13.parameter(shape, ov.Type.f32, name="x")
    s = opset13.split(x, const(axis), n)
    path = write_ir(s, [x], tmp_path)
    check_shapes(path)
    shp = [d.get_length() if d.is_static else 4 for d in shape]
    check_run(path, {"x": np.random.default_rng(3).standard_normal(shp).astype(np.float32)})


@pytest.mark.parametrize("dim,n,fed", [((8, 11), 3, 9), ((5, 9), 2, 6), ((1, 6), 3, 3), ((4, -1), 3, 6),
                                       ((6, 8), 3, 6)])
def test_split_of_an_interval_rounds_both_ends_down(dim, n, fed, tmp_path):
    """OpenVINO divides an interval's ends rounding down ([8..11] in 3 parts: [2..3], not 3; found by the fuzzer)."""
    x = opset13.parameter(P(2, dim), ov.Type.u16, name="x")
    path = write_ir(opset13.split(x, const(1), n), [x], tmp_path)
    check_shapes(path)
    check_run(path, {"x": np.arange(2 * fed, dtype=np.uint16).reshape(2, fed)})


def test_split_of_an_interval_shorter_than_num_splits_is_refused(tmp_path):
    x = opset13.parameter(P(2, 6), ov.Type.f32, name="x")
    path = write_ir(opset13.split(x, const(1), 3), [x], tmp_path)
    path.write_text(path.read_text().replace('shape="2,6"', 'shape="2,1..2"').replace("<dim>6</dim>", "<dim>-1</dim>"))
    with pytest.raises(IRError, match="fewer than num_splits"):
        ir_runner.load(str(path))


@pytest.mark.parametrize("shape,axis,lengths", [
    (P(6, 4), 0, [1, 2, 3]), (P(6, 4), 1, [-1, 1]), (P(-1, 4), 0, [2, -1]), (P((3, 10), 4), 0, [2, -1]),
    (P(6, 4), 0, [6, 0]), (P(-1, 4), 1, [3, 1]),
])
def test_variadic_split_shapes(shape, axis, lengths, tmp_path):
    x = opset13.parameter(shape, ov.Type.f32, name="x")
    s = opset13.variadic_split(x, const(axis), const(lengths))
    path = write_ir(s, [x], tmp_path)
    check_shapes(path)
    shp = [d.get_length() if d.is_static else 6 for d in shape]
    check_run(path, {"x": np.random.default_rng(3).standard_normal(shp).astype(np.float32)})



# -- Transpose ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,order", [
    (P(2, 3, 4), [2, 0, 1]), (P(2, 3, 4), []), (P(-1, 3, (1, 5)), [1, 2, 0]), (P(), []), (P(5), [0]),
    (ov.PartialShape.dynamic(), [1, 0]),
])
def test_transpose_shapes(shape, order, tmp_path):
    x = opset13.parameter(shape, ov.Type.f32, name="x")
    t = opset13.transpose(x, const(order))
    path = write_ir(t, [x], tmp_path)
    check_shapes(path)
    if shape.rank.is_static:
        run_cases(path, [x], np.random.default_rng(4))



# -- ShapeOf ------------------------------------------------------------------------------------------------

def test_shape_of_types_and_ranks(tmp_path):
    x = opset13.parameter(P(-1, (2, 5), 3), ov.Type.f16, name="x")
    y = opset13.parameter(ov.PartialShape.dynamic(), ov.Type.f32, name="y")
    outs = [opset3.shape_of(x, "i32"), opset3.shape_of(x, "i64"), opset1.shape_of(x), opset3.shape_of(y)]
    path = write_ir(outs, [x, y], tmp_path)
    check_shapes(path)
    check_run(path, {"x": np.zeros((4, 3, 3), np.float16), "y": np.zeros((2, 0, 1, 5), np.float32)})



# -- every element type (data movement is bit-exact) ----------------------------------------------------------

ELEMENT_TYPES = ["f32", "f16", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "boolean"]


def _random_of(et: str, shape, rng):
    if et == "boolean":
        return rng.random(shape) < 0.5
    dtype = getattr(ov.Type, et).to_dtype() if et != "bf16" else None
    if et in ("f16", "f32", "f64"):
        raw = rng.integers(0, 2 ** (8 * np.dtype(dtype).itemsize) - 1, size=shape, dtype=np.uint64)
        return raw.astype(f"u{np.dtype(dtype).itemsize}").view(dtype)  # every bit pattern, NaNs included
    if et == "bf16":
        import ml_dtypes

        return rng.integers(0, 2**16, size=shape, dtype=np.uint64).astype(np.uint16).view(ml_dtypes.bfloat16)
    return rng.integers(0, 2**63 - 1, size=shape, dtype=np.uint64).astype(dtype)


@pytest.mark.parametrize("et", ELEMENT_TYPES)
def test_movement_every_type(et, tmp_path):
    rng = np.random.default_rng(9)
    x = opset13.parameter([4, 6], getattr(ov.Type, et), name="x")
    y = opset13.parameter([2, 6], getattr(ov.Type, et), name="y")
    outs = [
        opset13.concat([x, y], 0), opset13.transpose(x, const([1, 0])), opset13.reshape(x, const([3, 8]), False),
        opset8.slice(x, const([3]), const([0]), const([-2]), const([1])),
        opset1.strided_slice(x, const([1, 0]), const([3, 6]), const([1, 2]), [0, 0], [0, 0]),
        opset13.tile(y, const([2, 1])), opset3.broadcast(y, const([3, 2, 6])),
        opset13.unsqueeze(y, const([1])), opset13.squeeze(opset13.unsqueeze(y, const([0])), const([0])),
    ]
    split = opset13.split(x, const(1), 3)
    vsplit = opset13.variadic_split(x, const(0), const([1, 3]))
    outs += [split.output(i) for i in range(3)] + [vsplit.output(i) for i in range(2)]
    path = write_ir([o.output(0) if hasattr(o, "get_output_size") else o for o in outs], [x, y], tmp_path)
    check_shapes(path)
    check_run(path, {"x": _random_of(et, (4, 6), rng), "y": _random_of(et, (2, 6), rng)})


def test_empty_tensors(tmp_path):
    x = opset13.parameter([0, 3], ov.Type.f32, name="x")
    outs = [opset13.concat([x, x], 0), opset13.transpose(x, const([1, 0])), opset13.reshape(x, const([3, 0]), False),
            opset13.tile(x, const([2, 2])), opset8.slice(x, const([0]), const([2]), const([1]), const([1]))]
    path = write_ir([o.output(0) for o in outs], [x], tmp_path)
    check_shapes(path)
    got = ir_runner.load(str(path)).run({"x": np.zeros((0, 3), np.float32)})  # (Node.evaluate crashes on these)
    assert [g.shape for g in got.values()] == [(0, 3), (3, 0), (3, 0), (0, 6), (0, 2)]


# -- found by scripts/fuzz_ops.py ---------------------------------------------------------------------------

def test_reshape_of_zero_elements_into_a_non_empty_shape_is_an_input_error(tmp_path):
    """special_zero keeps dims of an empty input: OpenVINO infers [4,3,3] and its reference returns
    uninitialised memory; ir-run refuses at run, naming the layer."""
    data = opset1.parameter([-1, -1, 4, 4], ov.Type.f32, name="x")
    path = write_ir(opset1.reshape(data, ov.op.Constant(np.array([0, 3, 3], np.int64)), True), [data], tmp_path)
    with pytest.raises(ir_runner.InputError, match="Reshape.*cannot reshape 0 elements"):
        ir_runner.load(str(path)).run({"x": np.zeros((4, 0, 4, 4), np.float32)})


@pytest.mark.parametrize(("shape", "axes", "skip"), [
    ([1, 3, 1], [0], True), ([1, 3, 1], [1], True), ([1, 3, 1], [1], False), ([-1, 3, 1], [0], True),
    ([-1, 3, 1], [0], False), ([-1, 3, 1], [2], True), ([-1, 3, 1], [0, 2], True), ([1, 3], [-2], True),
    ([1, 3], None, True), ([-1, 1], None, False)])
def test_squeeze15_allow_axis_skip(shape, axes, skip, tmp_path):
    """Squeeze-15 (opset15): a skippable axis over a dynamic dim gives a dynamic rank (OpenVINO's inference)."""
    from openvino import opset15
    from openvino.utils.node_factory import NodeFactory

    data = opset1.parameter(shape, ov.Type.f32, name="x")
    node = (opset15.squeeze(data, ov.op.Constant(np.array(axes, np.int64)), skip) if axes is not None else
            NodeFactory("opset15").create("Squeeze", [data], {"allow_axis_skip": skip}))
    path = write_ir(node, [data], tmp_path)
    check_shapes(path)
    feed = [d if d != -1 else 1 for d in shape]
    check_run(path, {"x": np.arange(np.prod(feed), dtype=np.float32).reshape(feed)})


def test_squeeze15_axes_known_at_run_give_a_dynamic_rank(tmp_path):
    from openvino import opset15

    data, axes = opset1.parameter([1, 4, 1], ov.Type.f32, name="x"), opset1.parameter([1], ov.Type.i64, name="a")
    path = write_ir(opset15.squeeze(data, axes, False), [data, axes], tmp_path)
    check_shapes(path)
    check_run(path, {"x": np.ones((1, 4, 1), np.float32), "a": np.array([-1], np.int64)})


def test_transpose_and_broadcast_of_unknown_values_as_openvino_infers(tmp_path):
    """Found by scripts/fuzz_ops.py: Transpose of dynamic-rank data keeps a dynamic rank for an unknown order
    and gives rank 0 for an empty one; Broadcast pdpd of a target known only at run has its length, dims ?."""
    from openvino.utils.node_factory import NodeFactory

    data = opset1.parameter(ov.PartialShape.dynamic(), ov.Type.u8, name="x")
    order = opset1.parameter([2], ov.Type.i32, name="order")
    small = opset1.parameter([3, 4], ov.Type.i64, name="y")
    target = opset1.parameter([2], ov.Type.i32, name="target")
    outs = [opset1.transpose(data, order), opset1.transpose(data, ov.op.Constant(np.zeros(0, np.int64))),
            NodeFactory("opset1").create("Broadcast", [small, target, ov.op.Constant(np.arange(2))],
                                         {"mode": "pdpd"})]
    check_shapes(write_ir(outs, [data, order, small, target], tmp_path))


@pytest.mark.parametrize("skip", [True, False])
@pytest.mark.parametrize("shape", [[2], [2, 3], [(2, 5), 3], [0, 2]])
def test_squeeze15_axes_known_at_run_of_data_without_a_possible_1(shape, skip, tmp_path):
    """Found by the fuzzer: no dim can be 1, so OpenVINO infers the data's shape whatever the axes."""
    from openvino import opset15

    data, axes = opset1.parameter(P(*shape), ov.Type.i16, name="x"), opset1.parameter([1], ov.Type.i64, name="a")
    path = write_ir(opset15.squeeze(data, axes, skip), [data, axes], tmp_path)
    check_shapes(path)
    feed = [d if isinstance(d, int) else d[0] for d in shape]
    got = ir_runner.load(str(path)).run({"x": np.ones(feed, np.int16), "a": np.array([0], np.int64)})
    assert next(iter(got.values())).shape == tuple(feed)


def test_num_splits_other_than_the_declared_outputs_is_refused_before_the_outputs_are_made():
    """num_splits=2147483648 on a layer of 2 outputs made 2**31 output specs at validate (MemoryError, or the
    process killed); the count is compared with the layer's outputs first."""
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder()
    x, axis = b.parameter("x", "f32", "4,?"), b.const("a", np.int64(1))
    split = b.layer("Split", "opset1", [x, axis], attrs={"num_splits": 3}, out_specs=[("FP32", [4, -1])] * 2)
    b.result(split[0])
    b.result(split[1])
    with pytest.raises(ir_runner.InferenceError, match="Split-1.*num_splits=3 gives 3 output.*declares 2"):
        ir_runner.load(*b.build())
