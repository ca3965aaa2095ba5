"""DFT-7, IDFT-7, RDFT-9, IRDFT-9: shapes inferred as OpenVINO declares them (static, dynamic and interval dims,
dynamic rank, axes and signal sizes constant or computed at run time), IRErrors naming the layer and port for
bad axes, repeated axes, a last dim other than 2 and mismatched signal sizes, and values within the stated
bound of the CPU plugin (``Node.evaluate`` has no kernel for these operations) and of a float64 DFT written
here as plain sums (for the cases where the CPU plugin fails or differs: signal sizes of -1 in RDFT/IRDFT,
IRDFT reading more points than the input has). STFT-15: the same, with frame size and step constant, computed
at run time or from a shape subgraph, its errors (window longer than the frame, frame longer than the signal,
step below 1, ranks, types), its batch rule, NaN frames, and a torch.stft model as openvino converts it."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset3, opset8, opset9  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.batching import trace_batch  # noqa: E402
from ir_runner.errors import BatchError, IRError  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, cpu_outputs, write_ir  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)
ULP = {"f32": 0.0, "f16": 2.0**-10, "bf16": 2.0**-7}  # one ULP of the narrow types, relative: oracles round too
TYPES = {"f32": (ov.Type.f32, np.float32), "f16": (ov.Type.f16, np.float16), "bf16": (ov.Type.bf16, BF16)}
BUILD = {"DFT": opset9.dft, "IDFT": opset9.idft, "RDFT": opset9.rdft, "IRDFT": opset9.irdft}


def c(value):
    return opset9.constant(np.array(value, np.int64))


def param(shape, et=ov.Type.f32, name="x"):
    return opset9.parameter(ov.PartialShape(shape), et, name=name)


# -- an independent float64 transform: sums over explicit DFT matrices, the reference's steps -----------------

def _matrix(n_out: int, n_in: int, inverse: bool) -> np.ndarray:
    """The DFT matrix reading ``n_in`` points (zero-padded or trimmed to ``n_out``) and giving ``n_out``."""
    k = np.arange(n_out)[:, None]
    n = np.arange(min(n_in, n_out))[None, :]
    w = np.exp((2j if inverse else -2j) * np.pi * k * n / n_out)
    return np.pad(w, ((0, 0), (0, n_in - w.shape[1]))) / (n_out if inverse else 1)


def _along(x: np.ndarray, axis: int, w: np.ndarray) -> np.ndarray:
    return np.moveaxis(np.tensordot(w, np.moveaxis(x, axis, 0), axes=1), 0, axis)


def naive(kind: str, data: np.ndarray, axes, sizes) -> np.ndarray:
    data = data.astype(np.float64)
    if kind == "RDFT":
        x = data.astype(np.complex128)
        rank = x.ndim
    else:
        x = data[..., 0] + 1j * data[..., 1]
        rank = x.ndim
    axes = [a % rank for a in axes]
    sizes = list(sizes) if sizes is not None else [-1] * len(axes)
    if kind == "IRDFT":
        last = axes[-1]
        n_last = 2 * max(x.shape[last] - 1, 0) if sizes[-1] == -1 else sizes[-1]
        for axis, size in zip(axes[:-1], sizes[:-1]):
            x = _along(x, axis, _matrix(x.shape[axis] if size == -1 else size, x.shape[axis], True))
        half = n_last // 2 + 1  # Hermitian extension: read n//2+1 points (zeros past the input), mirror the rest
        read = np.zeros(x.shape[:last] + (half,) + x.shape[last + 1:], np.complex128)
        common = min(half, x.shape[last])
        np.moveaxis(read, last, 0)[:common] = np.moveaxis(x, last, 0)[:common]
        full = np.zeros(x.shape[:last] + (n_last,) + x.shape[last + 1:], np.complex128)
        f, r = np.moveaxis(full, last, 0), np.moveaxis(read, last, 0)
        f[:min(half, n_last)] = r[:min(half, n_last)]
        for j in range(1, n_last - half + 1):
            f[n_last - j] = np.conj(r[j])
        return _along(full, last, _matrix(n_last, n_last, True)).real
    for axis, size in zip(axes, sizes):
        n = x.shape[axis] if size == -1 else size
        x = _along(x, axis, _matrix(n, x.shape[axis], kind == "IDFT"))
    if kind == "RDFT":
        last = axes[-1]
        x = np.moveaxis(np.moveaxis(x, last, 0)[: x.shape[last] // 2 + 1 if x.shape[last] else 0], 0, last)
    return np.stack([x.real, x.imag], axis=-1)


def _points(kind, shape, axes, sizes) -> int:
    rank = len(shape) if kind == "RDFT" else len(shape) - 1
    axes = [a % rank for a in axes]
    sizes = sizes if sizes is not None else [-1] * len(axes)
    return int(np.prod([max(shape[a], 1) if s == -1 else max(s, 1) for a, s in zip(axes, sizes)]) or 1)


def assert_within(got: np.ndarray, want: np.ndarray, points: int, scale: float, eps: float) -> float:
    """``|got - want| <= eps·|want| + points·2⁻²⁰·scale`` (the CPU plugin's f32 error measured up to
    ``2.9·points·2⁻²³·scale`` over 200 random cases); returns the worst error over ``points·2⁻²³·scale``."""
    assert got.shape == want.shape, (got.shape, want.shape)
    g, w = got.astype(np.float64), np.asarray(want, np.float64)
    room = points * 2.0**-20 * scale
    bad = np.abs(g - w) > eps * np.abs(w) + room
    assert not bad.any(), (np.argwhere(bad)[:3], g[bad][:3], w[bad][:3], room)
    return float(np.max(np.abs(g - w), initial=0) / (points * 2.0**-23 * scale)) if scale else 0.0


def _model(kind, shape, axes, sizes, et="f32", tmp_path=None, name="model"):
    x = param(shape, TYPES[et][0])
    args = [x, c(axes)] + ([c(sizes)] if sizes is not None else [])
    node = BUILD[kind](*args)
    return write_ir(node, [x], tmp_path, name), node


def _data(rng, kind, shape, et="f32"):
    return (rng.standard_normal(shape) * 4).astype(TYPES[et][1])


# -- shapes -------------------------------------------------------------------------------------------------

STATIC_CASES = [
    ("DFT", [2, 10, 10, 2], [1, 2], None), ("DFT", [2, 10, 10, 2], [-2, 0], [5, -1]), ("DFT", [4, 2], [0], [9]),
    ("IDFT", [2, 10, 10, 2], [2], [0]), ("IDFT", [3, 7, 2], [-1, -2], [-1, 4]),
    ("RDFT", [8], [0], None), ("RDFT", [2, 9, 7], [-1, 0], None), ("RDFT", [2, 9, 7], [1, 2], [-1, 12]),
    ("RDFT", [4, 6], [-2], [1]), ("RDFT", [4, 6], [1], [0]),
    ("IRDFT", [2, 9, 7, 2], [0, 1], None), ("IRDFT", [2, 9, 7, 2], [1, -3], [-1, -1]), ("IRDFT", [3, 1, 2], [1], None),
    ("IRDFT", [3, 5, 2], [-1], [7]), ("IRDFT", [3, 5, 6, 2], [2, 0], [4, -1]),
]


@pytest.mark.parametrize("kind, shape, axes, sizes", STATIC_CASES)
def test_static_shapes_and_values(kind, shape, axes, sizes, tmp_path):
    path, node = _model(kind, shape, axes, sizes, tmp_path=tmp_path)
    check_inference(path)
    check_output_shapes(path, node)
    x = _data(np.random.default_rng(len(shape)), kind, shape)
    (got,) = ir_runner.load(str(path)).run({"x": x}).values()
    assert_within(got, naive(kind, x, axes, sizes), _points(kind, shape, axes, sizes), np.abs(x).max(), 0)


DYNAMIC_CASES = [
    ("DFT", [-1, "2..8", 2], [0, 1], None), ("DFT", [-1, "2..8", 2], [1], [5]), ("DFT", ov.PartialShape.dynamic(),
                                                                              [1], [5]),
    ("IDFT", ["1..", 5, -1], [-2], [-1]), ("RDFT", [-1, "3..9"], [1], None), ("RDFT", [4, "0..7"], [0, 1], [3, -1]),
    ("RDFT", ov.PartialShape.dynamic(), [0], None), ("IRDFT", [-1, "1..5", 2], [1], None),
    ("IRDFT", [3, "3..", 2], [-1], None), ("IRDFT", ["2..4", 3, 2], [0, 1], [-1, 6]), ("IRDFT", [2, 0, 2], [1], None),
]


@pytest.mark.parametrize("kind, shape, axes, sizes", DYNAMIC_CASES)
def test_dynamic_and_interval_dims_infer_as_openvino(kind, shape, axes, sizes, tmp_path):
    path, node = _model(kind, shape, axes, sizes, tmp_path=tmp_path)
    check_inference(path)
    check_output_shapes(path, node)


def _runtime_model(kind, tmp_path, sized):
    """Axes (and signal sizes) computed at run time from a Parameter."""
    x = param([3, 4, 6, 2] if kind != "RDFT" else [3, 4, 6])
    axes = param([2], ov.Type.i64, "axes")
    args = [x, axes] + ([param([2], ov.Type.i32, "sizes")] if sized else [])
    node = BUILD[kind](*args)
    return write_ir(node, [x] + args[1:][:1 + sized], tmp_path), node


@pytest.mark.parametrize("kind", list(BUILD))
@pytest.mark.parametrize("sized", [False, True])
def test_axes_and_sizes_computed_at_run_time_are_planned_per_value(kind, sized, tmp_path):
    path, node = _runtime_model(kind, tmp_path, sized)
    check_inference(path)
    check_output_shapes(path, node)
    model = ir_runner.load(str(path))
    rng = np.random.default_rng(5)
    shape = (3, 4, 6, 2) if kind != "RDFT" else (3, 4, 6)
    x = _data(rng, kind, shape)
    for axes, sizes in (([0, 2], [5, -1]), ([-1, 1], [3, 4]), ([2, 0], [-1, -1])):
        feeds = {"x": x, "axes": np.array(axes, np.int64)}
        if sized:
            feeds["sizes"] = np.array(sizes, np.int32)
        got = model.run(feeds)
        (value,) = got.values()
        assert_within(value, naive(kind, x, axes, sizes if sized else None),
                      _points(kind, shape, axes, sizes if sized else None), np.abs(x).max(), 0)


def test_signal_size_bounds_from_a_shape_subgraph(tmp_path):
    """DFT takes the bounds of a computed signal size (an interval dim), RDFT only constants (dynamic)."""
    y = param(["2..5", -1], name="y")
    n = opset8.gather(opset3.shape_of(y), c([0]), c(0))
    x = param([3, 4, 2])
    dft = opset9.dft(x, c([0, 1]), opset8.concat([c([-1]), n], 0))
    rdft = opset9.rdft(param([3, 4], name="r"), c([1]), n)
    path = write_ir([dft, rdft], [x, y, rdft.input_value(0).get_node()], tmp_path)
    check_inference(path)
    model = ir_runner.load(str(path))
    assert [str(o.partial_shape) for o in model.outputs] == ["[3,2..5,2]", "[3,?,2]"]
    rng = np.random.default_rng(2)
    feeds = {"x": _data(rng, "DFT", (3, 4, 2)), "y": np.zeros((4, 1), np.float32), "r": _data(rng, "RDFT", (3, 4))}
    got = list(model.run(feeds).values())
    assert_within(got[0], naive("DFT", feeds["x"], [0, 1], [-1, 4]), 12, np.abs(feeds["x"]).max(), 0)
    assert_within(got[1], naive("RDFT", feeds["r"], [1], [4]), 4, np.abs(feeds["r"]).max(), 0)


# -- errors -------------------------------------------------------------------------------------------------

def _bad(tmp_path, kind, shape, axes, sizes=None, et="f32", axes_type=None):
    b = IRBuilder()
    x = b.parameter("x", et, ",".join(map(str, shape)))
    inputs = [x, b.const("axes", np.array(axes, axes_type or np.int64))]
    if sizes is not None:
        inputs.append(b.const("sizes", np.array(sizes, np.int64)))
    version = "opset7" if kind in ("DFT", "IDFT") else "opset9"
    layer = b.layer(kind, version, inputs, name="fourier", out_specs=[("f32", "")])
    b.result(layer)
    return b.write(tmp_path)


@pytest.mark.parametrize("kind, shape, axes, sizes, message, port", [
    ("DFT", [3, 4, 2], [2], None, r"axis=2 is out of the range \[-2, 1\]", "axes"),
    ("IDFT", [3, 4, 2], [-3], None, r"axis=-3 is out of the range \[-2, 1\]", "axes"),
    ("RDFT", [3, 4], [-3], None, r"axis=-3 is out of the range \[-2, 1\]", "axes"),
    ("DFT", [3, 4, 2], [0, -2], None, r"axes must be unique, got \[0, -2\]", "axes"),
    ("IRDFT", [3, 4, 2], [1, 1], None, r"axes must be unique", "axes"),
    ("DFT", [3, 4, 3], [0], None, r"last dim of data must be 2", "data"),
    ("IRDFT", [3, 4], [0], None, r"last dim of data must be 2", "data"),
    ("DFT", [2], [0], None, r"rank 2 or more", "data"),
    ("DFT", [3, 4, 2], [0, 1], [5], r"signal_size has 1 elements but axes has 2", "signal_size"),
    ("RDFT", [3, 4], [0, 1, 1], None, r"3 axes for data \[3,4\]: at most 2", "axes"),
    ("DFT", [3, 4, 2], [0], [-2], r"signal_size entries must be -1 or non-negative", "signal_size"),
])
def test_bad_layers_are_refused_naming_the_layer_and_port(kind, shape, axes, sizes, message, port, tmp_path):
    path = _bad(tmp_path, kind, shape, axes, sizes)
    with pytest.raises(IRError, match=message) as info:
        ir_runner.load(str(path))
    text = str(info.value)
    assert "fourier" in text and kind in text and port in text, text


def test_bad_element_types_are_refused(tmp_path):
    with pytest.raises(IRError, match=r"data must be f32, f16 or bf16, got f64"):
        ir_runner.load(str(_bad(tmp_path, "DFT", [3, 2], [0], et="f64")))
    with pytest.raises(IRError, match=r"axes must be i32 or i64, got u8"):
        ir_runner.load(str(_bad(tmp_path, "RDFT", [3, 2], [0], axes_type=np.uint8)))


def test_bad_axes_computed_at_run_time_are_refused_when_run(tmp_path):
    path, _ = _runtime_model("DFT", tmp_path, False)
    model = ir_runner.load(str(path))
    x = np.zeros((3, 4, 6, 2), np.float32)
    with pytest.raises(IRError, match=r"axes must be unique"):
        model.run({"x": x, "axes": np.array([0, -3], np.int64)})
    with pytest.raises(IRError, match=r"axis=3 is out of the range"):
        model.run({"x": x, "axes": np.array([0, 3], np.int64)})


# -- values against the CPU plugin ---------------------------------------------------------------------------

CPU_CASES = [
    ("DFT", [4, 6, 2], [0, 1], None), ("DFT", [16, 2], [0], None), ("DFT", [7, 5, 2], [1], [8]),
    ("DFT", [7, 5, 2], [-1, 0], [3, -1]), ("DFT", [30, 2], [0], [64]), ("DFT", [2, 3, 5, 2], [2, 0], [4, 5]),
    ("IDFT", [4, 6, 2], [1, 0], None), ("IDFT", [2, 3, 5, 2], [2, 0], [4, 5]), ("IDFT", [9, 3, 2], [0], [4]),
    ("RDFT", [4, 6], [1], None), ("RDFT", [4, 6], [0, 1], None), ("RDFT", [5, 7], [0, 1], [3, 4]),
    ("RDFT", [2, 5, 5], [0, -1], None), ("RDFT", [33], [0], None),
    ("IRDFT", [4, 6, 2], [1], None), ("IRDFT", [4, 4, 2], [0, 1], None), ("IRDFT", [5, 7, 2], [-1], [10]),
    ("IRDFT", [5, 7, 2], [-1], [13]), ("IRDFT", [5, 7, 2], [0, 1], [3, 4]), ("IRDFT", [2, 5, 5, 2], [0, -1], None),
]


@pytest.mark.parametrize("et", list(TYPES))
def test_values_within_the_bound_of_the_cpu_plugin(et, tmp_path):
    rng = np.random.default_rng(7)
    eps = ULP[et]
    for i, (kind, shape, axes, sizes) in enumerate(CPU_CASES):
        path, _ = _model(kind, shape, axes, sizes, et, tmp_path, f"m{i}")
        check_inference(path)
        x = _data(rng, kind, shape, et)
        got = ir_runner.load(str(path)).run({"x": x})
        (value,) = got.values()
        assert value.dtype == x.dtype
        (want,) = cpu_outputs(path, {"x": x})
        scale = float(np.abs(x.astype(np.float64)).max())
        assert_within(value, want.view(value.dtype) if want.dtype != value.dtype else want,
                      _points(kind, shape, axes, sizes), scale, eps)
        assert_within(value, naive(kind, x, axes, sizes), _points(kind, shape, axes, sizes), scale, eps)


def test_cases_the_cpu_plugin_gets_wrong_match_the_reference_steps(tmp_path):
    """RDFT/IRDFT signal sizes of -1 (the CPU plugin fails to compile them) and IRDFT reading more points than
    the input has (the CPU plugin reads past the input): the reference's steps, written as sums here."""
    rng = np.random.default_rng(3)
    for i, (kind, shape, axes, sizes) in enumerate([
            ("RDFT", [3, 9], [1, 0], [-1, 5]), ("RDFT", [5, 7], [-1], [10]), ("IRDFT", [3, 9, 2], [1, 0], [-1, 5]),
            ("IRDFT", [5, 7, 2], [1], [20]), ("IRDFT", [5, 7, 2], [1], [14]), ("IRDFT", [5, 7, 2], [1], [3])]):
        path, _ = _model(kind, shape, axes, sizes, tmp_path=tmp_path, name=f"m{i}")
        check_inference(path)
        x = _data(rng, kind, shape)
        (value,) = ir_runner.load(str(path)).run({"x": x}).values()
        assert_within(value, naive(kind, x, axes, sizes), _points(kind, shape, axes, sizes), np.abs(x).max(), 0)


def test_empty_tensors_and_special_values(tmp_path):
    rng = np.random.default_rng(4)
    for i, (kind, shape, axes, sizes, feed) in enumerate([
            ("DFT", [0, 3, 2], [1], None, (0, 3, 2)), ("DFT", [3, 4, 2], [1], [0], (3, 4, 2)),
            ("RDFT", [3, 0], [1], None, (3, 0)), ("RDFT", [0, 4], [0], [3], (0, 4)),
            ("IRDFT", [3, 1, 2], [1], None, (3, 1, 2)), ("IRDFT", [2, 0, 2], [1], [4], (2, 0, 2)),
            ("IDFT", [2, 0, 2], [1], [3], (2, 0, 2))]):
        path, node = _model(kind, shape, axes, sizes, tmp_path=tmp_path, name=f"m{i}")
        check_inference(path)
        x = _data(rng, kind, feed)
        (value,) = ir_runner.load(str(path)).run({"x": x}).values()
        assert value.shape == tuple(node.get_output_shape(0))
        assert not value.any()  # zeros: nothing read, or padding only
    path, _ = _model("DFT", [4, 2], [0], None, tmp_path=tmp_path, name="nan")
    for x in ([[1, 0], [np.nan, 0], [2, 0], [0, 0]], [[1, 0], [0, 0], [0, -np.inf], [0, 0]]):
        x = np.array(x, np.float32)
        (value,) = ir_runner.load(str(path)).run({"x": x}).values()
        # the CPU plugin: all NaN for a NaN; NaN and ±inf for an infinity (ir-run: NaN, docs/semantics.md)
        assert np.isnan(value).all() and not np.isfinite(cpu_outputs(path, {"x": x})[0]).any()
    path, _ = _model("IRDFT", [2, 3, 2], [1], None, tmp_path=tmp_path, name="nan_rows")
    x = np.ones((2, 3, 2), np.float32)
    x[1, 2, 0] = np.nan
    (value,) = ir_runner.load(str(path)).run({"x": x}).values()
    assert np.isfinite(value[0]).all() and np.isnan(value[1]).all()


def test_bf16_rounds_once_from_float64():
    from ir_runner.ops.toolkit.numeric import round_from_f64 as _round

    y = np.array([1 + 2.0**-8 + 2.0**-30, 1 + 2.0**-8, 1 + 3 * 2.0**-8, -(1 + 2.0**-8 + 2.0**-40), 1e300, np.nan,
                  -np.inf, 2.0**-130 + 2.0**-170], np.float64)
    got = _round(y, BF16).astype(np.float64)
    want = [1 + 2.0**-7, 1.0, 1 + 2.0**-6, -(1 + 2.0**-7), np.inf, np.nan, -np.inf, 2.0**-130]
    np.testing.assert_array_equal(got, want)


# -- batch ----------------------------------------------------------------------------------------------------

def test_batch_axis_kept_unless_transformed(tmp_path):
    path, _ = _model("RDFT", [-1, 8], [1], None, tmp_path=tmp_path)
    model = ir_runner.load(str(path))
    assert trace_batch(model.inference, [0]) == (0,)
    x = _data(np.random.default_rng(1), "RDFT", (6, 8))
    whole = model.run({"x": x})
    (name,) = whole
    blocks = [model.run({"x": x[i:i + 2]})[name] for i in range(0, 6, 2)]
    np.testing.assert_array_equal(np.concatenate(blocks), whole[name])
    for i, (kind, shape, axes, axis, message) in enumerate([
            ("DFT", [-1, 5, 2], [0, 1], 0, r"transforms over the batch axis \(axis 0\)"),
            ("IRDFT", [-1, 5, 2], [-2], 0, r"transforms over the batch axis"),
            ("IDFT", [4, 5, -1], [0], 2, r"real and imaginary parts")]):
        path, _ = _model(kind, shape, axes, None, tmp_path=tmp_path, name=f"m{i}")
        with pytest.raises(BatchError, match=message):
            trace_batch(ir_runner.load(str(path)).inference, [axis])
    path, _ = _runtime_model("DFT", tmp_path, False)
    with pytest.raises(BatchError, match=r"only known at run time"):
        trace_batch(ir_runner.load(str(path)).inference, [0, None])
    path, _ = _model("IDFT", [3, -1, 2], [0], None, tmp_path=tmp_path, name="kept")
    assert trace_batch(ir_runner.load(str(path)).inference, [1]) == (1,)


# -- differential -------------------------------------------------------------------------------------------

def _random_case(rng):
    kind = str(rng.choice(list(BUILD)))
    rank = int(rng.integers(1, 4))
    dims = [int(d) for d in rng.integers(1, 9, size=rank)]
    shape = dims if kind == "RDFT" else dims + [2]
    n_axes = int(rng.integers(1, rank + 1))
    axes = [int(a) for a in rng.permutation(rank)[:n_axes]]
    axes = [a - rank if rng.random() < 0.4 else a for a in axes]
    sizes = None
    if rng.random() < 0.6:
        sizes = [int(rng.integers(1, 12)) for _ in axes]
    et = str(rng.choice(list(TYPES)))
    return kind, shape, axes, sizes, et


def _cpu_handles(kind, shape, axes, sizes) -> bool:
    """The CPU plugin fails RDFT/IRDFT with signal sizes past the input (IRDFT: past n//2+1 points on the last
    axis), and crashes the process on IRDFT of an empty output (a last axis of length 1)."""
    rank = len(shape) if kind == "RDFT" else len(shape) - 1
    last = axes[-1] % rank
    if kind == "IRDFT" and (sizes is None or sizes[-1] == -1) and shape[last] == 1:
        return False
    if sizes is None:
        return True
    if kind == "RDFT":
        return all(s <= shape[a % rank] for a, s in zip(axes, sizes))
    if kind == "IRDFT":
        return sizes[-1] // 2 + 1 <= shape[last] and all(s <= shape[a % rank] for a, s in zip(axes[:-1], sizes))
    return True


@pytest.mark.parametrize("seed", range(30))
def test_differential(seed, tmp_path):
    rng = np.random.default_rng(seed)
    kind, shape, axes, sizes, et = _random_case(rng)
    path, node = _model(kind, shape, axes, sizes, et, tmp_path)
    check_inference(path)
    x = _data(rng, kind, shape, et)
    (value,) = ir_runner.load(str(path)).run({"x": x}).values()
    assert value.shape == tuple(node.get_output_shape(0)) and value.dtype == x.dtype
    eps = ULP[et]
    points, scale = _points(kind, shape, axes, sizes), float(np.abs(x.astype(np.float64)).max())
    assert_within(value, naive(kind, x, axes, sizes), points, scale, eps)
    if _cpu_handles(kind, shape, axes, sizes):
        (want,) = cpu_outputs(path, {"x": x})
        assert_within(value, want.view(value.dtype) if want.dtype != value.dtype else want, points, scale, eps)


# -- a model converted from torch -----------------------------------------------------------------------------

TORCH_FFT = Path(__file__).parent.parent / "data" / "fourier" / "torch_fft.xml"


def test_torch_fft_model_converted_by_openvino(tmp_path):
    """``torch.fft.rfft`` (abs), ``irfft(0.5 * spectrum, n=x.shape[-1])`` and ``fft2`` of a complex cast, as
    ``openvino.convert_model`` (2026.4.1, torch 2.13) wrote them: RDFT, IRDFT with signal sizes from a shape
    subgraph, DFT; dynamic input shape ``[?,?,?]``."""
    check_inference(TORCH_FFT)
    model = ir_runner.load(str(TORCH_FFT))
    rng = np.random.default_rng(9)
    for shape in ((2, 3, 20), (1, 4, 7), (3, 1, 1)):
        x = rng.standard_normal(shape).astype(np.float32)
        mag, back, full = model.run({"x": x}).values()
        spectrum = np.fft.rfft(x.astype(np.float64), axis=-1)
        want_full = np.fft.fft2(x.astype(np.float64))
        scale = np.abs(x).max()
        assert_within(mag, np.abs(spectrum), shape[-1], scale, 0)
        assert_within(back, np.fft.irfft(0.5 * spectrum, n=shape[-1], axis=-1), shape[-1], scale, 0)
        assert_within(full, np.stack([want_full.real, want_full.imag], -1), shape[-1] * shape[-2], scale, 0)
        for got, want in zip((mag, back, full), cpu_outputs(TORCH_FFT, {"x": x})):
            assert_within(got, want, shape[-1] * shape[-2], scale, 0)


# == STFT-15 ===================================================================================================

from openvino import opset15  # noqa: E402

STFT_TYPES = dict(TYPES, f64=(ov.Type.f64, np.float64))


def naive_stft(x: np.ndarray, window: np.ndarray, size: int, step: int, transpose: bool) -> np.ndarray:
    """The spec's steps in float64: frames, the window centred in ``size`` zeros, a DFT matrix per frame."""
    x = np.asarray(x, np.float64)
    padded = np.zeros(size)
    left = (size - len(window)) // 2
    padded[left:left + len(window)] = np.asarray(window, np.float64)
    starts = range(0, x.shape[-1] - size + 1, step)
    frames = np.stack([x[..., s:s + size] * padded for s in starts], axis=-2)
    y = _along(frames, frames.ndim - 1, _matrix(size, size, False)[: size // 2 + 1])
    out = np.stack([y.real, y.imag], axis=-1)
    return np.swapaxes(out, -3, -2) if transpose else out


def _stft_model(signal, window, size, step, transpose, et="f32", tmp_path=None, name="model"):
    """STFT of Parameters ``x`` (signal) and ``w`` (window), frame size and step constant (an int) or Parameters
    ``size``/``step`` (a type name: ``"i32"``)."""
    x = param(signal, STFT_TYPES[et][0])
    w = param(window, STFT_TYPES[et][0], "w")
    params = [x, w]
    inputs = []
    for value, name_ in ((size, "size"), (step, "step")):
        if isinstance(value, str):
            inputs.append(param([], ov.Type.i32 if value == "i32" else ov.Type.i64, name_))
            params.append(inputs[-1])
        else:
            inputs.append(opset15.constant(np.array(value, np.int32 if name_ == "step" else np.int64)))
    node = opset15.stft(x, w, *inputs, transpose)
    return write_ir(node, params, tmp_path, name), node


def _stft_run(path, x, w, **scalars):
    feeds = {"x": x, "w": w, **{k: np.array(v, np.int32) for k, v in scalars.items()}}
    (value,) = ir_runner.load(str(path)).run(feeds).values()
    return value


def _stft_scale(x, w) -> float:
    return float(np.abs(x.astype(np.float64)).max(initial=0) * np.abs(w.astype(np.float64)).max(initial=0))


STFT_STATIC = [  # OpenVINO's type_prop cases (signal, window, frame size, step, transpose_frames), and corners
    ([16], [16], 16, 16, True), ([48], [16], 16, 16, False), ([56], [7], 11, 3, False), ([56], [7], 11, 3, True),
    ([48], [8], 16, 4, True), ([1, 16], [16], 16, 16, True), ([1, 48], [16], 16, 16, False),
    ([2, 48], [8], 16, 4, True), ([2, 48], [5], 9, 100, True), ([4, 48], [7], 11, 3, True),
    ([4, 56], [7], 11, 3, False),
    ([3, 5], [1], 1, 1, False), ([3, 9], [4], 9, 2, True), ([2, 10], [3], 6, 7, False), ([0, 12], [4], 5, 2, True),
]


@pytest.mark.parametrize("signal, window, size, step, transpose", STFT_STATIC)
def test_stft_static_shapes_and_values(signal, window, size, step, transpose, tmp_path):
    path, node = _stft_model(signal, window, size, step, transpose, tmp_path=tmp_path)
    check_inference(path)
    check_output_shapes(path, node)
    rng = np.random.default_rng(len(signal) + size)
    x, w = _data(rng, "RDFT", signal), _data(rng, "RDFT", window)
    got = _stft_run(path, x, w)
    assert got.dtype == np.float32 and got.shape == tuple(node.get_output_shape(0))
    assert_within(got, naive_stft(x, w, size, step, transpose), size, _stft_scale(x, w), 0)


STFT_DYNAMIC = [  # type_prop's dynamic cases, and intervals through frames = (L - size) // step + 1
    ([-1], [7], 11, 3, True), (["48..56"], [7], 11, 3, True), ([-1, 56], [7], 11, 3, False),
    ([-1, -1], [7], 11, 3, False), ([-1, -1], [7], 11, 3, True), ([-1, "48..56"], [7], 11, 3, True),
    (["2..4", -1], [7], 11, 3, True), (ov.PartialShape.dynamic(), [7], 11, 3, True),
    (ov.PartialShape.dynamic(), ov.PartialShape.dynamic(), 11, 3, False), ([-1, "2..20"], [7], 11, 3, False),
    ([3, "12.."], [-1], 11, 3, False), ([4, "0..30"], ["1..8"], 8, 5, True), ([4, "0..30"], ["0..40"], 8, 5, True),
    (["5..", 33], ov.PartialShape.dynamic(), 33, 1, False),
]


@pytest.mark.parametrize("signal, window, size, step, transpose", STFT_DYNAMIC)
def test_stft_dynamic_and_interval_dims_infer_as_openvino(signal, window, size, step, transpose, tmp_path):
    path, node = _stft_model(signal, window, size, step, transpose, tmp_path=tmp_path)
    check_inference(path)
    check_output_shapes(path, node)


@pytest.mark.parametrize("signal, kinds", [([2, 30], ("i32", "i64")), ([30], ("i64", "i32")), ([-1, "9.."], ("i64", 3)),
                                           ([2, 30], (8, "i32"))])
def test_stft_frame_size_and_step_computed_at_run_time_are_planned_per_value(signal, kinds, tmp_path):
    path, node = _stft_model(signal, [-1], *kinds, True, tmp_path=tmp_path)
    check_inference(path)
    check_output_shapes(path, node)
    model = ir_runner.load(str(path))
    rng = np.random.default_rng(6)
    shape = [30 if d == "9.." else (2 if d == -1 else d) for d in signal]
    x = _data(rng, "RDFT", shape)
    for size, step, window in ((8, 3, 5), (9, 4, 9), (30, 1, 2), (1, 7, 1)):
        size = kinds[0] if isinstance(kinds[0], int) else size
        step = kinds[1] if isinstance(kinds[1], int) else step
        w = _data(rng, "RDFT", [min(window, size)])
        feeds = {"x": x, "w": w, **{n: np.array(v, np.int64 if k == "i64" else np.int32)
                                     for n, v, k in (("size", size, kinds[0]), ("step", step, kinds[1]))
                                     if isinstance(k, str)}}
        (got,) = model.run(feeds).values()
        assert_within(got, naive_stft(x, w, size, step, True), size, _stft_scale(x, w), 0)


def test_stft_frame_size_from_a_shape_subgraph(tmp_path):
    """frame_size = the window's length and frame_step another input's (ShapeOf -> Gather): constants for
    static shapes (OpenVINO folds them), computed at run time for dynamic ones."""
    outputs, params = [], []
    for window, steps in (([6], [4]), ([-1], [-1])):
        x, w, s = param([2, 25], name=f"x{len(params)}"), param(window, name=f"w{len(params)}"), \
            param(steps, name=f"s{len(params)}")
        size = opset8.gather(opset3.shape_of(w), c(0), c(0))
        step = opset8.gather(opset3.shape_of(s, "i32"), c(0), c(0))
        outputs.append(opset15.stft(x, w, size, step, False))
        params += [x, w, s]
    path = write_ir(outputs, params, tmp_path)
    check_inference(path)
    model = ir_runner.load(str(path))
    assert [str(o.partial_shape) for o in model.outputs] == \
        [str(n.get_output_partial_shape(0)).replace(" ", "") for n in outputs] == ["[2,5,4,2]", "[2,?,?,2]"]
    rng = np.random.default_rng(8)
    x, w6, w = _data(rng, "RDFT", (2, 25)), _data(rng, "RDFT", (6,)), _data(rng, "RDFT", (10,))
    got = list(model.run({"x0": x, "w0": w6, "s0": np.zeros(4, np.float32), "x3": x, "w3": w,
                          "s3": np.zeros(3, np.float32)}).values())
    assert_within(got[0], naive_stft(x, w6, 6, 4, False), 6, _stft_scale(x, w6), 0)
    assert_within(got[1], naive_stft(x, w, 10, 3, False), 10, _stft_scale(x, w), 0)
    for want, value in zip(cpu_outputs(path, {"x0": x, "w0": w6, "s0": np.zeros(4, np.float32), "x3": x, "w3": w,
                                              "s3": np.zeros(3, np.float32)}), got):
        assert_within(value, want, 10, _stft_scale(x, w), 0)


# -- STFT errors ----------------------------------------------------------------------------------------------

def _bad_stft(tmp_path, signal="2,20", window="5", size=8, step=3, et="f32", window_et=None, size_type=np.int64,
              size_shape=()):
    b = IRBuilder()
    x = b.parameter("x", et, signal)
    w = b.parameter("w", window_et or et, window)
    inputs = [x, w, b.const("size", np.full(size_shape, size, size_type)), b.const("step", np.array(step, np.int64))]
    layer = b.layer("STFT", "opset15", inputs, name="spectrogram", attrs={"transpose_frames": "false"},
                    out_specs=[(et, "")])
    b.result(layer)
    return b.write(tmp_path)


@pytest.mark.parametrize("kwargs, message, port", [
    ({"window": "9"}, r"the window has 9 points but must have 1 to frame_size=8", "window"),
    ({"window": "0"}, r"the window has 0 points", "window"),
    ({"size": 21}, r"frame_size is 21 but must be in the range \[1, 20\]", "frame_size"),
    ({"signal": "2,4..12", "size": 13}, r"frame_size is 13 but must be in the range \[1, 4..12\]", "frame_size"),
    ({"size": 0}, r"frame_size is 0 but must be in the range", "frame_size"),
    ({"size": -3}, r"frame_size is -3", "frame_size"),
    ({"step": 0}, r"frame_step is 0 but must be greater than zero", "frame_step"),
    ({"step": -1}, r"frame_step is -1", "frame_step"),
    ({"signal": "2,3,20"}, r"signal must be 1-D \[signal_size\] or 2-D \[batch, signal_size\], got \[2,3,20\]",
     "signal"),
    ({"signal": ""}, r"signal must be 1-D", "signal"),
    ({"window": "1,5"}, r"window must be 1-D \[window_size\]", "window"),
    ({"size_shape": (1,)}, r"frame_size must be a scalar, got \[1\]", "frame_size"),
    ({"et": "i32"}, r"signal must be f64, f32, f16 or bf16, got i32", "signal"),
    ({"window_et": "f16"}, r"window must be a floating type matching the signal's \(f32\), got f16", "window"),
    ({"window_et": "boolean"}, r"window must be a floating type", "window"),
    ({"size_type": np.int8}, r"frame_size must be i32 or i64, got i8", "frame_size"),
    ({"size_type": np.float32}, r"frame_size must be i32 or i64, got f32", "frame_size"),
])
def test_stft_bad_layers_are_refused_naming_the_layer_and_port(kwargs, message, port, tmp_path):
    with pytest.raises(IRError, match=message) as info:
        ir_runner.load(str(_bad_stft(tmp_path, **kwargs)))
    text = str(info.value)
    assert "spectrogram" in text and "STFT-15" in text and f"({port})" in text, text


def test_stft_bad_values_computed_at_run_time_are_refused_when_run(tmp_path):
    path, _ = _stft_model([2, 20], [-1], "i32", "i32", False, tmp_path=tmp_path)
    model = ir_runner.load(str(path))
    x, w = np.zeros((2, 20), np.float32), np.ones(6, np.float32)
    for size, step, window, message in ((21, 2, w, r"frame_size is 21 but must be in the range \[1, 20\]"),
                                        (8, 0, w, r"frame_step is 0"), (5, 2, w, r"the window has 6 points"),
                                        (0, 2, w[:0], r"frame_size is 0")):
        with pytest.raises(IRError, match=message) as info:
            model.run({"x": x, "w": window, "size": np.array(size, np.int32), "step": np.array(step, np.int32)})
        assert "STFT-15" in str(info.value)


# -- STFT values against the CPU plugin ----------------------------------------------------------------------

def _random_stft(rng):
    batched = rng.random() < 0.6
    length = int(rng.integers(1, 40))
    size = int(rng.integers(1, length + 1))
    window = int(rng.integers(1, size + 1))
    step = int(rng.integers(1, 12))
    signal = [int(rng.integers(1, 4)), length] if batched else [length]
    return signal, window, size, step, bool(rng.random() < 0.5), str(rng.choice(list(STFT_TYPES)))


@pytest.mark.parametrize("seed", range(30))
def test_stft_differential(seed, tmp_path):
    rng = np.random.default_rng(100 + seed)
    signal, window, size, step, transpose, et = _random_stft(rng)
    path, node = _stft_model(signal, [window], size, step, transpose, et, tmp_path)
    check_inference(path)
    dtype = STFT_TYPES[et][1]
    x, w = (rng.standard_normal(signal) * 4).astype(dtype), rng.uniform(-1, 2, window).astype(dtype)
    got = _stft_run(path, x, w)
    assert got.shape == tuple(node.get_output_shape(0)) and got.dtype == x.dtype
    eps, scale = ULP.get(et, 0.0), _stft_scale(x, w)
    assert_within(got, naive_stft(x, w, size, step, transpose), size, scale, eps)
    (want,) = cpu_outputs(path, {"x": x, "w": w})
    assert_within(got, want.view(got.dtype) if want.dtype != got.dtype else want, size, scale, eps)


def test_stft_special_values(tmp_path):
    """A NaN or infinity makes every output of its frames NaN (the reference multiplies every sample by the padded
    window and transforms the frame); the CPU plugin makes the same frames non-finite, but not every output: a
    NaN at a frame's first sample (here a zero of the padding) leaves the imaginary parts finite."""
    path, _ = _stft_model([2, 20], [5], 8, 3, True, tmp_path=tmp_path)
    x, w = np.ones((2, 20), np.float32), np.ones(5, np.float32)
    x[0, 9], x[1, 4] = np.nan, np.inf
    got = _stft_run(path, x, w)
    (cpu,) = cpu_outputs(path, {"x": x, "w": w})
    frames_nan = np.isnan(got).all(axis=(1, 3))
    assert (frames_nan == [[False, True, True, True, False], [True, True, False, False, False]]).all()
    assert (~np.isfinite(cpu).all(axis=(1, 3)) == frames_nan).all()
    assert_within(got[~np.isnan(got)], cpu[~np.isnan(got)], 8, 1.0, 0)
    x = np.ones((2, 20), np.float32)
    x[0, 0] = np.nan
    got = _stft_run(path, x, w)
    (cpu,) = cpu_outputs(path, {"x": x, "w": w})
    assert np.isnan(got[0, :, 0]).all() and np.isfinite(np.delete(got, 0, axis=2)).all()
    assert np.isnan(cpu[0, :, 0, 0]).all() and np.isfinite(cpu[0, :, 0, 1]).all()  # (docs/semantics.md)
    assert np.isfinite(np.delete(cpu, 0, axis=2)).all()


# -- STFT batch ----------------------------------------------------------------------------------------------

def test_stft_batch_axis_is_the_signals_batch(tmp_path):
    path, _ = _stft_model([-1, 24], [6], 8, 4, False, tmp_path=tmp_path)
    model = ir_runner.load(str(path))
    assert trace_batch(model.inference, [0, None]) == (0,)
    rng = np.random.default_rng(11)
    x, w = _data(rng, "RDFT", (6, 24)), _data(rng, "RDFT", (6,))
    whole = _stft_run(path, x, w)
    np.testing.assert_array_equal(np.concatenate([_stft_run(path, x[i:i + 2], w) for i in range(0, 6, 2)]), whole)
    with pytest.raises(BatchError, match=r"the batch axis \(axis 1\) is the signal's samples"):
        trace_batch(model.inference, [1, None])
    with pytest.raises(BatchError, match=r"window, frame size or frame step come from the batched data"):
        trace_batch(model.inference, [0, 0])
    path, _ = _stft_model([-1], [6], 8, 4, True, tmp_path=tmp_path, name="one")
    with pytest.raises(BatchError, match=r"axis 0\) is the signal's samples"):
        trace_batch(ir_runner.load(str(path)).inference, [0, None])


TORCH_STFT = Path(__file__).parent.parent / "data" / "fourier" / "torch_stft.xml"


def test_torch_stft_model_converted_by_openvino():
    """``torch.stft(x, n_fft=16, hop_length=4, win_length=12, window=torch.hann_window(12), center=False).abs()``
    and ``torch.view_as_real(torch.stft(x, n_fft=8, hop_length=3, window=torch.ones(8), center=True,
    pad_mode="reflect"))`` as ``openvino.convert_model`` (2026.4.1, torch 2.13) wrote them: STFT with
    transpose_frames, a window shorter than the frame, reflect padding before it; input shape ``[?,?]``."""
    check_inference(TORCH_STFT)
    model = ir_runner.load(str(TORCH_STFT))
    assert [str(o.partial_shape) for o in model.outputs] == ["[?,9,1..]", "[?,5,1..,2]"]
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(12) / 12)
    rng = np.random.default_rng(12)
    for shape in ((2, 50), (1, 16), (3, 41)):
        x = rng.standard_normal(shape).astype(np.float32)
        mag, pairs = model.run({"x": x}).values()
        scale = float(np.abs(x).max())
        want = naive_stft(x, hann, 16, 4, True)
        assert_within(mag, np.hypot(want[..., 0], want[..., 1]), 16, scale, 0)
        assert_within(pairs, naive_stft(np.pad(x, ((0, 0), (4, 4)), mode="reflect"), np.ones(8), 8, 3, True), 8,
                      scale, 0)
        for got, want in zip((mag, pairs), cpu_outputs(TORCH_STFT, {"x": x})):
            assert_within(got, want, 16, scale, 0)
    with pytest.raises(IRError, match=r"frame_size is 16 but must be in the range \[1, 15\]") as info:
        model.run({"x": np.zeros((2, 15), np.float32)})
    assert "aten::stft/STFT" in str(info.value)
