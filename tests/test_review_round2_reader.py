"""Regression tests for the second review of the reader: numbers too large for int() or numpy end in a
ModelFormatError naming the layer and port, and the sub-graph error names its layer like every other error."""

import os
import re

import numpy as np
import pytest

import ir_runner
from ir_runner import ModelFormatError, UnsupportedError
from ir_runner.errors import LayerRef
from ir_runner.ops.registry import opset_number
from ir_runner.ops.select import bit_select, bit_select_broadcast
from ir_runner.parallel import worker_count
from ir_runner.report import error_entry
from ir_runner.types import ELEMENT_TYPES, MAX_DIM, Dim, decimal_int, parse_dim, parse_partial_shape
from tests.helpers.bits import same_bits
from tests.helpers.irbuild import IRBuilder

HUGE = "1" * 5000  # beyond the 4300 digits Python's int() accepts


def const_model(shape: str) -> tuple[bytes, bytes]:
    """A Const 'c' with the shape attribute ``shape`` (no elements in the .bin) feeding a Result; its ports
    declare the dims when they fit in an int64, else dynamic dims."""
    b = IRBuilder()
    c = b.const("c", np.zeros(0, np.float32))
    c.attrs["shape"] = shape
    c.out_specs[0] = ("FP32", [int(d) if len(d) < 19 else -1 for d in shape.split(",")])
    b.result(c)
    return b.build()


def convert_model(version: str = "opset1", net_version: str = "11") -> tuple[bytes, bytes]:
    b = IRBuilder(version=net_version)
    p = b.parameter("p", "f32", "2")
    b.result(b.layer("Convert", version, [p], attrs={"destination_type": "f16"}, out_specs=[("FP16", [2])],
                     name="conv"))
    return b.build()


def assert_names_const(error: ModelFormatError) -> None:
    assert error.layer is not None and (error.layer.name, error.layer.type_version) == ("c", "Const-1")


@pytest.mark.parametrize("shape", ["0,18446744073709551616", "0,4611686018427387904,4", "4611686018427387904,0,2",
                                   "0,9223372036854775807,2", f"0,{HUGE}"])
def test_empty_const_with_dims_numpy_cannot_hold_names_the_layer(shape):
    xml, weights = const_model(shape)
    with pytest.raises(ModelFormatError) as caught:
        ir_runner.load(xml, weights)
    assert_names_const(caught.value)
    assert len(str(caught.value)) < 400 + len(shape)  # no Python int-parsing message
    report = ir_runner.validate(xml, weights)
    assert not report.ok and isinstance(report.errors[0], ModelFormatError)


def test_empty_const_with_a_large_but_possible_shape_still_loads():
    xml, weights = const_model(f"0,{2**60}")  # 2**62 bytes per row of f32: numpy can describe it
    model = ir_runner.load(xml, weights)
    assert model.run({})[model.outputs[0].name].shape == (0, 2**60)


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


@pytest.mark.parametrize(("text", "bound", "value"), [
    ("0", 1, 0), ("12", 2, 12), ("123", 2, None), (HUGE, 4, None), (HUGE, 4300, None), ("", 3, None),
    ("+1", 3, None), ("-1", 3, None), (" 1", 3, None), ("1 ", 3, None), ("1_0", 4, None), ("١", 3, None),
    ("²", 3, None),
])
def test_decimal_int(text, bound, value):
    assert decimal_int(text, bound) == value


@pytest.mark.parametrize(("configured", "expected"), [("3", 3), ("1", 1), (HUGE, None), ("0", None), ("-2", None),
                                                     (" 3", None), ("", None)])
def test_worker_count_ignores_values_it_cannot_read(monkeypatch, configured, expected):
    monkeypatch.setenv("IR_RUN_THREADS", configured)
    cores = len(os.sched_getaffinity(0))
    assert worker_count() == (cores if expected is None else expected)


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


@pytest.mark.parametrize("name", sorted(n for n, t in ELEMENT_TYPES.items() if t.dtype is not None))
def test_bit_selects_handle_every_ir_element_type(name):
    """The bit-selects view every IR element type as a same-width unsigned integer (no fallback needed)."""
    dtype = ELEMENT_TYPES[name].dtype
    rng = np.random.default_rng(7)
    then, else_ = (rng.integers(0, 256, (4, 8 * dtype.itemsize), np.uint8).view(dtype) for _ in range(2))
    cond = rng.integers(0, 3, then.shape, np.uint8).view(np.bool_)
    want = np.where(cond, then, else_)
    assert same_bits(bit_select(cond, then, else_), want)
    row_cond = cond[:, :1]
    assert same_bits(bit_select_broadcast(row_cond, then, else_[:1], then.shape), np.where(row_cond, then, else_[:1]))
