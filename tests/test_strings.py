"""String tensors end to end: string Consts read from OpenVINO's packed .bin layout (count, offsets, bytes),
string Parameters bound from str/bytes arrays, string Results returned as numpy str arrays as OpenVINO's Python
API returns them; compared with OpenVINO's CPU plugin on models its Python API writes. Hostile .bin layouts are a
ModelFormatError naming the layer; non-text feeds an InputError; the CLI reads and writes text."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset15  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner import strings  # noqa: E402
from ir_runner.errors import InputError, ModelFormatError  # noqa: E402
from tests.cli.clikit import invoke  # noqa: E402
from tests.helpers.cpu_oracle import assert_same_values, cpu_outputs  # noqa: E402
from tests.helpers.optest import check_inference, write_ir  # noqa: E402

TEXTS = ["", "a", "e\u0301 n\u0303", "😀👍🏽", "漢字かな", "שלום", "tab\tnew\nline", "x" * 100]
MEGABYTE = "ab€" * (1 << 18)  # 1,310,720 bytes of UTF-8 (5 bytes a repeat)


def const(array: np.ndarray):
    return opset15.constant(ov.Tensor(array))  # (a numpy str array given directly crashes the Python API)


@pytest.mark.parametrize("array", [
    np.array(TEXTS),
    np.array(TEXTS).reshape(2, 4),
    np.array("rank 0 ☃"),
    np.array([""]),
    np.array([], dtype=str).reshape(0, 3),
    np.array([MEGABYTE, "", "z"]),
], ids=["1d", "2d", "rank0", "one-empty", "no-elements", "megabyte"])
def test_const_parameter_result_round_trip_as_openvino(array, tmp_path):
    text = opset15.parameter(ov.PartialShape([-1] * array.ndim), ov.Type.string, name="text")
    xml = write_ir([const(array), text], [text], tmp_path)
    check_inference(xml)
    model = ir_runner.load(str(xml))
    assert [str(i.element_type) for i in model.inputs + model.outputs] == ["string"] * 3
    got = model.run(text=array)
    assert_same_values(got, cpu_outputs(xml, {"text": array}))
    assert got[model.outputs[0].name].tolist() == array.tolist()


def test_packed_layout_is_openvinos(tmp_path):
    array = np.array(["a", "bc", "", "é"])
    xml = write_ir([const(array)], [opset15.parameter([1], ov.Type.f32, name="x")], tmp_path)
    raw = xml.with_suffix(".bin").read_bytes()
    assert raw == strings.encode_const(array)
    assert raw[:4] == struct.pack("<i", 4) and raw[4:24] == struct.pack("<5i", 0, 1, 3, 3, 5)


def _const_model(tmp_path, array: np.ndarray):
    xml = write_ir([const(array)], [opset15.parameter([1], ov.Type.f32, name="x")], tmp_path)
    return xml, xml.with_suffix(".bin")


def _header(count: int, offsets: list[int]) -> bytes:
    return struct.pack(f"<i{len(offsets)}i", count, *offsets)


@pytest.mark.parametrize(("raw", "match"), [
    (_header(3, [0, 1, 3, 3]) + b"abc", r"declare 3 elements, the shape has 2"),
    (_header(2, [0, 5, 3]) + b"abc", r"offset 1 is 5"),
    (_header(2, [0, 1, 9]) + b"abc", r"offset 2 is 9.*3 bytes of text"),
    (_header(2, [-4, 1, 3]) + b"abc", r"offset 0 is -4"),
    (_header(2, [0, 1, 2**31 - 1]) + b"abc", r"offset 2 is 2147483647"),
    (_header(-1, [0, 1, 3]) + b"abc", r"declare -1 elements"),
    (_header(2, [0, 1]) + b"\0\0", r"cannot hold the count and 3 offsets"),
    (b"\2\0", r"cannot hold the element count"),
], ids=["count", "decreasing", "past-end", "negative", "huge", "negative-count", "short-header", "tiny"])
def test_hostile_offsets_are_a_format_error_naming_the_layer(raw, match, tmp_path):
    xml, bin_path = _const_model(tmp_path, np.array(["a", "bc"]))
    text = xml.read_text()
    size = len(strings.encode_const(np.array(["a", "bc"])))
    xml.write_text(text.replace(f'size="{size}"', f'size="{len(raw)}"'))
    bin_path.write_bytes(raw)
    with pytest.raises(ModelFormatError, match=match) as info:
        ir_runner.load(str(xml))
    assert "Const-1" in str(info.value) and "string[2]" in str(info.value)


def test_a_bin_shorter_than_the_const_is_a_format_error(tmp_path):
    xml, bin_path = _const_model(tmp_path, np.array(["a", "bc"]))
    bin_path.write_bytes(bin_path.read_bytes()[:-1])
    with pytest.raises(ModelFormatError, match=r"Const-1.*lies outside"):
        ir_runner.load(str(xml))


def test_strings_are_decoded_to_str_and_invalid_utf8_replaced_as_openvino(tmp_path):
    text = opset15.parameter([-1], ov.Type.string, name="text")
    xml = write_ir([text], [text], tmp_path)
    model = ir_runner.load(str(xml))
    raw = np.array([b"ab\xffd", "é".encode(), b"", b"\xe4\xb8", b"\xed\xa0\x80x", b"\xf0\x9f\x98!", b"\xc0\xaf",
                    b"\xf4\x90\x80\x80", b"a\x00b"])
    got = model.run(text=raw)
    assert_same_values(got, cpu_outputs(xml, {"text": raw}))
    assert got["text"].tolist()[:3] == ["ab\ufffdd", "é", ""]
    mixed = np.array(["x", b"y\xc3\xa9"], dtype=object)
    assert model.run(text=mixed)["text"].tolist() == ["x", "yé"]
    assert model.run(text=["p", "q"])["text"].tolist() == ["p", "q"]


@pytest.mark.parametrize("value", [np.array([1, 2]), np.array([1.5]), np.array(["a", 3], dtype=object), [1, 2],
                                   np.array([True])])
def test_non_text_feeds_are_refused(value, tmp_path):
    text = opset15.parameter([-1], ov.Type.string, name="text")
    model = ir_runner.load(str(write_ir([text], [text], tmp_path)))
    with pytest.raises(InputError, match=r"input 'text' has element type string"):
        model.run(text=value)
    with pytest.raises(InputError, match=r"input 'text' has element type string"):
        model.run(text=value, cast="unsafe")


def test_string_feed_shape_checked_and_out_buffers_refused(tmp_path):
    text = opset15.parameter([2], ov.Type.string, name="text")
    model = ir_runner.load(str(write_ir([text], [text], tmp_path)))
    with pytest.raises(InputError, match=r"expects shape \[2\], got \[3\]"):
        model.run(text=np.array(["a", "b", "c"]))
    with pytest.raises(InputError, match=r"string tensor: out= cannot hold"):
        model.run(text=np.array(["a", "b"]), out=[np.empty(2, dtype=object)])


def test_number_feed_for_a_number_input_is_not_text(tmp_path):
    x = opset15.parameter([2], ov.Type.f32, name="x")
    model = ir_runner.load(str(write_ir([opset15.negative(x)], [x], tmp_path)))
    with pytest.raises(InputError, match=r"dtype <U1, which is not an IR element type"):
        model.run(x=np.array(["a", "b"]))


def test_cli_value_npy_inspect_and_saved_outputs(tmp_path):
    text = opset15.parameter([-1], ov.Type.string, name="text")
    xml = write_ir([text, const(np.array(["", "漢"]))], [text], tmp_path)
    shown = invoke("inspect", xml)
    assert shown.exit_code == 0 and "string[?]" in shown.output and "['', '漢']" in shown.output
    assert invoke("validate", xml).exit_code == 0
    out = tmp_path / "out.npz"
    result = invoke("run", xml, "--value", 'text=["a", "ü😀"]', "-o", out)
    assert result.exit_code == 0, result.output
    saved = np.load(out, allow_pickle=False)
    assert saved["text"].tolist() == ["a", "ü😀"] and saved["text"].dtype.kind == "U"
    npy = tmp_path / "in.npy"
    np.save(npy, np.array([b"x", b"yz"]))
    result = invoke("--json", "run", xml, "--input", f"text={npy}")
    assert result.exit_code == 0, result.output
    assert '"x"' in result.output and '"yz"' in result.output
    refused = invoke("run", xml, "--value", "text=[1, 2]")
    assert refused.exit_code != 0 and "holds numbers or booleans" in refused.output
    for mixed in ('["a", 1]', '[[true, "a"]]', '["a", 1.5]'):  # (numpy alone makes strings of them: '1', 'True')
        refused = invoke("run", xml, "--value", f"text={mixed}")
        assert refused.exit_code == 4 and "mixes strings with numbers or booleans" in refused.output
    refused = invoke("run", xml, "--input", "text=random", "--data-shape", "text=[2]")
    assert refused.exit_code != 0 and "give its data in a file or with --value" in refused.output


def test_cli_string_values_keep_a_trailing_nul(tmp_path):
    """--value and .json strings reach the model whole: a numpy str array would drop a trailing NUL."""
    text = opset15.parameter([-1], ov.Type.string, name="text")
    ends = opset15.string_tensor_unpack(text).output(1)
    xml = write_ir([ends], [text], tmp_path)
    source = tmp_path / "text.json"
    source.write_text('{"text": ["a\\u0000", "\\u0000"]}')
    for args in (["--value", 'text=["a\\u0000", "\\u0000"]'], ["--input", source]):
        result = invoke("--json", "run", xml, *args)
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["outputs"][0]["values"] == [2, 3]  # (without the NULs: [1, 1])


@pytest.mark.parametrize("make", [
    lambda t: opset15.gather(t, opset15.constant(np.array([1, 0, 1], np.int64)), opset15.constant(np.int64(0))),
    lambda t: opset15.concat([t, t], 1),
    lambda t: opset15.reshape(t, opset15.constant(np.array([3, 2], np.int64)), False),
    lambda t: opset15.transpose(t, opset15.constant(np.array([1, 0], np.int64))),
], ids=["gather", "concat", "reshape", "transpose"])
def test_data_movement_on_strings_as_the_cpu_plugin(make, tmp_path):
    """Operations that only move elements take string tensors as any other (the CPU plugin runs these four; it
    refuses Broadcast, Select and Tile of strings and crashes on Slice of them)."""
    text = opset15.parameter([2, 3], ov.Type.string, name="text")
    xml = write_ir([make(text)], [text], tmp_path)
    check_inference(xml)
    feed = np.array([["a", "bé", ""], ["😀", "x", "漢"]])
    assert_same_values(ir_runner.load(str(xml)).run(text=feed), cpu_outputs(xml, {"text": feed}))
