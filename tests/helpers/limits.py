"""Models at the limits of int64 and numpy (huge port dims, Parameters of any rank), and checks that a refusal
stays one short message, for the reader, limits, Const-weights and CLI tests."""

from __future__ import annotations

import pytest

import ir_runner
from tests.helpers.irbuild import IRBuilder

HUGE = "1" * 5000  # beyond the 4300 digits Python's int() accepts
MESSAGE_MAX = 1000  # a message about a huge rank or text still fits in this many characters


def short(error: Exception, limit: int = MESSAGE_MAX) -> str:
    """The text of ``error``, checked to be shorter than ``limit`` characters."""
    text = str(error)
    assert len(text) < limit, text[:2 * limit]
    return text


def validate_errors(xml: bytes, weights: bytes = b"") -> list[ir_runner.IRError]:
    """Every finding of ``validate``, each checked to be short."""
    report = ir_runner.validate(xml, weights)
    assert not report.ok
    for error in report.errors:
        short(error)
    return report.errors


def load_error(xml: bytes, weights: bytes = b"", kind: type = ir_runner.IRError) -> ir_runner.IRError:
    """The error ``load`` raises, checked to be ``kind`` with a short message; ``validate`` reports it too, and
    every finding of ``validate`` is short."""
    with pytest.raises(kind) as caught:
        ir_runner.load(xml, weights)
    short(caught.value)
    assert any(type(e) is kind and str(e) == str(caught.value) for e in validate_errors(xml, weights))
    return caught.value


def ones(rank: int, value: int = 1) -> str:
    return ",".join([str(value)] * rank)


def parameter_model(shape: str, port_dims: list[int] | None = None, precision: str = "FP32") -> bytes:
    """Parameter 'p' f32 of ``shape`` (its port declaring ``port_dims``, default the shape) -> Result 'r'."""
    b = IRBuilder()
    spec = (precision, shape if port_dims is None else port_dims)
    b.result(b.parameter("p", "f32", shape, out_spec=spec), "r", in_spec=spec)
    return b.build()[0]


def param_with_port_dim(dim: str, port_id: str = "0") -> bytes:
    """Parameter 'p' f32[2] -> Result, with the Parameter's output port declaring ``<dim>{dim}</dim>`` and the
    id ``port_id``."""
    b = IRBuilder()
    b.result(b.parameter("p", "f32", "2"))
    xml, _ = b.build()
    xml = xml.replace(b"<dim>2</dim>", f"<dim>{dim}</dim>".encode(), 1)
    return xml.replace(b'<port id="0" precision', f'<port id="{port_id}" precision'.encode(), 1)
