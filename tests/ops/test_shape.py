"""The shape family: ShapeOf, Reshape, Squeeze, Unsqueeze, Concat, Split, VariadicSplit, Transpose, Broadcast,
Tile, Range, Slice, StridedSlice.

1. Shape cases (after OpenVINO's type_prop tests: dynamic dims, intervals, special_zero, masks...): graphs
   built with OpenVINO's Python API and written by it; every inferred spec equals the declared one and
   every output shape equals OpenVINO's, bounds included (``check_shapes``); then a run on concrete
   inputs is compared bit for bit with OpenVINO's reference.
2. Value cases (after op_reference): every element type, empty tensors, negative axes and strides.
3. A seeded differential generator over random shapes and attributes.
"""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset3, opset8, opset13  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import IRError  # noqa: E402
from tests.helpers.optest import check_run, reference_outputs, write_ir  # noqa: E402
from tests.helpers.shapes import check_shapes  # noqa: E402

D = ov.Dimension


def P(*dims):  # noqa: N802 (a shape)
    return ov.PartialShape([D(*d) if isinstance(d, tuple) else d for d in dims])


def const(values, dtype=np.int64):
    return opset13.constant(np.array(values, dtype=dtype))


def concrete(shape: ov.PartialShape, rng: np.random.Generator) -> tuple[int, ...]:
    """A concrete shape fitting ``shape`` (dynamic dims drawn small)."""
    out = []
    for d in shape:
        if d.is_static:
            out.append(d.get_length())
        else:
            hi = d.get_max_length() if d.get_max_length() >= 0 and d.get_max_length() < 10 else 4
            out.append(int(rng.integers(max(d.get_min_length(), 1), max(hi, d.get_min_length(), 1) + 1)))
    return tuple(out)


def run_cases(path, params, rng):
    """check_shapes, then runs on two concrete shapes per dynamic input."""
    check_shapes(path)
    for _ in range(2):
        feeds = {}
        for p in params:
            shape = concrete(p.get_partial_shape(), rng)
            et = p.get_element_type().to_dtype()
            feeds[p.get_friendly_name()] = (rng.standard_normal(shape) * 10).astype(et)
        check_run(path, feeds)


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
    lambda a: a.reshape(48, 2, 4, 2).transpose(0, 2, 1, 3), lambda a: a.reshape(96, 2, 2, 2).transpose(0, 2, 3, 1),
    lambda a: a.reshape(12, 4, 16).transpose(1, 0, 2)[:, ::-1], lambda a: a[:, :, ::2, 1::2],
    lambda a: a.reshape(12, 64)[None, :, None, ::-1], lambda a: a.reshape(768, 1).T.reshape(2, 384)[:, ::3]])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.uint8, np.int64, np.complex64, bool, object])
def test_c_ordered_copy_is_numpys_copy_bit_for_bit(view, dtype):
    """The strided copy (runs of 2-8 bytes as one integer, a short last dim looped) equals numpy's C-ordered
    copy bit for bit on views with short runs, reversed and sliced dims, size-1 dims, any dtype."""
    from ir_runner.ops.toolkit.strided_copy import c_ordered_copy

    base = np.random.default_rng(1).standard_normal((1, 12, 8, 8)) * 50
    a = view(base.astype(dtype) if dtype is not object else base.astype(str).astype(object))
    got = c_ordered_copy(a)
    assert got.flags.c_contiguous and got.shape == a.shape and got.dtype == a.dtype
    if dtype is object:
        assert (got == a).all()
    else:
        assert got.tobytes() == np.ascontiguousarray(a).tobytes()


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


# -- Range --------------------------------------------------------------------------------------------------

RANGES = [
    (0, 10, 1, "i64"), (10, 0, -3, "i32"), (0, 1, 0.1, "f32"), (-5.5, 5.5, 0.7, "f32"), (1, 2, 0.1, "f16"),
    (0, 3.9, 1.1, "i32"), (0, 1, 0.3, "bf16"), (0.5, -2.5, -0.25, "f64"), (5, 5, 1, "i64"), (0, 300, 7, "u8"),
    (250, 0, -7, "u8"), (-3, 3, 1, "i8"), (0.1, 0.95, 0.05, "f32"),
]


@pytest.mark.parametrize("start,stop,step,et", RANGES)
def test_range4_values(start, stop, step, et, tmp_path):
    r = opset13.range(const(start, np.float32), const(stop, np.float32), const(step, np.float32), et)
    path = write_ir(r, [], tmp_path)
    check_shapes(path)
    got = list(ir_runner.load(str(path)).run({}).values())[0]
    want = reference_outputs(path, {})[0]  # (bf16 comes back as a 2-byte type of another name: bits compared)
    assert got.dtype.itemsize == want.dtype.itemsize and got.tobytes() == want.tobytes(), (got, want)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.uint8, np.float64])  # no f16 reference
def test_range1_values_from_parameters(dtype, tmp_path):
    """Range-1 with start/stop/step fed at run time: dynamic at load, planned per value."""
    s, e, d = (opset1.parameter([], ov.Type(dtype), name=n) for n in ("s", "e", "d"))
    r = opset1.range(s, e, d)
    path = write_ir(r, [s, e, d], tmp_path)
    check_shapes(path)
    for start, stop, step in ((0, 7, 2), (9, 1, 2), (3, 3, 1), (1, 10, 3)):
        check_run(path, {"s": np.array(start, dtype), "e": np.array(stop, dtype), "d": np.array(step, dtype)})


# -- Slice / StridedSlice -----------------------------------------------------------------------------------

SLICES = [
    (P(10, 8), [1, 2], [8, 7], [2, 3], None), (P(10, 8), [-1], [-11], [-1], None),
    (P(10, 8), [0], [100], [1], [1]), (P(-1, 8), [1], [3], [1], [0]), (P(-1, 8), [2], [-2], [1], [0]),
    (P((2, 20), 8), [1], [5], [1], [0]), (P(10, 8), [9, 7], [0, 0], [-3, -2], [0, 1]),
    (P(10, 8), [-3], [2**63 - 1], [1], [-2]), (P(-1, -1), [0, 1], [2**63 - 1, 2**63 - 1], [1, 2], None),
    (P(10, 8), [5], [1], [1], [0]),
]


@pytest.mark.parametrize("shape,start,stop,step,axes", SLICES)
def test_slice_shapes(shape, start, stop, step, axes, tmp_path):
    x = opset13.parameter(shape, ov.Type.f32, name="x")
    args = [x, const(start), const(stop), const(step)] + ([const(axes)] if axes is not None else [])
    s = opset8.slice(*args)
    run_cases(write_ir(s, [x], tmp_path), [x], np.random.default_rng(7))


STRIDED = [
    (P(5, 6, 7), [1, 0, 2], [4, 6, 6], [1, 2, 2], [0, 1, 0], [0, 0, 0], [], [], []),
    (P(5, 6, 7), [-1, 0], [-6, 6], [-1, 1], [0, 0], [0, 0], [], [], []),
    (P(5, 6, 7), [0, 2, 0], [0, 3, 0], [1, 1, 1], [1, 0, 1], [1, 0, 1], [], [0, 1, 0], []),
    (P(5, 6, 7), [0, 0, 0], [1, 1, 1], [1, 1, 1], [0, 0, 0], [0, 0, 0], [0, 1, 0], [], []),
    (P(5, 6, 7), [1, 0, 2], [3, 0, 5], [1, 1, 1], [0, 0, 0], [0, 0, 0], [], [], [0, 1, 0]),
    (P(-1, 6, 7), [0, 1], [2**63 - 1, 3], [1, 1], [0, 0], [0, 0], [], [], []),
    (P((1, 9), 6), [1], [4], [1], [0], [0], [], [], []),
    (P(5, 6, 7), [4], [0], [-2], [0], [1], [], [], []),
    (P(5, 6, 7), [0, 3], [0, 4], [1, 1], [0, 0], [0, 0], [1, 0], [], [0, 0]),
    (P(5, 6, 7), [-2, 1], [0, 4], [1, 1], [0, 0], [1, 0], [], [1, 0], []),
]


@pytest.mark.parametrize("shape,begin,end,stride,bm,em,nm,sm,el", STRIDED)
def test_strided_slice_shapes(shape, begin, end, stride, bm, em, nm, sm, el, tmp_path):
    x = opset13.parameter(shape, ov.Type.f32, name="x")
    s = opset1.strided_slice(x, const(begin), const(end), const(stride), bm, em, nm, sm, el)
    run_cases(write_ir(s, [x], tmp_path), [x], np.random.default_rng(8))


def test_slices_with_negative_steps_from_before_the_first_element(tmp_path):
    """A negative step whose start lies before the dim's first element starts there (numpy would take nothing):
    the reference's clamping, in Slice and StridedSlice (found by the fuzzer)."""
    x = opset13.parameter(P(6, 5), ov.Type.i32, name="x")
    outs = [opset8.slice(x, const([-8, -2**62]), const([-2**62, 1]), const([-1, -2]), const([0, 1])),
            opset1.strided_slice(x, const([-2**62, -9]), const([0, 0]), const([-3, -1]), [0, 0], [1, 0])]
    path = write_ir(outs, [x], tmp_path)
    check_shapes(path)
    check_run(path, {"x": np.arange(30, dtype=np.int32).reshape(6, 5)})


STRIDED_UNKNOWN = [  # begin or end a Parameter: masked elements need no value (as OpenVINO infers them)
    (P(4, 5, 6), "end", [1, -1], [-1, 3], [0, 0], [1, 1]),
    (P(5, 2, -1), "begin", [10], [1], [1], [0]),
    (P(5, -1), "begin", [3, 3], [-3, -2], [1, 0], [0, 0]),
    (P(9, (0, 9), 9, 9), "end", [1, 1, 1], [1, 1, 1], [0, 0, 0], [1, 1, 1]),
    (P(9, 9, 9, 9), "end", [1, 1, 1], [1, 2, -3], [0, 0, 0], [1, 1, 1]),
    (P(9, 9, 9), "begin", [2, 2, 2], [2, 2, 2], [0, 1, 1], [0, 0, 0]),
    (P((9, 12)), "end", [1], [-1], [0], [1]),
    (P((0, 9)), "begin", [2], [-3], [1], [0]),
]


@pytest.mark.parametrize("shape,unknown,known,stride,bm,em", STRIDED_UNKNOWN)
def test_strided_slice_with_begin_or_end_known_at_run(shape, unknown, known, stride, bm, em, tmp_path):
    x = opset13.parameter(shape, ov.Type.f32, name="x")
    p = opset13.parameter([len(known)], ov.Type.i64, name="p")
    begin, end = (p, const(known)) if unknown == "begin" else (const(known), p)
    s = opset1.strided_slice(x, begin, end, const(stride), bm, em)
    path = write_ir(s, [x, p], tmp_path)
    check_shapes(path)
    data = np.arange(np.prod(concrete(shape, np.random.default_rng(3))), dtype=np.float32)
    data = data.reshape(concrete(shape, np.random.default_rng(3)))
    check_run(path, {"x": data, "p": np.array([1] * len(known), np.int64)})


def test_strided_slice_ellipsis_that_is_also_a_new_or_shrunk_axis(tmp_path):
    """An element both the ellipsis and a new/shrunk axis is the ellipsis, as OpenVINO's shape inference and
    CPU plugin read it (its reference reads the other mask and contradicts the inferred shape)."""
    x = opset13.parameter(P(2, 2, 6), ov.Type.f32, name="x")
    s = opset1.strided_slice(x, const([1, 0]), const([2, 0]), const([1, 1]), [0, 0], [0, 1], [0, 1], [1, 0], [1, 0])
    path = write_ir(s, [x], tmp_path)
    check_shapes(path)
    data = np.arange(24, dtype=np.float32).reshape(2, 2, 6)
    got = ir_runner.load(str(path)).run({"x": data})
    assert np.array_equal(next(iter(got.values())), data[..., None])


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


@pytest.mark.parametrize(("start", "stop", "step"), [(-2**31, -1, 3), (0, 2**31 - 1, 2), (2**31 - 1, 0, -1),
                                                     (-2**31 + 1, -1, 3), (1, 2**31 - 1, 1)])
def test_slices_of_an_unbounded_dim_read_i32_limits_as_int64_limits(start, stop, step, tmp_path):
    """Found by the fuzzer: OpenVINO reads an i32 start/stop of 2**31 - 1 (or -2**31) as int64's limit, so
    slicing an unbounded dim with it gives ?, not a bound."""
    x = opset13.parameter(P(-1), ov.Type.f16, name="x")
    args = [const([v], np.int32) for v in (start, stop, step)]
    outs = [opset8.slice(x, *args), opset1.strided_slice(x, *args, [0], [0])]
    path = write_ir(outs, [x], tmp_path)
    check_shapes(path)
    check_run(path, {"x": np.arange(7, dtype=np.float16)})


@pytest.mark.parametrize("dim,start,stop", [((1, 3), -1, 1), ((2, 5), -2, 2), ((1, 8), -1, 1), ((2, 5), -1, 1)])
def test_slice_bounds_that_cross_give_a_dynamic_dim(dim, start, stop, tmp_path):
    """Found by the fuzzer: a lower end above the upper one ([1..3] sliced -1:1 gives 1..0) is ?, as OpenVINO."""
    x = opset13.parameter(P(dim, 3), ov.Type.i32, name="x")
    outs = [opset8.slice(x, const([start]), const([stop]), const([1])),
            opset1.strided_slice(x, const([start]), const([stop]), const([1]), [0], [0])]
    path = write_ir(outs, [x], tmp_path)
    check_shapes(path)
    check_run(path, {"x": np.arange(3 * dim[0], dtype=np.int32).reshape(dim[0], 3)})


def test_strided_slice_shrink_index_out_of_range_is_an_input_error(tmp_path):
    """A shrunk axis is not clamped: a begin outside the axis is an IndexOutOfRangeError naming the layer and the
    begin port (the reference asserts; found by the fuzzer as a KernelError)."""
    x = opset13.parameter(P(4, 6), ov.Type.f32, name="x")
    b = opset13.parameter([2], ov.Type.i64, name="b")
    s = opset1.strided_slice(x, b, const([0, 0]), const([1, 1]), [0, 0], [0, 0], [], [1, 1])
    path = write_ir(s, [x, b], tmp_path)
    model = ir_runner.load(str(path))
    data = np.arange(24, dtype=np.float32).reshape(4, 6)
    assert next(iter(model.run({"x": data, "b": np.array([3, -6], np.int64)}).values())) == data[3, -6]
    with pytest.raises(ir_runner.errors.IndexOutOfRangeError, match=r"StridedSlice.*begin element 1 \(6\)"):
        model.run({"x": data, "b": np.array([3, 6], np.int64)})


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


@pytest.mark.parametrize("axes", [[0, 1], [1]])
def test_slice_axes_of_another_length_than_start_is_refused_naming_the_layer(axes):
    """axes [0,1] against a start of one element read start[1] (an IndexError escaped at load; found by
    scripts/fuzz_ir.py turning a Llama export's Consts into Parameters); all lengths must agree."""
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder()
    x = b.parameter("x", "f32", "4,6")
    ints = [b.const(name, np.array(value, np.int64)) for name, value in
            (("start", [0]), ("stop", [2]), ("step", [1]), ("axes", axes))]
    b.result(b.layer("Slice", "opset8", [x, *ints], attrs=None, out_specs=[("FP32", [-1, -1])]))
    xml, weights = b.build()
    if len(axes) == 1:
        (out,) = ir_runner.load(xml, weights).run({"x": np.ones((4, 6), np.float32)}).values()
        assert out.shape == (4, 2)
        return
    with pytest.raises(ir_runner.InferenceError, match="Slice-8.*one length, got start 1, stop 1, step 1, axes 2"):
        ir_runner.load(xml, weights)
