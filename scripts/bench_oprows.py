"""The ``ops`` group of ``bench.py``: the operation-family rows, each against OpenVINO CPU in one run.

Rows (1e5 and 1e7 output elements, or input elements for ReduceSum): Add [R,C] + [C] and Multiply [R,C] * [R,1]
(broadcasting), Exp and Gelu (erf), Transpose [a,b,c] by (0,2,1) and (2,1,0), Concat of two halves on the first
and on the last axis, ReduceSum [R,1000] over the inner and the outer axis, Softmax [R,1000] over the last axis;
MatMul [512,512]x[512,512] and a batched [8,128,64]x[8,64,128] (their own sizes), and, for the transformer
sizes, Gelu [2,8,64] and Softmax [2,8,64,64].

Each case is a one-layer IR written by OpenVINO. ir-run runs ``Model.run(feeds, out=...)`` into an array allocated
once, as OpenVINO's column runs ``infer(share_inputs=True, share_outputs=True)`` (its output tensor reused): like
for like; the fresh-output time of ``Model.run(feeds)`` is in the note. Times are medians of interleaved rounds;
the ratio is ir-run / OpenVINO time, the target a throughput of at least 0.8x OpenVINO's (a time ratio of at
most 1.25). Before timing, ir-run's output is checked: bit for bit against numpy for the exact operations (Add,
Multiply, Transpose, Concat) and Exp (numpy's own), within unary.ULP_BOUNDS of the float64 value for Gelu, and
within a relative 1e-5 (MatMul, ReduceSum: of the float64 value's magnitude) for the accumulating ones.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import openvino as ov
from openvino import opset13

import ir_runner
from scripts.bench_cases import Context, Row, _say, throughput_target, time_row
from scripts.bench_timing import medians, same_bits

TARGET = 0.8  # ir-run's throughput relative to OpenVINO's


@dataclass(frozen=True)
class OpCase:
    """One row: a label, the input shapes, the graph on the Parameters, the numpy expression, the check."""

    label: str
    shapes: tuple[tuple[int, ...], ...]
    build: Callable[..., ov.Node]
    numpy: Callable[..., np.ndarray]
    check: str  # "bits", "gelu" or "close"


def _erf_gelu64(x: np.ndarray) -> np.ndarray:
    wide = x.astype(np.float64)
    return 0.5 * wide * (1 + np.vectorize(math.erf)(wide / math.sqrt(2)))


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _cube(n: int) -> tuple[int, int, int]:
    a = 10 if n < 10**6 else 100
    b = int(round((n // a) ** 0.5))
    return a, b, n // (a * b)


def op_cases(n: int) -> list[OpCase]:
    """The rows at about ``n`` elements."""
    rows = 1000 if n >= 10**6 else 100
    cols = n // rows
    cube = _cube(n)
    reduce_rows = n // 1000
    axis = opset13.constant
    cases = [
        OpCase(f"Add [{rows},{cols}] + [{cols}]", ((rows, cols), (cols,)), opset13.add, np.add, "bits"),
        OpCase(f"Multiply [{rows},{cols}] * [{rows},1]", ((rows, cols), (rows, 1)), opset13.multiply, np.multiply,
               "bits"),
        OpCase(f"Exp [{n}]", ((n,),), opset13.exp, np.exp, "bits"),
        OpCase(f"Gelu erf [{n}]", ((n,),), lambda x: opset13.gelu(x, "erf"), _numpy_gelu_tanh, "gelu"),
    ]
    for order in ((0, 2, 1), (2, 1, 0)):
        cases.append(OpCase(f"Transpose {list(cube)} {order}", (cube,),
                            lambda x, o=order: opset13.transpose(x, axis(np.array(o, np.int64))),
                            lambda x, o=order: x.transpose(o).copy(), "bits"))
    for ax in (0, 2):
        half = list(cube)
        half[ax] //= 2
        cases.append(OpCase(f"Concat 2x{half} axis {ax}", (tuple(half), tuple(half)),
                            lambda p, q, a=ax: opset13.concat([p, q], a),
                            lambda p, q, a=ax: np.concatenate([p, q], a), "bits"))
    for ax in (1, 0):
        cases.append(OpCase(f"ReduceSum [{reduce_rows},1000] axis {ax}", ((reduce_rows, 1000),),
                            lambda x, a=ax: opset13.reduce_sum(x, axis(np.array([a], np.int64)), False),
                            lambda x, a=ax: np.add.reduce(x, axis=a), "close"))
    cases.append(OpCase(f"Softmax [{reduce_rows},1000] last axis", ((reduce_rows, 1000),),
                        lambda x: opset13.softmax(x, -1), _softmax, "close"))
    return cases


def fixed_cases() -> list[OpCase]:
    """MatMul at the issue's sizes, and the transformer-sized Gelu and Softmax."""
    def matmul(a_shape, b_shape) -> OpCase:
        return OpCase(f"MatMul {list(a_shape)}x{list(b_shape)}", (a_shape, b_shape),
                      lambda a, b: opset13.matmul(a, b, False, False), np.matmul, "close")
    return [
        matmul((512, 512), (512, 512)),
        matmul((8, 128, 64), (8, 64, 128)),
        matmul((2, 8, 64, 64), (2, 8, 64, 64)),
        OpCase("Gelu erf [2,8,64] (transformer size)", ((2, 8, 64),), lambda x: opset13.gelu(x, "erf"),
               _numpy_gelu_tanh, "gelu"),
        OpCase("Softmax [2,8,64,64] last axis (transformer size)", ((2, 8, 64, 64),), lambda x: opset13.softmax(x, -1),
               _softmax, "close"),
    ]


def _numpy_gelu_tanh(x: np.ndarray) -> np.ndarray:
    """What a numpy user writes for Gelu (numpy has no erf): the tanh form."""
    c = np.float32(math.sqrt(2 / math.pi))
    return np.float32(0.5) * x * (np.float32(1) + np.tanh(c * (x + np.float32(0.044715) * x * x * x)))


def _check(ctx: Context, case: OpCase, got: np.ndarray, feeds: list[np.ndarray]) -> None:
    if case.check == "bits":
        ctx.check(f"ops {case.label}", "ir-run differs from numpy", same_bits(got, case.numpy(*feeds)))
        return
    if case.check == "gelu":
        from ir_runner.ops.elementwise.unary import ULP_BOUNDS
        from tests.helpers.optest import ulp_distance

        want = _erf_gelu64(feeds[0].reshape(-1)[:20000]).astype(np.float32)
        worst = int(ulp_distance(got.reshape(-1)[:20000], want).max())
        ctx.check(f"ops {case.label}", f"ir-run is {worst} ULP from erf Gelu", worst <= ULP_BOUNDS["Gelu"] + 1)
        return
    want = case.numpy(*(f.astype(np.float64) for f in feeds))
    scale = np.abs(want).max() if "Softmax" not in case.label else np.abs(want)
    ctx.check(f"ops {case.label}", "ir-run is not within 1e-5 of float64",
              bool(np.all(np.abs(got - want) <= 1e-5 * scale + 1e-30)))


def _row(ctx: Context, case: OpCase, rng: np.random.Generator) -> Row:
    params = [opset13.parameter(list(s), ov.Type.f32, name=f"in{i}") for i, s in enumerate(case.shapes)]
    node = case.build(*params)
    xml = ctx.workdir / "op.xml"
    ov.save_model(ov.Model([node.output(0)], params, "op"), str(xml), compress_to_fp16=False)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in case.shapes]
    feeds = {f"in{i}": a for i, a in enumerate(arrays)}
    model = ir_runner.load(str(xml))
    name, first = next(iter(model.run(feeds).items()))
    out = {name: np.empty(first.shape, first.dtype)}
    _check(ctx, case, model.run(feeds, out=out)[name], arrays)
    request = ctx.compile(xml).create_infer_request()
    t = medians({
        "ir_out": lambda: model.run(feeds, out=out),
        "ir": lambda: model.run(feeds),
        "ov": lambda: request.infer(feeds, share_inputs=True, share_outputs=True),
        "np": lambda: case.numpy(*arrays),
    }, budget=ctx.budget(1.5, 0.3), min_reps=5)
    limit, target = throughput_target(TARGET)
    row = time_row("ops", case.label, t["ir_out"], t["ov"], t["np"], max_ratio=limit, target=target)
    row.note = f"throughput {t['ov'] / t['ir_out']:.2f}x OpenVINO's; Model.run without out= {t['ir'] / 1e3:.0f} µs"
    return row


def ops(ctx: Context) -> list[Row]:
    """Every row of :func:`op_cases` at 1e5 and 1e7 elements (1e5 only with ``--quick``), then :func:`fixed_cases`."""
    rng = np.random.default_rng(0)
    rows = []
    cases = op_cases(10**5) + ([] if ctx.quick else op_cases(10**7)) + fixed_cases()
    for case in cases:
        _say(f"ops {case.label}")
        rows.append(_row(ctx, case, rng))
    return rows
