"""ir-run's findings as Model Explorer node data (``{graph id: {"results": ..., "thresholds": ...}}``), each a
layer the viewer colours nodes by, with the value on each node and in its side panel, and a legend.

The inputs are the JSON-ready results the CLI prints with ``--json``: ``validate``'s (``report.validation_data``),
``crosscheck``'s (``divergence.report_data``), ``bench --per-layer``'s rows and ``precision``'s
(``headroom.report_data``). A finding on a folded Const is
shown on the node it is folded into.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from .graph_json import MAIN_GRAPH

RED, ORANGE, YELLOW, GREY, GREEN, PALE = "#e53935", "#fb8c00", "#fdd835", "#9e9e9e", "#a5d6a7", "#e8f5e9"
FIRST = "#b71c1c"  # the first divergence
_NAMES = {RED: "red", ORANGE: "orange", YELLOW: "yellow", GREY: "grey", GREEN: "green", PALE: "pale green",
          FIRST: "dark red"}
EXACT = -99  # crosscheck: the log10 error shown for a layer whose outputs equal the device's bit for bit

# validation: value, colour, legend order
MISMATCH, ERROR, UNSUPPORTED, WARNING, OK = "mismatch", "error", "unsupported", "warning", "ok"
_VALIDATION_COLOURS = {MISMATCH: RED, ERROR: ORANGE, UNSUPPORTED: GREY, WARNING: YELLOW, OK: PALE}
_STATUS_COLOURS = {"diverges": RED, "inherited": ORANGE, "explained": YELLOW, "device representation": YELLOW,
                   "not observable": GREY, "agree": PALE}
_PRECISION_COLOURS = {"overflow": RED, "underflow": ORANGE, "diverges": YELLOW, "ok": PALE}


class Overlay(NamedTuple):
    """One node data layer: its ``name`` in the viewer, the node ``data`` (Model Explorer's format) and the
    ``legend`` (what its colours mean, shown in the graph's info panel)."""

    name: str
    data: dict[str, Any]
    legend: str


def node_ids(graphs: dict[str, Any]) -> dict[str, str]:
    """Layer id -> the id of the main graph's node that shows it (itself, or the consumer a Const is folded
    into: the first one in execution order)."""
    main = graphs["graphs"][0]
    found: dict[str, str] = {}
    for node in main["nodes"]:
        found[node["id"]] = node["id"]
        for item in node["inputsMetadata"]:
            for attr in item["attrs"]:
                if attr["key"] == "constant layer id":
                    found.setdefault(attr["value"], node["id"])
    return found


def validation_overlay(data: dict[str, Any], graphs: dict[str, Any]) -> Overlay:
    """``validate``'s findings per node: mismatch (a port's declared spec differs from the inferred one; the
    value names the ports), error (another inference error), unsupported (not checked), warning (an
    operation's own check), ok. A node shows its worst kind, with every finding of that kind: its own and
    those of the Consts folded into it (named)."""
    where = node_ids(graphs)
    found: dict[str, tuple[str, list[str]]] = {}
    rank = list(_VALIDATION_COLOURS)

    def mark(layer: dict[str, Any], kind: str, detail: str = "") -> None:
        node = where.get(layer["id"])
        if node is None:
            return
        if detail and node != layer["id"]:  # a folded Const's finding, shown on its consumer
            detail = f"constant '{layer['name']}' {detail}"
        kept = found.get(node)
        if kept is None or rank.index(kind) < rank.index(kept[0]):
            found[node] = (kind, [detail] if detail else [])
        elif kind == kept[0] and detail and detail not in kept[1]:
            kept[1].append(detail)

    for layer in data["layers"]:
        bad = [f"{port['direction']} {port['position']}" for port in layer["ports"] if not port["ok"]
               and (layer.get("checked", True) or port["direction"] == "in")]
        mark(layer, MISMATCH if bad else OK, ", ".join(bad))
    for group in data["unsupported"]:
        for layer in group["layers"]:
            mark(layer, UNSUPPORTED, group["type"])
    for kind, entries in ((ERROR, data["errors"]), (WARNING, data["warnings"])):
        for entry in entries:
            layer = entry.get("layer")
            if layer is not None and not (kind == ERROR and entry["type"] == "DeclaredMismatchError"):
                mark(layer, kind, entry["type"] if kind == ERROR else "")
    results = {node: {"value": f"{kind}: {'; '.join(details)}" if details else kind,
                      "bgColor": _VALIDATION_COLOURS[kind]} for node, (kind, details) in found.items()}
    return Overlay("validate", _node_data("validate", results), _legend(_VALIDATION_COLOURS.items()))


def crosscheck_overlays(result: dict[str, Any], graphs: dict[str, Any]) -> list[Overlay]:
    """Two node data layers of a ``crosscheck``: each node's largest absolute error against the device on a
    log10 scale (``EXACT`` when bit-equal), and its status (diverges, inherited, explained, agree, not
    observable); the first divergence in its own colour."""
    where = node_ids(graphs)
    errors: dict[str, float] = {}
    status: dict[str, str] = {}
    order = list(_STATUS_COLOURS)
    for row in result["layers"]:
        node = where.get(row["id"])
        if node is None:
            continue
        error = row["max_abs"]
        if error is not None or row["status"] == "agree":
            value = EXACT if not error else (99.0 if math.isinf(error) or math.isnan(error)
                                             else round(math.log10(error), 2))
            errors[node] = max(errors.get(node, EXACT), value)
        if node not in status or order.index(row["status"]) < order.index(status[node]):
            status[node] = row["status"]
    first = result["first_divergence"]
    first_node = where.get(first["id"]) if first else None
    steps = [(EXACT, PALE, "bit-equal"), (-9, GREEN, "<= 1e-9"), (-6, YELLOW, "<= 1e-6"), (-3, ORANGE, "<= 1e-3"),
             (1e9, RED, "> 1e-3")]
    device = f"{result['device']} {result['precision']}"
    return _scale_and_status(f"crosscheck log10 max abs error vs {device}", errors, steps, f"{EXACT} = bit-equal",
                             f"crosscheck status vs {device}", {node: (text, text) for node, text in status.items()},
                             _STATUS_COLOURS, first_node)


def bench_overlays(rows: list[dict[str, Any]], graphs: dict[str, Any]) -> list[Overlay]:
    """Two node data layers of ``bench --per-layer``: mean time per run (ms) and share of the total (%)."""
    where = node_ids(graphs)
    times: dict[str, float] = {}
    shares: dict[str, float] = {}
    for row in rows:
        node = where.get(row["id"])
        if node is not None:
            times[node] = times.get(node, 0.0) + row["mean_ms"]
            shares[node] = shares.get(node, 0.0) + row["percent"]
    gradient = [{"stop": 0, "bgColor": "#ffffff"}, {"stop": 0.5, "bgColor": "#ffb74d"}, {"stop": 1, "bgColor": RED}]
    steps = [(1, PALE, "< 1 %"), (5, YELLOW, "1-5 %"), (20, ORANGE, "5-20 %"), (100, RED, "> 20 %")]
    return [
        Overlay("bench mean ms per run",
                _node_data("bench mean ms per run", {n: {"value": round(v, 4)} for n, v in times.items()},
                           gradient=gradient),
                "white (fastest layer) to orange to red (slowest layer)"),
        Overlay("bench share of time %",
                _node_data("bench share of time %", {n: {"value": round(v, 2)} for n, v in shares.items()},
                           [(limit, colour) for limit, colour, _ in steps]),
                _legend((label, colour) for _, colour, label in steps)),
    ]


def precision_overlays(result: dict[str, Any], graphs: dict[str, Any]) -> list[Overlay]:
    """Two node data layers of a ``precision`` report: each node's headroom in bits (log2 of the type's maximum
    over its largest f32 value: negative when it overflows; the least of its float outputs), and its status
    (overflow, underflow to zero, diverges beyond the tolerance, ok: the worst of its outputs, with the counts);
    the first divergence in its own colour. A layer kept in f32 (by the device or ``--keep``) says so."""
    where, to = node_ids(graphs), result["to"]
    bits: dict[str, float] = {}
    status: dict[str, tuple[str, str]] = {}
    order = list(_PRECISION_COLOURS)
    for row in result["layers"]:
        node = where.get(row["id"])
        if node is None:
            continue
        if row["headroom_bits"] is not None:
            bits[node] = min(bits.get(node, math.inf), round(row["headroom_bits"], 2))
        kind = row["status"]
        counts = {"overflow": row["overflow"], "underflow": row["underflow"], "diverges": row["mismatches"]}
        text = kind if kind == "ok" else f"{kind}: {counts[kind]} of {row['size']}"
        if row["runs"] != to:
            text += f" (runs in {row['runs']})"
        if node not in status or order.index(kind) < order.index(status[node][0]):
            status[node] = (kind, text)
    first = result["first_divergence"]
    first_node = where.get(first["id"]) if first else None
    steps = [(0, RED, "< 0 bits (overflows)"), (3, ORANGE, "0-3 bits"), (8, YELLOW, "3-8 bits"),
             (1e9, PALE, "> 8 bits")]
    how = f"{to} as {result['device']}"
    return _scale_and_status(f"precision headroom bits in {how}", bits, steps,
                             f"log2 of {to}'s maximum over the layer's largest |f32 value|",
                             f"precision status in {how}", status, _PRECISION_COLOURS, first_node)


def _scale_and_status(scale_name: str, values: dict[str, float], steps: list[tuple[float, str, str]], note: str,
                      status_name: str, status: dict[str, tuple[str, str]], colours: dict[str, str],
                      first_node: str | None) -> list[Overlay]:
    """A numeric layer (``values`` per node, coloured by ``steps``: upper bound, colour, legend label) and a status
    layer (node -> (kind, text), coloured by kind), the first divergence in its own colour on both."""
    value_results: dict[str, dict[str, Any]] = {node: {"value": value} for node, value in values.items()}
    status_results = {node: {"value": text, "bgColor": colours[kind]} for node, (kind, text) in status.items()}
    if first_node is not None:
        status_results[first_node] = {"value": f"first divergence ({status[first_node][1]})", "bgColor": FIRST,
                                      "textColor": "#ffffff"}
        if first_node in value_results:
            value_results[first_node]["bgColor"] = FIRST
    return [
        Overlay(scale_name, _node_data(scale_name, value_results, [(limit, colour) for limit, colour, _ in steps]),
                f"{_legend((label, colour) for _, colour, label in steps)}; {note}"),
        Overlay(status_name, _node_data(status_name, status_results),
                _legend([("first divergence", FIRST), *colours.items()])),
    ]


def _legend(items) -> str:
    return ", ".join(f"{_NAMES[colour]}: {label}" for label, colour in items)


def _node_data(name: str, results: dict[str, dict], thresholds: list[tuple[float, str]] | None = None,
               gradient: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """One node data layer of the main graph: per node results, and the thresholds (upper bound, colour) or
    gradient that colour the nodes without a colour of their own."""
    data: dict[str, Any] = {"name": name, "results": results}
    if thresholds:
        data["thresholds"] = [{"value": value, "bgColor": colour} for value, colour in thresholds]
    if gradient:
        data["gradient"] = gradient
    return {MAIN_GRAPH: data}
