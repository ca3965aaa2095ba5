"""GridSample-9: shapes as OpenVINO infers them (its type_prop cases: static, dynamic and interval dims, dynamic
ranks), bad layers refused naming the layer and port, values bit for bit against the reference (Node.evaluate:
f32 data, f32 grid) for every mode, padding and align_corners, with coordinates far outside the image and
exact halves for nearest's rounding; the other data and grid types against the CPU plugin within the bounds
the module states; a seeded random differential generator."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset9  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.batching import trace_batch  # noqa: E402
from ir_runner.errors import BatchError, IRError  # noqa: E402
from ir_runner.ops.image.grid_sample import OPS  # noqa: E402
from tests.helpers.cpu_features import require as require_cpu  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402

MODES = ("bilinear", "bicubic", "nearest")
PADDINGS = ("zeros", "border", "reflection")
EPS32 = float(np.finfo(np.float32).eps)


def _build(data_shape, grid_shape, tmp_path, data_type=ov.Type.f32, grid_type=ov.Type.f32, **attrs):
    data = opset9.parameter(data_shape, data_type, name="data")
    grid = opset9.parameter(grid_shape, grid_type, name="grid")
    attrs = {"mode": "bilinear", "padding_mode": "zeros", "align_corners": False} | attrs
    node = opset9.grid_sample(data, grid, attrs)
    return write_ir(node, [data, grid], tmp_path), node


@pytest.mark.parametrize("data_shape, grid_shape", [
    ([1, 3, 224, 224], [1, 10, 10, 2]),
    ([-1, 3, 224, 224], [-1, 10, 10, 2]),
    ([(2, 4), (1, 3), 128, 256], [(3, 8), (4, 6), (5, 7), 2]),
    ([2, (1, 3), 224, 224], [-1, (4, 6), (5, 7), 2]),
    ([-1, (1, 3), 224, 224], [2, (4, 6), (5, 7), 2]),
    ([(2, 4), 3, 224, 224], [-1, 6, 7, 2]),
    ([-1, 3, 224, 224], [(2, 4), 6, 7, 2]),
    ([2, 3, 224, 224], [2, -1, -1, 2]),
    ([1, 3, 224, 224], [-1, -1, -1, -1]),
    ([-1, -1, -1, -1], [-1, 3, 5, 2]),
    (None, [1, 5, 5, 2]),
    ([1, 3, 4, 4], None),
    (None, None),
])
def test_shapes_as_openvino_infers_them(data_shape, grid_shape, tmp_path):
    shape = lambda s: ov.PartialShape.dynamic() if s is None else ov.PartialShape(  # noqa: E731
        [ov.Dimension(*d) if isinstance(d, tuple) else ov.Dimension(d) for d in s])
    path, node = _build(shape(data_shape), shape(grid_shape), tmp_path, data_type=ov.Type.i32)
    check_inference(path)
    check_output_shapes(path, node)


_DIMS = "<dim>{}</dim>\n\t\t\t\t\t<dim>4</dim>\n\t\t\t\t\t<dim>6</dim>\n\t\t\t\t\t<dim>{}</dim>"


@pytest.mark.parametrize("old, new, grid_shape, message", [
    ('mode="bilinear"', 'mode="trilinear"', "2,4,6,2", r"GridSample.*mode='trilinear' is not one of"),
    ('padding_mode="zeros"', 'padding_mode="wrap"', "2,4,6,2", r"GridSample.*padding_mode='wrap'"),
    (_DIMS.format(2, 2), _DIMS.format(2, 3), "2,4,6,3", r"GridSample.*port 1.*last dim of grid must be 2"),
    (_DIMS.format(2, 2), _DIMS.format(3, 2), "3,4,6,2",
     r"GridSample.*port 1.*batch dims of data \(2\) and grid \(3\) differ"),
])
def test_bad_layers_are_refused_naming_the_layer(old, new, grid_shape, message, tmp_path):
    path, _ = _build([2, 3, 4, 5], [2, 4, 6, 2], tmp_path)
    text = path.read_text()
    assert old in text, text
    path.write_text(text.replace(old, new).replace('shape="2,4,6,2"', f'shape="{grid_shape}"'))
    with pytest.raises(IRError, match=message):
        ir_runner.load(str(path))


def test_bad_grid_type_is_refused_naming_the_port(tmp_path):
    path, _ = _build([2, 3, 4, 5], [2, 4, 6, 2], tmp_path, grid_type=ov.Type.f64)
    path.write_text(path.read_text().replace('"FP64"', '"I64"').replace('"f64"', '"i64"'))
    with pytest.raises(IRError, match=r"GridSample.*port 1.*grid must be f16, bf16, f32 or f64, got i64"):
        ir_runner.load(str(path))


def _grid(rng, shape, scale, dtype=np.float32):
    """Random points in [-scale, scale], with exact corners, centres and halves mixed in."""
    grid = rng.uniform(-scale, scale, size=shape)
    special = np.array([-1, 1, 0, -0.5, 0.5, -1.25, 1.25, 2.0, -3.0, 0.25])
    mask = rng.random(shape) < 0.3
    grid[mask] = rng.choice(special, size=int(mask.sum()))
    return grid.astype(dtype)


@pytest.mark.parametrize("mode, padding, align", list(itertools.product(MODES, PADDINGS, (False, True))))
def test_f32_bit_exact_against_the_reference(mode, padding, align, tmp_path):
    path, _ = _build([2, 3, 5, 7], [2, 6, 9, 2], tmp_path, mode=mode, padding_mode=padding, align_corners=align)
    check_inference(path)
    rng = np.random.default_rng(7)
    for scale in (1.0, 1.6, 7.0):
        feeds = {"data": rng.normal(size=(2, 3, 5, 7)).astype(np.float32), "grid": _grid(rng, (2, 6, 9, 2), scale)}
        check_run(path, feeds)


@pytest.mark.parametrize("padding", PADDINGS)
def test_non_finite_grid_points_bit_exact(padding, tmp_path):
    """NaN and infinite grid coordinates (a NaN product took the value's sign in bicubic, the reference's is the
    weight's: it multiplies weight by value)."""
    points = [(np.nan, np.inf), (np.nan, 0.0), (0.0, np.nan), (np.inf, 0.0), (-np.inf, 0.0), (np.inf, np.inf),
              (np.nan, np.nan), (-np.inf, np.nan)]
    grid = np.array([[points]], np.float32)
    for mode in MODES:
        path, _ = _build([1, 1, 2, 2], [1, 1, len(points), 2], tmp_path, mode=mode, padding_mode=padding,
                         align_corners=False)
        for value in (0.7, -0.7):
            check_run(path, {"data": np.full((1, 1, 2, 2), value, np.float32), "grid": grid})


def test_reference_example_values(tmp_path):
    """The op_reference cases' layout: a 1x1x3x5 ramp sampled on a 1x3x5 grid across and outside it."""
    data = np.arange(1, 16, dtype=np.float32).reshape(1, 1, 3, 5)
    xs = np.array([-1.1, -1.0, -0.5, 0.0, 1.1], np.float32)
    ys = np.array([-1.0, 0.2, 1.5], np.float32)
    grid = np.stack(np.broadcast_arrays(xs[None, :], ys[:, None]), axis=-1)[None].astype(np.float32)
    for mode, padding, align in itertools.product(MODES, PADDINGS, (False, True)):
        path, _ = _build([1, 1, 3, 5], [1, 3, 5, 2], tmp_path, mode=mode, padding_mode=padding, align_corners=align)
        got = check_run(path, {"data": data, "grid": grid})
        if mode == "nearest" and padding == "border" and align:
            assert got[next(iter(got))][0, 0, 0].tolist() == [1, 1, 2, 3, 5]


def test_nearest_rounds_halves_to_even_and_copies_bits(tmp_path):
    # with align_corners the point (g + 1) * 3 / 2 lands on 0.5, 1.5, 2.5 for g = -2/3, 0, 2/3 (f32)
    data = np.array([[[[np.nan, -0.0, np.inf, 7.0]]]], np.float32)
    path, _ = _build([1, 1, 1, 4], [1, 1, 7, 2], tmp_path, mode="nearest", padding_mode="border", align_corners=True)
    g = np.array([-1, -2 / 3, 0, 2 / 3, 1, -0.9, 0.99], np.float32)
    grid = np.stack([g, np.zeros_like(g)], axis=-1)[None, None]
    check_run(path, {"data": data, "grid": grid})


@pytest.mark.parametrize("data_type, dtype", [(ov.Type.f16, np.float16), (ov.Type.bf16, "bf16"),
                                              (ov.Type.f64, np.float64), (ov.Type.i32, np.int32),
                                              (ov.Type.i64, np.int64), (ov.Type.u16, np.uint16),
                                              (ov.Type.i8, np.int8), (ov.Type.u8, np.uint8)])
@pytest.mark.parametrize("grid_type, grid_dtype", [(ov.Type.f32, np.float32), (ov.Type.f16, np.float16),
                                                   (ov.Type.f64, np.float64)])
def test_other_types_against_the_cpu_plugin(data_type, dtype, grid_type, grid_dtype, tmp_path):
    if dtype == "bf16":
        require_cpu("bf16")
    rng = np.random.default_rng(3)
    for mode in MODES:
        path, _ = _build([2, 2, 4, 6], [2, 5, 3, 2], tmp_path, data_type, grid_type, mode=mode,
                         padding_mode=("zeros", "border", "reflection")[rng.integers(3)], align_corners=False)
        check_inference(path)
        if dtype == "bf16":
            import ml_dtypes

            data = rng.normal(size=(2, 2, 4, 6)).astype(ml_dtypes.bfloat16)
        elif np.dtype(dtype).kind == "f":
            data = rng.normal(size=(2, 2, 4, 6)).astype(dtype)
        else:
            low = 0 if np.dtype(dtype).kind == "u" else -100
            data = rng.integers(low, 100, size=(2, 2, 4, 6)).astype(dtype)
        feeds = {"data": data, "grid": _grid(rng, (2, 5, 3, 2), 1.4, grid_dtype)}
        if dtype == np.float64:  # the CPU plugin rounds f64 data to f32, nearest's copies too
            bound = {"rtol": 0, "atol": 32 * EPS32 * float(np.abs(data).max())}
        elif mode == "nearest":
            bound = {}
        elif dtype == "bf16":
            bound = {"rtol": 2.0**-8, "atol": 2.0**-120}
        elif dtype == np.float16:
            bound = {"ulp": 1}
        else:
            bound = {"rtol": 0, "atol": 1}
        check_run(path, feeds, oracle="cpu", **bound)


def test_integer_data_truncates_toward_zero(tmp_path):
    path, _ = _build([1, 1, 1, 2], [1, 1, 3, 2], tmp_path, ov.Type.i32, align_corners=True)
    grid = np.array([[[[-0.5, 0], [0.0, 0], [0.5, 0]]]], np.float32)  # 1/4, 1/2, 3/4 of the way
    out = ir_runner.load(str(path)).run({"data": np.array([[[[-7, 10]]]], np.int32), "grid": grid})
    assert next(iter(out.values())).tolist() == [[[[-2, 1, 5]]]]  # -2.75, 1.5, 5.75 toward zero


def test_empty_tensors(tmp_path):
    for data_shape, grid_shape in (([0, 2, 3, 3], [0, 4, 4, 2]), ([1, 0, 3, 3], [1, 4, 4, 2]),
                                   ([1, 2, 3, 3], [1, 0, 4, 2])):
        path, _ = _build(data_shape, grid_shape, tmp_path, mode="bicubic")
        check_run(path, {"data": np.ones(data_shape, np.float32), "grid": np.zeros(grid_shape, np.float32)})


def test_dynamic_model_runs_each_shape(tmp_path):
    path, _ = _build([-1, 2, -1, -1], [-1, -1, -1, 2], tmp_path, mode="bicubic", padding_mode="reflection")
    check_inference(path)
    rng = np.random.default_rng(11)
    for n, h, w, ho, wo in ((1, 3, 4, 2, 2), (3, 1, 1, 4, 1), (2, 6, 2, 1, 5)):
        check_run(path, {"data": rng.normal(size=(n, 2, h, w)).astype(np.float32),
                         "grid": _grid(rng, (n, ho, wo, 2), 2.5)})


def test_batch_axis_through_a_model(tmp_path):
    path, _ = _build([4, 3, 5, 5], [4, 2, 2, 2], tmp_path)
    model = ir_runner.load(str(path))
    assert trace_batch(model.inference, [0, 0]) == (0,)
    with pytest.raises(BatchError, match="GridSample.*own grid"):
        trace_batch(model.inference, [0, None])


def test_batch_rule():
    op = OPS[0]
    assert op.batch({}, [], [None], [0, 0]) == [0]
    assert op.batch({}, [], [None], [None, None]) == [None]
    assert isinstance(op.batch({}, [], [None], [0, None]), str)
    assert isinstance(op.batch({}, [], [None], [None, 0]), str)
    assert isinstance(op.batch({}, [], [None], [2, 0]), str)


@pytest.mark.parametrize("seed", range(30))
def test_random_against_the_reference(seed, tmp_path):
    rng = np.random.default_rng(1000 + seed)
    n, c, h, w = (int(v) for v in rng.integers(1, [3, 4, 7, 7], endpoint=True))
    ho, wo = (int(v) for v in rng.integers(1, 6, size=2, endpoint=True))
    mode, padding = MODES[rng.integers(3)], PADDINGS[rng.integers(3)]
    path, _ = _build([n, c, h, w], [n, ho, wo, 2], tmp_path, mode=mode, padding_mode=padding,
                     align_corners=bool(rng.integers(2)))
    data = (rng.normal(size=(n, c, h, w)) * 10 ** rng.uniform(-3, 3)).astype(np.float32)
    check_run(path, {"data": data, "grid": _grid(rng, (n, ho, wo, 2), float(rng.choice([1.0, 1.5, 4.0])))})
