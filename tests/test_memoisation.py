"""Memoisation for large IRs: layers that repeat an earlier one reuse its inference and its prepared
kernel, and only then.

A layer may reuse an earlier layer's inference only when the operation, the ``<data>`` attributes, the
input specs and the constant inputs the operation read are all equal; a prepared kernel only when the
operation, resolved params, input and output specs and small constant inputs are. Each test builds
layers that differ in exactly one of these and checks that each is computed on its own.
"""

from __future__ import annotations

import numpy as np
import pytest

import ir_runner
from ir_runner import infer as infer_module
from ir_runner.errors import DeclaredMismatchError, IndexOutOfRangeError, InferenceError
from ir_runner.graph import build_graph
from ir_runner.infer import infer_graph
from ir_runner.ir.reader import read_ir
from tests.helpers.irbuild import IRBuilder


def _gather(b: IRBuilder, data, axis: int, name: str, *, out_dims, version: str = "opset8", batch_dims=None,
            indices=(1, 0)):
    indices = b.const(f"{name}_indices", np.array(indices, dtype=np.int32))
    axis_const = b.const(f"{name}_axis", np.array(axis, dtype=np.int64))
    attrs = {} if batch_dims is None else {"batch_dims": batch_dims}
    return b.layer("Gather", version, [data, indices, axis_const], attrs=attrs,
                   out_specs=[("FP32", out_dims)], name=name)


def _inference(xml: bytes, weights: bytes, **options):
    return infer_graph(build_graph(read_ir(xml, weights)), **options)


def _outputs(inference) -> dict[str, list]:
    return {info.layer.name: [str(spec) for spec in info.outputs] for info in inference.layers.values()}


def test_equal_specs_but_different_constant_axis_are_inferred_separately():
    b = IRBuilder()
    x = b.parameter("x", "f32", "3,5")
    first = _gather(b, x, 0, "first", out_dims=[2, 5])
    second = _gather(b, x, 1, "second", out_dims=[3, 2])
    b.result(first)
    b.result(second)
    model = ir_runner.load(*b.build())
    assert [o.shape for o in model.outputs] == [(2, 5), (3, 2)]
    data = np.arange(15, dtype=np.float32).reshape(3, 5)
    out = model.run({"x": data})
    np.testing.assert_array_equal(list(out.values())[0], data[[1, 0]])
    np.testing.assert_array_equal(list(out.values())[1], data[:, [1, 0]])


def test_different_data_attributes_are_inferred_separately():
    b = IRBuilder()
    x = b.parameter("x", "f32", "2,3")
    to_i32 = b.convert(x, "i32", name="to_i32")
    to_f16 = b.convert(x, "f16", name="to_f16")
    b.result(to_i32)
    b.result(to_f16)
    model = ir_runner.load(*b.build())
    assert [o.element_type.name for o in model.outputs] == ["i32", "f16"]


def test_different_input_specs_are_inferred_separately():
    b = IRBuilder()
    small = b.parameter("small", "f32", "2,3")
    large = b.parameter("large", "f32", "4,3")
    b.result(_gather(b, small, 0, "g_small", out_dims=[2, 3]))
    b.result(_gather(b, large, 1, "g_large", out_dims=[4, 2]))
    assert [o.shape for o in ir_runner.load(*b.build()).outputs] == [(2, 3), (4, 2)]


def test_a_repeated_layer_with_a_wrong_declaration_names_itself():
    b = IRBuilder()
    x = b.parameter("x", "f32", "3,5")
    good = _gather(b, x, 0, "good", out_dims=[2, 5])
    bad = _gather(b, x, 0, "bad", out_dims=[2, 4])
    b.result(good)
    b.result(bad)
    with pytest.raises(DeclaredMismatchError) as caught:
        ir_runner.load(*b.build())
    assert "'bad'" in str(caught.value) and "'good'" not in str(caught.value)
    assert "declared FP32[2,4]" in str(caught.value)


def test_a_repeated_layer_whose_inference_fails_reports_its_own_error():
    """The first Gather fails (axis out of range): nothing is memoised, the second fails on its own."""
    b = IRBuilder()
    x = b.parameter("x", "f32", "3,5")
    b.result(_gather(b, x, 7, "first", out_dims=[2, 5]))
    b.result(_gather(b, x, 7, "second", out_dims=[2, 5]))
    report = ir_runner.validate(*b.build())
    failed = [e for e in report.errors if isinstance(e, InferenceError)]
    assert [e.layer.name for e in failed] == ["first", "second"]


def test_constant_inputs_larger_than_the_comparison_limit_disable_reuse():
    """An axis read from a Const too large to compare by value is never reused (it is a (1,) int64 here,
    so the limit is forced down)."""
    b = IRBuilder()
    x = b.parameter("x", "f32", "3,5")
    b.result(_gather(b, x, 0, "first", out_dims=[2, 5]))
    b.result(_gather(b, x, 1, "second", out_dims=[3, 2]))
    xml, weights = b.build()
    limit = infer_module._InferenceMemo._MAX_CONST_BYTES
    try:
        infer_module._InferenceMemo._MAX_CONST_BYTES = 0
        inference = _inference(xml, weights)
    finally:
        infer_module._InferenceMemo._MAX_CONST_BYTES = limit
    assert _outputs(inference)["second"] == ["f32[3,2]"]
    assert not inference.errors


def test_memoised_inference_equals_unmemoised_on_a_repetitive_model(monkeypatch):
    """A chain of repeated blocks: the same specs, params and findings with and without the memo."""
    b = IRBuilder()
    x = b.parameter("x", "f32", "4,6")
    cond = b.parameter("cond", "boolean", "4,6")
    current = x
    for block in range(20):
        other = b.const(f"else_{block}", np.full((4, 6), block, dtype=np.float32))
        current = b.layer("Select", "opset1", [cond, current, other], attrs={"auto_broadcast": "numpy"},
                          out_specs=[("FP32", [4, 6])], name=f"select_{block}")
        current = _gather(b, current, block % 2, f"gather_{block}", out_dims=[2, 6] if block % 2 == 0 else [4, 2],
                          batch_dims=0)
        current = b.layer("Select", "opset1", [b.const(f"c_{block}", np.ones(current_dims(block), dtype=bool)),
                                               current, current], attrs={"auto_broadcast": "numpy"},
                          out_specs=[("FP32", current_dims(block))], name=f"mix_{block}")
        current = b.convert(b.convert(current, "f16", name=f"down_{block}"), "f32", name=f"up_{block}")
        current = pad_back(b, current, block)
    b.result(current)
    xml, weights = b.build()
    inferred: list[str] = []

    real_context = infer_module._context

    def counting_context(info, *args):
        if info.op.type not in ("Parameter", "Const"):  # never memoised
            inferred.append(info.layer.name)
        return real_context(info, *args)

    with monkeypatch.context() as patch:
        patch.setattr(infer_module, "_context", counting_context)
        memoised = _inference(xml, weights)
    # the memo is used: 20 Gathers of [4,6] alternate between two axes, 20 Selects are all alike
    assert sum(name.startswith("gather_") for name in inferred) == 2
    assert sum(name.startswith("select_") for name in inferred) == 1
    monkeypatch.setattr(infer_module._InferenceMemo, "infer",
                        lambda self, info: info.op.infer(infer_module._context(info, self._const_value, False,
                                                                               self._weights, self._partial_value)))
    plain = _inference(xml, weights)
    assert _outputs(memoised) == _outputs(plain)
    assert {lid: info.params.keys() for lid, info in memoised.layers.items() if info.op.type != "Const"} == {
        lid: info.params.keys() for lid, info in plain.layers.items() if info.op.type != "Const"
    }
    assert [str(e) for e in memoised.errors] == [str(e) for e in plain.errors]


def test_strict_inference_is_memoised_and_its_index_errors_name_their_layers(monkeypatch):
    """Strict parameters name no layer, so strict inference is memoised; a constant index out of range is still
    the error of its own layer (at load), a fed one of the Gather that reads it (at run)."""
    b = IRBuilder()
    x = b.parameter("x", "f32", "4,6")
    fed = b.parameter("fed", "i32", "2")
    for block in range(6):
        b.result(_gather(b, x, 1, f"gather_{block}", out_dims=[4, 2]))
    axis = b.const("fed_axis", np.array(1, dtype=np.int64))
    b.result(b.layer("Gather", "opset8", [x, fed, axis], out_specs=[("FP32", [4, 2])], name="by_feed"))
    xml, weights = b.build()
    inferred: list[str] = []
    real_context = infer_module._context

    def counting_context(info, *args):
        if info.op.type == "Gather":
            inferred.append(info.layer.name)
        return real_context(info, *args)

    with monkeypatch.context() as patch:
        patch.setattr(infer_module, "_context", counting_context)
        inference = _inference(xml, weights, strict=True)
    assert not inference.errors and sum(name.startswith("gather_") for name in inferred) == 1
    model = ir_runner.load(xml, weights, strict=True)
    with pytest.raises(IndexOutOfRangeError) as caught:
        model.run({"x": np.zeros((4, 6), np.float32), "fed": np.array([0, 6], np.int32)})
    assert caught.value.layer.name == "by_feed" and "strict mode" in str(caught.value)

    b = IRBuilder()
    x = b.parameter("x", "f32", "4,6")
    b.result(_gather(b, x, 1, "inside", out_dims=[4, 2]))
    b.result(_gather(b, x, 1, "outside", out_dims=[4, 2], indices=(1, 6)))
    with pytest.raises(IndexOutOfRangeError) as caught:
        ir_runner.load(*b.build(), strict=True)
    assert caught.value.layer.name == "outside"


def current_dims(block: int) -> list[int]:
    return [2, 6] if block % 2 == 0 else [4, 2]


def pad_back(b: IRBuilder, current, block: int):
    """Back to [4,6] with a Select that broadcasts ``current`` against a [4,6] Const (rows or columns)."""
    if block % 2 == 0:  # [2,6] -> gather rows [0,1,0,1] -> [4,6]
        indices = b.const(f"back_idx_{block}", np.array([0, 1, 0, 1], dtype=np.int32))
        axis = b.const(f"back_axis_{block}", np.array(0, dtype=np.int64))
    else:  # [4,2] -> gather columns -> [4,6]
        indices = b.const(f"back_idx_{block}", np.array([0, 1, 0, 1, 0, 1], dtype=np.int32))
        axis = b.const(f"back_axis_{block}", np.array(1, dtype=np.int64))
    return b.layer("Gather", "opset8", [current, indices, axis], out_specs=[("FP32", [4, 6])],
                   name=f"back_{block}")


def _select(b: IRBuilder, cond, x, name: str):
    return b.layer("Select", "opset1", [cond, x, x], out_specs=[("FP32", [3, 5])], name=name)


def test_equal_layers_share_one_prepared_kernel_and_different_indices_do_not():
    b = IRBuilder()
    x = b.parameter("x", "f32", "3,5")
    cond = b.parameter("cond", "boolean", "3,5")
    first = _gather(b, _select(b, cond, x, "s1"), 0, "first", out_dims=[2, 5])
    again = _gather(b, _select(b, cond, x, "s2"), 0, "again", out_dims=[2, 5])
    swapped = _gather(b, _select(b, cond, x, "s3"), 0, "swapped", out_dims=[2, 5],
                      indices=(0, 1))
    for gather in (first, again, swapped):
        b.result(gather)
    model = ir_runner.load(*b.build())
    data = np.arange(15, dtype=np.float32).reshape(3, 5)
    out = list(model.run({"x": data, "cond": np.ones((3, 5), dtype=bool)}).values())
    np.testing.assert_array_equal(out[0], data[[1, 0]])
    np.testing.assert_array_equal(out[1], data[[1, 0]])
    np.testing.assert_array_equal(out[2], data[[0, 1]])
    kernels = {step.layer.name: step.kernel for step in model.plan_for([data, data > 0]).steps}
    assert kernels["first"] is kernels["again"]
    assert kernels["swapped"] is not kernels["first"]


def test_a_run_reuses_only_the_layers_no_changed_spec_reaches(tmp_path):
    """Per-run inference reuses the last one's layers that depend on no spec that differs: the results for
    shapes that come back, change and come back again equal a fresh model's, ShapeOf-driven reshapes too."""
    import openvino as ov
    import openvino.opset13 as ops

    x = ops.parameter([-1, -1], np.float32, name="x")
    y = ops.parameter([2], np.float32, name="y")
    rows = ops.gather(ops.shape_of(x, "i64"), ops.constant(np.array([0], np.int64)), np.int64(0))
    flat = ops.reshape(x, ops.concat([rows, ops.constant(np.array([-1, 1], np.int64))], 0), special_zero=False)
    total = ops.reduce_sum(ops.multiply(flat, ops.constant(np.float32(3))), ops.constant(np.array([1], np.int64)))
    fixed = ops.multiply(y, ops.constant(np.float32(2)))  # depends on y alone: reused while x changes
    path = tmp_path / "reuse.xml"
    ov.save_model(ov.Model([ops.result(total), ops.result(fixed)], [x, y], "reuse"), str(path))
    model = ir_runner.load(str(path))
    rng = np.random.default_rng(0)
    for shape in [(2, 3), (4, 1), (2, 3), (5, 2), (4, 1)]:
        feeds = {"x": rng.standard_normal(shape).astype(np.float32), "y": np.ones(2, np.float32)}
        got, calls = _run_as_fresh(model, path, feeds)
        if shape == (5, 2):  # a new shape: inferred anew from x on, reused elsewhere
            assert flat.get_friendly_name() in calls and total.get_friendly_name() in calls
            assert fixed.get_friendly_name() not in calls


def test_a_layer_whose_inputs_changed_but_not_its_output_is_prepared_for_the_new_inputs(tmp_path):
    """A mean over a dynamic sequence axis keeps its output spec while the sequence length changes: the reused
    inference of the run before prepared its count of elements from the old length (the mean of five ones
    came out as 5/3)."""
    import openvino as ov
    import openvino.opset13 as ops

    x = ops.parameter([1, -1, 4], np.float32, name="x")
    mean = ops.reduce_mean(ops.relu(x), ops.constant(np.array([1], np.int64)), False)
    path = tmp_path / "mean.xml"
    ov.save_model(ov.Model([ops.result(ops.multiply(mean, ops.constant(np.float32(2))))], [x], "mean"), str(path))
    model = ir_runner.load(str(path))
    for length in (3, 5, 1, 5):
        (out,) = model.run({"x": np.ones((1, length, 4), np.float32)}).values()
        assert np.array_equal(out, np.full((1, 4), 2, np.float32)), length


def test_reuse_with_values_that_decide_shapes(tmp_path):
    """With an input whose value decides a shape (a Reshape's target), per-run inference still reuses the
    layers that neither a changed spec nor a changed value reaches; a changed value re-infers what it decides.
    Results equal a fresh model's whatever the order of values."""
    import openvino as ov
    import openvino.opset13 as ops

    x = ops.parameter([6], np.float32, name="x")
    rows = ops.parameter([1], np.int64, name="rows")
    y = ops.parameter([2], np.float32, name="y")
    shaped = ops.reshape(x, ops.concat([rows, ops.constant(np.array([-1], np.int64))], 0), special_zero=False)
    total = ops.reduce_sum(shaped, ops.constant(np.array([1], np.int64)))
    fixed = ops.multiply(y, ops.constant(np.float32(2)))  # depends on y alone: reused while rows changes
    path = tmp_path / "values.xml"
    ov.save_model(ov.Model([ops.result(total), ops.result(fixed)], [x, rows, y], "values"), str(path))
    model = ir_runner.load(str(path))
    assert model._value_inputs  # rows decides a shape
    data = np.arange(6, dtype=np.float32)
    for count in [2, 3, 2, 6, 6, 1]:
        feeds = {"x": data, "rows": np.array([count], np.int64), "y": np.ones(2, np.float32)}
        got, calls = _run_as_fresh(model, path, feeds)
        np.testing.assert_array_equal(got[model.outputs[0].name], data.reshape(count, -1).sum(1))
        if count == 1:  # a new value: what it decides is inferred anew, the rest reused
            assert shaped.get_friendly_name() in calls
            assert fixed.get_friendly_name() not in calls


def _run_as_fresh(model, path, feeds) -> tuple[dict, list[str]]:
    """``model.run(feeds)`` (checked equal to a freshly loaded model's) and the names of the layers it
    inferred anew."""
    fresh = ir_runner.load(str(path)).run(feeds)
    calls: list[str] = []
    infer = infer_module._infer_layer

    def counting(info, *args):
        calls.append(info.layer.name)
        return infer(info, *args)

    infer_module._infer_layer = counting
    try:
        got = model.run(feeds)
    finally:
        infer_module._infer_layer = infer
    assert all(np.array_equal(got[name], fresh[name]) and got[name].shape == fresh[name].shape for name in got)
    return got, calls
