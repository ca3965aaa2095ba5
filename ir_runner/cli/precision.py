"""``precision``: bind inputs as ``run`` does, call ``ir_runner.precision`` (or ``compression``), show the report."""

from __future__ import annotations

import math
from typing import Any

from ..record import Record
from .common import EXIT_COMPARISON, emit
from .crosscheck import _index
from .formats import shape_text, table
from .inputs import bind_inputs
from .options import InputOptions
from .run import binding_rows, binding_text, load_model
from .view import ViewOptions, open_view, require_viewer


class PrecisionOptions(Record):
    """What ``precision`` was asked to do, as given on the command line."""

    __slots__ = ("model", "weights", "strict", "memory_limit", "inputs", "to", "device", "atol", "rtol", "headroom",
                 "keep", "no_fix", "compression", "reference", "top", "show_all", "emulated_tail")

    def __init__(self, model: str, weights: str | None = None, strict: bool = False, memory_limit: int | None = None,
                 inputs: InputOptions | None = None, to: str = "f16", device: str | None = None,
                 atol: float | None = None, rtol: float | None = None, headroom: float = 8.0,
                 keep: tuple[str, ...] = (), no_fix: bool = False, compression: bool = False,
                 reference: str | None = None, top: int = 3, show_all: bool = False,
                 emulated_tail: bool = False) -> None:
        self.model = model
        self.weights = weights
        self.strict = strict
        self.memory_limit = memory_limit
        self.inputs = InputOptions() if inputs is None else inputs
        self.to = to
        self.device = device
        self.atol = atol
        self.rtol = rtol
        self.headroom = headroom
        self.keep = keep
        self.no_fix = no_fix
        self.compression = compression
        self.reference = reference
        self.top = top
        self.show_all = show_all
        self.emulated_tail = emulated_tail


def precision_command(options: PrecisionOptions, view: ViewOptions | None = None) -> None:
    """Run the report and print it; with ``view``, then show the headroom in the viewer (before the exit code)."""
    require_viewer(view)
    if options.compression:
        result = compression_result(options)
        emit("precision", result, lambda r: render_compression(r, options.show_all))
        return
    result = precision_result(options)
    try:
        emit("precision", result, lambda r: render_precision(r, options.show_all))
    finally:  # (emit exits with the result's code: the view is served first)
        if view is not None:
            open_view(options.model, options.weights, options.strict, view, precision=result["precision"])


def _bound(options: PrecisionOptions, model: Any) -> tuple[Any, dict[str, Any]]:
    bound = bind_inputs(model, options.inputs)
    return bound, {"model": {"path": options.model, "weights": options.weights}, "seed": bound.seed,
                   "inputs": binding_rows(bound)}


def compression_result(options: PrecisionOptions) -> dict[str, Any]:
    """What ``precision --compression`` prints, as JSON-ready data."""
    from ..sensitivity import compression, report_data

    bound, result = _bound(options, load_model(options.model, options.weights, options.strict, options.memory_limit))
    reference = None
    if options.reference is not None:
        reference = load_model(options.reference, None, options.strict, options.memory_limit)
    result["compression"] = report_data(compression(bound.model, bound.arrays, reference=reference, top=options.top))
    return result


def precision_result(options: PrecisionOptions) -> dict[str, Any]:
    """What ``precision`` prints, as JSON-ready data (``exit_code`` set when a model output diverges)."""
    from ..divergence import Tolerance
    from ..headroom import default_tolerance, precision, report_data, require_stateless

    model = load_model(options.model, options.weights, options.strict, options.memory_limit)
    require_stateless(model)  # before the inputs: a stateful model's would be bound in vain
    bound, result = _bound(options, model)
    default = default_tolerance(options.to)
    tolerance = Tolerance(default.atol if options.atol is None else options.atol,
                          default.rtol if options.rtol is None else options.rtol, None)
    report = precision(bound.model, bound.arrays, options.to, device=options.device, tolerance=tolerance,
                       headroom=options.headroom, keep=options.keep, fix=not options.no_fix,
                       learn=not options.emulated_tail)
    result["precision"] = report_data(report)
    if not report.ok:
        result["exit_code"] = EXIT_COMPARISON
    return result


def render_precision(result: dict[str, Any], show_all: bool = False) -> str:
    report = result["precision"]
    counts, tol = report["counts"], report["tolerance"]
    parts = [binding_text(result),
             f"{report['to']} emulated as the {report['device']} plugin applies INFERENCE_PRECISION_HINT"
             f" (tolerance atol {tol['atol']:g}, rtol {tol['rtol']:g})",
             f"{len(report['layers'])} float layer outputs: {counts['overflow']} overflow, {counts['underflow']}"
             f" underflow, {counts['diverges']} diverge otherwise, {counts['ok']} ok"]
    if report["f32_from"] is not None:
        parts.insert(2, f"layers the CPU plugin keeps in f32 (runs f32, never flagged as overflowing):"
                        f" {report['f32_from']}")
    shown = [row for row in report["layers"] if show_all or row["status"] != "ok" or row["subnormal"]]
    if shown:
        rows = [("status", "layer", "runs", "shape", "max |f32|", "min |f32|", "headroom", "overflow", "underflow",
                 "subnormal", "mismatches", "max error")]
        for row in shown:
            rows.append((row["status"], f"{row['layer']} ({row['type']}, id {row['id']})", row["runs"],
                         shape_text(row["shape"]), _value(row["max_abs"]), _value(row["min_abs"]),
                         "-" if row["headroom_bits"] is None else f"{row['headroom_bits']:.1f} bits",
                         row["overflow"], row["underflow"], row["subnormal"], f"{row['mismatches']}/{row['size']}",
                         _value(row["max_error"])))
        parts.append(table(rows))
    first = report["first_divergence"]
    if first is None:
        parts.append(f"ok: no layer output diverges in {report['to']}")
        return "\n".join(part for part in parts if part)
    row = next(r for r in report["layers"] if r["id"] == first["id"] and r["position"] == first["position"])
    parts.append(f"first divergence: layer '{first['layer']}' ({first['type']}, id {first['id']}), output port"
                 f" {first['port']}: {row['status']}, {row['mismatches']} of {row['size']} elements beyond the"
                 f" tolerance; at {_index(row['worst_index'])} f32 gives {_value(row['reference'])},"
                 f" {report['to']} gives {_value(row['emulated'])}")
    if report["agree"]:
        parts.append("ok: no model output diverges (the divergence above does not reach them)")
    else:
        parts.append(f"model outputs that diverge: {', '.join(report['outputs_diverging'])}")
    fix = report["fix"]
    if fix is not None:
        if fix["scale"]:
            verdict = ("every output agrees when the emulation holds the whole network scaled, an upper bound of"
                       " what the property fixes: docs/precision.md" if fix["scale_fixes"]
                       else "some output diverges even with the whole network scaled")
            parts.append(f"fix: ACTIVATIONS_SCALE_FACTOR {fix['scale']} ({verdict})\n  {fix['scale_snippet']}")
        if fix["keep"]:
            names = ", ".join(f"'{ref['layer']}'" for ref in fix["keep"])
            verdict = ("fixes every output in the emulation" if fix["keep_fixes"]
                       else "does not fix every output: the search stopped")
            snippet = "\n".join("  " + line if line else "" for line in fix["keep_snippet"].splitlines())
            parts.append(f"fix: keep {len(fix['keep'])} layer(s) in f32: {names} ({verdict})\n{snippet}")
    return "\n".join(part for part in parts if part)


def render_compression(result: dict[str, Any], show_all: bool = False) -> str:
    report = result["compression"]
    against = ("against the uncompressed model's weights" if report["against"] == "reference"
               else "by one quantisation step of random rounding (no reference: the step sensitivity)")
    parts = [binding_text(result), f"{len(report['layers'])} layers with compressed weights, ranked by the relative"
             f" output error of their compression, {against}"]
    if report["layers"]:
        rows = [("rank", "layer", "input", "codes", "weights", "relative error", "max error", "max |output|")]
        for rank, row in enumerate(report["layers"], 1):
            if not show_all and rank > 10 and row["relative"] is not None:
                continue
            rows.append((rank, f"{row['layer']} ({row['type']}, id {row['id']})", row["position"], row["codes"],
                         shape_text(row["shape"]), _value(row["relative"]), _value(row["max_error"]),
                         _value(row["output_max"])))
        parts.append(table(rows))
        if len(rows) - 1 < len(report["layers"]):
            parts.append(f"  ({len(report['layers']) - len(rows) + 1} more: --all lists every one)")
        notes = [f"  {row['layer']}: {row['note']}" for row in report["layers"] if row["note"]]
        if notes:
            parts.append("notes\n" + "\n".join(notes))
    if report["snippet"]:
        snippet = "\n".join("  " + line if line else "" for line in report["snippet"].splitlines())
        parts.append(f"to leave the worst {len(report['worst'])} uncompressed, compress the original model again"
                     f" with:\n{snippet}")
    return "\n".join(part for part in parts if part)


def _value(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and math.isfinite(value):
        return f"{value:.4g}"
    return str(value)

