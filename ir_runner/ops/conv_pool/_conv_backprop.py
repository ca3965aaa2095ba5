"""The transposed convolution kernel (ConvolutionBackpropData-1, GroupConvolutionBackpropData-1), per call or
prepared once per plan.

:class:`BackpropKernel` resolves a layer's geometry (run-time pads, the output's spatial shape, and per kernel
tap the input block that lands in the output and the strided output block it lands on) and the filters' layout
(a transposed view of the constant, never a copy) from the input shape; calling it computes one input: one
BLAS matmul ``[G, Co/G·taps, C/G] @ [N, G, C/G, P]`` of every input position by every tap, then one strided
add of whole blocks per kernel tap (col2im). :func:`prepare_backprop` builds it once per plan for static
shapes (the filters constant or not); for small float layers it also builds an index map of where each
product lands, and sums them all with one ``np.bincount`` (in f64, rounded once to the compute type). The
accuracy bound is the one stated in :mod:`.conv` (2·K·eps·Σ|x·w|).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..toolkit.numeric import accumulation_dtype
from ._conv_forward import finish

SAME = ("same_upper", "same_lower")
# a prepared float kernel whose matmul gives at most this many products sums them into the output by one
# np.bincount over a precomputed index map (f64 sums rounded once; measured 2-3x faster than the strided adds
# up to 131k products, whose per-call cost is the few-microsecond overhead of each strided block)
SCATTER_MAX = 1 << 16


def _geometry(in_spatial, kernel, target, strides, dilations, pads_begin, pads_end, auto_pad, output_padding):
    """The output's spatial shape and its begin pads (``target``: the ``output_shape`` input's values, or None)."""
    n = len(kernel)
    if target is not None:
        begin = pads_begin
        if auto_pad in SAME:
            begin = []
            for i in range(n):
                total = max((in_spatial[i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - target[i]
                            + output_padding[i], 0)
                small, large = total // 2, total - total // 2
                begin.append(large if auto_pad == "same_upper" else small)
        elif auto_pad == "valid":
            begin = (0,) * n
        return tuple(target), tuple(begin)
    begin, end = (pads_begin, pads_end) if auto_pad == "explicit" else ((0,) * n, (0,) * n)
    # (an empty input axis counts as 1, as OpenVINO's interval arithmetic clamps 0 - 1 to 0: the output is zeros)
    target = tuple(max(max(i - 1, 0) * s + (k - 1) * d + 1 - b - e + p, 0) for i, s, k, d, b, e, p in
                   zip(in_spatial, strides, kernel, dilations, begin, end, output_padding))
    return target, tuple(begin)


class BackpropKernel:
    """Transposed convolution of inputs ``[N, C, *S]`` of one shape and dtype with filters of one shape
    (``[G, C/G, Co/G, *K]`` when ``grouped``, else ``[C, Co, *K]``) into outputs of spatial shape ``target``
    (None: computed from the attributes). ``kernel(x, w[, output_shape])``; filters given at construction (a
    constant) are used instead of ``w``."""

    def __init__(self, x_shape, x_dtype, w_shape, grouped: bool, target, *, strides, dilations, pads_begin,
                 pads_end, auto_pad, output_padding, w: np.ndarray | None = None, prepared: bool = False) -> None:
        if not grouped:
            w_shape = (1,) + tuple(w_shape)
        g, cig, cog = w_shape[:3]
        kernel = tuple(w_shape[3:])
        in_spatial = tuple(x_shape[2:])
        target, begin = _geometry(in_spatial, kernel, target, strides, dilations, pads_begin, pads_end, auto_pad,
                                  output_padding)
        batch = x_shape[0]
        self.grouped, self.out_dtype = grouped, np.dtype(x_dtype)
        self.work = accumulation_dtype(self.out_dtype)
        self.shape = (batch, g, cog) + target
        self.out_shape = (batch, g * cog) + target
        self.in_shape = (batch, g, cig, math.prod(in_spatial))
        self.filters_shape = (g, cig, cog * math.prod(kernel))
        self.contrib_shape = (batch, g, cog) + kernel + in_spatial
        self.empty = batch == 0 or not math.prod(in_spatial) or not all(target) or g * cog == 0
        self.blocks = []  # per kernel tap: (output block, input block), both full index tuples
        for tap in np.ndindex(*kernel):
            src, dst = [], []
            for i in range(len(kernel)):
                first = tap[i] * dilations[i] - begin[i]  # output position of input position 0
                lo = max(0, -(first // strides[i]))  # first input position landing at or after 0
                hi = min(in_spatial[i], -(-(target[i] - first) // strides[i]))
                if hi <= lo:
                    break
                src.append(slice(lo, hi))
                dst.append(slice(first + lo * strides[i], first + (hi - 1) * strides[i] + 1, strides[i]))
            else:
                self.blocks.append(((Ellipsis, *dst), (slice(None),) * 3 + tap + tuple(src)))
        self.filters = None if w is None else self._layout(w)
        self.scatter = None  # per product of the matmul: its flat output position (the last one: dropped)
        size = math.prod(self.contrib_shape)
        if prepared and not self.empty and self.work.kind == "f" and size <= SCATTER_MAX:
            total = math.prod(self.shape)
            positions = np.arange(total).reshape(self.shape)
            scatter = np.full(self.contrib_shape, total, dtype=np.intp)
            for dst, src in self.blocks:
                scatter[src] = positions[dst]
            self.scatter, self.total = scatter.reshape(-1), total

    def _layout(self, w: np.ndarray) -> np.ndarray:
        """``[G, Co/G·taps, C/G]``: a transposed view of the filters in their own element type."""
        return w.reshape(self.filters_shape).transpose(0, 2, 1)

    def __call__(self, x: np.ndarray, w: np.ndarray, output_shape=None) -> np.ndarray:
        if self.empty:
            return finish(np.zeros(self.out_shape, dtype=self.work), self.out_dtype)
        wt = self.filters if self.filters is not None else self._layout(w)
        xs = x.astype(self.work, copy=False).reshape(self.in_shape)
        contrib = np.matmul(wt.astype(self.work, copy=False), xs)
        if self.scatter is not None:
            sums = np.bincount(self.scatter, contrib.reshape(-1), self.total + 1)[:self.total]
            return finish(sums.astype(self.work, copy=False).reshape(self.out_shape), self.out_dtype)
        contrib = contrib.reshape(self.contrib_shape)
        result = np.zeros(self.shape, dtype=self.work)
        add = np.add
        for dst, src in self.blocks:
            block = result[dst]
            add(block, contrib[src], out=block)
        return finish(result.reshape(self.out_shape), self.out_dtype)


def _target(output_shape) -> tuple[int, ...] | None:
    return None if output_shape is None else tuple(int(v) for v in np.asarray(output_shape).reshape(-1))


def backprop(x, w, output_shape=None, *, strides, dilations, pads_begin, pads_end, auto_pad, output_padding,
             grouped):
    """ConvolutionBackpropData / GroupConvolutionBackpropData: ``out[o] += x[i] * w[k]`` wherever
    ``o = i*stride - pad_begin + k*dilation`` lies in the output (bound: 2·K·eps, K = C_in/group × taps)."""
    return BackpropKernel(x.shape, x.dtype, w.shape, grouped, _target(output_shape), strides=strides,
                          dilations=dilations, pads_begin=pads_begin, pads_end=pads_end, auto_pad=auto_pad,
                          output_padding=output_padding)(x, w)


def prepare_backprop(params, inputs, outputs, consts):
    """For static shapes: the geometry resolved once (the output's spatial shape is the static output spec's),
    the filters' layout too when they are constant."""
    if not params:
        return functools.partial(backprop, **params)
    target = outputs[0].shape.to_shape()[2:] if len(inputs) > 2 else None
    return BackpropKernel(inputs[0].shape.to_shape(), inputs[0].element_type.dtype, inputs[1].shape.to_shape(),
                          target=target, w=consts[1], prepared=True, **params)
