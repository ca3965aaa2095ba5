"""Benchmark ir-run against OpenVINO (CPU plugin, f32 precision hint) and plain numpy, in one run.

    python -m scripts.bench                  # everything, a few minutes on 2 cores
    python -m scripts.bench --quick          # smaller sizes and budgets, under a minute
    python -m scripts.bench --only tiny select --json out.json

Groups: tiny (per-call latency and load of the quick-start model), startup (whole process to first
printed result), large (a generated 60,000-layer IR), const (a 200 MB Const), select (Select-1, 1e3..5e7
elements), gather (Gather-8, 1e3..1e7 indices, batch_dims 0 and 1), memory (peak RSS of a run, each in
a fresh process: Select, Gather, a large Const, and the operation families at 1e7 elements,
``bench_opmemory.py``), chain (per-layer cost of 1,000 Select layers), ops (the operation families:
Add, Multiply, Exp, Gelu, Transpose, Concat, ReduceSum, Softmax and MatMul at 1e5 and 1e7 elements, each with
the goal of 0.8x OpenVINO's throughput; ``bench_oprows.py``).
Prints a table of medians and ratios (ir-run / OpenVINO time: below 1 is faster),
with each case's target (a ratio to OpenVINO) and whether it is met. The large Select and Gather cases get a second
ir-run row, ", out=": ``Model.run(feeds, out=...)`` into an array allocated once, which is what
OpenVINO's column does (``share_outputs=True`` reuses its output tensor); the throughput targets of
Select 1e7, 1-D Gather 1e7 and Gather rows 1e5 are judged on those rows. ``--json`` writes the same
rows and the machine's details. Every case checks first that ir-run's outputs equal numpy's and
OpenVINO's bit for bit; any mismatch makes the script exit 1.

OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE, set on some machines, are removed from this process's
environment before numpy is imported (the script re-executes itself), never anywhere else.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

_CLEARED_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def _reexec_without_openblas_overrides() -> None:
    found = [name for name in _CLEARED_ENV if name in os.environ]
    if found:
        env = {k: v for k, v in os.environ.items() if k not in _CLEARED_ENV}
        env["IR_RUN_BENCH_CLEARED"] = ",".join(found)
        os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)  # (as run: -m scripts.NAME)


def _git_state() -> str:
    """The commit the measured tree is at, with '-dirty' when it has uncommitted changes."""
    root = Path(__file__).resolve().parent.parent
    try:
        proc = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=root, capture_output=True, text=True)
    except OSError:
        return "unknown"
    return proc.stdout.strip() or "unknown"


def _cell(row, value) -> str:
    from scripts.bench_timing import fmt_bytes, fmt_time

    return fmt_bytes(value) if row.unit == "bytes" else fmt_time(value)


def format_table(rows) -> str:
    """A GitHub-flavoured Markdown table of the rows."""
    lines = ["| group | case | ir-run | OpenVINO | numpy | ir-run/OV | target | met |",
             "|---|---|---:|---:|---:|---:|---|:-:|"]
    for r in rows:
        bound = "> " if r.ir_lower_bound else ""
        ratio = "-" if r.ratio is None else f"{bound}{r.ratio:.4g}"
        met = {True: "yes", False: "**NO**", None: ""}[r.met]
        lines.append(f"| {r.group} | {r.case} | {bound}{_cell(r, r.ir)} | {_cell(r, r.ov)} | {_cell(r, r.numpy)} |"
                     f" {ratio} | {r.target} | {met} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    _reexec_without_openblas_overrides()
    from scripts import bench_cases

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and time budgets (under a minute)")
    parser.add_argument("--json", type=Path, help="write the rows and the machine's details here")
    parser.add_argument("--only", nargs="+", choices=list(bench_cases.GROUPS), help="run only these groups")
    parser.add_argument("--workdir", type=Path, help="keep the generated IRs here (default: a temporary folder)")
    args = parser.parse_args(argv)
    names = args.only or list(bench_cases.GROUPS)
    with tempfile.TemporaryDirectory(prefix="ir-run-bench-") as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        ctx = bench_cases.Context(quick=args.quick, workdir=workdir)
        started = datetime.datetime.now(datetime.timezone.utc)
        load_before = [round(x, 2) for x in os.getloadavg()]
        rows = bench_cases.run_groups(ctx, names)
        seconds = (datetime.datetime.now(datetime.timezone.utc) - started).total_seconds()
    import numpy
    import openvino

    from scripts.bench_timing import cpu_name

    meta = {
        "date": started.isoformat(timespec="seconds"),
        "mode": "quick" if args.quick else "full",
        "seconds": round(seconds, 1),
        "git": _git_state(),
        "cpu": cpu_name(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "openvino": openvino.__version__,
        "openblas_env_cleared": os.environ.get("IR_RUN_BENCH_CLEARED", ""),
        "load_average_before": load_before,
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        **ctx.meta,
    }
    print(f"\nir-run {meta['git']}; {meta['cpu']}, {meta['cpu_count']} cores; Python {meta['python']},"
          f" numpy {meta['numpy']},"
          f" OpenVINO {meta['openvino']} (CPU, f32 hint, {meta.get('openvino_threads', '?')} threads,"
          f" {meta.get('openvino_streams', '?')} stream(s)); {meta['mode']} run, {meta['seconds']} s;"
          f" load average {meta['load_average_before'][0]} before, {meta['load_average_after'][0]} after\n")
    print(format_table(rows))
    notes = [f"- {r.group} / {r.case}: {r.note}" for r in rows if r.note]
    if notes:
        print("\n" + "\n".join(notes))
    missed = [f"{r.group}: {r.case}" for r in rows if r.met is False]
    print(f"\ntargets met: {sum(r.met is True for r in rows)}, missed: {len(missed)}")
    if args.json:
        args.json.write_text(json.dumps({"meta": meta, "rows": bench_cases.rows_json(rows),
                                         "exactness_failures": ctx.failures}, indent=1))
    if ctx.failures:
        print("\nEXACTNESS FAILURES:\n  " + "\n  ".join(ctx.failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
