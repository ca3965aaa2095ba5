"""Tiny stateful models built with OpenVINO's Python API and saved as IRs: a running sum, and a decoder with a
KV cache laid out as optimum-intel writes one (inputs input_ids, attention_mask, position_ids, beam_idx; past
keys and values in variables ``[?,heads,?,dim]``, reordered by beam_idx, concatenated with the new ones along
the sequence axis, attended with ScaledDotProductAttention; output logits)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
from openvino.op.util import Variable, VariableInfo

VOCAB, HIDDEN, HEADS, DIM = 13, 8, 2, 4


def variable(variable_id: str, shape, element_type=ov.Type.f32) -> Variable:
    info = VariableInfo()
    info.data_shape, info.data_type, info.variable_id = ov.PartialShape(shape), element_type, variable_id
    return Variable(info)


def save(model: ov.Model, path: Path) -> Path:
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


def accumulator(path: Path, *, init: bool) -> Path:
    """``y = s + x; s := y`` on f32[2,3]; ``s`` starts as ``2x`` (an init input) or zeros."""
    x = ops.parameter([2, 3], np.float32, name="x")
    var = variable("sum", [2, 3])
    read = ops.read_value(ops.multiply(x, np.float32(2)), var) if init else ops.read_value(var)
    total = ops.add(read, x, name="total")
    total.output(0).get_tensor().set_names({"total"})
    return save(ov.Model([ops.result(total)], [ops.assign(total, var)], [x], "accumulator"), path)


def _project(hidden, weight: np.ndarray, batch_seq_heads):
    """[B,S,HIDDEN] @ weight -> [B,HEADS,S,DIM]."""
    flat = ops.matmul(hidden, ops.constant(weight), False, False)
    split = ops.reshape(flat, batch_seq_heads, special_zero=True)
    return ops.transpose(split, ops.constant(np.array([0, 2, 1, 3], np.int64)))


def decoder(path: Path, *, seed: int = 0, init: bool = False, layers: int = 1, seq2seq: bool = False) -> Path:
    """An attention decoder of ``layers`` residual blocks, each with a KV cache in two variables (with or without
    init inputs). ``seq2seq``: as a seq2seq decoder, positions from ``cache_position`` [n] instead of
    ``position_ids`` [1,n], and an ``encoder_hidden_states`` input f32[1,?,HIDDEN] whose mean is added."""
    rng = np.random.default_rng(seed)
    input_ids = ops.parameter([-1, -1], np.int64, name="input_ids")
    attention_mask = ops.parameter([-1, -1], np.int64, name="attention_mask")
    if seq2seq:
        positions_input = ops.parameter([-1], np.int64, name="cache_position")
        encoder = ops.parameter([1, -1, HIDDEN], np.float32, name="encoder_hidden_states")
    else:
        positions_input = ops.parameter([-1, -1], np.int64, name="position_ids")
    beam_idx = ops.parameter([-1], np.int32, name="beam_idx")
    parameters = [input_ids, attention_mask, positions_input, beam_idx] + ([encoder] if seq2seq else [])
    for node in parameters:
        node.output(0).get_tensor().set_names({node.get_friendly_name()})
    embed = ops.constant(rng.standard_normal((VOCAB, HIDDEN)).astype(np.float32))
    positions = ops.constant(rng.standard_normal((64, HIDDEN)).astype(np.float32) * 0.1)
    position_ids = ops.unsqueeze(positions_input, ops.constant(np.array([0], np.int64))) if seq2seq else positions_input
    hidden = ops.add(ops.gather(embed, input_ids, np.int64(0)), ops.gather(positions, position_ids, np.int64(0)))
    if seq2seq:
        hidden = ops.add(hidden, ops.reduce_mean(encoder, ops.constant(np.array([1], np.int64)), True))
    shape = ops.constant(np.array([0, 0, HEADS, DIM], np.int64))
    mask = ops.convert(ops.unsqueeze(attention_mask, ops.constant(np.array([1, 2], np.int64))), np.float32)
    bias = ops.multiply(ops.subtract(mask, ops.constant(np.float32(1))), ops.constant(np.float32(10000)))
    sinks = []
    for layer in range(layers):
        query = _project(hidden, rng.standard_normal((HIDDEN, HIDDEN)).astype(np.float32) * 0.5, shape)
        cache = []
        for name in ("key", "value"):
            new = _project(hidden, rng.standard_normal((HIDDEN, HIDDEN)).astype(np.float32) * 0.5, shape)
            var = variable(f"past_key_values.{layer}.{name}", [-1, HEADS, -1, DIM])
            if init:  # zeros [batch, heads, 0, dim], the batch taken from beam_idx
                batch = ops.shape_of(beam_idx, "i64")
                dims = ops.concat([batch, ops.constant(np.array([HEADS, 0, DIM], np.int64))], 0)
                read = ops.read_value(ops.broadcast(ops.constant(np.float32(0)), dims), var)
            else:
                read = ops.read_value(var)
            both = ops.concat([ops.gather(read, beam_idx, np.int64(0)), new], 2)
            cache.append(both)
            sinks.append(ops.assign(both, var))
        attended = ops.scaled_dot_product_attention(query, cache[0], cache[1], bias)
        merged = ops.reshape(ops.transpose(attended, ops.constant(np.array([0, 2, 1, 3], np.int64))),
                             ops.constant(np.array([0, 0, HIDDEN], np.int64)), special_zero=True)
        # (blocks scaled down: with 16 and no normalisation the logits would reach 1e4 and round apart)
        hidden = ops.add(hidden, ops.multiply(merged, ops.constant(np.float32(0.25)))) if layers > 1 else merged
    head = ops.constant(rng.standard_normal((HIDDEN, VOCAB)).astype(np.float32))
    logits = ops.matmul(hidden, head, False, False, name="logits_matmul")
    result = ops.result(logits)
    result.output(0).get_tensor().set_names({"logits"})
    model = ov.Model([result], sinks, parameters, "tiny_decoder")
    return save(model, path)


def decoder_feeds(tokens: list[int], past: int) -> dict[str, np.ndarray]:
    """The feeds of one step: ``tokens`` after ``past`` earlier ones, batch 1."""
    count = len(tokens)
    return {"input_ids": np.array([tokens], np.int64), "attention_mask": np.ones((1, past + count), np.int64),
            "position_ids": np.arange(past, past + count, dtype=np.int64)[None], "beam_idx": np.zeros(1, np.int32)}


def counter(path: Path, *, init: bool) -> Path:
    """``n := n + 1; y = broadcast(x, n)``: x f32[1], the variable ``n`` i32[1] (starting from 2, an init input,
    or zeros), so that a variable's value decides the output's shape, through a computation (as a MoE router's
    choice computed from the KV cache decides its experts' shapes)."""
    x = ops.parameter([1], np.float32, name="x")
    var = variable("n", [1], ov.Type.i32)
    read = ops.read_value(ops.constant(np.array([2], np.int32)), var) if init else ops.read_value(var)
    grown = ops.add(read, ops.constant(np.array([1], np.int32)))
    y = ops.broadcast(x, grown, name="y")
    y.output(0).get_tensor().set_names({"y"})
    return save(ov.Model([ops.result(y)], [ops.assign(grown, var)], [x], "counter"), path)
