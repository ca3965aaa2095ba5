"""Gather-1, Gather-7 and Gather-8: slices of ``data`` along ``axis`` picked by ``indices``.

Output shape: ``data.shape[:axis] + indices.shape[batch_dims:] + data.shape[axis+1:]``.
``axis`` must be constant (a Const, possibly behind a Convert); negative axis and batch_dims are
normalised (``batch_dims += rank(indices)``; OpenVINO accepts ``batch_dims < -rank(indices)`` and
computes garbage, ir-run rejects it). Index values follow OpenVINO's reference kernel for all three
versions: a negative index gets ``data.shape[axis]`` added, an index still outside ``[0, dim-1]``
yields zeros. With ``strict=True`` an index outside the spec's range (Gather-1/7: ``[0, dim-1]``,
Gather-8: ``[-dim, dim-1]``) is an error naming the layer, the value and its position.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import IndexOutOfRangeError, LayerRef
from ...parallel import PARALLEL_MIN_ELEMENTS, run_chunked
from ...types import DYNAMIC_DIM, Dim, PartialShape, TensorSpec, element_type_of, merge_dims
from ..api import (
    LATEST_OPSET,
    Attr,
    Finding,
    InputFit,
    KernelFn,
    OpContext,
    OpDef,
    RowOffsets,
    quiet_f16_nans,
    takes_row_offsets,
)
from ..toolkit.axes import normalise_axis
from ..toolkit.convert_rules import convert_values


def infer_gather(ctx: OpContext, version: int):
    data, indices, axis_spec = ctx.inputs
    if version >= 7 and indices.element_type.kind not in ("int", "uint", "dynamic"):
        ctx.fail(f"indices must have an integer element type, got {indices.element_type}", position=1)
    if version == 1 and indices.element_type.kind in ("bool", "string"):
        ctx.fail(f"indices must have a numeric element type, got {indices.element_type}", position=1)
    if axis_spec.element_type.kind not in ("int", "uint", "dynamic"):
        ctx.fail(f"axis must have an integer element type, got {axis_spec.element_type}", position=2)
    if axis_spec.shape.rank is not None and axis_spec.shape.rank > 1 or (
        axis_spec.shape.rank == 1 and axis_spec.shape.is_static and axis_spec.shape.to_shape() != (1,)
    ):
        ctx.fail(f"axis must be a scalar or have 1 element, got shape {axis_spec.shape.brief()}", position=2)
    axis_value = ctx.const_value(2)
    batch_dims = ctx.attr_int("batch_dims", 0) if version >= 7 else 0
    if axis_value is None:  # computed at run time: the rank is known, the dims are not (as OpenVINO infers it)
        return [TensorSpec(data.element_type, _unknown_axis_shape(ctx, data.shape, indices.shape, batch_dims))], {
            "axis": None, "batch_dims": batch_dims, "strict_low": None}
    if axis_value.size != 1:
        ctx.fail(f"axis must have 1 element, it has {axis_value.size}", position=2)
    axis = int(axis_value.reshape(-1)[0])
    shape, axis, batch_dims = gather_shape(ctx, data.shape, indices.shape, axis, batch_dims)
    params = {"axis": axis, "batch_dims": batch_dims, "strict_low": None}
    if ctx.strict:
        params["strict_low"] = "minus_dim" if version == 8 else "zero"
        constant_indices = ctx.const_value(1)
        if constant_indices is not None and data.shape.dims is not None and data.shape.dims[axis].is_static:
            _check_strict(constant_indices, data.shape.dims[axis].lo, params["strict_low"], ctx.ref)
    return [TensorSpec(data.element_type, shape)], params


def _unknown_axis_shape(ctx: OpContext, data: PartialShape, indices: PartialShape, batch_dims: int) -> PartialShape:
    """The output shape when the axis is not known at load: its rank, all dims dynamic."""
    if data.rank is None or indices.rank is None:
        return PartialShape(None)
    if batch_dims < 0:
        batch_dims += indices.rank
    if not 0 <= batch_dims <= indices.rank:
        ctx.fail(f"batch_dims={batch_dims} must be within [0, rank(indices)={indices.rank}]")
    rank = data.rank + indices.rank - 1 - batch_dims
    if rank < 0:
        ctx.fail(f"data of rank {data.rank} cannot be gathered with batch_dims={batch_dims}")
    return PartialShape((DYNAMIC_DIM,) * rank)


def gather_shape(ctx: OpContext, data: PartialShape, indices: PartialShape, axis: int, batch_dims: int):
    """Output partial shape and the normalised (axis, batch_dims); fails like OpenVINO's shape_infer."""
    given_bd = batch_dims
    if batch_dims < 0 and indices.rank is not None:
        batch_dims += indices.rank
        if batch_dims < 0:
            ctx.fail(
                f"batch_dims={given_bd} is below -rank(indices)={-indices.rank}"
                " (OpenVINO accepts it and computes garbage; ir-run refuses it)"
            )
    axis = normalise_axis(ctx, axis, data.rank, position=2)
    if 0 <= axis < batch_dims:
        ctx.fail(f"after normalisation batch_dims must be <= axis, got batch_dims={batch_dims}, axis={axis}")
    if indices.rank is not None and batch_dims >= 0 and batch_dims > indices.rank:
        ctx.fail(f"batch_dims={batch_dims} must be <= rank(indices)={indices.rank}")
    if data.dims is None or indices.dims is None or batch_dims < 0 or axis < 0:
        return PartialShape(None), axis, batch_dims
    batch = []
    for i in range(batch_dims):
        merged = merge_dims(data.dims[i], indices.dims[i])
        if merged is None:
            ctx.fail(
                f"data {data.brief()} and indices {indices.brief()} differ in batch dim {i}: the first"
                f" batch_dims={batch_dims} dims must be equal"
            )
        batch.append(merged)
    dims = tuple(batch) + data.dims[batch_dims:axis] + indices.dims[batch_dims:] + data.dims[axis + 1:]
    return PartialShape(dims), axis, batch_dims


def gather(
    data: np.ndarray,
    indices: np.ndarray,
    axis_input: np.ndarray,
    *,
    axis: int,
    batch_dims: int,
    strict_low: str | None,
) -> np.ndarray:
    """Gather with normalised axis/batch_dims; out-of-range indices give zeros (reference kernel)."""
    return GatherKernel(data.shape, indices.shape, axis, batch_dims, strict_low)(data, indices, axis_input)


def prepare_gather(params, inputs: list[TensorSpec], outputs: list[TensorSpec], consts) -> KernelFn:
    """A Gather kernel for static shapes; constant indices are normalised and checked once, here."""
    kernel = GatherKernel(
        inputs[0].shape.to_shape(), inputs[1].shape.to_shape(), params["axis"], params["batch_dims"],
        params["strict_low"],
    )
    if consts[1] is not None:
        kernel.fix_indices(consts[1])
        small = kernel.n_batch * kernel.n_outer * kernel.n_idx * kernel.n_inner < PARALLEL_MIN_ELEMENTS
        if small and kernel.n_batch == 1 and kernel.dim > 0 and kernel.fixed[1] is None:
            return _small_constant_take(kernel)
        return kernel
    rows = kernel.n_batch == 1 and kernel.n_outer == 1 and kernel.dim > 0 and params["strict_low"] is None
    small = kernel.n_idx * kernel.n_inner < RANDOM_READ_PARALLEL_MIN_ELEMENTS
    if rows and small and inputs[1].element_type in ("i32", "i64"):
        return _small_row_take(kernel)
    return kernel


def _small_row_take(kernel: GatherKernel) -> KernelFn:
    """Rows of a table picked by small i32/i64 indices given at run time (an embedding lookup): one take when
    every index is in ``[0, dim)`` (negatives are huge as unsigned), else the general kernel."""
    dim, table_shape, out_shape = kernel.dim, (kernel.dim, kernel.n_inner), kernel.out_shape

    def take(data: np.ndarray, indices: np.ndarray, axis_input: np.ndarray | None = None,
             out: np.ndarray | None = None) -> np.ndarray:
        flat = indices.reshape(-1)
        if flat.size == 0 or flat.view(_UNSIGNED_OF[flat.dtype.itemsize]).max() >= dim:
            return kernel(data, indices, axis_input, out=out)
        table = data.reshape(table_shape)
        if out is None:
            return quiet_f16_nans(table.take(flat, axis=0, mode="wrap")).reshape(out_shape)
        table.take(flat, axis=0, out=out.reshape(flat.size, table_shape[1]), mode="wrap")
        return quiet_f16_nans(out)

    take.accepts_out = True
    return take


_UNSIGNED_OF = {4: np.uint32, 8: np.uint64}


def _small_constant_take(kernel: GatherKernel) -> KernelFn:
    """The common small case, with as little per-call work as possible: constant, valid indices, one batch."""
    indices = kernel.fixed[0][0]
    view_shape = (kernel.n_outer, kernel.dim, kernel.n_inner)
    out_shape = kernel.out_shape
    take_shape = (kernel.n_outer, kernel.n_idx, kernel.n_inner)

    def take(data: np.ndarray, _indices: np.ndarray, _axis: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        if out is None:
            return quiet_f16_nans(data.reshape(view_shape).take(indices, axis=1, mode="wrap")).reshape(out_shape)
        data.reshape(view_shape).take(indices, axis=1, out=out.reshape(take_shape), mode="wrap")
        return quiet_f16_nans(out)

    take.accepts_out = True
    return take


class GatherKernel:
    """Gather for fixed shapes, as one ``np.take`` over rows of ``data`` viewed as ``[rows, inner]``.

    ``data`` is viewed as ``[batch, outer, dim, inner]`` and the output as ``[batch, outer, n_idx, inner]``;
    with one batch the take runs along ``dim`` directly (negative in-range indices wrap there natively),
    otherwise on flattened rows ``(b * outer + o) * dim + idx``. Large takes are split over threads.
    """

    accepts_out = True  # the plan may pass a caller's output buffer (``out=``)

    def __init__(self, data_shape, indices_shape, axis: int, batch_dims: int, strict_low) -> None:
        self.dim = data_shape[axis]
        self.n_batch = math.prod(data_shape[:batch_dims])
        self.n_outer = math.prod(data_shape[batch_dims:axis])
        self.n_inner = math.prod(data_shape[axis + 1:])
        self.n_idx = math.prod(indices_shape[batch_dims:])
        self.out_shape = tuple(data_shape[:axis]) + tuple(indices_shape[batch_dims:]) + tuple(data_shape[axis + 1:])
        self.strict_low = strict_low
        self.fixed: tuple[np.ndarray, np.ndarray | None] | None = None

    def fix_indices(self, indices: np.ndarray) -> None:
        """Normalise constant indices once (strict checks happen here, at load)."""
        self._check(indices)
        self.fixed = self._normalise(indices)

    def _check(self, indices: np.ndarray) -> None:
        """In strict mode, raise for an index outside the spec's range (even when no element is read)."""
        if self.strict_low is not None:
            _check_strict(indices, self.dim, self.strict_low)  # (the caller names the layer: errors.with_layer)

    def _normalise(self, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Indices ready for the take, and the mask of valid ones (None when all are valid)."""
        idx = as_int64(indices).reshape(self.n_batch, self.n_idx)
        if not idx.size:
            return idx, None
        lowest, highest = idx.min(), idx.max()
        if lowest < -self.dim or highest >= self.dim:
            idx = np.where(idx < 0, idx + self.dim, idx)
            valid = (idx >= 0) & (idx < self.dim)
            return np.where(valid, idx, 0), valid
        if self.n_batch > 1 and lowest < 0:  # flattened rows: a negative index must not wrap into another batch
            idx = np.where(idx < 0, idx + self.dim, idx)
        return idx, None

    def __call__(self, data: np.ndarray, indices: np.ndarray, axis_input: np.ndarray | None = None, *,
                 out: np.ndarray | None = None) -> np.ndarray:
        """Gather; ``axis_input`` is the layer's third input, already resolved into ``axis`` by inference.
        Writes into ``out`` (C-contiguous, the output's dtype and shape) when given."""
        if self.fixed is None:
            self._check(indices)
        shape = (self.n_batch, self.n_outer, self.n_idx, self.n_inner)
        out = np.empty(shape, dtype=data.dtype) if out is None else out.reshape(shape)
        if out.size == 0:
            return out.reshape(self.out_shape)
        if self.dim == 0:
            out[...] = 0
            return out.reshape(self.out_shape)
        data = np.ascontiguousarray(data)
        if self.fixed is None and self.n_batch == 1 and self.n_outer == 1:
            self._take_in_chunks(data.reshape(self.dim, self.n_inner), indices.reshape(-1), out[0, 0])
            return quiet_f16_nans(out).reshape(self.out_shape)
        idx, valid = self.fixed if self.fixed is not None else self._normalise(indices)
        if self.n_batch == 1:
            data3 = data.reshape(self.n_outer, self.dim, self.n_inner)
            if out.size < PARALLEL_MIN_ELEMENTS:
                data3.take(idx[0], axis=1, out=out[0], mode="wrap")
            else:
                self._take_one_batch(data3, idx[0], out[0])
        else:
            self._take_rows(data.reshape(-1, self.n_inner), idx, out)
        if valid is not None:
            np.copyto(out, np.zeros((), dtype=out.dtype), where=~valid[:, None, :, None])
        return quiet_f16_nans(out).reshape(self.out_shape)

    def _take_one_batch(self, data3: np.ndarray, idx: np.ndarray, out3: np.ndarray) -> None:
        """A large take for one batch, split over threads along the outer dims or the indices."""
        if self.n_outer > 1:
            def work(start: int, stop: int) -> None:
                np.take(data3[start:stop], idx, axis=1, out=out3[start:stop], mode="wrap")

            run_chunked(self.n_outer, self.n_idx * self.n_inner, work)
        else:
            def work(start: int, stop: int) -> None:
                np.take(data3[0], idx[start:stop], axis=0, out=out3[0, start:stop], mode="wrap")

            run_chunked(self.n_idx, self.n_inner, work)

    def _take_in_chunks(self, table: np.ndarray, indices: np.ndarray, out2: np.ndarray) -> None:
        """Rows of ``table`` ``[dim, inner]`` picked by flat ``indices`` (any index type), split over threads
        (by index count, so that a few long rows are split too), in cache-sized chunks: each chunk is
        range-checked on its own and taken with its own dtype, so no index array as large as the input is
        ever made."""
        dim = self.dim
        total = indices.size
        if indices.dtype == np.uint64:
            indices = indices.view(np.int64)  # the reference reads u64 indices as int64
        index_type = element_type_of(indices.dtype)
        needs_int64 = index_type is None or index_type.kind == "float" or index_type.bits < 8  # floats, i4/u4
        as_unsigned = np.dtype(f"u{8 if needs_int64 else indices.dtype.itemsize}")  # same-width view of a chunk

        def work(start: int, stop: int) -> None:
            for lo in range(start, stop, _INDEX_CHUNK):
                hi = min(lo + _INDEX_CHUNK, stop)
                chunk = as_int64(indices[lo:hi]) if needs_int64 else indices[lo:hi]
                # one pass for the common case (all in [0, dim): negatives are huge as unsigned), else two
                if chunk.view(as_unsigned).max() < dim:
                    table.take(chunk, axis=0, out=out2[lo:hi], mode="wrap")
                    continue
                if chunk.min() >= -dim and chunk.max() < dim:  # valid, some negative
                    table.take(_wrap_negatives(chunk, dim), axis=0, out=out2[lo:hi], mode="wrap")
                    continue
                wide = chunk.astype(np.int64)
                wide = np.where(wide < 0, wide + dim, wide)
                valid = (wide >= 0) & (wide < dim)
                table.take(np.where(valid, wide, 0), axis=0, out=out2[lo:hi], mode="wrap")
                out2[lo:hi][~valid] = np.zeros((), dtype=out2.dtype)

        run_chunked(total, self.n_inner, work, min_elements=RANDOM_READ_PARALLEL_MIN_ELEMENTS)

    def _take_rows(self, rows_data: np.ndarray, idx: np.ndarray, out: np.ndarray) -> None:
        base = np.arange(self.n_batch * self.n_outer, dtype=np.int64).reshape(self.n_batch, self.n_outer) * self.dim
        rows = base[:, :, None] + idx[:, None, :]
        flat_out = out.reshape(-1, self.n_inner)
        flat_rows = rows.reshape(-1)

        def work(start: int, stop: int) -> None:
            np.take(rows_data, flat_rows[start:stop], axis=0, out=flat_out[start:stop], mode="wrap")

        run_chunked(flat_rows.size, self.n_inner, work)


# Random reads cost several times a streaming copy per element: two threads already pay off from ~1e5
# (1e5 indices into 1e6 floats: 314 -> 244 us; 1e6: 1.57 -> 0.94 ms, measured on 2 cores)
RANDOM_READ_PARALLEL_MIN_ELEMENTS = 1 << 16
_INDEX_CHUNK = 1 << 17  # indices per range check and take: 128K (512 KB of i32) measured fastest on 2 threads


def _wrap_negatives(chunk: np.ndarray, dim: int) -> np.ndarray:
    """``chunk`` (all in ``[-dim, dim)``) with ``dim`` added to the negative ones, without a branch per index
    (numpy's wrap mode loops on each negative index, and random signs defeat branch prediction: 3-6x)."""
    if chunk.dtype.kind != "i":
        return chunk
    if chunk.dtype.itemsize < 4:
        chunk = chunk.astype(np.int32)
    if dim > np.iinfo(chunk.dtype).max:
        return chunk
    sign_bits = chunk >> (8 * chunk.dtype.itemsize - 1)  # -1 where negative, else 0
    sign_bits &= chunk.dtype.type(dim)
    sign_bits += chunk
    return sign_bits


def as_int64(indices: np.ndarray) -> np.ndarray:
    """Indices as int64, as the reference reads them: u64 wraps; floats (Gather-1) convert like Convert to
    i64 (truncation; NaN and ±inf become INT64_MIN, hence out of range and zeros)."""
    et = element_type_of(indices.dtype)
    if et is not None and et.kind == "float":
        return convert_values(indices, et.name, "i64", np.dtype(np.int64))
    return indices.astype(np.int64, copy=False)


def outside_spec_range(indices: np.ndarray, dim: int, low: int) -> np.ndarray:
    """The mask of index values outside ``[low, dim-1]``, each compared as its true value (NaN is outside;
    a fraction is not truncated; u64 is not wrapped)."""
    if indices.dtype.kind == "u":
        return indices >= np.uint64(dim)
    values = indices.astype(np.float64) if indices.dtype.kind in "fV" else indices.astype(np.int64)
    bad = (values < low) | (values >= dim)
    if values.dtype.kind == "f":
        bad |= np.isnan(values)
    return bad


def _check_strict(indices: np.ndarray, dim: int, strict_low: str, layer: LayerRef | None = None) -> None:
    """Raise for the first index value outside the spec's range, compared as its true value."""
    low = -dim if strict_low == "minus_dim" else 0
    bad = outside_spec_range(indices, dim, low)
    if bad.any():
        position = tuple(int(i) for i in np.argwhere(bad)[0])
        value = indices[position]
        raise IndexOutOfRangeError(
            f"index {value} at position {list(position)} of indices is outside [{low}, {dim - 1}]"
            f" (strict mode; {int(bad.sum())} such index value(s) in all)",
            layer=layer,
            port="input 1 (indices)",
            hint="without strict=True, out-of-range indices give zeros as in OpenVINO's reference",
        )


def _value(ctx: OpContext) -> list:
    """Elements of a 1-D partial value (a shape) picked by constant indices along axis 0, as OpenVINO
    gathers lower and upper bounds: an index outside the data gives 0."""
    data = ctx.partial_value(0)
    indices = ctx.const_value(1)
    axis = ctx.const_value(2)
    if (data is None or indices is None or axis is None or ctx.inputs[0].shape.rank != 1 or indices.ndim > 1
            or indices.dtype.kind not in "iu" or axis.size != 1 or int(axis.reshape(-1)[0]) not in (0, -1)):
        return [None]
    batch_dims = ctx.attr_int("batch_dims", 0) if ctx.op.version >= 7 else 0
    if (batch_dims + indices.ndim if batch_dims < 0 else batch_dims) != 0:
        return [None]
    picked = []
    for index in indices.reshape(-1).tolist():
        index = index + len(data) if index < 0 else index
        picked.append(data[index] if 0 <= index < len(data) else Dim(0, 0))
    return [tuple(picked)]


def _infer_v1(ctx):
    return infer_gather(ctx, 1)


def _infer_v7(ctx):
    return infer_gather(ctx, 7)


def _infer_v8(ctx):
    return infer_gather(ctx, 8)


def _findings(ctx: OpContext, params) -> list[Finding]:
    """A warning for constant indices outside the spec's range of the gathered axis: the values that
    ``strict`` loading refuses (the same check, :func:`outside_spec_range`)."""
    axis = params.get("axis")
    dims = ctx.inputs[0].shape.dims
    if axis is None or dims is None or not dims[axis].is_static:
        return []
    indices = ctx.const_value(1)
    if indices is None or indices.size == 0:
        return []
    dim = dims[axis].lo
    low = -dim if ctx.op.version == 8 else 0
    outside = outside_spec_range(indices, dim, low)
    if not outside.any():
        return []
    position = tuple(int(i) for i in np.argwhere(outside)[0])
    read = as_int64(indices)  # what OpenVINO's reference reads: fractions truncated, u64 wrapped, NaN lowest
    zeroed = (read < -dim) | (read >= dim)
    if zeroed[position]:
        effect = "gives zeros there"
    elif read[position] < 0:
        effect = "wraps it (the CPU plugin gives 0)"
    else:
        effect = f"reads it as index {read[position]}"
    return [Finding(
        ctx.ref, "input 1 (indices)",
        f"constant index {indices[position]} at {list(position)} is outside [{low}, {dim - 1}] ({ctx.op.label},"
        f" axis {axis} has {dim}); {int(outside.sum())} such index value(s), {int(zeroed.sum())} of which give"
        f" zeros. OpenVINO's reference {effect}",
        hint="fix the Const indices; --strict makes this an error",
    )]


def _fit(params, inputs: list[TensorSpec], position: int) -> InputFit | None:
    """Generated indices: integers in ``[0, dim-1]`` of the gathered axis."""
    axis = params.get("axis")
    dims = inputs[0].shape.dims
    if position != 1 or axis is None or dims is None or not dims[axis].is_static:
        return None
    dim = dims[axis].lo
    return InputFit("index", 0, dim - 1, f"axis {axis} has {dim}")


@takes_row_offsets(1)
def _batch(params, inputs: list[TensorSpec], outputs: list[TensorSpec], axes: list[int | None]):
    """The output is ``data[:axis] + indices[batch_dims:] + data[axis+1:]`` (the first batch_dims dims
    shared). A batch axis of ``data`` before or after ``axis`` moves with it; one of ``indices`` past
    batch_dims lands at ``axis + (its position - batch_dims)``; within batch_dims both must carry it at the
    same dim. Gathering along the batch axis, or a batch axis on both outside batch_dims, mixes rows, but
    for indices that are row offsets of the data's rows (``x.flatten()[arange(batch) * n + j]``)."""
    data_axis, indices_axis, axis_axis = axes
    axis, batch_dims = params["axis"], params["batch_dims"]
    if axis_axis is not None:
        return "its axis comes from the batched data"
    if axis is None:
        return "the gathered axis is only known at run time"
    rank = inputs[1].shape.rank
    if rank is None:
        return "indices of dynamic rank hide where the batch axis goes"
    if isinstance(indices_axis, RowOffsets):
        return _batch_row_offsets(inputs, data_axis, indices_axis, axis, batch_dims)
    if data_axis is not None and data_axis == axis:
        return f"it gathers along the batch axis (axis {axis}): each output row may come from any input row"
    if data_axis is not None and indices_axis is not None:
        if data_axis == indices_axis < batch_dims:
            return [data_axis]
        return (f"data (dim {data_axis}) and indices (dim {indices_axis}) both carry the batch axis, not at one"
                f" dim within batch_dims={batch_dims}: rows of one would be combined with other rows of the other")
    batched = data_axis if data_axis is not None else indices_axis
    if batched < batch_dims:
        shared = "indices" if data_axis is not None else "data"
        return (f"batch_dims={batch_dims} covers the batch axis (dim {batched}), but {shared} has no batch axis:"
                " the two would need the same rows")
    if data_axis is not None:
        return [data_axis if data_axis < axis else data_axis - 1 + rank - batch_dims]
    return [axis + indices_axis - batch_dims]


def _batch_row_offsets(inputs: list[TensorSpec], data_axis, offsets: RowOffsets, axis: int, batch_dims: int):
    dim = inputs[0].shape.dims[axis] if inputs[0].shape.rank is not None else None
    rows = getattr(data_axis, "rows", None)
    if data_axis != axis or batch_dims or dim is None or not dim.is_static or not rows:
        return "its indices are computed from the block's shape and do not gather along the data's rows"
    if dim.lo != rows * offsets.stride:
        return (f"its indices step by {offsets.stride} per row, the data's batch axis holds {dim.lo} elements for"
                f" {rows} rows")
    return [axis + offsets.axis]


_INPUTS = ("data", "indices", "axis")
_ROLES = ("data", "indices", "axis")
_DECLARED = dict(roles=_ROLES, findings=_findings, fit=_fit, value=_value, batch=_batch)
OPS = (
    OpDef("Gather", 1, 1, 6, _INPUTS, _infer_v1, gather, prepare_gather, **_DECLARED),
    OpDef("Gather", 7, 7, 7, _INPUTS, _infer_v7, gather, prepare_gather, attrs=(Attr("batch_dims", "0"),),
          **_DECLARED),
    OpDef("Gather", 8, 8, LATEST_OPSET, _INPUTS, _infer_v8, gather, prepare_gather,
          attrs=(Attr("batch_dims", "0"),), **_DECLARED),
)
