"""Recurrent operations: LSTMSequence-5, GRUSequence-5, RNNSequence-5, LSTMCell-1/4, GRUCell-3, RNNCell-0.

Shapes follow OpenVINO's ``shape_infer`` (``rnn_base_shape_inference.hpp``): batch merged over X and the
states (and ``sequence_lengths``), hidden size from the states and R (never the ``hidden_size`` attribute,
except LSTMCell when nothing else gives it), ``num_directions`` from ``direction`` merged with the
states' axis 1 and W/R/B's axis 0. X's input size must equal W's (OpenVINO's shape inference does not
check it; its kernels then fail). Sequences output Y ``[batch, num_directions, seq, hidden]`` and Ho (Co)
``[batch, num_directions, hidden]``; cells output H (C) ``[batch, hidden]``.

Semantics (OpenVINO's reference, ``openvino/reference/{lstm,gru,rnn}_cell.hpp`` and ``sequences.hpp``):

- Gate blocks: LSTM ``f, i, c, o``, GRU ``z, r, h``. ``clip > 0`` clamps every gate's pre-activation to
  ``[-clip, clip]`` (not the LSTM cell state fed to ``h``). Activations: sigmoid, tanh and relu, as the
  reference (and the CPU plugin) support; ``activations_alpha``/``activations_beta`` are ignored, as there.
  OpenVINO's graph helpers also know hardsigmoid, which neither the reference nor the CPU plugin runs: refused.
- LSTMCell-1: ``input_forget`` makes ``i = 1 - f``; a ``weights_format`` other than ``fico`` is refused, as
  the reference refuses it (OpenVINO's CPU plugin ignores both attributes: ``fico``, no input_forget). It is
  served as OpenVINO writes it, with 6 inputs; the 7-input form with peepholes P would need optional inputs
  in the op contract (refused: wrong input count).
- GRU: ``linear_before_reset`` puts R's h-block product inside the reset: ``h = g(Xh + r*(H*Rh + Rbh) + Wbh)``
  with B of ``4*hidden`` (``Wbz+Rbz, Wbr+Rbr, Wbh, Rbh``); otherwise ``h = g(Xh + (r*H)*Rh + Bh)``.
- ``reverse`` runs each row backwards over its own first ``sequence_lengths[b]`` steps; ``bidirectional``
  runs forward with W[0], R[0], B[0] and reverse with W[1], R[1], B[1].
- ``sequence_lengths``: Y is zero at and past a row's length; Ho/Co are the states at its last valid step.
  A length outside ``1..seq`` gives zero Ho/Co (the reference's out-of-range final index), and a length
  of 0 gives an all-zero Y row.

Computation: X·W for every time step and direction in one matmul (bias added), then one loop over time
steps (the recurrence), each step one matmul of the states with R and gate arithmetic into preallocated
buffers (see the kernels' layout note). Constant W, R, B, initial states and sequence_lengths are laid
out once, when the plan is made (``prepare``). f16/bf16 are computed in f32 and rounded once at the end
(as OpenVINO's CPU plugin with an f32 inference precision does); f64 in f64.

Accuracy (``exact=False``): matmul accumulation order and the activations' libm differ from OpenVINO's
(and GRU's ``(1 - z)*h + z*H`` is computed as ``h + z*(H - h)``);
measured against OpenVINO's CPU plugin (``INFERENCE_PRECISION_HINT=f32``; the Python reference has no
``evaluate`` for these operations) every f32 output is within ``1e-5 * (1 + max|want|)`` per element for
inputs and weights of magnitude <= 1 and sequences of up to 10 steps (errors grow with the number of
steps and the size of the products, about one f32 rounding of each dot product per step).
"""

from __future__ import annotations

import numpy as np

from ...errors import ModelFormatError, UnsupportedError
from ...types import DYNAMIC, DYNAMIC_DIM, Dim, ElementType, PartialShape, TensorSpec, merge_dims
from ..api import LATEST_OPSET, Attr, InputFit, OpContext, OpDef
from ..toolkit.dims import dim_div
from ..toolkit.numeric import compute_dtype

ACTIVATIONS = ("sigmoid", "tanh", "relu")
DIRECTIONS = {"forward": "forward", "reverse": "reverse", "bidirectional": "bidirectional"}
_FLOATS = ("f16", "bf16", "f32", "f64")


# -- inference -------------------------------------------------------------------------------------------

def _dim_at(shape: PartialShape, axis: int) -> Dim:
    return DYNAMIC_DIM if shape.dims is None else shape.dims[axis]



def _merge(ctx: OpContext, a: Dim, b: Dim | None, what: str, position: int | None = None) -> Dim:
    """``a`` and ``b`` merged; ``b`` None (a dim divided by the gates that holds no whole quotient) fails too."""
    if b is None:
        ctx.fail(f"dimension `{what}` is not matched between inputs ({a} vs a dim that is no multiple of the"
                 " gates)", position=position)
    merged = merge_dims(a, b)
    if merged is None:
        ctx.fail(f"dimension `{what}` is not matched between inputs ({a} vs {b})", position=position)
    return merged


def _check_ranks(ctx: OpContext, ranks: tuple[int, ...]) -> None:
    for i, rank in enumerate(ranks):
        shape = ctx.inputs[i].shape
        if shape.rank is not None and shape.rank != rank:
            ctx.fail(f"input {i} must have rank {rank}, got {shape}", position=i)


def _element_type(ctx: OpContext, positions: tuple[int, ...]) -> ElementType:
    """The element type shared by the inputs at ``positions``: floating-point only."""
    et = ctx.common_element_type(*positions)
    if et != DYNAMIC and et.name not in _FLOATS:
        raise UnsupportedError(f"{ctx.op.label} runs on floating-point tensors only, got {et}", layer=ctx.ref)
    return et


def _gates_check(ctx: OpContext, dim: Dim, hidden: Dim, factor: int, name: str, position: int) -> None:
    if not dim.contains(hidden.lo * factor):
        ctx.fail(f"{name} must have {hidden.lo * factor} (= {factor} * hidden size) rows, got {dim}",
                 position=position)


def _activations(ctx: OpContext, needed: int, default: str) -> dict:
    """The activation functions and clip of a layer, as kernel parameters."""
    text = ctx.attr("activations")
    names = tuple(n.strip().lower() for n in (default if text is None else text).split(",") if n.strip())
    if len(names) < needed:
        raise ModelFormatError(f"attribute {ctx.attr_shown('activations')} names {len(names)} function(s),"
                               f" {ctx.op.label} needs {needed}", layer=ctx.ref)
    for name in names[:needed]:
        if name not in ACTIVATIONS:
            raise UnsupportedError(f"activation function '{name}' is not supported (only {', '.join(ACTIVATIONS)})",
                                   layer=ctx.ref)
    for ignored in ("activations_alpha", "activations_beta"):  # ignored as by the reference, but must be numbers
        ctx.attr_floats(ignored, ())
    clip = ctx.attr_float("clip", 0.0)
    return {"activations": names[:needed], "clip": clip if clip > 0 else 0.0}


def _cell_shape(ctx: OpContext, gates: int, states: int, bias_gates: int) -> tuple[Dim, Dim]:
    """(batch, hidden) of a cell, as OpenVINO's ``cell_base_shape_infer``."""
    _check_ranks(ctx, (2,) * (1 + states) + (2, 2, 1))
    shapes = [spec.shape for spec in ctx.inputs]
    w, r, b = shapes[1 + states], shapes[2 + states], shapes[3 + states]
    batch, hidden = _dim_at(shapes[0], 0), _dim_at(shapes[1], 1)
    for i in range(1, 1 + states):
        batch = _merge(ctx, batch, _dim_at(shapes[i], 0), "batch_size", i)
    for i in range(2, 1 + states):
        hidden = _merge(ctx, hidden, _dim_at(shapes[i], 1), "hidden_size", i)
    hidden = _merge(ctx, hidden, _dim_at(r, 1), "hidden_size", 2 + states)
    _merge(ctx, _dim_at(shapes[0], 1), _dim_at(w, 1), "input_size", 1 + states)
    if hidden.is_static:
        for shape, factor, name, i in ((w, gates, "W", 1 + states), (r, gates, "R", 2 + states),
                                       (b, bias_gates, "B", 3 + states)):
            _gates_check(ctx, _dim_at(shape, 0), hidden, factor, name, i)
    else:
        for i in (1 + states, 2 + states):
            first = _dim_at(shapes[i], 0)
            if first.is_static:
                hidden = _merge(ctx, hidden, dim_div(first, gates), "hidden_size", i)
    return batch, hidden


def _sequence_shape(ctx: OpContext, gates: int, states: int, bias_gates: int, directions: int):
    """(batch, num_directions, seq, hidden) of a sequence, as OpenVINO's ``seq_base_shape_infer``."""
    _check_ranks(ctx, (3,) * (1 + states) + (1, 3, 3, 2))
    shapes = [spec.shape for spec in ctx.inputs]
    w, r, b = shapes[2 + states], shapes[3 + states], shapes[4 + states]
    batch, seq, hidden = _dim_at(shapes[0], 0), _dim_at(shapes[0], 1), _dim_at(shapes[1], 2)
    for i in range(1, 2 + states):
        batch = _merge(ctx, batch, _dim_at(shapes[i], 0), "batch_size", i)
    for i in range(2, 1 + states):
        hidden = _merge(ctx, hidden, _dim_at(shapes[i], 2), "hidden_size", i)
    hidden = _merge(ctx, hidden, _dim_at(r, 2), "hidden_size", 3 + states)
    _merge(ctx, _dim_at(shapes[0], 2), _dim_at(w, 2), "input_size", 2 + states)
    count = Dim(directions, directions)
    for i, axis in [(i, 1) for i in range(1, 1 + states)] + [(i, 0) for i in range(2 + states, 5 + states)]:
        merged = merge_dims(count, _dim_at(shapes[i], axis))
        if merged is None:
            ctx.fail(f"dimension `num_directions` of input {i} ({_dim_at(shapes[i], axis)}) does not match"
                     f" direction={ctx.attr('direction')!r} or the other inputs", position=i)
        count = merged
    if hidden.is_static:
        for shape, factor, name, i in ((w, gates, "W", 2 + states), (r, gates, "R", 3 + states),
                                       (b, bias_gates, "B", 4 + states)):
            _gates_check(ctx, _dim_at(shape, 1), hidden, factor, name, i)
    else:
        for i in (2 + states, 3 + states):
            if _dim_at(shapes[i], 0).is_static:
                hidden = _merge(ctx, hidden, dim_div(_dim_at(shapes[i], 1), gates), "hidden_size", i)
    return batch, count, seq, hidden


_SEQUENCES = {  # type -> (gates, states, default activations, element-type inputs)
    "LSTMSequence": (4, 2, "sigmoid,tanh,tanh", (0, 1, 2, 4, 5, 6)),
    "GRUSequence": (3, 1, "sigmoid,tanh", (0, 1, 3, 4, 5)),
    "RNNSequence": (1, 1, "tanh", (0, 1, 3, 4, 5)),
}
_CELLS = {
    "LSTMCell": (4, 2, "sigmoid,tanh,tanh", (0, 1, 2, 3, 4, 5)),
    "GRUCell": (3, 1, "sigmoid,tanh", (0, 1, 2, 3, 4)),
    "RNNCell": (1, 1, "tanh", (0, 1, 2, 3, 4)),
}


def infer_sequence(ctx: OpContext):
    gates, states, default, typed = _SEQUENCES[ctx.op.type]
    et = _element_type(ctx, typed)
    direction = ctx.attr_choice("direction", DIRECTIONS, None)
    if direction is None:
        raise ModelFormatError("the required attribute 'direction' is missing", layer=ctx.ref)
    lbr = gates == 3 and ctx.attr_bool("linear_before_reset", False)
    needed = {4: 3, 3: 2, 1: 1}[gates]
    params = {"kind": ctx.op.type[:-8].lower(), "direction": direction, "linear_before_reset": lbr,
              **_activations(ctx, needed, default)}
    batch, count, seq, hidden = _sequence_shape(ctx, gates, states, gates + lbr, 2 if direction == "bidirectional"
                                                else 1)
    y = TensorSpec(et, PartialShape((batch, count, seq, hidden)))
    state = TensorSpec(et, PartialShape((batch, count, hidden)))
    return [y] + [state] * states, params


def infer_cell(ctx: OpContext):
    gates, states, default, typed = _CELLS[ctx.op.type]
    et = _element_type(ctx, typed)
    lbr = gates == 3 and ctx.attr_bool("linear_before_reset", False)
    needed = {4: 3, 3: 2, 1: 1}[gates]
    params = {"kind": ctx.op.type[:-4].lower(), "linear_before_reset": lbr, **_activations(ctx, needed, default)}
    batch, hidden = _cell_shape(ctx, gates, states, gates + lbr)
    if gates == 4 and not hidden.is_static:  # LSTMCell alone falls back on its attribute
        size = ctx.attr_int("hidden_size", -1)
        if size < 0:
            raise ModelFormatError("the required attribute 'hidden_size' is missing", layer=ctx.ref)
        hidden = Dim(size, size)
    if ctx.op.version == 1:
        params.update(_lstm_v1_params(ctx))
    return [TensorSpec(et, PartialShape((batch, hidden)))] * states, params


_WEIGHTS_FORMATS = ("fico", "icof", "ifco", "ifoc", "iofc")


def _lstm_v1_params(ctx: OpContext) -> dict:
    """LSTMCell-1's ``input_forget``; gate orders other than ``fico`` are refused (by the reference too)."""
    order = ctx.attr_choice("weights_format", {f: f for f in _WEIGHTS_FORMATS}, "ifco")
    if order != "fico":
        raise UnsupportedError(f"weights_format={order!r} is not supported (OpenVINO's reference runs 'fico' only)",
                               layer=ctx.ref, hint="reorder W, R and B's gate blocks to f, i, c, o")
    return {"input_forget": ctx.attr_bool("input_forget", False)}


# -- kernels ---------------------------------------------------------------------------------------------
#
# Layout: every tensor of the recurrence is transposed, [rows, batch], so that each gate block is a
# contiguous row slice (numpy's fast path: no strided iteration, no per-step slicing). The gate blocks
# are reordered so the blocks under activations[0] come first (LSTM f, i, o, c; GRU z, r, h), and their
# weights and biases are negated when activations[0] is sigmoid: the gate buffer then holds -x exactly
# (negation is exact) and sigmoid is exp, +1, reciprocal. Directions run together when the recurrent
# product is small: R of both directions as one block-diagonal matrix, one matmul per step for both.

_GATES = {"lstm": 4, "gru": 3, "rnn": 1}
_ORDER = {"lstm": (0, 1, 3, 2), "gru": (0, 1, 2), "rnn": (0,)}  # our gate blocks, as OpenVINO's indices
_SQUASHED = {"lstm": 3, "gru": 2, "rnn": 1}  # leading blocks under activations[0]
_FUSE_MAX_MACS = 32768  # per direction and step (gates * hidden^2 * batch): run both directions at once



def _activation(function: str, ones: np.ndarray, negated: bool = False):
    """``f(x, out)`` computing ``out = function(x)`` (``negated``: ``x`` holds the negated argument, for
    sigmoid); tanh is the ufunc itself, without a Python frame per step."""
    if function == "tanh":
        return np.tanh
    if function == "relu":
        return lambda x, out: np.maximum(x, 0, out=out)

    def sigmoid(x, out):
        if negated:
            np.exp(x, out=out)
        else:
            np.negative(x, out=out)
            np.exp(out, out=out)
        np.add(out, ones, out=out)
        np.reciprocal(out, out=out)

    return sigmoid


class _Weights:
    """W, R, B of a group of n directions, laid out for the recurrence in the compute dtype; rows ordered
    (gate, direction, hidden), our gate order, negated blocks.

    ``w``: ``[input, gates*n*hidden]``; ``bias``: ``[gates*n*hidden]``; ``r``: ``[gates*n*hidden,
    n*hidden]``, block-diagonal over the directions; ``rbh``: GRU's linear_before_reset Rbh ``[n, hidden, 1]``,
    or None; ``ones``: ``[squashed gates*n*hidden, batch]``."""

    __slots__ = ("w", "bias", "r", "rbh", "negated", "ones")

    def __init__(self, kind: str, w, r, b, directions: tuple[int, ...], lbr: bool, negated: bool, batch: int,
                 work) -> None:
        gates, n = _GATES[kind], len(directions)
        size = r.shape[-1]
        sign = np.ones((gates, 1, 1), work)
        if negated:
            sign[:_SQUASHED[kind]] = -1

        def ours(m):  # [directions, gates*size, k] in OpenVINO's order -> ours, signed, [gates, n, size, k]
            m = np.stack([m[d] for d in directions]).astype(work, copy=False).reshape(n, gates, size, -1)
            return m[:, list(_ORDER[kind])].transpose(1, 0, 2, 3) * sign[:, None]

        self.w = np.ascontiguousarray(ours(w).reshape(gates * n * size, -1).T)
        self.bias = ours(b[:, :gates * size, None]).reshape(-1)
        self.rbh = np.stack([b[d, gates * size:] for d in directions]).astype(work)[:, :, None] if lbr else None
        big = np.zeros((gates, n, size, n, size), work)
        blocks = ours(r)
        for j in range(n):
            big[:, j, :, j, :] = blocks[:, j]
        self.r = big.reshape(gates * n * size, n * size)
        self.negated = negated
        self.ones = np.ones((_SQUASHED[kind] * n * size, batch), work)  # sigmoid's + 1


class _Lengths:
    """What ``sequence_lengths`` decides: ``masked`` (some length is not ``steps``); then ``order`` (``[steps,
    batch]``: per row, the time index read at each step of a reversed pass), ``last`` (the index of each row's
    final state, clipped), ``valid`` (rows whose length is in ``1..steps``) and ``dead`` (``[batch, steps]``:
    Y is zero there)."""

    __slots__ = ("masked", "order", "last", "valid", "dead")

    def __init__(self, lengths: np.ndarray | None, steps: int) -> None:
        lengths = None if lengths is None else np.asarray(lengths).astype(np.int64, copy=False).reshape(-1)
        self.masked = lengths is not None and bool((lengths != steps).any())
        if not self.masked:
            return
        t = np.arange(steps)[None, :]
        n = np.clip(lengths, 0, steps)[:, None]
        self.order = np.where(t < n, n - 1 - t, t).T
        self.last = np.clip(lengths - 1, 0, max(steps - 1, 0))
        self.valid = (lengths >= 1) & (lengths <= steps)
        self.dead = t >= lengths[:, None]


class SequenceKernel:
    """An LSTM/GRU/RNN sequence; W, R, B and sequence_lengths laid out once when they are constant.
    See the module docstring for the semantics and the accuracy bound."""

    def __init__(self, kind: str, direction: str, activations, clip: float, linear_before_reset: bool,
                 input_forget: bool = False, *, consts=(), steps: int | None = None, batch: int | None = None,
                 dtype: np.dtype | None = None) -> None:
        self.kind, self.activations, self.clip, self.lbr = kind, tuple(activations), clip, linear_before_reset
        self.input_forget = input_forget
        self.directions = 2 if direction == "bidirectional" else 1
        self.reverse = (False, True) if direction == "bidirectional" else (direction == "reverse",)
        self.negated = self.activations[0] == "sigmoid"
        consts = list(consts) or [None] * (7 if kind == "lstm" else 6)
        w, r, b = consts[-3:]
        self.weights = None
        if w is not None and r is not None and b is not None and batch is not None and dtype is not None:
            self.weights = self._layout(w, r, b, batch, compute_dtype(dtype))
        lengths = consts[3 if kind == "lstm" else 2]
        self.lengths = _Lengths(lengths, steps) if lengths is not None and steps is not None else None
        self.states = None  # constant initial states laid out per group: [(h, c or None)]
        h0, c0 = consts[1], consts[2] if kind == "lstm" else None
        if self.weights is not None and h0 is not None and (kind != "lstm" or c0 is not None):
            self.states = [self._states(g, h0, c0, compute_dtype(dtype)) for g, _ in self.weights]

    def _layout(self, w, r, b, batch: int, work) -> list[tuple[tuple[int, ...], _Weights]]:
        """Per group of directions run together: (directions, weights)."""
        size = r.shape[-1]
        fuse = self.directions == 1 or _GATES[self.kind] * size * size * batch <= _FUSE_MAX_MACS
        groups = [tuple(range(self.directions))] if fuse else [(d,) for d in range(self.directions)]
        return [(g, _Weights(self.kind, w, r, b, g, self.lbr, self.negated, batch, work)) for g in groups]

    @staticmethod
    def _states(group, h0, c0, work) -> tuple[np.ndarray, np.ndarray | None]:
        """The initial states of a group's directions as ``[n*hidden, batch]`` (read-only: the loops never
        write into them)."""
        def laid(state):
            return np.ascontiguousarray(state[:, list(group)].transpose(1, 2, 0), dtype=work).reshape(
                len(group) * state.shape[2], state.shape[0])

        return laid(h0), None if c0 is None else laid(c0)

    def __call__(self, *inputs: np.ndarray):
        if self.kind == "lstm":
            x, h0, c0, lengths, w, r, b = inputs
        else:
            (x, h0, lengths, w, r, b), c0 = inputs, None
        dtype = x.dtype
        work = compute_dtype(dtype)
        batch, steps, _ = x.shape
        size = r.shape[-1]
        layout = self.weights if self.weights is not None else self._layout(w, r, b, batch, work)
        mask = self.lengths if self.lengths is not None else _Lengths(lengths, steps)
        y = np.empty((batch, self.directions, steps, size), dtype)
        ho = np.empty((batch, self.directions, size), dtype)
        co = np.empty((batch, self.directions, size), dtype) if c0 is not None else None
        xw = x.astype(work, copy=False)
        with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
            for i, (group, weights) in enumerate(layout):
                h, c = self.states[i] if self.states is not None else self._states(group, h0, c0, work)
                ys, cs = self._run(group, weights, xw, h, c, mask, work)
                self._store(group, ys, y, ho, mask, h0)
                if co is not None:
                    self._store(group, cs, None, co, mask, c0)
        if mask.masked:
            y.transpose(0, 2, 1, 3)[mask.dead] = 0
        return (y, ho) if co is None else (y, ho, co)

    def _run(self, group, weights: _Weights, x, h, c, mask: _Lengths, work):
        """The recurrence of a group of n directions: Y (and the cell states) as ``[steps, n*hidden, batch]``."""
        batch, steps, _ = x.shape
        gates, n = _GATES[self.kind], len(group)
        size = weights.r.shape[1] // n
        rows = n * size
        p = x.reshape(batch * steps, x.shape[2]) @ weights.w
        p += weights.bias
        xg = _batch_last(p.reshape(batch, steps, gates * rows))  # [steps, gates*rows, batch]
        per = xg.reshape(steps, gates, n, size, batch)
        for j, d in enumerate(group):
            if self.reverse[d]:  # each row's first ``length`` steps in reverse order
                per[:, :, j] = (np.take_along_axis(per[:, :, j], mask.order[:, None, None], axis=0) if mask.masked
                                else per[::-1, :, j])
        xh = None
        if self.lbr:  # Rbh joins R's product (inside the reset), X's h block is added after it
            xh = per[:, 2].copy().reshape(steps, rows, batch)
            per[:, 2] = weights.rbh
        ys = np.empty((steps, rows, batch), work)
        ones = weights.ones
        if self.kind == "lstm":
            cs = _lstm_loop(xg, ys, h, c, weights.r, self.activations, self.clip, weights.negated, ones,
                            self.input_forget)
            return ys, cs
        if self.kind == "gru":
            _gru_loop(list(xg), None if xh is None else list(xh), list(ys), h, weights.r, self.activations,
                      self.clip, weights.negated, ones)
        else:
            _rnn_loop(list(xg), list(ys), h, weights.r, self.activations[0], self.clip, weights.negated, ones)
        return ys, None

    def _store(self, group, states, y, final, mask: _Lengths, initial) -> None:
        """Write a group's per-step states (``[steps, n*hidden, batch]``) into Y (in each row's own time
        order) and its final states into ``final``."""
        steps, rows, batch = states.shape
        n = len(group)
        span = slice(group[0], group[0] + n)  # a group is one direction or all of them
        per = states.reshape(steps, n, rows // n, batch)
        for j, d in enumerate(group if y is not None else ()):
            seq = per[:, j]
            if self.reverse[d]:
                seq = np.take_along_axis(seq, mask.order[:, None], axis=0) if mask.masked else seq[::-1]
            y[:, d] = seq.transpose(2, 0, 1)
        if mask.masked and steps:
            last = per[mask.last, :, :, np.arange(batch)]  # [batch, n, hidden]
            last[~mask.valid] = 0
            final[:, span] = last
        elif mask.masked:  # no step: no length is valid
            final[:, span] = 0
        elif steps:
            final[:, span] = per[-1].transpose(2, 0, 1)
        else:
            final[:, span] = initial[:, span]


def _batch_last(a: np.ndarray) -> np.ndarray:
    """``a`` ``[batch, steps, k]`` as a new C-contiguous ``[steps, k, batch]`` (a copy per batch row when the
    batch is small: numpy's copy loops over the short batch axis innermost otherwise)."""
    batch = a.shape[0]
    out = np.empty(a.shape[1:] + (batch,), a.dtype)
    if batch <= 16:
        for b in range(batch):
            out[..., b] = a[b]
    else:
        np.copyto(out.transpose(2, 0, 1), a)
    return out


def _lstm_loop(xg, ys, h, c, r, acts, clip: float, negated: bool, ones, input_forget: bool) -> np.ndarray:
    """The LSTM recurrence over per-step views: ``xg[t]`` the gate blocks of X (f, i, o, c), ``ys[t]`` where
    H of step t goes. Returns C of every step, ``[steps, rows, batch]``.

    C of the previous step and the candidate sit next to each other (``pairs[t]``), so that ``f * C`` and
    ``i * candidate`` are one multiplication by the adjacent f and i blocks."""
    rows, batch = h.shape
    steps = len(ys)
    g = np.empty((4 * rows, batch), h.dtype)
    pairs = np.empty((steps + 1, 2, rows, batch), h.dtype)
    pairs[0, 0] = c
    products = np.empty((2 * rows, batch), h.dtype)
    tmp = np.empty((rows, batch), h.dtype)
    squashed, f, i, fi, o, cand = g[:3 * rows], g[:rows], g[rows:2 * rows], g[:2 * rows], g[2 * rows:3 * rows], \
        g[3 * rows:]
    kept, added = products[:rows], products[rows:]
    one = ones[:rows]
    gate, squash_c, squash_h = _activation(acts[0], ones, negated), _activation(acts[1], one), \
        _activation(acts[2], one)
    for xt, ht, pair, cand_t, ct in zip(xg, ys, pairs.reshape(steps + 1, 2 * rows, batch), pairs[:, 1],
                                        pairs[1:, 0]):
        np.matmul(r, h, out=g)
        np.add(g, xt, out=g)
        if clip:
            np.clip(g, -clip, clip, out=g)
        gate(squashed, squashed)
        if input_forget:
            np.subtract(one, f, out=i)
        squash_c(cand, cand_t)
        np.multiply(fi, pair, out=products)
        np.add(kept, added, out=ct)
        squash_h(ct, tmp)
        np.multiply(o, tmp, out=ht)
        h = ht
    return pairs[1:, 0]


def _gru_loop(xg, xh, ys, h, r, acts, clip: float, negated: bool, ones) -> None:
    """The GRU recurrence: ``xg[t]`` the z, r, h blocks of X (with linear_before_reset, ``xh[t]`` holds the
    h block and ``xg[t]``'s h block is Rbh); H of step t goes to ``ys[t]``."""
    rows, batch = h.shape
    lbr = xh is not None
    g = np.empty((3 * rows, batch), h.dtype)
    zr, z, reset, cand = g[:2 * rows], g[:rows], g[rows:2 * rows], g[2 * rows:]
    r_zr, r_h = r[:2 * rows], r[2 * rows:]
    tmp = np.empty((rows, batch), h.dtype)
    gate, squash = _activation(acts[0], ones, negated), _activation(acts[1], ones[:rows])
    for t, ht in enumerate(ys):
        xt = xg[t]
        if lbr:
            np.matmul(r, h, out=g)
            np.add(g, xt, out=g)
        else:
            np.matmul(r_zr, h, out=zr)
            np.add(zr, xt[:2 * rows], out=zr)
        if clip:
            np.clip(zr, -clip, clip, out=zr)
        gate(zr, zr)
        if lbr:
            np.multiply(cand, reset, out=cand)
            np.add(cand, xh[t], out=cand)
        else:
            np.multiply(reset, h, out=tmp)
            np.matmul(r_h, tmp, out=cand)
            np.add(cand, xt[2 * rows:], out=cand)
        if clip:
            np.clip(cand, -clip, clip, out=cand)
        squash(cand, cand)
        np.subtract(h, cand, out=ht)  # (1 - z) * cand + z * h, as cand + z * (h - cand)
        np.multiply(ht, z, out=ht)
        np.add(ht, cand, out=ht)
        h = ht


def _rnn_loop(xg, ys, h, r, act: str, clip: float, negated: bool, ones) -> None:
    """The RNN recurrence: H of step t is ``act(xg[t] + R·H)``, written to ``ys[t]``."""
    squash = _activation(act, ones, negated)
    for xt, ht in zip(xg, ys):
        np.matmul(r, h, out=ht)
        np.add(ht, xt, out=ht)
        if clip:
            np.clip(ht, -clip, clip, out=ht)
        squash(ht, ht)
        h = ht


def sequence(*inputs: np.ndarray, kind: str, direction: str, activations, clip: float, linear_before_reset: bool):
    """An LSTM/GRU/RNN sequence: (Y, Ho) or (Y, Ho, Co); see the module docstring for the semantics and the
    accuracy bound."""
    return SequenceKernel(kind, direction, activations, clip, linear_before_reset)(*inputs)


def prepare_sequence(params, inputs, outputs, consts) -> SequenceKernel:
    """A sequence kernel with constant W, R, B (and sequence_lengths) laid out once."""
    batch, steps, _ = inputs[0].shape.to_shape()
    return SequenceKernel(**params, consts=consts, steps=steps, batch=batch, dtype=inputs[0].element_type.dtype)


class CellKernel:
    """One step of an LSTM/GRU/RNN cell: H, or (H, C) for LSTM. The step of the sequences' loops, on the
    transposed views of ``[batch, ...]`` arrays (no copy in or out: one step does not pay for a layout)."""

    def __init__(self, kind: str, activations, clip: float, linear_before_reset: bool, input_forget: bool = False,
                 *, consts=(), batch: int | None = None, dtype: np.dtype | None = None) -> None:
        self.kind, self.activations, self.clip, self.lbr = kind, tuple(activations), clip, linear_before_reset
        self.input_forget = input_forget
        w, r, b = list(consts)[-3:] if consts else (None, None, None)
        self.weights = None
        if w is not None and r is not None and b is not None and batch is not None and dtype is not None:
            self.weights = self._layout(w, r, b, batch, compute_dtype(dtype))

    def _layout(self, w, r, b, batch: int, work) -> _Weights:
        return _Weights(self.kind, w[None], r[None], b[None], (0,), self.lbr, self.activations[0] == "sigmoid",
                        batch, work)

    def __call__(self, *inputs: np.ndarray):
        x, h, (w, r, b) = inputs[0], inputs[1], inputs[-3:]
        dtype = x.dtype
        work = compute_dtype(dtype)
        batch, size = h.shape
        weights = self.weights if self.weights is not None else self._layout(w, r, b, batch, work)
        h_in = h.astype(work, copy=False).T
        h_out = np.empty((batch, size), work)
        acts, clip, negated, ones = self.activations, self.clip, weights.negated, weights.ones
        with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
            xg = x.astype(work, copy=False) @ weights.w  # [batch, gates*hidden], our gate order
            xg += weights.bias
            if self.kind == "lstm":
                cs = _lstm_loop([xg.T], [h_out.T], h_in, inputs[2].astype(work, copy=False).T, weights.r, acts,
                                clip, negated, ones, self.input_forget)
                return h_out.astype(dtype, copy=False), np.ascontiguousarray(cs[0].T, dtype=dtype)
            if self.kind == "gru":
                xh = None
                if self.lbr:  # as in the sequences' loop: Rbh in the h block, X's h block added after R's product
                    xh = [xg[:, 2 * size:].copy().T]
                    xg[:, 2 * size:] = weights.rbh.reshape(size)
                _gru_loop([xg.T], xh, [h_out.T], h_in, weights.r, acts, clip, negated, ones)
            else:
                _rnn_loop([xg.T], [h_out.T], h_in, weights.r, acts[0], clip, negated, ones)
        return h_out.astype(dtype, copy=False)


def cell(*inputs: np.ndarray, kind: str, activations, clip: float, linear_before_reset: bool,
         input_forget: bool = False):
    """One step of an LSTM/GRU/RNN cell: H, or (H, C) for LSTM; see the module docstring."""
    return CellKernel(kind, activations, clip, linear_before_reset, input_forget)(*inputs)


def prepare_cell(params, inputs, outputs, consts) -> CellKernel:
    """A cell kernel with constant W, R, B laid out once."""
    return CellKernel(**params, consts=consts, batch=inputs[0].shape.to_shape()[0],
                      dtype=inputs[0].element_type.dtype)


def _fit_lengths(params, inputs, position: int):
    """sequence_lengths: 0..seq (every length the reference handles in every direction) when seq is static."""
    if position != (3 if params["kind"] == "lstm" else 2):
        return None
    seq = _dim_at(inputs[0].shape, 1)
    return InputFit("index", 0, seq.lo, "sequence lengths of X's rows") if seq.is_static else None


# -- batch axes ------------------------------------------------------------------------------------------

def _batch_rule(rowed: int):
    """The batch rule of an operation whose first ``rowed`` inputs (X, the states, sequence_lengths) have the
    batch on axis 0 and whose other inputs (W, R, B) have none; every output keeps it on axis 0."""
    def batch(params, inputs, outputs, axes) -> list | str:
        if any(axis is not None for axis in axes[rowed:]):
            return "the weights (W, R, B) would be split along with the batch"
        if any(axis != 0 for axis in axes[:rowed]):
            return "X, the initial states and sequence_lengths must all have the batch on axis 0"
        return [0] * len(outputs)

    return batch


_COMMON = (Attr("hidden_size"), Attr("activations"), Attr("activations_alpha", ""), Attr("activations_beta", ""),
           Attr("clip", "0"))
_SEQ_ATTRS = _COMMON + (Attr("direction", None, tuple(DIRECTIONS)),)
_GRU_ATTR = (Attr("linear_before_reset", "false", ("true", "false")),)

OPS = (
    OpDef("LSTMSequence", 5, 5, LATEST_OPSET,
          ("X", "initial_hidden_state", "initial_cell_state", "sequence_lengths", "W", "R", "B"),
          infer_sequence, sequence, prepare_sequence, roles=("data",) * 3 + ("lengths",) + ("weights",) * 3,
          attrs=_SEQ_ATTRS, fit=_fit_lengths, batch=_batch_rule(4), exact=False, precision_anchor=True),
    OpDef("GRUSequence", 5, 5, LATEST_OPSET, ("X", "initial_hidden_state", "sequence_lengths", "W", "R", "B"),
          infer_sequence, sequence, prepare_sequence, roles=("data",) * 2 + ("lengths",) + ("weights",) * 3,
          attrs=_SEQ_ATTRS + _GRU_ATTR, fit=_fit_lengths, batch=_batch_rule(3), exact=False,
          precision_anchor=True),
    OpDef("RNNSequence", 5, 5, LATEST_OPSET, ("X", "initial_hidden_state", "sequence_lengths", "W", "R", "B"),
          infer_sequence, sequence, prepare_sequence, roles=("data",) * 2 + ("lengths",) + ("weights",) * 3,
          attrs=_SEQ_ATTRS, fit=_fit_lengths, batch=_batch_rule(3), exact=False, precision_anchor=True),
    OpDef("LSTMCell", 1, 1, 3, ("X", "initial_hidden_state", "initial_cell_state", "W", "R", "B"),
          infer_cell, cell, prepare_cell, roles=("data",) * 3 + ("weights",) * 3,
          attrs=_COMMON + (Attr("weights_format", "ifco", _WEIGHTS_FORMATS),
                           Attr("input_forget", "false", ("true", "false"))),
          batch=_batch_rule(3), exact=False, precision_anchor=True),
    OpDef("LSTMCell", 4, 4, LATEST_OPSET, ("X", "initial_hidden_state", "initial_cell_state", "W", "R", "B"),
          infer_cell, cell, prepare_cell, roles=("data",) * 3 + ("weights",) * 3, attrs=_COMMON, batch=_batch_rule(3),
          exact=False, precision_anchor=True),
    OpDef("GRUCell", 3, 3, LATEST_OPSET, ("X", "initial_hidden_state", "W", "R", "B"), infer_cell, cell,
          prepare_cell, roles=("data",) * 2 + ("weights",) * 3, attrs=_COMMON + _GRU_ATTR, batch=_batch_rule(2),
          exact=False, precision_anchor=True),
    OpDef("RNNCell", 0, 1, LATEST_OPSET, ("X", "initial_hidden_state", "W", "R", "B"), infer_cell, cell,
          prepare_cell, roles=("data",) * 2 + ("weights",) * 3, attrs=_COMMON, batch=_batch_rule(2), exact=False,
          absent=(2,), precision_anchor=True),
)
