"""What ``validate`` and ``inspect`` show: findings and model descriptions as text, JSON-ready data,
Markdown, and Graphviz (dot).

Besides inference's own errors, validation shows the warnings of the operations' own checks (each
declaration's ``findings``, e.g. constant indices outside the spec's range; ``--strict`` makes them errors).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import IRError, UnsupportedError, clip_text, error_entry
from .ir.weights import const_value
from .ops.api import Finding
from .state import find_variables
from .types import PartialShape, TensorSpec
from .unsupported import INSPECT_HINT, not_implemented

if TYPE_CHECKING:
    from .graph import Graph
    from .infer import Inference, LayerInference
    from .model import Source

FIRST_VALUES = 8  # a constant's first values shown by inspect


@dataclass
class Analysis:
    """A model read, graphed and inferred without stopping at the first problem."""

    source: str
    graph: Graph | None = None
    inference: Inference | None = None
    errors: list[IRError] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    unsupported: list[LayerInference] = field(default_factory=list)  # layers ir-run cannot infer: not checked

    @property
    def layers(self) -> list[LayerInference]:
        return list(self.inference.layers.values()) if self.inference else []

    @property
    def exit_code(self) -> int:
        """0 when clean; 5 when an operation is unsupported (the model is not fully checked); else 3 for any
        error."""
        if self.unsupported or any(isinstance(e, UnsupportedError) for e in self.errors):
            return UnsupportedError.exit_code
        return 3 if self.errors else 0


def source_label(source: object) -> str:
    """How reports name a model: its path, or ``<xml>`` / ``<bytes>`` for a model given as content."""
    if isinstance(source, str) and source.lstrip().startswith("<"):
        return "<xml>"
    if isinstance(source, (bytes, bytearray, memoryview)):
        return "<bytes>"
    return str(source)


def analyse(source: Source, weights: Source | memoryview | None = None, *, strict: bool = False) -> Analysis:
    """Read, build and infer ``source``, collecting every finding (``ir_runner.validate`` and the CLI's
    ``validate`` and ``inspect`` all use this)."""
    from .graph import read_graph
    from .infer import infer_graph
    from .subgraph import body_provider

    analysis = Analysis(source_label(source))
    try:
        analysis.graph = read_graph(source, weights)
    except IRError as error:
        analysis.errors.append(error)
        return analysis
    analysis.inference = infer_graph(analysis.graph, strict=strict, body_provider=body_provider)
    analysis.unsupported = [info for info in analysis.inference.layers.values() if not_implemented(info)]
    analysis.errors = checked_errors(analysis.graph, analysis.inference)
    try:
        analysis.inference.raise_first()
    except UnsupportedError as summary:
        if summary.hint and analysis.unsupported and summary.hint != INSPECT_HINT:  # e.g. 'Const' for 'Constant'
            analysis.errors = [summary, *analysis.errors]
    except IRError:
        pass
    analysis.findings = op_findings(analysis.inference)
    return analysis


def checked_errors(graph: Graph, inference: Inference) -> list[IRError]:
    """Inference's errors as validate reports them:

    - without the per-layer "not implemented" ones (reported once, grouped);
    - a missing weights file said once (not once per Const), the Consts taking their declared specs, and
      no error that follows only from it: an inference error of a layer that needs the value of an
      unreadable Const (such a layer's outputs are then not checked);
    - a mismatch on an edge whose producer ir-run cannot infer (unsupported, or needing unreadable weights)
      told as what it is: the two declared ends of the edge disagree (which one is wrong, ir-run cannot say).
    """
    from .errors import DeclaredMismatchError, WeightsFileNotFoundError

    unreadable = {info.layer.id: e for info in inference.layers.values() for e in info.errors
                  if isinstance(e, WeightsFileNotFoundError)}
    blocked = _blocked_by(graph, inference, set(unreadable))
    errors: list[IRError] = []
    if unreadable:
        errors.append(_weights_missing(list(unreadable.values())))
    for info in inference.layers.values():
        if info.op is None:
            errors += [e for e in info.errors if not isinstance(e, UnsupportedError)]
            continue
        for error in info.errors:
            if isinstance(error, WeightsFileNotFoundError) or (info.layer.id in blocked and not isinstance(
                    error, DeclaredMismatchError)):
                continue
            edge = _edge_from_uninferred(graph, inference, info, error, blocked) \
                if isinstance(error, DeclaredMismatchError) else None
            errors.append(edge or error)
    return errors


def not_inferred(analysis: Analysis) -> set[str]:
    """Ids of the layers whose outputs validate could not infer: unsupported, or needing unreadable weights."""
    if analysis.inference is None or analysis.graph is None:
        return set()
    from .errors import WeightsFileNotFoundError

    unreadable = {info.layer.id for info in analysis.layers
                  if any(isinstance(e, WeightsFileNotFoundError) for e in info.errors)}
    return {info.layer.id for info in analysis.unsupported} | unreadable | _blocked_by(
        analysis.graph, analysis.inference, unreadable)


def _blocked_by(graph: Graph, inference: Inference, unreadable: set[str]) -> set[str]:
    """Layers whose inference failed (not for a declared mismatch) and that lie downstream of an unreadable
    Const: their failure follows from the missing weights (e.g. a Gather axis that cannot be read)."""
    from .errors import DeclaredMismatchError

    if not unreadable:
        return set()
    downstream, blocked = set(unreadable), set()
    for layer_id in graph.order:
        if layer_id in downstream:
            continue
        if any(source in downstream for source, _ in graph.sources[layer_id]):
            downstream.add(layer_id)
            if any(not isinstance(e, DeclaredMismatchError) for e in inference.layers[layer_id].errors):
                blocked.add(layer_id)
    return blocked


def _weights_missing(errors: list[IRError]):
    from .errors import WeightsFileNotFoundError

    first = errors[0]
    names = ", ".join(repr(e.layer.name) for e in errors[:5] if e.layer) + (", ..." if len(errors) > 5 else "")
    single = WeightsFileNotFoundError(
        f"{len(errors)} Const layer(s) ({names}) cannot be read: the weights file '{first.weights_path}' does"
        " not exist; their declared specs stand in, and what needs their values is not checked",
        hint=first.hint)
    single.weights_path = first.weights_path
    return single


def _edge_from_uninferred(graph: Graph, inference: Inference, info: LayerInference, error: IRError,
                          blocked: set[str]):
    from .errors import DeclaredMismatchError
    from .unsupported import type_label

    for position, (source, source_position) in enumerate(graph.sources[info.layer.id]):
        port = info.layer.inputs[position] if position < len(info.layer.inputs) else None
        producer = inference.layers[source]
        if port is None or (producer.op is not None and source not in blocked) or error.port != f"input {port.label}":
            continue
        why = (f"ir-run does not implement {type_label(producer)}" if producer.op is None
               else "it needs values from the missing weights")
        out = producer.layer.outputs[source_position]
        return DeclaredMismatchError(
            f"the edge from {producer.ref} output {out.label} declares {_declared(out)} at its start and"
            f" {_declared(port)} at its end; {why}, so ir-run cannot infer which is right",
            layer=info.ref, port=error.port, hint="make both ends of the edge declare the same <dim>s and precision")
    return None


def _declared(port) -> str:
    return f"{port.precision or '?'}[{','.join(str(d) for d in port.dims)}]"


def op_findings(inference: Inference) -> list[Finding]:
    """The warnings of the operations' own validation (``findings`` of their declarations), for the layers
    whose inference succeeded."""
    findings = []
    for layer_id, info in inference.layers.items():
        if info.op is not None and info.op.findings is not None and not info.errors:
            findings.extend(info.op.findings(inference.context(layer_id), info.params))
    return findings


def validation_data(analysis: Analysis) -> dict[str, Any]:
    """``ok``: no problem found in what was checked; ``complete``: every layer was checked (none of an
    operation ir-run does not implement); ``valid``: both."""
    from .unsupported import by_type, reason

    errors = [error_entry(e) for e in analysis.errors]
    return {
        "model": analysis.source,
        "ok": not errors,
        "complete": not analysis.unsupported,
        "valid": not errors and not analysis.unsupported,
        "verdict": _verdict(bool(errors), analysis.unsupported),
        "unsupported": [{"type": label, "count": len(infos), "reason": reason(infos[0]), "first": str(infos[0].ref),
                         "layers": [{"name": clip_text(i.layer.name, 300), "id": clip_text(i.layer.id, 300)}
                                    for i in infos]}
                        for label, infos in by_type(analysis.unsupported).items()],
        "errors": errors,
        "warnings": [error_entry(f) for f in analysis.findings],
        "layers": _layer_ports(analysis.layers, not_inferred(analysis)),
    }


def _verdict(errors: bool, unsupported: list[LayerInference]) -> str:
    if not unsupported:
        return "INVALID" if errors else "valid"
    groups = len({(info.layer.type, info.layer.version) for info in unsupported})
    partial = f"not fully checked ({len(unsupported)} layer(s) of {groups} unsupported type(s))"
    return f"INVALID, {partial}" if errors else f"{partial}; no problem found in what was checked"


def _layer_ports(layers: list[LayerInference], unchecked: set[str] | None = None) -> list[dict[str, Any]]:
    unchecked = unchecked if unchecked is not None else {info.layer.id for info in layers if info.op is None}
    return [
        {"id": info.layer.id, "name": info.layer.name, "type": info.ref.type_version,
         "checked": info.layer.id not in unchecked,
         "ports": [{"direction": c.direction, "position": c.port.position, "port_id": c.port.id,
                    "declared": c.declared, "inferred": c.inferred, "ok": c.ok} for c in info.checks]}
        for info in layers
    ]


def _port_rows(layers: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    rows = [("layer", "type", "port", "declared", "inferred", "")]
    for layer in layers:
        for port in layer["ports"]:
            rows.append((f"{layer['name']} (id {layer['id']})", layer["type"],
                         f"{port['direction']} {port['position']}", port["declared"],
                         port["inferred"] if _checked(layer, port) else "-",
                         ("ok" if port["ok"] else "MISMATCH") if _checked(layer, port) else "not checked"))
    return rows


def _checked(layer: dict[str, Any], port: dict[str, Any]) -> bool:
    """An output of a layer ir-run cannot infer is not checked (its inputs are: their producers are known)."""
    return layer.get("checked", True) or port["direction"] == "in"


def render_validation(data: dict[str, Any], fmt: str = "text") -> str:
    """The declared-vs-inferred table, then errors and warnings, then a verdict."""
    rows = _port_rows(data["layers"])
    problems = [("error", e["message"]) for e in data["errors"]] + [("warning", w["message"]) for w in data["warnings"]]
    if data["unsupported"]:
        problems.insert(0, ("unsupported", "operations ir-run does not implement yet (their layers are not"
                            " checked; everything else is): " + ", ".join(
                                f"{g['type']} x{g['count']} (first: {g['first']}: {g['reason']})"
                                for g in data["unsupported"])))
    verdict = (f"{data['model']}: {data['verdict']}"
               + f", {len(data['errors'])} error(s), {len(data['warnings'])} warning(s)")
    if fmt == "md":
        parts = [f"# Validation of `{data['model']}`", _md_table(rows) if len(rows) > 1 else ""]
        parts += ["## Problems\n\n" + "\n".join(f"- **{kind}**: {_md(text)}" for kind, text in problems)] \
            if problems else []
        return "\n\n".join(p for p in parts + [f"**{verdict}**"] if p)
    parts = [_text_table(rows)] if len(rows) > 1 else []
    parts += [f"{kind}: {text}" for kind, text in problems]
    return "\n".join(parts + [verdict])


def format_validation(report: ValidationReport) -> str:
    """``str(ValidationReport)``: the same text as ``ir-run validate`` (ports, errors, warnings, verdict)."""
    data = validation_data(Analysis(report.source, errors=list(report.errors), findings=list(report.warnings),
                                    unsupported=list(report.unsupported)))
    data["layers"] = _layer_ports(report.layers, report.unchecked)
    return render_validation(data)


# -- inspect --------------------------------------------------------------------------------------


def inspect_data(analysis: Analysis) -> dict[str, Any]:
    """Everything ``inspect`` shows, as JSON-ready data."""
    from .signature import input_infos, output_infos

    graph, inference = analysis.graph, analysis.inference
    assert graph is not None and inference is not None
    layers = [_layer_entry(graph, info) for info in inference.layers.values()]
    by_type = Counter(entry["type"] for entry in layers)
    variables = find_variables(inference)
    data = {
        "model": analysis.source,
        "name": graph.net.name,
        "ir_version": graph.net.version,
        "opsets": sorted({layer.version for layer in graph.net.layers}),
        "layer_count": len(layers),
        "layer_types": dict(sorted(by_type.items())),
        "inputs": [_tensor_entry(info) for info in input_infos(graph, inference)],
        "outputs": [_tensor_entry(info) for info in output_infos(graph, inference)],
        "layers": layers,
        "constants": [_const_entry(info) for info in inference.layers.values() if "value" in info.params],
        "problems": [error_entry(e) for e in analysis.errors] + [error_entry(f) for f in analysis.findings],
    }
    if variables:  # a stateful model's (listed only for one, which other models' output leaves unchanged)
        data["variables"] = [{"id": v.id, "element_type": v.element_type.name, "shape": str(v.partial_shape),
                              "readers": [graph.layers[r].name for r in v.readers],
                              "writer": graph.layers[v.writer].name if v.writer is not None else None,
                              "initialised": v.initialised, "option": v.option} for v in variables]
    return data


def _tensor_entry(info) -> dict[str, Any]:
    return {"name": info.name, "names": list(info.names), "layer": info.layer_name,
            "element_type": info.element_type.name, "shape": str(info.partial_shape)}


def _layer_entry(graph: Graph, info: LayerInference) -> dict[str, Any]:
    layer = info.layer
    label = info.ref.type_version
    inputs = []
    for position, (source, spec) in enumerate(zip(graph.sources[layer.id], info.inputs)):
        producer = graph.layers[source[0]]
        check = _check(info, "in", position)
        inputs.append({"position": position, "from": {"layer": producer.name, "id": producer.id, "port": source[1]},
                       "inferred": str(spec), "declared": check.declared if check else None,
                       "ok": check.ok if check else True})
    outputs = []
    for position, port in enumerate(layer.outputs):
        check = _check(info, "out", position)
        spec = str(info.outputs[position]) if position < len(info.outputs) else None
        outputs.append({"position": position, "names": list(port.names), "inferred": spec,
                        "declared": check.declared if check else None, "ok": check.ok if check else True,
                        "to": [{"layer": graph.layers[c].name, "id": c, "port": p}
                               for c, p in graph.consumers.get((layer.id, position), ())]})
    schema = info.op.defaults() if info.op is not None else {}
    defaults = {k: v for k, v in schema.items() if k not in layer.data}
    resolved = {key: str(value) if isinstance(value, (TensorSpec, PartialShape)) else getattr(value, "name", value)
                for key, value in info.params.items()
                if key not in ("value", "layer") and value is not None and not isinstance(value, np.ndarray)}
    return {"id": layer.id, "name": layer.name, "type": label, "supported": info.op is not None,
            "attributes": dict(layer.data), "defaults": defaults, "resolved": resolved,
            "inputs": inputs, "outputs": outputs, "errors": [str(e) for e in info.errors]}


def _check(info: LayerInference, direction: str, position: int):
    for check in info.checks:
        if check.direction == direction and check.port.position == position:
            return check
    return None


def _const_entry(info: LayerInference) -> dict[str, Any]:
    value = const_value(info.params["value"])
    if value.dtype.hasobject:  # strings: no range, the first ones cut to a readable length
        return {"id": info.layer.id, "name": info.layer.name, "element_type": info.outputs[0].element_type.name,
                "shape": list(value.shape), "offset": _int(info.layer.data.get("offset")),
                "size": _int(info.layer.data.get("size")), "min": None, "max": None,
                "values": [clip_text(v) for v in value.reshape(-1)[:FIRST_VALUES].tolist()]}
    wide = value.astype(np.float64) if value.dtype.kind not in "biu" else value.astype(np.int64)
    flat = wide.reshape(-1)
    finite = flat[np.isfinite(flat)] if flat.dtype.kind == "f" else flat
    first = flat[:FIRST_VALUES]
    return {"id": info.layer.id, "name": info.layer.name, "element_type": info.outputs[0].element_type.name,
            "shape": list(value.shape), "offset": _int(info.layer.data.get("offset")),
            "size": _int(info.layer.data.get("size")),
            "min": finite.min().item() if finite.size else None, "max": finite.max().item() if finite.size else None,
            "values": [bool(v) for v in first] if value.dtype.kind == "b" else first.tolist()}


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _spec_text(port: dict[str, Any]) -> str:
    text = port["inferred"] or "?"
    return text if port["ok"] else f"{text} (declared {port['declared']}: MISMATCH)"


def _attributes_text(layer: dict[str, Any]) -> str:
    parts = [f"{k}={v}" for k, v in layer["attributes"].items()]
    parts += [f"{k}={v} (default)" for k, v in layer["defaults"].items()]
    if layer["resolved"]:
        parts.append("resolved: " + " ".join(f"{k}={v}" for k, v in layer["resolved"].items()))
    return " ".join(parts)


def _values_text(values: list[Any], total: int) -> str:
    shown = ", ".join(_short(v) for v in values)
    return f"[{shown}{', ...' if total > len(values) else ''}]"


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return repr(value) if isinstance(value, str) else str(value)  # strings quoted: '' stays visible


def _inspect_tables(data: dict[str, Any]) -> dict[str, list[tuple[str, ...]]]:
    tables = {}
    for key in ("inputs", "outputs"):
        rows = [("name", "type", "shape", "layer", "all names")]
        rows += [(t["name"], t["element_type"], t["shape"], t["layer"], ", ".join(t["names"])) for t in data[key]]
        tables[key] = rows
    rows = [("id", "name", "type", "inputs", "outputs", "attributes")]
    for layer in data["layers"]:
        ins = "; ".join(f"{p['from']['layer']}:{p['from']['port']} {_spec_text(p)}" for p in layer["inputs"]) or "-"
        outs = "; ".join(_spec_text(p) for p in layer["outputs"]) or "-"
        kind = layer["type"] + ("" if layer["supported"] else " (unsupported)")
        rows.append((layer["id"], layer["name"], kind, ins, outs, _attributes_text(layer) or "-"))
    tables["layers"] = rows
    rows = [("id", "name", "type", "shape", "offset", "size", "min", "max", "values")]
    for const in data["constants"]:
        count = int(np.prod(const["shape"], dtype=np.int64))
        rows.append((const["id"], const["name"], const["element_type"], "[" + ",".join(map(str, const["shape"])) + "]",
                     _short(const["offset"]), _short(const["size"]), _short(const["min"]), _short(const["max"]),
                     _values_text(const["values"], count)))
    tables["constants"] = rows
    rows = [("id", "type", "shape", "read by", "written by", "initial value", "role")]
    rows += [(v["id"], v["element_type"], v["shape"], ", ".join(v["readers"]), v["writer"] or "-",
              "init input" if v["initialised"] else "zeros", "option" if v["option"] else "state")
             for v in data.get("variables", ())]
    tables["variables"] = rows
    return tables


def render_inspect(data: dict[str, Any], fmt: str = "text") -> str:
    """Text or Markdown: model summary, inputs, outputs, layers, constants, problems."""
    types = ", ".join(f"{name} x{count}" for name, count in data["layer_types"].items())
    summary = [("model", data["model"]), ("net", f"{data['name']} (IR v{data['ir_version']})"),
               ("opsets", ", ".join(data["opsets"])), ("layers", f"{data['layer_count']}: {types}")]
    tables = _inspect_tables(data)
    problems = [p["message"] for p in data["problems"]]
    if fmt == "md":
        parts = [f"# `{data['name']}`", "\n".join(f"- **{k}**: {_md(v)}" for k, v in summary)]
        for key in ("inputs", "outputs", "variables", "layers", "constants"):
            if len(tables[key]) > 1:
                parts.append(f"## {key.capitalize()}\n\n" + _md_table(tables[key]))
        if problems:
            parts.append("## Problems\n\n" + "\n".join(f"- {_md(p)}" for p in problems))
        return "\n\n".join(parts)
    parts = [_text_table(summary)]
    for key in ("inputs", "outputs", "variables", "layers", "constants"):
        if len(tables[key]) > 1:
            parts.append(f"{key}\n" + _text_table(tables[key]))
    if problems:
        parts.append(f"problems ({len(problems)}; see ir-run validate)\n" + "\n".join(f"  {p}" for p in problems))
    return "\n".join(parts)


def render_dot(data: dict[str, Any]) -> str:
    """Graphviz source: one node per layer (name, type, output spec), one edge per connection."""
    fills = {"Parameter-1": "#d8f0d8", "Result-1": "#d8e4f8", "Const-1": "#eeeeee"}
    lines = [f"digraph {_dot(data['name'] or 'model')} {{", "  rankdir=TB;",
             '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=9];']
    for layer in data["layers"]:
        label = [layer["name"], layer["type"]]
        if layer["type"] != "Result-1":
            label += [p["inferred"] or "?" for p in layer["outputs"]]
        fill = fills.get(layer["type"], "#ffffff" if layer["supported"] else "#f8d0d0")
        extra = ', color="#cc0000", penwidth=2' if layer["errors"] or not all(
            p["ok"] for p in layer["inputs"] + layer["outputs"]) else ""
        shape = ", shape=ellipse" if layer["type"] in ("Parameter-1", "Result-1") else ""
        node = _dot("L" + layer["id"])
        lines.append(f'  {node} [label={_dot(chr(10).join(label))}, fillcolor="{fill}"{shape}{extra}];')
    for layer in data["layers"]:
        for port in layer["inputs"]:
            source = port["from"]
            lines.append(f'  {_dot("L" + source["id"])} -> {_dot("L" + layer["id"])} [label={_dot(port["inferred"])}];')
    lines.append("}")
    return "\n".join(lines)


def _dot(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _md(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _md_table(rows: list[tuple[Any, ...]]) -> str:
    lines = ["| " + " | ".join(_md(c) for c in rows[0]) + " |", "|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows[1:]]
    return "\n".join(lines)


def _text_table(rows: list[tuple[Any, ...]]) -> str:
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    return "\n".join("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells)


# -- the report of ir_runner.validate ---------------------------------------------------------------------

class ValidationReport:
    """Every finding for a model: errors, warnings (constant indices outside the spec's range), and the
    declared-vs-inferred table of all ports."""

    def __init__(self, source: str, errors: list[IRError] | None = None,
                 layers: list[LayerInference] | None = None, warnings: list[Finding] | None = None,
                 unsupported: list[LayerInference] | None = None, unchecked: set[str] | None = None) -> None:
        self.source = source
        self.errors: list[IRError] = errors if errors is not None else []
        self.layers: list[LayerInference] = layers if layers is not None else []
        self.warnings: list[Finding] = warnings if warnings is not None else []
        self.unsupported: list[LayerInference] = unsupported if unsupported is not None else []
        # ids of layers whose outputs could not be inferred (unsupported, or needing missing weights)
        self.unchecked: set[str] = unchecked if unchecked is not None else {i.layer.id for i in self.unsupported}

    def __repr__(self) -> str:
        return (f"<ValidationReport {self.source!r}: {len(self.errors)} error(s), {len(self.warnings)} warning(s),"
                f" {len(self.layers)} layer(s)>")

    @property
    def ok(self) -> bool:
        """No problem was found in what was checked (layers of unsupported operations are not checked)."""
        return not self.errors

    @property
    def complete(self) -> bool:
        """Every layer was checked: none uses an operation ir-run does not implement yet."""
        return not self.unsupported

    @property
    def valid(self) -> bool:
        """Checked completely, and no problem found."""
        return self.ok and self.complete

    def __str__(self) -> str:
        return format_validation(self)


def validate(source: Source, weights: Source | memoryview | None = None, *, strict: bool = False) -> ValidationReport:
    """Check a model completely and return every finding, as ``ir-run validate`` does (does not stop at the
    first, does not raise for problems of the model; only an unreadable file or broken graph ends the
    report early)."""
    analysis = analyse(source, weights, strict=strict)
    return ValidationReport(analysis.source, analysis.errors, analysis.layers, analysis.findings, analysis.unsupported,
                            not_inferred(analysis))
