"""Multinomial-13: ``num_samples`` class indices drawn per row of ``probs`` ``[batch, classes]`` (probabilities,
or log-probabilities with ``log_probs``), with or without replacement, bit for bit as OpenVINO draws them for
given seeds (``ov::reference::multinomial``).

Per row, in the probabilities' type (f16/bf16: each operation in f32, rounded): ``exp`` when ``log_probs`` (the C
library's ``expf``; f64: its ``exp``), the
inclusive cumulative sum, divided by its last element (the CDF). ``batch * num_samples`` uniform numbers in
``[0, 1)`` are drawn as RandomUniform-8 draws them (Philox, key ``global_seed``, counter ``op_seed``, in the
probabilities' type; ``random_uniform.py``), row after row; each sample is the first class whose CDF value is at
least its number (none: class 0, as the reference's zero-initialised output). Without replacement the chosen
class's probability ``p`` is removed: every CDF value from that class on loses ``p``, and every value is divided
by ``1 - p`` (in that order, one rounding each). The indices are counted in the ``num_samples`` input's type and
converted to ``convert_type`` (i32 or i64).

Deviations: as for RandomUniform, every run draws from the initial state (OpenVINO's node continues its sequence
run after run), and both seeds 0 draw a fresh seed from the operating system on each run. Without replacement,
drawing more samples than the row has classes of non-zero probability gives what the reference's arithmetic
gives (divisions by zero), not an error, as OpenVINO.
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ...types import DYNAMIC_DIM, DYNAMIC_SHAPE, PartialShape, TensorSpec
from ..api import LATEST_OPSET, Attr, InputFit, OpContext, OpDef
from ..toolkit.libm import exp_double, expf
from ..toolkit.numeric import Arith
from ..toolkit.partial import value_dims
from ._uniform import random_uniform

NAMES = ("probs", "num_samples")
OUTPUT_TYPES = ("i32", "i64")


def infer_multinomial(ctx: OpContext):
    probs, samples = ctx.inputs
    et = ctx.attr_element_type("convert_type")
    if et.name not in OUTPUT_TYPES:
        ctx.fail(f"attribute convert_type={et.name!r} must be i32 or i64")
    if probs.element_type.kind not in ("float", "dynamic"):
        ctx.fail(f"probs must have a floating-point element type, got {probs.element_type}", position=0)
    if samples.element_type.kind not in ("int", "uint", "dynamic"):
        ctx.fail(f"num_samples must have an integer element type, got {samples.element_type}", position=1)
    if probs.shape.rank not in (None, 2):
        ctx.fail(f"probs must be 2-D [batch, classes], got {probs.shape.brief()}", position=0)
    if samples.shape.rank is not None and not (samples.shape.rank == 0 or (
            samples.shape.rank == 1 and samples.shape.dims[0].contains(1))):
        ctx.fail(f"num_samples must be a scalar or have one element, got {samples.shape.brief()}", position=1)
    count = ctx.partial_value(1)
    if count is not None and count[0].hi is not None and count[0].hi < 0:
        ctx.fail(f"num_samples must not be negative, got {count[0]}", position=1)
    params = {"dtype": et.dtype, "replacement": ctx.attr_bool("with_replacement", False),
              "log_probs": ctx.attr_bool("log_probs", False),
              "global_seed": ctx.attr_int("global_seed", 0) % 2**64, "op_seed": ctx.attr_int("op_seed", 0) % 2**64}
    if probs.shape.rank is None:
        return [TensorSpec(et, DYNAMIC_SHAPE)], params
    columns = value_dims(ctx, count, 1)[0] if count is not None else DYNAMIC_DIM
    return [TensorSpec(et, PartialShape((probs.shape.dims[0], columns)))], params


def _exp(x: np.ndarray) -> np.ndarray:
    """``std::exp`` of the reference in T: ``expf`` for f32 (f16/bf16 converted to f32, the result rounded to T),
    the C library's ``exp`` for f64."""
    if x.dtype == np.float64:
        return exp_double(x)
    return Arith(x.dtype).of(expf(x.astype(np.float32)))


def multinomial(probs: np.ndarray, num_samples: np.ndarray, *, dtype: np.dtype, replacement: bool, log_probs: bool,
                global_seed: int, op_seed: int) -> np.ndarray:
    """Multinomial-13 (see the module docstring)."""
    count = int(np.asarray(num_samples).reshape(-1)[0])
    if count < 0:
        raise InputError(f"num_samples is {count}: it must not be negative", port="input 1 (num_samples)")
    batch, classes = probs.shape
    counted = np.asarray(num_samples).dtype  # (the reference counts indices in num_samples' type)
    out = np.zeros((batch, count), counted)
    if not out.size:
        return out.astype(dtype)
    ar = Arith(probs.dtype)
    values = _exp(probs) if log_probs else probs
    cdf = ar.of(values[:, :1]) if classes else np.zeros((batch, 0), probs.dtype)
    columns = [cdf]
    for k in range(1, classes):
        cdf = ar.add(cdf, values[:, k:k + 1])
        columns.append(cdf)
    cdf = ar.div(np.concatenate(columns, axis=1), columns[-1]) if classes else np.zeros((batch, 0), probs.dtype)
    uniform = random_uniform(np.array([batch, count]), np.zeros(1, probs.dtype), np.ones(1, probs.dtype),
                             dtype=probs.dtype, global_seed=global_seed, op_seed=op_seed, alignment="tensorflow")
    rows = np.arange(batch)
    with np.errstate(all="ignore"):
        for j in range(count):
            hit = ar._wide(uniform[:, j:j + 1]) <= ar._wide(cdf)
            found = hit.any(axis=1)
            chosen = np.where(found, hit.argmax(axis=1), 0)
            out[:, j] = chosen
            if replacement:
                continue
            picked = np.where(found, chosen, classes)  # (none found: the reference reads past the row)
            inside = np.minimum(picked, classes - 1)
            low = np.where(picked > 0, cdf[rows, np.maximum(inside - 1, 0)], np.zeros((), probs.dtype))
            p = np.where(picked > 0, ar.sub(cdf[rows, inside], low), cdf[rows, 0])
            divisor = ar.sub(ar.of(1), p)
            later = np.arange(classes)[None, :] >= picked[:, None]
            cdf = ar.div(np.where(later, ar.sub(cdf, p[:, None]), cdf), divisor[:, None])
    return out.astype(dtype)


def _batch(params, inputs, outputs, axes):
    return "the random numbers are drawn in sequence over every row of the batch"


def _fit(params, inputs: list[TensorSpec], position: int):
    if position == 1:
        dims = inputs[0].shape.dims
        top = dims[1].lo if dims is not None and dims[1].is_static and not params.get("replacement", True) else 8
        return InputFit("index", 1, max(1, top), "a count of samples (without replacement, at most the classes)")
    return None


OPS = (
    OpDef("Multinomial", 13, 13, LATEST_OPSET, NAMES, infer_multinomial, multinomial, roles=("data", "k"),
          batch=_batch, fit=_fit,
          attrs=(Attr("convert_type", None, OUTPUT_TYPES), Attr("with_replacement", None, ("true", "false")),
                 Attr("log_probs", None, ("true", "false")), Attr("global_seed", "0"), Attr("op_seed", "0"))),
)
