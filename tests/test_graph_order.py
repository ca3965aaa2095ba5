"""Execution order: document order when every edge points forward, else the topological order that
takes the earliest ready layer in the document at each step; cycles are still refused, a long one listed
briefly."""

from __future__ import annotations

import pytest

import ir_runner
from ir_runner.errors import GraphError
from ir_runner.graph import build_graph
from ir_runner.ir.reader import read_ir
from tests.helpers.irbuild import IRBuilder
from tests.helpers.limits import load_error, short


def _layer(lid: str, name: str, kind: str, inputs: int) -> str:
    ports_in = "".join(f'<port id="{i}" precision="FP32"><dim>2</dim></port>' for i in range(inputs))
    data = '<data shape="2" element_type="f32"/>' if kind == "Parameter" else ""
    output = "" if kind == "Result" else f'<output><port id="{inputs}" precision="FP32"><dim>2</dim></port></output>'
    return (f'<layer id="{lid}" name="{name}" type="{kind}" version="opset1">{data}'
            f'{"<input>" + ports_in + "</input>" if inputs else ""}{output}</layer>')


def _net(layers: list[str], edges: list[tuple[str, str, str, str]]) -> bytes:
    edge_xml = "".join(f'<edge from-layer="{a}" from-port="{b}" to-layer="{c}" to-port="{d}"/>' for a, b, c, d in edges)
    return f'<net name="t" version="11"><layers>{"".join(layers)}</layers><edges>{edge_xml}</edges></net>'.encode()


def _order(xml: bytes) -> list[str]:
    graph = build_graph(read_ir(xml))
    return [graph.layers[lid].name for lid in graph.order]


def test_forward_edges_run_in_document_order():
    """Kahn's first-in-first-out order would run both Parameters first; document order interleaves them."""
    xml = _net(
        [_layer("0", "a", "Parameter", 0), _layer("1", "ra", "Result", 1),
         _layer("2", "b", "Parameter", 0), _layer("3", "rb", "Result", 1)],
        [("0", "0", "1", "0"), ("2", "0", "3", "0")],
    )
    assert _order(xml) == ["a", "ra", "b", "rb"]


def test_a_consumer_written_before_its_producer_runs_after_it_and_the_rest_keeps_document_order():
    xml = _net(
        [_layer("5", "result", "Result", 1), _layer("4", "late", "Parameter", 0),
         _layer("0", "x", "Parameter", 0), _layer("1", "rx", "Result", 1)],
        [("4", "0", "5", "0"), ("0", "0", "1", "0")],
    )
    assert _order(xml) == ["late", "result", "x", "rx"]


@pytest.mark.parametrize("backward", [False, True], ids=["cycle_forward_first", "cycle_backward_first"])
def test_cycles_are_refused_whatever_the_document_order(backward):
    first, second = ("1", "0") if backward else ("0", "1")
    xml = _net(
        [_layer(first, f"n{first}", "Relu", 1), _layer(second, f"n{second}", "Relu", 1)],
        [("0", "1", "1", "0"), ("1", "1", "0", "0")],
    )
    with pytest.raises(GraphError, match="cycle"):
        build_graph(read_ir(xml))


def test_a_long_cycle_is_listed_briefly():
    b = IRBuilder()
    first = b.parameter("p", "f32", "2")
    chain = first
    for i in range(50):
        chain = b.convert(chain, "f32", name=f"c{i}")
    b.result(chain, "r")
    xml = b.build()[0].decode()
    # close the cycle: the first Convert (id 1) takes the last one's output (id 50, port 1), not the Parameter's
    first_edge = '<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>'
    assert first_edge in xml
    looped = xml.replace(first_edge, '<edge from-layer="50" from-port="1" to-layer="1" to-port="0"/>')
    message = short(load_error(looped.encode(), kind=ir_runner.GraphError))
    assert "the edges form a cycle" in message and "(50 layers in the cycle)" in message
