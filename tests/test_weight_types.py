"""The element types compressed weights use (u1, u2, u3, u4, u6, i4, nf4, f4e2m1, f8e8m0): read from the .bin
as OpenVINO packs them, and converted to f32, f16 and bf16 bit for bit as OpenVINO's reference Convert
(``Node.evaluate``) converts them, for every bit pattern.

Each case packs random bytes (every code present) into a Const of the type, reads them with ir-run and
converts them in both: a layout read wrongly or a value decoded wrongly shows as a different result.
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import pytest
from openvino import opset13

import ir_runner
from ir_runner.ir.weights import PackedConst
from ir_runner.ops.toolkit.convert_rules import bf16_as_openvino_rounds
from ir_runner.types import ELEMENT_TYPES, NF4_TABLE, element_type
from tests.helpers.bits import assert_same_bits
from tests.helpers.irbuild import IRBuilder

COMPRESSED = ("u1", "u2", "u3", "u4", "u6", "i4", "nf4", "f4e2m1", "f8e8m0")
DESTINATIONS = ("f32", "f16", "bf16")


def openvino_types() -> set[str]:
    """Every element type the installed OpenVINO names."""
    return {getattr(ov.Type, n).get_type_name() for n in dir(ov.Type) if isinstance(getattr(ov.Type, n), ov.Type)}


def test_every_openvino_element_type_is_known():
    missing = {n for n in openvino_types() if element_type(n) is None}
    assert not missing


def _raw(et: str, count: int, seed: int) -> bytes:
    size = ELEMENT_TYPES[et].byte_size(count)
    return np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8).tobytes()


def _openvino_convert(et: str, raw: bytes, count: int, dst: str) -> np.ndarray:
    """OpenVINO's reference Convert of ``count`` values of ``et`` held in ``raw`` (its tensor layout)."""
    tensor = ov.Tensor(getattr(ov.Type, et), ov.Shape([count]))
    assert tensor.byte_size == len(raw)
    tensor.data.view(np.uint8).reshape(-1)[...] = np.frombuffer(raw, np.uint8)
    node = opset13.convert(opset13.parameter([count], getattr(ov.Type, et)), dst)
    out = ov.Tensor(node.get_output_element_type(0), ov.Shape([0]))
    assert node.evaluate([out], [tensor])
    result = np.array(out.data, copy=True)
    return result.view(np.uint16).view(ELEMENT_TYPES["bf16"].dtype) if dst == "bf16" else result


def _ir_run_convert(et: str, raw: bytes, count: int, dst: str) -> np.ndarray:
    b = IRBuilder()
    b.result(b.convert(b.packed_const("w", raw, et, [count]), dst))
    return next(iter(ir_runner.load(*b.build()).run().values()))


def _check(et: str, raw: bytes, count: int, dst: str) -> None:
    """ir-run's Convert equals the reference's; to bf16, ir-run rounds the reference's f32 value to nearest even
    (the documented deviation: the reference's bfloat16 class rounds half up after a 1, truncates after a 0)."""
    got = _ir_run_convert(et, raw, count, dst)
    want = _openvino_convert(et, raw, count, dst)
    if dst == "bf16":
        f32 = _openvino_convert(et, raw, count, "f32")
        assert_same_bits(want, bf16_as_openvino_rounds(f32, want.dtype))
        want = f32.astype(want.dtype)
    assert_same_bits(got, want)


@pytest.mark.parametrize("dst", DESTINATIONS)
@pytest.mark.parametrize("et", COMPRESSED)
@pytest.mark.parametrize("count", [1, 5, 9, 1000])
def test_convert_matches_reference(et, dst, count):
    _check(et, _raw(et, count, seed=count), count, dst)


@pytest.mark.parametrize("dst", DESTINATIONS)
@pytest.mark.parametrize("et", ["nf4", "f4e2m1", "f8e8m0", "u2", "u3", "u6"])
def test_every_code(et, dst):
    """Every value of the type, in order (f8e8m0: all 256 bytes, NaN 0xFF and 2**-127 included)."""
    bits = ELEMENT_TYPES[et].bits
    codes = np.arange(1 << bits, dtype=np.uint8)
    if et == "f8e8m0":
        raw = codes.tobytes()
    else:
        raw = _openvino_pack(et, codes)
    _check(et, raw, codes.size, dst)


def _openvino_pack(et: str, values: np.ndarray) -> bytes:
    """The bytes OpenVINO writes for ``values`` (codes) of ``et``: a Constant saved by ``ov.save_model``."""
    constant = ov.op.Constant(getattr(ov.Type, et), ov.Shape([values.size]), values.tolist()
                              if et != "nf4" else NF4_TABLE[values].tolist())
    return bytes(np.array(constant.data, copy=True).view(np.uint8).reshape(-1))


def test_nf4_table_is_openvinos():
    raw = _openvino_pack("nf4", np.arange(16, dtype=np.uint8))
    assert_same_bits(_openvino_convert("nf4", raw, 16, "f32"), NF4_TABLE)


@pytest.mark.parametrize("et", ["u2", "u3", "u6", "nf4"])
def test_codes_are_unpacked_as_values(et):
    """The unpacked array holds the values (u2/u3/u6) or codes (nf4) in order, as OpenVINO packed them."""
    codes = np.random.default_rng(3).integers(0, 1 << ELEMENT_TYPES[et].bits, 29).astype(np.uint8)
    b = IRBuilder()
    b.result(b.packed_const("w", _openvino_pack(et, codes), et, [29]))
    got = next(iter(ir_runner.load(*b.build()).run().values()))
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, codes)


@pytest.mark.parametrize("et", ["u1", "u4", "i4", "nf4", "f4e2m1"])
def test_consts_stay_packed_until_read(et):
    """Loading leaves a bit-packed Const packed in the weights; its first read (here the run's plan) unpacks it
    once for the model: a new plan (another input shape) and the constant folder share the array."""
    count = 37
    raw = _raw(et, count, 5)
    b = IRBuilder()
    x = b.parameter("x", "f32", "?")
    weights = b.convert(b.packed_const("w", raw, et, [count]), "f32")
    b.result(b.layer("Multiply", "opset1", [x, weights], out_specs=[("FP32", [-1])]))
    model = ir_runner.load(*b.build())
    const = next(info for info in model.inference.layers.values() if info.layer.type == "Const")
    packed = const.params["value"]
    assert type(packed) is PackedConst and packed.shape == (count,)
    assert not model.graph.net.weights._unpacked  # nothing unpacked at load
    first = model.run({"x": np.ones(count, np.float32)})
    second = model.run({"x": np.ones(1, np.float32)})  # another plan, broadcast
    assert len(model.graph.net.weights._unpacked) == 1
    array = packed.array()
    assert array is packed.array() and not array.flags.writeable
    assert array is model.inference.folder.input_value(const_consumer(model, const.layer.id), 0)
    want = _openvino_convert(et, raw, count, "f32")
    assert_same_bits(next(iter(first.values())), want)
    assert_same_bits(next(iter(second.values())), want)


def const_consumer(model, layer_id: str) -> str:
    """The id of the layer reading ``layer_id``'s output."""
    return next(consumer for consumer, _ in model.graph.consumers[(layer_id, 0)])


@pytest.mark.parametrize("et,count,needed", [("u3", 1, 3), ("u3", 9, 6), ("u6", 5, 6), ("u2", 5, 2), ("nf4", 3, 2)])
def test_const_size_is_whole_groups(et, count, needed):
    """A Const needs OpenVINO's byte size: u3 and u6 take 3 bytes per group (8 and 4 values)."""
    assert ELEMENT_TYPES[et].byte_size(count) == needed == ov.Tensor(getattr(ov.Type, et), ov.Shape([count])).byte_size
    b = IRBuilder()
    b.result(b.packed_const("w", bytes(needed - 1), et, [count]))
    with pytest.raises(ir_runner.ModelFormatError, match=f"it needs {needed} bytes"):
        ir_runner.load(*b.build())


@pytest.mark.parametrize("dst", ["nf4", "f4e2m1", "f8e8m0"])
def test_convert_to_compressed_floats_is_refused(dst):
    b = IRBuilder()
    b.result(b.convert(b.parameter("x", "f32", "4"), dst))
    with pytest.raises(ir_runner.UnsupportedError, match=f"Convert from f32 to {dst} is not supported"):
        ir_runner.load(*b.build())


@pytest.mark.parametrize("et", ["u2", "u3", "u6", "nf4"])
def test_input_values_are_checked(et):
    b = IRBuilder()
    b.result(b.convert(b.parameter("x", et, "3"), "f32"))
    model = ir_runner.load(*b.build())
    limit = ELEMENT_TYPES[et].code_limit
    with pytest.raises(ir_runner.InputError, match=f"its values must be 0..{limit}, got {limit + 1}"):
        model.run({"x": np.array([0, 1, limit + 1], np.uint8)})
