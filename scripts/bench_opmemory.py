"""Peak-memory cases of the elementwise, movement, reduction and linear-algebra families (part of
``bench.py``'s ``memory`` group).

Each case is a one-layer IR written by OpenVINO (or a short chain) at about 1e7 elements, with what a run
needs at least besides its inputs and outputs: the intermediates that must be alive at the same time (for a
single layer, none). ``bench_cases.memory`` runs each in a fresh process per engine (``bench_memory.py``)
and judges ir-run's anonymous peak against 1.3x (inputs + outputs + those intermediates) + 4 MiB.

Cases: Add [1000,10000] + [10000] and Multiply [1000,10000] * [1000,1] (broadcasting), Exp and Gelu (erf)
[1e7], Transpose [100,316,316] by (0,2,1) and (2,1,0), Concat of two halves on the first and the last axis,
ReduceSum [10000,1000] over the inner and the outer axis, Softmax [10000,1000] over the last axis (and over
the first, and at f16), MatMul [512,512]x[512,512], the batched [8,128,64]x[8,64,128] and a linear layer
[10,1000,1000]x[1000,100] (and an f16 [10000,1000]x[1000,100]), and
the chain Reshape [1000,10000] -> [1000,100,100] -> Transpose (1,0,2) -> Softmax -> MatMul by [100,100]:
one f32 intermediate of 1e7 elements is alive next to the one being written (the Transpose's output while
the Softmax writes, then the Softmax's while the MatMul writes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import openvino as ov
from openvino import opset13

N = 10**7
F32 = 4


@dataclass(frozen=True)
class MemCase:
    """A label, the input shapes, the graph on the Parameters, the bytes of live intermediates, the type."""

    label: str
    shapes: tuple[tuple[int, ...], ...]
    build: Callable[..., ov.Node]
    live: int = 0
    et: str = "f32"


def _const(values) -> ov.Node:
    return opset13.constant(np.array(values, np.int64))


def _chain(x: ov.Node, w: ov.Node) -> ov.Node:
    reshaped = opset13.reshape(x, _const([1000, 100, 100]), False)
    moved = opset13.transpose(reshaped, _const([1, 0, 2]))
    return opset13.matmul(opset13.softmax(moved, -1), w, False, False)


def mem_cases() -> list[MemCase]:
    cube = (100, 316, 316)
    cases = [
        MemCase("Add [1000,10000] + [10000]", ((1000, 10000), (10000,)), opset13.add),
        MemCase("Multiply [1000,10000] * [1000,1]", ((1000, 10000), (1000, 1)), opset13.multiply),
        MemCase("Exp [1e7]", ((N,),), opset13.exp),
        MemCase("Gelu erf [1e7]", ((N,),), lambda x: opset13.gelu(x, "erf")),
    ]
    for order in ((0, 2, 1), (2, 1, 0)):
        cases.append(MemCase(f"Transpose {list(cube)} {order}", (cube,),
                             lambda x, o=order: opset13.transpose(x, _const(o))))
    cases += [
        MemCase("Concat 2x[50,316,316] axis 0", ((50, 316, 316),) * 2, lambda p, q: opset13.concat([p, q], 0)),
        MemCase("Concat 2x[100,316,158] axis 2", ((100, 316, 158),) * 2, lambda p, q: opset13.concat([p, q], 2)),
    ]
    for ax in (1, 0):
        cases.append(MemCase(f"ReduceSum [10000,1000] axis {ax}", ((10000, 1000),),
                             lambda x, a=ax: opset13.reduce_sum(x, _const([a]), False)))
    cases += [
        MemCase("Softmax [10000,1000] last axis", ((10000, 1000),), lambda x: opset13.softmax(x, -1)),
        MemCase("Softmax [10000,1000] axis 0", ((10000, 1000),), lambda x: opset13.softmax(x, 0)),
        MemCase("Softmax f16 [10000,1000] last axis", ((10000, 1000),), lambda x: opset13.softmax(x, -1), et="f16"),
        MemCase("MatMul [512,512]x[512,512]", ((512, 512), (512, 512)),
                lambda a, b: opset13.matmul(a, b, False, False)),
        MemCase("MatMul [8,128,64]x[8,64,128]", ((8, 128, 64), (8, 64, 128)),
                lambda a, b: opset13.matmul(a, b, False, False)),
        MemCase("MatMul [10,1000,1000]x[1000,100]", ((10, 1000, 1000), (1000, 100)),
                lambda a, b: opset13.matmul(a, b, False, False)),
        MemCase("MatMul f16 [10000,1000]x[1000,100]", ((10000, 1000), (1000, 100)),
                lambda a, b: opset13.matmul(a, b, False, False), et="f16"),
        MemCase("Reshape -> Transpose -> Softmax -> MatMul [1000,10000]", ((1000, 10000), (100, 100)), _chain,
                live=N * F32),
    ]
    return cases


def save_case(case: MemCase, workdir: Path, stem: str) -> tuple[Path, list]:
    """Write the case's IR; returns its path and the ``bench_memory.py`` input specs."""
    et = ov.Type.f16 if case.et == "f16" else ov.Type.f32
    params = [opset13.parameter(list(s), et, name=f"in{i}") for i, s in enumerate(case.shapes)]
    node = case.build(*params)
    xml = workdir / f"{stem}.xml"
    ov.save_model(ov.Model([node.output(0)], params, stem), str(xml), compress_to_fp16=False)
    return xml, [[f"in{i}", case.et, list(s), "values"] for i, s in enumerate(case.shapes)]
