"""Benchmark ReduceSum (inner and outer axis), Softmax (last axis) and MatMul (512x512 and a batched
[8,128,64]x[8,64,128]) in ir-run against OpenVINO CPU (f32 precision hint, reused output tensors) and
numpy, in one run, at 1e5 and 1e7 elements where the case has a size.

    python scripts/bench_reduce.py [--quick]

Prints median times and the throughput ratio OpenVINO time / ir-run time (the goal is at least 0.8).
Each case first checks that ir-run agrees with numpy (within float tolerance). OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE are removed from this process's environment before numpy is imported (the script
re-executes itself), never anywhere else; the output says whether they were set.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import _reexec_without_openblas_overrides  # noqa: E402


def _cases(quick: bool):
    import numpy as np
    from openvino import opset13 as ops

    def reduce_case(rows: int, cols: int, axis: int):
        def build():
            x = ops.parameter([rows, cols], np.float32, name="x")
            return ops.reduce_sum(x, ops.constant(np.array([axis], np.int64)), False), [x]
        return (f"ReduceSum [{rows},{cols}] axis {axis}", build, {"x": ((rows, cols),)},
                lambda f: np.add.reduce(f["x"], axis=axis))

    def softmax_case(rows: int, cols: int):
        def build():
            x = ops.parameter([rows, cols], np.float32, name="x")
            return ops.softmax(x, -1), [x]

        def numpy_softmax(f):
            e = np.exp(f["x"] - f["x"].max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)
        return f"Softmax [{rows},{cols}] last axis", build, {"x": ((rows, cols),)}, numpy_softmax

    def matmul_case(a_shape, b_shape):
        def build():
            a = ops.parameter(list(a_shape), np.float32, name="a")
            b = ops.parameter(list(b_shape), np.float32, name="b")
            return ops.matmul(a, b, False, False), [a, b]
        return (f"MatMul {list(a_shape)}x{list(b_shape)}", build, {"a": (a_shape,), "b": (b_shape,)},
                lambda f: np.matmul(f["a"], f["b"]))

    sizes = [(100, 1000)] + ([] if quick else [(10000, 1000)])
    cases = []
    for rows, cols in sizes:
        cases += [reduce_case(rows, cols, 1), reduce_case(rows, cols, 0), softmax_case(rows, cols)]
    cases += [matmul_case((512, 512), (512, 512)), matmul_case((8, 128, 64), (8, 64, 128))]
    return cases


def main(argv: list[str] | None = None) -> int:
    _reexec_without_openblas_overrides()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="only the 1e5-element sizes, shorter budgets")
    args = parser.parse_args(argv)
    import numpy as np
    import openvino as ov
    from bench_timing import medians
    from openvino import save_model

    import ir_runner

    cleared = os.environ.get("IR_RUN_BENCH_CLEARED", "")
    print(f"OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE cleared for this run: {cleared or 'none were set'}")
    core = ov.Core()
    rng = np.random.default_rng(0)
    print("| case | ir-run | ir-run out= | OpenVINO | numpy | OV/ir-run (out=) |")
    print("|---|---:|---:|---:|---:|---:|")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for label, build, inputs, reference in _cases(args.quick):
            node, params = build()
            xml = Path(tmp) / "m.xml"
            save_model(ov.Model([node.output(0)], params), str(xml), compress_to_fp16=False)
            feeds = {name: rng.standard_normal(shape).astype(np.float32) for name, (shape,) in inputs.items()}
            model = ir_runner.load(str(xml))
            name = next(iter(model.run(feeds)))
            expected = reference(feeds)
            got = model.run(feeds)[name]
            if not np.allclose(got, expected, rtol=1e-4, atol=1e-3):
                print(f"{label}: ir-run differs from numpy")
                failed = True
            buffers = {name: np.empty_like(expected)}
            request = core.compile_model(str(xml), "CPU", {"INFERENCE_PRECISION_HINT": "f32"}).create_infer_request()
            t = medians({
                "ir": lambda m=model, f=feeds: m.run(f),
                "ir_out": lambda m=model, f=feeds, o=buffers: m.run(f, out=o),
                "ov": lambda r=request, f=feeds: r.infer(f, share_inputs=True, share_outputs=True),
                "np": lambda ref=reference, f=feeds: ref(f),
            }, budget=0.5 if args.quick else 2.0, min_reps=5)
            ms = {k: v / 1e6 for k, v in t.items()}
            print(f"| {label} | {ms['ir']:.3f} ms | {ms['ir_out']:.3f} ms | {ms['ov']:.3f} ms | {ms['np']:.3f} ms |"
                  f" {ms['ov'] / ms['ir']:.2f} ({ms['ov'] / ms['ir_out']:.2f}) |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
