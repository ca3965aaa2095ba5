"""openvino-tokenizers' StringTensorUnpack and StringTensorPack (``extension`` opset), built by its factory and
written by OpenVINO: Unpack equal to its ``Node.evaluate`` (string tensors and the legacy u8 packed strings, empty
strings, no strings, non-ASCII and invalid UTF-8), the model with Pack equal to OpenVINO's CPU plugin, shapes
inferred as OpenVINO infers them, a ``mode`` other than ``begins_ends`` and malformed packed strings refused
naming the layer. Also: the core opset15 operations, built once the extension is loaded, are written as the
extension's and read back."""

from __future__ import annotations

import re

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
tokenizers = pytest.importorskip("openvino_tokenizers")
from openvino import opset15  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, InputError, ModelFormatError  # noqa: E402
from tests.helpers.cpu_oracle import assert_same_values, cpu_outputs  # noqa: E402
from tests.helpers.node_eval import evaluate_tensors, from_tensor  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, write_ir  # noqa: E402
from tests.ops.test_strings import retype  # noqa: E402

TEXTS = ["", "Intel", "e\u0301", "😀👍🏽", "漢字", "שלום", "a\tb", "z" * 300]
RAW = [b"ab\xffd", b"", b"\xe4\xb8", b"a\x00b", "é".encode()]


@pytest.fixture(scope="module")
def factory():
    return tokenizers._get_factory()


def _unpack(factory, source, mode: str = "begins_ends"):
    return factory.create("StringTensorUnpack", [source.output(0)], {"mode": mode})


def _pack(factory, outputs, mode: str = "begins_ends"):
    return factory.create("StringTensorPack", list(outputs), {"mode": mode})


def packed(items: list[bytes], first: int = 0, prefix: bytes = b"", tail: bytes = b"") -> np.ndarray:
    """The legacy packed strings of ``items``: count, offsets (from ``first``), ``prefix``, the bytes, ``tail``."""
    offsets = np.concatenate([[first], first + np.cumsum([len(x) for x in items], dtype=np.int64)]).astype("<i4")
    raw = np.array([len(items)], "<i4").tobytes() + offsets.tobytes() + prefix + b"".join(items) + tail
    return np.frombuffer(raw, np.uint8).copy()


def _model(factory, tmp_path, data: ov.Node):
    """Unpack -> Pack of the Parameter ``data``, written by OpenVINO: its path and the Unpack node."""
    unpack = _unpack(factory, data)
    xml = write_ir([_pack(factory, unpack.outputs()), *unpack.outputs()], [data], tmp_path)
    assert len(re.findall(r'type="StringTensor(?:Unpack|Pack)" version="extension"', xml.read_text())) == 2
    return xml, unpack


def _check_unpack(xml, unpack, array: np.ndarray) -> dict[str, np.ndarray]:
    """ir-run's outputs of the model; its Unpack outputs equal to the extension's ``Node.evaluate``."""
    got = ir_runner.load(str(xml)).run(data=array)
    want = [from_tensor(t) for t in evaluate_tensors(unpack, [ov.Tensor(array)])]
    for value, expected in zip(list(got.values())[1:], want):
        assert value.dtype == expected.dtype and value.tolist() == expected.tolist()
    return got


@pytest.mark.parametrize("array", [np.array(TEXTS), np.array(TEXTS).reshape(2, 2, 2), np.array("one ☃"),
                                   np.array(["", ""]), np.array([], dtype=str)],
                         ids=["1d", "3d", "rank0", "empties", "no-elements"])
def test_string_tensors_as_openvino_tokenizers(factory, array, tmp_path):
    data = opset15.parameter(ov.PartialShape([-1] * array.ndim), ov.Type.string, name="data")
    xml, unpack = _model(factory, tmp_path, data)
    check_inference(xml)
    got = _check_unpack(xml, unpack, array)
    assert list(got.values())[0].tolist() == array.tolist()
    if array.size:  # (the CPU plugin fails on no strings, as for the core operations)
        assert_same_values(got, cpu_outputs(xml, {"data": array}))


@pytest.mark.parametrize("array", [
    packed([t.encode() for t in TEXTS]), packed(RAW), packed([b"", b"", b""]), packed([]),
    packed([b"xy", b"z"], first=2, prefix=b"qq", tail=b"ignored"),
], ids=["texts", "invalid-utf8", "empties", "no-strings", "offset-and-tail"])
def test_legacy_packed_strings_as_openvino_tokenizers(factory, array, tmp_path):
    """Begins and ends are the offsets as written; symbols the bytes up to the last offset (from the first
    byte after the offsets, even when the first offset is not 0)."""
    data = opset15.parameter([-1], ov.Type.u8, name="data")
    xml, unpack = _model(factory, tmp_path, data)
    check_inference(xml)
    got = _check_unpack(xml, unpack, array)
    if list(got.values())[1].size:  # (the CPU plugin fails on no strings)
        assert_same_values(got, cpu_outputs(xml, {"data": array}))


def test_legacy_packed_strings_read_as_written(factory, tmp_path):
    data = opset15.parameter([-1], ov.Type.u8, name="data")
    xml, _ = _model(factory, tmp_path, data)
    strings, begins, ends, symbols = ir_runner.load(str(xml)).run(
        data=packed([b"xy", b"", "é".encode()], first=2, prefix=b"qq", tail=b"!")).values()
    assert strings.tolist() == ["xy", "", "é"]
    assert begins.tolist() == [2, 4, 4] and ends.tolist() == [4, 4, 6] and symbols.tobytes() == "qqxyé".encode()


@pytest.mark.parametrize(("element_type", "shape"), [
    (ov.Type.string, [2, 3]), (ov.Type.string, [-1]), (ov.Type.string, []),
    (ov.Type.string, ov.PartialShape.dynamic()), (ov.Type.string, [ov.Dimension(1, 4), 2]),
    (ov.Type.u8, [10]), (ov.Type.u8, [-1]), (ov.Type.u8, ov.PartialShape.dynamic()), (ov.Type.dynamic, [3]),
], ids=["static", "dynamic-dim", "rank0", "dynamic-rank", "bounded", "u8-static", "u8-dynamic", "u8-dynamic-rank",
        "dynamic-type"])
def test_unpack_shapes_as_openvino(factory, element_type, shape, tmp_path):
    """Symbols is always [?] (the core operation's is static for constant strings); u8 gives [?] outputs, an
    input of dynamic element type outputs of dynamic rank."""
    data = opset15.parameter(shape, element_type, name="data")
    node = _unpack(factory, data)
    check_output_shapes(write_ir(node.outputs(), [data], tmp_path), node)


def test_unpack_of_constant_strings_keeps_symbols_dynamic(factory, tmp_path):
    node = _unpack(factory, opset15.constant(ov.Tensor(np.array([["ab", "c"], ["", "déf😀"]]))))
    x = opset15.parameter([1], np.float32, name="x")
    xml = write_ir([*node.outputs(), x], [x], tmp_path)
    assert [str(i.partial_shape) for i in ir_runner.load(str(xml)).outputs[:3]] == ["[2,2]", "[2,2]", "[?]"]
    check_inference(xml)


@pytest.mark.parametrize("index_type", [np.int32, np.int64])
def test_pack_reads_overlapping_ranges_as_openvino_tokenizers(factory, index_type, tmp_path):
    params = [opset15.parameter([2, -1], index_type, name="begins"), opset15.parameter([2, -1], index_type,
                                                                                          name="ends"),
              opset15.parameter([-1], np.uint8, name="symbols")]
    node = _pack(factory, [p.output(0) for p in params])
    xml = write_ir([node], params, tmp_path)
    check_output_shapes(xml, node)
    feeds = {"begins": np.array([[0, 0, 2], [5, 6, 9]], index_type), "ends": np.array([[2, 5, 5], [7, 9, 14]],
                                                                                     index_type),
             "symbols": np.frombuffer("Intel😀a".encode() + b"\xff\xfe\xff\xfd", np.uint8).copy()}
    assert_same_values(ir_runner.load(str(xml)).run(feeds), cpu_outputs(xml, feeds))


@pytest.mark.parametrize("op", ["StringTensorUnpack", "StringTensorPack"])
def test_a_mode_other_than_begins_ends_is_refused_naming_the_layer(factory, op, tmp_path):
    """OpenVINO refuses it when building the node; an IR written with it (patched here) is refused at load."""
    data = opset15.parameter([-1], ov.Type.string, name="data")
    unpack = _unpack(factory, data)
    node = unpack if op == "StringTensorUnpack" else _pack(factory, unpack.outputs())
    node.set_friendly_name("strings")
    with pytest.raises(Exception, match="only 'begins_ends' mode"):
        _unpack(factory, data, mode="ragged")
    xml = write_ir(node.outputs(), [data], tmp_path)
    text = xml.read_text()
    layer = re.search(r'<layer id="\d+" name="strings".*?</layer>', text, re.S).group(0)
    xml.write_text(text.replace(layer, layer.replace('mode="begins_ends"', 'mode="Begins_Ends"')))
    with pytest.raises(ModelFormatError, match=r"'strings' \(" + op + r"-1, id .*mode='Begins_Ends'.*only"
                                               r" 'begins_ends'"):
        ir_runner.load(str(xml))


@pytest.mark.parametrize(("array", "match"), [
    (np.zeros(3, np.uint8), r"3 bytes cannot hold their count"),
    (np.frombuffer(np.array([-1, 0], "<i4").tobytes(), np.uint8), r"declare a count of -1"),
    (packed([b"ab", b"c"])[:14], r"14 bytes cannot hold their count and 3 offsets \(16 bytes\)"),
    (packed([b"ab", b"c"])[:18], r"end at offset 3, outside their 2 bytes"),
    (np.frombuffer(np.array([1, 0, -2], "<i4").tobytes(), np.uint8), r"end at offset -2, outside their 0 bytes"),
], ids=["no-count", "negative-count", "short-offsets", "short-bytes", "negative-end"])
def test_malformed_packed_strings_are_refused_naming_the_layer(factory, array, match, tmp_path):
    data = opset15.parameter([-1], ov.Type.u8, name="data")
    node = _unpack(factory, data)
    node.set_friendly_name("unpack")
    model = ir_runner.load(str(write_ir(node.outputs(), [data], tmp_path)))
    with pytest.raises(InputError, match=match) as info:
        model.run(data=array)
    assert "'unpack' (StringTensorUnpack-1" in str(info.value)


@pytest.mark.parametrize(("element_type", "shape", "match"), [
    ("u8", [2, 4], r"u8 data \(legacy packed strings\) must be 1-D, got \[2,4\]"),
    ("i32", None, r"data must be a string tensor or u8 packed strings, got i32"),
])
def test_unpack_refuses_other_inputs_at_load(factory, element_type, shape, match, tmp_path):
    data = opset15.parameter([8], ov.Type.u8, name="data")
    xml = write_ir(_unpack(factory, data).outputs(), [data], tmp_path)
    retype(xml, "data", element_type, shape)
    with pytest.raises(InferenceError, match=r"StringTensorUnpack-1.*" + match):
        ir_runner.load(str(xml))


def test_core_operations_built_with_the_extension_loaded_are_written_as_its_own(factory, tmp_path):
    """Once the extension is loaded in a process, OpenVINO writes opset15's string operations as the
    extension's (the IRs of users who had openvino_tokenizers imported): ir-run reads and runs them."""
    text = opset15.parameter([-1], ov.Type.string, name="text")
    xml = write_ir([opset15.string_tensor_pack(*opset15.string_tensor_unpack(text).outputs())], [text], tmp_path)
    assert 'type="StringTensorUnpack" version="extension"' in xml.read_text()
    check_inference(xml)
    array = np.array(TEXTS)
    assert_same_values(ir_runner.load(str(xml)).run(text=array), cpu_outputs(xml, {"text": array}))
