"""``Model.run(feeds, out=...)``: outputs written into the caller's arrays.

Every kind of output (a kernel writing in place, a Parameter or Const passed through, one tensor feeding
two Results, a folded constant, Convert to every type family, every Gather and Select path) gives the
bits of a run without ``out=``, in the very arrays passed; every bad ``out`` is one InputError naming
the output; concurrent runs with their own buffers and dynamic-shape models work too.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import ir_runner
from ir_runner.ops.indexing.gather import _INDEX_CHUNK
from ir_runner.parallel import PARALLEL_MIN_ELEMENTS
from tests.conftest import MODELS
from tests.helpers.bits import same_bits
from tests.helpers.irbuild import DTYPE, IRBuilder

UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def random_bits(rng: np.random.Generator, dtype, shape) -> np.ndarray:
    """Any bit pattern (NaN payloads, signalling NaNs, -0.0, bool bytes other than 0/1)."""
    dtype = np.dtype(dtype)
    return rng.integers(0, 256, (*shape, dtype.itemsize), dtype=np.uint8).view(dtype).reshape(shape)


def random_feeds(model: ir_runner.Model, seed: int = 0, shapes: dict | None = None, **fixed) -> dict:
    rng = np.random.default_rng(seed)
    feeds = {}
    for info in model.inputs:
        shape = (shapes or {}).get(info.name, info.shape)
        feeds[info.name] = fixed[info.name] if info.name in fixed else random_bits(rng, info.dtype, shape)
    return feeds


def garbage_buffers(model: ir_runner.Model, plain: dict, seed: int = 99) -> dict:
    """One C-contiguous array per output, filled with garbage so that an unwritten element shows."""
    rng = np.random.default_rng(seed)
    return {name: random_bits(rng, value.dtype, value.shape) for name, value in plain.items()}


def check_into(model: ir_runner.Model, feeds: dict, written_in_place: list[bool] | None = None) -> dict:
    """Run with and without out=: the same bits, in the arrays passed; also as a sequence, and by model()."""
    plain = model.run(feeds)
    buffers = garbage_buffers(model, plain)
    got = model.run(feeds, out=buffers)
    assert list(got) == list(plain)
    for name, value in plain.items():
        assert got[name] is buffers[name]
        assert same_bits(got[name], value), name
    in_order = [np.empty_like(v) for v in plain.values()]
    got = model.run(feeds, out=in_order)
    assert all(g is b and same_bits(g, v) for g, b, v in zip(got.values(), in_order, plain.values()))
    if written_in_place is not None:
        plan = model.plan_for([feeds[info.name] for info in model.inputs])
        assert list(plan.output_into) == written_in_place
    return plain


def build(b: IRBuilder) -> ir_runner.Model:
    return ir_runner.load(*b.build())


def gather_layer(b: IRBuilder, data, indices, axis: int, out_dims, et: str = "f32", batch_dims: int = 0):
    axis_const = b.const(f"axis{len(b.layers)}", np.array(axis, np.int64))
    return b.layer("Gather", "opset8", [data, indices, axis_const], attrs={"batch_dims": batch_dims},
                   out_specs=[(et, list(out_dims))], out_names=["out"])


# ----------------------------------------------------------------------------- every output kind


def test_the_quick_start_model():
    model = ir_runner.load(MODELS / "select_gather.xml")
    with np.load(MODELS / "select_gather.inputs.npz") as data:
        feeds = {k: data[k] for k in data.files}
    check_into(model, feeds, [True])
    buffer = np.empty((2, 2), np.float32)
    got = model(feeds["cond"], feeds["then"], feeds["else"], out={"out": buffer})
    assert got["out"] is buffer and same_bits(buffer, model.run(feeds)["out"])


def test_passthrough_const_shared_and_intermediate_outputs():
    """Parameter -> Result, Const -> Result, a folded constant, one Select feeding two Results and a Gather."""
    b = IRBuilder()
    cond = b.parameter("cond", "boolean", "300,300")
    then = b.parameter("then", "f32", "300,300")
    other = b.parameter("else", "f32", "300,300")
    sel = b.layer("Select", "opset1", [cond, then, other], attrs={"auto_broadcast": "numpy"},
                  out_specs=[("f32", [300, 300])], out_names=["selected"])
    b.result(sel, "first")
    b.result(sel, "second")
    b.result(then, "passthrough")
    const = b.const("table", np.arange(12, dtype=np.int16).reshape(3, 4))
    b.result(const, "constant")
    b.result(b.convert(const, "f32"), "folded")
    indices = b.const("indices", np.array([299, 0, -1, 5], np.int32))
    b.result(gather_layer(b, sel, indices, 1, [300, 4]), "gathered")
    model = build(b)
    assert [info.name for info in model.outputs] == ["selected", "second", "then", "constant", "folded", "out"]
    check_into(model, random_feeds(model), [True, False, False, False, False, True])


def test_one_tensor_two_results_with_partial_buffers():
    """Only the second of two Results of one tensor gets a buffer, then only the first; never aliased."""
    b = IRBuilder()
    x = b.parameter("x", "f32", "100,400")
    neg = b.convert(x, "f64")
    b.result(neg, "a")
    b.result(neg, "b")
    model = build(b)
    feeds = random_feeds(model)
    plain = model.run(feeds)
    first, second = [info.name for info in model.outputs]
    buffer = np.empty((100, 400), np.float64)
    got = model.run(feeds, out={second: buffer})
    assert got[second] is buffer and same_bits(buffer, plain[second])
    assert not np.may_share_memory(got[first], buffer) and same_bits(got[first], plain[first])
    buffer = np.empty((100, 400), np.float64)
    got = model.run(feeds, out=[buffer, None])
    assert got[first] is buffer and same_bits(buffer, plain[first])
    assert not np.may_share_memory(got[second], buffer) and same_bits(got[second], plain[second])


CONVERSIONS = [
    ("f32", "f16"), ("f16", "f32"), ("f32", "bf16"), ("bf16", "f32"), ("f16", "f16"), ("bf16", "bf16"),
    ("f64", "f32"), ("f32", "f64"), ("f32", "i32"), ("f64", "u64"), ("f32", "f8e4m3"), ("f16", "f8e5m2"),
    ("i32", "i8"), ("i64", "f32"), ("u64", "f64"), ("u8", "u16"), ("i8", "u64"), ("u32", "f16"),
    ("boolean", "i32"), ("boolean", "boolean"), ("u8", "boolean"), ("f32", "boolean"), ("f16", "boolean"),
    ("i32", "i4"), ("i16", "u4"), ("u64", "u1"), ("i64", "i64"),
]


@pytest.mark.parametrize(("src", "dst"), CONVERSIONS, ids=[f"{s}-{d}" for s, d in CONVERSIONS])
def test_convert_outputs(src, dst):
    b = IRBuilder()
    b.result(b.convert(b.parameter("x", src, "70,1000"), dst), "y")
    model = build(b)
    check_into(model, random_feeds(model, seed=len(src + dst)), [True])


# ----------------------------------------------------------------------------- Gather, every path


def test_gather_small_constant_indices():
    b = IRBuilder()
    data = b.parameter("data", "f16", "10,6")
    indices = b.const("indices", np.array([[9, 0], [3, -10]], np.int64))
    gather_layer(b, data, indices, 0, [2, 2, 6], "f16")
    b.result(b.layers[-1])
    model = build(b)
    feeds = random_feeds(model, data=np.array([0x7C01, 0xFC93, 0x3C00] * 20, np.uint16).view(np.float16).reshape(10, 6))
    plain = check_into(model, feeds, [True])
    assert plain["out"].view(np.uint16)[0, 0, 0] == 0x7E01  # data[9, 0]: the signalling NaN, quietened


def test_gather_large_constant_indices_with_out_of_range():
    rows = PARALLEL_MIN_ELEMENTS // 500 + 10
    b = IRBuilder()
    data = b.parameter("data", "f32", "700,500")
    indices = b.const("indices", np.random.default_rng(1).integers(-800, 800, rows).astype(np.int32))
    b.result(gather_layer(b, data, indices, 0, [rows, 500]))
    model = build(b)
    check_into(model, random_feeds(model), [True])


@pytest.mark.parametrize("kind", ["in_range", "negative", "out_of_range"])
def test_gather_chunked_one_dimensional_indices(kind):
    count = 2 * _INDEX_CHUNK + 5
    b = IRBuilder()
    data = b.parameter("data", "f32", "100")
    indices = b.parameter("indices", "i32", str(count))
    b.result(gather_layer(b, data, indices, 0, [count]))
    model = build(b)
    low, high = {"in_range": (0, 100), "negative": (-100, 100), "out_of_range": (-150, 150)}[kind]
    idx = np.random.default_rng(2).integers(low, high, count).astype(np.int32)
    plain = check_into(model, random_feeds(model, indices=idx), [True])
    if kind == "out_of_range":
        assert (plain["out"].view(np.uint32)[(idx < -100) | (idx >= 100)] == 0).all()


@pytest.mark.parametrize("axis", [1, 2])
def test_gather_batch_dims_rows(axis):
    b = IRBuilder()
    data = b.parameter("data", "i64", "4,50,8")
    indices = b.parameter("indices", "i32", "4,30")
    out_dims = [4, 30, 8] if axis == 1 else [4, 50, 30]
    b.result(gather_layer(b, data, indices, axis, out_dims, "i64", batch_dims=1))
    model = build(b)
    dim = 50 if axis == 1 else 8
    idx = np.random.default_rng(3).integers(-dim - 3, dim + 3, (4, 30)).astype(np.int32)
    check_into(model, random_feeds(model, indices=idx), [True])


def test_gather_large_threaded_axis_one():
    b = IRBuilder()
    data = b.parameter("data", "f32", "64,300,64")
    indices = b.parameter("indices", "i64", "200")
    b.result(gather_layer(b, data, indices, 1, [64, 200, 64]))
    model = build(b)
    idx = np.random.default_rng(4).integers(-300, 300, 200).astype(np.int64)
    check_into(model, random_feeds(model, indices=idx), [True])


def test_gather_of_an_empty_axis_gives_zeros():
    b = IRBuilder()
    data = b.parameter("data", "f32", "3,0")
    indices = b.parameter("indices", "i32", "4")
    b.result(gather_layer(b, data, indices, 1, [3, 4]))
    model = build(b)
    plain = check_into(model, random_feeds(model, indices=np.zeros(4, np.int32)), [True])
    assert not plain["out"].any()


# ----------------------------------------------------------------------------- Select, every path

SELECTS = {  # (cond, then, else, mode)
    "small": ("3,4", "3,4", "3,4", "numpy"),
    "same_shape": ("300,300", "300,300", "300,300", "numpy"),
    "broadcast": ("300,300", "300", "300,300", "numpy"),
    "rows": ("1000,1", "1000,64", "1000,64", "numpy"),
    "pdpd": ("200,300", "200,300", "200", "pdpd"),
}


@pytest.mark.parametrize("et", ["f32", "f16", "boolean", "i8", "f64"])
@pytest.mark.parametrize("case", list(SELECTS))
def test_select_paths(case, et):
    cond_shape, then_shape, else_shape, mode = SELECTS[case]
    out_shape = [int(d) for d in cond_shape.split(",")]
    out_shape = list(np.broadcast_shapes(tuple(out_shape), tuple(int(d) for d in then_shape.split(","))))
    b = IRBuilder()
    params = [b.parameter("cond", "boolean", cond_shape), b.parameter("then", et, then_shape),
              b.parameter("else", et, else_shape)]
    attrs = {"auto_broadcast": mode} if mode == "numpy" else {"auto_broadcast": "pdpd",
                                                              "auto_broadcast.auto_broadcast_axis": 0}
    b.result(b.layer("Select", "opset1", params, attrs=attrs, out_specs=[(et, out_shape)], out_names=["out"]))
    model = build(b)
    feeds = random_feeds(model, seed=len(case))
    if et == "f16":  # signalling NaNs the reference quietens, on every path
        feeds["then"].reshape(-1).view(np.uint16)[::7] = 0x7C01
    small_where = case == "small" and et != "f16"  # np.where itself: its result is copied
    check_into(model, feeds, [not small_where])


@pytest.mark.parametrize(("type_", "shape"), [("Add", "600"), ("Multiply", "400,1"), ("Less", "600")])
def test_prepared_binary_ufunc_writes_into_out(type_, shape):
    """A binary kernel prepared as the bare ufunc (an output of 240,000 elements) writes into ``out=``: no
    output-sized temporary (numpy reports its buffers to tracemalloc) and the bits of a fresh run."""
    import tracemalloc

    b = IRBuilder()
    params = [b.parameter("a", "f32", "400,600"), b.parameter("b", "f32", shape)]
    et = "boolean" if type_ == "Less" else "f32"
    b.result(b.layer(type_, "opset1", params, out_specs=[(et, [400, 600])], out_names=["out"]))
    model = build(b)
    feeds = random_feeds(model)
    plain = check_into(model, feeds, [True])
    buffer = np.empty_like(plain["out"])
    tracemalloc.start()
    try:
        model.run(feeds, out={"out": buffer})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < buffer.nbytes // 2


# ----------------------------------------------------------------------------- dynamic shapes


@pytest.mark.parametrize("perm", [(0, 2, 1), (2, 1, 0)])
def test_a_large_view_output_is_copied_into_out_over_threads(perm):
    """A Transpose returns a view; its output (fresh, or written into a caller's buffer) above
    PARALLEL_MIN_ELEMENTS is copied in slabs of the first axis over threads: C-ordered, every element bit for bit."""
    shape = (6, 500, 400)
    out_shape = [shape[i] for i in perm]
    assert np.prod(shape) > PARALLEL_MIN_ELEMENTS
    b = IRBuilder("transpose_large")
    x = b.parameter("x", "f32", ",".join(map(str, shape)))
    order = b.const("order", np.array(perm, np.int64))
    b.result(b.layer("Transpose", "opset1", [x, order], out_specs=[("f32", out_shape)], out_names=["out"]))
    model = build(b)
    feeds = random_feeds(model, seed=5)
    plain = check_into(model, feeds)
    got = next(iter(plain.values()))
    assert got.flags.c_contiguous  # a new C-ordered array, not a copy in the view's layout
    assert same_bits(got, np.transpose(feeds["x"], perm))


def test_dynamic_shapes_use_each_runs_shapes():
    b = IRBuilder()
    params = [b.parameter("cond", "boolean", "?,400"), b.parameter("then", "f32", "?,400"),
              b.parameter("else", "f32", "400")]
    b.result(b.layer("Select", "opset1", params, attrs={"auto_broadcast": "numpy"}, out_specs=[("f32", "?,400")],
                     out_names=["out"]))
    model = build(b)
    assert model.outputs[0].shape == (None, 400)
    for rows, kernel_writes in ((3, False), (200, True)):  # np.where for small outputs, then its result is copied
        shapes = {"cond": (rows, 400), "then": (rows, 400)}
        check_into(model, random_feeds(model, shapes=shapes), [kernel_writes])
    feeds = random_feeds(model, shapes={"cond": (5, 400), "then": (5, 400)})
    with pytest.raises(ir_runner.InputError) as error:
        model.run(feeds, out={"out": np.empty((3, 400), np.float32)})
    assert "float32 array of shape [5, 400], got float32 [3, 400]" in str(error.value)


def test_the_dynamic_sample():
    model = ir_runner.load(MODELS / "dynamic.xml")
    with np.load(MODELS / "dynamic.inputs.npz") as data:
        feeds = {k: data[k] for k in data.files}
    check_into(model, feeds)


# ----------------------------------------------------------------------------- bad buffers


@pytest.fixture(scope="module")
def two_outputs() -> ir_runner.Model:
    b = IRBuilder()
    x = b.parameter("x", "f32", "4,6")
    y = b.parameter("y", "i32", "5")
    for layer, name in ((b.convert(x, "f16"), "half"), (b.convert(y, "i64"), "wide")):
        layer.out_names = [name]
        b.result(layer, f"{name}_result")
    return build(b)


def _feeds(model: ir_runner.Model) -> dict:
    return random_feeds(model, seed=5)


def _bad(model: ir_runner.Model, feeds: dict, out, *fragments: str) -> str:
    before = {k: v.copy() for k, v in feeds.items()}
    with pytest.raises(ir_runner.InputError) as error:
        model.run(feeds, out=out)
    text = str(error.value)
    for fragment in fragments:
        assert fragment in text, text
    assert all(same_bits(before[k], feeds[k]) for k in feeds)
    return text


def test_wrong_dtype(two_outputs):
    text = _bad(two_outputs, _feeds(two_outputs), {"half": np.empty((4, 6), np.float32)},
                "output 'half'", "float16 array of shape [4, 6], got float32 [4, 6]")
    assert "hint: allocate it once, np.empty((4, 6), dtype=np.float16)" in text


def test_wrong_shape(two_outputs):
    _bad(two_outputs, _feeds(two_outputs), {"wide": np.empty((6,), np.int64)},
         "output 'wide'", "int64 array of shape [5], got int64 [6]")


def test_not_contiguous(two_outputs):
    _bad(two_outputs, _feeds(two_outputs), {"half": np.empty((4, 12), np.float16)[:, ::2]},
         "output 'half'", "not C-contiguous")
    _bad(two_outputs, _feeds(two_outputs), {"half": np.empty((6, 4), np.float16).T}, "not C-contiguous")


def test_read_only(two_outputs):
    buffer = np.empty((4, 6), np.float16)
    buffer.flags.writeable = False
    _bad(two_outputs, _feeds(two_outputs), {"half": buffer}, "output 'half'", "read-only")


def test_not_an_array(two_outputs):
    _bad(two_outputs, _feeds(two_outputs), {"half": [[0.0] * 6] * 4}, "output 'half'", "got list")
    _bad(two_outputs, _feeds(two_outputs), 3, "out= must be a mapping", "got int")


def test_overlapping_an_input(two_outputs):
    feeds = _feeds(two_outputs)
    storage = np.zeros(10, np.int32)
    feeds["y"] = storage[:5]
    overlapping = storage.view(np.int64)
    _bad(two_outputs, feeds, {"wide": overlapping}, "output 'wide'", "shares memory with input 'y'")


def test_overlapping_another_buffer(two_outputs):
    storage = np.zeros(64, np.uint8)
    half = storage[:48].view(np.float16).reshape(4, 6)
    wide = storage[24:64].view(np.int64)
    _bad(two_outputs, _feeds(two_outputs), {"half": half, "wide": wide}, "'half' and 'wide' share memory")


def test_one_array_for_two_outputs():
    b = IRBuilder()
    x = b.parameter("x", "f16", "4,6")
    b.result(b.convert(x, "f16"), "a")
    b.result(b.convert(x, "f16"), "b")
    model = build(b)
    same = np.empty((4, 6), np.float16)
    _bad(model, random_feeds(model), [same, same], "outputs 'a' and 'b' share memory", "its own array")


def test_unknown_name_and_name_given_twice(two_outputs):
    text = _bad(two_outputs, _feeds(two_outputs), {"hlaf": np.empty((4, 6), np.float16)},
                "out= names 'hlaf', which is not an output")
    assert "did you mean 'half'?" in text and "half: f16[4,6]" in text
    _bad(two_outputs, _feeds(two_outputs),
         {"half": np.empty((4, 6), np.float16), "half_result": np.empty((4, 6), np.float16)},
         "gives output 'half' twice")


def test_wrong_count_in_a_sequence(two_outputs):
    _bad(two_outputs, _feeds(two_outputs), [np.empty((4, 6), np.float16)],
         "the model has 2 output(s), out= gives 1 array(s)")
    _bad(two_outputs, _feeds(two_outputs), np.empty((4, 6), np.float16), "out= gives 1 array(s)")


def test_aliases_none_entries_and_a_single_array(two_outputs):
    feeds = _feeds(two_outputs)
    plain = two_outputs.run(feeds)
    buffer = np.empty(5, np.int64)
    got = two_outputs.run(feeds, out={"wide_result": buffer, "half": None})  # the Result layer's name
    assert got["wide"] is buffer and same_bits(buffer, plain["wide"])
    assert same_bits(got["half"], plain["half"])
    b = IRBuilder()
    b.result(b.convert(b.parameter("x", "i32", "7"), "f32"), "y")
    single = build(b)
    buffer = np.empty(7, np.float32)
    x = np.arange(7, dtype=np.int32)
    assert single.run([x], out=buffer)["y"] is buffer
    assert single(x, out=(buffer,))["y"] is buffer


def test_subclasses_of_ndarray_are_written(tmp_path):
    """A memory-mapped file as the output buffer."""
    b = IRBuilder()
    b.result(b.convert(b.parameter("x", "i32", "1000"), "f64"), "y")
    model = build(b)
    target = np.lib.format.open_memmap(tmp_path / "y.npy", mode="w+", dtype=np.float64, shape=(1000,))
    x = np.arange(1000, dtype=np.int32)
    assert model.run({"x": x}, out=[target])["y"] is target
    target.flush()
    assert np.array_equal(np.load(tmp_path / "y.npy"), x.astype(np.float64))


# ----------------------------------------------------------------------------- threads


def test_four_threads_with_their_own_buffers():
    b = IRBuilder()
    shape = "1024,1100"
    params = [b.parameter("cond", "boolean", shape), b.parameter("then", "f32", shape),
              b.parameter("else", "f32", shape)]
    sel = b.layer("Select", "opset1", params, attrs={"auto_broadcast": "numpy"}, out_specs=[("f32", shape)])
    b.result(sel, "selected")
    indices = b.parameter("indices", "i32", "500")
    b.result(gather_layer(b, sel, indices, 1, [1024, 500]))
    model = build(b)
    feeds = [random_feeds(model, seed=i, indices=np.random.default_rng(i).integers(-1100, 1100, 500, np.int32))
             for i in range(4)]
    serial = [model.run(f) for f in feeds]
    barrier = threading.Barrier(4)
    failures: list[str] = []

    def work(i: int) -> None:
        buffers = garbage_buffers(model, serial[i], seed=i)
        barrier.wait()
        for _ in range(5):
            got = model.run(feeds[i], out=buffers)
            if not all(got[k] is buffers[k] and same_bits(got[k], serial[i][k]) for k in serial[i]):
                failures.append(f"thread {i}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads) and not failures


def test_dtype_table_is_complete():
    """Every numpy-representable element type of the test builder can be an out= buffer's dtype."""
    b = IRBuilder()
    for et in DTYPE:
        b.result(b.parameter(f"x_{et}", et, "3"), f"r_{et}")
    model = build(b)
    feeds = random_feeds(model)
    check_into(model, feeds, [False] * len(DTYPE))
