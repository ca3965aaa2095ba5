"""A Const's data read from the weights: its raw bytes kept (a boolean Const's bytes 2 and 255 included), any
buffer accepted (a non-contiguous memoryview), and its offset + size within the .bin as OpenVINO requires (it
refuses the same models; the one model it accepts and ir-run refuses is documented below)."""

from __future__ import annotations

import numpy as np
import pytest

import ir_runner
from ir_runner import ModelFormatError
from ir_runner.types import MAX_DIM
from tests.helpers.irbuild import IRBuilder, read_with_openvino
from tests.helpers.limits import load_error


def boolean_const_convert_model() -> tuple[bytes, bytes]:
    b = IRBuilder("boolconst")
    flags = b.const("flags", np.array([1, 2, 255], np.uint8).view(np.bool_))
    b.result(b.convert(flags, "i32"), "out")
    return b.build()


def test_boolean_const_bytes_convert_as_signed_chars():
    """OpenVINO keeps a boolean Const's raw bytes: Convert to i32 reads 2 and 255 as 2 and -1."""
    xml, weights = boolean_const_convert_model()
    out = ir_runner.load(xml, weights).run({})["out"]
    assert out.tolist() == [1, 2, -1]


def test_non_contiguous_memoryview_weights():
    xml, weights = boolean_const_convert_model()
    padded = np.zeros(len(weights) * 2, np.uint8)
    padded[::2] = np.frombuffer(weights, np.uint8)
    out = ir_runner.load(xml, memoryview(padded[::2])).run({})["out"]
    assert out.tolist() == [1, 2, -1]


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


def test_a_const_reading_bytes_of_an_xml_without_weights_says_none_were_given():
    xml, _ = const_model(13, 0, 0, (3, 0))
    with pytest.raises(ModelFormatError, match=r"offset=13 \+ 0 bytes: no weights were given \(0 bytes\)") as caught:
        ir_runner.load(xml, None)
    assert 'offset="0" size="0"' in caught.value.hint
