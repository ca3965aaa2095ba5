"""DFT-7, IDFT-7, RDFT-9, IRDFT-9: shapes inferred as OpenVINO declares them (static, dynamic and interval dims,
dynamic rank, axes and signal sizes constant or computed at run time), IRErrors naming the layer and port for
bad axes, repeated axes, a last dim other than 2 and mismatched signal sizes, and values within the stated
bound of the CPU plugin (``Node.evaluate`` has no kernel for these operations) and of a float64 DFT written
here as plain sums (for the cases where the CPU plugin fails or differs: signal sizes of -1 in RDFT/IRDFT,
IRDFT reading more points than the input has)."""

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
    ("DFT", [3, 4, 2], [2], None, r"axis 2 is out of the range \[-2, 1\]", "axes"),
    ("IDFT", [3, 4, 2], [-3], None, r"axis -3 is out of the range \[-2, 1\]", "axes"),
    ("RDFT", [3, 4], [-3], None, r"axis -3 is out of the range \[-2, 1\]", "axes"),
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
    with pytest.raises(IRError, match=r"axis 3 is out of the range"):
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
    from ir_runner.ops.fourier import _round

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
