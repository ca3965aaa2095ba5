"""Differential fuzzer for the elementwise, shape, movement, indexing, reduction, MatMul and Softmax
operations and the window, normalisation and classification operations
common in real models (IsNaN/IsInf/IsFinite, MaxPool, AvgPool, AdaptiveAvgPool/AdaptiveMaxPool, the convolutions,
Interpolate, MVN, NormalizeL2, GRN, LRN, GroupNormalization, BatchNormInference,
DepthToSpace/SpaceToDepth/ShuffleChannels, ExtractImagePatches, ScaledDotProductAttention,
the LSTM/GRU/RNN sequences and cells):
random graphs built with OpenVINO's Python API, run by ir-run and compared with OpenVINO's reference.

Each case is one (operation, seed): a seeded generator draws a random single-op graph (or a chain: a ShapeOf
subgraph feeding Reshape/Broadcast/Range/Tile, or a few elementwise ops in a row) over every element type
the operation takes in OpenVINO (f16, bf16, f32, f64, i8..i64, u8..u64, boolean), ranks 0-5, zero-sized
dims, scalars and Parameters with dynamic dims (``?``, intervals). The graph is written with
``openvino.save_model(compress_to_fp16=False)`` and then checked three ways:

1. ``ir_runner.validate``: every inferred port spec equals the declared one (``optest.check_inference``), and
   each output's inferred partial shape (bounds included) equals OpenVINO's;
2. ``ir_runner.load(...).run(feeds)`` against OpenVINO's reference (``Node.evaluate`` node by node, as
   ``tests/helpers/optest.reference_outputs``; for the operations without an ``evaluate`` in the wheel
   (GatherElements, GatherND, Roll, Einsum, IsNaN/IsInf/IsFinite, AvgPool, the adaptive pools, the
   convolutions, NormalizeL2, GRN, LRN, GroupNormalization, BatchNormInference, ScaledDotProductAttention, the
   recurrent operations) the CPU plugin at f32 on the types where it is exact or bounded, once OpenVINO's
   static shape inference accepts the feeds; where its f32 view is known to differ (subnormals, saturated
   f64) the generator says how that is handled, and where it is wrong (some convolutions, masked attention
   rows, Eye of some types) a direct computation decides, else (dynamic shapes) the CPU plugin's run of the
   model made static: ir-run right and the CPU plugin wrong is counted as "cpu wrong", not as passed);
3. under the operation's class: bits for exact operations, ``unary.ULP_BOUNDS`` (1 ULP at f16/bf16) for the
   transcendental ones, and the relative bounds of docs/semantics.md for accumulating ones (the bound
   functions of tests/helpers/bounds.py).

A case OpenVINO rejects (construction or its reference throws, or has no ``evaluate`` for those types) is
*skipped* and counted. Each case runs in a worker process, so a reference that crashes the process (known for
some empty tensors) only skips that case.

``scripts/fuzz_ops.py`` runs campaigns of these cases; ``tests/ops/test_fuzz_ops.py`` runs a fixed slice.
"""

from __future__ import annotations

import math
import random
import traceback
from collections.abc import Callable
from pathlib import Path

import ml_dtypes
import numpy as np
import openvino as ov
from openvino import (
    opset1,
    opset3,
    opset4,
    opset5,
    opset6,
    opset7,
    opset8,
    opset9,
    opset10,
    opset11,
    opset12,
    opset13,
    opset14,
    opset15,
    opset16,
)
from openvino.utils.node_factory import NodeFactory

import ir_runner
from ir_runner.ops.elementwise.unary import ULP_BOUNDS
from tests.helpers import optest
from tests.helpers.bits import assert_same_bits
from tests.helpers.cpu_features import has as cpu_has
from tests.helpers.node_eval import to_tensor
from tests.helpers.ov_random import random_values

FLOATS = ("f16", "bf16", "f32", "f64")
SIGNED = ("i8", "i16", "i32", "i64")
UNSIGNED = ("u8", "u16", "u32", "u64")
INTS = SIGNED + UNSIGNED
NUMERIC = FLOATS + INTS
ALL = NUMERIC + ("boolean",)
NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64, "i8": np.int8,
      "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32,
      "u64": np.uint64, "boolean": np.bool_}
CPU_TYPES = ("f32", "i32", "i8", "u8")  # where the CPU plugin computes what the reference would


class Skip(Exception):
    """OpenVINO rejects the case (or has no reference for it): counted, not a failure."""


class Case:
    """The graph a generator builds: Parameters with their feeds, the comparison class and the oracle."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.np = np.random.default_rng(seed)
        self.params: list = []
        self.feeds: dict[str, np.ndarray] = {}
        self.compare: Callable | None = None  # (got, want, index) -> None or raises AssertionError
        self.oracle = "reference"
        self.direct: Callable | None = None  # () -> outputs computed directly in f64: arbiter when the CPU differs

    # -- inputs
    def values(self, et: str, shape, *, low=None, high=None, finite=False) -> np.ndarray:
        if low is not None:
            return self.np.integers(low, high + 1, size=shape).astype(NP[et])
        v = random_values(self.np, et, list(shape))
        if finite and et in FLOATS:
            v = np.where(np.isfinite(v.astype(np.float64)), v, NP[et](1.5)).astype(NP[et])
        return v

    def declared(self, shape, p_dyn=0.35):
        """A partial shape for a Parameter fed ``shape``: some dims ``?`` or an interval, rarely a dynamic rank."""
        if self.rng.random() > p_dyn:
            return ov.PartialShape(list(shape))
        if self.rng.random() < 0.08 and self.oracle != "cpu":  # (the CPU plugin refuses a dynamic rank)
            return ov.PartialShape.dynamic()
        dims = []
        for d in shape:
            r = self.rng.random()
            dims.append(ov.Dimension(-1) if r < 0.3 else ov.Dimension(max(0, d - self.rng.randint(0, 2)),
                                                                       d + self.rng.randint(0, 3))
                        if r < 0.5 else ov.Dimension(d))
        return ov.PartialShape(dims)

    def input(self, et: str, value: np.ndarray, p_const=0.2, p_dyn=0.35):
        if self.rng.random() < p_const:
            return self.const(et, value)
        name = f"p{len(self.params)}"
        node = opset1.parameter(self.declared(value.shape, p_dyn), getattr(ov.Type, et), name=name)
        node.output(0).get_tensor().set_names({name})
        self.params.append(node)
        self.feeds[name] = np.ascontiguousarray(value).reshape(value.shape)
        return node.output(0)

    def const(self, et: str, value) -> ov.Output:
        value = np.asarray(value, NP[et])
        if et == "bf16":
            return ov.op.Constant(to_tensor(value)).output(0)
        return ov.op.Constant(value).output(0)

    def value(self, output: ov.Output) -> np.ndarray:
        """The array a Parameter made here is fed, or a Constant's data."""
        node = output.get_node()
        if node.get_type_name() == "Constant":
            return node.get_data()
        return self.feeds[output.get_any_name()]

    def index_input(self, value, et=None, p_const=0.75):
        """An integer input that decides shapes: mostly a Constant, sometimes a static Parameter."""
        et = et or self.rng.choice(["i32", "i64"])
        return self.input(et, np.asarray(value, NP[et]), p_const=p_const, p_dyn=0)

    def shape(self, max_rank=4, low_rank=0, max_dim=4, p_zero=0.05) -> list[int]:
        rank = self.rng.randint(low_rank, max_rank)
        return [0 if self.rng.random() < p_zero else self.rng.randint(1, max_dim) for _ in range(rank)]


GENERATORS: dict[str, Callable[[Case], list]] = {}


def op(*names):
    def register(fn):
        for name in names:
            GENERATORS[name] = (lambda n: lambda case: fn(case, n))(name)
        return fn
    return register


# ----------------------------------------------------------------------------- comparison classes

def ulp_distance(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    bits = {2: np.int16, 4: np.int32, 8: np.int64}[got.dtype.itemsize]
    width = got.dtype.itemsize * 8

    def ordered(x):
        raw = x.view(bits).astype(object if width == 64 else np.int64)
        return np.where(raw < 0, -(raw & ((1 << (width - 1)) - 1)), raw)

    g64, w64 = got.astype(np.float64), want.astype(np.float64)
    d = np.abs(ordered(got) - ordered(want))
    d = np.where(np.isnan(g64) & np.isnan(w64), 0, d)
    return np.where(np.isnan(g64) ^ np.isnan(w64), 1 << 62, d).astype(np.int64)


def within_ulp(bound_f32: int) -> Callable:
    def compare(got, want, _index):
        bound = bound_f32 if got.dtype in (np.float32, np.float64) else max(1, 0 if bound_f32 == 0 else 1)
        if got.dtype.kind != "f" and got.dtype != ml_dtypes.bfloat16:
            return exact(got, want, _index)
        if got.size == 0:
            return
        d = ulp_distance(got, want)
        if d.max() > bound:
            i = int(np.argmax(d))
            raise AssertionError(f"{int((d > bound).sum())} element(s) beyond {bound} ULP, worst"
                                 f" got {got.reshape(-1)[i]!r} want {want.reshape(-1)[i]!r} ({d.reshape(-1)[i]} ULP)")
    return compare


def exact(got, want, _index):
    assert_same_bits(got, want, "out")


def bounded(check: Callable) -> Callable:
    """A bound function of the test files, exact for integers and booleans."""
    def compare(got, want, index):
        if got.dtype.kind in "iub":
            return exact(got, want, index)
        check(got, want, index)
    return compare


# ----------------------------------------------------------------------------- elementwise

BINARY = {
    "Add": NUMERIC, "Subtract": NUMERIC, "Multiply": NUMERIC, "Divide": NUMERIC, "Power": NUMERIC,
    "Maximum": NUMERIC, "Minimum": NUMERIC, "SquaredDifference": NUMERIC, "Mod": NUMERIC, "FloorMod": NUMERIC,
    "Equal": ALL, "NotEqual": ALL, "Less": NUMERIC, "LessEqual": NUMERIC, "Greater": NUMERIC,
    "GreaterEqual": NUMERIC, "LogicalAnd": ("boolean",), "LogicalOr": ("boolean",), "LogicalXor": ("boolean",),
    "BitwiseAnd": INTS + ("boolean",), "BitwiseOr": INTS + ("boolean",), "BitwiseXor": INTS + ("boolean",),
}


def broadcast_shapes(case: Case, mode: str):
    """(a, b, attrs) shapes for an auto_broadcast mode."""
    out = case.shape(5 if case.rng.random() < 0.1 else 4)
    rank = len(out)
    ones = lambda dims: [1 if d and case.rng.random() < 0.3 else d for d in dims]  # noqa: E731
    if mode == "none":
        return out, list(out), {"auto_broadcast": "none"}
    if mode == "numpy":
        a, b = ones(out[rank - case.rng.randint(0, rank):]), ones(out[rank - case.rng.randint(0, rank):])
        (a if case.rng.random() < 0.5 else b)[:] = out
        return a, b, {"auto_broadcast": "numpy"}
    axis = case.rng.choice([-1, 0, 1, 2])
    start = rank - (length := case.rng.randint(0, rank)) if axis == -1 else min(axis, rank)
    if axis != -1:
        length = case.rng.randint(0, rank - start)
    return out, ones(out[start:start + length]), {"auto_broadcast": "pdpd",
                                                   "auto_broadcast.auto_broadcast_axis": axis if axis == -1 else start}


@op(*BINARY)
def gen_binary(case: Case, name: str):
    et = case.rng.choice(BINARY[name])
    mode = case.rng.choice(["numpy", "numpy", "numpy", "none", "pdpd"])
    sa, sb, attrs = broadcast_shapes(case, mode)
    if case.rng.random() < 0.5:
        sa, sb = (sb, sa) if mode == "numpy" else (sa, sb)
    a, b = case.values(et, sa), case.values(et, sb)
    if name in ("Divide", "Mod", "FloorMod") and et in INTS:
        b = np.where(b == 0, NP[et](1), b) if case.rng.random() < 0.9 else b
        if name == "Divide":
            attrs["m_pythondiv"] = case.rng.random() < 0.7
    if name == "Power" and et in INTS:
        b = case.values(et, sb, low=-3 if et in SIGNED else 0, high=5)
    node = NodeFactory("opset13").create(name, [case.input(et, a), case.input(et, b)], attrs)
    case.compare = within_ulp(1) if name == "Power" and et in ("f32", "f64") else exact
    if mode == "pdpd" and name in ("Greater", "GreaterEqual"):  # the reference is wrong there (docs/semantics.md)
        fn = np.greater if name == "Greater" else np.greater_equal
        aligned = b.reshape(pdpd_aligned(b.shape, len(sa), attrs["auto_broadcast.auto_broadcast_axis"]))
        case.oracle = lambda xml, feeds: [fn(a.astype(np.float64) if et in FLOATS else a,
                                             aligned.astype(np.float64) if et in FLOATS else aligned)]
    return [node]


def pdpd_aligned(shape, rank: int, axis: int) -> list[int]:
    """``shape`` fitted into ``rank`` dims from ``axis`` (-1: aligned right), as numpy broadcasting reads it."""
    start = rank - len(shape) if axis == -1 else axis
    return list(shape) + [1] * (rank - start - len(shape))


UNARY = {  # name: (builder, types, ULP bound at f32 or None for exact)
    "Abs": (opset1.absolute, NUMERIC), "Negative": (opset1.negative, FLOATS + SIGNED),
    "Sign": (opset1.sign, FLOATS + SIGNED), "Floor": (opset1.floor, NUMERIC), "Ceiling": (opset1.ceiling, NUMERIC),
    "Sqrt": (opset1.sqrt, NUMERIC), "Exp": (opset1.exp, NUMERIC), "Log": (opset1.log, NUMERIC),
    "Sin": (opset1.sin, NUMERIC), "Cos": (opset1.cos, NUMERIC), "Tan": (opset1.tan, NUMERIC),
    "Asin": (opset1.asin, NUMERIC), "Acos": (opset1.acos, NUMERIC), "Atan": (opset1.atan, NUMERIC),
    "Sinh": (opset1.sinh, NUMERIC), "Cosh": (opset1.cosh, NUMERIC), "Tanh": (opset1.tanh, NUMERIC),
    "Asinh": (opset4.asinh, NUMERIC), "Acosh": (opset4.acosh, NUMERIC), "Atanh": (opset4.atanh, NUMERIC),
    "Erf": (opset1.erf, NUMERIC), "Sigmoid": (opset1.sigmoid, NUMERIC), "Relu": (opset1.relu, NUMERIC),
    "Swish": (opset4.swish, FLOATS), "HSwish": (opset4.hswish, FLOATS), "HSigmoid": (opset5.hsigmoid, FLOATS),
    "Mish": (opset4.mish, FLOATS), "SoftPlus": (opset4.softplus, FLOATS), "SoftSign": (opset13.softsign, FLOATS),
    "LogicalNot": (opset1.logical_not, ("boolean",)), "BitwiseNot": (opset13.bitwise_not, INTS + ("boolean",)),
}


@op(*UNARY)
def gen_unary(case: Case, name: str):
    make, types = UNARY[name]
    et = case.rng.choice(types)
    x = case.values(et, case.shape(5 if case.rng.random() < 0.1 else 4, max_dim=6))
    if et in FLOATS and case.rng.random() < 0.5:  # also values where the functions are interesting
        x = (case.np.standard_normal(x.shape) * case.rng.choice([0.5, 3, 30])).astype(NP[et])
    case.compare = within_ulp(ULP_BOUNDS.get(name, 0)) if name in ULP_BOUNDS else exact
    return [make(case.input(et, x))]


@op("Clamp", "Elu", "Selu", "PRelu", "Round", "Gelu", "SwishBeta")
def gen_unary_attrs(case: Case, name: str):
    et = case.rng.choice(FLOATS if name in ("Elu", "Selu", "Gelu", "SwishBeta") else NUMERIC)
    shape = case.shape(4, low_rank=1 if name == "PRelu" else 0, max_dim=5)
    x = case.values(et, shape)
    if et in FLOATS and case.rng.random() < 0.5:
        x = (case.np.standard_normal(x.shape) * 4).astype(NP[et])
    data = case.input(et, x)
    case.compare = exact
    if name == "Clamp":
        lo = case.rng.choice([-1e30, -3.7, -2.0, -0.5, 0.0, 1.5, 100.0])
        return [opset1.clamp(data, lo, lo + case.rng.choice([0.0, 0.3, 1.0, 4.5, 1e6]))]
    if name == "Elu":
        case.compare = within_ulp(ULP_BOUNDS["Elu"])
        return [opset1.elu(data, case.rng.choice([0.0, 0.5, 1.0, 2.5]))]
    if name == "Selu":
        case.compare = within_ulp(ULP_BOUNDS["Selu"])
        return [opset1.selu(data, case.const(et, [1.67326]), case.const(et, [1.0507]))]
    if name == "PRelu":
        slope_shape = case.rng.choice([[shape[1]] if len(shape) > 1 else [shape[0]], [1], shape[-1:], []])
        return [opset1.prelu(data, case.input(et, case.values(et, slope_shape)))]
    if name == "Round":
        return [opset5.round(data, case.rng.choice(["half_to_even", "half_away_from_zero"]))]
    if name == "Gelu":
        version = case.rng.choice([2, 7])
        case.compare = within_ulp(ULP_BOUNDS["Gelu"])
        if version == 2:
            return [opset1.gelu(data) if hasattr(opset1, "gelu") else NodeFactory("opset2").create("Gelu", [data])]
        return [opset7.gelu(data, case.rng.choice(["erf", "tanh"]))]
    case.compare = within_ulp(ULP_BOUNDS["Swish"])
    return [opset4.swish(data, case.const(et, case.rng.choice([0.5, 1.0, 2.0])))]


# ----------------------------------------------------------------------------- shape and data movement

@op("ShapeOf")
def gen_shape_of(case: Case, name: str):
    et = case.rng.choice(ALL)
    x = case.input(et, case.values(et, case.shape(5)), p_const=0)
    if case.rng.random() < 0.3:
        return [opset1.shape_of(x)]
    return [opset3.shape_of(x, case.rng.choice(["i32", "i64"]))]


def factor(case: Case, n: int, rank: int) -> list[int]:
    dims = [1] * rank
    for _ in range(rank * 2):
        if rank == 0:
            break
        i = case.rng.randrange(rank)
        for p in (2, 3):
            if n % (math.prod(dims) * p) == 0 and case.rng.random() < 0.6:
                dims[i] *= p
    if rank:
        dims[case.rng.randrange(rank)] *= n // math.prod(dims)
    return dims


@op("Reshape")
def gen_reshape(case: Case, name: str):
    et = case.rng.choice(ALL)
    shape = case.shape(4, max_dim=4)
    n = math.prod(shape)
    rank = case.rng.randint(0 if n == 1 else 1, 4)
    target = factor(case, n, rank) if n else [case.rng.randint(0, 3) for _ in range(rank)]
    if n == 0 and rank:
        target[case.rng.randrange(rank)] = 0
    special = case.rng.random() < 0.5
    if special:
        target = [0 if i < len(shape) and shape[i] == t and case.rng.random() < 0.5 else t
                  for i, t in enumerate(target)]
    if n == 0 and math.prod(t if t else shape[i] for i, t in enumerate(target)) and special:
        raise Skip("zero elements into a non-empty shape: the reference returns garbage, ir-run refuses")
    if target and n and case.rng.random() < 0.5:
        target[case.rng.randrange(rank)] = -1
    data = case.input(et, case.values(et, shape))
    return [opset1.reshape(data, case.index_input(np.array(target, np.int64)), special)]


@op("Squeeze", "Squeeze15")
def gen_squeeze(case: Case, name: str):
    et = case.rng.choice(ALL)
    shape = [1 if case.rng.random() < 0.5 else d for d in case.shape(5)]
    ones = [i for i, d in enumerate(shape) if d == 1]
    data = case.input(et, case.values(et, shape))
    form = case.rng.choice(["none", "list", "scalar", "empty"] if ones else ["none", "empty"])
    rank = len(shape)
    if name == "Squeeze15":
        skip = case.rng.random() < 0.5
        if form == "none":
            return [NodeFactory("opset15").create("Squeeze", [data])]
        axes = case.rng.sample(range(rank), case.rng.randint(0, rank)) if skip else \
            case.rng.sample(ones, case.rng.randint(0, len(ones)))
        axes = [a - rank if case.rng.random() < 0.4 else a for a in axes]
        return [opset15.squeeze(data, case.index_input(np.array(axes, np.int64)), skip)]
    if form == "none":
        return [NodeFactory("opset1").create("Squeeze", [data])]
    if form == "empty":
        return [opset1.squeeze(data, case.index_input(np.zeros(0, np.int64)))]
    axes = case.rng.sample(ones, 1 if form == "scalar" else case.rng.randint(1, len(ones)))
    axes = [a - rank if case.rng.random() < 0.4 else a for a in axes]
    value = np.array(axes[0] if form == "scalar" else axes, np.int64)
    return [opset1.squeeze(data, case.index_input(value))]


@op("Unsqueeze")
def gen_unsqueeze(case: Case, name: str):
    et = case.rng.choice(ALL)
    shape = case.shape(4)
    count = case.rng.randint(1, 2)
    out_rank = len(shape) + count
    axes = case.rng.sample(range(out_rank), count)
    axes = [a - out_rank if case.rng.random() < 0.4 else a for a in axes]
    value = np.array(axes[0] if count == 1 and case.rng.random() < 0.5 else axes, np.int64)
    return [opset1.unsqueeze(case.input(et, case.values(et, shape)), case.index_input(value))]


@op("Concat")
def gen_concat(case: Case, name: str):
    et = case.rng.choice(ALL)
    shape = case.shape(4, low_rank=1)
    axis = case.rng.randrange(len(shape))
    pieces = []
    for _ in range(case.rng.randint(1, 4)):
        s = list(shape)
        s[axis] = case.rng.choice([0, 1, 2, 3])
        pieces.append(case.input(et, case.values(et, s)))
    return [opset1.concat(pieces, axis - len(shape) if case.rng.random() < 0.4 else axis)]


@op("Split", "VariadicSplit")
def gen_split(case: Case, name: str):
    et = case.rng.choice(ALL)
    shape = case.shape(4, low_rank=1)
    axis = case.rng.randrange(len(shape))
    axis_in = case.index_input(axis - len(shape) if case.rng.random() < 0.4 else axis, p_const=1)
    if name == "Split":
        n = case.rng.choice([1, 2, 3])
        shape[axis] = n * case.rng.randint(0, 3)
        return [opset1.split(case.input(et, case.values(et, shape)), axis_in, n)]
    parts = [case.rng.randint(0, 3) for _ in range(case.rng.randint(1, 4))]
    shape[axis] = sum(parts)
    if case.rng.random() < 0.4:
        parts[case.rng.randrange(len(parts))] = -1
    return [opset1.variadic_split(case.input(et, case.values(et, shape)), axis_in,
                                  case.index_input(np.array(parts, np.int64)))]


@op("Transpose")
def gen_transpose(case: Case, name: str):
    et = case.rng.choice(ALL)
    shape = case.shape(5)
    perm = list(range(len(shape)))
    case.rng.shuffle(perm)
    perm = perm if case.rng.random() < 0.8 else []
    return [opset1.transpose(case.input(et, case.values(et, shape)), case.index_input(np.array(perm, np.int64)))]


@op("Broadcast", "Broadcast1")
def gen_broadcast(case: Case, name: str):
    et = case.rng.choice(ALL)
    modes = ["numpy", "bidirectional", "explicit", "pdpd"] if name == "Broadcast" else ["numpy", "explicit", "pdpd"]
    mode = case.rng.choice(modes)
    shape = case.shape(3)
    if mode == "explicit":
        target = [d if d != 1 else case.rng.randint(1, 3) for d in case.shape(4, low_rank=len(shape))]
        axes = sorted(case.rng.sample(range(len(target)), len(shape)))
        for i, a in enumerate(axes):
            if shape[i] != 1 or case.rng.random() < 0.5:
                target[a] = shape[i]
        args = [case.index_input(np.array(target, np.int64)), case.index_input(np.array(axes, np.int64))]
    else:
        extra = case.shape(2, max_dim=3)
        if mode == "pdpd":  # (axis 0, the IR keeps no other: OpenVINO takes only equal ranks)
            target = [1 if case.rng.random() < 0.3 else d if d != 1 else case.rng.randint(1, 3) for d in shape]
        else:
            target = extra + [d if d != 1 else case.rng.randint(1, 3) for d in shape]
            if mode == "bidirectional":
                target = [1 if case.rng.random() < 0.3 else t for t in target]
        args = [case.index_input(np.array(target, np.int64))]
    data = case.input(et, case.values(et, shape))
    if mode == "pdpd":
        if name == "Broadcast1":  # (Broadcast-1 wants its third input in every mode)
            args.append(case.index_input(np.arange(len(shape), dtype=np.int64), p_const=1))
        return [NodeFactory("opset3" if name == "Broadcast" else "opset1").create("Broadcast", [data, *args],
                                                                                  {"mode": "pdpd"})]
    return [(opset3 if name == "Broadcast" else opset1).broadcast(data, *args, mode)]


@op("Tile")
def gen_tile(case: Case, name: str):
    et = case.rng.choice(ALL)
    shape = case.shape(4)
    repeats = [case.rng.randint(0 if case.rng.random() < 0.1 else 1, 3) for _ in range(case.rng.randint(0, 5))]
    return [opset1.tile(case.input(et, case.values(et, shape)), case.index_input(np.array(repeats, np.int64)))]


@op("Range1", "Range4")
def gen_range(case: Case, name: str):
    if name == "Range1":
        et = case.rng.choice(FLOATS + ("i8", "i32", "i64", "u8", "u32", "u64"))
    else:
        et = case.rng.choice(NUMERIC)
    out = case.rng.choice(NUMERIC) if name == "Range4" else et
    signed = et in FLOATS + SIGNED and out in FLOATS + SIGNED
    start = case.rng.choice([0, 1, 3, 2.5, -4, -1.5, 7]) if signed else case.rng.choice([0, 1, 3, 2.5, 7])
    step = case.rng.choice([1, 2, 0.5, -1, -2, 0.75, -0.3, 3]) if signed else case.rng.choice([1, 2, 0.5, 3])
    count = case.rng.randint(0, 12)
    stop = start + step * count + case.rng.choice([0, 0.25, -0.25])
    vals = []
    for v in (start, stop, step):
        v = np.array(v).astype(NP[et]) if et in FLOATS else np.array(int(v) if et in INTS else v).astype(NP[et])
        vals.append(v)
    if et in INTS and vals[2] == 0:
        vals[2] = np.array(1, NP[et])
    inputs = [case.input(et, v, p_const=0.6, p_dyn=0) for v in vals]
    if name == "Range1":
        return [opset1.range(*inputs)]
    return [opset4.range(*inputs, out)]


def _slice_spec(case: Case, dim: int):
    start = case.rng.choice([0, 1, -1, -2, 2, dim, dim + 3, -dim - 3, 2**62, -(2**62)])
    stop = case.rng.choice([0, 1, -1, 3, dim, dim + 5, -dim - 5, 2**62, -(2**62)])
    step = case.rng.choice([1, 1, 2, 3, -1, -1, -2, -3])
    return start, stop, step


@op("Slice")
def gen_slice(case: Case, name: str):
    et = case.rng.choice(ALL)
    shape = case.shape(4, low_rank=1, max_dim=6)
    rank = len(shape)
    axes = case.rng.sample(range(rank), case.rng.randint(1, rank))
    specs = [_slice_spec(case, shape[a]) for a in axes]
    it = case.rng.choice(["i32", "i64"])
    clip = (lambda v: int(np.clip(v, -(2**31), 2**31 - 1))) if it == "i32" else int  # noqa: E731
    parts = [case.index_input(np.array([clip(s[i]) for s in specs], NP[it]), it) for i in range(3)]
    args = [case.input(et, case.values(et, shape)), *parts]
    if case.rng.random() < 0.7:
        args.append(case.index_input(np.array([a - rank if case.rng.random() < 0.4 else a for a in axes], np.int64)))
    elif sorted(axes) != list(range(len(axes))):
        args.append(case.index_input(np.array(axes, np.int64)))
    return [opset8.slice(*args)]


@op("StridedSlice")
def gen_strided_slice(case: Case, name: str):
    et = case.rng.choice(ALL)
    shape = case.shape(4, low_rank=1, max_dim=6)
    n = case.rng.randint(1, len(shape) + 1)
    masks = {k: [int(case.rng.random() < p) for _ in range(n)] for k, p in
             (("begin", 0.3), ("end", 0.3), ("new", 0.15), ("shrink", 0.15), ("ellipsis", 0.1))}
    if sum(masks["ellipsis"]) > 1:
        first = masks["ellipsis"].index(1)
        masks["ellipsis"] = [int(i == first) for i in range(n)]
    begin, end, stride = [], [], []
    for i in range(n):
        dim = shape[min(i, len(shape) - 1)]
        if masks["shrink"][i]:
            b = case.rng.randint(-dim, dim - 1) if dim else 0
            begin.append(b), end.append(b + 1), stride.append(1)
        else:
            b, e, s = _slice_spec(case, dim)
            begin.append(b), end.append(e), stride.append(s)
    if any(e and (nw or sh) for e, nw, sh in zip(masks["ellipsis"], masks["new"], masks["shrink"])):
        # an element that is both the ellipsis and a new/shrunk axis: the reference's slice plan reads it as the
        # latter, against its own shape inference (docs/semantics.md); the CPU plugin follows shape inference
        case.oracle = "cpu"
        et = case.rng.choice(CPU_TYPES)
        # (the CPU plugin also reads a shrunk axis's begin_mask, which the reference and ir-run ignore)
        masks["begin"] = [0 if shrunk else b for b, shrunk in zip(masks["begin"], masks["shrink"])]
    data = case.input(et, case.values(et, shape), p_const=0.2 if case.oracle == "reference" else 0)
    known = 0.75 if case.oracle == "reference" else 1  # (the CPU plugin's dynamic path reads conflicts otherwise)
    vals = [case.index_input(np.array(v, np.int64), "i64", p_const=known) for v in (begin, end, stride)]
    return [opset1.strided_slice(data, *vals, masks["begin"], masks["end"], masks["new"], masks["shrink"],
                                 masks["ellipsis"])]


@op("GatherElements")
def gen_gather_elements(case: Case, name: str):
    case.oracle = "cpu"
    et = case.rng.choice(CPU_TYPES)
    shape = case.shape(4, low_rank=1)
    axis = case.rng.randrange(len(shape))
    ishape = list(shape)
    ishape[axis] = case.rng.randint(0, 4)
    dim = shape[axis]
    it = case.rng.choice(["i32", "i64"])
    idx = case.values(it, ishape, low=-dim, high=dim - 1) if dim else np.zeros(ishape, NP[it])
    if dim == 0 and math.prod(ishape):
        raise Skip("indices into an empty axis")
    return [opset8.gather_elements(case.input(et, case.values(et, shape)), case.input(it, idx),
                                   axis - len(shape) if case.rng.random() < 0.4 else axis)]


@op("GatherND5", "GatherND8")
def gen_gather_nd(case: Case, name: str):
    case.oracle = "cpu"
    et = case.rng.choice(CPU_TYPES)
    batch = case.rng.randint(0, 2)
    shape = case.shape(4, low_rank=batch + 1, p_zero=0)
    m = case.rng.randint(1, len(shape) - batch)
    ishape = shape[:batch] + case.shape(2, p_zero=0.05) + [m]
    it = case.rng.choice(["i32", "i64"])
    idx = np.stack([case.values(it, ishape[:-1], low=-shape[batch + j], high=shape[batch + j] - 1)
                    for j in range(m)], axis=-1).astype(NP[it])
    make = opset5.gather_nd if name == "GatherND5" else opset8.gather_nd
    return [make(case.input(et, case.values(et, shape)), case.input(it, idx), batch)]


SCATTER_TYPES = ("f32", "f16", "i32", "u32", "i64", "u64", "boolean")


@op("ScatterUpdate")
def gen_scatter_update(case: Case, name: str):
    et = case.rng.choice(SCATTER_TYPES)
    shape = case.shape(4, low_rank=1, p_zero=0)
    axis = case.rng.randrange(len(shape))
    it = case.rng.choice(["i32", "i64"])
    ishape = case.shape(2, low_rank=1)
    idx = case.values(it, ishape, low=0, high=shape[axis] - 1)
    ushape = shape[:axis] + ishape + shape[axis + 1:]
    data, updates = case.values(et, shape), case.values(et, ushape)
    if len(shape) > 2 or len(ishape) > 1:  # the reference misplaces updates there (docs/semantics.md): the spec
        def spec(xml, feeds):
            out = data.copy()
            for j in np.ndindex(*ishape):
                out[(slice(None),) * axis + (int(idx[j]),)] = updates[(slice(None),) * axis + j]
            return [out]
        case.oracle = spec
    return [opset3.scatter_update(case.input(et, data), case.input(it, idx), case.input(et, updates),
                                  case.index_input(axis - len(shape) if case.rng.random() < 0.4 else axis, p_const=1))]


@op("ScatterElementsUpdate3", "ScatterElementsUpdate12")
def gen_scatter_elements(case: Case, name: str):
    et = case.rng.choice(SCATTER_TYPES + ("i16",))
    shape = case.shape(4, low_rank=1, p_zero=0)
    axis = case.rng.randrange(len(shape))
    ishape = [case.rng.randint(0, d) for d in shape]
    it = case.rng.choice(["i32", "i64"])
    idx = case.values(it, ishape, low=-shape[axis], high=shape[axis] - 1)
    args = [case.input(et, case.values(et, shape)), case.input(it, idx), case.input(et, case.values(et, ishape)),
            case.index_input(axis - len(shape) if case.rng.random() < 0.4 else axis, p_const=1)]
    if name.endswith("3"):
        return [opset3.scatter_elements_update(*args)]
    reductions = ["none", "sum", "prod", "min", "max"] + ([] if et == "boolean" else ["mean"])
    return [opset12.scatter_elements_update(*args, case.rng.choice(reductions), case.rng.random() < 0.5)]


@op("ScatterNDUpdate", "ScatterNDUpdate15")
def gen_scatter_nd(case: Case, name: str):
    et = case.rng.choice(SCATTER_TYPES)
    shape = case.shape(4, low_rank=1, p_zero=0)
    m = case.rng.randint(1, len(shape))
    ishape = case.shape(2, p_zero=0.05) + [m]
    it = case.rng.choice(["i32", "i64"])
    idx = np.stack([case.values(it, ishape[:-1], low=-shape[j], high=shape[j] - 1) for j in range(m)],
                   axis=-1).astype(NP[it])
    ushape = ishape[:-1] + shape[m:]
    args = (case.input(et, case.values(et, shape)), case.input(it, idx), case.input(et, case.values(et, ushape)))
    if name == "ScatterNDUpdate15":
        return [opset15.scatter_nd_update(*args, case.rng.choice(["none", "sum", "sub", "prod", "min", "max"]))]
    return [opset3.scatter_nd_update(*args)]


@op("Eye")
def gen_eye(case: Case, name: str):
    rows, columns = case.rng.randint(0, 6), case.rng.randint(0, 6)
    diagonal = case.rng.randint(-7, 7)
    batch = case.shape(2, p_zero=0.1) if case.rng.random() < 0.5 else None
    args = [case.index_input(np.array([rows])), case.index_input(np.array([columns])),
            case.index_input(np.array([diagonal]))]
    batch_in = None if batch is None else case.index_input(np.array(batch, np.int64))
    case.compare = exact
    output_type = case.rng.choice(ALL)
    if output_type in ("boolean", "i16", "u16", "u32", "u64"):  # (no reference evaluate: tests/ops/test_eye.py)
        case.oracle = "cpu"  # (which leaves some outputs uninitialised or misplaces ones: np.eye decides)
        eye = np.eye(rows, columns, diagonal, dtype=NP[output_type])
        case.direct = lambda: [np.broadcast_to(eye, (*(batch or []), rows, columns))]
    return [opset9.eye(*args, output_type=output_type, batch_shape=batch_in)]  # (keyword: it follows the type)


@op("RandomUniform")
def gen_random_uniform(case: Case, name: str):
    """Bit for bit against a fresh node's first ``evaluate`` (tests/ops/test_random_uniform.py): every output
    type, both alignments, random seeds and ranges."""
    et = case.rng.choice(["f16", "bf16", "f32", "f64", "i32", "i64"])
    low = case.rng.randint(-1000, 1000) if et in ("i32", "i64") else round(case.rng.uniform(-50, 50), 3)
    high = low + (case.rng.randint(1, 2**30) if et in ("i32", "i64") else round(case.rng.uniform(0.5, 40), 3))
    seeds = [case.rng.randrange(2**63) if case.rng.random() < 0.8 else 0 for _ in range(2)]
    seeds[0] = seeds[0] or 1  # (both 0: a non-deterministic sequence)
    case.compare = exact
    shape = case.index_input(np.array(case.shape(3, low_rank=1, p_zero=0.05), np.int64))
    return [opset8.random_uniform(shape, case.const(et, low), case.const(et, high), et, seeds[0], seeds[1],
                                  case.rng.choice(["tensorflow", "pytorch"]))]


@op("Pad1", "Pad12")
def gen_pad(case: Case, name: str):
    et = case.rng.choice(ALL)
    shape = case.shape(4)
    mode = case.rng.choice(["constant", "constant", "edge", "reflect", "symmetric"])
    limit = {"constant": 3, "edge": 3, "reflect": -1, "symmetric": 0}[mode]
    begin, end = [], []
    for d in shape:
        top = 3 if mode in ("constant", "edge") else max(0, d + limit)
        if mode == "edge" and d == 0:
            top = 0
        lo = -d if case.rng.random() < 0.3 else 0
        begin.append(case.rng.randint(lo, min(top, 3))), end.append(case.rng.randint(lo, min(top, 3)))
    data = case.input(et, case.values(et, shape))
    args = [data, case.index_input(np.array(begin, np.int64)), case.index_input(np.array(end, np.int64))]
    if mode == "constant" and case.rng.random() < 0.7:
        args.append(case.input(et, case.values(et, []), p_const=0.5))
    make = opset1.pad if name == "Pad1" else opset12.pad
    return [make(*args, mode)]


@op("Reverse")
def gen_reverse(case: Case, name: str):
    et = case.rng.choice(ALL)
    shape = case.shape(4)
    rank = len(shape)
    if case.rng.random() < 0.5:
        axes = case.rng.sample(range(rank), case.rng.randint(0, rank))
        axes = np.array([a - rank if case.rng.random() < 0.3 else a for a in axes], np.int64)
        return [opset1.reverse(case.input(et, case.values(et, shape)), case.index_input(axes), "index")]
    mask = case.np.integers(0, 2, rank).astype(bool)
    return [opset1.reverse(case.input(et, case.values(et, shape)), case.const("boolean", mask), "mask")]


@op("Roll")
def gen_roll(case: Case, name: str):
    case.oracle = "cpu"
    et = case.rng.choice(CPU_TYPES)
    shape = case.shape(4, low_rank=1)
    rank = len(shape)
    axes = [case.rng.randrange(rank) for _ in range(case.rng.randint(1, 3))]
    axes = [a - rank if case.rng.random() < 0.3 else a for a in axes]
    shift = [case.rng.randint(-7, 7) for _ in axes]
    return [opset7.roll(case.input(et, case.values(et, shape)), case.index_input(np.array(shift, np.int64)),
                        case.index_input(np.array(axes, np.int64)))]


@op("OneHot")
def gen_one_hot(case: Case, name: str):
    et = case.rng.choice(ALL)
    it = case.rng.choice(["i32", "i64"])
    shape = case.shape(3)
    depth = case.rng.randint(0, 5)
    idx = case.values(it, shape, low=-2, high=depth + 1)
    axis = case.rng.randint(-len(shape) - 1, len(shape))
    on, off = case.values(et, []), case.values(et, [])
    return [opset1.one_hot(case.input(it, idx), case.index_input(np.array(depth, NP[it]), it, p_const=1),
                           case.const(et, on), case.const(et, off), axis)]


@op("NonZero")
def gen_non_zero(case: Case, name: str):
    et = case.rng.choice(ALL)
    x = case.values(et, case.shape(4))
    if et not in ("boolean",) and case.rng.random() < 0.5:
        x = np.where(case.np.random(x.shape) < 0.5, NP[et](0), x).astype(NP[et])
    index = case.rng.choice(["i32", "i64"])
    if x.size == 1 and x.ndim >= 2:  # the reference leaves rows uninitialised there (docs/semantics.md)
        case.oracle = lambda xml, feeds: [np.array(np.nonzero(x)).astype(NP[index])]
    return [opset3.non_zero(case.input(et, x, p_const=0.1), index)]


@op("TopK1", "TopK3", "TopK11")
def gen_topk(case: Case, name: str):
    et = case.rng.choice(NUMERIC)
    shape = case.shape(4, low_rank=1, max_dim=6)
    axis = case.rng.randrange(len(shape))
    x = case.values(et, shape, finite=True)
    if et in FLOATS:
        x = np.where(np.isnan(x.astype(np.float64)), NP[et](0.5), x).astype(NP[et])
    if case.rng.random() < 0.4:  # ties
        x = case.values(et, shape, low=0, high=2) if et not in FLOATS else np.round(x.astype(np.float32)).astype(NP[et])
    k = case.rng.randint(min(1, shape[axis]), shape[axis])  # k = 0: documented (the reference ignores it)
    mode, sort = case.rng.choice(["max", "min"]), case.rng.choice(["value", "index", "none"])
    it = case.rng.choice(["i32", "i64"])
    data = case.input(et, x)
    k_in = case.index_input(np.array(k, np.int64), p_const=0.8)
    ax = axis - len(shape) if case.rng.random() < 0.4 else axis
    if name == "TopK1":
        return [opset1.topk(data, k_in, ax, mode, sort)] if it == "i32" else \
            [NodeFactory("opset1").create("TopK", [data, k_in], {"axis": ax, "mode": mode, "sort": sort,
                                                                "index_element_type": it})]
    if name == "TopK3":
        return [opset3.topk(data, k_in, ax, mode, sort, it)]
    return [opset11.topk(data, k_in, ax, mode, sort, it, case.rng.random() < 0.5)]


EINSUM = ["ij,jk->ik", "bij,bjk->bik", "ii->i", "ij->ji", "...ij,...jk->...ik", "i,i->", "abc,cd->abd", "ij->",
          "ij,ij->ij", "i,j->ij", "abcd->adbc", "aab->ab", "...i->...", "ab,b", "ij,jk", "iij->j"]


@op("Einsum")
def gen_einsum(case: Case, name: str):
    case.oracle = "cpu"
    et = case.rng.choice(("f32", "i32"))
    eq = case.rng.choice(EINSUM)
    sizes = {c: case.rng.randint(1, 4) for c in "abcdijk"}
    ell = case.shape(2, p_zero=0)
    ins = eq.split("->")[0].split(",")
    nodes = []
    for sub in ins:
        shape = []
        for c in sub.replace("...", "E"):
            shape += ell if c == "E" else [sizes[c]]
        x = case.values(et, shape, low=-4, high=4) if et == "i32" else case.np.standard_normal(shape).astype(np.float32)
        nodes.append(case.input(et, x))
    case.compare = bounded(lambda g, w, i: optest.assert_close("out", g, w, 1e-5, 1e-5))
    return [opset7.einsum(nodes, eq)]


# ----------------------------------------------------------------------------- reductions, MatMul, Softmax

REDUCE = {"ReduceSum": ("sum", opset1.reduce_sum), "ReduceMean": ("mean", opset1.reduce_mean),
          "ReduceProd": ("prod", opset1.reduce_prod), "ReduceMax": ("max", opset1.reduce_max),
          "ReduceMin": ("min", opset1.reduce_min), "ReduceL1": ("l1", opset4.reduce_l1),
          "ReduceL2": ("l2", opset4.reduce_l2), "ReduceLogicalAnd": ("and", opset1.reduce_logical_and),
          "ReduceLogicalOr": ("or", opset1.reduce_logical_or)}


@op(*REDUCE)
def gen_reduce(case: Case, name: str):
    from tests.helpers.bounds import reduce_bound

    kind, make = REDUCE[name]
    et = "boolean" if kind in ("and", "or") else case.rng.choice(FLOATS + INTS)
    shape = case.shape(5 if case.rng.random() < 0.1 else 4, max_dim=5)
    rank = len(shape)
    form = case.rng.choice(["list", "list", "scalar", "empty", "negative", "repeat"] if rank else ["empty"])
    if form == "empty":
        axes = np.zeros(0, np.int64)
    elif form == "scalar":
        axes = np.array(case.rng.randrange(rank) - (rank if case.rng.random() < 0.4 else 0), np.int64)
    else:
        axes = case.rng.sample(range(rank), case.rng.randint(1, rank))
        axes = [a - rank if form == "negative" or case.rng.random() < 0.3 else a for a in axes]
        if form == "repeat":
            axes = axes + [axes[0]]
        axes = np.array(axes, np.int64)
    x = case.values(et, shape)
    if et in FLOATS and case.rng.random() < 0.6:
        x = (case.np.standard_normal(shape) * 3).astype(NP[et])
    data = case.input(et, x, p_const=0.05)
    axes_list = [int(a) for a in np.atleast_1d(axes)]
    if kind in ("sum", "mean", "prod", "l1", "l2"):
        case.compare = bounded(lambda g, w, i: reduce_bound(kind, case.feeds.get("p0", x), axes_list, g, w))
    return [make(data, case.index_input(axes, p_const=0.85), case.rng.random() < 0.5)]


@op("CumSum")
def gen_cumsum(case: Case, name: str):
    et = case.rng.choice(NUMERIC)
    shape = case.shape(4, low_rank=1, max_dim=6)
    axis = case.rng.randrange(len(shape)) - (len(shape) if case.rng.random() < 0.4 else 0)
    x = case.values(et, shape)
    return [opset3.cumsum(case.input(et, x), case.index_input(np.array(axis, np.int64), p_const=0.9),
                          case.rng.random() < 0.5, case.rng.random() < 0.5)]


@op("MatMul")
def gen_matmul(case: Case, name: str):
    from tests.helpers.bounds import matmul_bound

    et = case.rng.choice(FLOATS + INTS)
    m, k, n = (case.rng.randint(0 if case.rng.random() < 0.05 else 1, 5) for _ in range(3))
    batch = case.shape(2, max_dim=3)
    ra, rb = case.rng.choice([1, 2, 2, 3]), case.rng.choice([1, 2, 2, 3])
    ta, tb = case.rng.random() < 0.5, case.rng.random() < 0.5
    ba = [1 if case.rng.random() < 0.3 else d for d in batch] if ra == 3 else []
    bb = batch if rb == 3 else []
    sa = [k] if ra == 1 else ba + ([k, m] if ta else [m, k])
    sb = [k] if rb == 1 else bb + ([n, k] if tb else [k, n])
    a, b = case.values(et, sa), case.values(et, sb)
    if et in FLOATS and case.rng.random() < 0.7:
        a, b = (case.np.standard_normal(s).astype(NP[et]) for s in (sa, sb))
    case.compare = bounded(lambda g, w, i: matmul_bound(a, b, ta, tb, g, w))
    return [opset1.matmul(case.input(et, a, p_const=0), case.input(et, b, p_const=0), ta, tb)]


@op("Softmax1", "Softmax8", "LogSoftmax")
def gen_softmax(case: Case, name: str):
    from tests.helpers.bounds import softmax_bound

    et = case.rng.choice(FLOATS)
    shape = case.shape(4, low_rank=1, max_dim=6)
    axis = case.rng.randrange(len(shape))
    x = (case.np.standard_normal(shape) * case.rng.choice([1, 5, 50])).astype(NP[et])
    data = case.input(et, x, p_const=0)
    if name == "Softmax1":
        node = opset1.softmax(data, axis)
    elif name == "Softmax8":
        node = opset8.softmax(data, axis - len(shape) if case.rng.random() < 0.5 else axis)
    else:
        node = opset5.log_softmax(data, axis - len(shape) if case.rng.random() < 0.5 else axis)
        case.oracle = lambda xml, feeds: [log_softmax64(x, axis).astype(x.dtype)]
        case.compare = lambda g, w, i: log_softmax_bound(x, axis, g, w)
        return [node]
    case.compare = lambda g, w, i: softmax_bound(x, axis, *normal_only(g, w))
    return [node]


def normal_only(got: np.ndarray, want: np.ndarray):
    """Both zeroed where both are below the type's smallest normal, after checking that they differ there by at
    most 2 units of the smallest subnormal (docs/semantics.md: subnormal results of exp differ)."""
    info = ml_dtypes.finfo(got.dtype)
    tiny = float(info.smallest_normal)
    both = (np.abs(got.astype(np.float64)) < tiny) & (np.abs(want.astype(np.float64)) < tiny)
    gap = np.abs(got.astype(np.float64) - want.astype(np.float64))[both]
    assert not (gap > 2 * float(info.smallest_subnormal)).any(), f"subnormal results differ by {gap.max()}"
    return np.where(both, 0, got).astype(got.dtype), np.where(both, 0, want).astype(want.dtype)


def log_softmax64(x: np.ndarray, axis: int) -> np.ndarray:
    w = x.astype(np.float64)
    shifted = w - w.max(axis=axis, keepdims=True) if w.size else w
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def log_softmax_bound(x, axis, got, want):
    """docs/semantics.md: ``2 eps (|x - max| + |log sum|) + K eps + eps(out) |exact|``."""
    eps = float(np.finfo(np.float32).eps)
    out_eps = float(ml_dtypes.finfo(x.dtype).eps) * (2 if x.dtype != np.float32 else 1)
    w = x.astype(np.float64)
    if not w.size:
        return
    shifted = np.abs(w - w.max(axis=axis, keepdims=True))
    logsum = np.abs(np.log(np.exp(w - w.max(axis=axis, keepdims=True)).sum(axis=axis, keepdims=True)))
    limit = 2 * eps * (shifted + logsum) + x.shape[axis] * eps + out_eps * np.abs(want)
    bad = np.abs(got.astype(np.float64) - want) > limit
    assert not bad.any(), (got[bad][:4], want[bad][:4])


# ----------------------------------------------------------------------------- IsNaN, IsInf, IsFinite

F32_MAX, F32_TINY = float(np.finfo(np.float32).max), float(np.finfo(np.float32).tiny)


def classify(name: str, x: np.ndarray, negative: bool = True, positive: bool = True) -> np.ndarray:
    """The spec's answer of IsNaN/IsFinite/IsInf, computed on ``x`` widened to f64 (exact for every float type)."""
    w = x.astype(np.float64)
    if name == "IsNaN":
        return np.isnan(w)
    if name == "IsFinite":
        return np.isfinite(w)
    return (np.isneginf(w) & negative) | (np.isposinf(w) & positive)


def cpu_classify_model(name: str, x: np.ndarray, negative: bool, positive: bool) -> np.ndarray:
    """What the CPU plugin (f32 hint) answers, as measured (ir_runner/ops/elementwise/classify.py):
    it computes on the f32 value, f64 converted with saturation (±inf and values beyond f32's range become ±FLT_MAX),
    and, with AVX-512 (its ``vfpclassps``; tests/helpers/cpu_features.py), calls an f32 subnormal neither finite,
    nor NaN, nor infinite; without AVX-512 a subnormal is finite."""
    seen = x.astype(np.float32) if x.dtype != np.float64 else np.clip(x, -F32_MAX, F32_MAX).astype(np.float32)
    answer = classify(name, seen, negative, positive)
    if not cpu_has("avx512"):
        return answer
    subnormal = (seen != 0) & (np.abs(seen) < F32_TINY)
    return answer & ~subnormal if name == "IsFinite" else answer


def classify_values(case: Case, et: str, shape) -> np.ndarray:
    """Any bit patterns, with the classes' corners mixed in: ±0, ±inf, NaN, the largest and smallest normals,
    subnormals; for f64 also values that f32 cannot hold (beyond its range, in its subnormal range)."""
    x = case.values(et, shape).astype(NP[et])
    info = ml_dtypes.finfo(NP[et])
    corners = [0.0, -0.0, np.inf, -np.inf, np.nan, float(info.max), -float(info.max), float(info.smallest_normal),
               float(info.smallest_subnormal), -3 * float(info.smallest_subnormal), 1.0]
    if et == "f64":
        corners += [1e-40, -1e-42, 1e39, -1e300, 3.5e38, F32_MAX, 1e-50]
    if x.size:
        pick = case.np.random(x.shape) < 0.4
        x = np.where(pick, np.array(corners, np.float64)[case.np.integers(0, len(corners), x.shape)].astype(NP[et]),
                     x).astype(NP[et])
    return x


@op("IsNaN", "IsInf", "IsFinite")
def gen_classify(case: Case, name: str):
    """No reference ``evaluate``: the CPU plugin is the oracle. Where its f32 view changes an element's class
    (f32/bf16 subnormals, f64 infinities and f32-subnormal-range values) the compare first checks that the CPU
    answered what :func:`cpu_classify_model` predicts, then requires the spec's answer from ir-run there. The
    data is always a Parameter: the CPU plugin converts a Constant otherwise (1e-40 in an f64 Constant is finite
    for it), which the model does not cover."""
    et = case.rng.choice(FLOATS)
    x = classify_values(case, et, case.shape(4, max_dim=5))
    attrs = {}
    if name == "IsInf":
        attrs = {"detect_negative": case.rng.random() < 0.7, "detect_positive": case.rng.random() < 0.7}
    negative, positive = attrs.get("detect_negative", True), attrs.get("detect_positive", True)
    case.oracle = "cpu"

    def compare(got, want, index):
        feed = case.feeds.get("p0", x)
        model = cpu_classify_model(name, feed, negative, positive)
        assert np.array_equal(want, model), (
            f"the CPU plugin answered {want[want != model][:4]} where its documented f32 behaviour gives"
            f" {model[want != model][:4]} for {feed[want != model][:4]!r}")
        spec = classify(name, feed, negative, positive)
        exact(got, spec, index)

    case.compare = compare
    data = case.input(et, x, p_const=0)
    if name == "IsNaN":
        return [opset10.is_nan(data)]
    if name == "IsFinite":
        return [opset10.is_finite(data)]
    return [opset10.is_inf(data, attrs)]


# ----------------------------------------------------------------------------- pooling

def window_attrs(case: Case, n: int, dilate: bool, torch: bool) -> dict:
    kernel = [case.rng.randint(1, 3) for _ in range(n)]
    return {"kernel": kernel, "strides": [case.rng.randint(1, 3) for _ in range(n)],
            "dilations": [case.rng.randint(1, 2) if dilate else 1 for _ in range(n)],
            "pads_begin": [case.rng.randint(0, k - 1) for k in kernel],
            "pads_end": [case.rng.randint(0, k - 1) for k in kernel],
            "rounding": case.rng.choice(["floor", "ceil"] + (["ceil_torch"] if torch else [])),
            "auto_pad": case.rng.choice(["explicit", "explicit", "valid", "same_upper", "same_lower"])}


def window_data(case: Case, et: str, n: int, low_batch: int = 0):
    shape = [case.rng.randint(low_batch, 2), case.rng.randint(1, 3)] + [case.rng.randint(1, 7) for _ in range(n)]
    x = case.values(et, shape, finite=True)
    if et in FLOATS and case.rng.random() < 0.7:
        x = case.np.standard_normal(shape).astype(NP[et])
    return shape, x


MAX_POOL_TYPES = ("f16", "bf16", "f32", "i32", "i64", "u32", "u64")  # (the reference's; MaxPool-8/14 also i8, u8)


@op("MaxPool1", "MaxPool8", "MaxPool14", "AvgPool1", "AvgPool14", "AvgPool16")
def gen_pool(case: Case, name: str):
    """MaxPool against the reference (exact, values and indices); AvgPool has no reference ``evaluate``: the
    CPU plugin (f32) within ``4 K eps`` of the window's magnitude, K the kernel volume. A window with no tap in
    the data (wholly in the padding or past the end in ceil rounding) is 0/0 in the CPU plugin (NaN) and 0 in the
    reference and ir-run (tests/ops/test_pool.py): the inputs are finite, so a NaN is accepted only there, as 0."""
    version = int(name[7:])
    avg = name.startswith("Avg")
    n = case.rng.randint(1, 3)
    a = window_attrs(case, n, dilate=version in (8, 14) and not avg or version == 16, torch=version >= 14)
    et = case.rng.choice(("f32", "f16") if avg else MAX_POOL_TYPES + (("i8", "u8") if version > 1 else ()))
    shape, x = window_data(case, et, n, low_batch=1)  # (OpenVINO refuses a zero batch)
    data = case.input(et, x, p_const=0.1)
    common = (a["pads_begin"], a["pads_end"], a["kernel"])
    if not avg:
        if version == 1:
            return [opset1.max_pool(data, a["strides"], *common, a["rounding"], a["auto_pad"])]
        make = opset8.max_pool if version == 8 else opset14.max_pool
        return [make(data, a["strides"], a["dilations"], *common, a["rounding"], a["auto_pad"],
                     case.rng.choice(["i32", "i64"]), case.rng.randint(-len(shape), len(shape) - 1))]
    case.oracle = "cpu"
    exclude = case.rng.random() < 0.5
    k = math.prod(a["kernel"])
    rtol = 4 * k * float(np.finfo(np.float32).eps) + (float(np.finfo(np.float16).eps) if et == "f16" else 0)

    def compare(got, want, index):
        want = np.where(np.isnan(want.astype(np.float64)) & (got == 0), got, want)
        optest.assert_close("out", got, want, rtol, rtol * float(np.abs(x.astype(np.float64)).max(initial=0)))

    case.compare = compare
    if version == 1:
        return [opset1.avg_pool(data, a["strides"], *common, exclude, a["rounding"], a["auto_pad"])]
    if version == 14:
        return [opset14.avg_pool(data, a["strides"], *common, exclude, a["rounding"], a["auto_pad"])]
    return [opset16.avg_pool(data, a["strides"], *common, exclude, a["rounding"], a["auto_pad"], a["dilations"])]


@op("AdaptiveAvgPool", "AdaptiveMaxPool")
def gen_adaptive_pool(case: Case, name: str):
    """No reference ``evaluate``: the CPU plugin (f32). AdaptiveAvgPool within ``4 K eps`` of the input's
    magnitude, K the largest bin's volume; AdaptiveMaxPool exact, with i32 indices (the CPU plugin has no i64
    ones: tests/ops/test_pool.py compares those with the i32 run)."""
    case.oracle = "cpu"
    n = case.rng.randint(1, 3)
    shape, x = window_data(case, "f32", n, low_batch=1)
    sizes = [case.rng.randint(1, d + 2) for d in shape[2:]]
    data = case.input("f32", x, p_const=0)
    size_in = case.index_input(np.array(sizes, np.int64), p_const=1)
    if name == "AdaptiveMaxPool":
        return [opset8.adaptive_max_pool(data, size_in, "i32")]
    k = math.prod(-(-d // o) + 1 for d, o in zip(shape[2:], sizes))
    rtol = 4 * k * float(np.finfo(np.float32).eps)
    case.compare = lambda g, w, i: optest.assert_close("out", g, w, rtol, rtol * float(np.abs(x).max(initial=0)))
    return [opset8.adaptive_avg_pool(data, size_in)]


# ----------------------------------------------------------------------------- convolutions

def direct_convolution(x: np.ndarray, w: np.ndarray, groups: int, a: dict) -> np.ndarray:
    """The (group) convolution as an f64 sum over the kernel's taps; ``w`` is ``[groups * O, C / groups, k...]``.
    The arbiter where the CPU plugin differs (it is wrong on some strided windows that skip the last columns:
    data [2,1,6,4], filters [2,1,3,2], strides [1,3], valid)."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, kernel, strides, dilations = x.ndim - 2, w.shape[2:], a["strides"], a["dilations"]
    begin, end = list(a["pads_begin"]), list(a["pads_end"])
    for i in range(n):
        span = (kernel[i] - 1) * dilations[i] + 1
        if a["auto_pad"] == "valid":
            begin[i] = end[i] = 0
        elif a["auto_pad"].startswith("same"):
            total = max(0, (-(-x.shape[2 + i] // strides[i]) - 1) * strides[i] + span - x.shape[2 + i])
            begin[i] = total // 2 if a["auto_pad"] == "same_upper" else total - total // 2
            end[i] = total - begin[i]
    x = np.pad(x, [(0, 0), (0, 0)] + list(zip(begin, end)))
    out_sp = [(x.shape[2 + i] - (kernel[i] - 1) * dilations[i] - 1) // strides[i] + 1 for i in range(n)]
    cg, og = w.shape[1], w.shape[0] // groups
    out = np.zeros((x.shape[0], w.shape[0], *out_sp))
    for k in np.ndindex(*kernel):
        window = tuple(slice(k[i] * dilations[i], k[i] * dilations[i] + (out_sp[i] - 1) * strides[i] + 1, strides[i])
                       for i in range(n))
        tap = x[(slice(None), slice(None)) + window]
        for g in range(groups):
            out[:, g * og:(g + 1) * og] += np.einsum("nc...,oc->no...", tap[:, g * cg:(g + 1) * cg],
                                                     w[(slice(g * og, (g + 1) * og), slice(None)) + k])
    return out


@op("Convolution", "GroupConvolution", "ConvolutionBackpropData", "GroupConvolutionBackpropData")
def gen_convolution(case: Case, name: str):
    """No reference ``evaluate``: the CPU plugin (f32), within ``4 K eps`` relative and ``4 K^2 eps max|x|
    max|w|`` absolute, K the taps per output (as tests/ops/test_conv.py); the forward convolutions' direct f64 sum
    decides where they differ."""
    case.oracle = "cpu"
    n = case.rng.randint(1, 3)
    a = window_attrs(case, n, dilate=True, torch=False)
    group = case.rng.randint(1, 3) if name.startswith("Group") else 1
    cg, cog = case.rng.randint(1, 3), case.rng.randint(1, 3)
    shape, x = window_data(case, "f32", n, low_batch=1)
    shape[1] = group * cg
    x = case.np.standard_normal(shape).astype(np.float32)
    backprop = "Backprop" in name
    if name == "Convolution":
        wshape = [cog, cg]
    elif name == "GroupConvolution":
        wshape = [group, cog, cg]
    elif name == "ConvolutionBackpropData":
        wshape = [cg, cog]
    else:
        wshape = [group, cg, cog]
    w = case.np.standard_normal(wshape + a["kernel"]).astype(np.float32)
    data, weights = case.input("f32", x, p_const=0), case.input("f32", w, p_const=0.8, p_dyn=0)
    k = cg * math.prod(a["kernel"])
    rtol = 4 * k * float(np.finfo(np.float32).eps)
    atol = rtol * k * float(np.abs(x).max(initial=0)) * float(np.abs(w).max(initial=0))
    case.compare = lambda g, want, i: optest.assert_close("out", g, want, rtol, atol)
    if not backprop:
        make = opset1.convolution if group == 1 and name == "Convolution" else opset1.group_convolution
        case.direct = lambda: [direct_convolution(x, w.reshape(-1, *w.shape[-1 - n:]), group, a)]
        return [make(data, weights, a["strides"], a["pads_begin"], a["pads_end"], a["dilations"], a["auto_pad"])]
    output_shape = None
    if case.rng.random() < 0.3:
        output_shape = case.index_input(np.array([case.rng.randint(1, 10) for _ in range(n)], np.int64), p_const=1)
    elif a["auto_pad"].startswith("same"):
        a["auto_pad"] = "explicit"
    make = opset1.convolution_backprop_data if name == "ConvolutionBackpropData" else \
        opset1.group_convolution_backprop_data
    return [make(data, weights, a["strides"], output_shape, a["pads_begin"], a["pads_end"], a["dilations"],
                 a["auto_pad"], [case.rng.randint(0, s - 1) for s in a["strides"]])]


# ----------------------------------------------------------------------------- interpolation

INTERPOLATE_MODES = ("nearest", "linear", "linear_onnx", "cubic")
TRANSFORMS = ("half_pixel", "pytorch_half_pixel", "asymmetric", "tf_half_pixel_for_nn", "align_corners")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple")


@op("Interpolate4", "Interpolate11")
def gen_interpolate(case: Case, name: str):
    """Against the reference: nearest bit for bit, the weighted modes within the ``4 T eps`` of
    ir_runner/ops/image/interpolate.py (as tests/ops/test_interpolate.py: rtol = atol = 1e-5 at f32)."""
    modes = INTERPOLATE_MODES + (("bilinear_pillow", "bicubic_pillow") if name == "Interpolate11" else ())
    mode = case.rng.choice(modes)
    et = case.rng.choice(("f32", "f32", "f16", "i32", "u8") if mode == "nearest" else ("f32", "f32", "f16"))
    rank = case.rng.randint(3, 5) if mode in ("nearest", "linear") else 4
    shape = [case.rng.randint(1, 2), case.rng.randint(1, 3)] + [case.rng.randint(1, 6) for _ in range(rank - 2)]
    x = case.values(et, shape, finite=True) if et not in FLOATS else case.np.standard_normal(shape).astype(NP[et])
    axes = list(range(2, rank)) if mode.endswith("pillow") or mode in ("linear_onnx",) else \
        sorted(case.rng.sample(range(rank), case.rng.randint(1, rank)))
    if mode.endswith("pillow"):
        axes = axes[-2:]
    by_sizes = case.rng.random() < 0.5
    sizes = np.array([case.rng.randint(1, 9) for _ in axes], np.int64)
    scales = np.array([case.rng.choice([0.25, 0.5, 0.6, 1.0, 1.5, 2.0, 2.5]) for _ in axes], np.float32)
    pads = [case.rng.randint(0, 1) if case.rng.random() < 0.2 else 0 for _ in range(rank)]
    attrs = {"mode": mode, "shape_calculation_mode": "sizes" if by_sizes else "scales",
             "coordinate_transformation_mode": case.rng.choice(TRANSFORMS),
             "nearest_mode": case.rng.choice(NEAREST_MODES), "antialias": case.rng.random() < 0.3,
             "cube_coeff": case.rng.choice([-0.75, -0.5]), "pads_begin": pads, "pads_end": list(reversed(pads))}
    data = case.input(et, x, p_const=0.1)
    if mode != "nearest":
        tol = 1e-5 if et == "f32" else 1e-2
        case.compare = bounded(lambda g, w, i: optest.assert_close("out", g, w, tol, tol))
    axes_in = case.index_input(np.array(axes, np.int64), p_const=1)
    if name == "Interpolate11":
        first = case.index_input(sizes, p_const=0.8) if by_sizes else case.const("f32", scales)
        return [NodeFactory("opset11").create("Interpolate", [data, first, axes_in], attrs)]
    return [NodeFactory("opset4").create("Interpolate", [data, case.index_input(sizes, p_const=0.8),
                                                         case.const("f32", scales), axes_in], attrs)]


# ----------------------------------------------------------------------------- normalization

@op("MVN6", "MVN1", "NormalizeL2", "GRN", "LRN", "GroupNormalization", "BatchNormInference5")
def gen_normalization(case: Case, name: str):
    """MVN-6 against the reference, the others (no ``evaluate``) against the CPU plugin, f32, within
    rtol 1e-5, atol 1e-5 (tests/ops/test_normalize.py)."""
    rank = case.rng.randint(2, 4)
    shape = [case.rng.randint(1, 5) for _ in range(rank)]
    shape[1] = case.rng.choice([2, 4, 6])
    et = "f32"  # (MVN-6 has no f16 or f64 evaluate, the others are compared with the CPU plugin at f32)
    x = (case.np.standard_normal(shape) * case.rng.choice([1, 10])).astype(NP[et])
    data = case.input(et, x, p_const=0)
    eps = case.rng.choice([1e-9, 1e-5, 1e-3, 0.5])
    axes = sorted(case.rng.sample(range(rank), case.rng.randint(1, rank)))
    axes = [a - rank if case.rng.random() < 0.3 else a for a in axes]
    axes_in = case.index_input(np.array(axes, np.int64), p_const=1)
    case.compare = bounded(lambda g, w, i: optest.assert_close("out", g, w, 1e-5, 1e-5))
    c = shape[1]
    if name == "MVN6":
        return [opset6.mvn(data, axes_in, case.rng.random() < 0.7, eps,
                           case.rng.choice(["inside_sqrt", "outside_sqrt"]))]
    case.oracle = "cpu"
    if name == "MVN1":
        return [NodeFactory("opset2").create("MVN", [data], {"across_channels": case.rng.random() < 0.5,
                                                             "normalize_variance": case.rng.random() < 0.7,
                                                             "eps": eps})]
    if name == "NormalizeL2":
        return [opset1.normalize_l2(data, axes_in, eps, case.rng.choice(["add", "max"]))]
    if name == "GRN":
        return [opset1.grn(data, eps)]
    if name == "LRN":  # (the CPU plugin runs axes [1] and the spatial ones)
        lrn_axes = [1] if rank < 4 or case.rng.random() < 0.5 else list(range(2, rank))
        return [opset1.lrn(data, case.index_input(np.array(lrn_axes, np.int64), p_const=1), case.rng.random(),
                           case.rng.choice([0.5, 0.75, 1.0]), case.rng.choice([1.0, 2.0]), case.rng.choice([1, 3, 5]))]
    if name == "GroupNormalization":
        groups = case.rng.choice([g for g in (1, 2, 3, 6) if c % g == 0])
        scale, bias = (case.input("f32", case.np.standard_normal(c).astype(np.float32), p_dyn=0) for _ in "sb")
        return [opset12.group_normalization(data, scale, bias, groups, eps)]  # (the CPU: static scale and bias)
    params = [case.input("f32", case.np.standard_normal(c).astype(np.float32)) for _ in range(3)]
    variance = case.input("f32", (case.np.random(c) + 0.1).astype(np.float32))
    return [opset5.batch_norm_inference(data, *params, variance, eps)]


# ----------------------------------------------------------------------------- depth and space

@op("DepthToSpace", "SpaceToDepth", "ShuffleChannels")
def gen_depth_space(case: Case, name: str):
    et = case.rng.choice(ALL)
    k, bs = case.rng.randint(1, 3), case.rng.randint(1, 3)
    if name == "ShuffleChannels":
        shape = case.shape(4, low_rank=1)
        axis = case.rng.randrange(len(shape))
        group = case.rng.choice([g for g in (1, 2, 3) if shape[axis] % g == 0])
        return [opset13.shuffle_channels(case.input(et, case.values(et, shape)),
                                         axis - len(shape) if case.rng.random() < 0.4 else axis, group)]
    depth, batch = case.rng.randint(1, 3), 0 if case.rng.random() < 0.1 else case.rng.randint(1, 2)
    if name == "DepthToSpace":
        shape = [batch, depth * bs ** k] + [case.rng.randint(1, 3) for _ in range(k)]
    else:
        shape = [batch, depth] + [case.rng.randint(1, 3) * bs for _ in range(k)]
    mode = case.rng.choice(["blocks_first", "depth_first"])
    data = case.input(et, case.values(et, shape))
    make = opset1.depth_to_space if name == "DepthToSpace" else opset1.space_to_depth
    return [make(data, mode, bs)]


@op("ExtractImagePatches")
def gen_extract_image_patches(case: Case, name: str):
    """No reference ``evaluate``: the CPU plugin, bit for bit (data movement), on the types it runs as they are."""
    case.oracle = "cpu"
    et = case.rng.choice(CPU_TYPES)
    shape = [case.rng.randint(0 if case.rng.random() < 0.05 else 1, 3), case.rng.randint(1, 3),
             case.rng.randint(1, 9), case.rng.randint(1, 9)]
    geometry = [[case.rng.randint(1, 3), case.rng.randint(1, 3)] for _ in range(3)]
    data = case.input(et, case.values(et, shape, finite=True), p_const=0)
    return [opset3.extract_image_patches(data, *geometry, case.rng.choice(["valid", "same_upper", "same_lower"]))]


# ----------------------------------------------------------------------------- recurrent

RECURRENT_GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


@op("LSTMSequence5", "GRUSequence5", "RNNSequence5", "LSTMCell4", "GRUCell3", "RNNCell")
def gen_recurrent(case: Case, name: str):
    """No reference ``evaluate``: the CPU plugin (f32) within ``1e-5 (1 + max|want|)`` per output, the bound of
    ir_runner/ops/sequence_recurrent/recurrent.py (tests/ops/test_recurrent.py). With dynamic dims
    declared, the CPU plugin ignores some sequences' lengths (its run of the model made static does not):
    that run then decides."""
    case.oracle = "cpu"
    kind = name[:4].rstrip("SC") if name.startswith("LSTM") else name[:3]
    gates, sequence = RECURRENT_GATES[kind], "Sequence" in name
    batch, seq, inp, hidden = (case.rng.randint(1, top) for top in (4, 6, 5, 6))
    direction = case.rng.choice(["forward", "reverse", "bidirectional"]) if sequence else "forward"
    dirs = 2 if direction == "bidirectional" else 1
    lead = [dirs] if sequence else []
    f32 = lambda shape, scale=1.0: (case.np.standard_normal(shape) * scale).astype(np.float32)  # noqa: E731
    x = case.input("f32", f32([batch, seq, inp] if sequence else [batch, inp]), p_const=0)
    states = [case.input("f32", f32([batch, dirs, hidden] if sequence else [batch, hidden]), p_const=0.1)
              for _ in range(2 if kind == "LSTM" else 1)]
    lbr = kind == "GRU" and case.rng.random() < 0.5
    weights = [case.input("f32", f32(lead + [gates * hidden, inp], 0.5), p_const=0.7, p_dyn=0),
               case.input("f32", f32(lead + [gates * hidden, hidden], 0.5), p_const=0.7, p_dyn=0),
               case.input("f32", f32(lead + [(gates + lbr) * hidden], 0.5), p_const=0.7, p_dyn=0)]
    count = {"LSTM": 3, "GRU": 2, "RNN": 1}[kind]
    activations = [case.rng.choice(["sigmoid", "tanh", "relu"]) for _ in range(count)] \
        if case.rng.random() < 0.4 else None
    clip = case.rng.choice([0.0, 0.0, 0.5, 2.0])
    extra = {"activations": activations, "clip": clip}
    if kind == "RNN" and not sequence:
        extra = {"activations": activations or ["tanh"], "activations_alpha": [], "activations_beta": [], "clip": clip}
    if kind == "GRU":
        extra["linear_before_reset"] = lbr

    def compare(got, want, index):
        optest.assert_close("out", got, want, 0, 1e-5 * (1 + float(np.abs(want).max(initial=0))))

    case.compare = compare
    if not sequence:
        make = {"LSTM": opset4.lstm_cell, "GRU": opset3.gru_cell, "RNN": opset3.rnn_cell}[kind]
        return [make(x, *states, *weights, hidden, **extra)]
    lengths = [case.rng.randint(1, seq) if case.rng.random() < 0.6 else seq for _ in range(batch)]
    length_in = case.input("i32", np.array(lengths, np.int32), p_const=0.3, p_dyn=0)
    make = {"LSTM": opset5.lstm_sequence, "GRU": opset5.gru_sequence, "RNN": opset5.rnn_sequence}[kind]
    return [make(x, *states, length_in, *weights, hidden, direction, **extra)]


# ----------------------------------------------------------------------------- attention

@op("ScaledDotProductAttention")
def gen_attention(case: Case, name: str):
    """No reference ``evaluate``: the CPU plugin (f32) within rtol 1e-5, atol 1e-6 (tests/ops/test_attention.py),
    the direct f64 formula deciding where they differ (a row masked everywhere: ir-run NaN, the CPU plugin 0)."""
    case.oracle = "cpu"
    batch = [case.rng.randint(1, 3) for _ in range(case.rng.randint(1, 2))]
    big_l, big_s, e, ev = (case.rng.randint(1, 8) for _ in range(4))
    ones = lambda dims: [1 if case.rng.random() < 0.3 else d for d in dims]  # noqa: E731
    shapes = [batch + [big_l, e], ones(batch) + [big_s, e], ones(batch) + [big_s, ev]]
    args = [case.input("f32", case.np.standard_normal(s).astype(np.float32), p_const=0.1) for s in shapes]
    mask = case.rng.choice(["none", "bool", "float"])
    causal = case.rng.random() < 0.3
    if mask != "none" or case.rng.random() < 0.3:
        m_shape = ones(batch) + [1 if case.rng.random() < 0.3 else big_l, big_s]
        if mask == "bool":
            args.append(case.input("boolean", case.np.random(m_shape) < 0.8, p_const=0.2))
        else:
            args.append(case.input("f32", np.where(case.np.random(m_shape) < 0.2, -np.inf,
                                                   case.np.standard_normal(m_shape)).astype(np.float32), p_const=0.2))
        if case.rng.random() < 0.4:
            args.append(case.const("f32", case.rng.choice([0.125, 0.5, 1.0, 2.0])))
    case.compare = lambda g, w, i: optest.assert_close("out", g, w, 1e-5, 1e-6)
    case.direct = lambda: [direct_attention(*(case.value(arg) for arg in args), causal=causal)]
    return [opset13.scaled_dot_product_attention(*args, causal=causal)]


def direct_attention(q, k, v, mask=None, scale=None, *, causal: bool) -> np.ndarray:
    """The specification's formula in f64 (a row masked everywhere is NaN). The arbiter where the CPU plugin
    differs: it gives 0 for such a row, and where the key has one element (S = 1) a float mask's -inf
    confuses it (other rows zeroed, or the masked row computed as if unmasked)."""
    q, k, v = (t.astype(np.float64) for t in (q, k, v))
    scores = q @ np.swapaxes(k, -1, -2) * (1 / np.sqrt(q.shape[-1]) if scale is None else float(scale))
    if causal:
        scores = scores + np.where(np.triu(np.ones(scores.shape[-2:], bool), 1), -np.inf, 0)
    elif mask is not None:
        scores = scores + (np.where(mask, 0, -np.inf) if mask.dtype == bool else mask.astype(np.float64))
    with np.errstate(invalid="ignore"):  # (-inf - -inf: the masked rows' NaN)
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return (weights / weights.sum(axis=-1, keepdims=True)) @ v


# ----------------------------------------------------------------------------- chains

@op("ChainReshape", "ChainBroadcast", "ChainRange", "ChainTile", "ChainElementwise")
def gen_chain(case: Case, name: str):
    et = case.rng.choice(ALL)
    if name == "ChainElementwise":
        et = case.rng.choice(("f32", "f16", "i32", "i64", "u8"))
        x = case.input(et, case.values(et, case.shape(4)))
        node = x
        for _ in range(case.rng.randint(2, 4)):
            pick = case.rng.choice(["Add", "Multiply", "Maximum", "Abs", "Negative", "Relu", "Floor", "Sqrt"])
            if pick in ("Negative",) and et[0] == "u":
                pick = "Abs"
            if pick in BINARY:
                other = case.input(et, case.values(et, case.shape(2)))
                node = NodeFactory("opset1").create(pick, [node, other], {"auto_broadcast": "numpy"}).output(0)
            else:
                node = UNARY[pick][0](node).output(0)
        return [node]
    shape = case.shape(4, low_rank=1, p_zero=0.05)
    x = case.input(et, case.values(et, shape), p_const=0, p_dyn=0.7)
    it = case.rng.choice(["i32", "i64"])
    dims = opset3.shape_of(x, it)
    rank = len(shape)
    if name == "ChainReshape":
        # flatten some leading or trailing dims, keeping the others from ShapeOf
        cut = case.rng.randint(0, rank)
        head = opset8.gather(dims, case.const("i64", list(range(cut))), case.const("i64", 0))
        pieces = [head, case.const(it, [-1])] if case.rng.random() < 0.5 else \
            [case.const(it, [-1]), opset8.slice(dims, case.const("i64", [cut]), case.const("i64", [2**31]),
                                                 case.const("i64", [1]))]
        target = opset1.concat(pieces, 0)
        if math.prod(shape) == 0:
            raise Skip("-1 with zero elements is ambiguous")
        y = opset1.reshape(x, target, False)
        return [opset1.reshape(y, opset3.shape_of(x, it), False)] if case.rng.random() < 0.3 else [y]
    if name == "ChainBroadcast":
        y_shape = [1 if case.rng.random() < 0.5 else d for d in shape[case.rng.randint(0, rank):]]
        y = case.input(et, case.values(et, y_shape), p_dyn=0.3)
        return [opset3.broadcast(y, dims, case.rng.choice(["numpy", "bidirectional"]))]
    if name == "ChainTile":
        y = case.input(et, case.values(et, case.shape(3)), p_dyn=0.3)
        return [opset1.tile(y, dims)]
    # Range over one of the dims, feeding a Reshape or a Gather
    i = case.rng.randrange(rank)
    n = opset8.gather(dims, case.const("i64", i), case.const("i64", 0))
    if case.rng.random() < 0.5:
        n = opset1.add(n, case.const(it, 2))
    r = opset4.range(case.const(it, 0), n, case.const(it, 1), case.rng.choice(["i32", "i64", "f32"]))
    return [r] if case.rng.random() < 0.5 else [opset1.multiply(opset1.convert(r, "f32"),
                                                                opset1.convert(opset1.reduce_sum(
                                                                    dims, case.const("i64", 0), True), "f32"))]


# ----------------------------------------------------------------------------- running a case

def empty_somewhere(model, feeds):
    """``model`` reshaped to the feeds when one of its layers then has an empty output, else None (also when it
    cannot be reshaped: the reference then says why). An empty Constant (ReduceSum's empty axes, Squeeze's,
    Tile's repeats) does not count: the references read them."""
    try:
        model = model.clone()
        model.reshape({p.output(0): ov.PartialShape(list(np.shape(feeds[p.output(0).get_any_name()])))
                       for p in model.get_parameters()})
    except RuntimeError:
        return None
    empty = any(node.get_output_partial_shape(i).is_static and 0 in list(node.get_output_partial_shape(i).to_shape())
                for node in model.get_ordered_ops() if node.get_type_name() != "Constant"
                for i in range(node.get_output_size()))
    return model if empty else None


def cpu_oracle(xml, feeds):
    """The CPU plugin's outputs, once OpenVINO's shape inference accepts the feeds' shapes (its dynamic path runs
    some that static inference refuses, such as a dilated kernel larger than the padded data: both refusing is
    then a pass, as with the reference)."""
    model = ov.Core().read_model(str(xml))
    model.reshape({p.output(0): ov.PartialShape(list(np.shape(feeds[p.output(0).get_any_name()])))
                   for p in model.get_parameters()})
    return optest.cpu_outputs(xml, feeds)


def static_cpu(model, feeds, workdir: Path) -> Callable | None:
    """The CPU plugin on ``model`` reshaped to the feeds' static shapes (None when it already is): where the CPU
    plugin's dynamic-shape path is wrong (a recurrent sequence's lengths ignored) its static path decides."""
    if all(p.get_partial_shape().is_static for p in model.get_parameters()):
        return None

    def outputs():
        static = model.clone()
        static.reshape({p.output(0): ov.PartialShape(list(np.shape(feeds[p.output(0).get_any_name()])))
                        for p in static.get_parameters()})
        ov.save_model(static, str(workdir / "static.xml"), compress_to_fp16=False)
        return optest.cpu_outputs(workdir / "static.xml", feeds)
    return outputs


def cpu_wrong(compare: Callable, got: np.ndarray, cpu: np.ndarray, direct: np.ndarray, index: int) -> bool:
    """Whether the CPU plugin's output is wrong where ir-run's is right: ir-run within the case's bound of the
    arbiter's (a direct computation, f64 for floats, or the CPU plugin's static path) and the CPU plugin not.
    ir-run outside it raises (a failure, named as such)."""
    try:
        compare(got, direct, index)
    except AssertionError as e:
        raise AssertionError(f"ir-run differs from the CPU plugin and from the direct computation: {e}") from e
    try:
        compare(cpu, direct, index)
    except AssertionError:
        return True
    return False


def run_case(name: str, seed: int, workdir: Path, show: bool = False) -> tuple[str, str]:
    """("pass"|"fail"|"skip"|"oracle", detail) for one case ("oracle": the CPU plugin was wrong, see cpu_wrong)."""
    case = Case(seed * 7919 + sum(map(ord, name)))
    try:
        outputs = GENERATORS[name](case)
        outs = []
        for o in outputs:
            node = o.get_node() if isinstance(o, ov.Output) else o
            outs += [node.output(i) for i in range(node.get_output_size())] if not isinstance(o, ov.Output) else [o]
        for i, o in enumerate(outs):
            o.get_tensor().set_names({f"out{i}"})
        model = ov.Model(outs, case.params, "fuzz")
        xml = workdir / "model.xml"
        ov.save_model(model, str(xml), compress_to_fp16=False)
    except Skip as e:
        return "skip", f"generator: {e}"
    except Exception as e:  # OpenVINO refuses the graph
        return "skip", f"openvino: {str(e).splitlines()[0][:160]}"
    if show:
        print(xml.read_text())
        print({k: (v.dtype, v.shape, v.reshape(-1)[:16]) for k, v in case.feeds.items()})
    # 1. inference == declaration, bounds as OpenVINO's
    try:
        optest.check_inference(xml)
        ours = ir_runner.load(str(xml))
        theirs = ov.Core().read_model(str(xml))
        want_shapes = [str(o.get_partial_shape()).replace(" ", "") for o in theirs.outputs]
        got_shapes = [str(o.partial_shape) for o in ours.outputs]
        if want_shapes != got_shapes:
            return "fail", f"inferred output shapes {got_shapes}, OpenVINO {want_shapes}"
    except ir_runner.IRError as e:
        return "fail", f"load: {type(e).__name__}: {str(e).splitlines()[0][:300]}"
    except AssertionError as e:
        return "fail", f"inference: {str(e)[:400]}"
    # 2. the reference (which crashes the process on several empty tensors: then shapes only)
    oracle = case.oracle
    static = empty_somewhere(theirs, case.feeds) if oracle == "reference" else None
    if static is not None:
        try:
            got = ours.run(case.feeds)
        except ir_runner.IRError as e:
            return "skip", f"empty tensors, ir-run refuses: {str(e).splitlines()[0][:160]}"
        want_shapes = [o.get_partial_shape() for o in static.outputs]  # (static unless values decide them)
        if not all(w.compatible(ov.PartialShape(list(g.shape))) for g, w in zip(got.values(), want_shapes)):
            return "fail", f"empty tensors: shapes {[g.shape for g in got.values()]}, OpenVINO {want_shapes}"
        return "skip", "empty tensors: shapes only"
    try:
        if callable(oracle):
            want = oracle(xml, case.feeds)
        elif oracle == "cpu":
            want = cpu_oracle(xml, case.feeds)
        else:
            want = optest.reference_outputs(xml, case.feeds)
    except AssertionError as e:
        return "skip", f"no reference: {str(e)[:120]}"
    except Exception as e:
        reference_error = str(e).splitlines()[0][:160] if str(e) else type(e).__name__
        try:
            ours.run(case.feeds)
        except ir_runner.IRError:
            return "pass", "both refuse"
        return "skip", f"reference throws: {reference_error}"
    # 3. ir-run
    try:
        got = ours.run(case.feeds)
    except ir_runner.IRError as e:
        return "fail", f"run: {type(e).__name__}: {str(e).splitlines()[0][:300]}"
    except Exception as e:
        return "fail", f"run crashed: {type(e).__name__}: {e}\n{traceback.format_exc()[-1500:]}"
    compare = case.compare or exact
    oracle_wrong: list[str] = []
    try:
        assert len(got) == len(want), (len(got), len(want))
        for i, ((key, g), w) in enumerate(zip(got.items(), want)):
            w = np.asarray(w)
            assert g.shape == w.shape, f"{key}: shape {g.shape}, reference {w.shape}"
            if w.dtype != g.dtype:
                assert w.dtype.itemsize == g.dtype.itemsize, f"{key}: dtype {g.dtype}, reference {w.dtype}"
                w = w.view(g.dtype)
            if oracle == "cpu" and g.dtype.kind == "f":  # the CPU plugin flushes subnormals (constants too)
                g = np.where((np.abs(g) < np.finfo(g.dtype).tiny) & (w == 0), w, g)
            try:
                compare(g, w, i)
            except AssertionError as e:
                arbiter = case.direct or (static_cpu(theirs, case.feeds, workdir) if oracle == "cpu" else None)
                if arbiter is None or not cpu_wrong(compare, g, w, arbiter()[i], i):
                    raise
                oracle_wrong.append(f"{key}: {str(e)[:200]}")
    except AssertionError as e:
        return "fail", f"values: {str(e)[:600]}"
    if oracle_wrong:
        arbiter = "the direct computation" if case.direct else "its own run of the model made static"
        return "oracle", f"the CPU plugin differs from {arbiter}, which ir-run equals: {oracle_wrong}"
    return "pass", ""

from tests.helpers import fuzz_misc  # noqa: E402, F401  (registers its generators here)
