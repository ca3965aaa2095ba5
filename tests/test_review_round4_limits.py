"""Regression tests for the fourth review: messages stay short whatever the rank of the shapes they show, a tensor
of a rank numpy cannot hold is refused at load, and a Const's offset + size must lie within the .bin, as OpenVINO
requires (it refuses the same models; the one model it accepts and ir-run refuses is documented below)."""

import numpy as np
import pytest

import ir_runner
from ir_runner import DeclaredMismatchError, InferenceError, InputError, ModelFormatError, UnsupportedError, types
from ir_runner.types import MAX_DIM, PartialShape, parse_dim, parse_partial_shape
from tests.cli.clikit import invoke
from tests.helpers.irbuild import IRBuilder, read_with_openvino

MESSAGE_MAX = 1000  # a message with MESSAGE_DIMS dims and as many differing dims; HEAD wrote megabytes
HUGE_RANK = 100_000


def short(error: Exception) -> str:
    text = str(error)
    assert len(text) < MESSAGE_MAX, text[:2000]
    return text


def validate_errors(xml: bytes, weights: bytes = b"") -> list[ir_runner.IRError]:
    """Every finding of ``validate``, each checked to be short."""
    report = ir_runner.validate(xml, weights)
    assert not report.ok
    for error in report.errors:
        short(error)
    return report.errors


def load_error(xml: bytes, weights: bytes = b"", kind: type = ir_runner.IRError) -> ir_runner.IRError:
    """The error ``load`` raises, checked to be ``kind`` with a short message; ``validate`` reports it too."""
    with pytest.raises(kind) as caught:
        ir_runner.load(xml, weights)
    short(caught.value)
    assert any(type(e) is kind and str(e) == str(caught.value) for e in validate_errors(xml, weights))
    return caught.value


def ones(rank: int, value: int = 1) -> str:
    return ",".join([str(value)] * rank)


def parameter_model(shape: str, port_dims: list[int] | None = None, precision: str = "FP32") -> bytes:
    """Parameter 'p' f32 of ``shape`` (its port declaring ``port_dims``, default the shape) -> Result 'r'."""
    b = IRBuilder()
    spec = (precision, shape if port_dims is None else port_dims)
    b.result(b.parameter("p", "f32", shape, out_spec=spec), "r", in_spec=spec)
    return b.build()[0]


# -- bounded shapes in messages -----------------------------------------------------------------------------------

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


# -- ranks numpy cannot hold --------------------------------------------------------------------------------------

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


@pytest.mark.parametrize("fill", ["zeros", "random"])
def test_cli_shape_of_a_rank_above_the_limit_is_an_input_error(tmp_path, fill):
    path = tmp_path / "any_rank.xml"
    path.write_bytes(parameter_model("..."))
    result = invoke(path, "--shape", f"p=[{ones(65)}]", "--fill", fill, debug=False)
    assert result.exit_code == 4
    assert "rank 65 is above numpy's limit of 64 dims" in result.output


@pytest.mark.parametrize("command", [["validate"], []])
def test_cli_reports_a_rank_above_the_limit_with_exit_code_5(tmp_path, command):
    path = tmp_path / "deep.xml"
    path.write_bytes(parameter_model(ones(65)))
    result = invoke(*command, path, debug=False)
    assert result.exit_code == 5
    assert "layer 'p'" in result.output and "rank 65 is above numpy's limit of 64 dims" in result.output


# -- Const offset and size against the .bin, as OpenVINO checks them -----------------------------------------------

def const_model(offset: int, size: int, bin_length: int, shape: tuple[int, ...] = (3,)) -> tuple[bytes, bytes]:
    """Const 'c' f32 of ``shape`` at ``offset`` with ``size`` -> Result, and a .bin of ``bin_length`` bytes
    (value 1.0, 2.0, ... from its start)."""
    b = IRBuilder()
    c = b.const("c", np.zeros(3, np.float32))
    c.attrs.update(shape=",".join(map(str, shape)), offset=str(offset), size=str(size))
    c.out_specs[0] = ("FP32", list(shape))
    b.result(c)
    values = np.arange(1, bin_length // 4 + 2, dtype=np.float32).tobytes()
    return b.xml(), values[:bin_length]


# (offset, size, .bin length, shape): each refused by OpenVINO 2026.4 ("Incorrect weights in bin file!")
OUTSIDE = {
    "size_one_past_the_end": (0, 13, 12, (3,)),
    "size_int64_max": (0, MAX_DIM, 12, (3,)),
    "offset_and_size_int64_max": (MAX_DIM, MAX_DIM, 12, (3,)),
    "offset_one_past_the_data": (1, 12, 12, (3,)),
    "size_int64_max_with_spare_bytes": (4, MAX_DIM, 24, (3,)),
    "zero_elements_offset_past_the_end": (13, 0, 12, (0,)),
    "zero_elements_size_past_the_end": (0, 13, 12, (0, 5)),
}
# each accepted by OpenVINO 2026.4
INSIDE = {
    "exact": (0, 12, 12, (3,)),
    "ends_at_the_end": (12, 12, 24, (3,)),
    "size_above_what_the_shape_needs": (0, 24, 24, (3,)),
    "zero_elements_at_the_end": (12, 0, 12, (0,)),
    "zero_elements_in_empty_weights": (0, 0, 0, (0, 3)),
}


@pytest.mark.parametrize("case", list(OUTSIDE))
def test_const_data_outside_the_weights_is_a_model_format_error(case):
    offset, size, length, shape = OUTSIDE[case]
    error = load_error(*const_model(offset, size, length, shape), kind=ModelFormatError)
    assert error.layer.name == "c" and error.layer.type_version == "Const-1"
    assert f"offset={offset} + {size} bytes lies outside the weights given as bytes ({length} bytes)" in str(error)


def test_a_size_past_the_end_hints_at_the_size_the_shape_needs():
    error = load_error(*const_model(0, 16, 12), kind=ModelFormatError)
    assert error.hint == ("the 12 bytes of f32[3] fit, but OpenVINO refuses a size that runs past the end too:"
                          ' write size="12"')
    assert "does not belong to this .xml" in load_error(*const_model(4, 12, 12), kind=ModelFormatError).hint


@pytest.mark.parametrize("case", list(INSIDE))
def test_const_data_inside_the_weights_loads(case):
    offset, size, length, shape = INSIDE[case]
    xml, weights = const_model(offset, size, length, shape)
    out = next(iter(ir_runner.load(xml, weights).run({}).values()))
    expected = np.frombuffer(weights, np.float32, count=int(np.prod(shape)), offset=offset).reshape(shape)
    np.testing.assert_array_equal(out, expected)


def test_a_zero_element_const_needs_its_weights_file_as_in_openvino(tmp_path):
    xml, _ = const_model(0, 0, 0, (0,))
    (tmp_path / "m.xml").write_bytes(xml)
    with pytest.raises(ModelFormatError, match=r"'c'.*m\.bin' does not exist"):
        ir_runner.load(tmp_path / "m.xml")
    (tmp_path / "m.bin").write_bytes(b"")
    assert next(iter(ir_runner.load(tmp_path / "m.xml").run({}).values())).shape == (0,)


def test_a_zero_element_const_of_an_xml_in_memory_without_weights_is_bounds_checked_against_nothing():
    """As OpenVINO's read_model of a model text without weights: offset + size must be 0 (no bytes given)."""
    xml, _ = const_model(0, 0, 0, (3, 0))
    assert next(iter(ir_runner.load(xml, None).run({}).values())).shape == (3, 0)
    xml, _ = const_model(13, 5, 0, (3, 0))
    for weights, what in [(None, ": no weights were given"), (b"", " lies outside the weights given as bytes")]:
        with pytest.raises(ModelFormatError, match=rf"offset=13 \+ 5 bytes{what} \(0 bytes\)"):
            ir_runner.load(xml, weights)


def test_a_weights_file_too_short_for_the_size_is_named(tmp_path):
    xml, weights = const_model(0, 16, 12)
    (tmp_path / "m.xml").write_bytes(xml)
    (tmp_path / "m.bin").write_bytes(weights)
    with pytest.raises(ModelFormatError) as caught:
        ir_runner.load(tmp_path / "m.xml")
    assert f"offset=0 + 16 bytes lies outside weights file '{tmp_path / 'm.bin'}' (12 bytes)" in str(caught.value)


@pytest.mark.parametrize("case", [*OUTSIDE, *INSIDE])
def test_ir_run_accepts_and_refuses_the_const_bounds_openvino_does(case):
    xml, weights = const_model(*{**OUTSIDE, **INSIDE}[case])
    try:
        read_with_openvino(xml, weights)
        openvino_refuses = False
    except RuntimeError as exc:
        assert "Incorrect weights in bin file" in str(exc)
        openvino_refuses = True
    try:
        ir_runner.load(xml, weights)
        ir_run_refuses = False
    except ModelFormatError:
        ir_run_refuses = True
    assert ir_run_refuses == openvino_refuses == (case in OUTSIDE)


def test_openvino_accepts_a_const_whose_element_count_overflows_and_ir_run_refuses_it():
    """OpenVINO computes the bytes a Const needs in 64-bit size_t: [2**32, 2**32] f32 wraps to 0 bytes, so it
    accepts size=0 for 2**64 elements (a Constant over no data). ir-run counts exactly and refuses it."""
    xml, weights = const_model(0, 0, 12, (2**32, 2**32))
    constant = next(op for op in read_with_openvino(xml, weights).get_ops() if op.get_type_name() == "Constant")
    assert constant.get_byte_size() == 0
    error = load_error(xml, weights, kind=ModelFormatError)
    assert "size=0 bytes is too small for f32[4294967296,4294967296]: it needs 73786976294838206464 bytes" in (
        str(error))


# -- the sizes and lists of later messages --------------------------------------------------------------------------

def test_an_output_of_more_bytes_than_a_float_holds_is_a_resource_error():
    shape = ones(17, 2**62)  # 2**1054 elements: the byte count overflows a float
    with pytest.raises(ir_runner.ResourceLimitError, match="would take more than 1 EiB") as caught:
        ir_runner.load(parameter_model(shape))
    short(caught.value)


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


def test_a_long_cycle_is_listed_briefly():
    b = IRBuilder()
    first = b.parameter("p", "f32", "2")
    chain = first
    for i in range(50):
        chain = b.convert(chain, "f32", name=f"c{i}")
    b.result(chain, "r")
    xml = b.build()[0].decode()
    # close the cycle: the first Convert (id 1) takes the last one's output (id 50, port 1), not the Parameter's
    first_edge = '<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>'
    assert first_edge in xml
    looped = xml.replace(first_edge, '<edge from-layer="50" from-port="1" to-layer="1" to-port="0"/>')
    message = short(load_error(looped.encode(), kind=ir_runner.GraphError))
    assert "the edges form a cycle" in message and "(50 layers in the cycle)" in message


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


def test_a_const_reading_bytes_of_an_xml_without_weights_says_none_were_given():
    xml, _ = const_model(13, 0, 0, (3, 0))
    with pytest.raises(ModelFormatError, match=r"offset=13 \+ 0 bytes: no weights were given \(0 bytes\)") as caught:
        ir_runner.load(xml, None)
    assert 'offset="0" size="0"' in caught.value.hint


def test_generating_an_empty_input_numpy_cannot_describe_is_an_input_error(tmp_path):
    b = IRBuilder()
    b.result(b.parameter("x", "f32", "..."))
    model = b.write(tmp_path)
    for fill in ("zeros", "random"):
        result = invoke(model, "--fill", fill, "--data-shape", f"x=[0,{MAX_DIM}]")
        assert result.exit_code == 4 and "has no elements, but its other dims multiply beyond" in result.stderr


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
