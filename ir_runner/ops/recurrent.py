"""Recurrent operations: LSTMSequence-5, GRUSequence-5, RNNSequence-5, LSTMCell-1/4, GRUCell-3, RNNCell-0.

Shapes follow OpenVINO's ``shape_infer`` (``rnn_base_shape_inference.hpp``): batch merged over X and the
states (and ``sequence_lengths``), hidden size from the states and R (never the ``hidden_size`` attribute,
except LSTMCell when nothing else gives it), ``num_directions`` from ``direction`` merged with the
states' axis 1 and W/R/B's axis 0. Sequences output Y ``[batch, num_directions, seq, hidden]`` and Ho (Co)
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

Computation: X·W for every time step in one matmul (bias folded in), then one loop over time steps
(the recurrence), each step one matmul of the batch's states with R and vectorised gate arithmetic.
f16/bf16 are computed in f32 and rounded once at the end (as OpenVINO's CPU plugin with an f32 inference
precision does); f64 in f64.

Accuracy (``exact=False``): matmul accumulation order and the activations' libm differ from OpenVINO's;
measured against OpenVINO's CPU plugin (``INFERENCE_PRECISION_HINT=f32``; the Python reference has no
``evaluate`` for these operations) every f32 output is within ``1e-5 * (1 + max|want|)`` per element for
inputs and weights of magnitude <= 1 and sequences of up to 10 steps (errors grow with the number of
steps and the size of the products, about one f32 rounding of each dot product per step).
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelFormatError, UnsupportedError
from ..types import DYNAMIC, DYNAMIC_DIM, MAX_DIM, Dim, ElementType, PartialShape, TensorSpec, merge_dims
from .api import LATEST_OPSET, Attr, InputFit, OpContext, OpDef

ACTIVATIONS = ("sigmoid", "tanh", "relu")
DIRECTIONS = {"forward": "forward", "reverse": "reverse", "bidirectional": "bidirectional"}
_FLOATS = ("f16", "bf16", "f32", "f64")


# -- inference -------------------------------------------------------------------------------------------

def _dim_at(shape: PartialShape, axis: int) -> Dim:
    return DYNAMIC_DIM if shape.dims is None else shape.dims[axis]


def _divide(d: Dim, n: int) -> Dim:
    """OpenVINO's ``Dimension / n``: the interval of whole quotients (an unbounded dim stays unbounded only
    when it is fully dynamic)."""
    if n == 1 or d == DYNAMIC_DIM:
        return d
    hi = MAX_DIM if d.hi is None else d.hi
    return Dim(-(-d.lo // n), hi // n)


def _merge(ctx: OpContext, a: Dim, b: Dim, what: str, position: int | None = None) -> Dim:
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
    if hidden.is_static:
        for shape, factor, name, i in ((w, gates, "W", 1 + states), (r, gates, "R", 2 + states),
                                       (b, bias_gates, "B", 3 + states)):
            _gates_check(ctx, _dim_at(shape, 0), hidden, factor, name, i)
    else:
        for i in (1 + states, 2 + states):
            first = _dim_at(shapes[i], 0)
            if first.is_static:
                hidden = _merge(ctx, hidden, _divide(first, gates), "hidden_size", i)
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
                hidden = _merge(ctx, hidden, _divide(_dim_at(shapes[i], 1), gates), "hidden_size", i)
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

def _compute_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)


def _apply(x: np.ndarray, function: str, clip: float) -> np.ndarray:
    """``function(clamp(x, -clip, clip))`` in place on a fresh gate array (clip 0: no clamp)."""
    if clip:
        np.clip(x, -clip, clip, out=x)
    if function == "sigmoid":
        np.negative(x, out=x)
        np.exp(x, out=x)
        x += 1
        np.reciprocal(x, out=x)
    elif function == "tanh":
        np.tanh(x, out=x)
    else:  # relu
        np.maximum(x, 0, out=x)
    return x


def _lstm_step(gates: np.ndarray, h: np.ndarray, c: np.ndarray, r: np.ndarray, size: int, acts, clip: float,
               input_forget: bool = False):
    """One LSTM step: ``gates`` holds X·W + B of the step (f, i, c, o blocks); returns (H, C)."""
    g = gates + h @ r.T
    f_, i_, c_, o_ = (g[:, k * size:(k + 1) * size] for k in range(4))
    f_ = _apply(f_, acts[0], clip)
    i_ = 1 - f_ if input_forget else _apply(i_, acts[0], clip)
    c_new = f_ * c + i_ * _apply(c_, acts[1], clip)
    h_new = _apply(o_, acts[0], clip) * _apply(c_new.copy(), acts[2], 0.0)
    return h_new, c_new


def _gru_step(gates: np.ndarray, h: np.ndarray, r: np.ndarray, size: int, acts, clip: float, lbr: bool,
              rbh: np.ndarray | None):
    """One GRU step: ``gates`` holds X·W plus the biases of the step (z, r, h blocks); returns H."""
    if lbr:
        hr = h @ r.T
        zr = gates[:, :2 * size] + hr[:, :2 * size]
    else:
        zr = gates[:, :2 * size] + h @ r[:2 * size].T
    z = _apply(zr[:, :size], acts[0], clip)
    reset = _apply(zr[:, size:], acts[0], clip)
    if lbr:
        cand = gates[:, 2 * size:] + reset * (hr[:, 2 * size:] + rbh)
    else:
        cand = gates[:, 2 * size:] + (reset * h) @ r[2 * size:].T
    cand = _apply(cand, acts[1], clip)
    return (1 - z) * cand + z * h


def _rnn_step(gates: np.ndarray, h: np.ndarray, r: np.ndarray, acts, clip: float):
    return _apply(gates + h @ r.T, acts[0], clip)


def _input_gates(x: np.ndarray, w: np.ndarray, b: np.ndarray, kind: str, size: int, lbr: bool):
    """X·Wᵀ for every step (``x``: [..., input]) with the biases the step adds, and GRU's Rbh (or None)."""
    gates = x @ w.T
    if kind == "gru" and lbr:
        gates += b[:3 * size]
        return gates, b[3 * size:]
    gates += b
    return gates, None


def _run_direction(kind: str, x, h0, c0, lengths, w, r, b, *, reverse: bool, activations, clip: float,
                   lbr: bool, masked: bool):
    """One direction of a sequence in the compute dtype: (Y [batch, seq, hidden], Ho, Co or None)."""
    batch, steps, _ = x.shape
    size = r.shape[-1]
    if reverse:  # each row reversed over its own first ``lengths[b]`` steps
        order = _reversal(lengths, steps)
        x = np.take_along_axis(x, order[:, :, None], axis=1)
    gates, rbh = _input_gates(x, w, b, kind, size, lbr)
    y = np.zeros((batch, steps, size), dtype=x.dtype)
    h, c = h0, c0
    last_h = np.zeros_like(h0) if masked else None
    last_c = np.zeros_like(h0) if masked and c0 is not None else None
    for t in range(steps):
        if kind == "lstm":
            h, c = _lstm_step(gates[:, t], h, c, r, size, activations, clip)
        elif kind == "gru":
            h = _gru_step(gates[:, t], h, r, size, activations, clip, lbr, rbh)
        else:
            h = _rnn_step(gates[:, t], h, r, activations, clip)
        y[:, t] = h
        if masked:
            final = lengths == t + 1
            last_h[final] = h[final]
            if last_c is not None:
                last_c[final] = c[final]
    if masked:
        y[np.arange(steps)[None, :] >= lengths[:, None]] = 0
        h, c = last_h, last_c
    if reverse:
        y = np.take_along_axis(y, order[:, :, None], axis=1)
    return y, h, c


def _reversal(lengths: np.ndarray, steps: int) -> np.ndarray:
    """Per row, the time index read at each step when the row's first ``lengths[b]`` steps are reversed."""
    t = np.arange(steps)[None, :]
    n = np.clip(lengths, 0, steps)[:, None]
    return np.where(t < n, n - 1 - t, t)


def sequence(*inputs: np.ndarray, kind: str, direction: str, activations, clip: float, linear_before_reset: bool):
    """An LSTM/GRU/RNN sequence: (Y, Ho) or (Y, Ho, Co); see the module docstring for the semantics and the
    accuracy bound."""
    if kind == "lstm":
        x, h0, c0, lengths, w, r, b = inputs
    else:
        (x, h0, lengths, w, r, b), c0 = inputs, None
    dtype = x.dtype
    work = _compute_dtype(dtype)
    steps = x.shape[1]
    lengths = np.asarray(lengths).astype(np.int64, copy=False).reshape(-1)
    masked = bool((lengths != steps).any())
    passes = [("forward", False), ("reverse", True)] if direction == "bidirectional" else [(direction, direction
                                                                                           == "reverse")]
    ys, hs, cs = [], [], []
    xw = x.astype(work, copy=False)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        for d, (_, reverse) in enumerate(passes):
            y, h, c = _run_direction(
                kind, xw, h0[:, d].astype(work), None if c0 is None else c0[:, d].astype(work), lengths,
                w[d].astype(work, copy=False), r[d].astype(work, copy=False), b[d].astype(work, copy=False),
                reverse=reverse, activations=activations, clip=clip, lbr=linear_before_reset, masked=masked)
            ys.append(y)
            hs.append(h)
            cs.append(c)
    outputs = [np.stack(ys, axis=1).astype(dtype), np.stack(hs, axis=1).astype(dtype)]
    if kind == "lstm":
        outputs.append(np.stack(cs, axis=1).astype(dtype))
    return tuple(outputs)


def cell(*inputs: np.ndarray, kind: str, activations, clip: float, linear_before_reset: bool,
         input_forget: bool = False):
    """One step of an LSTM/GRU/RNN cell: H, or (H, C) for LSTM; see the module docstring."""
    dtype = inputs[0].dtype
    work = _compute_dtype(dtype)
    arrays = [a.astype(work, copy=False) for a in inputs]
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        if kind == "lstm":
            x, h, c, w, r, b = arrays[:6]
            size = r.shape[-1]
            gates, _ = _input_gates(x, w, b, kind, size, False)
            h_new, c_new = _lstm_step(gates, h, c, r, size, activations, clip, input_forget)
            return h_new.astype(dtype), c_new.astype(dtype)
        x, h, w, r, b = arrays
        size = r.shape[-1]
        gates, rbh = _input_gates(x, w, b, kind, size, linear_before_reset)
        if kind == "gru":
            return _gru_step(gates, h, r, size, activations, clip, linear_before_reset, rbh).astype(dtype)
        return _rnn_step(gates, h, r, activations, clip).astype(dtype)


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
          infer_sequence, sequence, roles=("data",) * 3 + ("lengths",) + ("weights",) * 3, attrs=_SEQ_ATTRS,
          fit=_fit_lengths, batch=_batch_rule(4), exact=False),
    OpDef("GRUSequence", 5, 5, LATEST_OPSET, ("X", "initial_hidden_state", "sequence_lengths", "W", "R", "B"),
          infer_sequence, sequence, roles=("data",) * 2 + ("lengths",) + ("weights",) * 3,
          attrs=_SEQ_ATTRS + _GRU_ATTR, fit=_fit_lengths, batch=_batch_rule(3), exact=False),
    OpDef("RNNSequence", 5, 5, LATEST_OPSET, ("X", "initial_hidden_state", "sequence_lengths", "W", "R", "B"),
          infer_sequence, sequence, roles=("data",) * 2 + ("lengths",) + ("weights",) * 3, attrs=_SEQ_ATTRS,
          fit=_fit_lengths, batch=_batch_rule(3), exact=False),
    OpDef("LSTMCell", 1, 1, 3, ("X", "initial_hidden_state", "initial_cell_state", "W", "R", "B"),
          infer_cell, cell, roles=("data",) * 3 + ("weights",) * 3,
          attrs=_COMMON + (Attr("weights_format", "ifco", _WEIGHTS_FORMATS),
                           Attr("input_forget", "false", ("true", "false"))),
          batch=_batch_rule(3), exact=False),
    OpDef("LSTMCell", 4, 4, LATEST_OPSET, ("X", "initial_hidden_state", "initial_cell_state", "W", "R", "B"),
          infer_cell, cell, roles=("data",) * 3 + ("weights",) * 3, attrs=_COMMON, batch=_batch_rule(3),
          exact=False),
    OpDef("GRUCell", 3, 3, LATEST_OPSET, ("X", "initial_hidden_state", "W", "R", "B"), infer_cell, cell,
          roles=("data",) * 2 + ("weights",) * 3, attrs=_COMMON + _GRU_ATTR, batch=_batch_rule(2), exact=False),
    OpDef("RNNCell", 0, 1, LATEST_OPSET, ("X", "initial_hidden_state", "W", "R", "B"), infer_cell, cell,
          roles=("data",) * 2 + ("weights",) * 3, attrs=_COMMON, batch=_batch_rule(2), exact=False),
)
