"""IRs with each known CPU-plugin fault (a negative or out-of-range Gather index, inf to f64, bf16 denormals,
pdpd Select on i32, denormal Consts) inside a larger graph, for crosscheck tests.

Each builder returns ``(builder, feeds, faulty layer, layers after it that diverge too)``: the fault sits
between layers that the CPU plugin computes correctly (Convert before, Convert and Select or Gather after).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from tests.helpers.irbuild import IRBuilder


def _tail(b: IRBuilder, src, n: int, et: str):
    """Convert to f32 then a Select that keeps every element (both computed correctly by the CPU plugin)."""
    widened = b.convert(src, "f32", name="widen")
    keep = b.parameter("keep", "boolean", str(n))
    zero = b.const("zero", np.zeros(n, np.float32))
    mask = b.layer("Select", "opset1", [keep, widened, zero], attrs={"auto_broadcast": "numpy"},
                   out_specs=[("FP32", [n])], name="mask")
    b.result(mask, "out")
    return np.ones(n, bool)


def negative_gather(version: str = "opset7", indices=(-1, 0, -2, 2)):
    """Gather-1/7 with negative indices fed at run time: 0 on CPU, wrapped in the reference."""
    b = IRBuilder(f"negative_gather_{version}")
    x = b.parameter("x", "i32", "6")
    idx = b.parameter("idx", "i32", "4")
    floats = b.convert(x, "f32", name="to_float")
    axis = b.const("axis", np.array(0, np.int64))
    attrs = {} if version == "opset1" else {"batch_dims": 0}
    gather = b.layer("Gather", version, [floats, idx, axis], attrs=attrs, out_specs=[("FP32", [4])], name="pick")
    half = b.convert(gather, "f16", name="to_half")
    keep = _tail(b, half, 4, "f16")
    feeds = {"x": np.array([10, 20, 30, 40, 50, 60], np.int32), "idx": np.array(indices, np.int32), "keep": keep}
    return b, feeds, "pick", ["to_half", "widen", "mask"]


def out_of_range_gather():
    """Gather-8 on short 1-D i32 data with indices just past its end: garbage on CPU, zeros in the reference."""
    b = IRBuilder("short_gather")
    x = b.parameter("x", "f32", "8")
    idx = b.parameter("idx", "i32", "8")
    ints = b.convert(x, "i32", name="to_int")
    axis = b.const("axis", np.array(0, np.int64))
    gather = b.layer("Gather", "opset8", [ints, idx, axis], attrs={"batch_dims": 0}, out_specs=[("I32", [8])],
                     name="pick")
    keep = _tail(b, gather, 8, "i32")
    feeds = {"x": np.arange(1, 9, dtype=np.float32), "idx": np.arange(8, 16, dtype=np.int32), "keep": keep}
    return b, feeds, "pick", ["widen", "mask"]


def infinity_to_f64():
    """Convert f32 -> f64 of ±inf: ±FLT_MAX on CPU; a Gather of the f64 values after it shows them again."""
    b = IRBuilder("infinity")
    x = b.parameter("x", "f32", "4")
    same = b.convert(x, "f32", name="copy")
    wide = b.convert(same, "f64", name="to_f64")
    idx = b.const("idx", np.array([3, 0, 1, 2], np.int64))
    axis = b.const("axis", np.array(0, np.int64))
    gather = b.layer("Gather", "opset8", [wide, idx, axis], attrs={"batch_dims": 0}, out_specs=[("FP64", [4])],
                     name="reorder")
    b.result(gather, "out")
    feeds = {"x": np.array([np.inf, -np.inf, 1.5, -2.0], np.float32)}
    return b, feeds, "to_f64", ["reorder"]


def bf16_denormals():
    """Convert f32 -> bf16 of denormals: flushed to (signed) zero by the CPU plugin with avx512_bf16, kept by the
    reference (and by the plugin on an AVX-512 CPU without bf16: tests/helpers/cpu_features.py)."""
    b = IRBuilder("bf16_denormals")
    x = b.parameter("x", "f32", "4")
    same = b.convert(x, "f32", name="copy")
    narrow = b.convert(same, "bf16", name="to_bf16")
    idx = b.const("idx", np.array([0, 1, 2, 3], np.int64))
    axis = b.const("axis", np.array(0, np.int64))
    gather = b.layer("Gather", "opset8", [narrow, idx, axis], attrs={"batch_dims": 0}, out_specs=[("BF16", [4])],
                     name="reorder")
    keep = _tail(b, gather, 4, "bf16")
    feeds = {"x": np.array([1e-39, -1e-39, 1.0, 9e-40], np.float32), "keep": keep}
    return b, feeds, "to_bf16", ["reorder", "widen", "mask"]


def pdpd_select_i32():
    """Select pdpd (axis -1) on i32 with a lower-rank cond: the CPU plugin returns 'then' everywhere."""
    b = IRBuilder("pdpd_select")
    x = b.parameter("x", "f32", "2,3,4")
    e = b.parameter("e", "i32", "3,4")
    cond = b.parameter("cond", "boolean", "4")
    ints = b.convert(x, "i32", name="to_int")
    select = b.layer("Select", "opset1", [cond, ints, e],
                     attrs={"auto_broadcast": "pdpd", "auto_broadcast.auto_broadcast_axis": -1},
                     out_specs=[("I32", [2, 3, 4])], name="choose")
    floats = b.convert(select, "f32", name="widen")
    b.result(floats, "out")
    feeds = {"x": np.arange(1, 25, dtype=np.float32).reshape(2, 3, 4), "e": -np.arange(1, 13, dtype=np.int32)
             .reshape(3, 4), "cond": np.array([True, True, True, False])}
    return b, feeds, "choose", ["widen"]


def const_denormals():
    """An f32 Const holding denormals and -0.0: the CPU plugin flushes them to +0.0."""
    b = IRBuilder("const_denormals")
    cond = b.parameter("cond", "boolean", "4")
    x = b.parameter("x", "f32", "4")
    k = b.const("weights", np.array([1e-40, -0.0, 1.0, -1e-40], np.float32))
    select = b.layer("Select", "opset1", [cond, k, x], attrs={"auto_broadcast": "numpy"},
                     out_specs=[("FP32", [4])], name="choose")
    b.result(b.convert(select, "f64", name="widen"), "out")
    feeds = {"cond": np.ones(4, bool), "x": np.zeros(4, np.float32)}
    return b, feeds, "weights", ["choose", "widen"]


FAULTS = {
    "negative Gather-1": lambda: negative_gather("opset1"),
    "negative Gather-7": lambda: negative_gather("opset7"),
    "+-inf to f64": infinity_to_f64,
    "bf16 denormals": bf16_denormals,
    "pdpd Select i32": pdpd_select_i32,
    "f32 Const denormals": const_denormals,
}

BF16 = ml_dtypes.bfloat16


def _chain(b: IRBuilder, src, n: int, depth: int, tag: str):
    """``depth`` layers the CPU plugin computes exactly (Add of 0, Multiply by 1, Maximum with itself), in turn."""
    for step in range(depth):
        kind = ("Add", "Multiply", "Maximum")[step % 3]
        other = src if kind == "Maximum" else b.const(f"{tag}_k{step}", np.full(n, float(kind == "Multiply"),
                                                                                     np.float32))
        src = b.layer(kind, "opset1", [src, other], attrs={"auto_broadcast": "numpy"}, name=f"{tag}_{step}")
    return src


def deep_negative_gather(depth: int = 12):
    """A Gather-8 with negative indices computed at run time, ``depth`` layers after the inputs and before the
    output (the indices come from an f32 input through their own chain and a Convert)."""
    b = IRBuilder("deep_negative_gather")
    x = b.parameter("x", "f32", "6")
    where = b.parameter("where", "f32", "4")
    data = _chain(b, x, 6, depth, "head")
    idx = b.convert(_chain(b, where, 4, depth // 2, "index"), "i32", name="to_index")
    axis = b.const("axis", np.array(0, np.int64))
    gather = b.layer("Gather", "opset7", [data, idx, axis], attrs={"batch_dims": 0}, out_specs=[("FP32", [4])],
                     name="pick")
    b.result(_chain(b, gather, 4, depth, "tail"), "out")
    feeds = {"x": np.array([10, 20, 30, 40, 50, 60], np.float32), "where": np.array([-1, 0, -2, 2], np.float32)}
    return b, feeds, "pick", [f"tail_{step}" for step in range(depth)]


def deep_const_denormals(depth: int = 12):
    """An f32 Const of denormals selected ``depth`` layers after the input, then ``depth`` more layers."""
    b = IRBuilder("deep_const_denormals")
    x = b.parameter("x", "f32", "4")
    cond = b.parameter("cond", "boolean", "4")
    k = b.const("weights", np.array([1e-40, -0.0, 1.0, -1e-40], np.float32))
    select = b.layer("Select", "opset1", [cond, k, _chain(b, x, 4, depth, "head")],
                     attrs={"auto_broadcast": "numpy"}, out_specs=[("FP32", [4])], name="choose")
    b.result(b.convert(_chain(b, select, 4, depth, "tail"), "f64", name="widen"), "out")
    feeds = {"x": np.arange(4, dtype=np.float32), "cond": np.ones(4, bool)}
    return b, feeds, "weights", ["choose", *(f"tail_{step}" for step in range(depth)), "widen"]


DEEP_FAULTS = {"negative Gather-7, deep": deep_negative_gather, "f32 Const denormals, deep": deep_const_denormals}
