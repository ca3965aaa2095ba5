"""Convolution and pooling latency: ir-run against OpenVINO CPU (compiled model, INFERENCE_PRECISION_HINT=f32)
and a plain numpy baseline (im2col by sliding_window_view + einsum), interleaved in the same run.

    python scripts/bench_conv.py [--repeat 30]

Cases: a ResNet-style 3x3 convolution [1,64,56,56] -> 64, a 1x1 convolution 64 -> 256, a depthwise 3x3
GroupConvolution [1,64,56,56], a 3x3/2 MaxPool [1,64,112,112]. Each case checks first that ir-run is within
the op's bound of OpenVINO's result. OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are removed from this process's
environment only (the script re-executes itself before numpy is imported), and the output says so.
"""

from __future__ import annotations

import os
import sys

_CLEARED = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
if any(name in os.environ for name in _CLEARED):
    env = {k: v for k, v in os.environ.items() if k not in _CLEARED}
    env["IR_RUN_BENCH_CLEARED"] = ",".join(n for n in _CLEARED if n in os.environ)
    os.execve(sys.executable, [sys.executable, *sys.argv], env)

import argparse  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import openvino as ov  # noqa: E402
from openvino import opset8 as o8  # noqa: E402

import ir_runner  # noqa: E402


def _numpy_conv(x, w, pad, groups=1):
    xp = np.pad(x, [(0, 0), (0, 0), (pad, pad), (pad, pad)])
    k = w.shape[-1]
    view = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(2, 3))
    n, c, h, wd = view.shape[:4]
    view = view.reshape(n, groups, c // groups, h, wd, k, k)
    wg = w.reshape(groups, w.shape[0] // groups, c // groups, k, k)
    return np.einsum("ngchwij,gocij->ngohw", view, wg, optimize=True).reshape(n, w.shape[0], h, wd)


def _numpy_maxpool(x):
    view = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))[:, :, ::2, ::2]
    return view.max(axis=(4, 5))


def _cases(rng):
    x = rng.standard_normal((1, 64, 56, 56)).astype(np.float32)
    big = rng.standard_normal((1, 64, 112, 112)).astype(np.float32)
    w3 = (rng.standard_normal((64, 64, 3, 3)) * 0.05).astype(np.float32)
    w1 = (rng.standard_normal((256, 64, 1, 1)) * 0.1).astype(np.float32)
    wd = (rng.standard_normal((64, 1, 1, 3, 3)) * 0.3).astype(np.float32)

    def conv3(p):
        return o8.convolution(p, o8.constant(w3), [1, 1], [1, 1], [1, 1], [1, 1])

    def conv1(p):
        return o8.convolution(p, o8.constant(w1), [1, 1], [0, 0], [0, 0], [1, 1])

    def depthwise(p):
        return o8.group_convolution(p, o8.constant(wd), [1, 1], [1, 1], [1, 1], [1, 1])

    def maxpool(p):
        return o8.max_pool(p, [2, 2], [1, 1], [0, 0], [0, 0], [3, 3]).output(0)

    return [
        ("conv 3x3 [1,64,56,56] -> 64", x, conv3, lambda: _numpy_conv(x, w3, 1), 64 * 9),
        ("conv 1x1 [1,64,56,56] -> 256", x, conv1, lambda: _numpy_conv(x, w1, 0), 64),
        ("depthwise 3x3 [1,64,56,56]", x, depthwise, lambda: _numpy_conv(x, wd.reshape(64, 1, 3, 3), 1, 64), 9),
        ("maxpool 3x3/2 [1,64,112,112]", big, maxpool, lambda: _numpy_maxpool(big), 0),
    ]


def _median(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    cleared = os.environ.get("IR_RUN_BENCH_CLEARED")
    state = f"unset for this run (were set: {cleared})" if cleared else "not set"
    print(f"OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE: {state}")
    print(f"cores: {os.cpu_count()}, numpy {np.__version__}, openvino {ov.__version__}\n")
    print("| case | ir-run | OpenVINO CPU | numpy | ir-run / OpenVINO |")
    print("|---|---|---|---|---|")
    core = ov.Core()
    rng = np.random.default_rng(0)
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for i, (title, x, build, baseline, k) in enumerate(_cases(rng)):
            p = o8.parameter(list(x.shape), ov.Type.f32, name="x")
            path = Path(tmp) / f"case{i}.xml"
            ov.save_model(ov.Model([build(p)], [p]), str(path), compress_to_fp16=False)
            model = ir_runner.load(str(path))
            compiled = core.compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
            request = compiled.create_infer_request()
            feeds = {"x": x}
            got = next(iter(model.run(feeds).values()))
            want = request.infer(feeds)[compiled.output(0)]
            tolerance = 4 * k * np.finfo(np.float32).eps * float(np.abs(want).max()) if k else 0.0
            if got.shape != want.shape or np.abs(got - want).max() > tolerance:
                print(f"MISMATCH in {title}: max difference {np.abs(got - want).max()}", file=sys.stderr)
                failed = True
            ours = _median(lambda m=model, f=feeds: m.run(f), args.repeat)
            theirs = _median(lambda r=request, f=feeds: r.infer(f), args.repeat)
            plain = _median(baseline, args.repeat)
            print(f"| {title} | {ours * 1e3:.2f} ms | {theirs * 1e3:.2f} ms | {plain * 1e3:.2f} ms |"
                  f" {ours / theirs:.1f}x |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
