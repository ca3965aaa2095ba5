"""ir-run on one thread against its default thread count, per network, in one process.

    python -m scripts.bench_threads                                # the deployed CNNs (make_cnn_models.py)
    python -m scripts.bench_threads efficientnet_b0 --rounds 40
    python -m scripts.bench_threads --dir ~/.cache/ir-run-cnn mobilenet_v3_small

The thread count is switched between runs of one loaded model (``parallel._WORKERS``; the kernels' splits
are decided by cost, never by the thread count, so both settings run the same pieces), 1 and N alternating
in every round so that the machine's load hits both alike. Prints per network the median wall time of
``Model.run`` and its CPU time (``time.process_time``: the overhead of threads shows as CPU time above
the 1-thread run's), the speed-up of the medians, the fastest runs, whether both settings gave the same
bits, and the load average. OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are removed from this process's
environment (the script re-executes itself without them).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

_CLEARED_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")

if any(name in os.environ for name in _CLEARED_ENV):
    env = {k: v for k, v in os.environ.items() if k not in _CLEARED_ENV}
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)  # (as run: -m scripts.NAME)

import numpy as np  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner import parallel  # noqa: E402

CNN = Path.home() / ".cache" / "ir-run-cnn"
NAMES = ("efficientnet_b0", "mobilenet_v3_small", "mobilenet_v3_large", "regnet_y_400mf", "convnext_tiny",
         "lraspp_mobilenet_v3", "deeplabv3_mobilenet_v3")


def measure(folder: Path, rounds: int, threads: int) -> dict:
    """Interleaved runs of the network in ``folder`` (model.xml, inputs.npz) on 1 and ``threads`` threads."""
    model = ir_runner.load(str(folder / "model.xml"))
    feeds = dict(np.load(folder / "inputs.npz"))
    wall: dict[int, list[float]] = {1: [], threads: []}
    cpu: dict[int, list[float]] = {1: [], threads: []}
    outputs = {}
    saved = parallel._WORKERS
    try:
        for count in wall:  # (warm-up: the plan, the heap, the pool's threads)
            parallel._WORKERS = count
            outputs[count] = model.run(feeds)
        for _ in range(rounds):
            for count in wall:
                parallel._WORKERS = count
                start, start_cpu = time.perf_counter(), time.process_time()
                model.run(feeds)
                wall[count].append(time.perf_counter() - start)
                cpu[count].append(time.process_time() - start_cpu)
    finally:
        parallel._WORKERS = saved
    same = all(outputs[1][name].tobytes() == outputs[threads][name].tobytes() for name in outputs[1])
    return {"wall": {k: statistics.median(v) for k, v in wall.items()},
            "cpu": {k: statistics.median(v) for k, v in cpu.items()},
            "best": {k: min(v) for k, v in wall.items()}, "same": same}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help=f"networks in --dir (default: those of {', '.join(NAMES)} found)")
    parser.add_argument("--dir", type=Path, default=CNN, help="folder of NAME/{model.xml,inputs.npz}")
    parser.add_argument("--rounds", type=int, default=20, help="runs on each setting (default 20)")
    parser.add_argument("--threads", type=int, default=max(parallel.worker_count(), 2),
                        help="the other setting (default: the cores this process may use, at least 2)")
    args = parser.parse_args()
    names = args.names or [n for n in NAMES if (args.dir / n / "model.xml").exists()]
    if not names:
        print(f"no networks in {args.dir} (make them with python -m scripts.make_cnn_models)", file=sys.stderr)
        return 1
    n = args.threads
    print(f"load average {os.getloadavg()[0]:.2f}; medians of {args.rounds} interleaved rounds, ms")
    print(f"| network | 1 thread | cpu | {n} threads | cpu | speed-up | fastest 1 / {n} | same bits |")
    print("|---|---:|---:|---:|---:|---:|---:|:-:|")
    for name in names:
        r = measure(args.dir / name, args.rounds, n)
        w, c, b = r["wall"], r["cpu"], r["best"]
        print(f"| {name} | {w[1] * 1e3:.2f} | {c[1] * 1e3:.2f} | {w[n] * 1e3:.2f} | {c[n] * 1e3:.2f} | "
              f"{w[1] / w[n]:.2f} | {b[1] * 1e3:.2f} / {b[n] * 1e3:.2f} | {'yes' if r['same'] else '**NO**'} |",
              flush=True)
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
