"""Stateful models (ReadValue/Assign): runs step by step against OpenVINO's InferRequest, the State object, the
checks that take two layers, and states advanced in several threads."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset3 as opset3
import openvino.opset13 as ops
import pytest

import ir_runner
from ir_runner.errors import InferenceError, InputError
from tests.helpers.stateful_models import accumulator, counter, decoder, decoder_feeds, save, variable
from tests.helpers.threads import in_threads

CPU_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32"}  # the CPU keeps a KV cache in u8


def _request(path: Path):
    return ov.Core().compile_model(str(path), "CPU", CPU_CONFIG).create_infer_request()


def _close(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype
    bound = 1e-4 + 1e-3 * float(np.abs(want).max())
    assert float(np.abs(got - want).max()) <= bound


@pytest.mark.parametrize("init", [False, True])
def test_accumulator_matches_infer_request_step_by_step_and_after_reset(tmp_path, init):
    path = accumulator(tmp_path / "acc.xml", init=init)
    model, request = ir_runner.load(str(path)), _request(path)
    state = model.new_state()
    feeds = [np.arange(6, dtype=np.float32).reshape(2, 3) * (step + 1) for step in range(4)]
    for x in [*feeds, "reset", *feeds[:2]]:
        if isinstance(x, str):
            state.reset()
            request.reset_state()
            continue
        got = model.run({"x": x}, state=state)["total"]
        want = request.infer({"x": x})[0]
        assert np.array_equal(got, want)  # additions: exact
        assert np.array_equal(state["sum"], request.query_state()[0].state.data)


@pytest.mark.parametrize("init", [False, True])
def test_a_shape_decided_by_a_variables_value_matches_infer_request(tmp_path, init):
    path = counter(tmp_path / "counter.xml", init=init)
    model, request = ir_runner.load(str(path)), _request(path)
    state = model.new_state()
    x = np.array([1.5], np.float32)
    for step in range(4):
        got = model.run({"x": x}, state=state)["y"]
        want = request.infer({"x": x})[0]
        assert got.shape == ((3 if init else 1) + step,) and np.array_equal(got, want)
        assert np.array_equal(state["n"], request.query_state()[0].state.data)


def test_a_plan_decided_by_a_variables_value_is_never_used_for_another_value(tmp_path):
    model = ir_runner.load(str(counter(tmp_path / "counter.xml", init=False)))
    x = np.array([1.5], np.float32)
    low, high = model.new_state(), model.new_state()
    low["n"], high["n"] = np.array([1], np.int32), np.array([6], np.int32)
    assert model.run({"x": x}, state=low)["y"].shape == (2,)
    assert model.run({"x": x}, state=high)["y"].shape == (7,)  # same shapes and inputs, another value
    plans = len(model._plans)
    low["n"] = np.array([1], np.int32)
    assert model.run({"x": x}, state=low)["y"].shape == (2,) and len(model._plans) == plans  # the same plan again
    assert model.run({"x": x})["y"].shape == (1,)  # a new state: zeros


def test_opset3_read_value_and_assign_match_infer_request(tmp_path):
    x = opset3.parameter([2, 3], np.float32, name="x")
    read = opset3.read_value(x, "s")
    read.output(0).get_tensor().set_names({"read"})
    stored = opset3.assign(opset3.add(read, x), "s")
    path = save(ov.Model([opset3.result(read)], [stored], [x], "v3"), tmp_path / "v3.xml")
    model, request = ir_runner.load(str(path)), _request(path)
    assert [(v.id, str(v.element_type.name)) for v in model.variables] == [("s", "dynamic")]
    state = model.new_state()
    assert state["s"] is None  # computed by the first run from its init input
    for step in range(4):
        x_value = np.full((2, 3), step + 1, np.float32)
        assert np.array_equal(model.run({"x": x_value}, state=state)["read"], request.infer({"x": x_value})[0])


def _run_steps(model, state, steps: int = 6, prompt=(1, 5, 7)) -> tuple[list[np.ndarray], list[int]]:
    logits, tokens, chosen, past = [], list(prompt), [], 0
    for _ in range(steps):
        out = model.run(decoder_feeds(tokens, past), state=state)["logits"]
        logits.append(out)
        past += len(tokens)
        tokens = [int(out[0, -1].argmax())]
        chosen.append(tokens[0])
    return logits, chosen


def test_kv_cache_decoder_matches_infer_request_for_six_steps(tmp_path):
    path = decoder(tmp_path / "dec.xml", init=True)
    model, request = ir_runner.load(str(path)), _request(path)
    state = model.new_state()
    tokens, past = [1, 5, 7], 0
    for _ in range(6):
        feeds = decoder_feeds(tokens, past)
        got = model.run(feeds, state=state)["logits"]
        want = request.infer(feeds)[0]
        _close(got, want)
        assert int(got[0, -1].argmax()) == int(want[0, -1].argmax())
        for held in request.query_state():
            _close(state[held.name], held.state.data)
        assert state["past_key_values.0.key"].shape == (1, 2, past + len(tokens), 4)
        past += len(tokens)
        tokens = [int(got[0, -1].argmax())]


def test_kv_cache_without_init_input_starts_empty_and_equals_the_init_variant(tmp_path):
    # OpenVINO's CPU plugin cannot compile this form (no init input before the beam Gather): compared with the
    # same weights through an init input of zeros, and with one prefill of the whole sequence
    plain = ir_runner.load(str(decoder(tmp_path / "plain.xml", init=False)))
    initialised = ir_runner.load(str(decoder(tmp_path / "init.xml", init=True)))
    state = plain.new_state()
    assert state["past_key_values.0.key"].shape == (0, 2, 0, 4)  # zeros of [?,2,?,4]: an empty tensor
    logits, chosen = _run_steps(plain, state)
    other, other_chosen = _run_steps(initialised, initialised.new_state())
    assert chosen == other_chosen and all(np.array_equal(a, b) for a, b in zip(logits, other))
    whole = plain.run(decoder_feeds([1, 5, 7, *chosen[:-1]], 0))["logits"]  # (attention is not causal here)
    np.testing.assert_allclose(logits[-1][0, -1], whole[0, -1], rtol=1e-5, atol=1e-5)


def test_reset_gives_the_first_step_again_and_a_run_without_state_keeps_nothing(tmp_path):
    model = ir_runner.load(str(decoder(tmp_path / "dec.xml", init=True)))
    state = model.new_state()
    first, _ = _run_steps(model, state, steps=3)
    state.reset()
    again, _ = _run_steps(model, state, steps=3)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    alone = [model.run(decoder_feeds([1, 5, 7], 0))["logits"] for _ in range(2)]
    assert np.array_equal(alone[0], first[0]) and np.array_equal(alone[1], first[0])


def test_two_states_advance_in_two_threads_as_one_at_a_time(tmp_path):
    model = ir_runner.load(str(decoder(tmp_path / "dec.xml", init=True)))
    prompts = [(1, 5, 7), (3, 2)]
    alone = [_run_steps(model, model.new_state(), 8, prompt) for prompt in prompts]
    together = in_threads(lambda i: _run_steps(model, model.new_state(), 8, prompts[i]), count=2)
    for (logits, chosen), (want_logits, want_chosen) in zip(together, alone):
        assert chosen == want_chosen and all(np.array_equal(a, b) for a, b in zip(logits, want_logits))


def test_trace_reads_and_updates_the_state_as_run_does(tmp_path):
    model = ir_runner.load(str(decoder(tmp_path / "dec.xml", init=True)))
    ran, traced = model.new_state(), model.new_state()
    for tokens, past in (([1, 5, 7], 0), ([4], 3)):
        want = model.run(decoder_feeds(tokens, past), state=ran)["logits"]
        trace = model.trace(decoder_feeds(tokens, past), state=traced)
        assert np.array_equal(trace.outputs["logits"], want)
    sources = {record.layer.type_version: record.source for record in trace.layers}
    assert sources["ReadValue-6"] == "state" and sources["Assign-6"] == "computed"
    for declared in model.variables:
        assert np.array_equal(ran[declared.id], traced[declared.id])


def test_setting_a_variable_checks_it_and_is_used_by_the_next_run(tmp_path):
    model = ir_runner.load(str(accumulator(tmp_path / "acc.xml", init=False)))
    assert [(v.id, v.element_type.name, str(v.partial_shape)) for v in model.variables] == [("sum", "f32", "[2,3]")]
    state = model.new_state()
    assert np.array_equal(state["sum"], np.zeros((2, 3), np.float32)) and not state.is_set("sum")
    start = np.full((2, 3), 10, np.float32)
    state["sum"] = start
    start[:] = 0  # the state holds a copy
    assert np.array_equal(model.run({"x": np.ones((2, 3), np.float32)}, state=state)["total"], np.full((2, 3), 11))
    with pytest.raises(InputError, match=r"variable 'sum' is f32, got float64"):
        state["sum"] = np.zeros((2, 3))
    with pytest.raises(InputError, match=r"variable 'sum' has shape \[2,3\], got \[3, 2\]"):
        state["sum"] = np.zeros((3, 2), np.float32)
    with pytest.raises(InputError, match=r"no variable 'nope'.*\n.*its variables: 'sum'"):
        state["nope"]
    other = ir_runner.load(str(accumulator(tmp_path / "other.xml", init=True)))
    with pytest.raises(InputError, match="state= must be a State of this model"):
        model.run({"x": start}, state=other.new_state())


def test_one_state_refuses_a_second_concurrent_run(tmp_path):
    from ir_runner.state import Session

    model = ir_runner.load(str(accumulator(tmp_path / "acc.xml", init=False)))
    state = model.new_state()
    with Session(model, state), pytest.raises(InputError, match="being used by another run"):
        model.run({"x": np.ones((2, 3), np.float32)}, state=state)
    model.run({"x": np.ones((2, 3), np.float32)}, state=state)  # free again


def test_validate_checks_every_layer_of_a_stateful_model(tmp_path):
    report = ir_runner.validate(str(decoder(tmp_path / "dec.xml", init=True)))
    assert report.valid and report.complete and not report.unchecked


def _edited(tmp_path: Path, text: str, name: str) -> str:
    path = tmp_path / f"{name}.xml"
    path.write_text(text)
    (tmp_path / f"{name}.bin").write_bytes((tmp_path / "acc.bin").read_bytes())
    return str(path)


def _assign_block(text: str) -> str:
    return re.search(r'\t\t<layer id="\d+" name="[^"]*" type="Assign".*?</layer>\n', text, re.S).group(0)


def test_variable_errors_name_both_layers(tmp_path):
    text = accumulator(tmp_path / "acc.xml", init=False).read_text()
    block = _assign_block(text)
    layer_id = re.search(r'id="(\d+)"', block).group(1)
    edge = re.search(rf'\t*<edge from-layer="(\d+)" from-port="(\d+)" to-layer="{layer_id}" to-port="0" ?/>\n',
                     text)
    twice = text.replace(block, block + block.replace(f'id="{layer_id}"', 'id="99"', 1).replace('name="', 'name="b', 1))
    second_edge = edge.group(0).replace(f'to-layer="{layer_id}"', 'to-layer="99"')
    twice = twice.replace(edge.group(0), edge.group(0) + second_edge)
    with pytest.raises(InferenceError, match=r"layer 'bAssign_\d+' \(Assign-6, id 99.*writes the variable 'sum',"
                                             r" which layer 'Assign_\d+' \(Assign-6, id \d+.*writes too"):
        ir_runner.load(_edited(tmp_path, twice, "twice"))
    orphan = text.replace(block, block.replace('variable_id="sum"', 'variable_id="other"'))
    with pytest.raises(InferenceError, match=r"Assign-6.*writes the variable 'other', which no layer reads"):
        ir_runner.load(_edited(tmp_path, orphan, "orphan"))
    misfit = text.replace('variable_type="f32" variable_shape="2,3"', 'variable_type="f32" variable_shape="2,?"')
    misfit = misfit.replace(block, block.replace('<dim>3</dim>', '<dim>5</dim>'))
    findings = [str(e) for e in ir_runner.validate(_edited(tmp_path, misfit.replace(
        'variable_shape="2,?"', 'variable_shape="3,?"'), "misfit")).errors]
    wanted = (r"Assign-6.*stores f32\[2,3\] in the variable 'sum', which layer 'ReadValue_\d+' \(ReadValue-6, id \d+"
              r".*declares as f32\[3,\?\]: dim 0 differs")
    assert any(re.search(wanted, finding) for finding in findings), findings
    typed = ir_runner.validate(_edited(tmp_path, text.replace('variable_type="f32"', 'variable_type="f16"'), "typed"))
    assert any("declares as f16[2,3]: the element types differ" in str(e) for e in typed.errors)


def test_read_value_init_must_fit_the_declared_variable(tmp_path):
    text = accumulator(tmp_path / "acc.xml", init=True).read_text()
    bad = text.replace('variable_shape="2,3"', 'variable_shape="2,2"')
    with pytest.raises(InferenceError, match=r"ReadValue-6.*variable 'sum' is declared \[2,2\], which does not take"
                                             r" the init input's shape \[2,3\]"):
        ir_runner.load(_edited(tmp_path, bad, "bad"))
    typed = text.replace('variable_type="f32"', 'variable_type="i32"')
    with pytest.raises(InferenceError, match=r"variable 'sum' is declared i32, the init input is f32"):
        ir_runner.load(_edited(tmp_path, typed, "typed"))


def test_crosscheck_runs_a_step_on_the_same_state_in_both(tmp_path):
    model = ir_runner.load(str(decoder(tmp_path / "dec.xml", init=True)))
    state = model.new_state()
    model.run(decoder_feeds([1, 5, 7], 0), state=state)
    before = state.values()
    report = ir_runner.crosscheck(model, decoder_feeds([4], 3), state=state, every_layer=True)
    assert report.first_divergence is None, report
    compared = {row.layer.type_version: row for row in report.layers}
    assert compared["ReadValue-6"].status == "agree" and compared["ReadValue-6"].source == "state"
    assert state["past_key_values.0.key"].shape == (1, 2, 4, 4)  # the step was taken
    assert before["past_key_values.0.key"].shape == (1, 2, 3, 4)


def test_a_variable_declared_without_type_or_shape_has_no_initial_value(tmp_path):
    text = accumulator(tmp_path / "acc.xml", init=False).read_text()
    model = ir_runner.load(_edited(tmp_path, text.replace(' variable_type="f32" variable_shape="2,3"', ''), "bare"))
    assert str(model.variables[0]) == "<Variable 'sum' dynamic[...]>"
    with pytest.raises(ir_runner.UnsupportedError, match=r"ReadValue-6.*declared dynamic\[\.\.\.\]: its initial value"
                                                         r" \(zeros\) needs an element type and a rank"):
        model.run({"x": np.ones((2, 3), np.float32)})
    state = model.new_state()
    state["sum"] = np.ones((2, 3), np.float32)  # given a value, it runs
    assert np.array_equal(model.run({"x": np.ones((2, 3), np.float32)}, state=state)["total"], np.full((2, 3), 2))


def test_a_variable_inside_a_body_is_refused(tmp_path):
    cond = ops.parameter([], np.bool_, name="cond")
    x = ops.parameter([2], np.float32, name="x")
    inner_then, inner_else = ops.parameter([2], np.float32), ops.parameter([2], np.float32)
    read = ops.read_value(variable("inner", [2]))
    then_body = ov.Model([ops.result(ops.add(inner_then, read))], [inner_then], "then")
    else_body = ov.Model([ops.result(inner_else)], [inner_else], "else")
    branch = ops.if_op(cond)
    branch.set_then_body(then_body)
    branch.set_else_body(else_body)
    branch.set_input(x.output(0), inner_then, inner_else)
    branch.set_output(then_body.get_results()[0], else_body.get_results()[0])
    path = save(ov.Model([ops.result(branch.output(0))], [cond, x], "body"), tmp_path / "body.xml")
    with pytest.raises(ir_runner.UnsupportedError, match=r"If-8.*in <then_body>: layer .*\(ReadValue-6.*reads or"
                                                         r" writes a variable, which ir-run supports only in the"
                                                         r" model's main graph"):
        ir_runner.load(str(path)).run({"cond": np.array(True), "x": np.ones(2, np.float32)})


def test_calling_the_model_and_out_buffers_take_the_state_too(tmp_path):
    model = ir_runner.load(str(accumulator(tmp_path / "acc.xml", init=False)))
    state = model.new_state()
    ones = np.ones((2, 3), np.float32)
    assert np.array_equal(model(ones, state=state)["total"], ones)
    buffer = np.empty((2, 3), np.float32)
    result = model.run({"x": ones}, state=state, out={"total": buffer})
    assert result["total"] is buffer and np.array_equal(buffer, np.full((2, 3), 2))
    assert np.array_equal(state["sum"], np.full((2, 3), 2))
    buffer[:] = 0  # the state holds its own array, not the caller's buffer
    assert np.array_equal(model(ones, state=state)["total"], np.full((2, 3), 3))


def test_a_variable_declared_dynamic_takes_its_init_inputs_spec(tmp_path):
    # OpenVINO writes variable_type="dynamic" variable_shape="..." for a variable it knows nothing of
    text = accumulator(tmp_path / "acc.xml", init=True).read_text()
    path = _edited(tmp_path, text.replace('variable_type="f32" variable_shape="2,3"',
                                          'variable_type="dynamic" variable_shape="..."'), "dynamic")
    model, request = ir_runner.load(path), _request(Path(path))
    assert str(model.variables[0]) == "<Variable 'sum' dynamic[...]>" and ir_runner.validate(path).valid
    reader = next(info for info in model.inference.layers.values() if info.ref.type_version == "ReadValue-6")
    assert str(reader.outputs[0]) == "f32[2,3]"  # the init input's spec, as OpenVINO infers it
    state = model.new_state()
    for step in range(3):
        x = np.full((2, 3), step + 1, np.float32)
        assert np.array_equal(model.run({"x": x}, state=state)["total"], request.infer({"x": x})[0])


def _kept(path: Path, init: str, write: str) -> Path:
    """``y = x + v`` on f32[2] with a variable ``v``, its init input ``init`` ('none', 'constant' or 'input': 2x)
    and written with ``write`` ('none', 'read': the value its ReadValue read, or 'sum': y)."""
    x = ops.parameter([2], np.float32, name="x")
    var = variable("v", [2])
    source = {"none": None, "constant": ops.constant(np.float32([1, 2])), "input": ops.multiply(x, np.float32(2))}
    read = ops.read_value(source[init], var) if source[init] is not None else ops.read_value(var)
    y = ops.add(x, read, name="y")
    y.output(0).get_tensor().set_names({"y"})
    sinks = [] if write == "none" else [ops.assign(read if write == "read" else y, var)]
    return save(ov.Model([ops.result(y)], sinks, [x], "kept"), path)


@pytest.mark.parametrize(("init", "write", "option"), [
    ("none", "none", True), ("input", "none", True), ("constant", "read", True), ("none", "read", True),
    ("input", "read", False), ("constant", "sum", False), ("none", "sum", False)])
def test_a_variable_no_run_changes_is_an_option(tmp_path, init, write, option):
    """An option: nothing writes it, or it is written as read from a constant initial value. Written as read from
    an input, the first run's value is kept and read by the next (as OpenVINO's infer request does): state."""
    from ir_runner.state import carried

    path = _kept(tmp_path / "kept.xml", init, write)
    model = ir_runner.load(str(path))
    [found] = model.variables
    assert found.option is option and carried(model) == (() if option else (found,))
    state = model.new_state()
    request = _request(path) if write != "none" else None  # (the CPU plugin refuses a variable no Assign writes)
    value = None
    for x in map(np.float32, ([1, 2], [5, 7], [3, 3])):
        if value is None or init == "input" and write == "none":
            value = {"none": np.zeros(2, np.float32), "constant": np.float32([1, 2]), "input": 2 * x}[init]
        got = model.run({"x": x}, state=state)["y"]
        assert np.array_equal(got, x + value) and (request is None or np.array_equal(got, request.infer({"x": x})["y"]))
        assert not option or np.array_equal(got, model.run({"x": x})["y"])  # an option: each run as the first
        value = got if write == "sum" else value
