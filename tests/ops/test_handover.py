"""Outputs computed at inference, handed over to the kernel (``ops/toolkit/handover.py``): the operations whose
output length only their computation decides (NonMaxSuppression-5/9, -1/3/4, MulticlassNms, MatrixNms,
NMSRotated, GenerateProposals, Unique) run their selection once for a new input value (inference needs its length, the
run takes that result) and not again for the same value (its plan holds them, up to 64 KiB: larger ones are
handed over once); the results equal a fresh computation, a changed input does not take another's outputs, and the
caller owns them."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset4, opset5, opset8, opset9, opset10, opset13  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.ops.detection import nms, nms_multiclass, nms_rotated, proposals  # noqa: E402
from ir_runner.ops.sort_search import unique  # noqa: E402
from ir_runner.ops.toolkit.handover import Computed, computed_once  # noqa: E402
from tests.helpers.optest import write_ir  # noqa: E402


def _p(name, shape, et=ov.Type.f32):
    return opset1.parameter(ov.PartialShape(shape), et, name=name)


def _boxes(rng, shape):
    corner = rng.random(shape[:-1] + (2,)) * 8
    return np.concatenate([corner, corner + rng.random(shape[:-1] + (2,)) * 3 + 0.5], -1).astype(np.float32)


def _consts():
    return opset1.constant(np.int64(3)), opset1.constant(np.float32(0.4)), opset1.constant(np.float32(0.1))


def _nms(version):
    def build(rng):
        b, s = _p("boxes", [2, 6, 4]), _p("scores", [2, 3, 6])
        make = {5: opset5.non_max_suppression, 9: opset9.non_max_suppression}.get(version)
        node = make(b, s, *_consts()) if make else opset4.non_max_suppression(b, s, *_consts())
        feeds = {"boxes": _boxes(rng, (2, 6, 4)), "scores": rng.random((2, 3, 6)).astype(np.float32)}
        return node, [b, s], feeds, 2 * 3
    return build


def _multiclass(kind):
    def build(rng):
        b, s = _p("boxes", [2, 6, 4]), _p("scores", [2, 3, 6])
        make = opset8.matrix_nms if kind == "matrix" else opset9.multiclass_nms
        node = make(b, s, score_threshold=0.1, **({} if kind == "matrix" else {"iou_threshold": 0.4}))
        feeds = {"boxes": _boxes(rng, (2, 6, 4)), "scores": rng.random((2, 3, 6)).astype(np.float32)}
        return node, [b, s], feeds, 2 * 3
    return build


def _rotated(rng):
    b, s = _p("boxes", [2, 6, 5]), _p("scores", [2, 3, 6])
    node = opset13.nms_rotated(b, s, *_consts())
    boxes = np.concatenate([rng.random((2, 6, 2)) * 8, rng.random((2, 6, 2)) * 3 + 0.5, rng.random((2, 6, 1))], -1)
    return node, [b, s], {"boxes": boxes.astype(np.float32), "scores": rng.random((2, 3, 6)).astype(np.float32)}, 6


def _generate(rng):
    params = [_p("info", [2, 3]), _p("anchors", [3, 4, 2, 4]), _p("deltas", [2, 8, 3, 4]), _p("scores", [2, 2, 3, 4])]
    node = opset9.generate_proposals(*params, 1.0, 0.7, 20, 5)
    anchors = _boxes(rng, (3, 4, 2, 4)) * 4
    feeds = {"info": np.array([[40, 40, 1], [40, 40, 1]], np.float32), "anchors": anchors,
             "deltas": (rng.standard_normal((2, 8, 3, 4)) * 0.2).astype(np.float32),
             "scores": rng.random((2, 2, 3, 4)).astype(np.float32)}
    return node, params, feeds, 2


def _unique(rng):
    data = _p("data", [3, 5])
    node = opset10.unique(data, opset1.constant(np.int64(-1)), sorted=False)
    return node, [data], {"data": rng.integers(0, 3, (3, 5)).astype(np.float32)}, 1


CASES = {  # the model, and the function its kernel calls once per (image, class), per image, or per run
    "nms5": (_nms(5), nms, "_one_class"), "nms9": (_nms(9), nms, "_one_class"), "nms4": (_nms(4), nms, "_one_class"),
    "multiclass": (_multiclass("multiclass"), nms_multiclass, "_multiclass_one"),
    "matrix": (_multiclass("matrix"), nms_multiclass, "_matrix_one"),
    "rotated": (_rotated, nms_rotated, "_one_class"), "generate": (_generate, proposals, "_refine"),
    "unique": (_unique, unique, "_keys"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_selection_runs_once_per_run(case, tmp_path, monkeypatch):
    build, module, inner = CASES[case]
    rng = np.random.default_rng(1)
    node, params, feeds, per_run = build(rng)
    model = ir_runner.load(write_ir(node, params, tmp_path))
    calls = []
    original = getattr(module, inner)
    monkeypatch.setattr(module, inner, lambda *a, **k: calls.append(1) or original(*a, **k))
    first = [a.copy() for a in model.run(feeds).values()]
    assert len(calls) == per_run  # (inference's computation, taken by the run)
    again = model.run(feeds)  # the plan of these values handed them over once: computed, as every layer is
    assert len(calls) == 2 * per_run
    for a, b in zip(first, again.values()):
        assert np.array_equal(a, b)
        a[...] = 0  # the caller owns its outputs: the next run's are not these
    other = {name: value.copy() for name, value in feeds.items()}
    moved = list(other)[-1]  # (the scores, or Unique's data)
    other[moved] = rng.random(other[moved].shape).astype(np.float32)
    changed = model.run(other)  # a new plan: inference's computation, taken by the run
    assert len(calls) == 3 * per_run
    fresh = ir_runner.load(write_ir(node, params, tmp_path, "fresh")).run(other)
    for a, b in zip(changed.values(), fresh.values()):
        assert np.array_equal(a, b)
    assert any(not np.array_equal(a, b) for a, b in zip(again.values(), changed.values()))


@pytest.mark.parametrize("size", [4, 5000], ids=["kept whole", "by digest"])
@pytest.mark.parametrize("dtype", [np.float32, "bfloat16"])
def test_handed_outputs_only_for_the_inputs_they_came_from(size, dtype):
    """A kernel given other inputs (a second layer with the same parameters, a crosscheck moving an input, a
    caller's array changed since, another dtype or shape) computes; given the same ones it takes them, once."""
    runs = []

    def kernel(x, *, scale):
        runs.append(1)
        return (x * scale, np.array([len(x)]))

    wrapped = computed_once(kernel)
    x = np.arange(size).astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    changed = x.copy()
    changed[0] = 7  # (as a caller's array changed in place after the inference)
    for other in (changed, x.astype(np.float64), x[:2]):
        computed = Computed([x], kernel(x, scale=2))
        assert np.array_equal(wrapped(other, scale=2, computed=computed)[0], other * 2) and len(runs) == 2
        runs.clear()
    computed = Computed([x], kernel(x, scale=2))
    got = wrapped(x.copy(), scale=2, computed=computed)
    assert len(runs) == 1 and np.array_equal(got[0], x * 2)
    got[0][...] = -1
    assert np.array_equal(wrapped(x, scale=2, computed=computed)[0], x * 2) and len(runs) == 2
    assert computed.name == "2 outputs computed at inference"


def test_large_outputs_are_handed_over_once_and_not_kept_by_the_plan(tmp_path, monkeypatch):
    """Unique of 2**14 distinct values (outputs of 64 KiB + 3 x 128 KiB): the first run takes inference's result,
    and the plan (one per value, 64 cached) keeps none of it: a later run on the same value computes again."""
    data = _p("data", [-1])
    model = ir_runner.load(write_ir(opset10.unique(data, sorted=True), [data], tmp_path))
    calls = []
    original = unique._keys
    monkeypatch.setattr(unique, "_keys", lambda *a, **k: calls.append(1) or original(*a, **k))
    x = np.random.default_rng(3).permutation(2**14).astype(np.float32)
    first = model.run({"data": x})
    assert len(calls) == 1
    (computed,) = [step.kernel.keywords["computed"] for step in model.plan_for([x]).steps
                   if "computed" in getattr(step.kernel, "keywords", {})]
    assert computed.outputs_for([x]) is None  # (handed over: nothing held)
    again = model.run({"data": x})
    assert len(calls) == 2
    for a, b in zip(first.values(), again.values()):
        assert np.array_equal(a, b) and not np.shares_memory(a, b)
    assert np.array_equal(list(first.values())[0], np.arange(2**14))


def test_outputs_given_once_go_to_one_caller():
    runs = []

    def kernel(x):
        runs.append(1)
        return (np.repeat(x, 2),)

    x = np.arange(40000, dtype=np.float32)  # (outputs of 320 KB: handed over once)
    computed = Computed([x], kernel(x))
    wrapped = computed_once(kernel)
    given = wrapped(x, computed=computed)
    assert len(runs) == 1 and given[0].flags.writeable
    given[0][...] = -1
    assert np.array_equal(wrapped(x, computed=computed)[0], np.repeat(x, 2)) and len(runs) == 2
    assert computed.name == "1 outputs computed at inference"


@pytest.mark.parametrize("size", [4, 5000], ids=["kept whole", "by digest"])
def test_the_same_bytes_in_another_one_byte_float_type_are_other_inputs(size):
    """ml_dtypes' 1-byte types (f8e4m3, f8e5m2fnuz, f8e8m0, ...) share the dtype string '<V1': the bytes of an
    f8e4m3 input read as f8e8m0 are another value, computed anew."""
    runs = []

    def kernel(x):
        runs.append(1)
        return (x.astype(np.float32),)

    x = (np.arange(size) % 100).astype(np.uint8)
    e4m3, e8m0 = x.view(ml_dtypes.float8_e4m3fn), x.view(ml_dtypes.float8_e8m0fnu)
    assert e4m3.dtype.str == e8m0.dtype.str
    computed = Computed([e4m3], kernel(e4m3))
    got = computed_once(kernel)(e8m0, computed=computed)
    assert len(runs) == 2 and np.array_equal(got[0], e8m0.astype(np.float32), equal_nan=True)
