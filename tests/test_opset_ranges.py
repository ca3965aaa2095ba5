"""Opset ranges stay exact: for every opset the installed OpenVINO defines, an operation version ir-run serves for
a layer of that opset is the version OpenVINO's opset holds (OpenVINO writes a layer's version as the opset that
introduced its class, e.g. ``opset16`` for AvgPool-16, which ir-run does not implement and must not serve with
AvgPool-14's declaration)."""

from __future__ import annotations

import pytest

pytest.importorskip("openvino")
from openvino.utils.node_factory import NodeFactory  # noqa: E402

from ir_runner.ops.registry import lookup, supported_ops  # noqa: E402


def _version_ids() -> dict[str, dict[int, str]]:
    """Per type, per opset number: the version id (``opsetN``) of the class OpenVINO's opset holds."""
    types = sorted({op.type for op in supported_ops() if op.domain is None})
    found: dict[str, dict[int, str]] = {}
    for number in range(1, 30):
        try:
            factory = NodeFactory(f"opset{number}")
        except Exception:  # (an opset this OpenVINO does not have: the last one was reached)
            break
        for type_name in types:
            try:
                found.setdefault(type_name, {})[number] = factory.create(type_name).get_type_info().version_id
            except Exception:  # the type is not in this opset
                continue
    return found


def test_a_layer_of_a_newer_version_is_never_served_by_an_older_declaration():
    stale = []
    for type_name, by_opset in _version_ids().items():
        for version_id in set(by_opset.values()):
            number = int(version_id.removeprefix("opset"))
            ours = lookup(type_name, version_id)
            newer = [n for n, v in by_opset.items() if v == version_id]
            earlier = {v for n, v in by_opset.items() if n < min(newer)}
            # a class introduced later than every earlier one is a new version: ir-run serves it only if it
            # declared a version starting there (or refuses it)
            if ours is not None and earlier and ours.first_opset < number and any(
                    lookup(type_name, v) is ours for v in earlier):
                stale.append(f"{type_name}: {version_id} is served by {ours.label} ({ours.opsets})")
    assert not stale, stale
