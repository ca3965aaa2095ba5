"""HardSigmoid-1 and Identity-16: shapes and element types as OpenVINO infers them, values against the CPU plugin
(neither op has a reference evaluate): HardSigmoid bit for bit at f32 and on integers, NaN and signed zeros
included; Identity bit for bit for every type; seeded random graphs."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset16  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, IRError  # noqa: E402
from ir_runner.ops.registry import lookup  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_run, write_ir  # noqa: E402


def _hsig(shape, et=ov.Type.f32, npt=np.float32, alpha=0.2, beta=0.5):
    x = opset1.parameter(ov.PartialShape(shape), et, name="x")
    node = opset1.hard_sigmoid(x, opset1.constant(np.array(alpha, npt)), opset1.constant(np.array(beta, npt)))
    return x, node


@pytest.mark.parametrize("shape", [[2, 3, 4], [], [0, 3], [-1, 5], [ov.Dimension(2, 6), -1], None], ids=str)
def test_shapes(shape, tmp_path):
    shape = ov.PartialShape.dynamic() if shape is None else shape
    x, node = _hsig(shape)
    ident = opset16.identity(x)
    check_inference(write_ir([node, ident], [x], tmp_path))


def test_f32_corners_against_cpu(tmp_path):
    x, node = _hsig([12])
    path = write_ir(node, [x], tmp_path)
    feed = np.array([np.nan, -np.nan, -0.0, 0.0, np.inf, -np.inf, -2.5, 2.5, 1e-45, -1e-45, 2.4999998, 0.1],
                    np.float32)
    got = check_run(path, {"x": feed}, oracle="cpu")
    assert got[next(iter(got))][:2].tolist() == [1.0, 1.0]  # NaN: std::min(1, NaN) is 1


@pytest.mark.parametrize("alpha, beta", [(0.2, 0.5), (1 / 6, 0.5), (-0.7, 0.3), (3.0, -1.0)])
def test_f32_random_against_cpu(alpha, beta, tmp_path):
    x, node = _hsig([4, 1000], alpha=alpha, beta=beta)
    path = write_ir(node, [x], tmp_path)
    rng = np.random.default_rng(abs(int(alpha * 100)))
    check_run(path, {"x": (rng.standard_normal((4, 1000)) * 4).astype(np.float32)}, oracle="cpu")


@pytest.mark.parametrize("et, npt", [(ov.Type.i32, np.int32), (ov.Type.i64, np.int64), (ov.Type.i8, np.int8)])
def test_integers(et, npt, tmp_path):
    x, node = _hsig([7], et, npt, alpha=2, beta=-1)
    path = write_ir(node, [x], tmp_path)
    feed = np.array([-3, -1, 0, 1, 2, np.iinfo(npt).max, np.iinfo(npt).min], npt)
    got = ir_runner.load(str(path)).run({"x": feed})
    want = np.clip(feed * npt(2) - npt(1), 0, 1).astype(npt)  # (wrapping product, as the reference's loop)
    assert next(iter(got.values())).tolist() == want.tolist()
    x, node = _hsig([5], et, npt, alpha=2, beta=-1)  # (the CPU plugin computes in f32: no wrapping products)
    check_run(write_ir(node, [x], tmp_path, name="small"), {"x": feed[:5]}, oracle="cpu")


def _narrow(et, npt, tmp_path, n=4000):
    x = opset1.parameter([n], et, name="x")
    alpha, beta = (opset1.convert(opset1.constant(np.array(v, np.float32)), et) for v in (0.2, 0.5))
    path = write_ir(opset1.hard_sigmoid(x, alpha, beta), [x], tmp_path, name=str(et))
    feed = (np.random.default_rng(3).standard_normal(n) * 4).astype(npt)
    return path, feed


def test_f16_bit_exact_against_cpu(tmp_path):
    path, feed = _narrow(ov.Type.f16, np.float16, tmp_path)
    feed[:4] = [np.nan, -0.0, np.inf, -np.inf]
    check_run(path, {"x": feed}, oracle="cpu")


def test_bf16_within_bound_of_cpu(tmp_path):
    import ml_dtypes

    path, feed = _narrow(ov.Type.bf16, ml_dtypes.bfloat16, tmp_path)
    check_run(path, {"x": feed}, oracle="cpu", rtol=2 ** -6, atol=2 ** -8)


def test_identity_every_type_bit_exact(tmp_path):
    import ml_dtypes

    for et, npt in [(ov.Type.f16, np.float16), (ov.Type.f32, np.float32), (ov.Type.i64, np.int64),
                    (ov.Type.u8, np.uint8), (ov.Type.boolean, np.bool_), (ov.Type.bf16, ml_dtypes.bfloat16)]:
        x = opset1.parameter([3, 2], et, name="x")
        path = write_ir(opset16.identity(x), [x], tmp_path, name=f"id_{npt.__name__}")
        check_inference(path)
        feed = (np.arange(6).reshape(3, 2) % 3).astype(npt)
        got = next(iter(ir_runner.load(str(path)).run({"x": feed}).values()))
        assert got.dtype == feed.dtype and got.tobytes() == feed.tobytes()
        if et != ov.Type.bf16:
            check_run(path, {"x": feed}, oracle="cpu")
    x = opset1.parameter([4], ov.Type.f16, name="x")
    path = write_ir(opset16.identity(x), [x], tmp_path, name="snan")
    snan = np.array([0x7C01, 0xFC02, 0x3C00, 0x7E00], np.uint16).view(np.float16)
    assert next(iter(ir_runner.load(str(path)).run({"x": snan}).values())).tobytes() == snan.tobytes()


@pytest.mark.parametrize("alpha_shape, alpha_type, port", [("2", "f32", "alpha"), ("", "f16", "alpha"),
                                                           ("1,1", "f32", "alpha")])
def test_bad_alpha_is_an_error_naming_the_port(alpha_shape, alpha_type, port):
    b = IRBuilder()
    x = b.parameter("x", "f32", "2,3")
    alpha = b.parameter("alpha", alpha_type, alpha_shape)
    beta = b.parameter("beta", "f32", "")
    b.result(b.layer("HardSigmoid", "opset1", [x, alpha, beta], name="hs"))
    with pytest.raises(InferenceError) as info:
        ir_runner.load(b.build()[0])
    text = str(info.value)
    assert "'hs'" in text and "HardSigmoid-1" in text and port in text, text


def test_identity_refuses_nothing_but_copies(tmp_path):
    b = IRBuilder()
    x = b.parameter("x", "i4", "4")
    b.result(b.layer("Identity", "opset16", [x], name="id"))
    with pytest.raises(IRError):
        ir_runner.load(b.build()[0]).run({"x": np.zeros(2, np.uint8)})


def test_batch_rules():
    hs = lookup("HardSigmoid", "opset1")
    assert hs.batch({}, [], [None], [0, None, None]) == [0]
    assert isinstance(hs.batch({}, [], [None], [0, 0, None]), str)
    assert lookup("Identity", "opset16").batch({}, [], [None], [1]) == [1]


@pytest.mark.parametrize("seed", range(12))
def test_random_graphs(seed, tmp_path):
    rng = np.random.default_rng(seed)
    shape = [int(d) for d in rng.integers(0, 5, size=int(rng.integers(0, 4)))]
    alpha, beta = float(rng.normal()), float(rng.normal())
    x, node = _hsig(shape, alpha=alpha, beta=beta)
    path = write_ir(opset16.identity(node), [x], tmp_path)
    check_inference(path)
    check_run(path, {"x": (rng.standard_normal(shape) * 3).astype(np.float32)}, oracle="cpu")
