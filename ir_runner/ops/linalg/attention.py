"""ScaledDotProductAttention-13: ``softmax(q @ k^T · scale + bias) @ v`` over the last two dims.

- query ``[N.., L, E]``, key ``[N.., S, E]``, value ``[N.., S, Ev]``; the batch dims ``N..`` (one or more)
  broadcast numpy-style between query, key, value and the mask; the output is ``[N.., L, Ev]``.
- ``scale`` (input 5, a scalar or 1 element) defaults to ``1 / sqrt(E)``.
- ``causal``: ``bias[i, j] = -inf`` for ``j > i`` (top-left aligned) and the mask input is ignored. Otherwise a
  boolean mask gives ``-inf`` where it is false, a float mask is added (a scalar 0 means no mask).
- A row masked everywhere is NaN (softmax of ``-inf`` only), as the specification's formula gives.
- ``sink`` (input 6, attention sinks as gpt-oss exports have; OpenVINO 2025.3+): a logit per row that joins
  the softmax but not the output, i.e. ``softmax([w, sink])[..., :S] @ v``. Its shape has the query's rank and
  a last dim 1; its other dims broadcast to ``[N.., L]`` (OpenVINO's reference broadcasts them so; its shape
  inference accepts any dims broadcastable with them, which its reference then cannot broadcast: ir-run
  refuses a dim that is neither 1 nor the one of ``[N.., L]``). The sink is not scaled, and takes part
  in the row's maximum; a row masked everywhere then gives zeros, not NaN.

Accumulating: two matmuls (BLAS, sums of E and S products) and a softmax over S whose normalisation divides
the second product's rows (``(exp(w - max) @ v) / sum``, Ev divisions a row instead of S), its sums by
``row_sums``; computed in f32 for f16/bf16 and rounded once. Bound against OpenVINO: relative error
``4·(E + S)·eps`` of the output's scale (f32: eps = 2**-23), measured by tests/ops/test_attention.py. See
docs/semantics.md (attention).
"""

from __future__ import annotations

import numpy as np

from ...types import DYNAMIC_DIM, Dim, PartialShape, TensorSpec, broadcast_dims, merge_dims
from ..api import LATEST_OPSET, Attr, KernelFn, OpContext, OpDef, numpy_merge
from ..toolkit.norm_common import require_float
from ..toolkit.numeric import as_compute, compute_dtype, row_sums


def infer_sdpa(ctx: OpContext):
    names = ("query", "key", "value", "attention_mask", "scale", "sink")
    for i in range(min(3, len(ctx.inputs))):
        require_float(ctx, i, names[i])
    if len(ctx.inputs) < 3:
        ctx.fail("query, key and value are required")
    causal = ctx.attr_bool("causal", False)
    q, k, v = (ctx.inputs[i].shape for i in range(3))
    et = ctx.common_element_type(0, 1, 2)
    if q.dims is not None and len(q.dims) < 3:
        ctx.fail(f"query must have rank >= 3, got {q.brief()}", position=0)
    batch = PartialShape(q.dims[:-2]) if q.dims is not None else q
    lead = q.dims[-2] if q.dims is not None else None
    e_dim = q.dims[-1] if q.dims is not None else None
    s_dim = ev_dim = None
    if k.dims is not None:
        batch = _merge_batch(ctx, batch, k, 1)
        e_dim = _bmerge(ctx, e_dim, k.dims[-1], 1, "E (the last dim of query and key)", merge_dims)
        s_dim = k.dims[-2]
    if v.dims is not None:
        batch = _merge_batch(ctx, batch, v, 2)
        s_dim = _bmerge(ctx, s_dim, v.dims[-2], 2, "S (dim -2 of key and value)", merge_dims)
        ev_dim = v.dims[-1]
    mask_kind = None
    if len(ctx.inputs) > 3 and not causal:
        mask = ctx.inputs[3]
        if mask.element_type.kind not in ("float", "bool", "dynamic"):
            ctx.fail(f"attention_mask must be boolean or floating-point, got {mask.element_type}", position=3)
        mask_kind = "bool" if mask.element_type.kind == "bool" else "add"
        m = mask.shape
        if m.dims is not None and len(m.dims) != 0:
            if len(m.dims) < 2:
                ctx.fail(f"attention_mask must be a scalar or have rank >= 2, got {m.brief()}", position=3)
            lead = _bmerge(ctx, lead, m.dims[-2], 3, "L (dim -2 of query and the mask)")
            if not m.dims[-1].contains(1):  # (the mask broadcasts into the weights [.., L, S], never widens S)
                s_dim = _bmerge(ctx, s_dim, m.dims[-1], 3, "S (dim -2 of key, the last of the mask)", merge_dims)
            if len(m.dims) >= 3:
                batch = _merge_batch(ctx, batch, m, 3)
    if len(ctx.inputs) > 4:
        sc = ctx.inputs[4].shape
        if sc.is_static and not (sc.rank == 0 or sc.to_shape() == (1,)):
            ctx.fail(f"scale must be a scalar or have 1 element, got {sc.brief()}", position=4)
    if len(ctx.inputs) > 5:
        et = ctx.common_element_type(0, 1, 2, 5)
        _check_sink(ctx, q, batch, lead)
    elif s_dim is not None and s_dim.hi == 0 and lead is not None and lead.lo > 0:
        ctx.fail("S (dim -2 of key and value) is 0: a query row has no key to attend to (the softmax of no"
                 " logits; OpenVINO's CPU plugin returns uninitialised memory)", position=1)
    if batch.dims is None:
        shape = PartialShape(None)
    else:
        shape = PartialShape(batch.dims + (lead or DYNAMIC_DIM, ev_dim or DYNAMIC_DIM))
    return [TensorSpec(et, shape)], {"causal": causal, "mask_kind": mask_kind}


def _check_sink(ctx: OpContext, q: PartialShape, batch: PartialShape, lead) -> None:
    """The sink has the query's rank and last dim 1; its other dims are 1 or those of ``[N.., L]``."""
    sink = ctx.inputs[5].shape
    if sink.dims is None:
        return
    if q.dims is not None and len(sink.dims) != len(q.dims):
        ctx.fail(f"the sink must have the query's rank {len(q.dims)}, got {sink.brief()}", position=5)
    if not sink.dims[-1].contains(1):
        ctx.fail(f"the sink's last dim must be 1, got {sink.brief()}", position=5)
    if batch.dims is None or len(batch.dims) + 2 != len(sink.dims):
        return
    rows = PartialShape((*batch.dims, lead or DYNAMIC_DIM, Dim(1, 1)))
    for dim, target in zip(sink.dims, rows.dims):
        if dim.is_static and dim.lo != 1 and target.is_static and dim.lo != target.lo:
            ctx.fail(f"the sink {sink.brief()} does not broadcast to [N..,L,1] = {rows.brief()}", position=5,
                     hint="each dim of the sink is 1 or the attention's (its batch dims, then L)")


def _merge_batch(ctx: OpContext, batch: PartialShape, other: PartialShape, position: int) -> PartialShape:
    if len(other.dims) < 3:
        ctx.fail(f"input must have rank >= 3, got {other.brief()}", position=position)
    merged = numpy_merge(batch, PartialShape(other.dims[:-2]))
    if merged is None:
        ctx.fail(f"batch dims {PartialShape(other.dims[:-2]).brief()} do not broadcast with {batch.brief()}",
                 position=position)
    return merged


def _bmerge(ctx: OpContext, a, b, position: int, what: str, combine=broadcast_dims):
    """Two dims broadcast (``combine=merge_dims``: that a product or a one-way broadcast needs equal, where
    OpenVINO's type inference broadcasts them and its kernels then fail: a mask [1,12] against a key of one
    token)."""
    if a is None:
        return b
    merged = combine(a, b)
    if merged is None:
        ctx.fail(f"{what} differ: {a} and {b}", position=position)
    return merged


def sdpa(query: np.ndarray, key: np.ndarray, value: np.ndarray, mask: np.ndarray | None = None,
         scale: np.ndarray | None = None, sink: np.ndarray | None = None, *, causal: bool,
         mask_kind: str | None) -> np.ndarray:
    """Attention by two ``np.matmul`` calls and a softmax over the last axis (bound: see the module)."""
    q = as_compute(query)
    factor = _factor(q.dtype, q.shape[-1], scale)
    if causal:
        bias = _causal_bias(q.dtype, query.shape[-2], key.shape[-2])
    elif mask is not None and mask_kind is not None:
        bias = _mask_bias(q.dtype, mask, mask_kind)
    else:
        bias = None
    with np.errstate(invalid="ignore"):
        return _attend(q, as_compute(key), as_compute(value), factor, bias, query.dtype,
                       None if sink is None else as_compute(sink))


def _factor(dtype: np.dtype, e: int, scale: np.ndarray | None):
    t = dtype.type
    return t(1) / np.sqrt(t(e)) if scale is None else as_compute(scale).reshape(()).astype(dtype)


def _causal_bias(dtype: np.dtype, big_l: int, big_s: int) -> np.ndarray:
    t = dtype.type
    return np.where(np.triu(np.ones((big_l, big_s), bool), 1), t(-np.inf), t(0))


def _mask_bias(dtype: np.dtype, mask: np.ndarray, mask_kind: str) -> np.ndarray:
    if mask_kind == "bool":  # (0-d arrays: np.where converts numpy scalars at every call)
        return np.where(mask, np.zeros((), dtype), np.full((), -np.inf, dtype))
    return as_compute(mask).astype(dtype, copy=False)


_SHORT_ROWS = 32
"""Up to this many columns, a row maximum is taken over a transposed copy: numpy's reduction along a short
last axis costs ~0.1 us per row (measured 3-10x slower for 8-32 columns)."""


def _row_max(weights: np.ndarray) -> np.ndarray:
    """The maximum of each row (last axis) of C-contiguous ``weights``, keeping it: the same value in any order
    (a maximum is exact; a tie of -0.0 and +0.0 may give either, and ``x - max`` then differs only in the sign
    of a zero, which exp maps to 1 either way)."""
    columns = weights.shape[-1]
    if columns == 0:  # no keys (S = 0; inference refuses it unless there are no query rows either)
        return np.full(weights.shape[:-1] + (1,), -np.inf, weights.dtype)
    if weights.size == 0:
        return np.maximum.reduce(weights, axis=-1, keepdims=True)
    if columns > _SHORT_ROWS:  # (contiguous rows: reduceat over the flat array, 1.7x faster on rows of 256)
        flat = weights.reshape(-1)
        return np.maximum.reduceat(flat, np.arange(0, flat.size, columns)).reshape(weights.shape[:-1] + (1,))
    flat = np.ascontiguousarray(weights.reshape(-1, columns).T)
    return np.maximum.reduce(flat, axis=0).reshape(weights.shape[:-1] + (1,))


def _attend(q: np.ndarray, k: np.ndarray, v: np.ndarray, factor, bias: np.ndarray | None,
            out_dtype: np.dtype, sink: np.ndarray | None = None) -> np.ndarray:
    """``softmax(q @ k^T * factor + bias) @ v`` in the computation type, rounded to ``out_dtype`` (the caller
    ignores the 'invalid' warning of a row masked everywhere); a ``sink`` joins each row's softmax as one more
    logit whose weight is dropped."""
    weights = np.matmul(q, k.swapaxes(-1, -2))
    weights *= factor
    if bias is not None:
        weights = weights + bias
    peak = _row_max(weights)
    if sink is not None:
        sink = np.broadcast_to(sink.astype(weights.dtype, copy=False), weights.shape[:-1] + (1,))
        peak = np.maximum(peak, sink)
    weights -= peak
    np.exp(weights, out=weights)
    total = row_sums(weights.reshape(peak.size, weights.shape[-1])).reshape(peak.shape)
    if sink is not None:
        total += np.exp(sink - peak)
    result = np.matmul(weights, v)  # (normalised after the product: Ev divisions a row instead of S)
    result /= total
    return result.astype(out_dtype, copy=False)


def prepare_sdpa(params, inputs: list[TensorSpec], outputs: list[TensorSpec], consts) -> KernelFn:
    """The kernel for static shapes: the scale factor, and the bias of a causal or constant mask, computed
    once; the run's errstate covers the softmax (see runtime.execute)."""
    causal, mask_kind = params["causal"], params["mask_kind"]
    out_dtype = outputs[0].element_type.dtype
    dtype = compute_dtype(out_dtype)
    q_shape, k_shape = inputs[0].shape.to_shape(), inputs[1].shape.to_shape()
    scale = consts[4] if len(consts) > 4 else None
    factor = None
    if len(consts) <= 4 or scale is not None:
        factor = np.asarray(_factor(dtype, q_shape[-1], scale))  # (a 0-d array: no scalar conversion per call)
    bias = None
    if causal:
        bias = _causal_bias(dtype, q_shape[-2], k_shape[-2])
    elif mask_kind is not None and len(consts) > 3 and consts[3] is not None:
        bias = _mask_bias(dtype, consts[3], mask_kind)
        weights_shape = np.broadcast_shapes(q_shape[:-2], k_shape[:-2]) + (q_shape[-2], k_shape[-2])
        if mask_kind == "add" and not bias.any() and np.broadcast_shapes(weights_shape, bias.shape) == weights_shape:
            # adding zeros changes at most the sign of a zero weight, which exp(w - max) maps to the same value
            bias = None
    run_mask = not causal and mask_kind is not None and len(consts) > 3 and consts[3] is None

    def kernel(query: np.ndarray, key: np.ndarray, value: np.ndarray, mask: np.ndarray | None = None,
               scale: np.ndarray | None = None, sink: np.ndarray | None = None) -> np.ndarray:
        q = query.astype(dtype, copy=False)
        bias_now = _mask_bias(dtype, mask, mask_kind) if run_mask else bias
        factor_now = factor if factor is not None else _factor(dtype, q_shape[-1], scale)
        return _attend(q, key.astype(dtype, copy=False), value.astype(dtype, copy=False), factor_now, bias_now,
                       out_dtype, sink)

    return kernel


def _sdpa_rule(params, inputs, outputs, axes):
    """The batch axis passes when every input that has one has it at the same batch dim of the output
    (aligned right, as the broadcast) and the scale has none."""
    if len(axes) > 4 and axes[4] is not None:
        return "the scale input has a batch axis"
    if len(axes) > 5 and axes[5] is not None:
        return "the sink input has a batch axis"
    out_rank = outputs[0].shape.rank
    if out_rank is None:
        return "the output rank is unknown"
    found = set()
    for i, a in enumerate(axes[:4]):
        if a is None:
            continue
        rank = inputs[i].shape.rank
        if rank is None:
            return "an input rank is unknown"
        aligned = a + out_rank - rank
        if aligned >= out_rank - 2 or aligned < 0:
            return "the batch axis is one of the attention dims (L, S or E)"
        found.add(aligned)
    if len(found) > 1:
        return "the inputs have their batch axes at different dims"
    return [found.pop() if found else None]


OPS = (
    OpDef("ScaledDotProductAttention", 13, 13, LATEST_OPSET,
          ("query", "key", "value", "attention_mask", "scale", "sink"),
          infer_sdpa, sdpa, prepare_sdpa, attrs=(Attr("causal", "false", ("true", "false")),), batch=_sdpa_rule,
          exact=False, min_inputs=3),
)
