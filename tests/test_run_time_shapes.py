"""Shapes only the run decides: data-dependent outputs (NonMaxSuppression's boxes, NonZero's indices) whose
inputs are computed through layer outputs above the folding limit, at the top level and inside an If body
(torchvision's SSDlite320 and Faster R-CNN exports hold such a NonMaxSuppression-9). The plan is made per value
of the inputs they come from, computing what decides the shape whatever its size."""

from __future__ import annotations

import numpy as np
import pytest

import ir_runner
from ir_runner.ops.api import FOLD_MAX_BYTES, OpContext

ov = pytest.importorskip("openvino")
from openvino import opset13 as op  # noqa: E402

N = FOLD_MAX_BYTES // 16 + 100  # boxes [1, N, 4] f32 just above the folding limit


def _nms(boxes, scores, threshold: float):
    """NMS-9 of ``boxes`` scaled by one (a computed tensor above the folding limit): selected indices."""
    big = op.multiply(boxes, op.constant(np.float32(1.0)))
    return op.non_max_suppression(big, scores, op.constant(np.int64(20)), op.constant(np.float32(0.5)),
                                  op.constant(np.float32(threshold)), box_encoding="corner",
                                  sort_result_descending=False, output_type="i64").output(0)


def _nonzero_count(scores, threshold: float):
    """NonZero of ``scores > threshold`` computed through a tensor above the folding limit, transposed."""
    big = op.add(op.broadcast(scores, op.constant(np.array([1, 2, N], np.int64))), op.constant(np.float32(0)))
    return op.transpose(op.non_zero(op.greater(big, op.constant(np.float32(threshold))), "i64"),
                        op.constant(np.array([1, 0], np.int64))).output(0)


def _save(model, tmp_path, name: str) -> str:
    path = str(tmp_path / f"{name}.xml")
    ov.save_model(model, path, compress_to_fp16=False)
    return path


def _if_model(tmp_path) -> str:
    """``cond ? NMS(boxes, scores) : NonZero(scores > 0.999)``, both bodies fed from tensors above the limit."""
    boxes = op.parameter([1, N, 4], np.float32, name="boxes")
    scores = op.parameter([1, 1, N], np.float32, name="scores")
    cond = op.parameter([], np.bool_, name="cond")
    then_boxes, then_scores = op.parameter([1, N, 4], np.float32), op.parameter([1, 1, N], np.float32)
    then_out = op.result(_nms(then_boxes, then_scores, 0.999))
    else_scores = op.parameter([1, 1, N], np.float32)
    else_out = op.result(_nonzero_count(else_scores, 0.999))
    node = op.if_op(cond)
    node.set_then_body(ov.Model([then_out], [then_boxes, then_scores], "then"))
    node.set_else_body(ov.Model([else_out], [else_scores], "else"))
    node.set_input(boxes.output(0), then_boxes, None)
    node.set_input(scores.output(0), then_scores, else_scores)
    out = node.set_output(then_out, else_out)
    return _save(ov.Model([out], [boxes, scores, cond], "if_nms"), tmp_path, "if_nms")


def _inputs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    corner = rng.random((1, N, 2), dtype=np.float32)
    return np.concatenate([corner, corner + 0.05], -1), rng.random((1, 1, N), dtype=np.float32)


def _on_cpu(path: str, feeds: list[np.ndarray]) -> np.ndarray:
    return ov.Core().compile_model(path, "CPU")(feeds)[0]


def test_nms_and_nonzero_in_if_bodies_load_and_run_as_the_cpu_plugin(tmp_path):
    path = _if_model(tmp_path)
    model = ir_runner.load(path)  # was refused: "counted cannot be computed before the run"
    for seed in (0, 1):
        boxes, scores = _inputs(seed)
        for cond in (True, False):
            feeds = [boxes, scores, np.array(cond)]
            got = next(iter(model.run(feeds).values()))
            want = _on_cpu(path, feeds)  # selected indices of hard NMS agree exactly (ops/nms.py)
            assert got.dtype == np.int64 and got.shape == want.shape and np.array_equal(got, want)
        expected_nonzero = np.argwhere(np.broadcast_to(scores, (1, 2, N)) > np.float32(0.999))
        assert np.array_equal(next(iter(model.run([boxes, scores, np.array(False)]).values())), expected_nonzero)


def test_top_level_nms_fed_from_a_large_computed_tensor_runs_per_value(tmp_path):
    boxes, scores = op.parameter([1, N, 4], np.float32, name="boxes"), op.parameter([1, 1, N], np.float32, name="s")
    path = _save(ov.Model([_nms(boxes, scores, 0.9999)], [boxes, scores], "nms"), tmp_path, "nms")
    model = ir_runner.load(path)
    counts = set()
    for seed in (2, 3):
        feeds = list(_inputs(seed))
        got = next(iter(model.run(feeds).values()))
        assert np.array_equal(got, _on_cpu(path, feeds))
        counts.add(len(got))
    assert len(counts) == 2  # two values, two output lengths: a plan each


def test_computing_what_decides_a_shape_respects_the_memory_limit(tmp_path):
    boxes, scores = op.parameter([1, N, 4], np.float32, name="boxes"), op.parameter([1, 1, N], np.float32, name="s")
    path = _save(ov.Model([_nms(boxes, scores, 0.9999)], [boxes, scores], "nms"), tmp_path, "nms")
    model = ir_runner.load(path, memory_limit=2 * FOLD_MAX_BYTES)  # the inputs and their product need more
    with pytest.raises(ir_runner.ResourceLimitError, match=r"running would need up to 2\.\d MiB.*memory limit"):
        model.run(list(_inputs(0)))


def test_bodies_take_the_models_memory_limit(tmp_path):
    """Each body infers what decides its shapes within the model's memory_limit (``infer_for_inputs``), as the
    model does (bodies took the default limit, whatever the model's)."""
    path = _if_model(tmp_path)
    for limit in (3 * FOLD_MAX_BYTES, None):
        model = ir_runner.load(path, memory_limit=limit)
        assert model.graph.subgraphs and {body.memory_limit for body in model.graph.subgraphs.values()} == {limit}


def _after_if(then: bool = True):
    """``x`` (f32[4,1]) and ``cond`` as Parameters, and ``cond ? x[:2] : x[:3]``: an output of [2,1] or [3,1],
    a shape only the run decides."""
    x, cond = op.parameter([4, 1], np.float32, name="x"), op.parameter([], np.bool_, name="cond")
    bodies = []
    for stop in (2, 3):
        inner = op.parameter([4, 1], np.float32)
        out = op.result(op.slice(inner, op.constant(np.array([0])), op.constant(np.array([stop])),
                                 op.constant(np.array([1]))))
        bodies.append((inner, out))
    node = op.if_op(cond)
    node.set_then_body(ov.Model([bodies[0][1]], [bodies[0][0]]))
    node.set_else_body(ov.Model([bodies[1][1]], [bodies[1][0]]))
    node.set_input(x.output(0), bodies[0][0], bodies[1][0])
    return x, cond, node.set_output(bodies[0][1], bodies[1][1])


def test_layers_after_an_if_whose_branches_differ_are_inferred_from_the_run(tmp_path):
    """A Squeeze after an If of [2,1] or [3,1] outputs [2] or [3] (it kept [2,1]: its kernel had been planned
    for a shape only the run knows)."""
    x, cond, picked = _after_if()
    squeezed = op.squeeze(picked, op.constant(np.array([1], np.int64)))
    model = ir_runner.load(_save(ov.Model([squeezed], [x, cond]), tmp_path, "if_squeeze"))
    data = np.arange(4, dtype=np.float32).reshape(4, 1)
    for flag, rows in ((True, 2), (False, 3)):
        got = next(iter(model.run([data, np.array(flag)]).values()))
        assert got.shape == (rows,) and np.array_equal(got, data[:rows, 0])


def test_a_layer_after_an_if_keeps_the_models_strict_mode(tmp_path):
    """A Gather after the If, index 7 of 2 rows: strict=True raises IndexOutOfRangeError as it does for a layer
    of static shapes (the run-time inference was always lenient: it gave OpenVINO's zeros); without strict, the
    zeros."""
    x, cond, picked = _after_if()
    index = op.parameter([1], np.int32, name="index")
    gathered = op.gather(picked, index, op.constant(np.int64(0)), name="after_if")
    path = _save(ov.Model([gathered], [x, cond, index]), tmp_path, "if_gather")
    feeds = [np.arange(4, dtype=np.float32).reshape(4, 1), np.array(True), np.array([7], np.int32)]
    strict = ir_runner.load(path, strict=True)
    in_range = next(iter(strict.run([*feeds[:2], np.array([1], np.int32)]).values()))
    assert np.array_equal(in_range, [[1.0]])
    with pytest.raises(ir_runner.IndexOutOfRangeError, match="index 7 at position"):  # (not the kernel of index 1)
        strict.run(feeds)
    assert np.array_equal(next(iter(ir_runner.load(path).run(feeds).values())), [[0.0]])


def test_a_layer_after_an_if_is_inferred_once_per_input_signature(tmp_path, monkeypatch):
    """The layers after the If are inferred again only for a signature (input shapes, the values inference
    reads) not seen before: a run of an already seen branch infers nothing (it inferred every layer at every
    run: 200 MatMul/Add layers took 8.9 ms a run instead of 3.5)."""
    x, cond, picked = _after_if()
    out = op.reshape(op.add(op.matmul(picked, op.constant(np.ones((1, 1), np.float32)), False, False),
                            op.constant(np.float32(1))), op.constant(np.array([1, -1], np.int64)), False)
    model = ir_runner.load(_save(ov.Model([out], [x, cond]), tmp_path, "if_reshape"))
    import ir_runner.infer as infer_module

    inferred = []  # the layers inferred at run

    def counted(*args) -> OpContext:
        if args[4].__qualname__.startswith("run_time_kernel."):
            inferred.append(args[1].name)
        return OpContext(*args)

    monkeypatch.setattr(infer_module, "OpContext", counted)
    data = np.arange(4, dtype=np.float32).reshape(4, 1)
    expected = {True: [[1.0, 2.0]], False: [[1.0, 2.0, 3.0]]}
    for flag, count in ((True, 3), (True, 3), (False, 6), (True, 6), (False, 6)):
        assert np.array_equal(next(iter(model.run([data, np.array(flag)]).values())), expected[flag])
        assert len(inferred) == count


def test_boxes_picked_by_an_nms_in_an_if_body(tmp_path):
    """torchvision's pattern: the selected box indices leave the If, pick the boxes (Gather) and are reduced.
    (The CPU plugin returns wrong sums for this model, openvino 2026.4: [0, 3.08] for [2.27, 1.88] with 1000
    boxes.)"""
    boxes, scores = op.parameter([1, N, 4], np.float32, name="boxes"), op.parameter([1, 1, N], np.float32, name="s")
    cond = op.parameter([], np.bool_, name="cond")
    node, results = op.if_op(cond), []
    for tag, threshold in (("then", 0.999), ("else", 0.9995)):
        inner_boxes, inner_scores = op.parameter([1, N, 4], np.float32), op.parameter([1, 1, N], np.float32)
        result = op.result(_nms(inner_boxes, inner_scores, threshold))
        body = ov.Model([result], [inner_boxes, inner_scores])
        (node.set_then_body if tag == "then" else node.set_else_body)(body)
        results.append((inner_boxes, inner_scores, result))
    node.set_input(boxes.output(0), results[0][0], results[1][0])
    node.set_input(scores.output(0), results[0][1], results[1][1])
    selected = node.set_output(results[0][2], results[1][2])
    index = op.squeeze(op.gather(selected, op.constant(np.array([2], np.int64)), op.constant(np.int64(1))),
                       op.constant(np.array([1], np.int64)))
    picked = op.gather(op.squeeze(boxes, op.constant(np.array([0], np.int64))), index, op.constant(np.int64(0)))
    total = op.reduce_sum(picked, op.constant(np.array([1], np.int64)), False)
    path = _save(ov.Model([total.output(0), selected], [boxes, scores, cond]), tmp_path, "picked")
    model = ir_runner.load(path)
    box_values, score_values = _inputs(4)
    for flag in (True, False):
        feeds = [box_values, score_values, np.array(flag)]
        sums, chosen = model.run(feeds).values()
        assert np.array_equal(chosen, ov.Core().compile_model(path, "CPU")(feeds)[1])  # (its indices are right)
        assert sums.shape == (len(chosen),)
        want = box_values[0, chosen[:, 2]].astype(np.float64).sum(1)  # (ReduceSum: within its bound)
        assert np.allclose(sums, want, rtol=1e-6, atol=0)
