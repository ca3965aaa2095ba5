"""Comparing arrays with tolerances, and the report of where and by how much they differ.

Rule: an element passes when ``|actual - expected| <= atol + rtol * |expected|`` (numpy's ``isclose``,
``expected`` being the reference), or when both are equal (same infinity), or both NaN. Integer and
boolean outputs are compared exactly unless a tolerance is given; float defaults depend on the dtype.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import click
import numpy as np

from .. import strings
from ..record import Record
from .formats import number, python_values, shape_text, type_name

RULE = "|actual - expected| <= atol + rtol * |expected|, or equal, or both NaN"
COMPARE_TOLERANCES = {  # `ir-run compare`: outputs vs expected (not crosscheck's per-layer bounds)
    "f64": (1e-8, 1e-7),
    "f32": (1e-4, 1e-3),
    "f16": (1e-2, 5e-2),
    "bf16": (2e-2, 1e-1),
    "f8e4m3": (1.25e-1, 1.25e-1),
    "f8e5m2": (2.5e-1, 2.5e-1),
}


class Tolerances(Record):
    """``--atol`` / ``--rtol`` values; the key ``None`` applies to every output."""

    __slots__ = ("atol", "rtol", "exact", "max_report")

    def __init__(self, atol: Mapping[str | None, float] = MappingProxyType({}),
                 rtol: Mapping[str | None, float] = MappingProxyType({}), exact: bool = False,
                 max_report: int = 5) -> None:
        self.atol = atol
        self.rtol = rtol
        self.exact = exact
        self.max_report = max_report

    def pick(self, name: str, dtype: np.dtype) -> tuple[float, float, str]:
        """(atol, rtol, where they come from) for one output."""
        if self.exact:
            return 0.0, 0.0, "--exact"
        given = [table.get(name, table.get(None)) for table in (self.atol, self.rtol)]
        kind = "integer/boolean: exact" if np.dtype(dtype).kind in "biu" or type_name(dtype) in ("i4", "u4") else (
            "string: exact" if np.dtype(dtype).kind in "OUS" else None)
        default = (0.0, 0.0) if kind else COMPARE_TOLERANCES.get(type_name(dtype), (0.0, 0.0))
        label = kind or f"default for {type_name(dtype)}"
        if all(value is None for value in given):
            return default[0], default[1], label
        atol = default[0] if given[0] is None else given[0]
        rtol = default[1] if given[1] is None else given[1]
        return atol, rtol, "given"


def parse_tolerances(tokens: tuple[str, ...], option: str) -> dict[str | None, float]:
    """``1e-3`` (every output) or ``NAME=1e-3`` (one output; NAME may itself contain ``=``)."""
    result: dict[str | None, float] = {}
    for token in tokens:
        name, sep, text = token.rpartition("=")
        try:
            value = float(text)
        except ValueError:
            raise click.BadParameter(f"{token!r} is not a number or NAME=NUMBER", param_hint=option) from None
        if not value >= 0:
            raise click.BadParameter(f"{token!r}: a tolerance must be >= 0", param_hint=option)
        result[name if sep else None] = value
    return result


def compare_outputs(actual: Mapping[str, np.ndarray], expected: Mapping[str, np.ndarray], tolerances: Tolerances,
                    *, typed: tuple[bool, bool] = (True, True)) -> dict[str, Any]:
    """Compare every expected array with the actual one of the same name.

    ``typed`` says whether each side's dtypes are real (a .json file's are not): dtypes are compared
    only when both are, and default tolerances follow the expected side's dtype when it is typed.
    """
    check_tolerance_names(tolerances, [*expected, *(name for name in actual if name not in expected)])
    reports = []
    for name, want in expected.items():
        if name in actual:
            reports.append(compare_array(name, actual[name], want, tolerances, typed=typed))
    missing = [name for name in expected if name not in actual]
    extra = [name for name in actual if name not in expected]
    passed = not missing and all(r["passed"] for r in reports)
    return {"rule": RULE, "passed": passed, "outputs": reports, "missing": missing, "extra": extra,
            "failed": sum(not r["passed"] for r in reports) + len(missing)}


def check_tolerance_names(tolerances: Tolerances, names: list[str]) -> None:
    """``--atol NAME=X`` / ``--rtol NAME=X`` must name an output compared here (a usage error otherwise)."""
    from ..suggest import closest

    for option, table in (("--atol", tolerances.atol), ("--rtol", tolerances.rtol)):
        for name in table:
            if name is not None and name not in names:
                close = closest(name, names)
                guess = f"did you mean '{close}'? " if close else ""
                raise click.BadParameter(f"there is no output named {name!r}; {guess}the outputs are: "
                                         + ", ".join(map(repr, names)), param_hint=option)


def compare_array(name: str, actual: np.ndarray, expected: np.ndarray, tolerances: Tolerances,
                  *, typed: tuple[bool, bool] = (True, True)) -> dict[str, Any]:
    """One output's report: counts, worst differences with index and values, first mismatches."""
    text = [strings.as_strings(side) if side.dtype.kind in "USO" else None for side in (actual, expected)]
    if any(side is not None for side in text):  # (numpy's <U dtypes carry a length: compared as str items)
        actual, expected = (side if converted is None else converted for side, converted in zip((actual, expected),
                                                                                                  text))
    atol, rtol, origin = tolerances.pick(name, expected.dtype if typed[1] else actual.dtype)
    report: dict[str, Any] = {
        "name": name, "passed": False,
        "actual": {"element_type": type_name(actual.dtype) if typed[0] else None, "shape": list(actual.shape)},
        "expected": {"element_type": type_name(expected.dtype) if typed[1] else None, "shape": list(expected.shape)},
        "atol": atol, "rtol": rtol, "tolerance": origin, "problems": [],
    }
    if all(typed) and actual.dtype != expected.dtype:
        report["problems"].append(f"element type {type_name(actual.dtype)} differs from {type_name(expected.dtype)}")
    if actual.shape != expected.shape:
        report["problems"].append(f"shape {shape_text(actual.shape)} differs from {shape_text(expected.shape)}")
        return report
    if actual.dtype == object or expected.dtype == object:
        return _compare_text(report, actual, expected, tolerances.max_report)
    a, e = _wide(actual), _wide(expected)
    with np.errstate(all="ignore"):
        diff = np.abs(a - e)
        ok = (diff <= atol + rtol * np.abs(e)) | (a == e) | (np.isnan(a) & np.isnan(e))
        if atol == 0 and rtol == 0 and actual.dtype.kind in "biu" and expected.dtype.kind in "biu":
            ok = actual == expected  # exact for integers beyond float64's 53 bits
        relative = np.where(e != 0, diff / np.abs(e), np.where(diff == 0, 0.0, np.inf))
    bad = ~ok
    count = int(bad.sum())
    report.update(
        mismatched=count, total=int(bad.size), mismatched_percent=100.0 * count / bad.size if bad.size else 0.0,
        nan={"actual": int(np.isnan(a).sum()), "expected": int(np.isnan(e).sum())},
        inf={"actual": int(np.isinf(a).sum()), "expected": int(np.isinf(e).sum())},
        max_abs=_worst(diff, actual, expected), max_rel=_worst(relative, actual, expected),
        first_mismatches=[_at(tuple(int(i) for i in index), actual, expected)
                          for index in np.argwhere(bad)[: tolerances.max_report]],
        would_pass=_needed(diff[bad], np.abs(e[bad]), atol, rtol) if count else None,
        levels=_levels(e, diff, bad) if count and expected.dtype.kind not in "biu" else None,
    )
    report["passed"] = count == 0 and not report["problems"]
    return report


def _compare_text(report: dict[str, Any], actual: np.ndarray, expected: np.ndarray, shown: int) -> dict[str, Any]:
    """A string output: every element equal as a Python str (no tolerance)."""
    if actual.dtype != object or expected.dtype != object:
        report["problems"].append(f"element type {type_name(actual.dtype)} differs from {type_name(expected.dtype)}")
        return report
    mine, theirs = actual.ravel().tolist(), expected.ravel().tolist()
    bad = [index for index, (a, e) in enumerate(zip(mine, theirs)) if a != e]
    report.update(
        mismatched=len(bad), total=len(mine), mismatched_percent=100.0 * len(bad) / len(mine) if mine else 0.0,
        nan={"actual": 0, "expected": 0}, inf={"actual": 0, "expected": 0}, max_abs=None, max_rel=None,
        first_mismatches=[{"index": [int(i) for i in np.unravel_index(index, actual.shape)], "actual": mine[index],
                           "expected": theirs[index]} for index in bad[:shown]],
        would_pass=None, levels=None)
    report["passed"] = not bad and not report["problems"]
    return report


def _item(value: Any) -> str:
    return repr(value) if isinstance(value, str) else number(value)


def _wide(array: np.ndarray) -> np.ndarray:
    return array.astype(np.int8 if array.dtype.kind == "b" else np.float64)


def _at(index: tuple[int, ...], actual: np.ndarray, expected: np.ndarray) -> dict[str, Any]:
    return {"index": list(index), "actual": python_values(actual[index]), "expected": python_values(expected[index])}


def _worst(values: np.ndarray, actual: np.ndarray, expected: np.ndarray) -> dict[str, Any] | None:
    """The largest finite-or-infinite value of ``values`` (NaN ignored), with its index and the two values."""
    if not values.size or np.isnan(values).all():
        return None
    index = np.unravel_index(int(np.nanargmax(values)), values.shape)
    return {"value": float(values[index]), **_at(tuple(int(i) for i in index), actual, expected)}


_MAX_LEVELS = 65536  # (16-bit quantization at most)
_SHOWN = 5  # decompression subgraphs listed by name


def _levels(expected: np.ndarray, diff: np.ndarray, bad: np.ndarray) -> dict[str, Any] | None:
    """When the expected values lie on a grid (a quantized output: at least 3 distinct values, each gap a whole
    number of the smallest, at most 65536 steps from the lowest to the highest, a step above 1e-5 of the largest
    magnitude, not a float's own spacing), its step and how many mismatches are one step or more apart."""
    distinct = np.unique(expected[np.isfinite(expected)])
    if not 3 <= distinct.size <= _MAX_LEVELS:
        return None
    gaps = np.diff(distinct)
    span = float(distinct[-1] - distinct[0])
    step = span / max(float(np.rint(span / gaps.min())), 1.0)  # (the mean step: each gap holds roundings)
    if not step > 1e-5 * np.abs(distinct[[0, -1]]).max() or np.abs(gaps / step - np.rint(gaps / step)).max() > 1e-3 \
            or np.rint(gaps / step).sum() >= _MAX_LEVELS:
        return None
    apart = np.rint(diff[bad] / step)
    on_grid = np.abs(diff[bad] - apart * step) <= step / 4
    return {"step": step, "one_level": int(np.count_nonzero(on_grid & (apart == 1))),
            "more": int(np.count_nonzero(on_grid & (apart > 1))), "off_grid": int(np.count_nonzero(~on_grid))}


def _needed(diff: np.ndarray, magnitude: np.ndarray, atol: float, rtol: float) -> dict[str, Any]:
    """The smallest atol (rtol kept) and rtol (atol kept) under which every mismatch would pass."""
    if not np.isfinite(diff).all():
        return {"atol": None, "rtol": None, "note": "a NaN or infinity differs: no tolerance passes"}
    need_atol = float(np.max(diff - rtol * magnitude))
    with np.errstate(all="ignore"):
        need_rtol = None if np.any((magnitude == 0) & (diff > atol)) else float(np.max((diff - atol) / magnitude))
    return {"atol": need_atol, "rtol": need_rtol}


def render_comparison(comparison: dict[str, Any], against: str) -> str:
    """The text report: one block per output, then a verdict line."""
    lines = []
    for report in comparison["outputs"]:
        status = "ok" if report["passed"] else "FAIL"
        spec = f"{report['actual']['element_type'] or ''}{shape_text(report['actual']['shape'])}"
        lines.append(f"{report['name']}  {spec} vs {against}  {status}")
        lines.extend(f"  problem     {problem}" for problem in report["problems"])
        if "mismatched" not in report:
            continue
        rule = "exact" if report["atol"] == 0 and report["rtol"] == 0 else RULE
        lines.append(f"  rule        {rule}  (atol={number(report['atol'])} rtol={number(report['rtol'])},"
                     f" {report['tolerance']})")
        lines.append(f"  mismatched  {report['mismatched']} of {report['total']}"
                     f" ({number(round(report['mismatched_percent'], 3))}%)")
        for key, label in (("max_abs", "max abs"), ("max_rel", "max rel")):
            worst = report[key]
            if worst is not None and (worst["value"] or report["mismatched"]):
                lines.append(f"  {label:<10}  {number(worst['value'])} at {worst['index']}: actual"
                             f" {number(worst['actual'])}, expected {number(worst['expected'])}")
        nan, inf = report["nan"], report["inf"]
        if any(nan.values()) or any(inf.values()):
            lines.append(f"  nan / inf   actual {nan['actual']} / {inf['actual']},"
                         f" expected {nan['expected']} / {inf['expected']}")
        if report["first_mismatches"]:
            shown = "; ".join(f"{m['index']} {_item(m['actual'])} vs {_item(m['expected'])}"
                              for m in report["first_mismatches"])
            lines.append(f"  first       {shown}")
        levels = report.get("levels")
        if levels:
            lines.append(f"  levels      the expected values lie on a grid of step {number(levels['step'])}"
                         f" (quantized): {levels['one_level']} mismatch(es) one level apart,"
                         f" {levels['more']} more than one, {levels['off_grid']} off the grid")
        need = report["would_pass"]
        if need:
            if need["atol"] is None:
                lines.append(f"  would pass  never: {need['note']}")
            else:
                rtol_text = f" or rtol >= {number(need['rtol'])} (atol={number(report['atol'])})" if need["rtol"] \
                    is not None else ""
                lines.append(f"  would pass  atol >= {number(need['atol'])} (rtol={number(report['rtol'])}){rtol_text}")
    ties = comparison.get("rounding_ties")
    if ties:
        lines.append("rounding ties: these layers hold values on a boundary between two levels, where an input one ulp"
                     " apart (another device, another summation order) moves them one level, and everything after"
                     " them differs (ir-run crosscheck compares every layer with an OpenVINO device):")
        lines.extend(f"  layer '{tie['layer']}' ({tie['type']}, id {tie['id']}): {tie['text']}" for tie in ties)
    found = comparison.get("decompressions")
    if found:
        lines.append(f"decompression subgraphs: {len(found)} constant output(s) computed through a narrower float type,"
                     " as the IR says (OpenVINO's reference too); OpenVINO's devices compute them in their inference"
                     " precision, up to half an ulp of the narrow type apart:")
        lines.extend(f"  layer '{d['layer']}' ({d['type']}, id {d['id']}): {d['spec']} through {d['narrow']}"
                     for d in found[:_SHOWN])
        if len(found) > _SHOWN:
            lines.append(f"  and {len(found) - _SHOWN} more")
    for name in comparison["missing"]:
        lines.append(f"{name}  missing: no such output to compare with {against}  FAIL")
    for name in comparison["extra"]:
        lines.append(f"{name}  not in {against}: not compared")
    total = len(comparison["outputs"]) + len(comparison["missing"])
    verdict = "all match" if comparison["passed"] else f"{comparison['failed']} of {total} FAILED"
    lines.append(f"comparison: {total} array(s), {verdict}")
    return "\n".join(lines)


def compare_command(actual_path: str, expected_path: str, tolerances: Tolerances) -> None:
    """``ir-run compare A B``: exit 1 when any array differs beyond its tolerance."""
    from ..errors import InputError
    from .common import EXIT_COMPARISON, emit
    from .files import read_arrays, split_key

    actual, expected = read_arrays(actual_path), read_arrays(expected_path)
    if not isinstance(actual, dict) and not isinstance(expected, dict):
        actual, expected = {"array": actual}, {"array": expected}
    elif not isinstance(actual, dict) or not isinstance(expected, dict):
        named = actual if isinstance(actual, dict) else expected
        if len(named) != 1:
            raise InputError(f"one file holds a single array, the other {len(named)} named arrays",
                             hint="pick one with FILE.npz:KEY")
        key = next(iter(named))
        actual, expected = ({key: a} if not isinstance(a, dict) else a for a in (actual, expected))
    typed = tuple(not split_key(p)[0].lower().endswith(".json") for p in (actual_path, expected_path))
    comparison = compare_outputs(actual, expected, tolerances, typed=typed)
    result: dict[str, Any] = {"actual": actual_path, "expected": expected_path, "comparison": comparison}
    if not comparison["passed"]:
        result["exit_code"] = EXIT_COMPARISON
    emit("compare", result, lambda r: render_comparison(r["comparison"], expected_path))
