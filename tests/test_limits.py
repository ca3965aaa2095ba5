"""The limits of numpy and int64: a tensor of a rank numpy cannot hold (above 64) is refused at load where the
rank starts, an output numpy cannot describe is unsupported, and every message stays short whatever the rank
of the shapes it shows (twelve dims, then the rank) or the number of layers and ports it lists."""

from __future__ import annotations

import numpy as np
import pytest

import ir_runner
from ir_runner import DeclaredMismatchError, InferenceError, InputError, ModelFormatError, UnsupportedError, types
from ir_runner.types import MAX_DIM, PartialShape, parse_dim, parse_partial_shape
from tests.helpers.irbuild import IRBuilder
from tests.helpers.limits import load_error, ones, parameter_model, short, validate_errors

HUGE_RANK = 100_000


# -- bounded shapes in messages ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dims", [(), (1,), (2, 3), (0, 7, 1, 3), tuple(range(12)), (MAX_DIM,) * 12])
def test_brief_forms_are_the_usual_ones_up_to_twelve_dims(dims):
    shape = PartialShape.of(dims)
    assert shape.brief() == str(shape)
    assert f"[{types.dims_text(dims, ', ')}]" == str(list(dims))
    spec = types.TensorSpec(types.ELEMENT_TYPES["f32"], shape)
    assert spec.brief() == str(spec)


def test_brief_forms_of_dynamic_and_interval_dims_are_the_usual_ones():
    shape = parse_partial_shape("?,1..10,2..,..5,3")
    assert shape.brief() == str(shape) == "[?,1..10,2..,..5,3]"
    assert PartialShape(None).brief() == "[...]"


@pytest.mark.parametrize("rank", [13, 65, HUGE_RANK])
def test_brief_form_of_a_long_shape_shows_twelve_dims_and_the_rank(rank):
    assert PartialShape.of((7,) * rank).brief() == f"[{ones(12, 7)},... (rank {rank})]"
    assert types.dims_text((7,) * rank, ", ") == ", ".join(["7"] * 12) + f", ... (rank {rank})"


def test_declared_mismatch_of_a_huge_rank_is_short():
    xml = parameter_model(ones(HUGE_RANK), [2] * HUGE_RANK)
    mismatches = [e for e in validate_errors(xml) if isinstance(e, DeclaredMismatchError)]
    assert [e.layer.name for e in mismatches] == ["p", "r"]
    text = str(mismatches[0])
    assert f"declared FP32[{ones(12, 2)},... (rank {HUGE_RANK})]" in text
    assert f"but inferred f32[{ones(12)},... (rank {HUGE_RANK})]: dim 0 is declared 2, inferred 1;" in text
    assert "dim 11 is declared 2, inferred 1; 99988 more dims differ" in text and "dim 12 " not in text
    assert mismatches[0].hint == f"declare <dim>s {', '.join(['1'] * 12)}, ... (rank {HUGE_RANK}) and precision FP32"


def test_a_port_with_a_huge_number_of_dims_is_a_short_declared_mismatch():
    error = load_error(parameter_model("2", [2] * HUGE_RANK), kind=DeclaredMismatchError)
    assert error.layer.name == "p" and error.port == "output port 0 (id 0)"
    assert f"declared FP32[{ones(12, 2)},... (rank {HUGE_RANK})] but inferred f32[2]:" in str(error)
    assert f"{HUGE_RANK} dims declared, inferred rank is 1" in str(error)


def test_a_huge_port_precision_is_clipped():
    error = load_error(parameter_model("2", precision="Q" * 10**6), kind=DeclaredMismatchError)
    assert "declared QQQQ" in str(error) and str(error).count("(1000000 characters)") == 2
    assert "is not a known element type" in str(error)


def test_an_inference_error_lists_huge_inputs_briefly():
    b = IRBuilder()
    cond, then = b.parameter("c", "boolean", ones(HUGE_RANK, 2)), b.parameter("t", "f32", ones(HUGE_RANK, 3))
    b.result(b.layer("Select", "opset1", [cond, then, b.parameter("e", "f32", "3")], attrs={"auto_broadcast": "numpy"},
                     name="s"))
    errors = validate_errors(b.build()[0])
    failed = [e for e in errors if isinstance(e, InferenceError)]
    assert [e.layer.name for e in failed] == ["s"]
    assert f"cond=boolean[{ones(12, 2)},... (rank {HUGE_RANK})], then=f32[{ones(12, 3)},... (rank {HUGE_RANK})]" in (
        str(failed[0]))


def test_an_empty_interval_in_a_huge_dim_text_is_clipped():
    with pytest.raises(ValueError, match=r"empty interval '5 +\.\.\. \(1000004 characters\)'") as caught:
        parse_dim("5" + " " * 10**6 + "..3")
    assert len(str(caught.value)) < 100
    assert str(pytest.raises(ValueError, parse_dim, "5..3").value) == "empty interval '5..3'"


def test_a_feed_of_the_wrong_shape_for_a_rank_64_input_is_short():
    model = ir_runner.load(parameter_model(ones(64)))
    with pytest.raises(InputError) as caught:
        model.run({"p": np.zeros((2,) + (1,) * 63, np.float32)})
    assert f"expects shape [{ones(12)},... (rank 64)], got [2, {', '.join(['1'] * 11)}, ... (rank 64)]" in (
        short(caught.value))


def test_a_feed_of_the_wrong_shape_has_the_usual_message():
    model = ir_runner.load(parameter_model("2,?"))
    with pytest.raises(InputError, match=r"^input 'p' expects shape \[2,\?\], got \[3, 1\]$"):
        model.run({"p": np.zeros((3, 1), np.float32)})


def test_the_size_of_a_const_too_large_for_any_weights_is_clipped():
    b = IRBuilder()
    c = b.const("c", np.zeros(3, np.float32))
    c.attrs["shape"] = ones(64, MAX_DIM)
    c.out_specs[0] = ("FP32", [MAX_DIM] * 64)
    b.result(c)
    error = load_error(*b.build(), kind=ModelFormatError)
    assert f"size=12 bytes is too small for f32[{ones(12, MAX_DIM)},... (rank 64)]: it needs " in str(error)
    assert "characters) bytes" in str(error)


# -- ranks numpy cannot hold ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [ones(65), ",".join(["?"] * 65), ones(1000, 2), ones(HUGE_RANK)],
                         ids=["65", "65_dynamic_dims", "1000", "huge"])
def test_a_parameter_of_a_rank_numpy_cannot_hold_is_unsupported(shape):
    error = load_error(parameter_model(shape), kind=UnsupportedError)
    rank = shape.count(",") + 1
    assert error.layer.name == "p" and error.layer.type_version == "Parameter-1"
    assert error.port == "output port 0 (id 0)"
    assert f"rank {rank} is above numpy's limit of 64 dims" in str(error)
    assert len(validate_errors(parameter_model(shape))) == 1  # only where the rank starts, not at the Result


def test_a_parameter_without_a_shape_attribute_takes_the_rank_of_its_port():
    b = IRBuilder()
    p = b.parameter("p", "f32", ones(70))
    del p.attrs["shape"]
    b.result(p)
    assert "rank 70 is above" in str(load_error(b.build()[0], kind=UnsupportedError))


@pytest.mark.parametrize("shape", [ones(64), "..."], ids=["64", "dynamic"])
def test_parameters_of_rank_64_and_of_dynamic_rank_still_load_and_run(shape):
    model = ir_runner.load(parameter_model(shape))
    value = np.full((1,) * 64, 1.5, np.float32)
    np.testing.assert_array_equal(model.run({"p": value})["p"], value)


def test_a_gather_whose_output_rank_is_above_the_limit_is_unsupported():
    b = IRBuilder()
    data, indices = b.parameter("d", "f32", ones(40, 2)), b.parameter("i", "i32", ones(40))
    gather = b.layer("Gather", "opset8", [data, indices, b.const("a", np.array(0, np.int64))],
                     attrs={"batch_dims": "0"}, out_specs=[("FP32", [1] * 40 + [2] * 39)], name="g")
    b.result(gather)
    xml, weights = b.build()
    error = load_error(xml, weights, kind=UnsupportedError)
    assert error.layer.name == "g" and error.port == "output port 0 (id 3)"
    assert "rank 79 is above numpy's limit of 64 dims" in str(error)
    assert len(validate_errors(xml, weights)) == 1


def test_a_zero_element_const_of_a_rank_numpy_cannot_hold_is_unsupported():
    b = IRBuilder()
    c = b.const("c", np.zeros(0, np.float32))
    c.attrs["shape"] = ones(65, 0)
    c.out_specs[0] = ("FP32", [0] * 65)
    b.result(c)
    error = load_error(*b.build(), kind=UnsupportedError)
    assert error.layer.name == "c" and "rank 65 is above numpy's limit of 64 dims" in str(error)


def test_a_gather_with_a_declared_mismatch_on_an_input_is_still_checked_for_rank():
    b = IRBuilder()
    data, indices = b.parameter("d", "f32", ones(40, 2)), b.parameter("i", "i32", ones(40))
    gather = b.layer("Gather", "opset8", [data, indices, b.const("a", np.array(0, np.int64))],
                     attrs={"batch_dims": "0"}, in_specs=[("FP32", [3] * 40), None, None],
                     out_specs=[("FP32", [1] * 40 + [2] * 39)], name="g")
    b.result(gather)
    xml, weights = b.build()
    error = load_error(xml, weights, kind=UnsupportedError)
    assert error.layer.name == "g" and "rank 79 is above" in str(error)
    assert [type(e) for e in validate_errors(xml, weights)] == [DeclaredMismatchError, UnsupportedError]


def test_input_specs_of_a_rank_above_the_limit_are_an_input_error():
    model = ir_runner.load(parameter_model("..."))
    spec = types.TensorSpec(types.ELEMENT_TYPES["f32"], PartialShape.of((1,) * 65))
    with pytest.raises(InputError, match=r"^layer 'p' .*: no: rank 65 is above numpy's limit of 64 dims"):
        model.inference_for([spec], context="no")


# -- sizes numpy cannot describe, and long lists in messages -------------------------------------------------------


def test_an_output_of_more_bytes_than_a_float_holds_is_a_resource_error():
    shape = ones(17, 2**62)  # 2**1054 elements: the byte count overflows a float
    with pytest.raises(ir_runner.ResourceLimitError, match="would take more than 1 EiB") as caught:
        ir_runner.load(parameter_model(shape))
    short(caught.value)


def select_model(cond: str, then: str, out: str) -> bytes:
    b = IRBuilder()
    c, t = b.parameter("c", "boolean", cond), b.parameter("t", "f32", then)
    b.result(b.layer("Select", "opset1", [c, t, t], attrs={"auto_broadcast": "numpy"}, out_specs=[("FP32", out)]),
             "r")
    return b.build()[0]


def test_an_output_numpy_cannot_describe_is_unsupported_at_load_even_without_a_memory_limit():
    big = 2**40
    empty = select_model(f"0,{big},1", f"0,1,{big}", f"0,{big},{big}")  # no element, yet too big for numpy
    with pytest.raises(UnsupportedError, match=r"output f32\[0,1099511627776,1099511627776\] is beyond the largest"):
        ir_runner.load(empty)
    with pytest.raises(UnsupportedError, match="beyond the largest array numpy can describe"):
        ir_runner.load(empty, memory_limit=None)
    huge = select_model(f"{big},1", f"1,{big}", f"{big},{big}")
    with pytest.raises(ir_runner.ResourceLimitError):
        ir_runner.load(huge)
    with pytest.raises(UnsupportedError, match="beyond the largest array numpy can describe"):
        ir_runner.load(huge, memory_limit=None)


def test_graph_errors_clip_hostile_ids_and_list_few_ports():
    b = IRBuilder()
    p = b.parameter("p", "f32", "2")
    b.result(p, "r")
    xml = b.build()[0]
    huge = "9" * 100_000
    bad_edge = xml.replace(b'to-port="0"', f'to-port="{huge}"'.encode(), 1)
    assert "(100000 characters)" in short(load_error(bad_edge, kind=ir_runner.GraphError))
    ports = "".join(f'<port id="{i}" precision="FP32"><dim>2</dim></port>' for i in range(5, 1000))
    many_ports = bad_edge.replace(b"<input>", f"<input>{ports}".encode(), 1)
    assert ", ... (996 ports)" in short(load_error(many_ports, kind=ir_runner.GraphError))


def test_many_unknown_layers_and_a_huge_type_name_give_a_short_message():
    b = IRBuilder()
    chain = b.parameter("p", "f32", "2")
    for i in range(30):
        chain = b.layer("Foo" + "o" * (10_000 if i == 0 else 0), "opset1", [chain], name=f"f{i}")
    b.result(chain, "r")
    with pytest.raises(UnsupportedError) as caught:
        ir_runner.load(b.build()[0])
    message = str(caught.value)
    assert len(message) < 2000  # one layer named per type, each type clipped
    assert "30 layer(s) use operations that are not implemented" in message and "x29 (first: layer 'f1'" in message
    assert "(10003 characters)" in message


def test_the_hint_for_an_unconnected_input_clips_hostile_ids():
    b = IRBuilder()
    b.result(b.parameter("p", "f32", "2"), "r")
    xml = b.build()[0]
    huge = "7" * 50_000
    unconnected = xml.replace(b"<edges>", b"<edges><!-- -->", 1).replace(
        b'<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>', b"")
    port = b'<port id="0" precision="FP32">'
    unconnected = unconnected.replace(port, f'<port id="{huge}" precision="FP32">'.encode())
    error = load_error(unconnected, kind=ir_runner.GraphError)
    assert "not connected" in str(error) and "(50000 characters)" in str(error)
