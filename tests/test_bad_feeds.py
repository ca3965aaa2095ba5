"""Bad and unusual data fed to a model: each bad feed ends in one InputError naming the input; unusual but
valid arrays (non-contiguous, read-only, aliased, NaN/Inf) work; outputs never alias a Const or a feed. Feeds
that are no mapping or sequence, an input given twice, string, complex and datetime feeds are refused (complex
ones with no numpy warning leaking, and never losing an imaginary part under ``cast="unsafe"``), and a dtype
hint spells the dtype as Python does."""

from __future__ import annotations

import re
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

import ir_runner
from ir_runner import InputError
from tests.conftest import MODELS
from tests.helpers.irbuild import IRBuilder
from tests.helpers.limits import short
from tests.hostile.base import FEEDS, base_model
from tests.hostile.procs import in_process_cli, subprocess_run

EXPECTED = np.array([[2, 0], [-5, -3]], dtype=np.float32)


@pytest.fixture(scope="module")
def model() -> ir_runner.Model:
    return ir_runner.load(*base_model())


def _feeds(**changes) -> dict:
    feeds = dict(FEEDS)
    for name, value in changes.items():
        if value is None:
            feeds.pop(name)
        else:
            feeds[name] = value
    return feeds


BAD_FEEDS = {
    "object_array": (_feeds(cond=np.array([[True, False, True], [False, True, False]], dtype=object)),
                     r"'cond'.*object"),
    "wrong_dtype": (_feeds(then=FEEDS["then"].astype(np.float64)), r"'then'.*f32.*float64|'then'.*float64.*f32"),
    "int_for_boolean": (_feeds(cond=FEEDS["cond"].astype(np.int8)), r"'cond'.*boolean"),
    "wrong_shape": (_feeds(then=np.zeros((3, 2), np.float32)), r"'then'.*\[2,3\].*\[3, 2\]"),
    "wrong_rank": (_feeds(then=np.zeros(6, np.float32)), r"'then'.*rank must be 2"),
    "scalar_for_tensor": (_feeds(then=np.float32(1)), r"'then'.*\[2,3\]"),
    "missing_name": (_feeds(**{"else": None}), r"no value given for input\(s\) 'else'"),
    "unknown_name": (_feeds(foo=np.zeros(1)), r"no input named 'foo'"),
    "misspelled_name": ({"cond": FEEDS["cond"], "then": FEEDS["then"], "els": FEEDS["else"]},
                        r"no input named 'els'.*did you mean 'else'"),
    "non_string_key": ({0: FEEDS["cond"], "then": FEEDS["then"], "else": FEEDS["else"]}, r"no input named 0"),
    "string_value": (_feeds(then="not an array"), r"'then'"),
    "none_value": ({**FEEDS, "then": None}, r"'then'"),
    "dict_value": (_feeds(then={"a": 1}), r"'then'"),
    "ragged_list": (_feeds(then=[[1.0, 2.0, 3.0], [4.0]]), r"'then'"),
    "too_few_positional": ([FEEDS["cond"], FEEDS["then"]], r"3 input\(s\), 2 value\(s\)"),
    "too_many_positional": ([FEEDS["cond"], FEEDS["then"], FEEDS["else"], FEEDS["else"]], r"3 input\(s\), 4"),
    "bytes_array": (_feeds(then=np.array([[b"a"] * 3] * 2)), r"'then'"),
    "string_array": (_feeds(then=np.array([["a"] * 3] * 2)), r"'then'"),
    "datetime_array": (_feeds(then=np.zeros((2, 3), "datetime64[s]")), r"'then'"),
    "complex_array": (_feeds(then=np.zeros((2, 3), np.complex64)), r"'then'"),
}


@pytest.mark.parametrize("name", BAD_FEEDS)
def test_bad_feed_is_one_input_error(model: ir_runner.Model, name: str):
    feeds, match = BAD_FEEDS[name]
    with pytest.raises(ir_runner.InputError) as caught:
        model.run(feeds)
    assert caught.value.exit_code == 4
    assert re.search(match, str(caught.value), re.S), str(caught.value)


def test_duplicate_input_names_are_refused_or_told_apart():
    """Two Parameters named 'x' (OpenVINO renames the second 'x_1'): either load refuses naming 'x', or every
    input gets a distinct name by which it can be fed."""
    b = IRBuilder("duplicate")
    first, second = b.parameter("x", "f32", "2"), b.parameter("x", "f32", "2")
    sel = b.layer("Select", "opset1", [b.const("c", np.array([True, False])), first, second], out_specs=[("f32", "2")])
    b.result(sel, "out")
    try:
        model = ir_runner.load(*b.build())
    except (ir_runner.ModelFormatError, ir_runner.GraphError) as error:
        assert "'x'" in str(error)
        return
    names = [info.name for info in model.inputs]
    assert len(set(names)) == 2, f"two inputs share a name and cannot be fed by name: {names}"
    out = model.run({names[0]: np.ones(2, np.float32), names[1]: np.zeros(2, np.float32)})["out"]
    assert out.tolist() == [1.0, 0.0]


def test_cast_option_is_validated(model: ir_runner.Model):
    with pytest.raises(ir_runner.InputError, match=r"cast='sideways'"):
        model.run(_feeds(then=FEEDS["then"].astype(np.float64)), cast="sideways")
    with pytest.raises(ir_runner.InputError, match=r"'then'.*cannot cast float64 to float32"):
        model.run(_feeds(then=FEEDS["then"].astype(np.float64)), cast="safe")


def test_lists_and_positional_feeds_work(model: ir_runner.Model):
    as_lists = {name: value.tolist() for name, value in FEEDS.items()}
    assert model.run(as_lists)["out"].tobytes() == EXPECTED.tobytes()
    assert model(FEEDS["cond"], FEEDS["then"], FEEDS["else"])["out"].tobytes() == EXPECTED.tobytes()


def _variants(array: np.ndarray) -> dict[str, np.ndarray]:
    """The same values laid out in memory in unusual ways."""
    wide = np.zeros((array.shape[0], array.shape[1] * 2), array.dtype)
    wide[:, ::2] = array
    read_only = array.copy()
    read_only.flags.writeable = False
    flipped = array[::-1, ::-1].copy()[::-1, ::-1]
    return {"strided": wide[:, ::2], "fortran": np.asfortranarray(array), "negative_strides": flipped,
            "read_only": read_only}


@pytest.mark.parametrize("layout", ["strided", "fortran", "negative_strides", "read_only"])
def test_unusual_layouts_give_the_same_result(model: ir_runner.Model, layout: str):
    feeds = {name: _variants(value)[layout] for name, value in FEEDS.items()}
    before = {name: value.copy() for name, value in feeds.items()}
    out = model.run(feeds)["out"]
    assert out.tobytes() == EXPECTED.tobytes()
    for name, value in feeds.items():
        assert np.array_equal(value, before[name]), f"ir-run wrote into the input '{name}'"


def test_broadcast_view_feed():
    """A zero-stride view (np.broadcast_to, read-only, overlapping memory) is a valid feed."""
    b = IRBuilder("bcast")
    x = b.parameter("x", "f32", "4,5")
    b.result(b.convert(x, "i32"), "out")
    model = ir_runner.load(*b.build())
    row = np.arange(5, dtype=np.float32) + 0.5
    out = model.run({"x": np.broadcast_to(row, (4, 5))})["out"]
    assert out.tolist() == [[0, 1, 2, 3, 4]] * 4


def _select_model(shape: str, element_type: str) -> ir_runner.Model:
    b = IRBuilder("select")
    params = [b.parameter("cond", "boolean", shape), b.parameter("then", element_type, shape),
              b.parameter("else", element_type, shape)]
    sel = b.layer("Select", "opset1", params, attrs={"auto_broadcast": "numpy"}, out_specs=[(element_type, shape)])
    b.result(sel, "out")
    return ir_runner.load(*b.build())


def test_large_unusual_layouts_match_where():
    """Above the bit-select threshold: strided, read-only and aliased feeds against np.where."""
    model = _select_model("256,300", "f32")
    rng = np.random.default_rng(0)
    cond = rng.random((256, 600)) < 0.5
    then = rng.standard_normal((256, 600)).astype(np.float32)
    cond_view, then_view = cond[:, ::2], then[:, 1::2]
    then_view.flags.writeable = False
    for other in (then_view, then[:, ::2], rng.standard_normal((256, 300)).astype(np.float32)):
        want = np.where(cond_view, then_view, other)
        assert model.run({"cond": cond_view, "then": then_view, "else": other})["out"].tobytes() == want.tobytes()


@pytest.mark.parametrize("size", [(2, 3), (256, 300)])
def test_non_canonical_boolean_bytes_are_true(size):
    """A boolean feed whose bytes are not 0/1 (a uint8 view): any non-zero byte is true, on every kernel path."""
    model = _select_model(",".join(map(str, size)), "i32")
    raw = (np.arange(np.prod(size)) % 4 * 85).astype(np.uint8).reshape(size)  # 0, 85, 170, 255
    then, other = np.ones(size, np.int32), np.zeros(size, np.int32)
    out = model.run({"cond": raw.view(np.bool_), "then": then, "else": other})["out"]
    assert out.tolist() == (raw != 0).astype(np.int32).tolist()


def test_aliased_feeds(model: ir_runner.Model):
    """One array fed to two inputs, and inputs that are views of each other, work."""
    same = FEEDS["then"].copy()
    out = model.run({"cond": FEEDS["cond"], "then": same, "else": same})["out"]
    assert out.tolist() == same[:, [2, 0]].tolist()
    block = np.arange(12, dtype=np.float32).reshape(2, 6)
    out = model.run({"cond": FEEDS["cond"], "then": block[:, :3], "else": block[:, 1:4]})["out"]
    want = np.where(FEEDS["cond"], block[:, :3], block[:, 1:4])[:, [2, 0]]
    assert out.tobytes() == want.tobytes()


def _alias_models() -> dict[str, tuple[bytes, bytes, dict]]:
    """Models whose output could be a feed or a Const itself if ir-run did not copy."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    models = {}
    b = IRBuilder("identity")
    b.result(b.parameter("x", "f32", "2,3"), "out")
    models["parameter_to_result"] = (*b.build(), {"x": x})
    b = IRBuilder("twice")
    p = b.parameter("x", "f32", "2,3")
    b.result(p, "first")
    b.result(p, "second")
    models["parameter_to_two_results"] = (*b.build(), {"x": x})
    b = IRBuilder("const")
    b.parameter("x", "f32", "2,3")
    b.result(b.const("c", x), "out")
    models["const_to_result"] = (*b.build(), {"x": x})
    b = IRBuilder("folded")
    b.parameter("x", "f32", "2,3")
    c = b.const("c", x)
    b.result(b.layer("Select", "opset1", [b.const("t", np.ones((2, 3), bool)), c, c], out_specs=[("f32", "2,3")]),
             "out")
    models["folded_select"] = (*b.build(), {"x": x})
    b = IRBuilder("same_type")
    b.result(b.convert(b.parameter("x", "f32", "2,3"), "f32"), "out")
    models["convert_to_same_type"] = (*b.build(), {"x": x})
    b = IRBuilder("select_all_then")
    p = b.parameter("x", "f32", "2,3")
    b.result(b.layer("Select", "opset1", [b.const("t", np.ones((2, 3), bool)), p, p], out_specs=[("f32", "2,3")]),
             "out")
    models["select_all_then"] = (*b.build(), {"x": x})
    b = IRBuilder("gather_identity")
    p = b.parameter("x", "f32", "2,3")
    idx, axis = b.const("i", np.array([0, 1], np.int64)), b.const("a", np.array(0, np.int64))
    b.result(b.layer("Gather", "opset8", [p, idx, axis], attrs={"batch_dims": 0}, out_specs=[("f32", "2,3")]), "out")
    models["gather_identity"] = (*b.build(), {"x": x})
    return models


ALIAS_MODELS = _alias_models()


@pytest.mark.parametrize("name", ALIAS_MODELS)
def test_outputs_never_alias_feeds_or_consts(name: str):
    xml, weights, feeds = ALIAS_MODELS[name]
    model = ir_runner.load(xml, weights)
    feeds = {key: value.copy() for key, value in feeds.items()}
    first = model.run(feeds)
    second = model.run(feeds)
    reference = {key: value.copy() for key, value in first.items()}
    arrays = list(first.values()) + list(second.values())
    for i, out in enumerate(arrays):
        for feed in feeds.values():
            assert not np.shares_memory(out, feed), "an output aliases a feed"
        for other in arrays[i + 1:]:
            assert not np.shares_memory(out, other), "two outputs (or two runs) share memory: a Const leaked out"
        assert out.flags.writeable, "outputs belong to the caller and must be writeable"
    originals = {key: value.copy() for key, value in feeds.items()}
    for out in first.values():
        out[...] = 99
    for feed in feeds.values():
        feed[...] = -1
    third = model.run(originals)
    for key, value in third.items():
        assert value.tobytes() == reference[key].tobytes(), "writing into an output or a feed changed a later run"


def test_nan_and_inf_pass_through_select_bit_exactly(model: ir_runner.Model):
    payload_nan = np.array([0x7FC00001], np.uint32).view(np.float32)[0]
    then = np.array([[np.nan, -np.inf, np.inf], [-0.0, payload_nan, 1e-45]], np.float32)
    out = model.run(_feeds(then=then, **{"else": then[::-1].copy()}))["out"]
    want = np.where(FEEDS["cond"], then, then[::-1])[:, [2, 0]]
    assert out.tobytes() == want.tobytes()


def _convert_model(src: str, dst: str, shape: str = "6") -> ir_runner.Model:
    b = IRBuilder("convert")
    b.result(b.convert(b.parameter("x", src, shape), dst), "out")
    return ir_runner.load(*b.build())


def test_nan_and_inf_to_integer_are_deterministic_and_silent():
    """Convert's documented rule (docs/convert-semantics.md): NaN, ±inf and values outside the signed range
    give -2**(bits-1), as OpenVINO's reference on x86-64; NaN is true as a boolean; no numpy warnings."""
    values = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, -2.7], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = _convert_model("f32", "i32").run({"x": values})["out"]
        as_bool = _convert_model("f32", "boolean").run({"x": values})["out"]
    low = np.iinfo(np.int32).min
    assert out.tolist() == [low, low, low, low, low, -2]
    assert as_bool.tolist() == [True] * 6


def test_nan_and_inf_float_indices_give_zeros_silently():
    """Gather-1 accepts float indices: NaN, ±inf and values beyond int64 are out of range (zeros), on every
    platform (numpy's NaN -> int64 cast is platform-defined), without a numpy RuntimeWarning."""
    b = IRBuilder("float_indices")
    data, indices = b.parameter("data", "f32", "4"), b.parameter("indices", "f32", "5")
    axis = b.const("axis", np.array(0, np.int64))
    b.result(b.layer("Gather", "opset1", [data, indices, axis], out_specs=[("f32", "5")]), "out")
    model = ir_runner.load(*b.build())
    indices_value = np.array([np.nan, np.inf, -np.inf, 1e30, 2.9], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = model.run({"data": np.array([10, 20, 30, 40], np.float32), "indices": indices_value})["out"]
    assert out.tolist() == [0, 0, 0, 0, 30]


# --- files fed to the CLI ---------------------------------------------------------------------------


class _Trap:
    """Unpickling this creates the file ``path``: proof that a pickle was executed."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (str(self.path), "w"))


def _one_input_model(directory: Path) -> Path:
    b = IRBuilder("one")
    b.result(b.convert(b.parameter("x", "f32", "2"), "i32"), "out")
    return b.write(directory)


@pytest.mark.parametrize("container", ["npy", "npz"])
def test_pickled_feed_is_refused_and_never_unpickled(tmp_path: Path, container: str):
    model = _one_input_model(tmp_path)
    trap = tmp_path / "UNPICKLED"
    payload = np.array([_Trap(trap), 1.0], dtype=object)
    feed = tmp_path / f"evil.{container}"
    if container == "npy":
        np.save(feed, payload, allow_pickle=True)
    else:
        np.savez(feed, x=payload)
    ran = subprocess_run([str(model), "--input", str(feed)])
    assert not trap.exists(), "the pickle in the input file was executed"
    assert "Traceback" not in ran.text, ran.text[-2000:]
    assert ran.code == 4, ran.text
    assert "pickl" in ran.stderr.lower() or "object" in ran.stderr.lower(), ran.stderr


def _cli_inputs_case(tmp_path: Path, name: str) -> tuple[list[str], str]:
    xml = tmp_path / "model.xml"
    xml.write_bytes(base_model()[0])
    (tmp_path / "model.bin").write_bytes(base_model()[1])
    feed = tmp_path / "feed.npz"
    if name == "missing_file":
        return [str(xml), "--input", str(tmp_path / "absent.npz")], r"absent\.npz"
    if name == "text_file":
        feed.write_text("cond,then,else\n1,2,3\n")
        return [str(xml), "--input", str(feed)], r"feed\.npz"
    if name == "truncated_npz":
        np.savez(feed, **FEEDS)
        feed.write_bytes(feed.read_bytes()[:200])
        return [str(xml), "--input", str(feed)], r"feed\.npz"
    if name == "truncated_npy":
        single = tmp_path / "cond.npy"
        np.save(single, FEEDS["cond"])
        single.write_bytes(single.read_bytes()[:-3])
        return [str(xml), "--input", str(single)], r"cond\.npy"
    if name == "unknown_key":
        np.savez(feed, **FEEDS, bogus=np.zeros(1))
        return [str(xml), "--input", str(feed)], r"bogus"
    if name == "missing_key":
        np.savez(feed, cond=FEEDS["cond"], then=FEEDS["then"])
        return [str(xml), "--input", str(feed)], r"'else'"
    if name == "string_dtype":
        np.savez(feed, **{**FEEDS, "then": np.array([["a"] * 3] * 2)})
        return [str(xml), "--input", str(feed)], r"'then'"
    assert name == "wrong_shape"
    np.savez(feed, **{**FEEDS, "then": np.zeros((3, 2), np.float32)})
    return [str(xml), "--input", str(feed)], r"'then'.*\[2,3\]"


@pytest.mark.parametrize("name", ["missing_file", "text_file", "truncated_npz", "truncated_npy", "unknown_key",
                                  "missing_key", "string_dtype", "wrong_shape"])
def test_bad_input_files_on_the_cli(tmp_path: Path, name: str):
    args, match = _cli_inputs_case(tmp_path, name)
    ran = in_process_cli(args)
    assert "Traceback" not in ran.text, ran.text[-3000:]
    assert ran.code == 4, ran.text
    assert re.search(match, ran.stderr, re.S), ran.stderr


@pytest.mark.parametrize("container", ["npy", "npz"])
def test_input_file_declaring_a_huge_array(tmp_path: Path, container: str):
    """A 100-byte file whose header declares 128 TiB: refused cleanly (bad input or resource limit), fast."""
    model = _one_input_model(tmp_path)
    member = tmp_path / "x.npy"
    with open(member, "wb") as handle:
        np.lib.format.write_array_header_1_0(handle, {"descr": "<f4", "fortran_order": False, "shape": (2**45,)})
    feed = member
    if container == "npz":
        feed = tmp_path / "huge.npz"
        with zipfile.ZipFile(feed, "w") as archive:
            archive.write(member, "x.npy")
    ran = subprocess_run([str(model), "--input", str(feed)])
    assert "Traceback" not in ran.text, ran.text[-2000:]
    assert ran.code in (4, 6), ran.text
    assert feed.name in ran.stderr, ran.stderr


def select_gather():
    return ir_runner.load(MODELS / "select_gather.xml")


@pytest.mark.parametrize("value", [np.array([["x"] * 3] * 2), [["x"] * 3] * 2, np.array([[b"x"] * 3] * 2)])
def test_string_feeds_are_refused_even_with_unsafe_cast(value):
    model = select_gather()
    feeds = {"cond": np.ones((2, 3), bool), "then": value, "else": np.zeros((2, 3), np.float32)}
    with pytest.raises(ir_runner.InputError, match="'then'"):
        model.run(feeds, cast="unsafe")


@pytest.mark.parametrize("feeds", [5, "cond", 2.5])
def test_feeds_that_are_neither_mapping_nor_sequence(feeds):
    with pytest.raises(ir_runner.InputError, match="mapping"):
        select_gather().run(feeds)


def test_input_given_in_mapping_and_by_keyword():
    model = select_gather()
    feeds = {"cond": np.ones((2, 3), bool), "then": np.ones((2, 3), np.float32),
             "else": np.zeros((2, 3), np.float32)}
    with pytest.raises(ir_runner.InputError, match="given twice"):
        model.run(feeds, cond=np.zeros((2, 3), bool))


# -- complex and other non-IR feeds --------------------------------------------------------------------------------


MESSAGE_MAX = 400  # a refused feed's message stays short


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
    text = short(caught.value, MESSAGE_MAX)
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
