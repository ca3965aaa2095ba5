"""``crosscheck``: run a model in ir-run and on an OpenVINO device, compare every layer, find the first divergence.

ir-run computes OpenVINO's reference semantics; a device (the CPU plugin, a GPU) may not. Every layer output
is compared in execution order, by one of two rules:

- **bits**: integer and boolean outputs always; float outputs of ops declared exact (``OpDef.exact``, the
  default) when the precision hint is f32, or when the output type is no wider than the hinted type.
  ``-0.0`` differs from ``+0.0``, and NaNs differ when their bits do.
- **tolerance**: other float outputs (ops declared ``exact=False``, or a float output wider than the hint,
  which the device may hold in the hinted precision). An element agrees when both are NaN, or they are equal
  (infinities included), or ``|device - ours| <= atol + rtol * |ours|``, or ``|device - ours| <= rtol * M``
  where ``M`` is the largest finite ``|ours|`` of the output (rounding of an accumulated sum scales with its
  operands, not with the element: a LayerNorm's output near zero differs by the rounding of values near one),
  or they are at most ``ulp`` units in the last place of the output type apart. Defaults follow the hint
  (``DEFAULT_TOLERANCES``): f32 atol 1e-6, rtol 1e-5, 4 ULP; f16 atol 1e-3, rtol 2e-3 (twice f16's epsilon);
  bf16 atol 1e-2, rtol 1.6e-2 (twice bf16's).

A layer output **diverges** when an element disagrees. It is the cause (``diverges``) when every layer output
it reads agrees; it is ``inherited`` when one of them diverged (or was not observable and itself read a
diverging output). The first divergence is the first cause in execution order. Layer outputs the device
cannot show are ``not observable`` (with the reason), never skipped silently.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .errors import InputError, LayerRef
from .model import Model, load
from .record import Record
from .state import State
from .types import element_type_of

AGREE, DIVERGES, INHERITED, UNOBSERVABLE = "agree", "diverges", "inherited", "not observable"


class Tolerance(Record):
    """The bound for float outputs compared by tolerance (see the module docstring); ``ulp`` None: none."""

    __slots__ = ("atol", "rtol", "ulp")

    def __init__(self, atol: float, rtol: float, ulp: int | None) -> None:
        self.atol = atol
        self.rtol = rtol
        self.ulp = ulp


DEFAULT_TOLERANCES = {"f32": Tolerance(1e-6, 1e-5, 4), "f16": Tolerance(1e-3, 2e-3, None),
                      "bf16": Tolerance(1e-2, 1.6e-2, None)}
_HINT_MANTISSA = {"f32": 23, "f16": 10, "bf16": 7}


class LayerComparison(Record):
    """One compared layer output: where (``layer``, output ``position``, XML ``port`` id), how (``rule``: 'bits'
    or 'tolerance'), the verdict (``status``: agree, diverges, inherited, not observable) and, when both sides
    have the output, the errors: ``mismatches`` of ``size`` elements, ``max_abs``, ``max_rel``, ``max_ulp``
    (None for non-float types) and the ``worst_index`` with both values there (``ours``, ``device``).
    ``note`` says why a layer is not observable, or what else differs (shape, element type, a 64-bit output
    held in 32 bits)."""

    __slots__ = ("layer", "position", "port", "source", "element_type", "shape", "rule", "status", "mismatches",
                 "size", "max_abs", "max_rel", "max_ulp", "worst_index", "ours", "device", "note")

    def __init__(self, layer: LayerRef, position: int, port: str, source: str, element_type: str,
                 shape: tuple[int, ...], rule: str) -> None:
        self.layer = layer
        self.position = position
        self.port = port
        self.source = source
        self.element_type = element_type
        self.shape = shape
        self.rule = rule
        self.status = AGREE
        self.mismatches = 0
        self.size = int(math.prod(shape))
        self.max_abs: float | None = None
        self.max_rel: float | None = None
        self.max_ulp: float | None = None
        self.worst_index: tuple[int, ...] | None = None
        self.ours: Any = None
        self.device: Any = None
        self.note: str | None = None

    @property
    def diverged(self) -> bool:
        return self.status in (DIVERGES, INHERITED)


class CrosscheckReport(Record):
    """Every layer output compared (``layers``, in execution order), the ``first_divergence`` (a LayerRef, or
    None; ``first`` is its row) and ``ok`` (nothing diverged)."""

    __slots__ = ("device", "precision", "tolerance", "openvino_version", "layers", "first")

    def __init__(self, device: str, precision: str, tolerance: Tolerance, openvino_version: str,
                 layers: list[LayerComparison]) -> None:
        self.device = device
        self.precision = precision
        self.tolerance = tolerance
        self.openvino_version = openvino_version
        self.layers = layers
        self.first = next((row for row in layers if row.status == DIVERGES), None)

    @property
    def first_divergence(self) -> LayerRef | None:
        return self.first.layer if self.first is not None else None

    @property
    def ok(self) -> bool:
        return not any(row.diverged for row in self.layers)

    def count(self, status: str) -> int:
        return sum(row.status == status for row in self.layers)

    def __repr__(self) -> str:
        where = f", first divergence {self.first.layer}" if self.first else ""
        return (f"<CrosscheckReport {self.device} {self.precision}: {len(self.layers)} layer outputs, "
                f"{self.count(DIVERGES) + self.count(INHERITED)} diverge{where}>")


def crosscheck(model: Model | str | os.PathLike | bytes, feeds: Mapping[str, object] | Sequence | None = None,
               device: str = "CPU", precision: str = "f32", *, weights=None, tolerance: Tolerance | None = None,
               cast: str | None = None, state: State | None = None) -> CrosscheckReport:
    """Run ``model`` (a loaded Model, or what :func:`ir_runner.load` takes) on ``feeds`` in ir-run and in
    OpenVINO on ``device`` with ``INFERENCE_PRECISION_HINT=precision``, and compare every layer output.

    Needs the optional ``openvino`` package (UnsupportedError with how to install it otherwise). ``tolerance``
    replaces the precision's default bound for outputs compared by tolerance. A stateful model runs on
    ``state`` (a new one when None), which the run updates; OpenVINO's infer request starts from the same
    variable values.
    """
    from .device import PRECISIONS, run_on_device

    if precision not in PRECISIONS:
        raise InputError(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    if not isinstance(model, Model):
        model = load(model, weights)
    elif model.source is None:
        raise InputError("crosscheck needs the model's XML: pass the path (or bytes) given to load()")
    bound = tolerance or DEFAULT_TOLERANCES[precision]
    arrays = model.bind(feeds, cast=cast)
    variables = None
    if model.variables:
        state = state if state is not None else model.new_state()
        variables = state.values()  # before the run updates them
    trace = model.trace(arrays, state=state)
    keys = [(record.layer.name, record.position) for record in trace.layers]
    fed = {info.layer_name: array for info, array in zip(model.inputs, arrays)}
    device_run = run_on_device(model.source, model.weights_source, keys, fed, device, precision, variables)
    rows: list[LayerComparison] = []
    tainted: set[tuple[str, int]] = set()  # outputs that diverged, or are unobservable and read one that did
    inexact: set[tuple[str, int]] = set()  # outputs that agree within the tolerance but not bit for bit
    for record in trace.layers:
        info = model.inference.layers[record.layer.id]
        value = np.asarray(record.value)
        exact = getattr(info.op, "exact", True)
        sources = model.graph.sources.get(record.layer.id, ())
        # an exact operation on inputs that agree only within the tolerance can agree only within it too, and so
        # can everything computed from it, even where a rounding happened to agree (a device may fuse the
        # layers and compute from its own unrounded values)
        reads_inexact = any(source in inexact for source in sources)
        exact = exact and not reads_inexact
        row = LayerComparison(record.layer, record.position, record.port, record.source, _type_name(value.dtype),
                              value.shape, _rule(value.dtype, exact, precision))
        key = (record.layer.name, record.position)
        inherited = any(source in tainted for source in sources)
        if key in device_run.values:
            device_value = device_run.values[key]
            _compare(row, value, device_value, bound)
            if not row.mismatches and _is_float(value.dtype) and (
                    reads_inexact or device_value.shape != value.shape or device_value.dtype != value.dtype
                    or not np.array_equal(_bits(value), _bits(device_value))):
                inexact.add((record.layer.id, record.position))
            if row.mismatches:
                row.status = INHERITED if inherited else DIVERGES
        else:
            row.status = UNOBSERVABLE
            row.note = device_run.unobservable.get(key, "not returned by the device")
        if row.diverged or (row.status == UNOBSERVABLE and inherited):
            tainted.add((record.layer.id, record.position))
        rows.append(row)
    return CrosscheckReport(device, precision, bound, device_run.version, rows)


def _type_name(dtype: np.dtype) -> str:
    et = element_type_of(dtype)
    return et.name if et is not None else str(dtype)


def _is_float(dtype: np.dtype) -> bool:
    et = element_type_of(dtype)
    return et is not None and et.kind == "float"


def _rule(dtype: np.dtype, exact: bool, precision: str) -> str:
    if not _is_float(dtype):
        return "bits"
    narrow = precision == "f32" or _mantissa(dtype) <= _HINT_MANTISSA[precision]
    return "bits" if exact and narrow else "tolerance"


def _mantissa(dtype: np.dtype) -> int:
    import ml_dtypes

    return int(ml_dtypes.finfo(dtype).nmant)


def _compare(row: LayerComparison, ours: np.ndarray, device: np.ndarray, bound: Tolerance) -> None:
    """Fill ``row`` with the errors between ``ours`` and ``device``; a different shape is a divergence."""
    if device.shape != ours.shape:
        row.note = f"the device gives shape {list(device.shape)}, ir-run {list(ours.shape)}"
        row.mismatches = max(row.size, 1)
        return
    if device.dtype != ours.dtype:
        row.note = f"the device gives {_type_name(device.dtype)}"
        with np.errstate(all="ignore"):
            device = device.astype(ours.dtype)
    if row.size == 0:
        return
    a, b = ours.astype(np.float64), device.astype(np.float64)  # errors are reported as floats
    with np.errstate(all="ignore"):
        both_nan = np.isnan(a) & np.isnan(b)
        equal = (a == b) | both_nan
        abs_err = np.where(equal, 0.0, np.abs(a - b))
        abs_err = np.where(np.isnan(abs_err), math.inf, abs_err)  # one side NaN, or inf against -inf
        rel_err = np.where(abs_err == 0, 0.0, abs_err / np.abs(a))
        rel_err = np.where(np.isnan(rel_err), math.inf, rel_err)
    ulp = _ulp_distance(ours, device) if _is_float(ours.dtype) else None
    if row.rule == "bits":
        mismatch = _bits(ours) != _bits(device)
    else:
        close = equal | (abs_err <= bound.atol + bound.rtol * np.abs(a)) | (abs_err <= bound.rtol * _scale(a))
        if bound.ulp is not None and ulp is not None:
            close |= ulp <= bound.ulp
        mismatch = ~close
    row.mismatches = int(np.count_nonzero(mismatch))
    row.max_abs = float(abs_err.max())
    row.max_rel = float(rel_err.max())
    row.max_ulp = None if ulp is None else float(ulp.max())
    score = np.where(mismatch, abs_err, -1.0) if row.mismatches else abs_err
    flat = int(np.argmax(score))
    index = np.unravel_index(flat, ours.shape) if ours.ndim else ()
    row.worst_index = tuple(int(i) for i in index)
    row.ours, row.device = _plain(ours[index]), _plain(device[index])
    if row.mismatches and row.note is None:
        row.note = _narrowing_note(ours, device)


def _narrowing_note(ours: np.ndarray, device: np.ndarray) -> str | None:
    """Why a 64-bit integer output differs, when the device's values are ours narrowed to 32 bits (OpenVINO's
    CPU plugin computes i64/u64 in 32 bits: values outside the range saturate or wrap)."""
    if ours.dtype.kind not in "iu" or ours.dtype.itemsize != 8:
        return None
    narrow = np.iinfo(np.int32 if ours.dtype.kind == "i" else np.uint32)
    if np.array_equal(device, np.clip(ours, narrow.min, narrow.max)):
        return "the device holds this 64-bit output in 32 bits: values outside its range saturate"
    if np.array_equal(device, ours.astype(narrow.dtype).astype(ours.dtype)):
        return "the device holds this 64-bit output in 32 bits: values outside its range wrap"
    return None


def _scale(values: np.ndarray) -> float:
    """The largest finite magnitude of ``values`` (0.0 when none is finite)."""
    finite = np.abs(values[np.isfinite(values)])
    return float(finite.max()) if finite.size else 0.0


def _plain(value) -> Any:
    """A numpy scalar as a Python bool, int or float (ml_dtypes floats too)."""
    array = np.asarray(value)
    if array.dtype.kind in "biu":
        return array.item()
    return float(array.astype(np.float64))


def _bits(array: np.ndarray) -> np.ndarray:
    if array.dtype == np.bool_:
        return array
    unsigned = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[array.dtype.itemsize]
    return np.ascontiguousarray(array).view(unsigned)


def _ulp_distance(ours: np.ndarray, device: np.ndarray) -> np.ndarray:
    """How many representable values of the type lie between the two (0 for equal, NaN pairs count as equal;
    inf when one side is NaN)."""
    bits_a, bits_b = _bits(ours).astype(np.int64), _bits(device).astype(np.int64)
    width = ours.dtype.itemsize * 8
    sign = np.int64(1) << np.int64(width - 1) if width < 64 else None
    if sign is None:  # f64: reinterpret as signed, then order
        ordered_a = _ordered64(ours.view(np.int64))
        ordered_b = _ordered64(device.view(np.int64))
    else:
        ordered_a = np.where(bits_a & sign, -(bits_a & (sign - 1)), bits_a)
        ordered_b = np.where(bits_b & sign, -(bits_b & (sign - 1)), bits_b)
    distance = np.abs(ordered_a.astype(np.float64) - ordered_b.astype(np.float64))
    a, b = ours.astype(np.float64), device.astype(np.float64)
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    return np.where(nan_a & nan_b, 0.0, np.where(nan_a | nan_b, math.inf, distance))


def _ordered64(signed: np.ndarray) -> np.ndarray:
    magnitude = signed & np.int64(0x7FFFFFFFFFFFFFFF)
    return np.where(signed < 0, -magnitude, magnitude)


def report_data(report: CrosscheckReport) -> dict[str, Any]:
    """The report as JSON-ready data (non-finite floats are left for the CLI's JSON writer to spell)."""
    first = report.first
    return {
        "device": report.device,
        "precision": report.precision,
        "openvino_version": report.openvino_version,
        "tolerance": {"atol": report.tolerance.atol, "rtol": report.tolerance.rtol, "ulp": report.tolerance.ulp},
        "agree": report.ok,
        "first_divergence": None if first is None else {
            "layer": first.layer.name, "id": first.layer.id, "type": first.layer.type_version,
            "line": first.layer.line, "port": first.port, "position": first.position},
        "counts": {status: report.count(status) for status in (AGREE, DIVERGES, INHERITED, UNOBSERVABLE)},
        "layers": [row_data(row) for row in report.layers],
    }


def row_data(row: LayerComparison) -> dict[str, Any]:
    return {"layer": row.layer.name, "id": row.layer.id, "type": row.layer.type_version, "line": row.layer.line,
            "port": row.port, "position": row.position, "source": row.source, "element_type": row.element_type,
            "shape": list(row.shape), "rule": row.rule, "status": row.status, "mismatches": row.mismatches,
            "size": row.size, "max_abs": row.max_abs, "max_rel": row.max_rel, "max_ulp": row.max_ulp,
            "worst_index": None if row.worst_index is None else list(row.worst_index), "ours": row.ours,
            "device": row.device, "note": row.note}
