"""The Model.run / feeds API: how inputs are given and checked, what comes back, dynamic shapes and their
re-inference (``Model.inference_for``, ``TensorInfo.spec_for``) and strict mode (NaN float indices included).

Models are built with ``tests/helpers/irbuild.py`` and loaded from bytes.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from lxml import etree

import ir_runner
import ir_runner.model
from ir_runner import IndexOutOfRangeError, InputError
from ir_runner.types import ELEMENT_TYPES, PartialShape, TensorSpec, parse_partial_shape
from tests.helpers.irbuild import IRBuilder, read_with_openvino

F32 = ELEMENT_TYPES["f32"]


def select_gather_model(*, dynamic: bool = False, strict: bool = False) -> ir_runner.Model:
    """cond boolean[2,3], then f32[2,3], else f32[3] -> Select -> ``selected``; Gather(selected, [2, -1], axis 1)
    -> ``gathered``; plus Results fed straight by the Parameter ``then`` and by a Const (``then_copy``,
    ``weights``), and a second Result on the Select (``selected_again``)."""
    b = IRBuilder("api")
    shapes = ("?,?", "?,3", "?") if dynamic else ("2,3", "2,3", "3")
    cond = b.parameter("cond", "boolean", shapes[0])
    then = b.parameter("then", "f32", shapes[1])
    other = b.parameter("else", "f32", shapes[2])
    out_dims = [-1, -1] if dynamic else [2, 3]
    sel = b.layer("Select", "opset1", [cond, then, other], attrs={"auto_broadcast": "numpy"},
                  out_specs=[("f32", out_dims)], name="sel", out_names=["selected"])
    indices = b.const("indices", np.array([2, -1], np.int64))
    axis = b.const("axis", np.array(1, np.int64))
    gathered = b.layer("Gather", "opset8", [sel, indices, axis], attrs={"batch_dims": 0},
                       out_specs=[("f32", [out_dims[0], 2])], name="gather", out_names=["gathered"])
    weights = b.const("weights", np.array([1.5, -2.5, 3.5], np.float32))
    b.result(sel, "selected_result")
    b.result(gathered, "gathered_result")
    b.result(then, "then_copy")
    b.result(weights, "weights_result")
    b.result(sel, "selected_again")
    return ir_runner.load(*b.build(), strict=strict)


COND = np.array([[True, False, True], [False, False, True]])
THEN = np.arange(6, dtype=np.float32).reshape(2, 3)
ELSE = np.array([-1, -2, -3], np.float32)
SELECTED = np.array([[0, -2, 2], [-1, -2, 5]], np.float32)


def check_outputs(out: dict) -> None:
    assert list(out) == ["selected", "gathered", "then", "weights_result", "selected_again"]
    np.testing.assert_array_equal(out["selected"], SELECTED)
    np.testing.assert_array_equal(out["gathered"], SELECTED[:, [2, 2]])
    np.testing.assert_array_equal(out["then"], THEN)
    np.testing.assert_array_equal(out["weights_result"], [1.5, -2.5, 3.5])
    np.testing.assert_array_equal(out["selected_again"], SELECTED)


# ----------------------------------------------------------------------------- feeds


def test_inputs_and_outputs_describe_the_model():
    model = select_gather_model()
    assert [i.name for i in model.inputs] == ["cond", "then", "else"]
    assert [i.dtype for i in model.inputs] == [np.dtype(bool), np.dtype(np.float32), np.dtype(np.float32)]
    assert [i.shape for i in model.inputs] == [(2, 3), (2, 3), (3,)]
    assert [o.name for o in model.outputs] == ["selected", "gathered", "then", "weights_result", "selected_again"]
    assert [o.shape for o in model.outputs] == [(2, 3), (2, 2), (2, 3), (3,), (2, 3)]
    dynamic = select_gather_model(dynamic=True)
    assert [i.shape for i in dynamic.inputs] == [(None, None), (None, 3), (None,)]


@pytest.mark.parametrize("style", ["mapping", "list", "tuple", "call", "mapping+named", "call-named"])
def test_feed_styles(style):
    model = select_gather_model()
    if style == "mapping":
        out = model.run({"cond": COND, "then": THEN, "else": ELSE})
    elif style == "list":
        out = model.run([COND, THEN, ELSE])
    elif style == "tuple":
        out = model.run((COND, THEN, ELSE))
    elif style == "call":
        out = model(COND, THEN, ELSE)
    elif style == "mapping+named":
        out = model.run({"else": ELSE}, cond=COND, then=THEN)
    else:
        out = model(**{"cond": COND, "then": THEN, "else": ELSE})
    check_outputs(out)


def test_python_values_are_accepted():
    model = select_gather_model()
    out = model.run({"cond": COND.tolist(), "then": THEN.tolist(), "else": [-1, -2, -3]})
    check_outputs(out)


def test_single_input_model_takes_a_bare_array():
    b = IRBuilder("one")
    x = b.parameter("x", "i64", "2")
    b.result(b.convert(x, "f64"), "y")
    model = ir_runner.load(*b.build())
    np.testing.assert_array_equal(model.run(np.array([3, -4]))["y"], [3.0, -4.0])
    np.testing.assert_array_equal(model(np.array([5, 6]))["y"], [5.0, 6.0])


def test_unknown_name_suggests_the_closest():
    model = select_gather_model()
    with pytest.raises(ir_runner.InputError, match="no input named 'thne'") as info:
        model.run({"cond": COND, "thne": THEN, "else": ELSE})
    assert "did you mean 'then'" in str(info.value)
    assert info.value.exit_code == 4
    assert "cond: boolean[2,3]" in str(info.value)  # the listing of the inputs


def test_missing_input_is_named():
    model = select_gather_model()
    with pytest.raises(ir_runner.InputError, match="no value given for input.*'else'"):
        model.run({"cond": COND, "then": THEN})
    with pytest.raises(ir_runner.InputError, match="3 input"):
        model.run([COND, THEN])


def test_input_given_twice_under_two_of_its_names():
    """An input is known by its tensor names and its layer name; giving it under two of them is an error."""
    b = IRBuilder("aliases")
    x = b.parameter("x_layer", "f32", "2", names="x_tensor,x_alias")
    b.result(b.convert(x, "f16"), "y")
    model = ir_runner.load(*b.build())
    value = np.array([1.0, 2.0], np.float32)
    for name in ("x_tensor", "x_alias", "x_layer"):
        np.testing.assert_array_equal(model.run({name: value})["y"], [1.0, 2.0])
    with pytest.raises(ir_runner.InputError, match="given twice"):
        model.run({"x_tensor": value, "x_layer": value})


def test_positional_and_named_together_are_refused():
    model = select_gather_model()
    with pytest.raises(ir_runner.InputError, match="position or by name"):
        model.run([COND, THEN], **{"else": ELSE})


def test_dtype_mismatch_names_input_and_hints_cast():
    model = select_gather_model()
    with pytest.raises(ir_runner.InputError, match="'then' expects element type f32") as info:
        model.run({"cond": COND, "then": THEN.astype(np.float64), "else": ELSE})
    assert "cast=" in str(info.value)


def test_cast_same_kind_warns_and_converts():
    model = select_gather_model()
    with pytest.warns(ir_runner.CastWarning, match="'then'.*float64.*float32"):
        out = model.run({"cond": COND, "then": THEN.astype(np.float64), "else": ELSE}, cast="same_kind")
    check_outputs(out)


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("dtype, cast, ok", [
    (np.int16, "safe", True), (np.float64, "safe", False), (np.float64, "same_kind", True),
    (np.complex64, "same_kind", False), (np.complex64, "unsafe", True),
])
def test_cast_levels(dtype, cast, ok):
    """numpy's casting levels decide which feeds for an f32 input may be converted."""
    model = select_gather_model()
    feeds = {"cond": COND, "then": THEN.astype(dtype), "else": ELSE}
    if not ok:
        with pytest.raises(ir_runner.InputError, match=f"cannot cast {np.dtype(dtype).name} to float32"):
            model.run(feeds, cast=cast)
        return
    with pytest.warns(ir_runner.CastWarning):
        check_outputs(model.run(feeds, cast=cast))


def test_unknown_cast_value():
    model = select_gather_model()
    with pytest.raises(ir_runner.InputError, match="cast='sometimes'"):
        model.run({"cond": COND, "then": THEN.astype(np.float64), "else": ELSE}, cast="sometimes")


def test_no_warning_when_nothing_is_cast():
    model = select_gather_model()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_outputs(model.run({"cond": COND, "then": THEN, "else": ELSE}, cast="same_kind"))


def test_lossy_python_values_are_not_cast_silently():
    """A Python list of floats for an i32 input would lose its fractions: refused like a float64 array."""
    b = IRBuilder("int")
    x = b.parameter("x", "i32", "2")
    b.result(b.convert(x, "f32"), "y")
    model = ir_runner.load(*b.build())
    with pytest.raises(ir_runner.InputError, match="'x'"):
        model.run({"x": [1.5, 2.7]})
    with pytest.raises(ir_runner.InputError, match="'x'"):
        model.run({"x": ["1", "2"]})
    np.testing.assert_array_equal(model.run({"x": [1, 2]})["y"], [1.0, 2.0])


def test_numpy_scalars_are_checked_like_arrays():
    b = IRBuilder("scalar")
    x = b.parameter("x", "i32", "")
    b.result(b.convert(x, "f32"), "y")
    model = ir_runner.load(*b.build())
    assert model.run({"x": np.int32(3)})["y"] == np.float32(3)
    assert model.run({"x": 3})["y"] == np.float32(3)
    with pytest.raises(ir_runner.InputError, match="'x'"):
        model.run({"x": np.float64(2.7)})


def test_u1_input_holds_only_zero_and_one():
    b = IRBuilder("bits")
    x = b.parameter("x", "u1", "3")
    b.result(b.convert(x, "f32"), "y")
    model = ir_runner.load(*b.build())
    np.testing.assert_array_equal(model.run({"x": np.array([0, 1, 1], np.uint8)})["y"], [0.0, 1.0, 1.0])
    with pytest.raises(ir_runner.InputError, match="'x'"):
        model.run({"x": np.array([0, 1, 2], np.uint8)})


@pytest.mark.parametrize("bad, pattern", [
    (np.zeros((3, 3), np.float32), r"'then' expects shape \[2,3\], got \[3, 3\]"),
    (np.zeros((2, 3, 1), np.float32), "the rank must be 2"),
    (np.zeros(6, np.float32), "the rank must be 2"),
])
def test_shape_mismatch(bad, pattern):
    model = select_gather_model()
    with pytest.raises(ir_runner.InputError, match=pattern):
        model.run({"cond": COND, "then": bad, "else": ELSE})


def test_object_and_string_arrays_are_refused():
    model = select_gather_model()
    for bad in (np.array([["a", "b", "c"]] * 2), np.array([[object()] * 3] * 2, dtype=object)):
        with pytest.raises(ir_runner.InputError, match="'then'"):
            model.run({"cond": COND, "then": bad, "else": ELSE})


def test_non_contiguous_and_read_only_inputs():
    model = select_gather_model()
    then = np.asfortranarray(THEN)
    other = np.array([-1, 0, -2, 0, -3, 0], np.float32)[::2]
    cond = COND.copy()
    cond.flags.writeable = False
    check_outputs(model.run({"cond": cond, "then": then, "else": other}))
    big = np.arange(12, dtype=np.float32).reshape(2, 6)[:, ::2]
    np.testing.assert_array_equal(model.run({"cond": COND, "then": big, "else": ELSE})["then"], big)


# ----------------------------------------------------------------------------- outputs


def test_outputs_never_alias_inputs_constants_or_each_other():
    model = select_gather_model()
    feeds = {"cond": COND, "then": THEN.copy(), "else": ELSE}
    first = model.run(feeds)
    assert not np.shares_memory(first["then"], feeds["then"])
    assert not np.shares_memory(first["selected"], first["selected_again"])
    for name, value in first.items():
        assert value.flags.writeable, name
        value[...] = 0
    second = model.run(feeds)
    check_outputs(second)
    np.testing.assert_array_equal(feeds["then"], THEN)
    assert not np.shares_memory(first["weights_result"], second["weights_result"])


@pytest.mark.parametrize("reverse", [False, True])
def test_input_and_output_order_is_openvinos(reverse):
    """Inputs and outputs come in the order OpenVINO gives them: the Parameters' and Results' document order."""
    b = IRBuilder("order")
    x, y = b.parameter("x", "f32", "2"), b.parameter("y", "i32", "2")
    for name, et in (("res_a", "f16"), ("res_b", "i64"), ("res_c", "u8")):
        b.result(b.convert(x if name != "res_b" else y, et, name=name[-1]), name)
    xml, weights = b.build()
    root = etree.fromstring(xml)
    layers = root.find("layers")
    if reverse:  # Parameters first in reverse order, Results last in reverse order (ids unchanged)
        params = [el for el in layers if el.get("type") == "Parameter"]
        results = [el for el in layers if el.get("type") == "Result"]
        for el in params + results:
            layers.remove(el)
        for el in params:
            layers.insert(0, el)
        for el in reversed(results):
            layers.append(el)
    xml = etree.tostring(root)
    reference = read_with_openvino(xml, weights)
    model = ir_runner.load(xml, weights)
    assert [i.layer_name for i in model.inputs] == [p.get_friendly_name() for p in reference.get_parameters()]
    assert [o.layer_name for o in model.outputs] == [r.get_friendly_name() for r in reference.get_results()]
    assert [i.name for i in model.inputs] == (["y", "x"] if reverse else ["x", "y"])
    out = model.run({"x": np.array([1.5, 2.5], np.float32), "y": np.array([3, 4], np.int32)})
    assert list(out) == [o.name for o in model.outputs]
    assert out["res_b"].dtype == np.int64 and out["res_c"].dtype == np.uint8


def test_folded_constant_output_is_a_fresh_array():
    """Const -> Convert is folded at load; each run still returns its own writable array."""
    b = IRBuilder("folded")
    c = b.const("c", np.array([1.5, 2.5], np.float16))
    b.result(b.convert(c, "f32", name="cvt"), "y")
    model = ir_runner.load(*b.build())
    first = model.run({})["y"]
    first[...] = 9
    np.testing.assert_array_equal(model.run({})["y"], [1.5, 2.5])


# ----------------------------------------------------------------------------- dynamic shapes


def test_dynamic_shapes_are_inferred_per_run_and_cached(monkeypatch):
    model = select_gather_model(dynamic=True)
    calls = count_inferences(monkeypatch)
    check_outputs(model.run({"cond": COND, "then": THEN, "else": ELSE}))
    check_outputs(model.run({"cond": COND.copy(), "then": THEN + 0, "else": ELSE.copy()}))
    assert len(calls) == 1
    for rows in (1, 4, 0):
        cond = np.ones((rows, 3), bool)
        then = np.full((rows, 3), 7, np.float32)
        out = model.run({"cond": cond, "then": then, "else": ELSE})
        assert out["selected"].shape == (rows, 3) and out["gathered"].shape == (rows, 2)
        np.testing.assert_array_equal(out["gathered"], np.full((rows, 2), 7, np.float32))
    assert len(calls) == 4
    check_outputs(model.run({"cond": COND, "then": THEN, "else": ELSE}))
    assert len(calls) == 4


def test_dynamic_cache_stays_bounded_and_correct():
    model = select_gather_model(dynamic=True)
    for rows in range(1, 80):
        then = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3)
        out = model.run({"cond": np.ones((rows, 1), bool), "then": then, "else": ELSE})
        np.testing.assert_array_equal(out["gathered"], then[:, [2, 2]])


def test_dynamic_shapes_that_do_not_fit_name_the_layer():
    model = select_gather_model(dynamic=True)
    with pytest.raises(ir_runner.IRError, match="'sel'"):
        model.run({"cond": np.ones((2, 2), bool), "then": THEN, "else": ELSE})


def test_interval_dims_are_checked():
    b = IRBuilder("interval")
    x = b.parameter("x", "f32", "1..3,2")
    b.result(b.convert(x, "f16"), "y")
    model = ir_runner.load(*b.build())
    assert model.run({"x": np.ones((3, 2), np.float32)})["y"].shape == (3, 2)
    with pytest.raises(ir_runner.InputError, match=r"expects shape \[1..3,2\]"):
        model.run({"x": np.ones((4, 2), np.float32)})


# ----------------------------------------------------------------------------- re-inference for new input specs
# ``Model.inference_for`` is the one re-inference for new input specs, used by ``plan_for`` and the CLI's
# --shape and generated inputs.


def gather_model(data_shape: str, *, strict: bool = False, data_type: str = "f32") -> ir_runner.Model:
    """data -> Gather(axis 0, constant indices [3]) -> ``out``."""
    b = IRBuilder("g")
    data = b.parameter("data", data_type, data_shape)
    indices = b.const("indices", np.array([3], np.int64))
    axis = b.const("axis", np.array(0, np.int64))
    out_dims = [1] + [int(d) if d.isdigit() else -1 for d in data_shape.split(",")[1:]]
    gather = b.layer("Gather", "opset8", [data, indices, axis], attrs={"batch_dims": 0},
                     out_specs=[("f32" if data_type == "f32" else None, out_dims)], name="gather", out_names=["out"])
    b.result(gather, "result")
    return ir_runner.load(*b.build(), strict=strict)


def count_inferences(monkeypatch) -> list[dict]:
    """From now on, the keyword arguments of each ``infer_graph`` call (at load, and per input specs through
    ``subgraph.infer_for_inputs``; these models have no sub-graphs)."""
    original = ir_runner.model.infer_graph
    calls: list[dict] = []

    def counting(graph, **kwargs):
        calls.append(kwargs)
        return original(graph, **kwargs)

    monkeypatch.setattr(ir_runner.model, "infer_graph", counting)
    monkeypatch.setattr(ir_runner.subgraph, "infer_graph", counting)
    return calls


def test_the_inputs_own_specs_give_the_models_inference(monkeypatch):
    model = gather_model("?,2")
    infer_calls = count_inferences(monkeypatch)
    same = [TensorSpec(F32, parse_partial_shape("?,2"))]
    assert model.inference_for(same) is model.inference
    assert infer_calls == []


def test_new_specs_are_inferred_without_declared_checks(monkeypatch):
    model = gather_model("?,2")
    infer_calls = count_inferences(monkeypatch)
    inference = model.inference_for([TensorSpec(F32, PartialShape.of((5, 2)))])
    assert inference is not model.inference
    assert str(inference.output_spec(model.graph.results[0].id, 0)) == "f32[1,2]"
    assert len(infer_calls) == 1 and infer_calls[0]["check_declared"] is False


def test_the_same_new_specs_twice_in_a_row_are_inferred_once(monkeypatch):
    model = gather_model("?,2")
    infer_calls = count_inferences(monkeypatch)
    five, six = [TensorSpec(F32, PartialShape.of((5, 2)))], [TensorSpec(F32, PartialShape.of((6, 2)))]
    first = model.inference_for(five)
    assert model.inference_for(list(five)) is first and len(infer_calls) == 1
    assert model.inference_for(six) is not first and len(infer_calls) == 2
    assert model.inference_for(five) is not first and len(infer_calls) == 3  # only the last one is kept


def test_specs_that_do_not_fit_name_the_context_and_layer():
    model = gather_model("?,2")
    with pytest.raises(InputError) as caught:
        model.inference_for([TensorSpec(F32, parse_partial_shape("[]"))], context="with --shape data=[]")
    error = caught.value
    assert type(error) is InputError and error.detail.startswith("with --shape data=[]: ")
    assert error.layer.name == "gather"


def test_plan_for_infers_each_signature_once(monkeypatch):
    model = gather_model("?,2")
    infer_calls = count_inferences(monkeypatch)
    for _ in range(3):
        assert model.run({"data": np.ones((4, 2), np.float32)})["out"].shape == (1, 2)
    assert len(infer_calls) == 1


def test_spec_for_takes_the_arrays_type_only_for_a_dynamic_input():
    typed = gather_model("?,2").inputs[0]
    dynamic = gather_model("?,2", data_type="dynamic").inputs[0]
    array = np.zeros((4, 2), np.int32)
    assert str(typed.spec_for(array)) == "f32[4,2]"
    assert str(dynamic.spec_for(array)) == "i32[4,2]"


# ----------------------------------------------------------------------------- strict mode


def strict_gather(indices_const: np.ndarray | None = None, version: str = "opset8") -> bytes:
    b = IRBuilder("strict")
    data = b.parameter("data", "f32", "5")
    indices = b.parameter("indices", "i64", "2,2") if indices_const is None else b.const("indices", indices_const)
    axis = b.const("axis", np.array(0, np.int64))
    g = b.layer("Gather", version, [data, indices, axis], attrs={"batch_dims": 0}, out_specs=[("f32", [2, 2])],
                name="pick")
    b.result(g, "out")
    return b.build()


def test_strict_index_error_names_layer_value_and_position():
    model = ir_runner.load(*strict_gather(), strict=True)
    data = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(model.run({"data": data, "indices": np.array([[0, -5], [4, -1]])})["out"],
                                  [[0, 0], [4, 4]])
    with pytest.raises(ir_runner.IndexOutOfRangeError) as info:
        model.run({"data": data, "indices": np.array([[0, 1], [7, -9]])})
    message = str(info.value)
    assert "'pick'" in message and "Gather-8" in message and "id 3" in message
    assert "7" in message and "[1, 0]" in message and "[-5, 4]" in message
    assert isinstance(info.value, ir_runner.InputError) and info.value.exit_code == 4
    relaxed = ir_runner.load(*strict_gather())
    np.testing.assert_array_equal(relaxed.run({"data": data, "indices": np.array([[0, 1], [7, -9]])})["out"],
                                  [[0, 1], [0, 0]])


def test_strict_constant_indices_fail_at_load():
    with pytest.raises(ir_runner.IndexOutOfRangeError, match="'pick'"):
        ir_runner.load(*strict_gather(np.array([[0, 1], [2, 5]], np.int64)), strict=True)
    model = ir_runner.load(*strict_gather(np.array([[0, 1], [2, 5]], np.int64)))
    np.testing.assert_array_equal(model.run({"data": np.arange(5, dtype=np.float32)})["out"], [[0, 1], [2, 0]])


def test_strict_index_errors_keep_their_class_and_get_the_context():
    model = gather_model("?,2", strict=True)
    with pytest.raises(IndexOutOfRangeError) as caught:
        model.run({"data": np.zeros((2, 2), np.float32)})
    error = caught.value
    assert error.detail.startswith("the inputs' shapes do not fit the model: index 3 at position [0]")
    assert error.port == "input 1 (indices)" and error.layer.name == "gather"
    assert model.run({"data": np.arange(8, dtype=np.float32).reshape(4, 2)})["out"].tolist() == [[6.0, 7.0]]


def test_strict_gather_refuses_nan_float_indices():
    b = IRBuilder("nan_index")
    data = b.parameter("data", "f32", "3")
    indices = b.parameter("indices", "f32", "1")
    axis = b.const("axis", np.array(0, np.int64))
    g = b.layer("Gather", "opset1", [data, indices, axis], out_specs=[("FP32", [1])])
    b.result(g, "out")
    model = ir_runner.load(*b.build(), strict=True)
    with pytest.raises(ir_runner.IndexOutOfRangeError, match="nan"):
        model.run({"data": np.zeros(3, np.float32), "indices": np.array([np.nan], np.float32)})
