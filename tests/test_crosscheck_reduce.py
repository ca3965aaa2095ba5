"""``crosscheck(..., reduce=True)`` and ``ir-run crosscheck --reduce``: each CPU-plugin fault, planted inside a
larger graph, is reduced to a part of at most a few layers that OpenVINO reads and that still diverges, written
with the reference's values at the cut and the command that shows the divergence."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ir_runner
from ir_runner.errors import LayerRef
from tests.cli.clikit import as_json, invoke
from tests.helpers.cpu_features import require as require_cpu
from tests.helpers.crosscheck_models import DEEP_FAULTS, FAULTS, deep_negative_gather, negative_gather

ov = pytest.importorskip("openvino")
ALL = {**FAULTS, **DEEP_FAULTS}


@pytest.mark.parametrize("fault", list(ALL))
def test_the_reduced_part_is_small_openvino_reads_it_and_it_still_diverges(tmp_path, fault):
    if fault == "bf16 denormals":
        require_cpu("bf16")
    builder, feeds, faulty, _ = ALL[fault]()
    model = ir_runner.load(*builder.build())
    report = ir_runner.crosscheck(model, feeds, reduce=True, output=tmp_path / "repro")
    reduction = report.reduction
    assert reduction.directory == tmp_path / "repro" and len(reduction.layers) <= 4
    # the faulty layer is in the part, or it is the unmaterialised layer upstream of the diverging group whose
    # error the device shows inside that group even alone (the +-inf to f64 Convert moved into the Gather's input)
    assert faulty in reduction.layers or faulty in report.groups[0].upstream
    files = sorted(path.name for path in reduction.directory.iterdir())
    assert files == ["README.md", "inputs.npz", "model.bin", "model.xml"]
    xml = reduction.directory / "model.xml"
    part = ov.Core().read_model(str(xml))
    computed = [op for op in part.get_ordered_ops() if op.get_type_name() not in ("Parameter", "Constant", "Result")]
    assert len(computed) <= 3 and len(part.get_ordered_ops()) <= 8
    assert len(part.get_ordered_ops()) < len(model.graph.layers)
    again = ir_runner.crosscheck(str(xml), dict(np.load(reduction.directory / "inputs.npz")))
    assert not again.ok and again.first_divergence.name in reduction.layers
    readme = (reduction.directory / "README.md").read_text()
    assert "    ir-run crosscheck model.xml --input inputs.npz --device CPU --precision f32\n" in readme
    assert reduction.command in readme and f"'{again.first_divergence.name}'" in readme


def test_the_inputs_are_the_reference_values_at_the_cut(tmp_path):
    builder, feeds, _, _ = deep_negative_gather()
    model = ir_runner.load(*builder.build())
    report = ir_runner.crosscheck(model, feeds, reduce=True, output=tmp_path)
    values = {(row.layer.name, row.position): np.asarray(row.value) for row in model.trace(feeds).layers}
    with np.load(tmp_path / "inputs.npz") as saved:
        part = ir_runner.load(tmp_path / "model.xml")
        # the Gather's data and indices, as ir-run computed them 12 and 6 layers after the model's inputs
        assert [info.layer_name for info in part.inputs] == ["head_11", "to_index"]
        for info in part.inputs:
            assert np.array_equal(saved[info.name], values[(info.layer_name, 0)])
    assert report.reduction.probes == 1


def test_nothing_is_written_when_nothing_diverges(tmp_path):
    builder, feeds, _, _ = negative_gather("opset7", indices=(5, 0, 4, 2))
    report = ir_runner.crosscheck(ir_runner.load(*builder.build()), feeds, reduce=True, output=tmp_path / "repro")
    assert report.ok and report.reduction is None and not (tmp_path / "repro").exists()


def test_cli_reduce_writes_the_folder_and_its_command_shows_the_divergence(tmp_path):
    builder, feeds, _, _ = deep_negative_gather()
    path = builder.write(tmp_path)
    np.savez(tmp_path / "inputs.npz", **feeds)
    repro = tmp_path / "repro"
    result = invoke("crosscheck", path, "--input", tmp_path / "inputs.npz", "--reduce", "-o", repro)
    assert result.exit_code == 1
    assert f"reduced: {repro}/model.xml, 2 layer(s) of the model (axis, pick) still diverge;" in result.stdout
    data = as_json(invoke("crosscheck", path, "--input", tmp_path / "inputs.npz", "--reduce", "-o", repro, "--json"))
    assert data["reduction"]["layers"] == ["axis", "pick"] and data["reduction"]["first_divergence"]["layer"] == "pick"
    shown = invoke("crosscheck", repro / "model.xml", "--input", repro / "inputs.npz")
    assert shown.exit_code == 1 and "first divergence: layer 'pick' (Gather-7" in shown.stdout


class _Part:
    """A crosscheck report of a part, as a device that fails only when layers 'head_9' and 'head_11' run
    together would give it (the reduction's growth, without such a device)."""

    def __init__(self, part, feeds, **options):
        names = {layer.name for layer in part.graph.layers.values() if layer not in part.graph.parameters}
        self.ok = not {"head_9", "head_11"} <= names
        layer = next(layer for layer in part.graph.layers.values() if layer.name == "head_11")
        self.first = None if self.ok else type("Row", (), {
            "layer": LayerRef(layer.name, "Maximum-1", layer.id), "mismatches": 1, "size": 6,
            "worst_index": (0,), "ours": 10.0, "device": 11.0})()
        self.device, self.precision, self.openvino_version = "CPU", "f32", "2026.4.1"


def _diverging_at_head_11():
    """deep_negative_gather's model, its traced values, and a report whose first divergence is head_11."""
    builder, feeds, _, _ = deep_negative_gather()
    model = ir_runner.load(*builder.build())
    values = {(row.layer.id, row.position): row.value for row in model.trace(feeds).layers}
    ids = {layer.name: layer_id for layer_id, layer in model.graph.layers.items()}
    report = type("Report", (), {"first": type("Row", (), {
        "layer": LayerRef("head_11", "Maximum-1", ids["head_11"]), "position": 0})()})()
    return model, values, report


def test_the_part_grows_backwards_until_it_diverges_or_reaches_the_inputs(tmp_path):
    from ir_runner.divergence import DEFAULT_TOLERANCES
    from ir_runner.reduce import reduce_divergence

    model, values, report = _diverging_at_head_11()
    options = {"device": "CPU", "precision": "f32", "default_tolerance": DEFAULT_TOLERANCES["f32"]}
    found = reduce_divergence(model, report, values, tmp_path / "grown", [], _Part, **options)
    # head_11 = Maximum(head_10, head_10), head_10 = Multiply(head_9, 1), head_9 = Add(head_8, 0): two levels up
    assert found.probes == 3 and sorted(found.layers) == ["head_10", "head_11", "head_9", "head_k10", "head_k9"]
    assert [info.layer_name for info in ir_runner.load(tmp_path / "grown" / "model.xml").inputs] == ["head_8"]

    def never(part, feeds, **options):
        return type("Report", (), {"ok": True})()

    missing = reduce_divergence(model, report, values, tmp_path / "none", [], never, **options)
    assert missing.directory is None and missing.probes == 12 and not (tmp_path / "none").exists()
    assert missing.reason.startswith("no part of the model ending at layer 'head_11'")


def test_the_printed_command_shows_the_divergence_from_any_folder(tmp_path, monkeypatch):
    builder, feeds, _, _ = negative_gather()
    path = builder.write(tmp_path)
    np.savez(tmp_path / "inputs.npz", **feeds)
    monkeypatch.chdir(tmp_path)
    result = invoke("crosscheck", path, "--input", "inputs.npz", "--reduce", "-o", "my repro")  # (relative)
    line = next(line for line in result.stdout.splitlines() if line.startswith("reduced:"))
    command = line.split("; shown by: ", 1)[1]
    assert "In this folder," in (tmp_path / "my repro" / "README.md").read_text()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    shown = subprocess.run(command, shell=True, cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 1, shown.stdout + shown.stderr
    assert "first divergence: layer 'pick' (Gather-7" in shown.stdout


def test_a_reduction_never_writes_over_the_model_or_its_inputs(tmp_path):
    builder, feeds, _, _ = negative_gather()
    path = builder.write(tmp_path)
    np.savez(tmp_path / "inputs.npz", **feeds)
    before = {name: (tmp_path / name).read_bytes() for name in ("model.xml", "model.bin", "inputs.npz")}
    with pytest.raises(ir_runner.InputError, match="would write over"):
        ir_runner.crosscheck(path, feeds, reduce=True, output=tmp_path)
    with pytest.raises(ir_runner.InputError, match="would write over"):
        ir_runner.crosscheck(ir_runner.load(path), feeds, reduce=True, output=tmp_path / "sub" / "..")
    result = invoke("crosscheck", path, "--input", tmp_path / "inputs.npz", "--reduce", "-o", tmp_path)
    assert result.exit_code == 4 and "would write over" in result.output
    (tmp_path / "other").mkdir()
    np.savez(tmp_path / "other" / "inputs.npz", **feeds)
    for token in (f"x={tmp_path / 'other' / 'inputs.npz'}", f"x={tmp_path / 'other' / 'inputs.npz'}:x"):
        result = invoke("crosscheck", path, "--input", token, "--input", tmp_path / "inputs.npz", "--reduce", "-o",
                        tmp_path / "other")
        assert result.exit_code == 4 and "would write over" in result.output
    assert {name: (tmp_path / name).read_bytes() for name in before} == before
    assert sorted(path.name for path in (tmp_path / "other").iterdir()) == ["inputs.npz"]


def test_the_command_gives_the_tolerance_the_part_was_checked_with_to_the_last_digit(tmp_path):
    from ir_runner.divergence import DEFAULT_TOLERANCES, Tolerance
    from ir_runner.reduce import reduce_divergence

    model, values, report = _diverging_at_head_11()
    found = reduce_divergence(model, report, values, tmp_path, [], _Part, device="CPU", precision="f16",
                              tolerance=Tolerance(1.23456789e-3, 2e-3, 3), default_tolerance=DEFAULT_TOLERANCES["f16"])
    assert found.command.endswith("--precision f16 --atol 0.00123456789 --ulp 3")


def test_an_input_of_the_part_may_have_any_name(tmp_path):
    builder, feeds, _, _ = negative_gather()
    xml = builder.xml().replace(b'name="to_float"', b'name="file"')  # (np.savez(file=...) clashes)
    report = ir_runner.crosscheck(ir_runner.load(xml, builder.bin), feeds, reduce=True, output=tmp_path / "repro")
    assert report.reduction.directory is not None
    with np.load(tmp_path / "repro" / "inputs.npz") as saved:
        assert sorted(saved.files) == ["file", "idx"]
        assert saved["file"].tolist() == [10, 20, 30, 40, 50, 60]
    assert sorted(path.name for path in (tmp_path / "repro").iterdir()) == ["README.md", "inputs.npz", "model.bin",
                                                                           "model.xml"]


# -- stateful models ------------------------------------------------------------------------------------------

def _stateful_gather(constant_init: bool = False):
    """A variable initialised from x (through 3 layers; or a Const of x's values) read by a Gather of negative
    indices (0 on CPU), and written back as state + x: the divergence reads the variable."""
    from tests.helpers.crosscheck_models import _chain
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder("stateful_gather")
    x, idx = b.parameter("x", "f32", "6"), b.parameter("idx", "i32", "4")
    init = b.const("init", np.arange(10, 70, 10, dtype=np.float32)) if constant_init else _chain(b, x, 6, 3, "head")
    state = b.layer("ReadValue", "opset6", [init], name="state",
                    attrs={"variable_id": "v", "variable_type": "f32", "variable_shape": "6"})
    pick = b.layer("Gather", "opset7", [state, idx, b.const("axis", np.array(0, np.int64))],
                   attrs={"batch_dims": 0}, out_specs=[("FP32", [4])], name="pick")
    total = b.layer("Add", "opset1", [state, x], attrs={"auto_broadcast": "numpy"}, name="total")
    b.layer("Assign", "opset6", [total], attrs={"variable_id": "v"}, name="store")
    b.result(_chain(b, pick, 4, 3, "tail"), "out")
    return b, {"x": np.arange(10, 70, 10, dtype=np.float32), "idx": np.array([-1, 0, -2, 2], np.int32)}


def _stateful_denormals():
    """A variable initialised from a Const of denormals (flushed to +0.0 by the CPU plugin): the first divergence
    is the variable's read itself, whose part must keep its reader, its init and its writer."""
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder("stateful_denormals")
    cond, x = b.parameter("cond", "boolean", "4"), b.parameter("x", "f32", "4")
    state = b.layer("ReadValue", "opset6", [b.const("weights", np.array([1e-40, -0.0, 1.0, -1e-40], np.float32))],
                    name="state", attrs={"variable_id": "v", "variable_type": "f32", "variable_shape": "4"})
    choose = b.layer("Select", "opset1", [cond, state, x], attrs={"auto_broadcast": "numpy"},
                     out_specs=[("FP32", [4])], name="choose")
    b.layer("Assign", "opset6", [choose], attrs={"variable_id": "v"}, name="store")
    b.result(b.convert(choose, "f64", name="widen"), "out")
    return b, {"cond": np.ones(4, bool), "x": np.zeros(4, np.float32)}


def test_a_stateful_model_reduces_with_the_value_read_from_its_variable_as_an_input(tmp_path):
    builder, feeds = _stateful_gather()
    model = ir_runner.load(*builder.build())
    reduction = ir_runner.crosscheck(model, feeds, reduce=True, output=tmp_path / "repro").reduction
    assert reduction.layers == ["axis", "pick"]
    part = ir_runner.load(tmp_path / "repro" / "model.xml")
    assert not part.variables and [info.layer_name for info in part.inputs] == ["idx", "state"]
    read = next(row.value for row in model.trace(feeds).layers if row.layer.name == "state")
    with np.load(tmp_path / "repro" / "inputs.npz") as saved:
        assert saved["state"].tolist() == read.tolist() == [10, 20, 30, 40, 50, 60]
        again = ir_runner.crosscheck(part, dict(saved))
    assert again.first_divergence.name == "pick"
    assert "read from the variable(s) 'v' are inputs of the part" in (tmp_path / "repro" / "README.md").read_text()


def test_a_part_that_reads_a_variable_keeps_its_init_and_writer_and_starts_from_its_initial_value(tmp_path):
    builder, feeds = _stateful_denormals()
    report = ir_runner.crosscheck(ir_runner.load(*builder.build()), feeds, reduce=True, output=tmp_path)
    assert report.first_divergence.name == "state"
    assert report.reduction.layers == ["weights", "state", "store"] and report.reduction.probes == 1
    types = sorted(op.get_type_name() for op in ov.Core().read_model(str(tmp_path / "model.xml")).get_ordered_ops())
    assert types == ["Assign", "Constant", "Parameter", "ReadValue", "Result"]
    ov.Core().compile_model(str(tmp_path / "model.xml"), "CPU")  # (OpenVINO refuses a ReadValue without its Assign)
    part = ir_runner.load(tmp_path / "model.xml")
    assert [variable.id for variable in part.variables] == ["v"]
    again = ir_runner.crosscheck(part, dict(np.load(tmp_path / "inputs.npz")))
    assert again.first_divergence.name == "state"
    assert "keeps the variable(s) 'v' with their readers and writer" in (tmp_path / "README.md").read_text()


def test_a_state_advanced_before_the_run_is_cut_at_its_reads_or_named_as_the_reason(tmp_path):
    """A part's command starts from the variables' initial values: a variable set before the run is an input of the
    part (its value as the run read it); a divergence at its read itself is not reduced, and the reason says so."""
    builder, feeds = _stateful_gather(constant_init=True)
    model = ir_runner.load(*builder.build())
    fresh = ir_runner.crosscheck(model, feeds, reduce=True, output=tmp_path / "fresh").reduction
    assert sorted(fresh.layers) == ["axis", "init", "pick", "state", "store"]  # (the read is computed from constants)
    state = model.new_state()
    model.run(feeds, state=state)  # v = init + x = 2 * x
    reduction = ir_runner.crosscheck(model, feeds, state=state, reduce=True, output=tmp_path / "gather").reduction
    assert reduction.layers == ["axis", "pick"]
    assert not ir_runner.load(tmp_path / "gather" / "model.xml").variables
    with np.load(tmp_path / "gather" / "inputs.npz") as saved:
        assert saved["state"].tolist() == [20, 40, 60, 80, 100, 120]
    builder, feeds = _stateful_denormals()
    model = ir_runner.load(*builder.build())
    state = model.new_state()
    model.run(feeds, state=state)
    report = ir_runner.crosscheck(model, feeds, state=state, reduce=True, output=tmp_path / "denormals")
    assert report.first_divergence.name == "state" and report.reduction.directory is None
    assert report.reduction.reason.startswith("the first divergence, layer 'state' (ReadValue-6, id")
    assert "held a value before the run" in report.reduction.reason and not (tmp_path / "denormals").exists()


def test_cli_reduce_of_a_stateful_model_writes_a_part_its_command_shows_diverging(tmp_path):
    builder, feeds = _stateful_denormals()
    path = builder.write(tmp_path)
    np.savez(tmp_path / "inputs.npz", **feeds)
    repro = tmp_path / "repro"
    result = invoke("crosscheck", path, "--input", tmp_path / "inputs.npz", "--reduce", "-o", repro)
    assert result.exit_code == 1, result.output
    assert f"reduced: {repro}/model.xml, 3 layer(s) of the model (weights, state, store) still diverge" in result.stdout
    shown = invoke("crosscheck", repro / "model.xml", "--input", repro / "inputs.npz")
    assert shown.exit_code == 1 and "first divergence: layer 'state' (ReadValue-6" in shown.stdout


def test_a_part_fed_an_empty_kv_cache_declares_its_zero_dim_dynamic(tmp_path):
    """A decoder's first step reads its KV cache empty and reorders it with a Gather (beam_idx): a part cut there
    is fed the empty cache. Declared with a static zero-sized dim, OpenVINO's CPU plugin kills the process
    compiling it (SIGFPE: the whole crosscheck --reduce died on gpt2-default under bf16); declared dynamic, it
    compiles and agrees."""
    from ir_runner.parts import cut_of, sub_ir
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder("empty_cache")
    x, beam = b.parameter("x", "f32", "1,2"), b.parameter("beam_idx", "i32", "1")
    cache = b.layer("ReadValue", "opset6", [], name="cache",
                    attrs={"variable_id": "kv", "variable_type": "f32", "variable_shape": "1,?"},
                    out_specs=[("FP32", [1, -1])])
    reordered = b.layer("Gather", "opset8", [cache, beam, b.const("axis", np.array(0, np.int64))],
                        attrs={"batch_dims": 0}, out_specs=[("FP32", [1, -1])], name="reorder")
    grown = b.layer("Concat", "opset1", [reordered, x], attrs={"axis": 1}, out_specs=[("FP32", [1, -1])],
                    name="grow")
    b.layer("Assign", "opset6", [grown], attrs={"variable_id": "kv"}, name="store")
    b.result(grown, "out")
    model = ir_runner.load(*b.build())
    feeds = {"x": np.float32([[1, 2]]), "beam_idx": np.int32([0])}
    values = {(row.layer.id, row.position): row.value for row in model.trace(feeds).layers}
    ids = {layer.name: layer_id for layer_id, layer in model.graph.layers.items()}
    assert values[(ids["cache"], 0)].shape == (1, 0)
    cut = cut_of(model, {ids["reorder"]}, [(ids["reorder"], 0)], values, fed={ids["cache"]})
    xml, weights = sub_ir(model, cut)
    (tmp_path / "part.xml").write_bytes(xml)
    (tmp_path / "part.bin").write_bytes(weights)
    compiled = subprocess.run([sys.executable, "-c", "import sys, openvino as ov;"
                               " ov.Core().compile_model(sys.argv[1], 'CPU')", str(tmp_path / "part.xml")],
                              capture_output=True, timeout=120)
    assert compiled.returncode == 0, compiled.stderr.decode()[-400:]
    part = ir_runner.load(xml, weights)
    assert [str(info.partial_shape) for info in part.inputs] == ["[1]", "[1,?]"]
    fed = [np.asarray(values[slot]) for slot in cut.inputs]
    assert ir_runner.crosscheck(part, fed).ok
