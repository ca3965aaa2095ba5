"""``crosscheck``: bind inputs as ``run`` does, call ``ir_runner.crosscheck``, show the layers that differ."""

from __future__ import annotations

import math
from typing import Any

from .. import crosscheck
from ..divergence import (
    AGREE,
    DEFAULT_TOLERANCES,
    DIVERGES,
    EXPLAINED,
    INHERITED,
    REPRESENTED,
    UNOBSERVABLE,
    Tolerance,
    report_data,
)
from ..record import Record
from .common import EXIT_COMPARISON, emit
from .formats import shape_text, table
from .inputs import bind_inputs
from .options import InputOptions
from .run import binding_rows, binding_text, load_model


class CrosscheckOptions(Record):
    """What ``crosscheck`` was asked to do, as given on the command line."""

    __slots__ = ("model", "weights", "strict", "memory_limit", "inputs", "device", "precision", "atol", "rtol",
                 "ulp", "show_all", "strict_representations", "reduce", "output")

    def __init__(self, model: str, weights: str | None = None, strict: bool = False, memory_limit: int | None = None,
                 inputs: InputOptions | None = None, device: str = "CPU", precision: str = "f32",
                 atol: float | None = None, rtol: float | None = None, ulp: int | None = None,
                 show_all: bool = False, strict_representations: bool = False, reduce: bool = False,
                 output: str = "repro") -> None:
        self.model = model
        self.weights = weights
        self.strict = strict
        self.memory_limit = memory_limit
        self.inputs = InputOptions() if inputs is None else inputs
        self.device = device
        self.precision = precision
        self.atol = atol
        self.rtol = rtol
        self.ulp = ulp
        self.show_all = show_all
        self.strict_representations = strict_representations
        self.reduce = reduce
        self.output = output


def crosscheck_command(options: CrosscheckOptions) -> None:
    from ..device import import_openvino

    import_openvino()  # before any input is read or generated: without it nothing can be compared
    model = load_model(options.model, options.weights, options.strict, options.memory_limit)
    bound = bind_inputs(model, options.inputs)
    default = DEFAULT_TOLERANCES[options.precision]
    tolerance = Tolerance(default.atol if options.atol is None else options.atol,
                          default.rtol if options.rtol is None else options.rtol,
                          default.ulp if options.ulp is None else options.ulp)
    report = crosscheck(bound.model, bound.arrays, options.device, options.precision, tolerance=tolerance,
                        strict_representations=options.strict_representations, reduce=options.reduce,
                        output=options.output)
    result: dict[str, Any] = {"model": {"path": options.model, "weights": options.weights}, "seed": bound.seed,
                              "inputs": binding_rows(bound), **report_data(report)}
    if not report.ok:
        result["exit_code"] = EXIT_COMPARISON
    emit("crosscheck", result, lambda r: render_crosscheck(r, options.show_all))


def render_crosscheck(result: dict[str, Any], show_all: bool = False) -> str:
    counts = result["counts"]
    tol = result["tolerance"]
    ulp = "" if tol["ulp"] is None else f", ulp {tol['ulp']}"
    parts = [binding_text(result),
             f"crosscheck against OpenVINO {result['openvino_version'].split('-')[0]} on {result['device']}"
             f" (INFERENCE_PRECISION_HINT {result['precision']}; tolerance atol {tol['atol']:g}, rtol {tol['rtol']:g}"
             f"{ulp}, for float outputs not compared by bits)",
             f"{len(result['layers'])} layer outputs: {counts[AGREE]} agree, {counts[DIVERGES]} diverge,"
             + (f" {counts[EXPLAINED]} explained," if counts[EXPLAINED] else "")
             + f" {counts[INHERITED]} inherited, {counts[UNOBSERVABLE]} not observable on {result['device']}"
             + (f", {counts[REPRESENTED]} differ only as the device represents them" if counts[REPRESENTED] else "")]
    shown = [row for row in result["layers"] if show_all or row["status"] != AGREE]
    if shown:
        rows = [("status", "layer", "port", "type", "rule", "mismatches", "max abs", "max rel", "max ulp", "worst at",
                 "ir-run", "device")]
        for row in shown:
            where = f"{row['layer']} ({row['type']}, id {row['id']}" + (f", line {row['line']})" if row["line"]
                                                                         else ")")
            mismatches = f"{row['mismatches']}/{row['size']}" if row["status"] != UNOBSERVABLE else "-"
            rows.append((row["status"], where, row["port"], f"{row['element_type']}{shape_text(row['shape'])}",
                         row["rule"], mismatches, _value(row["max_abs"]), _value(row["max_rel"]),
                         _value(row["max_ulp"]), _index(row["worst_index"]), _value(row["ours"]),
                         _value(row["device"])))
        parts.append(table(rows))
        notes = [f"  {row['layer']}: {row['note']}" for row in shown if row["note"]]
        if notes:
            parts.append("notes\n" + "\n".join(notes))
    first = result["first_divergence"]
    explained = [row for row in result["layers"] if row["status"] == EXPLAINED]
    for row in explained:
        parts.append(f"explained: layer '{row['layer']}' ({row['type']}, id {row['id']}): {row['note']}")
    if first is None:
        excused = []
        if counts[REPRESENTED]:
            excused.append(f"{counts[REPRESENTED]} layer output(s) differ only as it represents them (a 64-bit integer"
                           " held in 32 bits), which no later layer output nor model output shows"
                           " (--strict-representations counts these as divergences)")
        if explained:
            excused.append(f"{len(explained)} differ as explained above and {counts[INHERITED]} later one(s) only"
                           " because an explained one did (inherited)")
        parts.append(f"ok: no divergence from {result['device']}: {'; '.join(excused)}" if excused
                     else f"ok: every observable layer output agrees with {result['device']}")
    else:
        row = next(r for r in result["layers"] if r["id"] == first["id"] and r["position"] == first["position"])
        line = f", line {first['line']}" if first["line"] else ""
        parts.append(f"first divergence: layer '{first['layer']}' ({first['type']}, id {first['id']}{line}),"
                     f" output port {first['port']}: {row['mismatches']} of {row['size']} elements differ;"
                     f" at {_index(row['worst_index'])} ir-run gives {_value(row['ours'])},"
                     f" {result['device']} gives {_value(row['device'])}")
        if counts[INHERITED]:
            parts.append(f"{counts[INHERITED]} later layer output(s) diverge only because their inputs did (inherited)")
    reduction = result.get("reduction")
    if reduction is not None:
        parts.append(f"reduced: {reduction['directory']}/model.xml, {len(reduction['layers'])} layer(s) of the model"
                     f" ({', '.join(reduction['layers'])}) still diverge; {reduction['directory']}/README.md:"
                     f" {reduction['command']}" if reduction["directory"] else f"not reduced: {reduction['reason']}")
    return "\n".join(part for part in parts if part)


def _value(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if math.isinf(value) or math.isnan(value):
            return str(value)
        return f"{value:.9g}"
    return str(value)


def _index(index: list[int] | None) -> str:
    return "-" if index is None else "[" + ",".join(map(str, index)) + "]"
