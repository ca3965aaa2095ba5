"""crosscheck's default observation: only the layer outputs the device materialises (the boundaries of the fused
groups of its runtime graph), proven not to change what it compiles; a bisection when the proof fails; each
diverging group run alone (its own error or inherited). The verdicts agree with --every-layer's on the planted
CPU-plugin faults, and the instrumented compilations of the real networks keep their fused groups."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ir_runner
from ir_runner import device as devices
from ir_runner.observe import BISECTION, EVERY_LAYER, GROUPS
from tests.cli.clikit import as_json, invoke
from tests.helpers.cpu_features import require as require_cpu
from tests.helpers.crosscheck_models import DEEP_FAULTS, FAULTS, deep_negative_gather, negative_gather

ov = pytest.importorskip("openvino")
ROOT = Path(__file__).resolve().parent.parent
NETWORKS = sorted(path.parent.name for path in (ROOT / "models/real").glob("*/model.xml"))
ALL = {**FAULTS, **DEEP_FAULTS}


def _compiled(path: Path, outputs):
    model = ov.Core().read_model(str(path))
    nodes = {node.get_friendly_name(): node for node in model.get_ordered_ops()}
    model.add_outputs([nodes[name].output(position) for name, position in outputs])
    return model, ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})


@pytest.mark.parametrize("network", NETWORKS)
def test_the_instrumented_compilation_keeps_the_fused_groups_of_a_real_network(network):
    folder = ROOT / "models/real" / network
    feeds = dict(np.load(folder / "inputs.npz"))
    report = ir_runner.crosscheck(str(folder / "model.xml"), feeds)
    assert report.ok
    observation = report.observation
    if observation.mode == BISECTION:  # the proof failed: it says what the instrumentation changed
        assert not observation.proven and observation.difference.startswith("the instrumented compilation")
        return
    assert observation.mode == GROUPS and observation.proven and observation.difference is None
    # checked again from outside: compiled with and without the outputs crosscheck added, the runtime graphs
    # hold the same groups of IR layers with the same kernels and precisions, and the outputs the same bits
    added = sorted(observation.run.values)
    plain_model, plain = _compiled(folder / "model.xml", [])
    instrumented_model, instrumented = _compiled(folder / "model.xml", added)
    names = {op.get_friendly_name() for op in plain_model.get_ordered_ops()}
    signatures = [sorted(filter(None, (group.signature(names) for group in devices.runtime_groups(compiled))))
                  for compiled in (plain, instrumented)]
    assert signatures[0] == signatures[1]
    if network in ("resnet_block", "cnn_onnx", "vit", "bert"):  # convolutions and matmuls fused with what follows
        assert any(len(group.layers) > 1 for group in observation.groups)
    by_name = {name: port for port in plain.inputs for name in port.get_names()}
    inputs = {name: value for name, value in feeds.items() if name in by_name}
    before, after = plain(inputs), instrumented(inputs)
    for position, port in enumerate(plain.outputs):
        assert np.array_equal(np.asarray(before[port]).view(np.uint8),
                              np.asarray(after[instrumented.outputs[position]]).view(np.uint8))
    observed = [row for row in report.layers if row.status != "not observable"]
    assert 0 < len(observed) < len(report.layers)


@pytest.mark.parametrize("fault", list(ALL))
def test_the_verdict_is_the_every_layer_one(fault):
    if fault == "bf16 denormals":
        require_cpu("bf16")
    builder, feeds, faulty, _ = ALL[fault]()
    model = ir_runner.load(*builder.build())
    default = ir_runner.crosscheck(model, feeds)
    every = ir_runner.crosscheck(model, feeds, every_layer=True)
    assert every.observation.mode == EVERY_LAYER and every.first_divergence.name == faulty
    assert not default.ok and default.observation.mode in (GROUPS, BISECTION)
    group = default.groups[0]
    assert group.boundary == default.first_divergence and group.kernel and group.runtime_precision
    # the layer --every-layer names is the group's, or one it reads that the device does not show
    assert faulty in group.layers + group.upstream
    if group.own is False:
        assert faulty in group.upstream and group.alone == 0
    else:
        assert group.own is True and group.alone > 0


def test_a_graph_without_a_fault_agrees_in_both_modes():
    builder, feeds, _, _ = negative_gather("opset7", indices=(5, 0, 4, 2))
    model = ir_runner.load(*builder.build())
    report = ir_runner.crosscheck(model, feeds)
    assert report.ok and report.groups == [] and report.observation.proven
    assert ir_runner.crosscheck(model, feeds, every_layer=True).ok


def test_an_unproven_instrumentation_is_bisected(monkeypatch):
    real = devices.run_at_boundaries

    def unproven(*args, **kwargs):
        run = real(*args, **kwargs)
        run.same_groups, run.difference = False, "the instrumented compilation's groups differ: (forced)"
        return run

    monkeypatch.setattr(devices, "run_at_boundaries", unproven)
    builder, feeds, faulty, _ = deep_negative_gather()
    report = ir_runner.crosscheck(ir_runner.load(*builder.build()), feeds)
    observation = report.observation
    assert observation.mode == BISECTION and not observation.proven
    assert report.first_divergence.name == faulty
    probed = [key for key, _ in observation.probes]
    assert (faulty, 0) in probed and len(probed) <= 6  # a binary search over about a dozen boundaries
    assert [row.layer.name for row in report.layers if row.status not in ("not observable",)] == \
           sorted({name for name, _ in probed}, key=[row.layer.name for row in report.layers].index)


def test_cli_names_the_group_its_kernel_and_whether_the_error_is_its_own(tmp_path):
    builder, feeds, _, _ = deep_negative_gather()
    path = builder.write(tmp_path)
    np.savez(tmp_path / "inputs.npz", **feeds)
    result = invoke("crosscheck", path, "--input", tmp_path / "inputs.npz")
    assert result.exit_code == 1
    assert "non-intrusive: the instrumented compilation has the same fused groups" in result.stdout
    assert ("group: the output of 'pick' (Gather-7, id 34) comes from CPU kernel Gather (runtime precision f32,"
            " output f32) computing IR layer(s) 'pick': its own error: run alone on ir-run's values of its inputs,"
            " 2 of 4 elements still differ") in result.stdout
    assert "head_0 (" not in result.stdout  # not materialised: listed with --all only
    data = as_json(invoke("crosscheck", path, "--input", tmp_path / "inputs.npz", "--json"))
    assert data["mode"] == GROUPS and data["non_intrusion"] == {"proven": True, "difference": None}
    (group,) = data["groups"]
    assert group["layers"] == ["pick"] and group["own"] is True and group["kernel"] == "Gather"
    assert group["alone_mismatches"] == 2 and group["upstream"] == ["axis"]


@pytest.mark.parametrize("name", ["squeezenet", "shufflenet", "inception_v1"])
def test_a_zoo_cnn_is_observed_without_changing_its_compilation(name):
    """Measured on all 8 zoo CNNs but VGG-19 (docs/crosscheck.md); three of them here, the cache shared with
    tests/test_real_models.py."""
    pytest.importorskip("onnx", reason="the zoo CNNs need the onnx package: pip install onnx")
    from tests.helpers.zoo import zoo_ir

    xml = zoo_ir(name)
    report = ir_runner.crosscheck(str(xml), dict(np.load(xml.parent / "inputs.npz")))
    assert report.ok and report.observation.mode == GROUPS and report.observation.proven
    assert any(len(group.layers) > 1 for group in report.observation.groups)  # convolutions fused with Relu
