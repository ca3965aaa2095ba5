"""CTCLoss-4: shapes as OpenVINO infers them (static, dynamic and interval dims, dynamic ranks, the optional
blank_index), values against OpenVINO's CPU plugin (the core node has no evaluate) within ctc_loss.BOUND for
every attribute combination and blank position, a forward-recursion-free brute force over alignments for
the semantics, the corners (no alignment: inf; empty labels), errors naming the layer, and the batch rule."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset4  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.ops.sequence_recurrent.ctc_loss import BOUND, OPS, ctc_loss  # noqa: E402
from tests.helpers.cpu_oracle import cpu_outputs  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, write_ir  # noqa: E402

D = ov.Dimension
NAMES = ("logits", "logit_length", "labels", "label_length", "blank_index")


def _model(tmp_path, shapes, flags=(False, True, False), types=("f32", "i32", "i32", "i32", "i32")):
    params = []
    for name, shape, et in zip(NAMES, shapes, types):
        shape = ov.PartialShape.dynamic() if shape is None else ov.PartialShape([d if isinstance(d, D) else D(d)
                                                                                 for d in shape])
        p = opset1.parameter(shape, getattr(ov.Type, et), name=name)
        p.output(0).get_tensor().set_names({name})
        params.append(p)
    node = opset4.ctc_loss(*params[:4], params[4] if len(params) == 5 else None, *flags)
    return write_ir(node, params, tmp_path), node


@pytest.mark.parametrize("shapes", [
    ([2, 5, 4], [2], [2, 5], [2], []),
    ([2, 5, 4], [2], [2, 5], [2]),
    ([-1, 5, 4], [3], [-1, 5], [-1], []),
    ([-1, -1, -1], [-1], [-1, -1], [D(2, 6)], []),
    ([D(1, 4), 5, 4], [D(2, 8)], [-1, 5], [-1]),
    (None, [4], None, None, None),
    (None, None, None, None),
    ([-1, 5, 4], None, [-1, -1], [3]),
])
def test_shapes_as_openvino_infers_them(shapes, tmp_path):
    path, node = _model(tmp_path, shapes)
    check_inference(path)
    check_output_shapes(path, node)


def _case(rng, batch, time, classes, blank, *, min_label=1):
    logits = (rng.standard_normal((batch, time, classes)) * 2).astype(np.float32)
    frames = rng.integers(1, time + 1, batch).astype(np.int32)
    labels = rng.integers(0, classes, (batch, time)).astype(np.int32)
    labels = np.where(labels == blank, (blank + 1) % classes, labels).astype(np.int32)
    counts = np.array([rng.integers(min_label, f + 1) for f in frames], np.int32)
    return dict(zip(NAMES, (logits, frames, labels, counts, np.array(blank, np.int32))))


@pytest.mark.parametrize("flags", list(itertools.product([False, True], repeat=3)))
def test_values_near_the_cpu_plugins(flags, tmp_path):
    """Random cases of every attribute combination, blank anywhere, some without alignment (inf)."""
    rng = np.random.default_rng(sum(f << i for i, f in enumerate(flags)))
    path, _ = _model(tmp_path, [[3, 7, 5], [3], [3, 7], [3], []], flags)
    model = ir_runner.load(str(path))
    for _ in range(12):
        feeds = _case(rng, 3, 7, 5, int(rng.integers(0, 5)))
        (got,) = model.run(feeds).values()
        (want,) = cpu_outputs(path, feeds)
        assert np.array_equal(np.isinf(got), np.isinf(want)), (got, want)
        finite = np.isfinite(want)
        np.testing.assert_allclose(got[finite], want[finite], rtol=BOUND, atol=1e-6)


@pytest.mark.parametrize("flags", list(itertools.product([False, True], repeat=3)))
def test_labels_equal_to_the_blank_near_the_cpu_plugins(flags, tmp_path):
    """A label equal to blank_index moves as a blank in the CPU plugin (no skip from it; it stays without
    merging): random labels that include the blank, every attribute combination."""
    rng = np.random.default_rng(7 + sum(f << i for i, f in enumerate(flags)))
    path, _ = _model(tmp_path, [[3, 8, 4], [3], [3, 8], [3], []], flags)
    model = ir_runner.load(str(path))
    for _ in range(8):
        feeds = _case(rng, 3, 8, 4, int(rng.integers(0, 4)))
        feeds["labels"] = rng.integers(0, 4, (3, 8)).astype(np.int32)  # (the blank included)
        (got,) = model.run(feeds).values()
        (want,) = cpu_outputs(path, feeds)
        assert np.array_equal(np.isinf(got), np.isinf(want)), (got, want)
        finite = np.isfinite(want)
        np.testing.assert_allclose(got[finite], want[finite], rtol=BOUND, atol=1e-6)


@pytest.mark.parametrize(("merge", "finite"), [(True, False), (False, True)])
def test_repeated_labels_need_a_blank_between_only_when_merging(merge, finite, tmp_path):
    path, _ = _model(tmp_path, [[1, 2, 3], [1], [1, 2], [1]], (False, merge, False))
    feeds = {"logits": np.zeros((1, 2, 3), np.float32), "logit_length": np.array([2], np.int32),
             "labels": np.array([[1, 1]], np.int32), "label_length": np.array([2], np.int32)}
    (got,) = ir_runner.load(str(path)).run(feeds).values()
    assert np.isfinite(got[0]) == finite and got.tolist() == cpu_outputs(path, feeds)[0].tolist()


def test_long_sequences_and_index_types_near_the_cpu_plugins(tmp_path):
    rng = np.random.default_rng(7)
    path, _ = _model(tmp_path, [[2, 60, 30], [2], [2, 60], [2]], types=("f32", "i64", "i64", "i32", "i32"))
    feeds = _case(rng, 2, 60, 30, 29)
    del feeds["blank_index"]
    feeds = {k: v.astype(np.int64) if k in ("logit_length", "labels") else v for k, v in feeds.items()}
    (got,) = ir_runner.load(str(path)).run(feeds).values()
    (want,) = cpu_outputs(path, feeds)
    np.testing.assert_allclose(got, want, rtol=BOUND)


def _brute(logits, labels, blank, merge):
    """Sum over every path of frames: collapse (runs when ``merge``), drop blanks, compare with ``labels``."""
    frames, classes = logits.shape
    log_p = logits.astype(np.float64) - np.log(np.exp(logits.astype(np.float64)).sum(axis=1, keepdims=True))
    total = 0.0
    for path in itertools.product(range(classes), repeat=frames):
        out = [c for i, c in enumerate(path) if not (merge and i and path[i - 1] == c)]
        if [c for c in out if c != blank] == list(labels):
            total += math.exp(sum(log_p[t, c] for t, c in enumerate(path)))
    return -math.log(total) if total else math.inf


@pytest.mark.parametrize(("labels", "flags"), [
    ([0, 0], (False, True, False)), ([0, 0], (False, False, False)), ([1, 0, 1], (False, True, False)),
    ([0, 0, 1], (True, True, False)), ([1, 0, 1, 0], (False, True, True)), ([1, 1], (False, False, False)),
])
def test_values_equal_a_sum_over_every_alignment(labels, flags):
    rng = np.random.default_rng(len(labels))
    logits = rng.standard_normal((1, 5, 3)).astype(np.float32)
    collapse, merge, unique = flags
    decoded = list(dict.fromkeys(labels)) if unique else \
        [c for i, c in enumerate(labels) if not (collapse and i and labels[i - 1] == c)]
    got = ctc_loss(logits, np.array([5]), np.array([labels + [0] * (5 - len(labels))]), np.array([len(labels)]),
                   np.array(2), collapse=collapse, merge=merge, unique=unique)
    want = _brute(logits[0], decoded, 2, merge)
    assert got[0] == pytest.approx(want, rel=1e-6) if math.isfinite(want) else got[0] == math.inf


def test_empty_labels_cost_the_blank_frames():
    """label_length 0: -sum of log p(blank) (TensorFlow's and PyTorch's value; the reference kernel gives 0, the
    CPU plugin of 2026.4.1 crashes the process)."""
    logits = np.random.default_rng(1).standard_normal((1, 4, 3)).astype(np.float32)
    got = ctc_loss(logits, np.array([3]), np.zeros((1, 4), np.int32), np.array([0]), collapse=False, merge=True,
                   unique=False)
    log_p = logits[0, :3].astype(np.float64) - np.log(np.exp(logits[0, :3].astype(np.float64)).sum(1, keepdims=True))
    assert got[0] == pytest.approx(-log_p[:, 2].sum(), rel=1e-6)
    assert ctc_loss(logits, np.array([0]), np.zeros((1, 4)), np.array([0]), collapse=False, merge=True,
                    unique=False)[0] == 0


@pytest.mark.parametrize(("change", "message"), [
    ({"logit_length": np.array([5, 9], np.int32)}, r"logit_length\[1\] = 9 is outside \[0, 7\]"),
    ({"label_length": np.array([6, 2], np.int32)}, r"label_length\[0\] = 6 is above logit_length\[0\] = 5"),
    ({"labels": np.full((2, 7), 5, np.int32)}, r"labels\[0, 0\] = 5 is outside \[0, 5\)"),
    ({"blank_index": np.array(-1, np.int32)}, r"blank_index -1 is outside \[0, 5\)"),
])
def test_bad_values_are_refused_naming_the_layer_and_port(change, message, tmp_path):
    path, _ = _model(tmp_path, [[2, 7, 5], [2], [2, 7], [2], []])
    feeds = {"logits": np.zeros((2, 7, 5), np.float32), "logit_length": np.array([5, 7], np.int32),
             "labels": np.zeros((2, 7), np.int32), "label_length": np.array([2, 2], np.int32),
             "blank_index": np.array(4, np.int32), **change}
    with pytest.raises(ir_runner.InputError, match=r"CTCLoss-4.*" + message):
        ir_runner.load(str(path)).run(feeds)


@pytest.mark.parametrize(("shapes", "types", "message"), [
    (("2,5,4", "2", "2,5", "2"), ("i32", "i32", "i32", "i32"), "logits must have a floating-point element type"),
    (("2,5,4", "2", "2,5", "2"), ("f32", "f32", "i32", "i32"), "logit_length must have an integer element type"),
    (("2,5", "2", "2,5", "2"), ("f32", "i32", "i32", "i32"), r"logits must be 3-D \[N, T, C\]"),
    (("2,5,4", "3", "2,5", "2"), ("f32", "i32", "i32", "i32"), r"dim 0 of logit_length \(3\) must be the batch N"),
    (("2,5,4", "2", "2,6", "2"), ("f32", "i32", "i32", "i32"), r"dim 1 of labels \(6\) must be the time T"),
    (("2,5,4", "2", "2,5", "2,1"), ("f32", "i32", "i32", "i32"), "label_length must be 1-D"),
])
def test_invalid_models_are_refused_naming_the_layer(shapes, types, message):
    b = IRBuilder("ctc")
    inputs = [b.parameter(n, t, s) for n, t, s in zip(NAMES, types, shapes)]
    b.result(b.layer("CTCLoss", "opset4", inputs, attrs={}, out_specs=[("FP32", [2])], name="loss"))
    with pytest.raises(ir_runner.InferenceError, match=r"layer 'loss' \(CTCLoss-4.*" + message):
        ir_runner.load(*b.build())


def test_batch_rule_and_chunked_runs_equal_whole_runs(tmp_path):
    (op,) = OPS
    assert op.batch(None, None, None, [0, 0, 0, 0, None]) == [0]
    assert isinstance(op.batch(None, None, None, [1, 0, 0, 0]), str)
    path, _ = _model(tmp_path, [[-1, 6, 4], [-1], [-1, 6], [-1]])
    rng = np.random.default_rng(3)
    feeds = _case(rng, 8, 6, 4, 3)
    del feeds["blank_index"]
    model = ir_runner.load(str(path))
    (whole,) = model.run(feeds).values()
    parts = [next(iter(model.run({k: v[i:i + 3] for k, v in feeds.items()}).values())) for i in range(0, 8, 3)]
    assert np.array_equal(np.concatenate(parts), whole)
