"""Truncate, CombineSegments and RaggedToDense (openvino-tokenizers, ``extension`` opset): ragged ids to the
padded batch a model takes. Written from ``truncate.cpp``, ``combine_segments.cpp`` and
``ragged_to_dense.cpp`` (2026.4):

- Truncate cuts each row (or pair of rows) to ``max_length`` ids, on the ``left`` or ``right``; a pair as
  ``only_first``, ``only_second`` or ``longest_first`` says (HF's split of an odd length included).
- CombineSegments concatenates, row by row, the segments (a ragged tensor of one row is repeated for every
  row: the special tokens) and gives each id its segment's id (the last input).
- RaggedToDense pads (or cuts) each row to the target length with the default value, on the right unless
  ``pad_right`` (attribute, or the optional 6th input) is false; the mask marks the real ids. With
  ``m_pad_max_length`` a row shorter than the target takes the next ids of the flat data as openvino-tokenizers
  does (it reads on past its row), and the default value past the end of the data (where it reads memory
  that is not the tensor's).
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ...types import DYNAMIC_DIM, Dim, PartialShape, TensorSpec
from ..api import Attr, OpContext, OpDef, equal_merge
from ._ragged import BOOL, I32, expect, expect_ragged, ragged_specs, ranges, text_input


def infer_truncate(ctx: OpContext):
    count = len(ctx.inputs)
    segments = 0
    for i in range(count // 3):
        expect_ragged(ctx, 3 * i, f"segment {i}")
        segments += 1
        after = ctx.inputs[3 * (i + 1)] if 3 * (i + 1) < count else None
        if after is not None and after.element_type == I32 and after.shape.rank == 0:
            break
    else:
        ctx.fail("expects a scalar i32 max_length after the segments")
    if segments not in (1, 2):
        ctx.fail(f"truncates one segment or a pair, got {segments}")
    if count not in (3 * segments + 2, 3 * segments + 3):
        ctx.fail(f"takes {3 * segments + 3} inputs for {segments} segment(s) (max_length, side, mode), got {count}")
    side = text_input(ctx, 3 * segments + 1, "the truncation side")
    if side is not None and side not in (b"left", b"right"):
        ctx.fail(f"the truncation side must be 'left' or 'right', got {side!r}", position=3 * segments + 1)
    if count == 3 * segments + 3:
        mode = text_input(ctx, count - 1, "the truncation mode")
        if mode is not None and mode not in (b"only_first", b"only_second", b"longest_first"):
            ctx.fail(f"the truncation mode must be only_first, only_second or longest_first, got {mode!r}",
                     position=count - 1)
    outputs = []
    for i in range(segments):
        outputs += ragged_specs(ctx.inputs[3 * i].shape, ctx.inputs[3 * i + 2].element_type)
    return outputs, {"segments": segments}


def truncate(*inputs: np.ndarray, segments: int):
    """Truncate: each row's ids cut to max_length (see the module's docstring)."""
    max_length = int(inputs[3 * segments].ravel()[0])
    side = inputs[3 * segments + 1].tobytes()
    mode = inputs[-1].tobytes() if len(inputs) == 3 * segments + 3 else b"longest_first"
    if side not in (b"left", b"right"):
        raise InputError(f"unknown truncation side {side!r}", hint="'left' or 'right'")
    outputs = [np.array(x, copy=True) for x in inputs[:3 * segments]]
    right = side == b"right"
    if segments == 1:
        begins, ends = outputs[0].ravel(), outputs[1].ravel()
        lengths = np.minimum(ends - begins, max_length)
        if right:
            ends[:] = begins + lengths
        else:
            begins[:] = ends - lengths
        return tuple(outputs)
    first_b, first_e, _, second_b, second_e, _ = (x.ravel() for x in outputs)
    if not first_b.size == first_e.size == second_b.size == second_e.size:
        raise InputError("the two segments have different numbers of rows")
    half, odd = max_length // 2, max_length % 2
    for i in range(first_b.size):
        first, second = int(first_e[i] - first_b[i]), int(second_e[i] - second_b[i])
        if first + second <= max_length:
            continue
        cut_first = cut_second = None
        if mode == b"only_first":
            cut_first = max_length if first > max_length else None
        elif mode == b"only_second":
            cut_second = max_length if second > max_length else None
        elif mode == b"longest_first":
            if first >= half + odd and second <= half:
                cut_first = max_length - second
            elif first < half + odd and second > half:
                cut_second = max_length - first
            else:
                cut_first = half + odd * (first >= second)
                cut_second = half + odd * (first < second)
        for cut, b, e in ((cut_first, first_b, first_e), (cut_second, second_b, second_e)):
            if cut is None:
                continue
            if right:
                e[i] = b[i] + cut
            else:
                b[i] = e[i] - cut
    return tuple(outputs)


def infer_combine_segments(ctx: OpContext):
    count = len(ctx.inputs)
    if count < 4 or (count - 1) % 3:
        ctx.fail(f"takes 3 inputs per segment and the segment ids, got {count} inputs")
    shape = PartialShape(None)
    element_type = None
    for i in range((count - 1) // 3):
        expect_ragged(ctx, 3 * i, f"segment {i}")
        spec = ctx.inputs[3 * i]
        if spec.shape.rank not in (None, 0):
            merged = equal_merge(shape, spec.shape)
            if merged is None:
                ctx.fail(f"segment {i}'s rows {spec.shape.brief()} do not match {shape.brief()}", position=3 * i)
            shape = merged
        data_type = ctx.inputs[3 * i + 2].element_type
        if element_type is not None and data_type != element_type and data_type.kind != "dynamic":
            ctx.fail(f"segment {i} holds {data_type}, segment 0 {element_type}", position=3 * i + 2)
        element_type = element_type or data_type
    return [*ragged_specs(shape, element_type), *ragged_specs(shape, ctx.inputs[-1].element_type)], {}


def combine_segments(*inputs: np.ndarray):
    """CombineSegments: the rows of every segment concatenated, with the segments' ids."""
    count = (len(inputs) - 1) // 3
    segment_ids = inputs[-1].ravel()
    if segment_ids.size != count:
        raise InputError(f"{segment_ids.size} segment ids for {count} segments")
    for j in range(count):
        ranges(inputs[3 * j], inputs[3 * j + 1], inputs[3 * j + 2].size, f"segment {j}'s row")
    rows = max(inputs[3 * i].size for i in range(count))
    shape = next((inputs[3 * i].shape for i in reversed(range(count)) if inputs[3 * i].ndim > 0), ())
    pieces, ids, begins, ends = [], [], [], []
    offset = 0
    for r in range(rows):
        begins.append(offset)
        for j in range(count):
            b_all, e_all, data = inputs[3 * j].ravel(), inputs[3 * j + 1].ravel(), inputs[3 * j + 2]
            k = 0 if b_all.size == 1 else r
            if k >= b_all.size:
                raise InputError(f"segment {j} has {b_all.size} rows, others {rows}")
            b, e = int(b_all[k]), int(e_all[k])
            pieces.append(data[b:e])
            ids.append(np.full(max(e - b, 0), segment_ids[j], dtype=inputs[-1].dtype))
            offset += max(e - b, 0)
        ends.append(offset)
    begins_array = np.array(begins, np.int32).reshape(shape)
    ends_array = np.array(ends, np.int32).reshape(shape)
    data_type = inputs[2].dtype
    flat = np.concatenate(pieces).astype(data_type, copy=False) if pieces else np.zeros(0, data_type)
    flat_ids = np.concatenate(ids) if ids else np.zeros(0, inputs[-1].dtype)
    return begins_array, ends_array, flat, begins_array.copy(), ends_array.copy(), flat_ids


def infer_ragged_to_dense(ctx: OpContext):
    count = len(ctx.inputs)
    begins, _, data, target, default = ctx.inputs[:5]
    expect(ctx, 0, I32, "the row begins")
    expect(ctx, 1, I32, "the row ends")
    if data.shape.rank == 0:
        ctx.fail("the data must have rank 1 or more", position=2)
    if target.element_type.kind not in ("int", "uint", "dynamic"):
        ctx.fail(f"the target length must be an integer, got {target.element_type}", position=3)
    if target.shape.rank not in (None, 0, 1) or (target.shape.rank == 1 and not target.shape.dims[0].contains(1)):
        ctx.fail(f"the target length must be a scalar or hold one element, got {target.shape.brief()}", position=3)
    if default.element_type != data.element_type and "dynamic" not in (default.element_type.kind,
                                                                        data.element_type.kind):
        ctx.fail(f"the default value {default.element_type} must have the data's type {data.element_type}",
                 position=4)
    if default.shape.rank not in (None, 0):
        ctx.fail(f"the default value must be a scalar, got {default.shape.brief()}", position=4)
    if count == 6 and (ctx.inputs[5].shape.rank not in (None, 0)):
        ctx.fail(f"pad_right must be a scalar, got {ctx.inputs[5].shape.brief()}", position=5)
    if begins.shape.rank is None or data.shape.rank is None:
        shape = PartialShape(None)
    else:
        value = ctx.const_value(3)
        dim = DYNAMIC_DIM if value is None else Dim(int(value.ravel()[0]), int(value.ravel()[0]))
        shape = PartialShape((*begins.shape.dims, dim, *data.shape.dims[1:]))
    params = {"pad_right": ctx.attr_bool("pad_right", True), "pad_max_length": ctx.attr_bool("m_pad_max_length",
                                                                                              False)}
    return [TensorSpec(data.element_type, shape), TensorSpec(BOOL, shape)], params


def ragged_to_dense(*inputs: np.ndarray, pad_right: bool, pad_max_length: bool):
    """RaggedToDense: each row padded or cut to the target length, and the mask of its real elements."""
    begins, ends, data, target, default = inputs[:5]
    if len(inputs) == 6:
        pad_right = bool(inputs[5].ravel()[0])
    width = int(target.ravel()[0])
    if width < 0:
        raise InputError(f"the target length is {width}")
    rows = begins.size
    out = np.empty((rows, width) + data.shape[1:], dtype=data.dtype)
    out[...] = default
    mask = np.zeros((rows, width) + data.shape[1:], dtype=bool)
    for i, (b, e) in enumerate(ranges(begins, ends, data.shape[0], "row")):
        length = width if pad_max_length else min(max(e - b, 0), width)
        values = data[b:b + length]
        where = slice(0, len(values)) if pad_right else slice(width - length, width - length + len(values))
        out[i, where] = values
        mask[i, slice(0, length) if pad_right else slice(width - length, width)] = True
    shape = begins.shape + (width,) + data.shape[1:]
    return out.reshape(shape), mask.reshape(shape)


OPS = (
    OpDef("Truncate", 1, 0, 0, ("begins", "ends", "data", "second_begins", "second_ends", "second_data",
                                "max_length", "side", "mode"),
          infer_truncate, truncate, domain="extension", min_inputs=5,
          attrs=(Attr("m_num_inputs", "1"),)),
    OpDef("CombineSegments", 1, 0, 0, ("begins", "ends", "data", "ids"), infer_combine_segments,
          combine_segments, domain="extension", variadic=True),
    OpDef("RaggedToDense", 1, 0, 0, ("begins", "ends", "data", "target", "default", "pad_right"),
          infer_ragged_to_dense, ragged_to_dense, domain="extension", min_inputs=5,
          attrs=(Attr("pad_right", "true"), Attr("m_pad_max_length", "false"))),
)
