"""Turning arrays and results into text and JSON: tables, array statistics, typed JSON numbers.

JSON numbers are always numbers. JSON has no NaN or infinity, so a non-finite float is written as
the string ``"NaN"``, ``"Infinity"`` or ``"-Infinity"`` (the only strings that stand for numbers).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import clip_text
from ..types import element_type_of

FIRST_VALUES = 8


def to_json(obj: Any) -> str:
    """Valid JSON (no NaN literals) with numpy scalars and arrays as plain numbers and lists."""
    import json

    return json.dumps(jsonable(obj), indent=2, allow_nan=False, ensure_ascii=False)


def jsonable(obj: Any) -> Any:
    """``obj`` with numpy values, tuples and non-finite floats made JSON-ready (see module docstring)."""
    if isinstance(obj, dict):
        return {str(key): jsonable(value) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(value) for value in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(python_values(obj))
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        value = float(obj)
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    return obj


def python_values(array: np.ndarray) -> Any:
    """Nested Python lists of bool/int/float (ml_dtypes types included)."""
    kind = array.dtype.kind
    if kind in "biu":
        return array.tolist()
    if kind == "f":
        return array.astype(np.float64).tolist()
    return _widened(array).tolist()


def _widened(array: np.ndarray) -> np.ndarray:
    """ml_dtypes arrays (bf16, f8, int4) as float64 or int64."""
    name = array.dtype.name
    if name in ("int4", "uint4"):
        return array.astype(np.int64)
    return array.astype(np.float64)


def type_name(dtype: np.dtype) -> str:
    """The IR element type name of a dtype (``f32``), or numpy's name when the IR has none."""
    et = element_type_of(dtype)
    return et.name if et else str(dtype)


def shape_text(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(n) for n in shape) + "]"


def array_stats(array: np.ndarray) -> dict[str, Any]:
    """min, max, mean (NaN left out), NaN and Inf counts, and the first values of an array."""
    flat = array.reshape(-1)
    stats: dict[str, Any] = {"min": None, "max": None, "mean": None, "nan": 0, "inf": 0}
    if array.dtype.kind == "U":  # strings: no statistics, the first ones cut to a readable length
        stats["values"] = [clip_text(v) for v in flat[:FIRST_VALUES].tolist()]
        return stats
    if array.dtype.kind in "biu" or array.dtype.name in ("int4", "uint4"):
        values = flat.astype(np.int64) if array.dtype.kind == "b" or array.dtype.name in ("int4", "uint4") else flat
        if values.size:
            stats.update(min=values.min().item(), max=values.max().item(), mean=float(values.mean(dtype=np.float64)))
    else:
        wide = flat.astype(np.float64)
        nan = np.isnan(wide)
        stats["nan"] = int(nan.sum())
        stats["inf"] = int(np.isinf(wide).sum())
        finite = wide[~nan]
        if finite.size:
            with np.errstate(all="ignore"):
                stats.update(min=float(finite.min()), max=float(finite.max()), mean=float(finite.mean()))
    stats["values"] = python_values(flat[:FIRST_VALUES])
    return stats


def number(value: Any) -> str:
    """A short, exact-enough text for a number (``None`` as ``-``)."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        if value == int(value) and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.6g}"
    return str(value)


def table(rows: Sequence[Sequence[Any]], indent: str = "  ") -> str:
    """Left-aligned columns; the first row is the header."""
    cells = [[str(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    return "\n".join(indent + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells)


def values_text(array: np.ndarray) -> str:
    """The array as numpy prints it, shortened for large arrays."""
    if array.dtype.kind == "U" and array.size:  # strings, each cut to a readable length
        shown = np.array([clip_text(v) for v in array.ravel().tolist()], dtype=str).reshape(array.shape)
    else:
        shown = array if array.dtype.kind in "biufU" else _widened(array)
    return np.array2string(shown, threshold=24, edgeitems=3, max_line_width=110)
