"""LRN, MVN-1/6, BatchNormInference-1/5, NormalizeL2, GroupNormalization and RMS: shapes (dynamic dims and
ranks, as OpenVINO's type_prop tests), values against OpenVINO (its reference where the node has an evaluate:
MVN-6; the CPU plugin with an f32 hint elsewhere), within the bounds the kernels state, and seeded random
graphs."""

from __future__ import annotations

import re

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset2, opset5, opset6, opset12  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import IRError  # noqa: E402
from tests.helpers.cpu_oracle import check_run_cpu  # noqa: E402
from tests.helpers.optest import check_inference, check_run, write_ir  # noqa: E402

F32_RTOL = 1e-5
F16_RTOL = 1e-2


def _param(shape, et=ov.Type.f32, name="x"):
    return opset1.parameter(ov.PartialShape(shape), et, name=name)


def _i64(*values):
    return opset1.constant(np.array(values, np.int64))


def _f32(values):
    return opset1.constant(np.asarray(values, np.float32))


# -- shapes ------------------------------------------------------------------------------------------------

SHAPES = [[2, 3, 4, 5], [-1, 3, -1, 5], [-1, -1, -1, -1], [1, 3, 4], ov.PartialShape.dynamic(4)]


@pytest.mark.parametrize("shape", SHAPES[:4], ids=str)
def test_shapes_pass_through(shape, tmp_path):
    x = _param(shape)
    c = _f32(np.ones(3))
    nodes = [
        opset1.lrn(x, _i64(1), 1e-4, 0.75, 1.0, 3),
        opset2.mvn(x, across_channels=True, normalize_variance=True, eps=1e-9),
        opset6.mvn(x, _i64(-1), True, 1e-5, "outside_sqrt"),
        opset5.batch_norm_inference(x, c, c, c, c, 1e-5),
        opset1.batch_norm_inference(x, c, c, c, c, 1e-5),
        opset1.normalize_l2(x, _i64(1, -1), 1e-6, "max"),
        opset12.group_normalization(x, c, c, 3, 1e-5),
    ]
    check_inference(write_ir(nodes, [x], tmp_path))


def test_dynamic_rank(tmp_path):
    x = _param(ov.PartialShape.dynamic())
    nodes = [opset6.mvn(x, _i64(1), False, 1e-5, "inside_sqrt"), opset1.normalize_l2(x, _i64(0), 1e-6, "add"),
             opset2.mvn(x, across_channels=False, normalize_variance=True, eps=1e-9)]
    check_inference(write_ir(nodes, [x], tmp_path))


def test_f16_types(tmp_path):
    x = _param([2, 4, 3], ov.Type.f16)
    c = opset1.constant(np.ones(4, np.float16))
    nodes = [opset5.batch_norm_inference(x, c, c, c, c, 1e-3), opset12.group_normalization(x, c, c, 2, 1e-3)]
    check_inference(write_ir(nodes, [x], tmp_path))


def _patched(path, pattern, replacement):
    text = path.read_text()
    new = re.sub(pattern, replacement, text, count=1)
    assert new != text
    path.write_text(new)
    return path


@pytest.mark.parametrize("build, pattern, replacement, message", [
    (lambda x: opset12.group_normalization(x, _f32(np.ones(4)), _f32(np.ones(4)), 2, 1e-5),
     'num_groups="2"', 'num_groups="3"', "num_groups"),
    (lambda x: opset6.mvn(x, _i64(1), True, 1e-5, "inside_sqrt"), 'eps_mode="[^"]*"', 'eps_mode="x"',
     "eps_mode"),
    (lambda x: opset1.normalize_l2(x, _i64(1), 1e-5, "add"), 'eps_mode="add"', 'eps_mode="mul"', "eps_mode"),
    (lambda x: opset2.mvn(x, True, True, 1e-9), 'reduction_axes="[^"]*"', 'reduction_axes="1,7"', "axis=7"),
    (lambda x: opset1.lrn(x, _i64(1), 1e-4, 0.75, 1.0, 3), 'size="3"', 'size="0"', "size"),
])
def test_invalid_layers_are_errors(build, pattern, replacement, message, tmp_path):
    x = _param([2, 4, 3, 3])
    path = _patched(write_ir(build(x), [x], tmp_path), pattern, replacement)
    with pytest.raises(IRError, match=message):
        ir_runner.load(str(path))


def test_channel_mismatch_is_an_error(tmp_path):
    x = _param([2, 4, 3])
    c = _f32(np.ones(4))
    path = write_ir(opset5.batch_norm_inference(x, c, c, c, c, 1e-5), [x], tmp_path)
    text = path.read_text().replace("<dim>4</dim>", "<dim>5</dim>", 1)  # the first Const's dim
    path.write_text(text)
    with pytest.raises(IRError):
        ir_runner.load(str(path))


# -- values ------------------------------------------------------------------------------------------------


def test_mvn6_reference_example(tmp_path):
    """op_reference: MVN-6 over the last two axes, inside and outside the root."""
    x = _param([1, 3, 3, 3])
    data = np.tile(np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3), (1, 3, 1, 1))
    for mode in ("inside_sqrt", "outside_sqrt"):
        path = write_ir(opset6.mvn(x, _i64(2, 3), True, 1e-9, mode), [x], tmp_path, mode)
        got = check_run(path, {"x": data}, rtol=F32_RTOL)
        want = (np.arange(1, 10) - 5) / np.sqrt(np.var(np.arange(1, 10)))
        np.testing.assert_allclose(got[next(iter(got))][0, 1].reshape(-1), want, rtol=1e-5)


@pytest.mark.parametrize("eps_mode", ["inside_sqrt", "outside_sqrt"])
@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize("axes", [(1,), (2, 3), (-1, 1), (0, 1, 2, 3)])
def test_mvn6_against_reference(eps_mode, normalize, axes, tmp_path):
    rng = np.random.default_rng(len(axes))
    x = _param([2, 3, 4, 5])
    path = write_ir(opset6.mvn(x, _i64(*axes), normalize, 0.3, eps_mode), [x], tmp_path)
    check_inference(path)
    check_run(path, {"x": rng.standard_normal((2, 3, 4, 5)).astype(np.float32) * 3 + 1}, rtol=F32_RTOL,
              atol=1e-6)


def test_mvn6_f16(tmp_path):
    """f16 has no reference evaluate for MVN: against the CPU plugin (computing in f32)."""
    x = _param([2, 3, 8], ov.Type.f16)
    path = write_ir(opset6.mvn(x, _i64(2), True, 1e-3, "inside_sqrt"), [x], tmp_path)
    data = np.random.default_rng(3).standard_normal((2, 3, 8)).astype(np.float16)
    check_run_cpu(path, {"x": data}, rtol=F16_RTOL, atol=2e-3)


@pytest.mark.parametrize("across", [True, False])
@pytest.mark.parametrize("normalize", [True, False])
def test_mvn1_against_cpu(across, normalize, tmp_path):
    x = _param([2, 3, 4, 5])
    path = write_ir(opset2.mvn(x, across_channels=across, normalize_variance=normalize, eps=0.5), [x], tmp_path)
    data = np.random.default_rng(1).standard_normal((2, 3, 4, 5)).astype(np.float32)
    check_run_cpu(path, {"x": data}, rtol=F32_RTOL, atol=1e-6)


@pytest.mark.parametrize("axes, size", [((1,), 3), ((1,), 5), ((2, 3), 3), ((1,), 1), ((2, 3), 5)])
def test_lrn_against_cpu(axes, size, tmp_path):
    """The CPU plugin runs LRN over axes [1] or [2, 3] only; other axes are checked by hand below."""
    x = _param([2, 6, 5, 4])
    path = write_ir(opset1.lrn(x, _i64(*axes), 0.5, 0.75, 2.0, size), [x], tmp_path)
    data = np.random.default_rng(size).standard_normal((2, 6, 5, 4)).astype(np.float32)
    check_run_cpu(path, {"x": data}, rtol=F32_RTOL)


def _lrn_f64(data, axes, alpha, beta, bias, size):
    half = (size - 1) // 2
    sums = data.astype(np.float64) ** 2
    for axis in axes:
        padded = np.pad(sums, [(half, half) if a == axis else (0, 0) for a in range(data.ndim)])
        sums = sum(np.take(padded, range(k, k + data.shape[axis]), axis=axis) for k in range(2 * half + 1))
    return data / (bias + alpha / size ** len(axes) * sums) ** beta


@pytest.mark.parametrize("axes, size", [((3,), 3), ((0,), 5), ((1, 2), 3), ((1, 2, 3), 3), ((2,), 4)])
def test_lrn_other_axes(axes, size, tmp_path):
    x = _param([2, 6, 5, 4])
    path = write_ir(opset1.lrn(x, _i64(*axes), 0.5, 0.75, 2.0, size), [x], tmp_path)
    check_inference(path)
    data = np.random.default_rng(size).standard_normal((2, 6, 5, 4)).astype(np.float32)
    got = next(iter(ir_runner.load(str(path)).run({"x": data}).values()))
    np.testing.assert_allclose(got, _lrn_f64(data, axes, 0.5, 0.75, 2.0, size), rtol=4 * 27 * 2**-23)


def test_lrn_values_by_hand(tmp_path):
    """The reference's window: [i - (size-1)//2, i + (size-1)//2] clipped; alpha divided by size**len(axes)."""
    x = _param([1, 4])
    path = write_ir(opset1.lrn(x, _i64(1), 3.0, 1.0, 1.0, 3), [x], tmp_path)
    data = np.array([[1, 2, 3, 4]], np.float32)
    got = next(iter(ir_runner.load(str(path)).run({"x": data}).values()))
    sums = np.array([1 + 4, 1 + 4 + 9, 4 + 9 + 16, 9 + 16], np.float32)
    np.testing.assert_allclose(got[0], data[0] / (1 + sums), rtol=1e-6)


@pytest.mark.parametrize("version", [1, 5])
def test_batch_norm_against_cpu(version, tmp_path):
    rng = np.random.default_rng(version)
    x = _param([2, 3, 4, 2])
    gamma, beta, mean = (_f32(rng.standard_normal(3)) for _ in range(3))
    var = _f32(rng.random(3) + 0.1)
    op = opset5.batch_norm_inference if version == 5 else opset1.batch_norm_inference
    path = write_ir(op(x, gamma, beta, mean, var, 1e-3), [x], tmp_path)
    check_inference(path)
    check_run_cpu(path, {"x": rng.standard_normal((2, 3, 4, 2)).astype(np.float32)}, rtol=F32_RTOL, atol=1e-6)


def test_batch_norm_2d(tmp_path):
    rng = np.random.default_rng(7)
    x = _param([5, 3])
    gamma, beta, mean = (_f32(rng.standard_normal(3)) for _ in range(3))
    path = write_ir(opset5.batch_norm_inference(x, gamma, beta, mean, _f32([1, 2, 3]), 1e-5), [x], tmp_path)
    check_run_cpu(path, {"x": rng.standard_normal((5, 3)).astype(np.float32)}, rtol=F32_RTOL, atol=1e-6)


@pytest.mark.parametrize("axes", [(1,), (2, 3), (1, 2, 3), (-1,)])
@pytest.mark.parametrize("mode", ["add", "max"])
def test_normalize_l2_against_cpu(axes, mode, tmp_path):
    x = _param([2, 3, 4, 5])
    path = write_ir(opset1.normalize_l2(x, _i64(*axes), 1e-2, mode), [x], tmp_path)
    data = np.random.default_rng(2).standard_normal((2, 3, 4, 5)).astype(np.float32)
    data[0, 0] = 0  # a zero slice: eps decides
    check_run_cpu(path, {"x": data}, rtol=F32_RTOL, atol=1e-7)


@pytest.mark.parametrize("groups", [1, 2, 6])
def test_group_norm_against_cpu(groups, tmp_path):
    rng = np.random.default_rng(groups)
    x = _param([2, 6, 3, 4])
    path = write_ir(opset12.group_normalization(x, _f32(rng.standard_normal(6)), _f32(rng.standard_normal(6)),
                                                groups, 1e-4), [x], tmp_path)
    check_run_cpu(path, {"x": rng.standard_normal((2, 6, 3, 4)).astype(np.float32) * 4}, rtol=F32_RTOL, atol=1e-5)


def test_rms_decomposition_as_converters_write_it(tmp_path):
    """RMS normalisation as the PyTorch frontend writes it: Power, ReduceMean, Add, Sqrt, Divide, Multiply."""
    from ir_runner.ops.registry import is_known_type
    missing = [t for t in ("Power", "ReduceMean", "Add", "Sqrt", "Divide", "Multiply") if not is_known_type(t)]
    if missing:
        pytest.skip(f"core operations not merged yet: {missing}")
    x = _param([2, 5, 8])
    sq = opset1.power(x, _f32(2.0))
    mean = opset1.reduce_mean(sq, _i64(-1), True)
    root = opset1.sqrt(opset1.add(mean, _f32(1e-6)))
    out = opset1.multiply(opset1.divide(x, root), _f32(np.linspace(0.5, 2, 8)))
    path = write_ir(out, [x], tmp_path)
    check_inference(path)
    check_run_cpu(path, {"x": np.random.default_rng(0).standard_normal((2, 5, 8)).astype(np.float32)},
                  rtol=F32_RTOL)


def test_rms_internal_layer(tmp_path):
    """The fused RMS layer (version="ie_internal_opset"), written by hand as a plugin's pass would serialise it."""
    x = _param([2, 3, 8])
    path = write_ir(opset1.relu(x), [x], tmp_path)
    gamma = np.linspace(0.5, 2, 8).astype(np.float32)
    text = path.read_text()
    text = text.replace('type="ReLU" version="opset1">',
                        'type="RMS" version="ie_internal_opset">\n<data epsilon="0.001" output_type="f32"'
                        ' elementwise_affine="true" />', 1)
    text = _with_gamma(text, gamma.nbytes)
    path.write_text(text)
    path.with_suffix(".bin").write_bytes(gamma.tobytes())
    check_inference(path)
    data = np.random.default_rng(0).standard_normal((2, 3, 8)).astype(np.float32)
    got = next(iter(ir_runner.load(str(path)).run({"x": data}).values()))
    want = data / np.sqrt(np.mean(data.astype(np.float64) ** 2, axis=-1, keepdims=True) + 1e-3) * gamma
    np.testing.assert_allclose(got, want, rtol=4 * 8 * 2**-23)


def _with_gamma(text: str, nbytes: int) -> str:
    """Add a Const gamma (id 100) as the RMS layer's second input."""
    const = ('<layer id="100" name="gamma" type="Const" version="opset1"><data element_type="f32" shape="8"'
             f' offset="0" size="{nbytes}" /><output><port id="0" precision="FP32"><dim>8</dim></port></output>'
             '</layer>\n')
    text = text.replace("<layers>", "<layers>\n" + const, 1)
    rms_input = re.search(r'type="RMS".*?<input>(.*?)</input>', text, re.S)
    second = '<port id="9" precision="FP32"><dim>8</dim></port>'
    text = text[:rms_input.end(1)] + second + text[rms_input.end(1):]
    rms_id = re.search(r'<layer id="(\d+)"[^>]*type="RMS"', text).group(1)
    return text.replace("<edges>", f'<edges>\n<edge from-layer="100" from-port="0" to-layer="{rms_id}"'
                        ' to-port="9" />', 1)


# -- random graphs -----------------------------------------------------------------------------------------


def _random_norm(rng: np.random.Generator, tmp_path):
    rank = int(rng.integers(2, 5))
    shape = [int(n) for n in rng.integers(1, 6, size=rank)]
    shape[1] = int(rng.choice([2, 4, 6]))
    x = _param(shape)
    kind = rng.choice(["mvn6", "l2", "bn", "gn", "lrn", "mvn1"])
    axes = sorted({int(a) for a in rng.integers(0, rank, size=int(rng.integers(1, rank + 1)))})
    eps = float(rng.choice([1e-9, 1e-3, 0.5]))
    c = shape[1]
    if kind == "mvn6":
        node = opset6.mvn(x, _i64(*axes), bool(rng.integers(2)), eps, str(rng.choice(["inside_sqrt",
                                                                                           "outside_sqrt"])))
    elif kind == "l2":
        node = opset1.normalize_l2(x, _i64(*axes), eps, str(rng.choice(["add", "max"])))
    elif kind == "bn":
        params = [_f32(rng.standard_normal(c)) for _ in range(3)] + [_f32(rng.random(c) + 0.1)]
        node = opset5.batch_norm_inference(x, *params, eps)
    elif kind == "gn":
        node = opset12.group_normalization(x, _f32(rng.standard_normal(c)), _f32(rng.standard_normal(c)),
                                           int(rng.choice([g for g in (1, 2) if c % g == 0])), eps)
    elif kind == "lrn":
        axes = [1] if rank < 4 or rng.integers(2) else [2, 3]  # what the CPU plugin runs
        node = opset1.lrn(x, _i64(*axes), float(rng.random()), 0.75, 1.0, int(rng.choice([1, 3, 5])))
    else:
        node = opset2.mvn(x, across_channels=bool(rng.integers(2)), normalize_variance=True, eps=eps)
    path = write_ir(node, [x], tmp_path)
    return path, {"x": rng.standard_normal(shape).astype(np.float32)}, kind


@pytest.mark.parametrize("seed", range(16))
def test_random_normalizations(seed, tmp_path):
    path, feeds, kind = _random_norm(np.random.default_rng(seed), tmp_path)
    check_inference(path)
    if kind == "mvn6":
        check_run(path, feeds, rtol=F32_RTOL, atol=1e-5)
    else:
        check_run_cpu(path, feeds, rtol=F32_RTOL, atol=1e-5)


def test_batch_rules():
    """Axis 0 passes through a normalisation unless it is reduced over (or is BatchNorm's channel axis)."""
    from ir_runner.ops.normalization import normalize
    from ir_runner.types import PartialShape, TensorSpec, element_type
    spec = TensorSpec(element_type("f32"), PartialShape.of((2, 3, 4)))
    ops = {op.label: op for op in normalize.OPS}
    mvn6 = ops["MVN-6"].batch
    assert mvn6({"axes": (1, 2)}, [spec, spec], [spec], [0, None]) == [0]
    assert isinstance(mvn6({"axes": (0, 1)}, [spec, spec], [spec], [0, None]), str)
    assert isinstance(mvn6({"axes": None}, [spec, spec], [spec], [0, None]), str)
    assert ops["BatchNormInference-5"].batch({}, [spec] * 5, [spec], [0, None, None, None, None]) == [0]
    assert isinstance(ops["BatchNormInference-5"].batch({}, [spec] * 5, [spec], [1, None, None, None, None]), str)
    assert ops["BatchNormInference-1"].batch({}, [spec] * 5, [spec], [None, None, 0, None, None]) == [0]
    assert ops["GroupNormalization-12"].batch({}, [spec] * 3, [spec], [0, None, None]) == [0]
    assert isinstance(ops["GroupNormalization-12"].batch({}, [spec] * 3, [spec], [0, 0, None]), str)


# -- GRN-1 -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [[2, 3], [2, 5, 4], [1, 3, 4, 5], [-1, 3, -1], [-1, -1, -1, -1], [2, (1, 4), 3],
                                   ov.PartialShape.dynamic()], ids=str)
def test_grn_shapes_as_openvino_infers_them(shape, tmp_path):
    from tests.helpers.optest import check_output_shapes
    x = _param(ov.PartialShape([ov.Dimension(*d) if isinstance(d, tuple) else d for d in shape])
               if isinstance(shape, list) else shape)
    node = opset1.grn(x, 0.5)
    path = write_ir(node, [x], tmp_path)
    check_inference(path)
    check_output_shapes(path, node)


@pytest.mark.parametrize("dims", [[6], [1, 2, 3, 4, 5]])
def test_grn_rank_outside_2_to_4_is_an_error(dims):
    from tests.helpers.irbuild import IRBuilder
    b = IRBuilder()
    x = b.parameter("x", "f32", ",".join(map(str, dims)))
    b.result(b.layer("GRN", "opset1", [x], attrs={"bias": "1"}, out_specs=[("FP32", dims)]))
    with pytest.raises(IRError, match="must be 2-D, 3-D or 4-D") as info:
        ir_runner.load(b.build()[0])
    assert "GRN-1" in str(info.value) and "(data)" in str(info.value)


def test_grn_integer_data_is_unsupported(tmp_path):
    from ir_runner.errors import UnsupportedError
    x = _param([2, 3], ov.Type.i32)
    with pytest.raises(UnsupportedError, match="floating-point") as info:
        ir_runner.load(str(write_ir(opset1.grn(x, 1.0), [x], tmp_path)))
    assert "GRN-1" in str(info.value) and "(data)" in str(info.value)


def _grn_f64(data, bias):
    x = data.astype(np.float64)
    return x / np.sqrt((x * x).sum(axis=1, keepdims=True) + np.float32(bias))


@pytest.mark.parametrize("shape, bias", [([2, 3], 1.0), ([3, 7, 5], 1e-6), ([2, 16, 4, 3], 0.5), ([1, 1, 2], 2.0),
                                         ([2, 300, 2], 1e-3), ([0, 3, 2], 1.0)])
def test_grn_against_the_cpu_plugin_and_in_f64(shape, bias, tmp_path):
    """Within 4·C·eps relative of the f64 result, and of the CPU plugin's (the wheel has no GRN evaluate)."""
    x = _param(shape)
    path = write_ir(opset1.grn(x, bias), [x], tmp_path)
    data = (np.random.default_rng(len(shape)).standard_normal(shape) * 3).astype(np.float32)
    got = list(check_run_cpu(path, {"x": data}, rtol=F32_RTOL, atol=1e-6).values())[0]
    bound = 4 * shape[1] * np.finfo(np.float32).eps
    np.testing.assert_allclose(got, _grn_f64(data, bias), rtol=bound, atol=0)


def test_grn_f16_computed_in_f32_and_rounded_once(tmp_path):
    x = _param([2, 6, 3], ov.Type.f16)
    path = write_ir(opset1.grn(x, 0.25), [x], tmp_path)
    data = np.random.default_rng(3).standard_normal((2, 6, 3)).astype(np.float16)
    got = list(ir_runner.load(str(path)).run({"x": data}).values())[0]
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, _grn_f64(data.astype(np.float32), 0.25).astype(np.float32).astype(np.float16))


def test_grn_batch_rule():
    from ir_runner.ops.normalization import normalize
    op = next(op for op in normalize.OPS if op.type == "GRN")
    assert op.batch({"axes": (1,)}, [], [None], [0]) == [0]
    assert op.batch({"axes": (1,)}, [], [None], [2]) == [2]
    assert "channel axis" in op.batch({"axes": (1,)}, [], [None], [1])
