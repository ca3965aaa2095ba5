"""StringTensorUnpack-15 and StringTensorPack-15: values equal to OpenVINO's CPU plugin (its reference has no
evaluate for them), Unpack -> Pack the identity, shapes inferred as OpenVINO's Python API infers them (constant
strings give a static symbols length), bad types and shapes refused at load and bad ranges at run time, naming
the layer."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from lxml import etree

ov = pytest.importorskip("openvino")
from openvino import opset15  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import IndexOutOfRangeError, InferenceError  # noqa: E402
from tests.helpers.cpu_oracle import assert_same_values, cpu_outputs  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, write_ir  # noqa: E402

TEXTS = ["", "Intel", "e\u0301", "😀👍🏽", "漢字", "שלום", "a\tb", "z" * 300]


def write_core_ir(outputs, parameters, directory: Path) -> Path:
    """``write_ir`` with the string operations as opset15's. Once a test of the process has loaded
    openvino-tokenizers' extension (tests/ops/test_string_extension.py, tests/test_tokenizers.py), OpenVINO
    writes them as the extension's versions, whose inference differs (Unpack's symbols is always [?]); the
    subject here is the core operations, whatever ran before."""
    xml = write_ir(outputs, parameters, directory)
    xml.write_text(re.sub(r'(type="StringTensor(?:Unpack|Pack)") version="extension">\s*<data mode="begins_ends" />',
                          r'\1 version="opset15">', xml.read_text()))
    return xml


@pytest.mark.parametrize("array", [np.array(TEXTS), np.array(TEXTS).reshape(2, 2, 2), np.array("one ☃"),
                                   np.array(["", ""]), np.array([], dtype=str)],
                         ids=["1d", "3d", "rank0", "empties", "no-elements"])
def test_unpack_then_pack_is_the_identity_as_on_the_cpu_plugin(array, tmp_path):
    text = opset15.parameter(ov.PartialShape([-1] * array.ndim), ov.Type.string, name="text")
    unpack = opset15.string_tensor_unpack(text)
    pack = opset15.string_tensor_pack(*unpack.outputs())
    xml = write_core_ir([pack, *unpack.outputs()], [text], tmp_path)
    check_inference(xml)
    got = ir_runner.load(str(xml)).run(text=array)
    if array.size:  # (OpenVINO's CPU plugin fails on no strings: "Cannot get dims for non static shape")
        assert_same_values(got, cpu_outputs(xml, {"text": array}))
    else:
        assert [v.shape for v in got.values()] == [(0,)] * 4
    assert list(got.values())[0].tolist() == array.tolist()


@pytest.mark.parametrize("index_type", [np.int32, np.int64])
def test_pack_reads_overlapping_and_partial_ranges_as_the_cpu_plugin(index_type, tmp_path):
    begins = opset15.parameter([2, -1], index_type, name="begins")
    ends = opset15.parameter([2, -1], index_type, name="ends")
    symbols = opset15.parameter([-1], np.uint8, name="symbols")
    xml = write_core_ir([opset15.string_tensor_pack(begins, ends, symbols)], [begins, ends, symbols], tmp_path)
    check_inference(xml)
    feeds = {"begins": np.array([[0, 0, 2], [5, 6, 9]], index_type),  # overlapping, empty, cutting an emoji
             "ends": np.array([[2, 5, 5], [7, 9, 14]], index_type),
             "symbols": np.frombuffer("Intel😀a\xff".encode() + b"\xff\xfe", np.uint8)}
    got = ir_runner.load(str(xml)).run(feeds)
    assert_same_values(got, cpu_outputs(xml, feeds))


@pytest.mark.parametrize(("begins", "ends", "match"), [
    ([0, 3], [2, 1], r"ends must be in ascending order, got 2 then 1"),
    ([1, 0], [2, 3], r"begins must be in ascending order"),
    ([0, 1], [2, 5], r"ends reach 5, beyond the 4 bytes"),
    ([-1, 0], [2, 3], r"begins must not be negative"),
    ([2, 2], [1, 3], r"string 0 begins at 2 after its end 1"),
])
def test_pack_refuses_bad_ranges_at_run_time_and_constant_ones_at_load(begins, ends, match, tmp_path):
    params = [opset15.parameter([2], np.int32, name="begins"), opset15.parameter([2], np.int32, name="ends"),
              opset15.parameter([-1], np.uint8, name="symbols")]
    node = opset15.string_tensor_pack(*params)
    node.set_friendly_name("pack")
    model = ir_runner.load(str(write_core_ir([node], params, tmp_path)))
    with pytest.raises(IndexOutOfRangeError, match=match) as info:
        model.run(begins=np.array(begins, np.int32), ends=np.array(ends, np.int32),
                  symbols=np.frombuffer(b"abcd", np.uint8))
    assert "'pack' (StringTensorPack-15" in str(info.value)
    # the same ranges as Consts (OpenVINO's Python API refuses to build them: written valid, then patched)
    good = np.array([0, 1], np.int32), np.array([3, 4], np.int32)
    consts = [opset15.constant(good[0]), opset15.constant(good[1]), opset15.constant(np.frombuffer(b"abcd", np.uint8))]
    x = opset15.parameter([1], np.float32, name="x")
    xml = write_core_ir([opset15.string_tensor_pack(*consts), x], [x], tmp_path / "constant")
    weights = xml.with_suffix(".bin").read_bytes()
    for valid, bad in zip(good, (begins, ends)):
        assert weights.count(valid.tobytes()) == 1
        weights = weights.replace(valid.tobytes(), np.array(bad, np.int32).tobytes())
    xml.with_suffix(".bin").write_bytes(weights)
    with pytest.raises(InferenceError, match=match):
        ir_runner.load(str(xml))


@pytest.mark.parametrize("shape", [[2, 3], [-1], [], ov.PartialShape.dynamic(), [ov.Dimension(1, 4), 2]],
                         ids=["static", "dynamic-dim", "rank0", "dynamic-rank", "bounded"])
def test_unpack_shapes_as_openvino(shape, tmp_path):
    text = opset15.parameter(shape, ov.Type.string, name="text")
    node = opset15.string_tensor_unpack(text)
    check_output_shapes(write_core_ir(node.outputs(), [text], tmp_path), node)


def test_unpack_of_constant_strings_has_a_static_symbols_length(tmp_path):
    """(OpenVINO builds the model in a process of its own: once openvino-tokenizers' extension is loaded, its
    Python API builds the extension's Unpack, whose symbols is [?], for ``opset15.string_tensor_unpack``.)"""
    script = f"""if True:
        import json, numpy as np, openvino as ov
        from openvino import opset15
        from tests.helpers.optest import write_ir
        node = opset15.string_tensor_unpack(opset15.constant(ov.Tensor(np.array([["ab", "c"], ["", "déf😀"]]))))
        x = opset15.parameter([1], np.float32, name="x")
        write_ir([*node.outputs(), x], [x], {str(tmp_path)!r})
        print(json.dumps([str(node.get_output_partial_shape(i)).replace(" ", "") for i in range(3)]))"""
    made = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).parents[2])
    want = json.loads(made.stdout.splitlines()[-1])
    xml = tmp_path / "model.xml"
    model = ir_runner.load(str(xml))
    assert [str(i.partial_shape) for i in model.outputs[:3]] == want == ["[2,2]", "[2,2]", "[11]"]
    check_inference(xml)


@pytest.mark.parametrize(("shapes", "types"), [
    (([2, 3], [2, 3], [-1]), (np.int32, np.int32)),
    (([2, -1], [-1, 3], [10]), (np.int64, np.int64)),
    ((ov.PartialShape.dynamic(), [2, -1], ov.PartialShape.dynamic()), (np.int32, np.int32)),
    (([], [], [4]), (np.int64, np.int64)),
], ids=["static", "merged", "dynamic-rank", "rank0"])
def test_pack_shapes_as_openvino(shapes, types, tmp_path):
    params = [opset15.parameter(shapes[0], types[0], name="b"), opset15.parameter(shapes[1], types[1], name="e"),
              opset15.parameter(shapes[2], np.uint8, name="s")]
    node = opset15.string_tensor_pack(*params)
    check_output_shapes(write_core_ir([node], params, tmp_path), node)


def retype(xml, name: str, element_type: str, shape: list[int] | None = None) -> None:
    """Give the Parameter ``name`` another element type (and shape), its port and its consumers' declaring it."""
    root = etree.parse(str(xml)).getroot()
    layer = root.find(f".//layer[@name='{name}']")
    layer.find("data").set("element_type", element_type)
    if shape is not None:
        layer.find("data").set("shape", ",".join(map(str, shape)))
    ports = [layer.find("output/port")]
    for edge in root.findall(f".//edge[@from-layer='{layer.get('id')}']"):
        ports.append(root.find(f".//layer[@id='{edge.get('to-layer')}']/input/port[@id='{edge.get('to-port')}']"))
    for port in ports:
        port.set("precision", element_type.upper())
        if shape is not None:
            for dim in port.findall("dim"):
                port.remove(dim)
            for n in shape:
                etree.SubElement(port, "dim").text = str(n)
    xml.write_bytes(etree.tostring(root))


def pack_model(tmp_path):
    params = [opset15.parameter([2], np.int32, name="begins"), opset15.parameter([2], np.int32, name="ends"),
              opset15.parameter([4], np.uint8, name="symbols")]
    return write_core_ir([opset15.string_tensor_pack(*params)], params, tmp_path)


@pytest.mark.parametrize(("changes", "match"), [
    ({"begins": "f32", "ends": "f32"}, r"same element type, i32 or i64, got f32 and f32"),
    ({"begins": "i64"}, r"same element type, i32 or i64, got i64 and i32"),
    ({"symbols": "i8"}, r"symbols must be u8, got i8"),
])
def test_pack_refuses_bad_types(changes, match, tmp_path):
    xml = pack_model(tmp_path)
    for name, element_type in changes.items():
        retype(xml, name, element_type)
    with pytest.raises(InferenceError, match=match) as info:
        ir_runner.load(str(xml))
    assert "StringTensorPack-15" in str(info.value)


def test_pack_refuses_2d_symbols(tmp_path):
    xml = pack_model(tmp_path)
    retype(xml, "symbols", "u8", [4, 1])
    with pytest.raises(InferenceError, match=r"symbols must be 1-D, got \[4,1\]"):
        ir_runner.load(str(xml))


def test_unpack_refuses_numbers(tmp_path):
    text = opset15.parameter([2], ov.Type.string, name="text")
    xml = write_core_ir(opset15.string_tensor_unpack(text).outputs(), [text], tmp_path)
    retype(xml, "text", "i32")
    with pytest.raises(InferenceError, match=r"StringTensorUnpack-15.*data must be a string tensor, got i32"):
        ir_runner.load(str(xml))
