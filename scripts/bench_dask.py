"""Rows per second of a model run in memory, on Dask's local threads, and on a 2-worker LocalCluster.

    python -m scripts.bench_dask                 # 200,000 rows x 256 columns (about 250 MB of inputs)
    python -m scripts.bench_dask --rows 50000 --repeat 2

The model: Select(cond bool[?,C], then f32[?,C], else f32[C] shared) -> Gather of 16 columns -> Convert
to f16, with both the Select's and the Convert's outputs returned. Rows are timed for:

- numpy: the same computation written with np.where / np.take / astype (a reference, not ir-run);
- OpenVINO: the same IR on its CPU plugin, whole data at once (when the package is installed);
- in-memory: ``Model.run`` on the whole data;
- threads: ``ir_runner.dask.run`` on the same numpy arrays, computed on the threads scheduler into
  numpy arrays, for a few block sizes;
- cluster: a LocalCluster of 2 worker processes (1 thread each), inputs memory-mapped from .npy files
  (each worker maps them), outputs gathered back into this process.

Every result is checked bit for bit against the in-memory run first (exit 1 on a mismatch). The goal:
threads >= 0.8x in-memory on data that fits. OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE, if set,
are removed from this script's own environment (it re-executes itself), never anywhere else.
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


def _reexec_without_openblas_overrides() -> None:
    found = [name for name in _CLEARED_ENV if name in os.environ]
    if found:
        env = {k: v for k, v in os.environ.items() if k not in _CLEARED_ENV}
        print(f"(removed {', '.join(found)} from this benchmark's environment)", file=sys.stderr)
        os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)  # (as run: -m scripts.NAME)


def build_model(folder: Path, columns: int) -> Path:
    import numpy as np

    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder("bench_dask")
    cond = b.parameter("cond", "boolean", f"?,{columns}")
    then = b.parameter("then", "f32", f"?,{columns}")
    other = b.parameter("else", "f32", f"{columns}")
    sel = b.layer("Select", "opset1", [cond, then, other], out_specs=[("f32", f"?,{columns}")], out_names=["selected"])
    idx = b.const("idx", np.arange(0, columns, columns // 16, dtype=np.int64))
    axis = b.const("axis", np.array(1, dtype=np.int64))
    gather = b.layer("Gather", "opset8", [sel, idx, axis], out_specs=[("f32", "?,16")])
    b.result(b.layer("Convert", "opset1", [gather], attrs={"destination_type": "f16"}, out_specs=[("f16", "?,16")],
                     out_names=["picked"]))
    b.result(sel)
    return b.write(folder)


def timed(function, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def same(a, b) -> bool:
    import numpy as np

    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a.view(np.uint8), b.view(np.uint8))


def main() -> int:
    _reexec_without_openblas_overrides()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--columns", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chunks", default="8192,32768,65536", help="rows per block for the threads scheduler")
    args = parser.parse_args()

    import dask
    import numpy as np
    from distributed import Client, LocalCluster

    import ir_runner
    import ir_runner.dask as ird

    folder = Path(tempfile.mkdtemp(prefix="bench-dask-", dir="/dev/shm" if os.access("/dev/shm", os.W_OK) else None))
    path = build_model(folder, args.columns)
    model = ir_runner.load(path)
    rng = np.random.default_rng(0)
    feeds = {"cond": rng.random((args.rows, args.columns)) > 0.5,
             "then": rng.standard_normal((args.rows, args.columns), dtype=np.float32),
             "else": rng.standard_normal(args.columns, dtype=np.float32)}
    megabytes = sum(a.nbytes for a in feeds.values()) / 1e6
    print(f"{args.rows:,} rows x {args.columns} columns: {megabytes:,.0f} MB of inputs; {os.cpu_count()} cores;"
          f" median of {args.repeat}")
    rows_per_second: list[tuple[str, float, str]] = []
    base_seconds, expected = timed(lambda: model.run(feeds), args.repeat)

    idx = np.arange(0, args.columns, args.columns // 16)

    def with_numpy():
        selected = np.where(feeds["cond"], feeds["then"], feeds["else"])
        return {"picked": np.take(selected, idx, axis=1).astype(np.float16), "selected": selected}

    seconds, got = timed(with_numpy, args.repeat)
    check = all(same(got[k], expected[k]) for k in expected)
    rows_per_second.append(("numpy (np.where, np.take)", args.rows / seconds, "" if check else "DIFFERENT"))
    try:
        import openvino as ov

        compiled = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        request = compiled.create_infer_request()
        seconds, _ = timed(lambda: request.infer(feeds), args.repeat)
        rows_per_second.append(("OpenVINO CPU, whole data", args.rows / seconds, ""))
    except ImportError:
        pass
    rows_per_second.append(("ir-run in memory (Model.run)", args.rows / base_seconds, ""))
    failed = not check

    for chunk in (int(c) for c in args.chunks.split(",")):
        outputs = ird.run(model, feeds, chunk=chunk)
        seconds, got = timed(lambda outputs=outputs: dict(zip(outputs, dask.compute(*outputs.values(),
                                                                                    scheduler="threads"))),
                             args.repeat)
        ok = all(same(got[k], expected[k]) for k in expected)
        failed |= not ok
        rows_per_second.append((f"ir-run dask threads, {chunk:,} rows/block", args.rows / seconds,
                                "" if ok else "DIFFERENT"))

    for name, value in feeds.items():
        np.save(folder / f"{name}.npy", value)
    mapped = {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in feeds}
    chunk = int(args.chunks.split(",")[-1])
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        outputs = ird.run(path, mapped, chunk=chunk)
        client.gather(client.compute(list(outputs.values())))  # warm: each worker loads the model once
        seconds, got = timed(lambda: dict(zip(outputs, client.gather(client.compute(list(outputs.values()))))),
                             args.repeat)
    ok = all(same(got[k], expected[k]) for k in expected)
    failed |= not ok
    rows_per_second.append((f"ir-run LocalCluster 2x1, {chunk:,} rows/block", args.rows / seconds,
                            "" if ok else "DIFFERENT"))

    base = args.rows / base_seconds
    print(f"{'run':<45} {'rows/s':>12} {'x in-memory':>12}")
    for label, rate, note in rows_per_second:
        print(f"{label:<45} {rate:>12,.0f} {rate / base:>12.2f} {note}")
    for item in folder.iterdir():
        item.unlink()
    folder.rmdir()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
