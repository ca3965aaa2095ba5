"""Benchmark the elementwise operations against OpenVINO (CPU plugin, f32 hint) and plain numpy, in one run.

    python scripts/bench_ops.py              # Add and Multiply with broadcasting, Exp, Gelu; 1e5 and 1e7 elements
    python scripts/bench_ops.py --quick      # smaller budgets
    python scripts/bench_ops.py --json out.json

Each case is a one-layer IR written by OpenVINO (Parameters in, Result out). Columns as in ``bench.py``:
medians of interleaved rounds; OpenVINO runs ``infer(share_inputs=True, share_outputs=True)`` (it reuses its
output tensor), so each case also has an ir-run row ``out=`` (``Model.run(feeds, out=...)`` into an array
allocated once) on which the target (throughput >= 0.8x OpenVINO's) is judged. The numpy column is what a
numpy user writes (``a + b``, ``np.exp(x)``; Gelu: numpy has no erf, so its tanh form). Before timing,
ir-run's Add, Multiply and Exp are checked bit for bit against numpy (they are the same operations), and
the distance of OpenVINO's CPU results from ir-run's (the reference's values) is printed in ULPs.

OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE, set on some machines, are removed from this process's environment
before numpy is imported (the script re-executes itself), never anywhere else.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import _reexec_without_openblas_overrides, format_table  # noqa: E402

TARGET = 0.8  # throughput of ir-run relative to OpenVINO's


def _cases(n: int):
    """(label, op, input shapes, numpy function) for about ``n`` output elements."""
    rows = 1000 if n >= 10**6 else 100
    cols = n // rows
    return [
        (f"Add [{rows},{cols}] + [{cols}]", "add", [(rows, cols), (cols,)], lambda a, b: a + b),
        (f"Multiply [{rows},{cols}] * [{rows},1]", "multiply", [(rows, cols), (rows, 1)], lambda a, b: a * b),
        (f"Exp [{n}]", "exp", [(n,)], lambda x: __import__("numpy").exp(x)),
        (f"Gelu erf [{n}]", "gelu", [(n,)], _numpy_gelu_tanh),
    ]


def _numpy_gelu_tanh(x):
    import numpy as np

    c = np.float32(math.sqrt(2 / math.pi))
    return np.float32(0.5) * x * (np.float32(1) + np.tanh(c * (x + np.float32(0.044715) * x * x * x)))


def _write(op: str, shapes, workdir: Path) -> Path:
    import openvino as ov
    from openvino import opset13

    params = [opset13.parameter(list(s), ov.Type.f32, name=f"in{i}") for i, s in enumerate(shapes)]
    node = opset13.gelu(params[0], "erf") if op == "gelu" else getattr(opset13, op)(*params)
    path = workdir / f"{op}.xml"
    ov.save_model(ov.Model([node.output(0)], params, op), str(path), compress_to_fp16=False)
    return path


def _measure(core, label: str, xml: Path, feeds: dict, reference, budget: float):
    """Times of ir-run (fresh output and out=), OpenVINO and numpy; whether ir-run equals numpy bit for bit
    (None: not comparable); the largest ULP distance of OpenVINO's CPU result from ir-run's."""
    import numpy as np
    from bench_timing import medians, same_bits

    import ir_runner
    from tests.helpers.optest import ulp_distance

    model = ir_runner.load(str(xml))
    request = core.compile_model(str(xml), "CPU", {"INFERENCE_PRECISION_HINT": "f32"}).create_infer_request()
    mine = next(iter(model.run(feeds).values()))
    theirs = np.asarray(next(iter(request.infer(feeds, share_inputs=True, share_outputs=True).values())))
    exact = None if "Gelu" in label else same_bits(mine, reference(*feeds.values()))
    ulps = int(ulp_distance(theirs, mine).max())
    out = [np.empty_like(mine)]
    times = medians({
        "ir": lambda: model.run(feeds),
        "ir_out": lambda: model.run(feeds, out=out),
        "ov": lambda: request.infer(feeds, share_inputs=True, share_outputs=True),
        "np": lambda: reference(*feeds.values()),
    }, budget=budget, min_reps=5)
    return times, exact, ulps


def main(argv: list[str] | None = None) -> int:
    _reexec_without_openblas_overrides()
    import os
    import tempfile

    import numpy as np
    import openvino as ov
    from bench_cases import throughput_target, time_row

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller time budgets")
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args(argv)
    core = ov.Core()
    limit, target = throughput_target(TARGET)
    rows, failures, notes = [], [], []
    rng = np.random.default_rng(0)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="ir-run-bench-ops-") as tmp:
        for n in (10**5, 10**7):
            for label, op, shapes, reference in _cases(n):
                print(label, file=sys.stderr, flush=True)
                xml = _write(op, shapes, Path(tmp))
                feeds = {f"in{i}": rng.standard_normal(s).astype(np.float32) for i, s in enumerate(shapes)}
                t, exact, ulps = _measure(core, label, xml, feeds, reference, 0.3 if args.quick else 1.5)
                if exact is False:
                    failures.append(f"{label}: ir-run differs from numpy")
                notes.append(f"- {label}: OpenVINO CPU is within {ulps} ULP of ir-run (the reference's values)")
                rows.append(time_row("elementwise", label, t["ir"], t["ov"], t["np"]))
                rows.append(time_row("elementwise", f"{label}, out=", t["ir_out"], t["ov"], t["np"],
                                     max_ratio=limit, target=target))
    cleared = os.environ.get("IR_RUN_BENCH_CLEARED", "")
    print(f"\nnumpy {np.__version__}, OpenVINO {ov.__version__}, {os.cpu_count()} cores; load average"
          f" {load_before:.2f} before, {os.getloadavg()[0]:.2f} after; OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE"
          f" {'unset for this run (' + cleared + ')' if cleared else 'not set in this environment'}\n")
    print(format_table(rows))
    print("\n" + "\n".join(notes))
    print(f"\ntargets met: {sum(r.met is True for r in rows)}, missed: {sum(r.met is False for r in rows)}")
    if args.json:
        from dataclasses import asdict

        args.json.write_text(json.dumps({"rows": [asdict(r) for r in rows], "failures": failures}, indent=1))
    if failures:
        print("\nEXACTNESS FAILURES:\n  " + "\n  ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
