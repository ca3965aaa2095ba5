"""The forward convolution kernel (Convolution-1, GroupConvolution-1), per call or prepared once per plan.

:class:`ForwardKernel` resolves a layer's geometry (run-time pads, cropping of negative pads, output
shape), its compute path and the filters' layout from the input shape and the filters; calling it
computes one input. The per-call kernel builds one per call; :func:`prepare_convolution` builds it once
per plan when the shapes are static and the filters constant, so a run only copies and multiplies. The
filters stay views of the constant in its own element type (converted per call when it is not the compute
type), never a copy.

Paths: pointwise (1x1, unit strides, no pads: one BLAS matmul on the NCHW buffer, no copy); im2col (one
strided copy per kernel tap into ``[N, G, Cg*K, P]``, then one BLAS matmul per group); few output channels
from many input channels (one matmul per kernel tap straight on its flat runs, summed); depthwise (each
tap copied as one contiguous run per channel into a small reused buffer per block of channels, then one
small matmul per channel). The accuracy bound is the one stated in :mod:`.conv` (2·K·eps·Σ|x·w|).

Threads: the depthwise channels and the im2col copy are cut into pieces over the pool by their estimated cost
(:func:`~ir_runner.parallel.pieces_for`, decided once per kernel from the static shapes), products by
:mod:`ir_runner.blas`; every piece is computed as it would be alone, so the bits never depend on the thread count.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ...blas import matmul_for
from ...parallel import pieces_for, run_split
from ...types import Dim
from ..toolkit.numeric import accumulation_dtype
from ..toolkit.window import FlatTaps, same_padding, tap_views

# a convolution with at most this many output channels per group from at least this many input channels sums
# one matmul per kernel tap instead of copying an im2col matrix (measured on DenseNet's 128 -> 32 3x3 layers)
TAP_SUM_MAX_OUT = 32
TAP_SUM_MIN_IN = 64
DEPTHWISE_BLOCK_BYTES = 1 << 21  # per block of depthwise channels: a reused im2col buffer
# im2col matrices up to this many elements are one copy of a window view even when it reads strided rows
# (measured: faster below, slower for the 7x7 stride-2 first layers of the zoo CNNs)
WINDOW_COPY_MAX = 1 << 20
# one thread's cost, for the split over threads (CPU time, f32, on the 16 depthwise layers of EfficientNet-B0 and
# MobileNet-V3-small: 0.6-26 us a channel): a depthwise channel ~0.4 us, plus 0.15 ns per kernel tap and input
# element its flat runs cover (output positions times the strides: a stride-2 layer reads 4x its output); an
# element of an im2col matrix copied ~0.4 ns
DEPTHWISE_CHANNEL_NS = 400
DEPTHWISE_TAP_NS = 0.15
COPY_NS = 0.3


def run_pads(shape, kernel, strides, dilations, pads_begin, pads_end, auto_pad):
    """Pads for this run's static spatial shape (``same_*`` recomputed from it)."""
    if auto_pad == "valid":
        return (0,) * len(kernel), (0,) * len(kernel)
    if auto_pad in ("same_upper", "same_lower"):
        halves = [same_padding(Dim(d, d), k, dl, s) for d, k, dl, s in zip(shape, kernel, dilations, strides)]
        small, large = tuple(h[0] for h in halves), tuple(h[1] for h in halves)
        return (small, large) if auto_pad == "same_upper" else (large, small)
    return pads_begin, pads_end



def finish(result: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``result`` in the output's element type (integers wrap; f16/bf16 rounded once)."""
    if result.dtype == dtype:
        return result
    with np.errstate(over="ignore", invalid="ignore"):
        return result.astype(dtype)


class ForwardKernel:
    """Convolution of inputs of one shape and dtype ``[N, C, *S]`` with filters ``w`` ([G, Co/G, C/G, *K]
    when ``grouped``, else [Co, C, *K]): ``kernel(x)`` (or ``kernel(x, w)``, the filters given at
    construction being used)."""

    def __init__(self, x_shape, x_dtype, w: np.ndarray, grouped: bool, strides, dilations, pads_begin, pads_end,
                 auto_pad) -> None:
        if not grouped:
            w = w[None]
        kernel = tuple(w.shape[3:])
        g, cog, cg = w.shape[:3]
        begin, end = run_pads(x_shape[2:], kernel, strides, dilations, pads_begin, pads_end, auto_pad)
        self.crop = tuple(slice(max(-b, 0), d - max(-e, 0)) for d, b, e in zip(x_shape[2:], begin, end))
        if not any(b < 0 or e < 0 for b, e in zip(begin, end)):
            self.crop = None
        begin, end = tuple(max(b, 0) for b in begin), tuple(max(e, 0) for e in end)
        spatial = tuple(c.stop - c.start for c in self.crop) if self.crop else tuple(x_shape[2:])
        out_spatial = tuple(max((p + b + e - ((k - 1) * d + 1)) // s + 1, 0)
                            for p, b, e, k, d, s in zip(spatial, begin, end, kernel, dilations, strides))
        self.kernel, self.strides, self.dilations = kernel, tuple(strides), tuple(dilations)
        self.begin, self.end, self.out_spatial = begin, end, out_spatial
        self.batch, self.groups, self.cog, self.cg = x_shape[0], g, cog, cg
        self.out_dtype = np.dtype(x_dtype)
        self.work = accumulation_dtype(self.out_dtype)
        self.out_shape = (x_shape[0], g * cog) + out_spatial
        self.positions = math.prod(out_spatial)
        taps = math.prod(kernel)
        self.product = matmul_for(x_shape[0] * g * cog * cg * taps * self.positions)  # (im2col, pointwise)
        wk = w  # kept in its element type: a prepared kernel holds no converted copy of the filters
        unit = all(s == 1 for s in strides)
        if x_shape[0] == 0 or self.positions == 0 or g * cog == 0:
            self.path, self.weights = self._empty, wk
        elif cg == 1 and taps > 1:
            self.path, self.weights = self._depthwise, wk.reshape(g, cog, taps)
            covered = taps * self.positions * math.prod(strides)
            self.pieces = pieces_for(x_shape[0] * g * cog * (DEPTHWISE_CHANNEL_NS + covered * DEPTHWISE_TAP_NS), g)
        elif taps > 1 and cog <= TAP_SUM_MAX_OUT and cg >= TAP_SUM_MIN_IN:
            # [taps, G, Co/G, C/G]: a view of the filters (weights are never copied); each tap's small matrix is
            # made contiguous for BLAS per call
            self.path = self._tap_sum
            self.weights = wk.reshape(g, cog, cg, taps).transpose(3, 0, 1, 2)
        elif taps == 1 and unit and not any(begin) and not any(end):
            self.path, self.weights = self._pointwise, wk.reshape(g, cog, cg)
            if g == 1 and x_shape[0] == 1:
                self.path, self.weights = self._pointwise_single, wk.reshape(cog, cg)
        else:
            self.path, self.weights = self._im2col, wk.reshape(g, cog, cg * taps)
            dims = tuple(d + b + e for d, b, e in zip(spatial, begin, end))
            self.padded = (x_shape[0], x_shape[1]) + dims if any(begin) or any(end) else None
            self.interior = (slice(None), slice(None)) + tuple(slice(b, b + d) for b, d in zip(begin, spatial))
            self.cols_shape = (x_shape[0], x_shape[1]) + kernel + out_spatial
            self.window_copy = self.strides[-1] == 1 or kernel[-1] == 1 or \
                math.prod(self.cols_shape) <= WINDOW_COPY_MAX
            self.pieces = pieces_for(math.prod(self.cols_shape) * COPY_NS, x_shape[1])

    def __call__(self, x: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
        x = x.astype(self.work, copy=False)
        if self.crop is not None:
            x = x[(Ellipsis,) + self.crop]
        return finish(self.path(x, self.weights.astype(self.work, copy=False)), self.out_dtype)

    def _empty(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        return np.zeros(self.out_shape, dtype=self.work)

    def _pointwise_single(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        return self.product(w, x.reshape(self.cg, self.positions)).reshape(self.out_shape)

    def _pointwise(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        cols = x.reshape(self.batch, self.groups, self.cg, self.positions)
        return self.product(w, cols).reshape(self.out_shape)

    def _im2col(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        """``[N, C, *K, *O]``: the padded input at each kernel tap's output positions (channel blocks split
        across threads), times the filters. With a unit stride along the last axis (or a small matrix), all
        taps are one strided window view copied at once; otherwise one copy per tap from stride phase planes,
        so that every copy reads unit-stride rows."""
        if self.padded is not None:
            xp = np.zeros(self.padded, dtype=x.dtype)
            xp[self.interior] = x
        else:
            xp = x
        channels = xp.shape[1]
        cols = np.empty(self.cols_shape, dtype=xp.dtype)
        if self.window_copy:
            spatial = xp.strides[2:]
            strides = xp.strides[:2] + tuple(t * d for t, d in zip(spatial, self.dilations)) \
                + tuple(t * s for t, s in zip(spatial, self.strides))
            window = np.ndarray(cols.shape, xp.dtype, xp, 0, strides) if xp.flags.c_contiguous else \
                np.lib.stride_tricks.as_strided(xp, cols.shape, strides, writeable=False)

            def copy(lo: int, hi: int) -> None:
                np.copyto(cols[:, lo:hi], window[:, lo:hi])

        else:
            views = tap_views(xp, self.kernel, self.strides, self.dilations, self.out_spatial)  # per tap: [N, C, *O]
            taps = list(np.ndindex(*self.kernel))

            def copy(lo: int, hi: int) -> None:
                for tap, view in zip(taps, views):
                    cols[(slice(None), slice(lo, hi)) + tap] = view[:, lo:hi]

        run_split(self.pieces, channels, copy)
        cols = cols.reshape(self.batch, self.groups, self.cg * math.prod(self.kernel), self.positions)
        return self.product(w, cols).reshape(self.out_shape)  # [N, G, Co/G, P]

    def _flat_taps(self, x: np.ndarray) -> FlatTaps:
        return FlatTaps(x, self.begin, self.end, 0, self.kernel, self.strides, self.dilations, self.out_spatial)

    def _tap_sum(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Few output channels from many input channels: no im2col copy, one matmul per kernel tap straight on
        its flat runs (``[Co/G, C/G] @ [C/G, span]`` per group), summed with ``out=`` buffers."""
        taps = self._flat_taps(x)
        batch, g, cg = self.batch, self.groups, self.cg
        out = tmp = None
        for weights, view in zip(w, taps.views):
            weights = np.ascontiguousarray(weights)
            runs = view.reshape(batch, g, cg, taps.span)
            if out is None:
                out = np.matmul(weights, runs)
                tmp = np.empty_like(out)
            else:
                np.matmul(weights, runs, out=tmp)
                np.add(out, tmp, out=out)
        return taps.crop(out).reshape(self.out_shape)

    def _depthwise(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        """One input channel per group: ``out[n, g, m] = Σ_taps x[n, g, tap] · w[g, m, tap]``: for blocks of
        channels (split across threads), the flat tap runs are copied into one reused ``[N, block, taps, span]``
        buffer of about DEPTHWISE_BLOCK_BYTES, then one small matmul per channel."""
        taps = self._flat_taps(x)
        g, cog, batch = self.groups, self.cog, self.batch
        wt = w
        count = len(taps.views)
        out = np.empty((batch, g, cog, taps.span), dtype=wt.dtype)
        block = max(1, DEPTHWISE_BLOCK_BYTES // max(batch * count * taps.span * wt.itemsize, 1))

        window = None
        if all(s == 1 for s in self.strides):  # the taps are one window view: [N, G, *K, span]
            first = taps.views[0]
            steps = tuple(d * p * first.itemsize for d, p in zip(self.dilations, taps.pitch))
            window = np.lib.stride_tricks.as_strided(first, (batch, g) + self.kernel + (taps.span,),
                                                     first.strides[:2] + steps + first.strides[2:], writeable=False)

        def run(lo: int, hi: int) -> None:
            cols = np.empty((batch, min(block, hi - lo), count, taps.span), dtype=wt.dtype)
            for start in range(lo, hi, block):
                stop = min(start + block, hi)
                part = cols[:, :stop - start]
                if window is not None:
                    np.copyto(part.reshape(window[:, start:stop].shape), window[:, start:stop])
                else:
                    for number, view in enumerate(taps.views):
                        part[:, :, number] = view[:, start:stop]
                np.matmul(wt[start:stop], part, out=out[:, start:stop])

        run_split(self.pieces, g, run)
        return taps.crop(out).reshape(self.out_shape)


def convolution(x, w, *, strides, dilations, pads_begin, pads_end, auto_pad, grouped):
    """Convolution / GroupConvolution; see :mod:`.conv` for the accuracy bound (2·K·eps)."""
    return ForwardKernel(x.shape, x.dtype, w, grouped, strides, dilations, pads_begin, pads_end, auto_pad)(x)


def prepare_convolution(params, inputs, outputs, consts):
    """For static shapes and constant filters: the geometry, path and filter layout resolved once."""
    if consts[1] is None or not params:
        return functools.partial(convolution, **params)
    return ForwardKernel(inputs[0].shape.to_shape(), inputs[0].element_type.dtype, consts[1], **params)
