"""Determinism cases shared by tests/test_determinism.py and scripts/stress_determinism.py: one-layer models
over ir-run's threaded kernels (above their thread thresholds, with row counts that do not divide evenly), the
committed real networks of models/real, and a bit-for-bit comparison of outputs that says where they differ."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import ir_runner
from tests.helpers.irbuild import IRBuilder

REAL = Path(__file__).resolve().parents[2] / "models" / "real"
Case = tuple[ir_runner.Model, dict[str, np.ndarray]]


def single_layer(rng: np.random.Generator, type_: str, version: str, shapes, attrs, out_shape, consts=(),
                 scale: float = 4.0) -> Case:
    """A one-layer model over f32 Parameters of ``shapes`` (then constant inputs ``consts``), with random feeds."""
    b = IRBuilder()
    ins = [b.parameter(f"x{i}", "f32", ",".join(map(str, s))) for i, s in enumerate(shapes)]
    ins += [b.const(f"c{i}", c) for i, c in enumerate(consts)]
    b.result(b.layer(type_, version, ins, attrs=attrs, out_specs=[("FP32", list(out_shape))]))
    xml, weights = b.build()
    feeds = {f"x{i}": (rng.standard_normal(s) * scale).astype(np.float32) for i, s in enumerate(shapes)}
    return ir_runner.load(xml, weights=weights), feeds


def kernel_cases(rng: np.random.Generator, *, large: bool = False) -> dict[str, Case]:
    """Softmax and LogSoftmax (last axis and others), transcendental unary operations, broadcasting binary
    operations, reductions, Concat, pooling, Gather, convolutions (depthwise, im2col, 1x1) and MatMul, each above
    its thread threshold (every one but MatMul split by ir-run over threads; MatMul by BLAS). ``large``: several
    times the thresholds, and MVN (the stress script); else just above them (the test suite)."""
    found: dict[str, Case] = {}

    def add(name, *args, **kwargs) -> None:
        found[name] = single_layer(rng, *args, **kwargs)

    flat = 1000003 if large else (1 << 20) + 3  # unary, binary: PARALLEL_MIN_ELEMENTS
    for shape in [(640, 1000), (9000, 37), (256, 4096), (170, 1931), (5, 200, 300)] if large else \
            [(601, 1000), (1201, 371), (263, 1000), (5, 180, 300)]:
        add(f"Softmax last {shape}", "Softmax", "opset8", [shape], {"axis": -1}, shape)
    shape = (400, 700)
    add("LogSoftmax last", "LogSoftmax", "opset5", [shape], {"axis": -1}, shape)
    for shape, axis in [((700, 900), 0), ((40, 300, 50), 1), ((3, 200000), 0)] if large else \
            [((900, 300), 0), ((19, 300, 50), 1)]:
        add(f"Softmax axis {axis} {shape}", "Softmax", "opset8", [shape], {"axis": axis}, shape)
    shape = (128, 2048) if large else (263, 1024)
    add("Softmax wide range", "Softmax", "opset8", [shape], {"axis": -1}, shape, scale=40.0)
    unary = [("Exp", "opset1"), ("Sigmoid", "opset1"), ("Tanh", "opset1"), ("Erf", "opset1"), ("Swish", "opset4"),
             ("SoftPlus", "opset4"), ("HSwish", "opset4"), ("Mish", "opset4")]
    for op, version in unary if large else [("Exp", "opset1"), ("Sigmoid", "opset1"), ("Gelu", "opset7")]:
        for shape in [(1200, 1000), (flat,)] if large else [(1031, 1021)]:
            add(f"{op} {shape}", op, version, [shape], None, shape)
    numpy_rule = {"auto_broadcast": "numpy"}
    rows = 1024 if large else 1031
    for op in ["Add", "Multiply", "Divide", "Subtract", "Power", "SquaredDifference"] if large else ["Add", "Divide"]:
        add(f"{op} broadcast", op, "opset1", [(rows, 1100), (rows, 1)], numpy_rule, (rows, 1100))
        same = 1100003 if large else flat
        add(f"{op} same", op, "opset1", [(same,), (same,)], numpy_rule, (same,))
    depth = 64 if large else 32
    for axes, out in [([2], (depth, 128, 1)), ([0], (1, 128, 300)), ([1], (depth, 1, 300)), ([0, 2], (1, 128, 1))]:
        for op in ["ReduceSum", "ReduceMean", "ReduceL2"] if large else ["ReduceSum", "ReduceL2"]:
            add(f"{op} {axes}", op, "opset4" if op == "ReduceL2" else "opset1", [(depth, 128, 300)],
                {"keep_dims": "true"}, out, consts=[np.array(axes, np.int64)])
    add("Concat axis 0", "Concat", "opset1", [(512, 1024), (600, 1024)], {"axis": 0}, (1112, 1024))
    pool = {"strides": "2,2", "pads_begin": "1,1", "pads_end": "1,1", "kernel": "3,3", "rounding_type": "floor"}
    planes = (3, 64, 96, 96) if large else (3, 61, 75, 75)  # (pooling: windows by rows over threads, PARALLEL_MIN)
    pooled = (planes[0], planes[1], (planes[2] - 1) // 2 + 1, (planes[3] - 1) // 2 + 1)
    add("AvgPool 3x3/2", "AvgPool", "opset1", [planes], pool | {"exclude-pad": "true"}, pooled)
    add("MaxPool 3x3/2", "MaxPool", "opset1", [planes], pool, pooled)
    add("Gather rows", "Gather", "opset8", [(4000, 300)], {"batch_dims": "0"}, (3600, 300),
        consts=[rng.integers(-4000, 4000, 3600).astype(np.int64), np.array(0, np.int64)])
    conv = {"strides": "1,1", "dilations": "1,1", "pads_begin": "1,1", "pads_end": "1,1", "auto_pad": "explicit"}
    side = 112 if large else 56  # (split by cost: depthwise channels, the im2col copy, products by columns)
    add("GroupConvolution depthwise", "GroupConvolution", "opset1", [(1, 96, side, side)], conv, (1, 96, side, side),
        consts=[rng.standard_normal((96, 1, 1, 3, 3)).astype(np.float32)], scale=1.0)
    add("Convolution 3x3", "Convolution", "opset1", [(1, 32, side, side)], conv, (1, 32, side, side),
        consts=[rng.standard_normal((32, 32, 3, 3)).astype(np.float32)], scale=1.0)
    unpadded = conv | {"pads_begin": "0,0", "pads_end": "0,0"}
    add("Convolution 1x1", "Convolution", "opset1", [(1, 144, side, side)], unpadded, (1, 24, side, side),
        consts=[rng.standard_normal((24, 144, 1, 1)).astype(np.float32)], scale=1.0)
    if not large:  # (MatMul: BLAS's own threads)
        add("MatMul", "MatMul", "opset1", [(4, 256, 64), (4, 64, 256)], {"transpose_a": "false",
                                                                          "transpose_b": "false"}, (4, 256, 256))
        return found
    add("Concat axis 1", "Concat", "opset1", [(512, 1024), (512, 1000)], {"axis": 1}, (512, 2024))
    add("MatMul", "MatMul", "opset1", [(8, 512, 768), (768, 768)], {"transpose_a": "false", "transpose_b": "false"},
        (8, 512, 768))
    add("MatMul transpose_b", "MatMul", "opset1", [(4, 12, 256, 64), (4, 12, 256, 64)],
        {"transpose_a": "false", "transpose_b": "true"}, (4, 12, 256, 256))
    mvn = {"normalize_variance": "true", "eps": "1e-5"}
    add("MVN last", "MVN", "opset6", [(8, 512, 768)], mvn | {"eps_mode": "inside_sqrt"}, (8, 512, 768),
        consts=[np.array([-1], np.int64)])
    add("MVN spatial", "MVN", "opset6", [(8, 64, 56, 56)], mvn | {"eps_mode": "outside_sqrt"}, (8, 64, 56, 56),
        consts=[np.array([2, 3], np.int64)])
    return found


def real_networks(names=None) -> dict[str, Case]:
    """The committed real networks (all of models/real, or ``names``) with their stored inputs."""
    names = names or list(json.loads((REAL / "manifest.json").read_text())["networks"])
    return {f"real {name}": (ir_runner.load(str(REAL / name / "model.xml")), dict(np.load(REAL / name / "inputs.npz")))
            for name in names if (REAL / name / "model.xml").exists()}


def snapshot(case: Case) -> dict[str, np.ndarray]:
    """One run's outputs, copied (a later run may reuse buffers)."""
    model, feeds = case
    return {k: np.array(v, copy=True) for k, v in model.run(feeds).items()}


def differences(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> list[str]:
    """Per output whose bits differ: how many elements, the first, and the largest difference in ulps."""
    found = []
    for key, w in want.items():
        g = got[key]
        if g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == w.tobytes():
            continue
        if g.dtype != w.dtype or g.shape != w.shape:
            found.append(f"{key}: {g.dtype}{list(g.shape)}, first run {w.dtype}{list(w.shape)}")
            continue
        bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[g.dtype.itemsize]
        a, b = (x.reshape(-1).view(bits).astype(np.int64) for x in (g, w))
        bad = np.flatnonzero(a != b)
        found.append(f"{key}: {bad.size} elements, first {bad[0]} ({g.reshape(-1)[bad[0]]!r} vs "
                     f"{w.reshape(-1)[bad[0]]!r}), up to {np.abs(a - b).max()} ulps")
    return found
