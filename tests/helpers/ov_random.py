"""Random Select/Gather/Convert models built with the ``openvino`` Python API, and OpenVINO's reference outputs
for them, for the differential tests (tests/test_vs_openvino.py and the kernel-path tests that reuse them).

Each case builds a random model with the real ``openvino`` Python API, saves it with
``openvino.save_model(..., compress_to_fp16=False)``, runs the file with ``ir_runner.load(...).run`` and
compares every output, bit for bit, with OpenVINO's *reference* result: every node of the re-read model
evaluated in topological order with ``Node.evaluate`` (the code constant folding runs; the CPU plugin and
its deviations are not involved). Seeds are fixed: a failing case is reproducible by its id.

The reference kernels do not instantiate every type. Gather and Select only move bits, so where a type has
no reference kernel the node is evaluated on a same-width stand-in: bits viewed as u8/bf16/u16/u32/u64 (never
f16, whose NaNs the reference quietens), and u1/u4/i4, which ir-run holds one per byte, as u8/i8. Indices of
types other than i32/i64 are first converted to i64 the way the reference template reads them
(``int64_t idx = indices[i]``).
Where ir-run deliberately differs from the reference (docs/convert-semantics.md) the expected value is the
documented one: -> bf16 rounds the reference's f32 value to nearest even, and f32 -> u32 takes the
reference's scalar (one element at a time) result. Select pdpd with axis -1 and a ``cond`` of lower rank than
``else`` is not generated: the reference kernel places ``cond`` at ``else``'s offset, against the shape rule
ir-run follows (semantics.md). A zero-element output is not evaluated (it has only a shape and a type, which
OpenVINO's shape inference gives): the reference Select writes out of bounds when it broadcasts into one.
"""

from __future__ import annotations

import random

import ml_dtypes
import numpy as np
import openvino as ov
import pytest
from openvino import opset1, opset7, opset8
from openvino.utils.node_factory import NodeFactory

import ir_runner
from tests.helpers.node_eval import evaluate_tensors

NP = {
    "boolean": np.bool_, "f16": np.float16, "f32": np.float32, "f64": np.float64, "bf16": ml_dtypes.bfloat16,
    "f8e4m3": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2, "i4": ml_dtypes.int4, "u4": ml_dtypes.uint4,
    "u1": np.uint8, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
    "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
}
TYPES = tuple(NP)
INT_BITS = {"u1": 1, "u4": 4, "i4": 4, "i8": 8, "u8": 8, "i16": 16, "u16": 16, "i32": 32, "u32": 32, "i64": 64,
            "u64": 64}
PACKED = {"u1": 1, "u4": 4, "i4": 4}
# element types each reference kernel instantiates (measured with Node.evaluate on 2026.4.1)
GATHER_DATA = {"boolean", "f16", "f32", "bf16", "i8", "i32", "i64", "u8", "u32", "u64"}
SELECT_DATA = {"boolean", "f16", "f32", "f64", "bf16", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"}
INDEX_TYPES = ("i32", "i64", "i32", "i64", "i8", "i16", "u8", "u16", "u32", "u64", "i4", "u4")


# ----------------------------------------------------------------------------- tensors


def ov_type(et: str) -> ov.Type:
    return getattr(ov.Type, et)


def to_tensor(et: str, array: np.ndarray) -> ov.Tensor:
    """An ov.Tensor of ``et`` holding ``array`` (ir-run's representation: packed types one per byte)."""
    tensor = ov.Tensor(ov_type(et), ov.Shape(list(array.shape)))
    if array.size == 0:
        return tensor
    raw = tensor.data.reshape(-1).view(np.uint8)
    if et in PACKED:
        bits = PACKED[et]
        low = (array.reshape(-1).astype(np.int64) & ((1 << bits) - 1)).astype(np.uint8)
        per = 8 // bits
        low = np.concatenate([low, np.zeros(-low.size % per, np.uint8)]).reshape(-1, per)
        shifts = np.arange(7, -1, -1, dtype=np.uint8) if bits == 1 else np.array([0, 4], np.uint8)
        raw[...] = np.bitwise_or.reduce(low << shifts, axis=1)
    else:
        raw[...] = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    return tensor


def from_tensor(et: str, tensor: ov.Tensor) -> np.ndarray:
    """The values of an ov.Tensor of ``et`` in ir-run's representation."""
    shape = tuple(tensor.shape)
    dtype = np.dtype(NP[et])
    count = int(np.prod(shape, dtype=np.int64))
    if count == 0:
        return np.zeros(shape, dtype)
    raw = np.array(tensor.data, copy=True).reshape(-1).view(np.uint8)
    if et not in PACKED:
        return raw.view(dtype).reshape(shape)
    if PACKED[et] == 1:
        values = np.unpackbits(raw, bitorder="big")[:count]
    else:
        values = np.stack([raw & 0xF, raw >> 4], axis=1).reshape(-1)[:count]
        if et == "i4":
            values = (values.astype(np.int8) << 4) >> 4
    return values.astype(dtype).reshape(shape)


# ----------------------------------------------------------------------------- the reference


def standin(kind: str, et: str) -> str:
    """The type a data input of ``kind`` is evaluated as: itself, or a same-width type with a kernel."""
    supported = GATHER_DATA if kind == "Gather" else SELECT_DATA
    if et in supported:
        return et
    if et in ("i4",):
        return "i8"
    width = np.dtype(NP[et]).itemsize
    return {1: "u8", 2: "bf16" if kind == "Gather" else "u16", 4: "u32", 8: "u64"}[width]  # f16 would quieten


def as_standin(array: np.ndarray, et: str, target: str) -> np.ndarray:
    if et == target:
        return array
    if et in PACKED:
        return array.astype(NP[target])
    return array.view(NP[target])


def evaluate(node: ov.Node, args: list[np.ndarray]) -> list[np.ndarray]:
    """``node.evaluate`` on ``args``; Gather/Select data of types without a kernel go through a stand-in
    (evaluate dispatches on the tensors' element types, not on the node's)."""
    kind = node.get_type_name()
    in_types = [i.get_element_type().get_type_name() for i in node.inputs()]
    out_type = node.get_output_element_type(0).get_type_name()
    eval_types = list(in_types)
    if kind == "Gather":
        eval_types[0] = standin(kind, in_types[0])
        if in_types[1] not in ("i32", "i64"):
            eval_types[1] = "i64"
            args = [args[0], args[1].astype(np.int64), args[2]]
    elif kind == "Select":
        eval_types[1] = eval_types[2] = standin(kind, in_types[1])
    eval_out = eval_types[0] if kind == "Gather" else (eval_types[1] if kind == "Select" else out_type)
    shape = tuple(node.get_output_shape(0))
    if 0 in shape:  # nothing to compute; OpenVINO's reference Select corrupts the heap on broadcast empty outputs
        return [np.zeros(shape, NP[out_type])]
    tensors = [to_tensor(t, as_standin(a, et, t)) for a, et, t in zip(args, in_types, eval_types)]
    result = from_tensor(eval_out, evaluate_tensors(node, tensors, [ov_type(eval_out)])[0])
    if eval_out != out_type:
        result = result.astype(NP[out_type]) if out_type in PACKED else result.view(NP[out_type])
    return [result]


def documented_convert(node: ov.Node, x: np.ndarray, src: str, dst: str, reference: np.ndarray):
    """ir-run's documented value where it deviates from the reference: (expected, NaN-only mask)."""
    if src == "f32" and dst == "u32":
        scalar = [evaluate(node, [x.reshape(-1)[i:i + 1]])[0] for i in range(x.size)]
        return np.concatenate(scalar or [np.zeros(0, np.uint32)]).reshape(x.shape), None
    if dst != "bf16":
        return reference, None
    widen = opset1.convert(opset1.parameter(ov.PartialShape(list(x.shape)), ov_type(src)), "f32")
    f32 = evaluate(widen, [x])[0]
    nan = np.isnan(f32)
    return np.where(nan, np.float32(0), f32).astype(ml_dtypes.bfloat16), nan


def reference_outputs(model: ov.Model, feeds: dict[str, np.ndarray]):
    """Every node in topological order; returns per Result (expected, NaN-only mask or None)."""
    values: dict = {}
    for node in model.get_ordered_ops():
        kind = node.get_type_name()
        if kind == "Parameter":
            values[node.output(0)] = (feeds[node.output(0).get_any_name()], None)
            continue
        args = [values[i.get_source_output()][0] for i in node.inputs()]
        (result,) = evaluate(node, args)
        nan_only = None
        if kind == "Convert":
            src = node.get_input_element_type(0).get_type_name()
            dst = node.get_output_element_type(0).get_type_name()
            result, nan_only = documented_convert(node, args[0], src, dst, result)
        values[node.output(0)] = (result, nan_only)
    return [values[r.input_value(0)] for r in model.get_results()]


# ----------------------------------------------------------------------------- random models


def random_values(rng: np.random.Generator, et: str, shape, *, quiet_f16: bool = True) -> np.ndarray:
    """Random values of ``et``: any bit pattern for floats (NaN payloads, inf, subnormals), full-range ints.

    f16 signalling NaNs are quietened unless ``quiet_f16`` is false: OpenVINO's reference Gather and Select
    quieten them, which ``test_f16_signalling_nan`` checks on its own.
    """
    dtype = np.dtype(NP[et])
    count = int(np.prod(shape, dtype=np.int64))
    if et == "boolean":
        return rng.integers(0, 2, shape).astype(bool)
    if et in PACKED or et in ("i8", "u8"):
        bits = INT_BITS[et]
        low = -(1 << (bits - 1)) if et[0] == "i" else 0
        return rng.integers(low, low + (1 << bits), shape).astype(dtype)
    if dtype.kind in "iu":
        raw = rng.integers(0, 256, count * dtype.itemsize, dtype=np.uint8).view(dtype)
        small = rng.integers(-5, 6, count).astype(dtype)
        return np.where(rng.random(count) < 0.5, small, raw).reshape(shape)
    raw = rng.integers(0, 256, count * dtype.itemsize, dtype=np.uint8).view(dtype)
    with np.errstate(over="ignore"):
        plain = (rng.standard_normal(count) * rng.choice([1.0, 100.0, 1e5], count)).astype(dtype)
    values = np.where(rng.random(count) < 0.6, plain, raw)
    if et == "f16" and quiet_f16:
        values.view(np.uint16)[np.isnan(values)] |= 0x0200
    return values.reshape(shape)


def parameter(name: str, et: str, shape) -> ov.Node:
    node = opset1.parameter(ov.PartialShape(list(shape)), ov_type(et), name=name)
    node.output(0).get_tensor().set_names({name})
    return node


class Inputs:
    """The Parameters (with their feeds) and Constants a random model reads."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.params: list[ov.Node] = []
        self.feeds: dict[str, np.ndarray] = {}

    def numpy_rng(self) -> np.random.Generator:
        return np.random.default_rng(self.rng.randrange(2**32))

    def add(self, prefix: str, et: str, values: np.ndarray, p_const: float = 0.2) -> ov.Output:
        """A Parameter fed ``values`` or, with probability ``p_const``, a Constant holding them."""
        if self.rng.random() < p_const:
            return ov.op.Constant(to_tensor(et, values)).output(0)
        name = f"{prefix}{len(self.params)}"
        node = parameter(name, et, values.shape)
        self.params.append(node)
        self.feeds[name] = values
        return node.output(0)


def random_shape(rng: random.Random, max_rank: int = 4) -> list[int]:
    rank = rng.randint(0, max_rank)
    return [0 if rng.random() < 0.04 else rng.randint(1, 4) for _ in range(rank)]


def with_ones(rng: random.Random, dims: list[int], p: float = 0.3) -> list[int]:
    return [1 if d != 0 and rng.random() < p else d for d in dims]


def select_shapes(rng: random.Random, mode: str, axis: int) -> list[list[int]]:
    """Shapes of (cond, then, else) valid for ``mode``."""
    out = random_shape(rng)
    rank = len(out)
    if mode == "none":
        return [out, out, out]
    if mode == "numpy":
        shapes = [with_ones(rng, out[rank - rng.randint(0, rank):]) for _ in range(3)]
        shapes[rng.randrange(3)] = out
        return shapes
    if axis == -1:
        length = rng.randint(0, rank)  # cond and else of one rank: the reference aligns cond at else's offset
        return [with_ones(rng, out[rank - length:]), out, with_ones(rng, out[rank - length:])]
    start = min(axis, rank)
    length_c, length_e = rng.randint(0, rank - start), rng.randint(0, rank - start)
    return [with_ones(rng, out[start:start + length_c]), out, with_ones(rng, out[start:start + length_e])]


def random_select(rng: random.Random, inputs: Inputs) -> ov.Node:
    """A random valid Select-1 over new inputs: every broadcast mode, pdpd axes -1, 0, 1, 2."""
    mode = rng.choice(["numpy", "numpy", "none", "pdpd"])
    axis = rng.choice([-1, -1, 0, 1, 1, 2]) if mode == "pdpd" else 0
    shapes = select_shapes(rng, mode, axis)
    axis = min(axis, len(shapes[1]))  # a pdpd axis past then's rank (then a scalar cond and else)
    et = rng.choice(TYPES)
    outs = [inputs.add(name, t, random_values(inputs.numpy_rng(), t, shape))
            for name, shape, t in zip(("cond", "then", "else"), shapes, ("boolean", et, et))]
    if mode == "pdpd":
        attrs = {"auto_broadcast": "pdpd", "auto_broadcast.auto_broadcast_axis": axis}
        return NodeFactory("opset1").create("Select", outs, attrs)
    return opset1.select(*outs, auto_broadcast=mode)


def random_indices(rng: np.random.Generator, et: str, shape, dim: int) -> np.ndarray:
    """Indices of ``et``: mostly in [-dim-2, dim+2], some at the type's extremes (and beyond 32 bits)."""
    dtype = np.dtype(NP[et])
    bits = INT_BITS[et]
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if et[0] == "i" else (0, (1 << bits) - 1)
    near = rng.integers(max(low, -dim - 2), min(high, dim + 2) + 1, shape)
    extreme = np.array([low, high, low + 1, high - 1] + ([2**32 + 1, -(2**32)] if et == "i64" else []), dtype=object)
    far = rng.choice(extreme, shape)
    pick = rng.random(shape) < 0.1
    return np.where(pick, far, near).astype(np.int64 if et != "u64" else np.uint64).astype(dtype)


def random_gather(rng: random.Random, inputs: Inputs, data: ov.Output | None = None) -> ov.Node:
    """A random valid Gather-1/7/8 of ``data`` (default: a new input); negative axis and batch_dims too."""
    version = rng.choice([1, 7, 8])
    if data is None:
        dims = random_shape(rng) or [rng.randint(1, 4)]
        et = rng.choice(TYPES)
        data = inputs.add("data", et, random_values(inputs.numpy_rng(), et, dims))
    data_dims = list(data.get_shape())
    rank = len(data_dims)
    batch_dims = 0 if version == 1 else rng.randint(0, min(rank - 1, 2))
    axis = rng.randint(batch_dims, rank - 1)
    idx_rank = rng.randint(batch_dims, batch_dims + 2)
    idx_dims = data_dims[:batch_dims] + [0 if rng.random() < 0.05 else rng.randint(1, 4)
                                         for _ in range(idx_rank - batch_dims)]
    idx_et = rng.choice(INDEX_TYPES)
    indices = inputs.add("indices", idx_et, random_indices(inputs.numpy_rng(), idx_et, idx_dims, data_dims[axis]), 0.3)
    axis_value = axis - rank if rng.random() < 0.5 else axis
    axis_node = opset1.constant(np.full(rng.choice([(), (1,)]), axis_value, dtype=rng.choice([np.int32, np.int64])))
    if version == 1:
        return opset1.gather(data, indices, axis_node)
    bd = batch_dims - idx_rank if rng.random() < 0.4 else batch_dims
    return (opset7 if version == 7 else opset8).gather(data, indices, axis_node, batch_dims=bd)


def random_convert(rng: random.Random, inputs: Inputs) -> ov.Node:
    """A random Convert-1 between any two of the 18 element types (signalling f16 NaNs included)."""
    src, dst = rng.choice(TYPES), rng.choice(TYPES)
    values = random_values(inputs.numpy_rng(), src, random_shape(rng, 3), quiet_f16=False)
    return opset1.convert(inputs.add("x", src, values), dst)


# ----------------------------------------------------------------------------- running a case


def check(model: ov.Model, feeds: dict[str, np.ndarray], tmp_path) -> None:
    path = tmp_path / "model.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    saved = ov.Core().read_model(str(path))
    expected = reference_outputs(saved, feeds)
    ours = ir_runner.load(path)
    got = ours.run(feeds)
    assert len(got) == len(expected)
    for (name, out), (want, nan_only) in zip(got.items(), expected):
        if nan_only is not None:
            assert np.isnan(out[nan_only].astype(np.float32)).all(), f"{name}: a NaN must stay a NaN"
            out, want = out[~nan_only], want[~nan_only]
        assert out.dtype == want.dtype, (name, out.dtype, want.dtype)
        assert out.shape == want.shape, (name, out.shape, want.shape)
        if out.tobytes() != want.tobytes():
            flat_o, flat_w = out.reshape(-1), want.reshape(-1)
            bad = [i for i in range(flat_o.size) if flat_o[i:i + 1].tobytes() != flat_w[i:i + 1].tobytes()]
            got_hex, want_hex = (a[bad[:4]].tobytes().hex(" ", a.itemsize) for a in (flat_o, flat_w))
            pytest.fail(f"{name}: {len(bad)} of {flat_o.size} elements differ, first at {bad[:4]}:"
                        f" got {flat_o[bad[:4]]!r} (bytes {got_hex}), want {flat_w[bad[:4]]!r} (bytes {want_hex});"
                        f" feeds {feeds}")


def single(node: ov.Node, inputs: Inputs, name: str) -> ov.Model:
    node.output(0).get_tensor().set_names({"out"})
    return ov.Model([opset1.result(node)], inputs.params, name)
