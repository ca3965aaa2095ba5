"""Benchmark Transpose-1 and Concat-1 in ir-run against numpy and OpenVINO's CPU plugin, in one run.

    python scripts/bench_shape.py            # 1e5 and 1e7 elements
    python scripts/bench_shape.py --quick    # fewer repeats

Rows: Transpose of an f32 [a, b, c] tensor by (0, 2, 1) and (2, 1, 0), Concat of two f32 halves along the
first and the last axis, at 1e5 and 1e7 output elements. Each row prints the median time of ir-run's
``Model.run``, of the numpy expression (a contiguous result), and of OpenVINO CPU (f32 precision hint,
``share_outputs=True``), and the ratio ir-run / OpenVINO (below 1 is faster). Outputs are checked equal
first. ir-run returns a Transpose output in its input's memory order (the plan copies the view with numpy's
order 'K'), so the column "ir-run C" also makes it C-contiguous, which is what OpenVINO returns.
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are removed from this process's environment only (the
script re-executes itself without them), never anywhere else.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

_CLEARED_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")

if any(name in os.environ for name in _CLEARED_ENV):
    env = {k: v for k, v in os.environ.items() if k not in _CLEARED_ENV}
    env["IR_RUN_BENCH_CLEARED"] = ",".join(n for n in _CLEARED_ENV if n in os.environ)
    os.execve(sys.executable, [sys.executable, *sys.argv], env)

import numpy as np  # noqa: E402
import openvino as ov  # noqa: E402
from openvino import opset13  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import ir_runner  # noqa: E402


def _median_time(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _cases(n: int):
    a = 10 if n < 10**6 else 100
    b = int(round((n // a) ** 0.5))
    c = n // (a * b)
    shape = (a, b, c)
    for order in ((0, 2, 1), (2, 1, 0)):
        x = opset13.parameter(shape, ov.Type.f32, name="x")
        node = opset13.transpose(x, opset13.constant(np.array(order, np.int64)))
        yield (f"Transpose {list(shape)} {order}", [x], node, lambda arrays, order=order: arrays[0].transpose(order)
               .copy(), [shape])
    for axis in (0, 2):
        half = list(shape)
        half[axis] //= 2
        p, q = (opset13.parameter(half, ov.Type.f32, name=name) for name in ("p", "q"))
        node = opset13.concat([p, q], axis)
        yield (f"Concat 2x{half} axis {axis}", [p, q], node, lambda arrays, axis=axis: np.concatenate(arrays, axis),
               [tuple(half), tuple(half)])


def _timings(model, feeds, numpy_fn, arrays, request, repeats: int) -> tuple[float, float, float, float]:
    """Median seconds of ir-run, ir-run made C-contiguous, numpy and OpenVINO CPU."""
    return (_median_time(lambda: model.run(feeds), repeats),
            _median_time(lambda: np.ascontiguousarray(list(model.run(feeds).values())[0]), repeats),
            _median_time(lambda: numpy_fn(arrays), repeats),
            _median_time(lambda: request.infer(arrays, share_outputs=True), repeats))


def _print_row(name: str, size: int, times: tuple[float, float, float, float]) -> None:
    t_ir, t_c, t_np, t_ov = times
    print(f"{name:44} {size:>9.0e} {t_ir * 1e3:>10.3f} {t_c * 1e3:>11.3f} {t_np * 1e3:>9.3f}"
          f" {t_ov * 1e3:>11.3f} {t_ir / t_ov:>6.2f} {t_c / t_ov:>6.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    cleared = os.environ.get("IR_RUN_BENCH_CLEARED")
    print(f"OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE: {'unset for this run (' + cleared + ')' if cleared else 'not set'}")
    core = ov.Core()
    rng = np.random.default_rng(0)
    print(f"{'case':44} {'elements':>9} {'ir-run ms':>10} {'ir-run C ms':>11} {'numpy ms':>9} {'OpenVINO ms':>11}"
          f" {'ir/OV':>6} {'C/OV':>6}")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for n in (10**5, 10**7):
            repeats = (5 if args.quick else 15) if n > 10**6 else (50 if args.quick else 200)
            for k, (name, params, node, numpy_fn, shapes) in enumerate(_cases(n)):
                path = Path(tmp) / f"m{n}_{k}.xml"
                ov.save_model(ov.Model([node.output(0)], params), str(path))
                arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
                feeds = {p.get_friendly_name(): a for p, a in zip(params, arrays)}
                model = ir_runner.load(str(path))
                compiled = core.compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
                request = compiled.create_infer_request()
                ours = list(model.run(feeds).values())[0]
                theirs = request.infer(arrays, share_outputs=True)[0]
                if not (np.array_equal(ours, numpy_fn(arrays)) and np.array_equal(ours, theirs)):
                    print(f"{name}: outputs differ")
                    failed = True
                    continue
                _print_row(name, ours.size, _timings(model, feeds, numpy_fn, arrays, request, repeats))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
