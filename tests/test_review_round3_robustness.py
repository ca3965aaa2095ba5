"""Regression tests for the third review: port dims above int64, huge attribute texts in messages, integer
attributes beyond int64, Consts numpy cannot hold, and complex feeds (refused, with no numpy warning leaking)."""

import warnings

import numpy as np
import pytest

import ir_runner
from ir_runner import InferenceError, InputError, ModelFormatError, UnsupportedError
from ir_runner.errors import LayerRef, clip_text
from ir_runner.ir.reader import read_ir
from ir_runner.types import MAX_DIM
from tests.cli.clikit import invoke
from tests.helpers.irbuild import IRBuilder

MESSAGE_MAX = 400  # every message below stays short, whatever the size of the text that caused it
HUGE_INT = "1" + "0" * 4000  # int() parses it (below 4300 digits): a value far beyond int64


def ident(value: object) -> str:
    """A short test id for a long parameter."""
    return clip_text(str(value), 16)


def short(error: Exception) -> str:
    text = str(error)
    assert len(text) < MESSAGE_MAX, text[:1000]
    return text


def load_error(xml: bytes, weights: bytes = b"", kind: type = ir_runner.IRError) -> ir_runner.IRError:
    """The error ``load`` raises, checked to be ``kind`` with a short message; ``validate`` reports it too."""
    with pytest.raises(kind) as caught:
        ir_runner.load(xml, weights)
    short(caught.value)
    report = ir_runner.validate(xml, weights)
    assert not report.ok and any(type(e) is type(caught.value) and str(e) == str(caught.value) for e in report.errors)
    return caught.value


# -- port dims above int64 ----------------------------------------------------------------------------------------

def param_with_port_dim(dim: str, port_id: str = "0") -> bytes:
    b = IRBuilder()
    b.result(b.parameter("p", "f32", "2"))
    xml, _ = b.build()
    xml = xml.replace(b"<dim>2</dim>", f"<dim>{dim}</dim>".encode(), 1)
    return xml.replace(b'<port id="0" precision', f'<port id="{port_id}" precision'.encode(), 1)


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


@pytest.mark.parametrize("command", [["validate"], []])
def test_cli_reports_a_port_dim_above_int64_without_traceback(tmp_path, command):
    path = tmp_path / "big.xml"
    path.write_bytes(param_with_port_dim(str(10**23)))
    result = invoke(*command, path, debug=False)
    assert result.exit_code == 3
    assert "<dim>100000000000000000000000</dim>" in result.output and "layer 'p'" in result.output
    assert "port id 0" in result.output


def test_huge_root_tag_is_clipped():
    with pytest.raises(ModelFormatError, match=r"root element <a{40}\.\.\. \(40000 characters\)>") as caught:
        ir_runner.load(b"<" + b"a" * 40_000 + b"/>")
    short(caught.value)


# -- integer attributes -------------------------------------------------------------------------------------------

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
    short(caught.value)


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


# -- other huge attribute texts ---------------------------------------------------------------------------------

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


# -- Consts numpy cannot hold -----------------------------------------------------------------------------------

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


# -- complex and other non-IR feeds -----------------------------------------------------------------------------

def passthrough(element_type: str = "f32", shape: str = "2") -> ir_runner.Model:
    b = IRBuilder()
    b.result(b.parameter("x", element_type, shape), "out")
    return ir_runner.load(*b.build())


COMPLEX_FEEDS = {
    "python_list": [1 + 2j, 3],
    "python_zero_imag": [1 + 0j, 3],
    "complex128": np.array([1 + 2j, 3]),
    "complex64_zero_imag": np.array([1, 3], np.complex64),
    "nan_imag": np.array([1 + 1j * np.nan, 3]),
}


@pytest.mark.parametrize("element_type", ["f32", "f16", "bf16", "f8e4m3", "i32", "u8", "i4", "boolean"])
@pytest.mark.parametrize("feed", list(COMPLEX_FEEDS))
@pytest.mark.parametrize("cast", [None, "safe", "same_kind"])
def test_complex_feeds_are_one_input_error_without_warnings(element_type, feed, cast):
    model = passthrough(element_type)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError) as caught:
            model.run({"x": COMPLEX_FEEDS[feed]}, cast=cast)
    text = short(caught.value)
    assert "input 'x'" in text and "complex" in text and "the IR has no complex element type" in text
    if cast is None:
        assert f"expects element type {element_type} " in text
    assert "array.real" in caught.value.hint


@pytest.mark.parametrize("feed", ["python_list", "complex128", "nan_imag"])
def test_unsafe_cast_never_drops_a_non_zero_imaginary_part(feed):
    model = passthrough()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError, match=r"cannot cast complex128 to float32 .*non-zero imaginary"):
            model.run({"x": COMPLEX_FEEDS[feed]}, cast="unsafe")


@pytest.mark.parametrize("feed", ["python_zero_imag", "complex64_zero_imag"])
def test_unsafe_cast_of_complex_values_with_zero_imaginary_parts_warns_only_cast_warning(feed):
    model = passthrough()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = model.run({"x": COMPLEX_FEEDS[feed]}, cast="unsafe")
    assert [w.category for w in caught] == [ir_runner.CastWarning]
    np.testing.assert_array_equal(next(iter(out.values())), np.array([1, 3], np.float32))


def test_complex_scalar_feed_is_refused():
    with pytest.raises(InputError, match=r"'x' expects element type f32 \(float32\), got complex64"):
        passthrough(shape="").run({"x": np.complex64(1)})


def test_complex_feed_for_a_dynamic_element_type_is_refused():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError, match=r"'x' got an array of dtype complex128"):
            passthrough("dynamic").run({"x": [1 + 2j, 3]})


@pytest.mark.parametrize("element_type", ["f32", "bf16", "f8e5m2", "i4", "u4", "i32"])
@pytest.mark.parametrize("value", [[np.datetime64("2020-01-01"), np.datetime64("2021-01-01")],
                                   [np.timedelta64(1, "D"), np.timedelta64(2, "D")]])
def test_python_lists_of_datetimes_are_one_input_error(element_type, value):
    with pytest.raises(InputError, match=r"'x' got an array of dtype (datetime|timedelta)64\[D\], which is not an IR"):
        passthrough(element_type).run({"x": value})


@pytest.mark.parametrize(("element_type", "spelled"), [("bf16", "ml_dtypes.bfloat16"), ("f32", "np.float32"),
                                                       ("i4", "ml_dtypes.int4")])
def test_dtype_hint_spells_the_dtype_as_python_does(element_type, spelled):
    with pytest.raises(InputError) as caught:
        passthrough(element_type).run({"x": np.zeros(2, np.float64)})
    assert f"array.astype({spelled})" in caught.value.hint


@pytest.mark.parametrize("cast", [[], ["--cast", "unsafe"]])
@pytest.mark.parametrize("array", [np.array([1 + 2j, 3], np.complex64), np.array([1, 3], np.complex128)])
def test_cli_refuses_complex_npy_without_traceback(tmp_path, cast, array):
    b = IRBuilder()
    b.result(b.parameter("x", "f32", "2"), "out")
    model = b.write(tmp_path)
    np.save(tmp_path / "x.npy", array)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = invoke(model, "--input", f"x={tmp_path / 'x.npy'}", *cast, debug=False)
    assert result.exit_code == 4
    assert f"input 'x' is f32, {tmp_path / 'x.npy'} has dtype {array.dtype}, which is not an IR element type" in (
        result.output.replace("\n", " "))


def test_layer_names_in_messages_are_clipped_only_when_hostile():
    real = "__module.model.layers.0.self_attn/aten::scaled_dot_product_attention/ScaledDotProductAttention"
    assert str(LayerRef(real, "Gather-8", "7", 3)) == f"layer '{real}' (Gather-8, id 7, line 3)"
    shown = str(LayerRef("n" * 10**6, "Foo " + "v" * 10**6, "1" * 10**6, 3))
    assert len(shown) < 1200
    assert shown.count(" characters)") == 3
