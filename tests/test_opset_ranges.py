"""Opset ranges follow OpenVINO's tables exactly: for every opset the installed OpenVINO defines and every
operation type ir-run implements, ir-run serves a layer ``type="T" version="opsetN"`` exactly when OpenVINO's
opsetN holds T, and with one declaration per class OpenVINO's tables hold (OpenVINO writes a layer's version
as the opset that introduced its class, e.g. ``opset16`` for AvgPool-16, which must not be served with
AvgPool-14's declaration). Opsets are not nested: opset2 leaves out RNNCell, Reverse and ShuffleChannels
(opset3 has the first and last again), and OpenVINO 2026.4's opset17 holds only Parameter, Convert and ShapeOf
of the earlier operations.

OpenVINO's tables are the ``opsetN_tbl.hpp`` headers its Python package ships (the lists its ``OpSet`` objects
are built from); the class of each entry is the one its ``NodeFactory`` creates for that opset."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("openvino")
import openvino  # noqa: E402
from openvino.utils.node_factory import NodeFactory  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.ops.registry import lookup, supported_ops  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402

TABLES = Path(openvino.__file__).parent / "include" / "openvino" / "opsets"
_ENTRY = re.compile(r"^_OPENVINO_OP_REG\((\w+),\s*ov::op::v(\d+)\)", re.MULTILINE)  # (commented-out ones excluded)
_NAMES = {"Const": "Constant"}  # ir-run's type name (as IRs write it) -> OpenVINO's class name


def _openvino_tables() -> dict[int, dict[str, str]]:
    """Per opset number: OpenVINO's type name -> the version id (``opsetK``) of the class that opset holds."""
    if not TABLES.is_dir():
        pytest.skip(f"this openvino package ships no opset tables ({TABLES})")
    tables: dict[int, dict[str, str]] = {}
    for path in TABLES.glob("opset*_tbl.hpp"):
        number = int(re.fullmatch(r"opset(\d+)_tbl\.hpp", path.name).group(1))
        factory = NodeFactory(f"opset{number}")
        table = {}
        for name, namespace in _ENTRY.findall(path.read_text()):
            try:
                table[name] = factory.create(name).get_type_info().version_id
            except Exception:  # a class NodeFactory cannot make without arguments (Constant): its namespace
                table[name] = f"opset{max(1, int(namespace))}"
        tables[number] = table
    return tables


@pytest.fixture(scope="module")
def tables() -> dict[int, dict[str, str]]:
    return _openvino_tables()


def test_the_tables_are_every_opset_openvino_knows(tables):
    """The headers list the opsets OpenVINO's Python package has (``openvino.opsetN``, ``NodeFactory``), no more."""
    numbers = sorted(tables)
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 16
    assert all(hasattr(openvino, f"opset{n}") for n in numbers)
    with pytest.raises(Exception, match="opset"):
        NodeFactory(f"opset{numbers[-1] + 1}")


def test_every_type_is_served_in_exactly_the_opsets_openvino_holds_it_with_one_declaration_per_class(tables):
    newest = max(tables)
    mismatches = []
    for type_name in sorted({op.type for op in supported_ops() if op.domain is None}):
        theirs: dict[str, set[int]] = {}  # OpenVINO's class (version id) -> the opsets holding it
        ours: dict[str, set[int]] = {}  # ir-run's declaration -> the opsets it serves
        for number in range(1, newest + 3):
            version_id = tables.get(number, {}).get(_NAMES.get(type_name, type_name))
            if version_id is not None:
                theirs.setdefault(version_id, set()).add(number)
            op = lookup(type_name, f"opset{number}")
            if op is not None:
                ours.setdefault(f"{op.label} ({op.opsets})", set()).add(number)
        classes = {frozenset(opsets): version_id for version_id, opsets in theirs.items()}
        for label, opsets in ours.items():
            if frozenset(opsets) not in classes:
                mismatches.append(f"{type_name}: {label} serves opsets {sorted(opsets)}; OpenVINO's classes:"
                                  f" { {v: sorted(o) for v, o in theirs.items()} }")
    assert not mismatches, "\n".join(mismatches)


def _binary(version: str, element_type: str = "f32") -> tuple[bytes, bytes]:
    b = IRBuilder("binary")
    x = b.parameter("x", element_type, "2")
    b.result(b.layer("Add", version, [x, x], out_specs=[("FP32", [2])], name="add"))
    return b.build()


@pytest.mark.parametrize(("version", "message"), [
    ("opset17", "opset17 has no Add (OpenVINO's opset17 holds, of the operations of earlier opsets, only Convert,"
                " Parameter, ShapeOf); Add is in opset1..opset16"),
    ("opset18", "OpenVINO has no opset18 (it defines opset1..opset17); Add is in opset1..opset16"),
    ("opset0", "OpenVINO has no opset0 (it defines opset1..opset17); Add is in opset1..opset16")])
def test_a_type_absent_from_the_layers_opset_is_refused_as_openvino_refuses_it(version, message, tables):
    """The trial's case: ``Add`` written as ``opset17`` validated and ran, while OpenVINO refuses the file; then
    it was 'not implemented in ir-run yet'. It is an invalid model (ModelFormatError, exit 3), as for OpenVINO."""
    assert max(tables) == 17 and "Add" not in tables[17]  # (what the message says of opset17)
    xml, weights = _binary(version)
    with pytest.raises(ir_runner.ModelFormatError) as caught:
        ir_runner.load(xml, weights)
    assert f"OpenVINO refuses this file: {message}" in str(caught.value) and caught.value.exit_code == 3
    assert "layer 'add' (Add opset" in str(caught.value)
    core = openvino.Core()
    with pytest.raises(Exception, match="Add|opset"):
        core.read_model(model=xml.decode(), weights=openvino.Tensor(np.zeros(1, np.uint8)))


def test_a_known_type_of_a_custom_opset_is_not_implemented():
    """``OneHot`` written with ``version="my_ops"`` (an extension's opset no extension declares): not implemented,
    exit 5, naming the versions ir-run has. (Every version of OpenVINO's own opsets is declared: see
    test_every_operation_of_every_opset_openvino_can_build_is_declared.)"""
    b = IRBuilder("one_hot_custom")
    x = b.parameter("x", "i64", "2")
    b.result(b.layer("OneHot", "my_ops", [x], out_specs=[("FP32", [2, 3])], name="hot"))
    with pytest.raises(ir_runner.UnsupportedError, match="version 'my_ops' of OneHot is not implemented .ir-run has"
                                                         " OneHot-1.*OneHot-16") as caught:
        ir_runner.load(*b.build())
    assert caught.value.exit_code == 5


def test_opset16_still_serves_every_operation_and_opset17_its_own():
    xml, weights = _binary("opset16")
    (added,) = ir_runner.load(xml, weights).run({"x": np.array([1.5, -2], np.float32)}).values()
    assert added.tolist() == [3.0, -4.0]
    b = IRBuilder("convert17")
    x = b.parameter("x", "f32", "2")
    b.result(b.layer("Convert", "opset17", [x], attrs={"destination_type": "i32"}, out_specs=[("I32", [2])],
                     name="to_int"))
    (converted,) = ir_runner.load(*b.build()).run({"x": np.array([1.5, -2], np.float32)}).values()
    assert converted.tolist() == [1, -2]


def test_every_operation_of_every_opset_openvino_can_build_is_declared(tables):
    """Issue 23: no gap. Every (type, opset) pair of OpenVINO's tables is served by some declaration of ir-run, so
    an operation OpenVINO adds (or one never implemented) fails here, naming the class and the opsets."""
    missing: dict[str, list[int]] = {}
    for number, table in sorted(tables.items()):
        for name, version_id in table.items():
            type_name = {v: k for k, v in _NAMES.items()}.get(name, name)
            if lookup(type_name, f"opset{number}") is None:
                missing.setdefault(f"{name}-{version_id.removeprefix('opset')}", []).append(number)
    assert not missing, "not declared: " + ", ".join(f"{label} (opset{opsets[0]}..opset{opsets[-1]})"
                                                     for label, opsets in sorted(missing.items()))
