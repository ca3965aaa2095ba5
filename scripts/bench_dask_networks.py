"""Rows per second of whole networks run in memory and on Dask: a CNN and a transformer.

    python -m scripts.bench_dask_networks                      # resnet_block, vit and bert of models/real
    python -m scripts.bench_dask_networks --zoo resnet50       # also a zoo CNN reshaped to a dynamic batch
    python -m scripts.bench_dask_networks --rows 2048 --repeat 3

Each network's sample inputs (models/real/NAME/inputs.npz) are repeated to ``--rows`` rows (floats with
noise, integers shuffled within each row) and timed for: ``Model.run`` on the whole data; ``ir_runner.dask``
on the threads scheduler for a few block sizes; a LocalCluster of 2 worker processes (1 thread each,
outputs gathered back here, after one warm-up run that loads the model in each worker). Every chunked
result is compared with the in-memory run: bit for bit, or the largest difference where MatMul's BLAS
kernels decide the last bits (docs/scale.md). OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE, if set, are removed
from this script's own environment (it re-executes itself), never anywhere else.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from scripts.bench_dask import _reexec_without_openblas_overrides, timed  # noqa: E402

REAL = Path(__file__).resolve().parent.parent / "models" / "real"


def zoo_dynamic(name: str, folder: Path) -> tuple[Path, dict]:
    """A zoo CNN (tests/helpers/zoo.py) reshaped by OpenVINO to a dynamic batch, and one input row."""
    import numpy as np
    import openvino as ov

    from tests.helpers.zoo import zoo_ir

    source = zoo_ir(name)
    model = ov.Core().read_model(str(source))
    model.reshape({model.inputs[0].get_any_name(): ov.PartialShape([-1, 3, 224, 224])})
    ov.save_model(model, str(folder / f"{name}.xml"), compress_to_fp16=False)
    return folder / f"{name}.xml", dict(np.load(source.parent / "inputs.npz"))


def bench(label: str, xml: Path, sample: dict, rows: int, repeat: int, chunks: list[int]) -> None:
    import dask
    import numpy as np
    from distributed import Client, LocalCluster

    import ir_runner
    import ir_runner.dask as ird
    from tests.helpers.dask_models import grown_from

    model = ir_runner.load(str(xml))
    feeds = grown_from(sample, rows)
    base, expected = timed(lambda: model.run(feeds), repeat)
    lines = [("in memory (Model.run)", rows / base, "")]

    def difference(got: dict) -> str:
        worst = max(float(np.nanmax(np.abs(got[k].astype(np.float64) - expected[k]), initial=0)) for k in expected)
        same = all(np.array_equal(got[k].view(np.uint8), expected[k].view(np.uint8)) for k in expected)
        return "bit for bit" if same else f"max |diff| {worst:.2g}"

    for chunk in chunks:
        outputs = ird.run(model, feeds, chunk=chunk)
        seconds, got = timed(lambda o=outputs: dict(zip(o, dask.compute(*o.values(), scheduler="threads"))), repeat)
        lines.append((f"dask threads, {chunk:,} rows/block", rows / seconds, difference(got)))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        outputs = ird.run(str(xml), feeds, chunk=chunks[-1])
        client.gather(client.compute(list(outputs.values())))
        seconds, got = timed(lambda: dict(zip(outputs, client.gather(client.compute(list(outputs.values()))))),
                             repeat)
        lines.append((f"LocalCluster 2x1, {chunks[-1]:,} rows/block", rows / seconds, difference(got)))
    print(f"\n{label}: {rows:,} rows, median of {repeat}")
    print(f"{'run':<38} {'rows/s':>10} {'x in-memory':>12}  result")
    for name, rate, note in lines:
        print(f"{name:<38} {rate:>10,.1f} {rate * base / rows:>12.2f}  {note}")


def main() -> int:
    _reexec_without_openblas_overrides()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--networks", default="resnet_block,vit,bert", help="models/real networks")
    parser.add_argument("--zoo", default="", help="zoo CNNs to add, reshaped to a dynamic batch (needs onnx)")
    parser.add_argument("--rows", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chunks", default="64,256", help="rows per block")
    args = parser.parse_args()
    import numpy as np

    chunks = [int(c) for c in args.chunks.split(",")]
    print(f"{os.cpu_count()} cores; OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset for this run")
    for name in filter(None, args.networks.split(",")):
        bench(name, REAL / name / "model.xml", dict(np.load(REAL / name / "inputs.npz")), args.rows, args.repeat,
              chunks)
    with tempfile.TemporaryDirectory(prefix="bench-dask-networks-") as folder:
        for name in filter(None, args.zoo.split(",")):
            xml, sample = zoo_dynamic(name, Path(folder))
            bench(f"{name} (zoo, batch made dynamic)", xml, sample, max(args.rows // 16, 8), args.repeat,
                  [max(c // 16, 2) for c in chunks])
    return 0


if __name__ == "__main__":
    sys.exit(main())
