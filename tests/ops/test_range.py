"""The range module (ir_runner/ops/generation/range.py): Range-1 and Range-4, values bit for bit against OpenVINO's
reference in every output type, from constants and from inputs fed at run time."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset13  # noqa: E402

import ir_runner  # noqa: E402
from tests.helpers.optest import check_run, reference_outputs, write_ir  # noqa: E402
from tests.helpers.shape_cases import const  # noqa: E402
from tests.helpers.shapes import check_shapes  # noqa: E402

# -- Range --------------------------------------------------------------------------------------------------

RANGES = [
    (0, 10, 1, "i64"), (10, 0, -3, "i32"), (0, 1, 0.1, "f32"), (-5.5, 5.5, 0.7, "f32"), (1, 2, 0.1, "f16"),
    (0, 3.9, 1.1, "i32"), (0, 1, 0.3, "bf16"), (0.5, -2.5, -0.25, "f64"), (5, 5, 1, "i64"), (0, 300, 7, "u8"),
    (250, 0, -7, "u8"), (-3, 3, 1, "i8"), (0.1, 0.95, 0.05, "f32"),
]


@pytest.mark.parametrize("start,stop,step,et", RANGES)
def test_range4_values(start, stop, step, et, tmp_path):
    r = opset13.range(const(start, np.float32), const(stop, np.float32), const(step, np.float32), et)
    path = write_ir(r, [], tmp_path)
    check_shapes(path)
    got = list(ir_runner.load(str(path)).run({}).values())[0]
    want = reference_outputs(path, {})[0]  # (bf16 comes back as a 2-byte type of another name: bits compared)
    assert got.dtype.itemsize == want.dtype.itemsize and got.tobytes() == want.tobytes(), (got, want)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.uint8, np.float64])  # no f16 reference
def test_range1_values_from_parameters(dtype, tmp_path):
    """Range-1 with start/stop/step fed at run time: dynamic at load, planned per value."""
    s, e, d = (opset1.parameter([], ov.Type(dtype), name=n) for n in ("s", "e", "d"))
    r = opset1.range(s, e, d)
    path = write_ir(r, [s, e, d], tmp_path)
    check_shapes(path)
    for start, stop, step in ((0, 7, 2), (9, 1, 2), (3, 3, 1), (1, 10, 3)):
        check_run(path, {"s": np.array(start, dtype), "e": np.array(stop, dtype), "d": np.array(step, dtype)})
