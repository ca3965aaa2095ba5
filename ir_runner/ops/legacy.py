"""Xor-1: opset1's logical exclusive or (``ov::op::v0::Xor``), the operation opset2 onwards call LogicalXor-1:
boolean inputs, numpy broadcasting (or none, or pdpd), a boolean output. Served by LogicalXor's declaration
(``binary.py``) under its opset1 name; bit-exact against OpenVINO's reference (``Node.evaluate``)."""

from __future__ import annotations

from .api import OpDef
from .binary import TABLE, _declare


def _xor() -> OpDef:
    (logical_xor,) = (entry for entry in TABLE if entry.type == "LogicalXor")
    op = _declare(logical_xor)
    op.type, op.last_opset = "Xor", 1
    return op


OPS = (_xor(),)
