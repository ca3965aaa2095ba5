"""Nested Loop-5 layers as OpenVINO writes them (tests of nesting, and a seed of scripts/fuzz_ir.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def write_nested_loops(depth: int, path: Path) -> Path:
    """``depth`` Loops each holding the next (trip count 1, the data [2,3] f32 carried on a back edge), the
    innermost body adding 1; Parameter ``x``. Written to ``path`` (and its .bin) with openvino."""
    import openvino as ov
    from openvino import opset13

    def around(value, level: int):
        x = opset13.parameter([2, 3], np.float32, name=f"x{level}")
        y = opset13.add(x, opset13.constant(np.float32(1))) if level == depth else around(x, level + 1)
        results = [opset13.result(opset13.constant(np.array(True))), opset13.result(y)]
        loop = opset13.loop(opset13.constant(np.int64(1)), opset13.constant(np.array(True)))
        loop.set_function(ov.Model(results, [x], f"body{level}"))
        loop.set_special_body_ports([-1, 0])
        loop.set_merged_input(x, value.output(0), results[1].output(0))
        return loop.get_iter_value(results[1].output(0), -1)

    x = opset13.parameter([2, 3], np.float32, name="x")
    ov.save_model(ov.Model([around(x, 1)], [x], "nested"), str(path), compress_to_fp16=False)
    return path
