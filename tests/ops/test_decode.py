"""CTCGreedyDecoder-1 and CTCGreedyDecoderSeqLen-6: shapes inferred as OpenVINO declares them (static,
dynamic and interval dims, dynamic ranks), values bit for bit against OpenVINO's CPU plugin (no Node.evaluate;
CTCGreedyDecoder also against a loop written from the reference) for every element type it runs, the corners
where the CPU plugin, the reference kernel and the specification differ (documented in docs/semantics.md),
errors naming the layer and port, batch rules and chunked runs, and seeded differential generators."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset6  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, InputError, UnsupportedError  # noqa: E402
from ir_runner.ops.sequence_recurrent.decode import OPS  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.node_eval import NP_TYPES, OV_TYPES  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402
from tests.helpers.shapes import partial_shape  # noqa: E402

D = ov.Dimension


# -- CTCGreedyDecoderSeqLen-6 ------------------------------------------------------------------------------------

def _ctc(tmp_path, shapes, et="f32", seq_et="i32", merge=True, classes="i32", lengths="i32", name="ctc"):
    data = opset6.parameter(partial_shape(shapes[0]), OV_TYPES[et], name="data")
    seq = opset6.parameter(partial_shape(shapes[1]), OV_TYPES[seq_et], name="sequence_length")
    params = [data, seq]
    if len(shapes) == 3:
        params.append(opset6.parameter(partial_shape(shapes[2]), OV_TYPES[seq_et], name="blank_index"))
    node = opset6.ctc_greedy_decoder_seq_len(*params, merge_repeated=merge, classes_index_type=classes,
                                             sequence_length_type=lengths)
    return write_ir(node, params, tmp_path, name), node


@pytest.mark.parametrize("shapes", [
    ([2, 7, 5], [2]),
    ([-1, D(2, 6), -1], [3]),
    (None, [D(1, 5)]),
    ([D(1, 8), 10, 4], [-1], []),
    ([4, -1, 30], None, [1]),
    ([2, 3, 4], [2], None),
    ([2, 3, 4], [2], [-1]),
])
def test_ctc_shapes_as_openvino_infers_them(shapes, tmp_path):
    path, node = _ctc(tmp_path, shapes, classes="i64")
    check_inference(path)
    check_output_shapes(path, node)


def _ctc_feeds(data, lengths, blank=None, et="f32", seq_et="i32"):
    feeds = {"data": np.array(data).astype(NP_TYPES[et]), "sequence_length": np.array(lengths).astype(NP_TYPES[seq_et])}
    if blank is not None:
        feeds["blank_index"] = np.array(blank).astype(NP_TYPES[seq_et])
    return feeds


NAN, INF = float("nan"), float("inf")
CTC_CASES = [
    # data [N, T, C], sequence_length, blank_index (None: no input)
    ([[[0.1, 0.2, 0.0], [0.4, 0.3, 0.0], [0.4, 0.3, 0.0], [0.0, 0.5, 0.9]]], [4], None),
    ([[[0.1, 0.2, 0.0], [0.4, 0.3, 0.0], [0.4, 0.3, 0.0], [0.0, 0.5, 0.9]]], [4], 0),
    ([[[1, 1, 1], [0, 2, 2], [3, 0, 3], [1, 0, 0]], [[0, 0, 1], [0, 0, 1], [1, 0, 0], [0, 1, 0]]], [3, 4], 2),
    ([[[NAN, 1, 2], [1, NAN, 2], [-INF, -INF, -INF], [1, 2, NAN]]], [4], 5),  # NaN first wins, later ones never
    ([[[0.0, -0.0, 0.0], [-0.0, 0.0, 0.0]]], [2], -1),  # ties: the first
    ([[[1, 2], [2, 1], [2, 1], [1, 2], [2, 1]], [[2, 1], [1, 2], [2, 1], [1, 2], [2, 1]]], [0, 5], 7),
]


@pytest.mark.parametrize("merge", [True, False])
@pytest.mark.parametrize("case", range(len(CTC_CASES)))
def test_ctc_values(case, merge, tmp_path):
    data, lengths, blank = CTC_CASES[case]
    shape = list(np.shape(data))
    shapes = (shape, [shape[0]]) + (() if blank is None else ([],))
    path, _ = _ctc(tmp_path, shapes, merge=merge, classes="i64")
    check_inference(path)
    check_run(path, _ctc_feeds(data, lengths, blank), oracle="cpu")


@pytest.mark.parametrize("et, seq_et, classes, lengths", [
    ("f16", "i32", "i32", "i64"), ("bf16", "i64", "i64", "i32"), ("f32", "i64", "i64", "i64"),
])
def test_ctc_types(et, seq_et, classes, lengths, tmp_path):
    rng = np.random.default_rng(1)
    path, _ = _ctc(tmp_path, ([3, 9, 6], [3], [1]), et, seq_et, classes=classes, lengths=lengths)
    check_inference(path)
    feeds = _ctc_feeds(rng.integers(0, 4, (3, 9, 6)), [9, 0, 4], [int(rng.integers(6))], et, seq_et)
    check_run(path, feeds, oracle="cpu")


def test_ctc_f64_data_as_f32(tmp_path):
    """f64 data (the CPU plugin converts it to f32): the same classes as f32 data of the same values."""
    rng = np.random.default_rng(2)
    data = rng.standard_normal((2, 6, 5))
    got = []
    for et in ("f64", "f32"):
        path, _ = _ctc(tmp_path, ([2, 6, 5], [2]), et, name=et)
        got.append(check_run(path, _ctc_feeds(data, [6, 3], et=et), oracle="cpu"))
    for a, b in zip(got[0].values(), got[1].values()):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("length", [-1, 5])
def test_ctc_sequence_length_outside_the_time_steps_is_an_input_error(length, tmp_path):
    path, _ = _ctc(tmp_path, ([2, 4, 3], [2]))
    with pytest.raises(InputError, match=rf"sequence_length\[1\] = {length} is outside \[0, 4\]") as info:
        ir_runner.load(str(path)).run(_ctc_feeds(np.zeros((2, 4, 3)), [2, length]))
    assert "CTCGreedyDecoderSeqLen" in str(info.value)


def _ctc_ir(shapes=("2,4,3", "2"), types=("f32", "i32"), attrs=None):
    b = IRBuilder()
    inputs = [b.parameter(n, t, s) for n, t, s in zip(("data", "sequence_length", "blank_index"), types, shapes)]
    b.result(b.layer("CTCGreedyDecoderSeqLen", "opset6", inputs, attrs=attrs or {},
                     out_specs=[("I32", [2, 4]), ("I32", [2])]))
    return b.build()[0]


@pytest.mark.parametrize("kwargs, error, what, port", [
    ({"shapes": ("2,4", "2")}, InferenceError, "data must be 3-D", "data"),
    ({"shapes": ("2,4,3", "2,1")}, InferenceError, "sequence_length must be 1-D", "sequence_length"),
    ({"shapes": ("2,4,3", "3")}, InferenceError, "data's N is 2", "sequence_length"),
    ({"shapes": ("2,4,3", "2", "2"), "types": ("f32", "i32", "i32")}, InferenceError, "one element", "blank_index"),
    ({"shapes": ("2,4,3", "2", ""), "types": ("f32", "i32", "f32")}, InferenceError, "integer element type",
     "blank_index"),
    ({"types": ("f32", "f32")}, InferenceError, "integer element type", "sequence_length"),
    ({"types": ("i32", "i32")}, UnsupportedError, "floating-point data", "data"),
])
def test_ctc_bad_inputs_name_layer_and_port(kwargs, error, what, port):
    with pytest.raises(error, match=what) as info:
        ir_runner.load(_ctc_ir(**kwargs))
    assert "CTCGreedyDecoderSeqLen-6" in str(info.value) and f"({port})" in str(info.value)


@pytest.mark.parametrize("attrs, what", [({"classes_index_type": "f32"}, "classes_index_type"),
                                         ({"merge_repeated": "maybe"}, "merge_repeated")])
def test_ctc_bad_attributes(attrs, what):
    with pytest.raises((UnsupportedError, ir_runner.errors.IRError), match=what) as info:
        ir_runner.load(_ctc_ir(attrs=attrs))
    assert "CTCGreedyDecoderSeqLen" in str(info.value)


def test_ctc_batch_rule_and_chunked_run(tmp_path):
    op = next(op for op in OPS if op.type == "CTCGreedyDecoderSeqLen")
    assert op.batch({}, [], [], [0, 0]) == [0, 0]
    assert op.batch({}, [], [], [0, 0, None]) == [0, 0]
    assert "axis 0" in op.batch({}, [], [], [0, None])
    ird = pytest.importorskip("ir_runner.dask")
    path, _ = _ctc(tmp_path, ([-1, 6, 4], [-1], []))
    rng = np.random.default_rng(6)
    feeds = _ctc_feeds(rng.integers(0, 3, (9, 6, 4)), rng.integers(0, 7, 9), 1)
    model = ir_runner.load(str(path))
    whole = model.run(feeds)
    chunked = ird.run(model, feeds, batch_axis={"data": 0, "sequence_length": 0}, chunk=4)
    for name, value in whole.items():
        np.testing.assert_array_equal(chunked[name].compute(), value)


@pytest.mark.parametrize("seed", range(20))
def test_ctc_random_against_the_cpu_plugin(seed, tmp_path):
    rng = np.random.default_rng(seed)
    n, t, c = (int(v) for v in rng.integers(1, [5, 12, 8], endpoint=True))
    et = ("f32", "f16", "bf16")[seed % 3]
    seq_et = ("i32", "i64")[seed // 3 % 2]
    blank = None if rng.random() < 0.3 else [int(rng.integers(-1, c + 1))]
    shapes = ([n, t, c], [n]) + (() if blank is None else ([1],))
    if rng.random() < 0.4:
        shapes = ([-1, -1, -1], [-1]) + shapes[2:]
    path, _ = _ctc(tmp_path, shapes, et, seq_et, merge=bool(rng.random() < 0.6),
                   classes=("i32", "i64")[int(rng.integers(2))], lengths=("i32", "i64")[int(rng.integers(2))])
    check_inference(path)
    data = rng.integers(0, 4, (n, t, c)) if rng.random() < 0.5 else rng.standard_normal((n, t, c))
    check_run(path, _ctc_feeds(data, rng.integers(0, t + 1, n), blank, et, seq_et), oracle="cpu")


# -- CTCGreedyDecoder-1 ------------------------------------------------------------------------------------------

def _ctc1(tmp_path, shapes, et="f32", mask_et=None, merge=True, name="ctc1"):
    data = opset1.parameter(partial_shape(shapes[0]), OV_TYPES[et], name="data")
    mask = opset1.parameter(partial_shape(shapes[1]), OV_TYPES[mask_et or et], name="sequence_mask")
    node = opset1.ctc_greedy_decoder(data, mask, merge)
    return write_ir(node, [data, mask], tmp_path, name), node


@pytest.mark.parametrize("shapes", [
    ([5, 2, 4], [5, 2]), ([-1, 2, 4], [5, -1]), ([D(2, 6), D(1, 3), 4], [D(4, 8), D(2, 5)]), (None, [5, 2]),
    ([5, 2, 4], None), (None, None), ([D(1, 4), -1, -1], None), ([0, 3, 2], [0, 3]),
])
def test_ctc_greedy_decoder_shapes_as_openvino_infers_them(shapes, tmp_path):
    path, node = _ctc1(tmp_path, shapes)
    check_inference(path)
    check_output_shapes(path, node)


CTC1_INPUTS = ("data", "sequence_mask")


def _ctc1_ir(shapes=("5,2,4", "5,2"), types=("f32", "f32")):
    b = IRBuilder()
    data, mask = (b.parameter(n, t, s) for n, t, s in zip(CTC1_INPUTS, types, shapes))
    b.result(b.layer("CTCGreedyDecoder", "opset1", [data, mask], out_specs=[(types[0].upper(), [2, 5, 1, 1])]))
    return b.build()[0]


@pytest.mark.parametrize("kwargs, error, what, port", [
    ({"shapes": ("5,2", "5,2")}, InferenceError, "data must be 3-D", "data"),
    ({"shapes": ("5,2,4", "5,2,1")}, InferenceError, "sequence_mask must be 2-D", "sequence_mask"),
    ({"shapes": ("5,2,4", "4,2")}, InferenceError, "differ in T", "sequence_mask"),
    ({"shapes": ("5,2,4", "5,3")}, InferenceError, "differ in N", "sequence_mask"),
    ({"types": ("i32", "i32")}, UnsupportedError, "floating-point", "data"),
    ({"types": ("f32", "i32")}, UnsupportedError, "floating-point", "sequence_mask"),
])
def test_ctc_greedy_decoder_bad_inputs_name_layer_and_port(kwargs, error, what, port):
    with pytest.raises(error, match=what) as info:
        ir_runner.load(_ctc1_ir(**kwargs))
    assert "CTCGreedyDecoder-1" in str(info.value) and f"({port})" in str(info.value)


def _ctc1_loop(data, mask, merge):
    """OpenVINO's reference loop (``ov::reference::ctc_greedy_decoder``), written anew in plain Python."""
    t, n, c = data.shape
    out = np.full((n, t, 1, 1), -1, data.dtype)
    for b in range(n):
        previous, slot = -1, 0
        for s in range(t):
            if mask[s, b] == 0:
                break
            best = 0
            for k in range(1, c):  # std::max_element: the first largest, by "<"
                if data[s, b, best] < data[s, b, k]:
                    best = k
            if not (merge and previous == best) and best < c - 1:
                out[b, slot, 0, 0] = best
                slot += 1
            previous = best
    return out


def _ctc1_feeds(rng, t, n, c, et, mask_et=None, nan=False):
    data = rng.integers(0, 3, (t, n, c)).astype(np.float32)
    if nan:
        data[rng.random((t, n, c)) < 0.2] = np.nan
    mask = (rng.random((t, n)) < 0.85).astype(np.float32)
    return {"data": data.astype(NP_TYPES[et]), "sequence_mask": mask.astype(NP_TYPES[mask_et or et])}


@pytest.mark.parametrize("merge", [True, False])
@pytest.mark.parametrize("seed", range(10))
def test_ctc_greedy_decoder_against_the_cpu_plugin_and_the_reference_loop(seed, merge, tmp_path):
    """No evaluate in the wheel: bit for bit against the CPU plugin (f32; masks with holes, NaN scores, ties)."""
    rng = np.random.default_rng(seed)
    t, n, c = (int(v) for v in rng.integers(1, [8, 4, 6], endpoint=True))
    path, _ = _ctc1(tmp_path, ([-1, -1, c], [-1, -1]) if seed % 2 else ([t, n, c], [t, n]), merge=merge)
    check_inference(path)
    feeds = _ctc1_feeds(rng, t, n, c, "f32", nan=seed % 3 == 0)
    got = check_run(path, feeds, oracle="cpu")
    np.testing.assert_array_equal(list(got.values())[0], _ctc1_loop(feeds["data"], feeds["sequence_mask"], merge))


@pytest.mark.parametrize("et, mask_et", [("f16", "f16"), ("f64", "f64"), ("bf16", "f32"), ("f32", "f16")])
def test_ctc_greedy_decoder_other_float_types_against_the_reference_loop(et, mask_et, tmp_path):
    rng = np.random.default_rng(5)
    path, _ = _ctc1(tmp_path, ([6, 3, 4], [6, 3]), et, mask_et)
    check_inference(path)
    feeds = _ctc1_feeds(rng, 6, 3, 4, et, mask_et, nan=True)
    got = list(ir_runner.load(str(path)).run(feeds).values())[0]
    assert got.dtype == NP_TYPES[et]
    want = _ctc1_loop(feeds["data"].astype(np.float32), feeds["sequence_mask"].astype(np.float32), True)
    np.testing.assert_array_equal(got.astype(np.float32), want)


def test_ctc_greedy_decoder_specification_example(tmp_path):
    """Classes 0, 0, blank, 1, 1, 2 (C = 4, blank 3) with the mask ending after 5 steps: merged -> [0, 1]."""
    scores = np.eye(4, dtype=np.float32)[[0, 0, 3, 1, 1, 2]][:, None, :]
    mask = np.array([[1], [1], [1], [1], [1], [0]], np.float32)
    for merge, want in ((True, [0, 1, -1, -1, -1, -1]), (False, [0, 0, 1, 1, -1, -1])):
        path, _ = _ctc1(tmp_path, ([6, 1, 4], [6, 1]), merge=merge, name=f"m{merge}")
        got = check_run(path, {"data": scores, "sequence_mask": mask}, oracle="cpu")
        assert list(got.values())[0].reshape(-1).tolist() == want


def test_ctc_greedy_decoder_batch_rule_and_chunked_run(tmp_path):
    op = next(op for op in OPS if op.type == "CTCGreedyDecoder")
    assert op.batch({}, [], [None], [1, 1]) == [0]
    assert "axis 1" in op.batch({}, [], [None], [0, 0])
    ird = pytest.importorskip("ir_runner.dask")
    path, _ = _ctc1(tmp_path, ([6, -1, 4], [6, -1]))
    feeds = _ctc1_feeds(np.random.default_rng(3), 6, 7, 4, "f32")
    model = ir_runner.load(str(path))
    chunked = ird.run(model, feeds, batch_axis={"data": 1, "sequence_mask": 1}, chunk=3)
    for name, value in model.run(feeds).items():
        np.testing.assert_array_equal(chunked[name].compute(), value)
