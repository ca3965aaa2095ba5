"""``crosscheck``: bind inputs as ``run`` does, call ``ir_runner.crosscheck``, show the layers that differ."""

from __future__ import annotations

import math
import os
import shlex
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
from .common import EXIT_COMPARISON, OutputError, emit
from .files import split_key
from .formats import shape_text, table
from .inputs import bind_inputs
from .options import InputOptions
from .run import binding_rows, binding_text, load_model
from .view import ViewOptions, open_view, require_viewer


class CrosscheckOptions(Record):
    """What ``crosscheck`` was asked to do, as given on the command line."""

    __slots__ = ("model", "weights", "strict", "memory_limit", "inputs", "device", "precision", "atol", "rtol",
                 "ulp", "show_all", "strict_representations", "reduce", "output",
                 "every_layer")

    def __init__(self, model: str, weights: str | None = None, strict: bool = False, memory_limit: int | None = None,
                 inputs: InputOptions | None = None, device: str = "CPU", precision: str = "f32",
                 atol: float | None = None, rtol: float | None = None, ulp: int | None = None,
                 show_all: bool = False, strict_representations: bool = False, reduce: bool = False,
                 output: str = "repro", every_layer: bool = False) -> None:
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
        self.every_layer = every_layer


def crosscheck_command(options: CrosscheckOptions, view: ViewOptions | None = None) -> None:
    """Run the crosscheck and print it; with ``view``, then show it in the viewer (before the exit code)."""
    require_viewer(view)
    result = crosscheck_result(options)
    try:
        emit("crosscheck", result, lambda r: render_crosscheck(r, options.show_all))
    finally:  # (emit exits with the result's code: the view is served first)
        if view is not None:
            open_view(options.model, options.weights, options.strict, view, crosscheck=result)


def crosscheck_result(options: CrosscheckOptions) -> dict[str, Any]:
    """What ``crosscheck`` prints, as JSON-ready data (``exit_code`` set when a layer diverges)."""
    from ..device import import_openvino

    import_openvino()  # before any input is read or generated: without it nothing can be compared
    if options.reduce:  # (the model's own files are checked by crosscheck)
        from ..reduce import check_directory

        check_directory(options.output, [split_key(path)[0] for token in options.inputs.inputs
                                         for path in (token, token.partition("=")[2])
                                         if os.path.isfile(split_key(path)[0])])
    model = load_model(options.model, options.weights, options.strict, options.memory_limit)
    bound = bind_inputs(model, options.inputs)
    default = DEFAULT_TOLERANCES[options.precision]
    tolerance = Tolerance(default.atol if options.atol is None else options.atol,
                          default.rtol if options.rtol is None else options.rtol,
                          default.ulp if options.ulp is None else options.ulp)
    try:
        report = crosscheck(bound.model, bound.arrays, options.device, options.precision, tolerance=tolerance,
                            strict_representations=options.strict_representations, reduce=options.reduce,
                            output=options.output, every_layer=options.every_layer)
    except OSError as error:  # (only --reduce writes files)
        raise OutputError(f"cannot write the reduced model to '{options.output}': {error.strerror or error}") \
            from None
    result: dict[str, Any] = {"model": {"path": options.model, "weights": options.weights}, "seed": bound.seed,
                              "inputs": binding_rows(bound), **report_data(report)}
    if not report.ok:
        result["exit_code"] = EXIT_COMPARISON
    return result


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
             + (f", {counts[REPRESENTED]} differ only as the device represents them" if counts[REPRESENTED] else ""),
             _observation_text(result)]
    hidden = (AGREE,) if result.get("mode") in (None, "every layer") else (AGREE, UNOBSERVABLE)
    shown = [row for row in result["layers"] if show_all or row["status"] not in hidden]
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
        parts.extend(_group_text(group, result["device"]) for group in result.get("groups", ())
                     if group["boundary"]["id"] == first["id"])
    reduction = result.get("reduction")
    if reduction is not None and reduction["directory"]:
        folder = reduction["directory"]
        parts.append(f"reduced: {folder}/model.xml, {len(reduction['layers'])} layer(s) of the model"
                     f" ({', '.join(reduction['layers'])}) still diverge; {folder}/README.md; shown by:"
                     f" cd {shlex.quote(os.path.abspath(folder))} && {reduction['command']}")
    elif reduction is not None:
        parts.append(f"not reduced: {reduction['reason']}")
    return "\n".join(part for part in parts if part)


def _observation_text(result: dict[str, Any]) -> str:
    """Where the device was observed, and whether that changed what it compiled."""
    mode, device = result.get("mode"), result["device"]
    if mode is None:
        return ""
    if mode == "every layer":
        return (f"observed at every layer output (--every-layer): {device} compiled the model with all of them as"
                " outputs, which can change what it fuses and computes")
    observed = sum(row["status"] != UNOBSERVABLE for row in result["layers"])
    if mode == "group boundaries":
        return (f"observed at the {observed} layer outputs {device} materialises (the boundaries of its"
                f" {result['runtime_groups']} compiled nodes); non-intrusive: the instrumented compilation has the"
                " same fused groups, kernels and precisions, and its outputs equal the uninstrumented ones bit for"
                " bit (the others are not observable: not materialised; --every-layer observes them all)")
    changed = [probe for probe in result["probes"] if probe["changed"]]
    return (f"not observed at every group boundary at once: {result['non_intrusion']['difference']}; bisected"
            f" instead: {len(result['probes'])} compilation(s) with one added output each"
            + (f", {len(changed)} of which changed the compilation too (the first at '{changed[0]['layer']}':"
               f" {changed[0]['changed']})" if changed else ""))


def _group_text(group: dict[str, Any], device: str) -> str:
    """A diverging group: its IR layers, the device's kernel and precisions, and its own error or inherited."""
    boundary = group["boundary"]
    text = (f"group: the output of '{boundary['layer']}' ({boundary['type']}, id {boundary['id']}) comes from {device}"
            f" kernel {group['kernel']} (runtime precision {group['runtime_precision']}, output"
            f" {group['output_precisions']}) computing IR layer(s) {_names(group['layers'])}: ")
    if group["own"] is None:
        return text + (group["note"] or "not run alone")
    if group["own"]:
        return text + (f"its own error: run alone on ir-run's values of its inputs, {group['alone_mismatches']}"
                       f" of {group['size']} elements still differ")
    upstream = f"upstream layers {device} does not show: {_names(group['upstream'])}" if group["upstream"] else \
        "the model around it"
    return text + f"inherited: run alone on ir-run's values of its inputs it agrees; the difference comes from" \
                  f" {upstream}"


def _names(names: list[str], shown: int = 8) -> str:
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(f"'{name}'" for name in names[:shown]) + more


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
