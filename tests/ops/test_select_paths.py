"""Each Select kernel path gives np.where's bits: np.where for small outputs, bit-select for large
same-shape inputs, and the blocked broadcast bit-select for large broadcast inputs (also threaded),
for every element width and for cond bytes other than 0/1. (Whole-row copies: test_select_rows.py.)"""

import functools

import ml_dtypes
import numpy as np
import pytest

from ir_runner.ops.select import bit_select, bit_select_broadcast, choose_kernel, prepare_select, row_select
from ir_runner.parallel import PARALLEL_MIN_ELEMENTS
from ir_runner.types import PartialShape, TensorSpec, element_type_of
from tests.helpers.bits import assert_same_bits

DTYPES = [np.float32, np.float16, np.float64, np.int8, np.uint16, np.bool_, ml_dtypes.bfloat16]
SHAPES = {
    "same_large": ((256, 256), (256, 256), (256, 256)),
    "else_row": ((512, 128), (512, 128), (128,)),
    "cond_column": ((1024, 1), (1024, 64), (1024, 64)),
    "scalar_then": ((70000,), (), (70000,)),
    "threaded": ((PARALLEL_MIN_ELEMENTS // 256 + 1, 256), (256,), (PARALLEL_MIN_ELEMENTS // 256 + 1, 1)),
    "small": ((3, 1), (1, 4), (3, 4)),
}


def random_bits(rng, dtype, shape):
    itemsize = np.dtype(dtype).itemsize
    return rng.integers(0, 256, (*shape, itemsize), dtype=np.uint8).view(dtype).reshape(shape)


@pytest.mark.parametrize("case", list(SHAPES))
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_prepared_kernel_equals_np_where(case, dtype):
    rng = np.random.default_rng(7)
    cond_shape, then_shape, else_shape = SHAPES[case]
    cond = rng.integers(0, 4, cond_shape).astype(np.uint8).view(np.bool_)  # bytes 2 and 3 are true too
    then, else_ = random_bits(rng, dtype, then_shape), random_bits(rng, dtype, else_shape)
    out_shape = np.broadcast_shapes(cond_shape, then_shape, else_shape)
    et = element_type_of(np.dtype(dtype))
    specs = [TensorSpec(element_type_of(np.dtype(np.bool_)), PartialShape.of(cond_shape)),
             TensorSpec(et, PartialShape.of(then_shape)), TensorSpec(et, PartialShape.of(else_shape))]
    kernel = prepare_select({"mode": "numpy", "axis": 0}, specs, [TensorSpec(et, PartialShape.of(out_shape))],
                            [None, None, None])
    want = np.where(cond, then, else_)
    if np.dtype(dtype) == np.float16:  # the reference quietens signalling f16 NaNs
        bits = want.view(np.uint16)
        bits[((bits & 0x7C00) == 0x7C00) & ((bits & 0x3FF) != 0)] |= 0x200
    assert_same_bits(kernel(cond, then, else_), want)


def test_paths_are_the_ones_intended():
    """Large outputs never take np.where (a branch per element); each shape gets its kernel."""
    f32 = np.dtype(np.float32)
    assert choose_kernel((3, 1), (1, 4), (3, 4), f32) is np.where
    assert choose_kernel((256, 256), (256, 256), (256, 256), f32) is bit_select
    broadcast = choose_kernel(*SHAPES["else_row"], f32)
    assert isinstance(broadcast, functools.partial) and broadcast.func is bit_select_broadcast
    rows = choose_kernel(*SHAPES["cond_column"], f32)
    assert isinstance(rows, functools.partial) and rows.func is row_select
