"""ISTFT-16: shapes as OpenVINO infers them (constant or unknown frame size, step and signal_length; odd and even
frame sizes with center; intervals, dynamic ranks), values against OpenVINO's CPU plugin (the core node has no
evaluate) within istft.BOUND of the largest output, an STFT -> ISTFT round trip, errors naming the layer, and the
batch rule."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset15, opset16  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.ops.signal.istft import BOUND, OPS  # noqa: E402
from ir_runner.types import ELEMENT_TYPES, PartialShape, TensorSpec  # noqa: E402
from tests.helpers.cpu_oracle import cpu_outputs  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, write_ir  # noqa: E402

D = ov.Dimension


def _param(name, shape, et=ov.Type.f32):
    p = opset1.parameter(shape, et, name=name)
    p.output(0).get_tensor().set_names({name})
    return p


def _model(tmp_path, data_shape, window_len, size, step, center, normalized, length=None, et=ov.Type.f32):
    data, window = _param("data", data_shape, et), _param("window", [window_len], et)
    params = [data, window]
    scalars = []
    for name, value in (("frame_size", size), ("frame_step", step), ("signal_length", length)):
        if isinstance(value, int):
            scalars.append(opset1.constant(np.int64(value)))
        elif value == "fed":
            scalars.append(_param(name, [], ov.Type.i64))
            params.append(scalars[-1])
        else:
            scalars.append(None)
    node = opset16.istft(data, window, scalars[0], scalars[1], center, normalized, scalars[2])
    return write_ir(node, params, tmp_path), node


@pytest.mark.parametrize(("data_shape", "size", "step", "center", "length"), [
    ([5, 4, 2], 8, 2, False, None), ([5, 4, 2], 8, 2, True, None), ([2, 4, 6, 2], 7, 3, True, None),
    ([2, 4, 6, 2], 7, 3, False, None), ([-1, 4, -1, 2], 6, 2, True, None),
    ([D(1, 3), 4, D(2, 9), 2], 7, 2, False, None),
    ([4, 5, 2], 7, 2, True, 11), ([3, 4, 5, 2], 7, 2, False, "fed"), ([4, 5, 2], "fed", 2, True, None),
    (None, 7, 2, False, None), ([4, 1, 2], 7, 7, True, None),
])
def test_shapes_as_openvino_infers_them(data_shape, size, step, center, length, tmp_path):
    shape = ov.PartialShape.dynamic() if data_shape is None else ov.PartialShape(data_shape)
    path, node = _model(tmp_path, shape, 4, size, step, center, False, length)
    check_inference(path)
    check_output_shapes(path, node)


def _feeds(rng, shape, window_len):
    return {"data": rng.standard_normal(shape).astype(np.float32),
            "window": (rng.random(window_len) + 0.1).astype(np.float32)}


@pytest.mark.parametrize("center", [False, True])
@pytest.mark.parametrize("normalized", [False, True])
@pytest.mark.parametrize(("size", "step", "window_len", "batch"), [(8, 2, 8, [2]), (7, 3, 5, []), (16, 4, 11, [3]),
                                                                    (5, 6, 5, []), (1, 1, 1, [2])])
def test_values_near_the_cpu_plugins(center, normalized, size, step, window_len, batch, tmp_path):
    rng = np.random.default_rng(size * 7 + step)
    shape = [*batch, size // 2 + 1, 6, 2]
    path, _ = _model(tmp_path, shape, window_len, size, step, center, normalized)
    feeds = _feeds(rng, shape, window_len)
    (got,) = ir_runner.load(str(path)).run(feeds).values()
    (want,) = cpu_outputs(path, feeds)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.abs(got - want).max() <= BOUND * np.abs(want).max()


@pytest.mark.parametrize("length", [3, 20, 60])
def test_signal_length_cuts_or_pads_with_zeros(length, tmp_path):
    rng = np.random.default_rng(length)
    path, _ = _model(tmp_path, [5, 6, 2], 8, 8, 2, True, False, length)
    feeds = _feeds(rng, [5, 6, 2], 8)
    (got,) = ir_runner.load(str(path)).run(feeds).values()
    (want,) = cpu_outputs(path, feeds)
    assert got.shape == (length,) and np.abs(got - want).max() <= BOUND * np.abs(want).max()
    if length == 60:
        assert not got[18:].any()


def test_round_trip_of_stft(tmp_path):
    """STFT-15 (transpose_frames) then ISTFT-16 with a Hann window gives the signal back where windows overlap."""
    rng = np.random.default_rng(1)
    signal = rng.standard_normal((2, 64)).astype(np.float32)
    window = np.hanning(16).astype(np.float32)
    x = _param("x", [2, 64])
    frames = opset15.stft(x, opset1.constant(window), opset1.constant(np.int64(16)), opset1.constant(np.int64(4)),
                          True)
    back = opset16.istft(frames, opset1.constant(window), opset1.constant(np.int64(16)),
                         opset1.constant(np.int64(4)), False, False)
    path = write_ir(back, [x], tmp_path)
    (got,) = ir_runner.load(str(path)).run({"x": signal}).values()
    np.testing.assert_allclose(got[:, 8:56], signal[:, 8:56], atol=1e-5)


@pytest.mark.parametrize(("et", "dtype", "rtol"), [(ov.Type.f16, np.float16, 2e-3), (ov.Type.f64, np.float64, 1e-6)])
def test_other_types_near_the_cpu_plugins(et, dtype, rtol, tmp_path):
    rng = np.random.default_rng(4)
    path, _ = _model(tmp_path, [5, 6, 2], 8, 8, 2, True, True, et=et)
    feeds = {k: v.astype(dtype) for k, v in _feeds(rng, [5, 6, 2], 8).items()}
    (got,) = ir_runner.load(str(path)).run(feeds).values()
    (want,) = cpu_outputs(path, feeds)
    assert got.dtype == dtype
    assert np.abs(got.astype(np.float64) - want).max() <= rtol * np.abs(want).max()


def test_bins_not_matching_the_frame_size_are_refused(tmp_path):
    path, _ = _model(tmp_path, [5, 4, 2], 8, "fed", 2, False, False)
    feeds = {**_feeds(np.random.default_rng(0), [5, 4, 2], 8), "frame_size": np.int64(10)}
    with pytest.raises(ir_runner.InputError, match=r"ISTFT-16.*data has 5 frequency bins.*frame_size 10 needs 6"):
        ir_runner.load(str(path)).run(feeds)


@pytest.mark.parametrize(("size", "step", "window", "message"), [
    (0, 2, "4", "frame_size is 0 but must be greater than zero"),
    (8, 0, "4", "frame_step is 0 but must be greater than zero"),
    (8, 2, "9", "the window has 9 points but must have 1 to frame_size=8"),
    (8, 2, "4,1", "window must be 1-D"),
    (10, 2, "4", r"data has 5 frequency bins \(dim -3\); frame_size 10 needs 6"),
])
def test_invalid_models_are_refused_naming_the_layer(size, step, window, message):
    b = IRBuilder("istft")
    inputs = [b.parameter("data", "f32", "5,4,2"), b.parameter("window", "f32", window),
              b.const("size", np.int64(size)), b.const("step", np.int64(step))]
    b.result(b.layer("ISTFT", "opset16", inputs, attrs={"center": "false", "normalized": "false"},
                     out_specs=[("FP32", [-1])], name="inverse"))
    with pytest.raises(ir_runner.InferenceError, match=r"layer 'inverse' \(ISTFT-16.*" + message):
        ir_runner.load(*b.build())


def test_batch_rule():
    (op,) = OPS
    scalar = TensorSpec(ELEMENT_TYPES["i64"], PartialShape.of(()))
    window = TensorSpec(ELEMENT_TYPES["f32"], PartialShape.of((4,)))
    four, three = (TensorSpec(ELEMENT_TYPES["f32"], PartialShape.of((2, 5, 6, 2)[4 - rank:])) for rank in (4, 3))
    assert op.batch({}, [four, window, scalar, scalar], None, [0, None, None, None]) == [0]
    assert isinstance(op.batch({}, [three, window, scalar, scalar], None, [0, None, None, None]), str)


@pytest.mark.parametrize(("data_shape", "center", "length", "want"), [
    ([2, 5, 0, 2], False, None, (2, 8)), ([5, 0, 2], False, None, (8,)), ([2, 5, 0, 2], True, None, (2, 0)),
    ([2, 5, 0, 2], False, 5, (2, 5)),
])
def test_no_frames_give_zeros(data_shape, center, length, want, tmp_path):
    """Without frames the signal is all zeros past nothing, in OpenVINO's inferred length (the CPU plugin returns
    unwritten memory there: not an oracle; ir-run failed reshaping the empty spectrum)."""
    path, node = _model(tmp_path, data_shape, 8, 8, 2, center, False, length)
    check_output_shapes(path, node)
    feeds = {"data": np.zeros(data_shape, np.float32), "window": np.ones(8, np.float32)}
    (got,) = ir_runner.load(str(path)).run(feeds).values()
    assert got.shape == want and got.dtype == np.float32 and not got.any()


@pytest.mark.parametrize("center", [False, True])
def test_a_huge_step_computes_only_the_output(center, tmp_path):
    """Only the samples of the output are computed: with frame_step 2^40 and signal_length 16 (a hostile model)
    the run takes no memory beyond the output, and equals the CPU plugin's result with step 1000 (the second frame
    starts past the output either way)."""
    rng = np.random.default_rng(3)
    feeds = _feeds(rng, [2, 5, 3, 2], 8)
    small, _ = _model(tmp_path / "small", [2, 5, 3, 2], 8, 8, 1000, center, False, 16)
    (want,) = cpu_outputs(small, feeds)
    huge, _ = _model(tmp_path / "huge", [2, 5, 3, 2], 8, 8, 2**40, center, False, 16)
    (got,) = ir_runner.load(str(huge)).run(feeds).values()
    assert got.shape == want.shape == (2, 16)
    assert np.abs(got - want).max() <= BOUND * np.abs(want).max()
