"""Each Select kernel path gives np.where's bits: np.where for small outputs, bit-select for large
same-shape inputs, and the blocked broadcast bit-select for large broadcast inputs (also threaded),
for every element width and for cond bytes other than 0/1; the broadcast bit-select works in cache-sized
blocks even when the output's leading axes are 1; both bit-selects handle every IR element type. (Whole-row
copies: test_select_rows.py.)"""

import functools

import ml_dtypes
import numpy as np
import pytest

from ir_runner import parallel
from ir_runner.ops.elementwise import select
from ir_runner.ops.elementwise.select import bit_select, bit_select_broadcast, choose_kernel, prepare_select, row_select
from ir_runner.parallel import PARALLEL_MIN_ELEMENTS
from ir_runner.types import ELEMENT_TYPES, PartialShape, TensorSpec, element_type_of
from tests.helpers.bits import assert_same_bits, same_bits

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


# ----------------------------------------------------------------------------- Select blocking with leading 1s


def record_units(monkeypatch) -> list[tuple[int, int]]:
    """Spy on the Select kernels' ``run_chunked`` (each call's units and elements per unit), with the
    bit-select kernels chosen from the smallest outputs on."""
    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(select, "BITSELECT_MIN_ELEMENTS", 1)

    def spy(total, per_unit, work, **kwargs):
        calls.append((total, per_unit))
        parallel.run_chunked(total, per_unit, work, **kwargs)

    monkeypatch.setattr(select, "run_chunked", spy)
    return calls


@pytest.mark.parametrize("cond_shape, then_shape, else_shape", [
    ((1, 48, 40), (1, 48, 40), ()),  # a batch of 1: blocks along the rows, not one block for everything
    ((1, 1, 48, 40), (48, 40), (40,)),
    ((2, 48, 40), (2, 48, 40), (1,)),  # two huge rows
    ((3, 5000), (3, 5000), (1, 1)),  # rows longer than a block: split along them
])
def test_broadcast_bit_select_works_in_cache_sized_blocks(monkeypatch, cond_shape, then_shape, else_shape):
    """The broadcast bit-select handled an output with a small first axis (a batch of 1, common in IRs) as one
    block of the whole output: full-size temporaries and no threading, 3-4x slower than the same output without
    the leading 1. Every block must now be at most 4 * _CHUNK elements, and the result np.where's bits."""
    monkeypatch.setattr(select, "_CHUNK", 64)
    monkeypatch.setattr(parallel, "_WORKERS", 3)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_ELEMENTS", 1000)
    calls = record_units(monkeypatch)
    rng = np.random.default_rng(3)
    cond = rng.integers(0, 3, cond_shape).astype(np.uint8).view(np.bool_)
    then, else_ = rng.standard_normal(then_shape).astype(np.float32), rng.standard_normal(else_shape).astype(np.float32)
    out_shape = np.broadcast_shapes(cond_shape, then_shape, else_shape)
    kernel = select.choose_kernel(cond_shape, then_shape, else_shape, np.dtype(np.float32))
    assert kernel.func is select.bit_select_broadcast
    assert_same_bits(kernel(cond, then, else_), np.where(cond, then, else_))
    buffer = np.empty(out_shape, np.float32)
    assert kernel(cond, then, else_, out=buffer) is buffer
    assert_same_bits(buffer, np.where(cond, then, else_))
    (units, per_unit), _ = calls
    assert per_unit <= 256 and units * per_unit >= np.prod(out_shape) and units > 1


@pytest.mark.parametrize("name", sorted(n for n, t in ELEMENT_TYPES.items()
                                        if t.dtype is not None and t.kind != "string"))
def test_bit_selects_handle_every_ir_element_type(name):
    """The bit-selects view every IR element type but string (object arrays: np.where) as a same-width unsigned
    integer (no fallback needed)."""
    dtype = ELEMENT_TYPES[name].dtype
    rng = np.random.default_rng(7)
    then, else_ = (rng.integers(0, 256, (4, 8 * dtype.itemsize), np.uint8).view(dtype) for _ in range(2))
    cond = rng.integers(0, 3, then.shape, np.uint8).view(np.bool_)
    want = np.where(cond, then, else_)
    assert same_bits(bit_select(cond, then, else_), want)
    row_cond = cond[:, :1]
    assert same_bits(bit_select_broadcast(row_cond, then, else_[:1], then.shape), np.where(row_cond, then, else_[:1]))
