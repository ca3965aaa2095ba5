"""``ir_runner.extract``: a part of a model as a standalone IR that ir-run and OpenVINO read, computing what the
whole model computes at the same layers; constants taken along with only their bytes; errors naming what was
asked."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ir_runner
from ir_runner.ir.reader import read_ir
from tests.cli.clikit import as_json, invoke
from tests.helpers.irbuild import IRBuilder

ov = pytest.importorskip("openvino")
ROOT = Path(__file__).resolve().parent.parent
RESNET = ROOT / "models/real/resnet_block/model.xml"


def _values(model: ir_runner.Model, feeds) -> dict[tuple[str, int], np.ndarray]:
    return {(row.layer.name, row.position): np.asarray(row.value) for row in model.trace(feeds).layers}


def _feeds_for(sub: ir_runner.Model, values) -> list[np.ndarray]:
    """The whole model's values of the tensors the part's Parameters replace (named as their producers)."""
    return [values[(info.layer_name, 0)] for info in sub.inputs]


def test_a_part_computes_what_the_whole_model_computes_there(tmp_path):
    whole = ir_runner.load(RESNET)
    values = _values(whole, dict(np.load(RESNET.parent / "inputs.npz")))
    path = ir_runner.extract(RESNET, tmp_path / "sub.xml", from_=["aten::relu/Relu"], to=["aten::add/Add"])
    sub = ir_runner.load(path)
    names = {layer.name for layer in sub.graph.layers.values()}
    assert {"aten::relu/Relu", "Multiply_141181", "Multiply_141201", "aten::add/Add"} <= names
    assert "aten::relu/Relu_1" not in names and "x" not in names  # after --to, before --from
    # the two tensors read from outside: Relu's input and the Add's other branch, with their tensor names
    assert [(info.layer_name, info.names) for info in sub.inputs] == [
        ("__module.bn1/aten::batch_norm/BatchNormInference", ("44",)),
        ("__module.bn3/aten::batch_norm/BatchNormInference", ("87",))]
    assert [info.layer_name for info in sub.outputs] == ["aten::add/Add/sink_port_2"]
    (out,) = sub.run(_feeds_for(sub, values)).values()
    assert np.array_equal(out, values[("aten::add/Add", 0)])
    # its own .bin holds the weights of its layers only: the two Consts of the kept layers
    assert path.with_suffix(".bin").stat().st_size == 2304 + 64
    compiled = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    device = compiled(_feeds_for(sub, values))[0]
    assert np.allclose(device, out, rtol=1e-5, atol=1e-5)


def test_without_from_it_starts_at_the_inputs_and_without_to_it_ends_at_the_outputs(tmp_path):
    head = ir_runner.load(ir_runner.extract(RESNET, tmp_path / "head.xml", to=["aten::relu/Relu"]))
    assert [info.layer_name for info in head.inputs] == ["x"]
    tail = ir_runner.load(ir_runner.extract(RESNET, tmp_path / "tail.xml", from_=["14"]))  # an id
    assert sorted(info.name for info in tail.outputs) == ["features", "pooled"]  # the Results, themselves
    assert len(tail.inputs) == 2


def test_constants_come_along_with_their_decompression_and_packed_bytes(tmp_path):
    model = ROOT / "tests/data/llm/llama-int4/openvino_model.xml"
    name = "__module.model.layers.0.self_attn.q_proj/aten::linear/MatMul"
    path = ir_runner.extract(model, tmp_path / "q.xml", from_=[name], to=[name])
    net = read_ir(path)
    types = sorted(layer.type for layer in net.layers)
    assert types.count("Parameter") == 1 and types.count("MatMul") == 1 and types.count("Result") == 1
    weights = [layer for layer in net.layers if layer.data.get("element_type") == "u4"]
    assert len(weights) == 2  # the u4 weights and zero points, their bytes as packed in the source
    source = read_ir(model)
    by_name = {layer.name: layer for layer in source.layers}
    for layer in weights:
        original = by_name[layer.name]
        start, size = int(original.data["offset"]), int(original.data["size"])
        ours = int(layer.data["offset"])
        assert bytes(net.weights.buffer(None)[ours:ours + size]) == \
               bytes(source.weights.buffer(None)[start:start + size])
    x = np.random.default_rng(0).standard_normal((1, 3, 64)).astype(np.float32)
    sub = ir_runner.load(path)
    ours = sub.run([x])
    config = {"INFERENCE_PRECISION_HINT": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"}
    device = ov.Core().compile_model(str(path), "CPU", config)([x])[0]
    # (the f16 scales: ir-run multiplies in f16 as the IR says, the device in f32; a wrong byte is off by far more)
    assert np.allclose(device, next(iter(ours.values())), rtol=1e-3, atol=1e-3)


def _two_branches() -> IRBuilder:
    b = IRBuilder("branches")
    x = b.parameter("x", "f32", "3")
    a = b.layer("Relu", "opset1", [x], name="a")
    c = b.layer("Negative", "opset1", [x], name="c")
    b.result(b.layer("Add", "opset1", [a, c], attrs={"auto_broadcast": "numpy"}, name="sum"), "out")
    b.layer("Relu", "opset1", [x], name="twin")
    b.layer("Relu", "opset1", [x], name="twin")
    return b


@pytest.mark.parametrize("from_, to, message", [
    (["nope"], ["sum"], "--from 'nope': the model has no layer of that name or id"),
    (["a"], ["sums"], "--to 'sums': the model has no layer of that name or id"),
    (["a"], ["c"], "--to 'c' (id 2) is not reached from --from 'a' (id 1)"),
    (["sum"], ["a"], "--to 'a' (id 1) is not reached from --from 'sum' (id 3)"),
    (["sum", "a"], ["c"], "--to 'c' (id 2) is not reached from --from 'sum' (id 3), 'a' (id 1)"),
    (["twin"], [], "--from 'twin': 2 layers have that name (ids 5, 6)"),
])
def test_errors_name_what_was_asked(tmp_path, from_, to, message):
    model = ir_runner.load(*_two_branches().build())
    with pytest.raises(ir_runner.InputError) as error:
        ir_runner.extract(model, tmp_path / "x.xml", from_=from_, to=to)
    assert message in str(error.value)


def test_a_from_that_reaches_no_to_is_refused(tmp_path):
    model = ir_runner.load(*_two_branches().build())
    with pytest.raises(ir_runner.InputError, match=r"--from 'c' \(id 2\) reaches none of --to 'a' \(id 1\)"):
        ir_runner.extract(model, tmp_path / "x.xml", from_=["x", "c"], to=["a"])
    with pytest.raises(ir_runner.InputError, match="did you mean 'sum'"):
        ir_runner.extract(model, tmp_path / "x.xml", to=["summ"])


def test_cli_writes_the_part_and_exits_4_on_an_unknown_layer(tmp_path):
    result = invoke("extract", RESNET, "--from", "aten::relu/Relu,aten::relu/Relu_1", "--to", "aten::add/Add",
                    "-o", tmp_path / "sub.xml")
    assert result.exit_code == 4 and "--from 'aten::relu/Relu_1' (id 15) reaches none of --to" in result.output
    result = invoke("extract", RESNET, "--from", "aten::relu/Relu", "--to", "aten::add/Add", "-o",
                    tmp_path / "sub.xml", "--json")
    data = as_json(result)
    assert result.exit_code == 0 and data["command"] == "extract" and data["layers"] == 9
    assert [item["spec"] for item in data["inputs"]] == ["f32[?,16,1..,1..]"] * 2
    assert data["bin_bytes"] == 2368 and Path(data["bin"]).is_file()
    result = invoke("extract", RESNET, "--to", "relu", "-o", tmp_path / "x.xml")
    assert result.exit_code == 4 and "'relu': the model has no layer" in result.output
    (tmp_path / "file").write_text("")
    result = invoke("extract", RESNET, "--to", "aten::relu/Relu", "-o", tmp_path / "file" / "x.xml", debug=False)
    assert result.exit_code == 74 and "cannot write" in result.output and not list(tmp_path.glob("**/.x*"))


def _two_outputs() -> IRBuilder:
    b = IRBuilder("two")
    x = b.parameter("x", "f32", "3")
    a = b.layer("Relu", "opset1", [x], name="a")
    b.result(b.layer("Negative", "opset1", [a], name="neg"), "out_a")
    b.result(b.layer("Abs", "opset1", [x], name="c"), "out_c")
    return b


def test_without_to_it_ends_at_the_outputs_the_from_layers_reach(tmp_path):
    model = ir_runner.load(*_two_outputs().build())
    sub = ir_runner.load(ir_runner.extract(model, tmp_path / "a.xml", from_=["a"]))
    assert [info.name for info in sub.outputs] == ["out_a"]
    assert {layer.name for layer in sub.graph.layers.values()} == {"x", "a", "neg", "out_a"}
    assert np.array_equal(next(iter(sub.run([np.float32([-1, 2, -3])]).values())), [-0.0, -2, -0.0])
    b = _two_outputs()
    b.layer("Relu", "opset1", [b.layers[0]], name="dead")  # reaches no Result
    with pytest.raises(ir_runner.InputError, match=r"--from 'dead' \(id 6\) reaches none of the model's outputs"):
        ir_runner.extract(ir_runner.load(*b.build()), tmp_path / "c.xml", from_=["dead"])


def test_it_refuses_to_write_over_the_model_or_to_an_output_that_is_no_xml(tmp_path):
    source = _two_outputs().write(tmp_path)
    before = source.read_bytes(), source.with_suffix(".bin").read_bytes()
    for output in (source, tmp_path / "sub" / ".." / "model.xml", tmp_path / "model.XML"):
        with pytest.raises(ir_runner.InputError, match="would write over the model's own file"):
            ir_runner.extract(source, output, to=["a"])
    (tmp_path / "w").mkdir()
    weights = tmp_path / "w" / "part.bin"
    weights.write_bytes(source.with_suffix(".bin").read_bytes())
    with pytest.raises(ir_runner.InputError, match="would write over the model's own file"):
        ir_runner.extract(source, tmp_path / "w" / "part.xml", to=["a"], weights=weights)
    with pytest.raises(ir_runner.InputError, match="would write over the model's own file"):
        ir_runner.extract(ir_runner.load(source), source, to=["a"])  # a loaded Model: its weights file
    result = invoke("extract", source, "--to", "a", "-o", tmp_path / "part.bin")
    assert result.exit_code == 4 and "the part is written as an .xml" in result.output
    assert not (tmp_path / "part.bin").exists()
    assert (source.read_bytes(), source.with_suffix(".bin").read_bytes()) == before


def test_cli_a_missing_model_or_weights_file_is_a_bad_model_not_an_unwritable_output(tmp_path):
    result = invoke("extract", tmp_path / "nope.xml", "-o", tmp_path / "x.xml", debug=False)
    assert result.exit_code == 3 and "model file" in result.output and "cannot write" not in result.output
    (tmp_path / "lone.xml").write_bytes(Path(RESNET).read_bytes())
    result = invoke("extract", tmp_path / "lone.xml", "-o", tmp_path / "x.xml", debug=False)
    assert result.exit_code == 3 and "does not exist" in result.output and "cannot write" not in result.output


@pytest.mark.parametrize("option, value", [("--from", ""), ("--to", " , "), ("--from", ",")])
def test_cli_a_value_naming_no_layer_is_a_usage_error(tmp_path, option, value):
    """(It would mean the option's default: the whole model written under a name that asked for a part.)"""
    result = invoke("extract", RESNET, option, value, "-o", tmp_path / "x.xml", debug=False)
    assert result.exit_code == 2 and f"Invalid value for '{option}'" in result.output
    assert "names no layer" in result.output and not (tmp_path / "x.xml").exists()


def test_a_stateful_part_keeps_the_writers_of_its_variables(tmp_path):
    source = ROOT / "tests/data/llm/llama-default/openvino_model.xml"
    path = ir_runner.extract(source, tmp_path / "all.xml")
    types = [layer.type for layer in read_ir(path).layers]
    assert types.count("ReadValue") == types.count("Assign") == 4
    ov.Core().compile_model(str(path), "CPU")  # (OpenVINO refuses a ReadValue whose Assign is missing, at run)
    from ir_runner.generation import generate

    def tokens(model):
        return [step.token for step in generate(ir_runner.load(model), [3, 17, 42], 4)]

    assert tokens(path) == tokens(source)  # the part updates its KV cache as the model does


def test_a_variable_initialised_from_constants_keeps_its_writer_in_a_part_starting_after_it(tmp_path):
    b = IRBuilder("counter")
    x = b.parameter("x", "f32", "3")
    state = b.layer("ReadValue", "opset6", [b.const("init", np.float32([1, 2, 3]))], name="state",
                    attrs={"variable_id": "v", "variable_type": "f32", "variable_shape": "3"})
    total = b.layer("Add", "opset1", [x, state], attrs={"auto_broadcast": "numpy"}, name="total")
    b.layer("Assign", "opset6", [total], attrs={"variable_id": "v"}, name="keep")
    b.result(b.layer("Relu", "opset1", [total], name="relu"), "out")
    source = b.write(tmp_path)
    path = ir_runner.extract(source, tmp_path / "part.xml", from_=["total"])
    assert sorted(layer.name for layer in read_ir(path).layers) == ["init", "keep", "out", "relu", "state", "total",
                                                                    "x"]
    steps = [np.float32([-5, 1, 0]), np.float32([1, 1, 1])]
    request = ov.Core().compile_model(str(path), "CPU").create_infer_request()
    device = [request.infer([step])[0].copy() for step in steps]  # (refused without the Assign: no sibling)
    for model in (ir_runner.load(source), ir_runner.load(path)):
        state = model.new_state()
        ours = [next(iter(model.run([step], state=state).values())) for step in steps]
        assert [out.tolist() for out in ours] == [[0, 3, 3], [0, 4, 4]] == [out.tolist() for out in device]


def test_cli_an_xml_that_cannot_be_written_leaves_the_bin_as_it_was(tmp_path):
    (tmp_path / "part.xml").mkdir()  # (the .xml cannot replace a folder, the .bin could be written)
    result = invoke("extract", RESNET, "--to", "aten::relu/Relu", "-o", tmp_path / "part.xml", debug=False)
    assert result.exit_code == 74 and "cannot write" in result.output
    assert sorted(path.name for path in tmp_path.iterdir()) == ["part.xml"]
    (tmp_path / "part.bin").write_bytes(b"before")
    assert invoke("extract", RESNET, "--to", "aten::relu/Relu", "-o", tmp_path / "part.xml").exit_code == 74
    assert sorted(path.name for path in tmp_path.iterdir()) == ["part.bin", "part.xml"]
    assert (tmp_path / "part.bin").read_bytes() == b"before"
