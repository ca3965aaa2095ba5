"""Plans that hold across lengths (ir_runner/lengths.py): a decoder's steps share one generic plan per family of
signatures, with the results, states and errors of the plans made for each signature; on a state (a stateful
model), or without one (the KV cache as inputs and outputs, as ``--disable-stateful`` exports it)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

import ir_runner
import ir_runner.model
from ir_runner import lengths
from ir_runner.errors import InputError
from tests.helpers.llm import stateless_copy
from tests.helpers.stateful_models import DIM, HEADS, decoder, decoder_feeds, save, variable
from tests.helpers.threads import in_threads


def _batched(feeds: dict[str, np.ndarray], batch: int) -> dict[str, np.ndarray]:
    """``decoder_feeds``' feeds of batch 1 repeated to ``batch`` rows, each row its own beam."""
    return {name: np.arange(batch, dtype=value.dtype) if name == "beam_idx" else np.repeat(value, batch, 0)
            for name, value in feeds.items()}


def _decode(model, steps: int, state=None, first: int = 3, batch: int = 1):
    """Greedy-free decoding: a prefill of ``first`` tokens, then one token a step (in ``batch`` equal rows); the
    outputs and the state."""
    state = state if state is not None else model.new_state()
    outputs, past, tokens = [], 0, list(range(1, first + 1))
    for step in range(steps):
        outputs.append(model.run(_batched(decoder_feeds(tokens, past), batch), state=state)["logits"])
        past += len(tokens)
        tokens = [(7 * step + 5) % 16]
    return outputs, state


@pytest.fixture(scope="module")
def decoder_xml(tmp_path_factory):
    return str(decoder(tmp_path_factory.mktemp("lengths") / "decoder.xml", layers=2))


def _exact(monkeypatch) -> None:
    """Runs as without families: every signature planned for itself."""
    monkeypatch.setattr(lengths, "find", lambda families, signature: None)


def test_decoding_on_generic_plans_gives_the_exact_plans_bits(decoder_xml, monkeypatch):
    model = ir_runner.load(decoder_xml)
    got, state = _decode(model, 24)
    assert model._families and all(f.plan.generic for f in model._families)
    assert not any(plan.generic for plan in model._plans._plans.values())  # (build_plan: generic given exact_at)
    _exact(monkeypatch)
    want, expected = _decode(ir_runner.load(decoder_xml), 24)
    assert all(a.tobytes() == b.tobytes() and a.shape == b.shape for a, b in zip(got, want))
    assert all(state[v].tobytes() == expected[v].tobytes() for v in state)


def test_steps_of_a_family_are_neither_inferred_nor_planned(decoder_xml, monkeypatch):
    model = ir_runner.load(decoder_xml)
    inferred = []
    original = ir_runner.model.infer_for_inputs
    monkeypatch.setattr(ir_runner.model, "infer_for_inputs", lambda *a, **k: inferred.append(1) or original(*a, **k))
    _, state = _decode(model, 3)  # prefill 3, then masks of 4 and 5: the family of 5 (caches of 4, up to 8) is made
    assert len(model._families) == 1
    before, plans = len(inferred), len(model._plans)
    past = 5
    for _ in range(4):  # masks of 6..9
        model.run(decoder_feeds([1], past), state=state)
        past += 1
    assert len(inferred) == before and len(model._plans) == plans
    model.run(decoder_feeds([1], past), state=state)  # a cache of 9: beyond twice the family's, a new one
    assert len(model._families) == 2


def test_a_family_is_made_only_when_its_tensors_fit_at_twice_the_lengths(decoder_xml, monkeypatch):
    """The limit a family needs: the footprint check_memory found for its exact plan (total bytes, largest rank),
    times 2 to that rank; one byte less and its steps are planned exactly."""
    seen = []
    original = lengths.fits_memory
    monkeypatch.setattr(lengths, "fits_memory", lambda footprint, limit: seen.append(footprint) or original(
        footprint, limit))
    _decode(ir_runner.load(decoder_xml), 3)  # the family of the third step: one memory check
    [footprint] = seen
    assert footprint.rank == 4 and footprint.total > 0  # (the KV caches [1, heads, length, dim])
    need = footprint.total * 2 ** footprint.rank
    tight = ir_runner.load(decoder_xml, memory_limit=need - 1)
    assert _decode(tight, 3)[0][-1].shape == (1, 1, 13) and not tight._families  # (VOCAB)
    enough = ir_runner.load(decoder_xml, memory_limit=need)
    _decode(enough, 3)
    assert len(enough._families) == 1


def test_dims_that_do_not_grow_together_are_planned_exactly(decoder_xml):
    model = ir_runner.load(decoder_xml)
    _, state = _decode(model, 4)
    plans = len(model._plans)
    feeds = decoder_feeds([1], 6)  # the cache holds 6: a mask of 9 instead of 7
    feeds["attention_mask"] = np.ones((1, 9), np.int64)
    with pytest.raises(InputError) as caught:
        model.run(feeds, state=state)
    assert "do not fit the model" in str(caught.value)
    assert len(model._plans) == plans  # refused by the exact inference: no plan, no family


@pytest.fixture(scope="module")
def stateless_xml(decoder_xml, tmp_path_factory):
    """The decoder with its KV cache as inputs and outputs (no beam_idx): the variable ``past_key_values.0.key``
    read by input ``input_restored.past_key_values.0.key``, written to output ``output_restored.past_...``."""
    return str(stateless_copy(Path(decoder_xml), tmp_path_factory.mktemp("stateless")))


def _decode_stateless(model, steps: int, first: int = 3) -> list[dict[str, np.ndarray]]:
    """As :func:`_decode` without a state: each step's outputs, the cache carried from its outputs to the next
    step's inputs (empty before the prefill), as optimum's stateless models are run. A seq2seq decoder (inputs
    ``cache_position`` and ``encoder_hidden_states``) is fed the same encoder states at every step."""
    cache = {info.name: np.zeros((1, HEADS, 0, DIM), np.float32) for info in model.inputs
             if info.name.startswith("input_restored.")}
    assert len(cache) == 4
    names = {info.name for info in model.inputs}
    encoded = np.random.default_rng(1).standard_normal((1, 5, 8)).astype(np.float32)  # (HIDDEN)
    outputs, past, tokens = [], 0, list(range(1, first + 1))
    for step in range(steps):
        feeds = {name: value for name, value in decoder_feeds(tokens, past).items() if name in names}
        if "cache_position" in names:
            feeds.update(cache_position=np.arange(past, past + len(tokens), dtype=np.int64),
                         encoder_hidden_states=encoded)
        outputs.append(model.run({**feeds, **cache}))
        cache = {name.replace("output", "input", 1): value for name, value in outputs[-1].items()
                 if name.startswith("output_restored.")}
        past += len(tokens)
        tokens = [(7 * step + 5) % 16]
    return outputs


@pytest.mark.parametrize("seq2seq", [False, True])
def test_stateless_decoding_on_generic_plans_gives_the_exact_plans_bits(stateless_xml, tmp_path, monkeypatch,
                                                                         seq2seq):
    """A causal decoder, and an encoder-decoder's decoder with past (as Whisper's: cache_position and the
    encoder's states as inputs)."""
    if seq2seq:
        built = decoder(tmp_path / "seq2seq.xml", layers=2, seq2seq=True)
        stateless_xml = str(stateless_copy(built, tmp_path))
    model = ir_runner.load(stateless_xml)
    assert not model.variables
    got = _decode_stateless(model, 24)
    assert model._families and all(f.plan.generic for f in model._families)
    _exact(monkeypatch)
    want = _decode_stateless(ir_runner.load(stateless_xml), 24)
    for ours, exact in zip(got, want):
        assert list(ours) == list(exact) and all(
            ours[name].shape == exact[name].shape and ours[name].tobytes() == exact[name].tobytes() for name in ours)


def test_stateless_steps_of_a_family_are_neither_inferred_nor_planned(stateless_xml, monkeypatch):
    """The prefill and two steps are planned exactly (the second makes the family); the next ones are not."""
    model = ir_runner.load(stateless_xml)
    inferred, planned = [], []
    original, build = ir_runner.model.infer_for_inputs, ir_runner.model.build_plan
    monkeypatch.setattr(ir_runner.model, "infer_for_inputs", lambda *a, **k: inferred.append(1) or original(*a, **k))
    monkeypatch.setattr(ir_runner.model, "build_plan", lambda *a, **k: planned.append(1) or build(*a, **k))
    outputs = _decode_stateless(model, 3)
    assert len(model._families) == 1 and len(planned) == 3
    before = len(inferred)
    outputs += _decode_stateless(model, 7)[3:]  # (the same steps again, then caches of 5..8: twice the family's)
    assert len(inferred) == before and len(planned) == 3
    assert [out["logits"].shape for out in outputs] == [(1, 3, 13)] + [(1, 1, 13)] * 6
    _decode_stateless(model, 8)  # a cache of 9: a new family
    assert len(model._families) == 2


def test_a_run_with_out_or_a_trace_is_planned_exactly(stateless_xml):
    """``out=`` needs the output shapes before the run, a trace reports the exact plan's layers: neither uses a
    family nor teaches one."""
    model = ir_runner.load(stateless_xml)
    outputs = _decode_stateless(model, 5)
    [family] = model._families
    feeds = {"input_ids": np.array([[3]], np.int64), "attention_mask": np.ones((1, 8), np.int64),
             "position_ids": np.array([[7]], np.int64),
             **{name.replace("output", "input", 1): value for name, value in outputs[-1].items()
                if name.startswith("output_restored.")}}
    plans = len(model._plans)
    given = {name: np.empty_like(value) for name, value in model.run(feeds).items()}
    assert len(model._plans) == plans  # (the family's step)
    got = model.run(feeds, out=given)
    traced = model.trace(feeds).outputs
    assert len(model._plans) == plans + 1 and model._families == [family]
    assert all(got[name].tobytes() == traced[name].tobytes() == model.run(feeds)[name].tobytes() for name in got)


def test_stateless_decodings_in_threads_learn_each_their_family(stateless_xml):
    """Without a state, each thread is one caller: its consecutive runs make its family, whatever the others
    run meanwhile; the results are those of one decoding at a time."""
    model = ir_runner.load(stateless_xml)
    alone = [_decode_stateless(ir_runner.load(stateless_xml), 10, first=n) for n in (2, 3, 4, 5)]
    together = in_threads(lambda i: _decode_stateless(model, 10, first=2 + i % 4), 8)
    assert model._families
    for i, outputs in enumerate(together):
        assert [out["logits"].tobytes() for out in outputs] == [out["logits"].tobytes() for out in alone[i % 4]]


def _clipped(path):
    """``s := concat(s, x)`` on a growing f32[1,?] variable; ``y = s + table[:, :len(s)]`` with a table of 10:
    from length 11 on, the Add's shapes do not fit (the Slice stops at the table's end)."""
    x = ops.parameter([1, 1], np.float32, name="x")
    cache = variable("s", [1, -1])
    grown = ops.concat([ops.read_value(cache), x], 1)
    length = ops.gather(ops.shape_of(grown, "i64"), ops.constant(np.array([1], np.int64)), np.int64(0))
    table = ops.constant(np.arange(10, dtype=np.float32)[None])
    sliced = ops.slice(table, ops.constant(np.array([0], np.int64)), length, ops.constant(np.array([1], np.int64)),
                       ops.constant(np.array([1], np.int64)))
    y = ops.add(grown, sliced, name="y")
    y.output(0).get_tensor().set_names({"y"})
    return save(ov.Model([ops.result(y)], [ops.assign(grown, cache)], [x], "clipped"), path)


def test_a_length_the_model_refuses_raises_the_exact_error_and_keeps_the_state(tmp_path):
    model = ir_runner.load(str(_clipped(tmp_path / "clipped.xml")))
    state = model.new_state()
    x = np.ones((1, 1), np.float32)
    for step in range(10):  # lengths 1..10; the family of length 7 admits up to 14
        assert model.run({"x": x}, state=state)["y"].shape == (1, step + 1)
    assert any(family.admits(((np.dtype(np.float32), (1, 1)), (np.dtype(np.float32), (1, 11))))
               for family in model._families)
    kept = state["s"]
    with pytest.raises(InputError) as generic:
        model.run({"x": x}, state=state)
    assert np.array_equal(state["s"], kept)
    exact = ir_runner.load(str(tmp_path / "clipped.xml"))
    fresh = exact.new_state()
    fresh["s"] = kept
    with pytest.raises(InputError) as planned:
        exact.run({"x": x}, state=fresh)
    assert str(generic.value) == str(planned.value) and generic.value.layer == planned.value.layer


def test_families_need_dims_of_at_least_two():
    two, three = ((np.dtype(np.int64), (1, 2)),), ((np.dtype(np.int64), (1, 3)),)
    assert lengths.varying_dims(((np.dtype(np.int64), (1, 1)),), two) is None
    assert lengths.varying_dims(two, three) == ((0, 1),)
    assert lengths.varying_dims(two, ((np.dtype(np.int32), (1, 3)),)) is None  # another dtype
    family = lengths.Family(three, ((0, 1),), plan=None)
    assert family.admits(two) and family.admits(((np.dtype(np.int64), (1, 6)),))
    assert not family.admits(((np.dtype(np.int64), (1, 1)),)) and not family.admits(((np.dtype(np.int64), (1, 7)),))


def test_two_stated_decodings_in_threads_match_one_at_a_time(decoder_xml):
    model = ir_runner.load(decoder_xml)
    alone = [_decode(ir_runner.load(decoder_xml), 12, first=n)[0] for n in (2, 3, 4, 5)]
    together = in_threads(lambda i: _decode(model, 12, first=2 + i % 4)[0], 8)
    for i, outputs in enumerate(together):
        assert all(a.tobytes() == b.tobytes() for a, b in zip(outputs, alone[i % 4]))


def test_each_state_learns_its_family_from_its_own_steps(decoder_xml, monkeypatch):
    """Two decodings of batch 1 and 2 advanced in turns: consecutive runs of the model alternate batches (which
    no family spans), yet each state's consecutive steps make its own family; the results are the exact plans'."""
    model = ir_runner.load(decoder_xml)
    states, outputs = {1: model.new_state(), 2: model.new_state()}, {1: [], 2: []}
    tokens, past = [1, 2, 3], 0
    for step in range(5):
        for batch, state in states.items():
            outputs[batch].append(model.run(_batched(decoder_feeds(tokens, past), batch), state=state)["logits"])
        past += len(tokens)
        tokens = [(7 * step + 5) % 16]
    assert sorted(family.base[0][1][0] for family in model._families) == [1, 2]  # (input_ids' batch)
    _exact(monkeypatch)
    for batch in states:
        want = _decode(ir_runner.load(decoder_xml), 5, batch=batch)[0]
        assert [a.tobytes() for a in want] == [b.tobytes() for b in outputs[batch]]


def _clipped_output(path):
    """``s := concat(s, x)``; outputs ``y = 2s`` and ``z = table[:, :len(s)]`` (a table of 10: ``z``'s length is
    ``min(len(s), 10)``, the same for every length from 10 on)."""
    x = ops.parameter([1, 1], np.float32, name="x")
    cache = variable("s", [1, -1])
    grown = ops.concat([ops.read_value(cache), x], 1)
    length = ops.gather(ops.shape_of(grown, "i64"), ops.constant(np.array([1], np.int64)), np.int64(0))
    table = ops.constant(np.arange(10, dtype=np.float32)[None])
    z = ops.slice(table, ops.constant(np.array([0], np.int64)), length, ops.constant(np.array([1], np.int64)),
                  ops.constant(np.array([1], np.int64)), name="z")
    y = ops.multiply(grown, ops.constant(np.float32(2)), name="y")
    for node, name in ((y, "y"), (z, "z")):
        node.output(0).get_tensor().set_names({name})
    return save(ov.Model([ops.result(y), ops.result(z)], [ops.assign(grown, cache)], [x], "clipped_output"), path)


def test_a_pinned_shape_that_does_not_hold_is_planned_exactly(tmp_path):
    """Two steps whose clipped output is as long make its shape pinned in their family's plan; a shorter cache
    that the family admits breaks the pin: the run is planned exactly (same results) and the family dropped."""
    model = ir_runner.load(str(_clipped_output(tmp_path / "clipped.xml")))
    state = model.new_state()
    x = np.ones((1, 1), np.float32)
    for length in (11, 12):
        state["s"] = np.zeros((1, length), np.float32)
        assert model.run({"x": x}, state=state)["z"].shape == (1, 10)
    [family] = model._families
    assert family.plan.generic and any(step.layer.name == "z" for step in family.plan.steps)
    state["s"] = np.full((1, 4), 3, np.float32)
    got = model.run({"x": x}, state=state)
    assert got["z"].shape == (1, 5) and np.array_equal(got["z"], np.arange(5, dtype=np.float32)[None])
    assert np.array_equal(got["y"], np.array([[6, 6, 6, 6, 2]], np.float32))
    assert family not in model._families


def test_a_family_admits_no_other_rank_element_type_or_unset_variable():
    base = ((np.dtype(np.int64), (1, 5)), (np.dtype(np.float32), (1, 2, 4, 8)))
    family = lengths.Family(base, ((0, 1), (1, 2)), plan=None)
    assert family.admits(((np.dtype(np.int64), (1, 7)), (np.dtype(np.float32), (1, 2, 6, 8))))
    assert not family.admits(((np.dtype(np.int64), (1, 7)), (np.dtype(np.float32), (1, 2, 7, 8))))  # not together
    assert not family.admits(((np.dtype(np.int64), (1,)), (np.dtype(np.float32), (1, 2, 4, 8))))  # another rank
    assert not family.admits(((np.dtype(np.int64), (1, 5)), (np.dtype(np.float16), (1, 2, 4, 8))))
    assert not family.admits(((np.dtype(np.int64), (1, 5)), None))  # an unset variable
    assert not family.admits(((np.dtype(np.int64), (2, 6)), (np.dtype(np.float32), (1, 2, 5, 8))))  # a fixed dim


def _positions(path):
    """``y = table[range(len(s), len(s) + 1)[None]]``, then ``s := concat(s, x)``: a position embedding picked by
    the cache's length through shape arithmetic (as Whisper's decoder picks it), which an exact plan folds."""
    x = ops.parameter([1, 1], np.float32, name="x")
    beam = ops.parameter([1], np.int32, name="beam_idx")
    cache = variable("s", [1, -1])
    read = ops.gather(ops.read_value(cache), beam, np.int64(0))
    grown = ops.concat([read, x], 1)
    one = ops.constant(np.array(1, np.int64))
    past = ops.gather(ops.shape_of(read, "i64"), one, np.int64(0))
    stop = ops.add(past, ops.gather(ops.shape_of(x, "i64"), one, np.int64(0)))
    index = ops.unsqueeze(ops.range(past, stop, one, "i64"), ops.constant(np.array([0], np.int64)))
    index = ops.convert(ops.tile(index, ops.constant(np.array([1, 1], np.int64))), "i32")
    table = ops.constant(np.arange(64, dtype=np.float32).reshape(16, 4))
    y = ops.gather(table, index, np.int64(0), name="y")
    y.output(0).get_tensor().set_names({"y"})
    return save(ov.Model([ops.result(y)], [ops.assign(grown, cache)], [x, beam], "positions"), path)


def test_values_an_exact_plan_folds_from_shapes_are_computed_by_the_generic_plan(tmp_path):
    model = ir_runner.load(str(_positions(tmp_path / "positions.xml")))
    state = model.new_state()
    x = np.ones((1, 1), np.float32)
    for length in range(1, 13):
        got = model.run({"x": x, "beam_idx": np.zeros(1, np.int32)}, state=state)["y"]
        assert np.array_equal(got, np.arange(4 * (length - 1), 4 * length, dtype=np.float32).reshape(1, 1, 4))
    assert model._families


def _layer_of(tmp_path, name: str, node, parameters: list):
    """The LayerInference of the layer with ``at_run`` of ``node`` (over ``parameters``) in its saved model."""
    model = ir_runner.load(str(save(ov.Model([node], parameters), tmp_path / f"{name}.xml")))
    return next(info for info in model.inference.layers.values() if info.op is not None and info.op.at_run)


def _at_run_cases(rng):
    """(data shape, second input) pairs: plain ones and the corners at_run leaves to inference."""
    shapes = [(2, 3, 4), (1, 6), (4,), (), (2, 0, 3), (1, 1, 5)]
    seconds = [[2, 12], [-1, 4], [0, -1], [0, 0, 4], [3, -1, 2], [-1, -1], [24], [-2, 12], [0], [1, 2, 3, 4],
               [5, -1], [0, 3, -1], [6, 1], [2, 1, 3, 4], [1], [-1], [4, 1], [2, 3, 1, 1], [1, 4, 2, 0], [3, -4]]
    seconds += [list(rng.integers(-3, 7, size=rng.integers(1, 5))) for _ in range(60)]
    dtypes = (np.int64, np.int32, np.uint8)
    return [(shape, np.array(second, dtypes[i % 3]) if min(second, default=0) >= 0 or i % 3 != 2
             else np.array(second, np.int64)) for i, (shape, second) in
            enumerate((shape, second) for shape in shapes for second in seconds)]


def _check_at_run(info, cases) -> None:
    """``info``'s at_run on each tuple of arrays of ``cases``: inference's parameters or None, None where
    inference refuses them; both kinds of case met."""
    from ir_runner.errors import IRError
    from ir_runner.infer import OpContext, _specs_of

    attributes = OpContext(info.layer, info.ref, info.op, list(info.inputs), lambda *_: None, False, None, None, None)
    fast = refused = 0
    for arrays in cases:
        got = info.op.at_run(attributes, arrays)
        ctx = OpContext(info.layer, info.ref, info.op, _specs_of(info, arrays),
                        lambda _l, p, given=arrays: given[p], False, None, None, None)
        try:
            _, params = info.op.infer(ctx)
        except IRError:
            assert got is None, arrays
            refused += 1
            continue
        if got is not None:
            fast += 1
            assert got == params, arrays
            assert np.array_equal(info.op.kernel(*arrays, **got), info.op.kernel(*arrays, **params))
    assert fast >= 10 and refused >= 10, (fast, refused)


@pytest.mark.parametrize("what", ["reshape", "reshape_special_zero", "unsqueeze", "broadcast_numpy",
                                  "broadcast_bidirectional", "broadcast1"])
def test_at_run_parameters_are_inferences_own(tmp_path, what):
    """A generic plan's run-time layer takes its parameters from ``at_run`` in the plain cases without
    inference: they are exactly inference's, and where inference refuses the arrays at_run gives None."""
    data, second = ov.op.Parameter(ov.Type.f32, ov.PartialShape.dynamic()), ov.op.Parameter(
        ov.Type.i64, ov.PartialShape.dynamic(1))
    node = {"reshape": lambda: ops.reshape(data, second, False),
            "reshape_special_zero": lambda: ops.reshape(data, second, True),
            "unsqueeze": lambda: ops.unsqueeze(data, second),
            "broadcast_numpy": lambda: ops.broadcast(data, second, broadcast_spec="numpy"),
            "broadcast_bidirectional": lambda: ops.broadcast(data, second, broadcast_spec="bidirectional"),
            "broadcast1": lambda: __import__("openvino.opset1", fromlist=["broadcast"]).broadcast(data, second)}[what]()
    info = _layer_of(tmp_path, what, node, [data, second])
    cases = [(np.zeros(shape, np.float32), value[:2] if what == "unsqueeze" else value)
             for shape, value in _at_run_cases(np.random.default_rng(5))]
    _check_at_run(info, cases)


def test_at_run_parameters_of_slice_and_range_are_inferences_own(tmp_path):
    """As above, Slice-8 (with and without axes) and Range-4 (integer and float outputs)."""
    rng = np.random.default_rng(7)
    data = ov.op.Parameter(ov.Type.f32, ov.PartialShape.dynamic())
    given = [ov.op.Parameter(ov.Type.i64, ov.PartialShape.dynamic(1)) for _ in range(4)]
    for axes in (given[3:], []):
        info = _layer_of(tmp_path, f"slice{len(axes)}", ops.slice(data, *given[:3], *axes), [data, *given[:3], *axes])
        cases = []
        for _ in range(300):
            count = int(rng.integers(0, 4))
            rows = [rng.integers(-6, 7, size=count if rng.random() < 0.9 else count + 1) for _ in range(3 + len(axes))]
            shape = tuple(int(n) for n in rng.integers(0, 5, size=int(rng.integers(0, 4))))
            cases.append((np.arange(math.prod(shape), dtype=np.float32).reshape(shape), *rows))
        _check_at_run(info, cases)
    scalars = [ov.op.Parameter(ov.Type.f32, ov.PartialShape([])) for _ in range(3)]
    for output_type in ("i64", "f32", "u8"):
        info = _layer_of(tmp_path, f"range_{output_type}", ops.range(*scalars, output_type=output_type), scalars)
        values = [*(rng.integers(-4, 9, size=(100, 3)) * rng.choice([1, 0.5, 0.3], size=(100, 1))).tolist(),
                  *rng.integers(-5, 9, size=(200, 3)).tolist(), [0, 5, 0.4], [0, np.inf, 1], [np.nan, 3, 1]]
        _check_at_run(info, [tuple(np.array(v, np.float32) for v in row) for row in values])
