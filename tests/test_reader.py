"""Reading the IR's XML: net and opset versions, port dims, integer and other attributes, Const attributes,
sub-graphs. Numbers too large for int() or int64, and texts of any size, end in one ModelFormatError (or
UnsupportedError) naming the layer and port, with a message clipped short; valid spellings still load."""

from __future__ import annotations

import re

import numpy as np
import pytest

import ir_runner
from ir_runner import InferenceError, ModelFormatError, UnsupportedError
from ir_runner.errors import LayerRef, clip_text
from ir_runner.ir.reader import read_ir
from ir_runner.ops.registry import opset_number
from ir_runner.report import error_entry
from ir_runner.types import MAX_DIM, Dim, decimal_int, parse_dim, parse_partial_shape
from tests.conftest import MODELS
from tests.helpers.irbuild import IRBuilder
from tests.helpers.limits import HUGE, param_with_port_dim, short

MESSAGE_MAX = 400  # every message below stays short, whatever the size of the text that caused it
HUGE_INT = "1" + "0" * 4000  # int() parses it (below 4300 digits): a value far beyond int64


def ident(value: object) -> str:
    """A short test id for a long parameter."""
    return clip_text(str(value), 16)


def load_error(xml: bytes, weights: bytes = b"", kind: type = ir_runner.IRError) -> ir_runner.IRError:
    """The error ``load`` raises, checked to be ``kind`` with a short message; ``validate`` reports it too."""
    with pytest.raises(kind) as caught:
        ir_runner.load(xml, weights)
    short(caught.value, MESSAGE_MAX)
    report = ir_runner.validate(xml, weights)
    assert not report.ok and any(type(e) is type(caught.value) and str(e) == str(caught.value) for e in report.errors)
    return caught.value


# -- IR and opset versions ------------------------------------------------------------------------------------------


def convert_model(version: str = "opset1", net_version: str = "11") -> tuple[bytes, bytes]:
    b = IRBuilder(version=net_version)
    p = b.parameter("p", "f32", "2")
    b.result(b.layer("Convert", version, [p], attrs={"destination_type": "f16"}, out_specs=[("FP16", [2])],
                     name="conv"))
    return b.build()


@pytest.mark.parametrize("version", [HUGE, "0" * 5000 + "11", "+11", "1_1", "١١"])
def test_net_version_of_any_length_is_a_model_format_error(version):
    with pytest.raises(ModelFormatError, match=r"ir-run reads IR versions 10 and 11") as caught:
        ir_runner.load(*convert_model(net_version=version))
    assert len(str(caught.value)) < 300


@pytest.mark.parametrize("version", ["10", "11", " 11 ", "011"])
def test_supported_net_versions_still_load(version):
    model = ir_runner.load(*convert_model(net_version=version))
    assert model.graph.net.version == int(version)


def test_opset_of_5000_digits_is_unsupported_naming_the_layer():
    xml, weights = convert_model("opset" + HUGE)
    with pytest.raises(UnsupportedError, match=r"'conv'"):
        ir_runner.load(xml, weights)
    report = ir_runner.validate(xml, weights)
    assert not report.complete and [info.layer.name for info in report.unsupported] == ["conv"]


@pytest.mark.parametrize(("version", "number"), [
    ("opset7", 7), (" OPSET8 ", 8), ("opset007", 7), ("opset" + HUGE, None), ("opset 7", None), ("opset-1", None),
    ("opset+1", None), ("opset", None), ("opset١", None), ("experimental", None), ("", None),
])
def test_opset_number(version, number):
    assert opset_number(version) == number


@pytest.mark.parametrize("version", ["opset\u00b2", "opset\u0663"])
def test_non_ascii_opset_digits_are_not_versions(version):
    b = IRBuilder("digits")
    x = b.parameter("x", "f32", "2")
    b.result(b.layer("Convert", version, [x], attrs={"destination_type": "f16"}, out_specs=[("FP16", [2])]))
    with pytest.raises(ir_runner.UnsupportedError, match="not implemented"):
        ir_runner.load(*b.build())
    assert not ir_runner.validate(*b.build()).complete


def test_non_ascii_net_version_is_refused():
    with pytest.raises(ir_runner.ModelFormatError, match="version"):
        ir_runner.load('<net version="\u00b2"><layers/></net>'.encode())


@pytest.mark.parametrize(("text", "bound", "value"), [
    ("0", 1, 0), ("12", 2, 12), ("123", 2, None), (HUGE, 4, None), (HUGE, 4300, None), ("", 3, None),
    ("+1", 3, None), ("-1", 3, None), (" 1", 3, None), ("1 ", 3, None), ("1_0", 4, None), ("١", 3, None),
    ("²", 3, None),
])
def test_decimal_int(text, bound, value):
    assert decimal_int(text, bound) == value


# -- port dims and shapes ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [HUGE, f"1..{HUGE}", f"{HUGE}..", str(MAX_DIM + 1), f"..{MAX_DIM + 1}"])
def test_parse_dim_refuses_bounds_above_int64_with_a_short_value_error(text):
    with pytest.raises(ValueError, match=r"not an integer in 0\.\.9223372036854775807") as caught:
        parse_dim(text)
    assert len(str(caught.value)) < 120


def test_parse_dim_accepts_the_largest_int64():
    assert parse_dim(str(MAX_DIM)) == Dim(MAX_DIM, MAX_DIM)
    assert parse_partial_shape(f"1..{MAX_DIM}, 007") == parse_partial_shape(f"1..{MAX_DIM},7")


@pytest.mark.parametrize("shape", [HUGE, f"1..{HUGE}", "18446744073709551616"])
def test_parameter_shape_too_large_names_the_layer(shape):
    b = IRBuilder()
    b.result(b.parameter("p", "f32", shape, out_spec=("FP32", [-1])), in_spec=("FP32", [-1]))
    with pytest.raises(ModelFormatError, match=r"not an integer in 0\.\.") as caught:
        ir_runner.load(*b.build())
    assert caught.value.layer.name == "p"
    assert "Exceeds the limit" not in str(caught.value)


def test_port_dim_of_5000_digits_names_layer_and_port_with_a_clipped_message():
    b = IRBuilder()
    b.result(b.parameter("p", "f32", "2"))
    xml, weights = b.build()
    xml = xml.replace(b"<dim>2</dim>", f"<dim>{HUGE}</dim>".encode(), 1)
    with pytest.raises(ModelFormatError, match=r"<dim>1{40}\.\.\. \(5000 characters\)</dim>") as caught:
        ir_runner.load(xml, weights)
    assert caught.value.layer.name == "p" and caught.value.port == "port id 0"


@pytest.mark.parametrize("dim", [str(MAX_DIM + 1), "100000000000000000000000", HUGE_INT, "18446744073709551616"],
                         ids=ident)
def test_port_dim_above_int64_is_a_model_format_error_naming_layer_and_port(dim):
    error = load_error(param_with_port_dim(dim), kind=ModelFormatError)
    assert error.layer.name == "p" and error.layer.type_version == "Parameter-1"
    assert error.port == "port id 0"
    assert f"<dim>{clip_text(dim)}</dim>" in str(error)
    assert "0..9223372036854775807" in str(error)


def test_a_port_dim_above_int64_after_valid_ports_is_found():
    """The reader remembers dims tuples found valid; a later port with an out-of-range dim is still refused."""
    b = IRBuilder()
    p = b.parameter("p", "f32", "2,3")
    b.result(b.convert(p, "f16"), "r", in_spec=("FP16", [2, MAX_DIM + 1]))
    error = load_error(*b.build(), kind=ModelFormatError)
    assert error.layer.name == "r" and error.port == "port id 0"
    assert f"<dim>{MAX_DIM + 1}</dim>" in str(error)


def test_port_dims_of_int64_range_are_read():
    net = read_ir(param_with_port_dim(str(MAX_DIM)))
    assert net.layers[0].outputs[0].dims == (MAX_DIM,)
    assert read_ir(param_with_port_dim("-1")).layers[0].outputs[0].dims == (-1,)


def test_huge_port_id_is_clipped_in_the_dim_error():
    error = load_error(param_with_port_dim("-2", port_id="7" * 100_000), kind=ModelFormatError)
    assert error.port == f"port id {clip_text('7' * 100_000)}"


def test_huge_root_tag_is_clipped():
    with pytest.raises(ModelFormatError, match=r"root element <a{40}\.\.\. \(40000 characters\)>") as caught:
        ir_runner.load(b"<" + b"a" * 40_000 + b"/>")
    short(caught.value, MESSAGE_MAX)


@pytest.mark.parametrize("extra", ["<note>7</note>", "<note>-5</note>", "<rt_info><attribute name='x'/></rt_info>"])
def test_port_children_other_than_dims_are_ignored(extra):
    xml = (MODELS / "select_gather.xml").read_text()
    port = '<port id="0" precision="BOOL" names="cond">'
    xml = xml.replace(port, port + extra, 1)
    assert extra in xml
    model = ir_runner.load(xml.encode(), (MODELS / "select_gather.bin").read_bytes())
    assert model.inputs[0].shape == (2, 3)


# -- integer attributes --------------------------------------------------------------------------------------------


def gather_model(batch_dims: str, indices_shape: str = "2") -> tuple[bytes, bytes]:
    b = IRBuilder()
    data = b.parameter("d", "f32", "3,4")
    indices = b.parameter("i", "i32", indices_shape)
    axis = b.const("a", np.array(1, np.int64))
    b.result(b.layer("Gather", "opset8", [data, indices, axis], attrs={"batch_dims": batch_dims},
                     out_specs=[("FP32", [3, 2])], name="g"))
    return b.build()


@pytest.mark.parametrize("text", [HUGE_INT, "-" + HUGE_INT, "1" * 5000, str(2**63), str(-(2**63) - 1), "+" + HUGE_INT,
                                  "1" + "0" * 19], ids=ident)
def test_integer_attribute_outside_int64_is_a_clipped_model_format_error(text):
    error = load_error(*gather_model(text), kind=ModelFormatError)
    assert error.layer.name == "g"
    assert f"attribute batch_dims={clip_text(text)!r} is outside the int64 range" in str(error)


@pytest.mark.parametrize("text", ["x" * 1_000_000, "1" * 5000 + "x", "1_0", "١", "²", "+-1", "", " ", "-", "0x10",
                                  "1.0", "1 0"], ids=ident)
def test_integer_attribute_that_is_not_an_integer_is_a_clipped_model_format_error(text):
    error = load_error(*gather_model(text), kind=ModelFormatError)
    assert error.layer.name == "g"
    assert f"attribute batch_dims={clip_text(text)!r} is not an integer" in str(error)


@pytest.mark.parametrize("text", [str(MAX_DIM), str(-(2**63))])
@pytest.mark.parametrize("indices_shape", ["2", "?"])
def test_batch_dims_at_the_int64_bounds_is_an_inference_error(text, indices_shape):
    error = load_error(*gather_model(text, indices_shape), kind=InferenceError)
    assert error.layer.name == "g" and text in str(error)


def test_batch_dims_at_int64_min_with_indices_of_dynamic_rank_fails_when_run():
    model = ir_runner.load(*gather_model(str(-(2**63)), "..."))
    with pytest.raises(ir_runner.IRError, match=r"batch_dims=-9223372036854775808 is below") as caught:
        model.run({"d": np.zeros((3, 4), np.float32), "i": np.zeros(2, np.int32)})
    short(caught.value, MESSAGE_MAX)


@pytest.mark.parametrize("text", [" 0 ", "+0", "-0", "000", "0" * 5000, "-" + "0" * 5000], ids=ident)
def test_integer_attributes_with_sign_and_spaces_still_load(text):
    model = ir_runner.load(*gather_model(text))
    out = model.run({"d": np.arange(12, dtype=np.float32).reshape(3, 4), "i": np.array([3, 0], np.int32)})
    np.testing.assert_array_equal(next(iter(out.values())), [[3, 0], [7, 4], [11, 8]])


@pytest.mark.parametrize(("value", "dtype"), [(MAX_DIM, np.int64), (-(2**63), np.int64), (2**64 - 1, np.uint64)])
def test_gather_axis_at_the_integer_bounds_is_an_inference_error(value, dtype):
    b = IRBuilder()
    data = b.parameter("d", "f32", "3,4")
    axis = b.const("a", np.array(value, dtype))
    b.result(b.layer("Gather", "opset8", [data, b.const("i", np.array([0], np.int32)), axis],
                     attrs={"batch_dims": "0"}, out_specs=[("FP32", [1, 4])], name="g"))
    error = load_error(*b.build(), kind=InferenceError)
    assert error.layer.name == "g" and f"axis={value} is out of the range" in str(error)


# -- Const attributes, and Consts numpy cannot hold ----------------------------------------------------------------


def const_model(**attrs: str) -> tuple[bytes, bytes]:
    b = IRBuilder()
    c = b.const("c", np.zeros(3, np.float32))
    c.attrs.update(attrs)
    b.result(c)
    return b.build()


@pytest.mark.parametrize("name", ["offset", "size"])
@pytest.mark.parametrize(("text", "problem"), [(HUGE_INT, "outside the int64 range"),
                                               (str(2**64), "outside the int64 range"),
                                               ("x" * 1_000_000, "not an integer")], ids=ident)
def test_const_offset_and_size_outside_int64_are_clipped_model_format_errors(name, text, problem):
    error = load_error(*const_model(**{name: text}), kind=ModelFormatError)
    assert error.layer.name == "c"
    assert f"attribute {name}={clip_text(text)!r} is {problem}" in str(error)


def test_const_offset_at_int64_max_is_outside_the_weights():
    error = load_error(*const_model(offset=str(MAX_DIM)), kind=ModelFormatError)
    assert f"offset={MAX_DIM} + 12 bytes lies outside" in str(error)


def test_negative_const_offset_message_shows_the_attributes():
    error = load_error(*const_model(offset="-" + "9" * 18), kind=ModelFormatError)
    assert f"offset={'-' + '9' * 18!r} and size='12' must both be integers >= 0" in str(error)


def empty_const_model(shape: str) -> tuple[bytes, bytes]:
    """A Const 'c' with the shape attribute ``shape`` (no elements in the .bin) feeding a Result; its ports
    declare the dims when they fit in an int64, else dynamic dims."""
    b = IRBuilder()
    c = b.const("c", np.zeros(0, np.float32))
    c.attrs["shape"] = shape
    c.out_specs[0] = ("FP32", [int(d) if len(d) < 19 else -1 for d in shape.split(",")])
    b.result(c)
    return b.build()


def assert_names_const(error: ModelFormatError) -> None:
    assert error.layer is not None and (error.layer.name, error.layer.type_version) == ("c", "Const-1")


@pytest.mark.parametrize("shape", ["0,18446744073709551616", "0,4611686018427387904,4", "4611686018427387904,0,2",
                                   "0,9223372036854775807,2", f"0,{HUGE}"])
def test_empty_const_with_dims_numpy_cannot_hold_names_the_layer(shape):
    xml, weights = empty_const_model(shape)
    with pytest.raises(ModelFormatError) as caught:
        ir_runner.load(xml, weights)
    assert_names_const(caught.value)
    assert len(str(caught.value)) < 400 + len(shape)  # no Python int-parsing message
    report = ir_runner.validate(xml, weights)
    assert not report.ok and isinstance(report.errors[0], ModelFormatError)


def test_empty_const_with_a_large_but_possible_shape_still_loads():
    xml, weights = empty_const_model(f"0,{2**60}")  # 2**62 bytes per row of f32: numpy can describe it
    model = ir_runner.load(xml, weights)
    assert model.run({})[model.outputs[0].name].shape == (0, 2**60)


@pytest.mark.parametrize("rank", [65, 1000])
def test_const_of_a_rank_numpy_cannot_hold_is_unsupported(rank):
    b = IRBuilder()
    c = b.const("c", np.zeros(1, np.float32))
    c.attrs["shape"] = ",".join(["1"] * rank)
    c.out_specs[0] = ("FP32", [1] * rank)
    b.result(c)
    error = load_error(*b.build(), kind=UnsupportedError)
    assert error.layer.name == "c" and "cannot be held in a numpy array" in str(error)


def test_const_of_rank_64_still_loads():
    b = IRBuilder()
    b.result(b.const("c", np.full((1,) * 64, 2.5, np.float32)), "out")
    out = ir_runner.load(*b.build()).run({})
    np.testing.assert_array_equal(next(iter(out.values())), np.full((1,) * 64, 2.5, np.float32))


# -- huge attribute texts and names --------------------------------------------------------------------------------


def test_unparsable_huge_shape_is_clipped():
    text = ",".join(["1"] * 1_000_000) + ",x"
    error = load_error(*const_model(shape=text), kind=ModelFormatError)
    assert f"attribute shape={clip_text(text)!r} is not a shape: 'x' is not an integer" in str(error)


def test_huge_empty_interval_in_a_shape_is_clipped():
    error = load_error(*const_model(shape="5" + " " * 1_000_000 + "..3"), kind=ModelFormatError)
    assert "is not a shape: empty interval '5 " in str(error)


def test_huge_parameter_shape_is_clipped():
    b = IRBuilder()
    p = b.parameter("p", "f32", "2")
    p.attrs["shape"] = "?," * 500_000 + "-2"
    b.result(p)
    error = load_error(*b.build(), kind=ModelFormatError)
    assert error.layer.name == "p" and "(1000002 characters)" in str(error)


def test_huge_dynamic_const_shape_is_clipped():
    text = "?," * 100_000 + "1"
    error = load_error(*const_model(shape=text), kind=ModelFormatError)
    assert f"a Const needs a static shape, got shape={clip_text(text)!r}" in str(error)


def test_huge_element_type_is_clipped():
    error = load_error(*const_model(element_type="q" * 1_000_000), kind=UnsupportedError)
    assert f"attribute element_type={clip_text('q' * 1_000_000)!r} is not a known element type" in str(error)


def select_model(**attrs: str) -> bytes:
    b = IRBuilder()
    cond, then, other = b.parameter("c", "boolean", "2"), b.parameter("t", "f32", "2"), b.parameter("e", "f32", "2")
    b.result(b.layer("Select", "opset1", [cond, then, other], attrs=attrs, name="s"))
    return b.build()[0]


def test_huge_choice_attribute_is_clipped():
    error = load_error(select_model(auto_broadcast="z" * 1_000_000), kind=ModelFormatError)
    assert error.layer.name == "s" and "(1000000 characters)' is not one of" in str(error)


@pytest.mark.parametrize(("text", "kind"), [(HUGE_INT, ModelFormatError), (str(MAX_DIM), InferenceError)],
                         ids=ident)
def test_huge_pdpd_axis_is_an_ir_error(text, kind):
    xml = select_model(**{"auto_broadcast": "pdpd", "auto_broadcast.auto_broadcast_axis": text})
    assert load_error(xml, kind=kind).layer.name == "s"


def test_layer_names_in_messages_are_clipped_only_when_hostile():
    real = "__module.model.layers.0.self_attn/aten::scaled_dot_product_attention/ScaledDotProductAttention"
    assert str(LayerRef(real, "Gather-8", "7", 3)) == f"layer '{real}' (Gather-8, id 7, line 3)"
    shown = str(LayerRef("n" * 10**6, "Foo " + "v" * 10**6, "1" * 10**6, 3))
    assert len(shown) < 1200
    assert shown.count(" characters)") == 3


# -- sub-graphs ----------------------------------------------------------------------------------------------------


def subgraph_model() -> tuple[bytes, bytes, int]:
    """A model whose Convert layer 'conv' has a <body>; also the line of that <layer>."""
    xml, weights = convert_model()
    opening = re.search(rb'<layer id="1" name="conv"[^>]*>', xml)
    xml = xml[: opening.end()] + b"<body/>" + xml[opening.end():]
    return xml, weights, xml[: opening.start()].count(b"\n") + 1


def test_subgraph_error_names_the_layer_like_every_other_error():
    xml, weights, line = subgraph_model()
    with pytest.raises(ModelFormatError) as caught:
        ir_runner.load(xml, weights)
    error = caught.value
    assert error.layer == LayerRef("conv", "Convert-1", "1", line)
    assert str(error).startswith(f"layer 'conv' (Convert-1, id 1, line {line}): its <body> (line {line})")
    entry = error_entry(error)
    assert entry["layer"] == {"name": "conv", "type": "Convert-1", "id": "1", "line": line}
    assert entry["type"] == "ModelFormatError"


def test_many_attributes_on_one_element_are_read_in_linear_time():
    """lxml's ``attrib`` searches each value from the first attribute: 60,000 attributes on one <data> took
    about 14 s to read (quadratic); one XPath pass reads them in well under a second."""
    import time

    xml = (MODELS / "select_gather.xml").read_text()
    many = " ".join(f'extra{i}="{i}"' for i in range(60_000))
    started = time.perf_counter()
    net = read_ir(xml.replace("<data ", f"<data {many} ", 1).encode(), b"")
    assert time.perf_counter() - started < 5  # a hang guard with room for a loaded machine, not a benchmark
    data = next(layer.data for layer in net.layers if "extra0" in layer.data)
    assert len(data) > 60_000 and data["extra59999"] == "59999"
