"""Normalisations: LRN-1, MVN-1 (written ``version="opset2"``), MVN-6, BatchNormInference-1/5, NormalizeL2-1,
GRN-1, GroupNormalization-12 and the internal ``RMS`` (``version="ie_internal_opset"``).

Every output has the data's type and shape. Each is an accumulation over K elements (the reduced axes, the
LRN window): f32/f64 are computed in their own type with numpy's pairwise sums, f16/bf16 in f32 and rounded
once. Bound against OpenVINO's reference (sequential sums in the data type): relative error at most
``4·K·eps`` of the type (f32: eps = 2**-23) for the normalised values, and 1e-2 for f16/bf16 (the reference
rounds to f16 after every step); the tests measure it. See docs/semantics.md (normalisation).

RMS normalisation appears in IRs written by ``ov.save_model``/``ovc`` only as its decomposition (Power,
ReduceMean, Add, Sqrt, Divide, Multiply: core operations). The fused ``RMS`` layer
(``ov::op::internal::RMS``) is made by the CPU and GPU plugins' ``RMSFusion`` while compiling, never by the
converters; an IR serialised after that transformation carries it as ``type="RMS"
version="ie_internal_opset"`` (attributes ``epsilon``, ``output_type``, ``elementwise_affine``), which is
declared here for such IRs: ``x / sqrt(mean(x**2, last axis) + epsilon) [* gamma]``.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ...errors import UnsupportedError
from ...types import ElementType, PartialShape, TensorSpec, element_type, merge_dims
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.axes import const_axes, normalise_axes
from ..toolkit.index_rules import require_integer
from ..toolkit.norm_common import (
    batch_unless_reduced,
    merge_channel,
    require_float,
    same_spec,
)
from ..toolkit.numeric import as_compute

# -- LRN ---------------------------------------------------------------------------------------------------


def infer_lrn(ctx: OpContext):
    require_float(ctx)
    require_integer(ctx, 1, "axes")
    size = ctx.attr_int("size", 5)
    if size <= 0:
        ctx.fail(f"size={size} must be positive")
    axes = const_axes(ctx, 1, ctx.inputs[0].shape.rank)
    axes_spec = ctx.inputs[1].shape
    rank = ctx.inputs[0].shape.rank
    if rank is not None and axes_spec.is_static and axes_spec.rank == 1 and axes_spec.to_shape()[0] > rank:
        ctx.fail(f"{axes_spec.to_shape()[0]} axes for data of rank {rank}", position=1)
    return same_spec(ctx), {"axes": axes, "alpha": ctx.attr_float("alpha"), "beta": ctx.attr_float("beta"),
                            "bias": ctx.attr_float("bias"), "size": size}


def lrn(data: np.ndarray, axes_input: np.ndarray, *, axes: tuple[int, ...] | None, alpha: float, beta: float,
        bias: float, size: int) -> np.ndarray:
    """``x / (bias + alpha / size**len(axes) * sum(x**2 over the window))**beta``. The window along each axis
    is ``[i - h, i + h]`` with ``h = (size - 1) // 2``, clipped to the tensor (as OpenVINO's reference: an
    even ``size`` sums ``size - 1`` elements). Sums of K = (2h+1)**len(axes) squares: bound 4·K·eps."""
    if axes is None:
        axes = normalise_axes_value(axes_input, data.ndim)
    x = as_compute(data)
    sums = x * x
    half = (size - 1) // 2
    for axis in axes:
        sums = _window_sum(sums, axis, half)
    scale = x.dtype.type(alpha / float(size) ** len(axes))
    denom = np.power(x.dtype.type(bias) + scale * sums, x.dtype.type(beta))
    return (x / denom).astype(data.dtype, copy=False)


def _window_sum(x: np.ndarray, axis: int, half: int) -> np.ndarray:
    """Sum of ``x[i-half : i+half+1]`` along ``axis`` (zero outside), by shifted adds (2·half of them)."""
    n = x.shape[axis]
    out = x.copy()
    for shift in range(1, min(half, n - 1) + 1):
        lead = [slice(None)] * x.ndim
        tail = [slice(None)] * x.ndim
        lead[axis], tail[axis] = slice(shift, None), slice(None, n - shift)
        out[tuple(lead)] += x[tuple(tail)]
        out[tuple(tail)] += x[tuple(lead)]
    return out


def normalise_axes_value(axes_input: np.ndarray, rank: int) -> tuple[int, ...]:
    """Axes computed at run time, normalised (the plan gives constant ones in the parameters)."""
    return tuple(sorted({int(a) + rank if int(a) < 0 else int(a) for a in axes_input.reshape(-1)}))


# -- MVN ---------------------------------------------------------------------------------------------------

_EPS_MODES = {"inside_sqrt": "inside_sqrt", "outside_sqrt": "outside_sqrt"}


def infer_mvn1(ctx: OpContext):
    require_float(ctx)
    rank = ctx.inputs[0].shape.rank
    across = ctx.attr_bool("across_channels", False)
    given = ctx.attr_ints("reduction_axes", [])
    axes = None
    if given and rank is not None:
        axes = normalise_axes(ctx, given, rank, unique=True)
    elif rank is not None:
        axes = tuple(range(1 if across else 2, rank))
    return same_spec(ctx), {"axes": axes, "normalize_variance": ctx.attr_bool("normalize_variance", True),
                            "eps": ctx.attr_float("eps"), "eps_mode": "inside_sqrt"}


def infer_mvn6(ctx: OpContext):
    require_float(ctx)
    require_integer(ctx, 1, "axes")
    eps_mode = ctx.attr_choice("eps_mode", _EPS_MODES, None)
    if eps_mode is None:
        ctx.fail("the attribute eps_mode (inside_sqrt or outside_sqrt) is required")
    axes = const_axes(ctx, 1, ctx.inputs[0].shape.rank)
    return same_spec(ctx), {"axes": axes, "normalize_variance": ctx.attr_bool("normalize_variance", True),
                            "eps": ctx.attr_float("eps"), "eps_mode": eps_mode}


def mvn(data: np.ndarray, axes_input: np.ndarray | None = None, *, axes: tuple[int, ...] | None,
        normalize_variance: bool, eps: float, eps_mode: str) -> np.ndarray:
    """``x - mean(x)`` over ``axes``, divided by ``sqrt(var + eps)`` (inside_sqrt) or ``sqrt(var) + eps``
    (outside_sqrt) when ``normalize_variance``; ``var = mean((x - mean)**2)``. MVN-1 adds eps inside the
    root. Bound: 4·K·eps of the type relative to the result's scale, K the number of reduced elements."""
    if axes is None:
        axes = normalise_axes_value(axes_input, data.ndim)
    x = as_compute(data)
    count = math.prod(data.shape[a] for a in axes)
    centred = _normalise(x, axes, count, normalize_variance, x.dtype.type(eps), eps_mode == "inside_sqrt")
    return centred.astype(data.dtype, copy=False)


def _normalise(x: np.ndarray, axes, count, normalize_variance: bool, eps, inside: bool) -> np.ndarray:
    """MVN in ``x``'s type: means as np.mean computes them (a pairwise sum, then one division by ``count``), in
    a few C calls for small arrays."""
    mean = np.add.reduce(x, axis=axes, keepdims=True)
    np.true_divide(mean, count, out=mean)
    centred = np.subtract(x, mean)
    if normalize_variance:
        var = np.add.reduce(np.multiply(centred, centred), axis=axes, keepdims=True)
        np.true_divide(var, count, out=var)
        if inside:
            var += eps
            np.sqrt(var, out=var)
        else:
            np.sqrt(var, out=var)
            var += eps
        centred /= var
    return centred


def prepare_mvn(params, inputs: list[TensorSpec], outputs: list[TensorSpec], consts):
    """For static shapes of f32/f64 data and constant axes: :func:`mvn` with its scalars resolved once."""
    axes = params["axes"]
    dtype = inputs[0].element_type.dtype
    if axes is None or dtype not in (np.float32, np.float64) or not axes:
        return functools.partial(mvn, **params)
    shape = inputs[0].shape.to_shape()
    count = math.prod(shape[a] for a in axes)
    axis = axes[0] if len(axes) == 1 else axes
    variance, eps, inside = params["normalize_variance"], dtype.type(params["eps"]), params["eps_mode"] == "inside_sqrt"
    eps = np.asarray(eps)  # (0-d arrays: numpy converts scalars at every call)
    if count < 2**24:  # exact in f32: dividing by it is dividing by the Python int
        count = np.asarray(dtype.type(count))

    def kernel(data: np.ndarray, axes_input: np.ndarray | None = None) -> np.ndarray:
        return _normalise(data, axis, count, variance, eps, inside)

    return kernel


# -- BatchNormInference ------------------------------------------------------------------------------------


def _infer_batch_norm(ctx: OpContext, data_at: int):
    names = ("gamma", "beta", "mean", "variance")
    others = [i for i in range(5) if i != data_at]
    for i in range(5):
        require_float(ctx, i, "inputs")
    data = ctx.inputs[data_at]
    if data.shape.rank is not None and data.shape.rank < 2:
        ctx.fail(f"data must have rank >= 2, got {data.shape.brief()}", position=data_at)
    types = {ctx.inputs[i].element_type for i in range(5)} - {element_type("dynamic")}
    if len(types) > 1:
        ctx.fail("every input must have the same element type")
    shape = data.shape
    for name, i in zip(names, others):
        merge_channel(ctx, data.shape, i, name)
        channel = ctx.inputs[i].shape.dims
        if shape.dims is not None and len(shape.dims) > 1 and channel is not None and len(channel) == 1:
            merged = merge_dims(shape.dims[1], channel[0])
            shape = PartialShape(shape.dims[:1] + (merged,) + shape.dims[2:])
    eps = ctx.attr_float("epsilon")
    if eps < 0:
        ctx.fail(f"epsilon={eps} must be non-negative")
    et = next(iter(types)) if types else data.element_type
    return [TensorSpec(et, shape)], {"epsilon": eps}


def infer_batch_norm5(ctx: OpContext):
    return _infer_batch_norm(ctx, 0)


def infer_batch_norm1(ctx: OpContext):
    return _infer_batch_norm(ctx, 2)


def batch_norm5(data: np.ndarray, gamma: np.ndarray, beta: np.ndarray, mean: np.ndarray, variance: np.ndarray, *,
                epsilon: float) -> np.ndarray:
    """``gamma * (x - mean) / sqrt(variance + epsilon) + beta`` per channel (axis 1). A few roundings per
    element: bound 8·eps relative (f32)."""
    x = as_compute(data)
    shape = (1, -1) + (1,) * (data.ndim - 2)
    t = x.dtype.type
    inv = (as_compute(gamma) / np.sqrt(as_compute(variance) + t(epsilon))).reshape(shape)
    out = (x - as_compute(mean).reshape(shape)) * inv + as_compute(beta).reshape(shape)
    return out.astype(data.dtype, copy=False)


def batch_norm1(gamma: np.ndarray, beta: np.ndarray, data: np.ndarray, mean: np.ndarray, variance: np.ndarray, *,
                epsilon: float) -> np.ndarray:
    """BatchNormInference-1: as version 5 with the inputs ordered gamma, beta, data, mean, variance."""
    return batch_norm5(data, gamma, beta, mean, variance, epsilon=epsilon)


def _batch_norm_rule(data_at: int):
    def rule(params, inputs, outputs, axes):
        if any(a is not None for i, a in enumerate(axes) if i != data_at):
            return "a parameter input has a batch axis"
        b = axes[data_at]
        if b == 1:
            return "the batch axis is the channel axis"
        return [b]
    return rule


# -- NormalizeL2 -------------------------------------------------------------------------------------------


def infer_normalize_l2(ctx: OpContext):
    require_float(ctx)
    require_integer(ctx, 1, "axes")
    axes = const_axes(ctx, 1, ctx.inputs[0].shape.rank)
    mode = ctx.attr_choice("eps_mode", {"add": "add", "max": "max"}, None)
    if mode is None:
        ctx.fail("the attribute eps_mode (add or max) is required")
    return same_spec(ctx), {"axes": axes, "eps": ctx.attr_float("eps"), "eps_mode": mode}


def normalize_l2(data: np.ndarray, axes_input: np.ndarray | None, *, axes: tuple[int, ...] | None, eps: float,
                 eps_mode: str) -> np.ndarray:
    """``x / sqrt(sum(x**2 over axes) + eps)`` (add) or ``x / sqrt(max(sum, eps))`` (max); empty axes
    normalise each element on its own. Bound: 4·K·eps relative, K the number of reduced elements."""
    if axes is None:
        axes = normalise_axes_value(axes_input, data.ndim)
    x = as_compute(data)
    sums = np.sum(x * x, axis=axes, keepdims=True)
    e = x.dtype.type(eps)
    sums = sums + e if eps_mode == "add" else np.maximum(sums, e)
    return (x / np.sqrt(sums)).astype(data.dtype, copy=False)


# -- GRN ---------------------------------------------------------------------------------------------------


def infer_grn(ctx: OpContext):
    data = ctx.inputs[0]
    if data.shape.rank is not None and not 2 <= data.shape.rank <= 4:
        ctx.fail(f"data must be 2-D, 3-D or 4-D, got {data.shape.brief()}", position=0)
    if data.element_type.kind not in ("float", "dynamic"):
        raise UnsupportedError(f"GRN of {data.element_type}: ir-run computes floating-point data (OpenVINO builds"
                               " integer GRN layers, but its reference computes them in integers and no plugin"
                               " runs them)", layer=ctx.ref, port=ctx.input_label(0))
    return same_spec(ctx), {"axes": (1,), "eps": ctx.attr_float("bias", 1.0), "eps_mode": "add"}


def grn(data: np.ndarray, **params) -> np.ndarray:
    """GRN-1 (global response normalisation): NormalizeL2 over the channel axis 1 with ``bias`` added to the
    sum of squares, ``x / sqrt(sum(x**2 over C) + bias)``, as OpenVINO's reference defines it. Bound: 4·C·eps
    relative."""
    return normalize_l2(data, None, **params)


# -- GroupNormalization ------------------------------------------------------------------------------------


def infer_group_norm(ctx: OpContext):
    for i in range(3):
        require_float(ctx, i, ("data", "scale", "bias")[i])
    data = ctx.inputs[0].shape
    if data.rank is not None and data.rank < 2:
        ctx.fail(f"data must have rank >= 2, got {data.brief()}", position=0)
    groups = ctx.attr_int("num_groups", 1)
    if groups <= 0:
        ctx.fail(f"num_groups={groups} must be positive")
    merge_channel(ctx, data, 1, "scale")
    merge_channel(ctx, data, 2, "bias")
    if data.dims is not None and data.dims[1].is_static and data.dims[1].lo % groups:
        ctx.fail(f"{data.dims[1].lo} channels cannot be split into num_groups={groups}")
    eps = ctx.attr_float("epsilon")
    return same_spec(ctx), {"num_groups": groups, "epsilon": eps}


def group_norm(data: np.ndarray, scale: np.ndarray, bias: np.ndarray, *, num_groups: int,
               epsilon: float) -> np.ndarray:
    """Per sample and group of ``C / num_groups`` channels: ``(x - mean) / sqrt(var + epsilon)``, then
    ``* scale[c] + bias[c]``. Bound: 4·K·eps relative, K = C / num_groups · spatial size."""
    x = as_compute(data)
    grouped = x.reshape(data.shape[0], num_groups, -1)
    centred = grouped - np.mean(grouped, axis=-1, keepdims=True)
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    centred /= np.sqrt(var + x.dtype.type(epsilon))
    shape = (1, -1) + (1,) * (data.ndim - 2)
    out = centred.reshape(data.shape) * as_compute(scale).reshape(shape) + as_compute(bias).reshape(shape)
    return out.astype(data.dtype, copy=False)


# -- RMS (internal) ----------------------------------------------------------------------------------------


def infer_rms(ctx: OpContext):
    require_float(ctx)
    if len(ctx.inputs) == 2:
        require_float(ctx, 1, "gamma")
    text = ctx.attr("output_type")
    out_type: ElementType = ctx.inputs[0].element_type
    if text is not None and text.strip().lower() not in ("dynamic", "undefined", ""):
        out_type = ctx.attr_element_type("output_type")
    return [TensorSpec(out_type, ctx.inputs[0].shape)], {"epsilon": ctx.attr_float("epsilon"),
                                                          "dtype": out_type}


def rms(data: np.ndarray, gamma: np.ndarray | None = None, *, epsilon: float, dtype: ElementType) -> np.ndarray:
    """``x / sqrt(mean(x**2, last axis) + epsilon)``, times ``gamma`` when given. Bound: 4·K·eps relative,
    K the last dim."""
    x = as_compute(data)
    out = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + x.dtype.type(epsilon))
    if gamma is not None:
        out = out * as_compute(gamma)
    return out.astype(dtype.dtype, copy=False)


def _rms_rule(params, inputs, outputs, axes):
    b = axes[0]
    if len(axes) > 1 and axes[1] is not None:
        return "gamma has a batch axis"
    if b is not None and b == len(inputs[0].shape.dims or ()) - 1:
        return "normalizes over the batch axis"
    return [b]


def _axes_reduced(params, inputs):
    return params.get("axes")


_FLOAT_ATTRS = dict(exact=False)
OPS = (
    OpDef("LRN", 1, 1, LATEST_OPSET, ("data", "axes"), infer_lrn, lrn,
          attrs=(Attr("alpha"), Attr("beta"), Attr("bias"), Attr("size")), batch=batch_unless_reduced(_axes_reduced),
          **_FLOAT_ATTRS),
    OpDef("MVN", 1, 2, 5, ("data",), infer_mvn1, mvn, prepare_mvn,
          attrs=(Attr("eps"), Attr("across_channels", "false", ("true", "false")),
                 Attr("normalize_variance", "true", ("true", "false")), Attr("reduction_axes")),
          batch=batch_unless_reduced(_axes_reduced), **_FLOAT_ATTRS),
    OpDef("MVN", 6, 6, LATEST_OPSET, ("data", "axes"), infer_mvn6, mvn, prepare_mvn,
          attrs=(Attr("eps"), Attr("normalize_variance", None, ("true", "false")),
                 Attr("eps_mode", None, tuple(_EPS_MODES))),
          batch=batch_unless_reduced(_axes_reduced), **_FLOAT_ATTRS),
    OpDef("BatchNormInference", 1, 1, 4, ("gamma", "beta", "data", "mean", "variance"), infer_batch_norm1,
          batch_norm1, attrs=(Attr("epsilon"),), batch=_batch_norm_rule(2), **_FLOAT_ATTRS),
    OpDef("BatchNormInference", 5, 5, LATEST_OPSET, ("data", "gamma", "beta", "mean", "variance"),
          infer_batch_norm5, batch_norm5, attrs=(Attr("epsilon"),), batch=_batch_norm_rule(0), **_FLOAT_ATTRS),
    OpDef("NormalizeL2", 1, 1, LATEST_OPSET, ("data", "axes"), infer_normalize_l2, normalize_l2,
          attrs=(Attr("eps"), Attr("eps_mode", None, ("add", "max"))), batch=batch_unless_reduced(_axes_reduced),
          **_FLOAT_ATTRS),
    OpDef("GRN", 1, 1, LATEST_OPSET, ("data",), infer_grn, grn, attrs=(Attr("bias", "1"),),
          batch=batch_unless_reduced(_axes_reduced, "normalizes over the channel axis 1"), **_FLOAT_ATTRS),
    OpDef("GroupNormalization", 12, 12, LATEST_OPSET, ("data", "scale", "bias"), infer_group_norm, group_norm,
          attrs=(Attr("num_groups"), Attr("epsilon")), batch=batch_unless_reduced(lambda p, i: ()), **_FLOAT_ATTRS),
    OpDef("RMS", 1, 0, 0, ("data", "gamma"), infer_rms, rms, domain="ie_internal_opset", min_inputs=1,
          attrs=(Attr("epsilon"), Attr("output_type"), Attr("elementwise_affine", "true", ("true", "false"))),
          batch=_rms_rule, **_FLOAT_ATTRS),
)
