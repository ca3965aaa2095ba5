"""The viewer's adapter and overlays (ir_runner/view): Model Explorer graph JSON that keeps every layer, edge and
port of the IR, groups, folded Consts, decompression units, bodies, variables; node data of validate,
crosscheck, bench and precision; ``ir-run view --export`` and the error without the extra. The browser tests are in
tests/test_view_browser.py."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from ir_runner.graph import build_graph, read_graph
from ir_runner.report import analyse, inspect_data, validation_data
from ir_runner.view.graph_json import decompression_units, model_graphs, node_namespace
from ir_runner.view.overlays import (
    FIRST,
    RED,
    bench_overlays,
    crosscheck_overlays,
    node_ids,
    precision_overlays,
    validation_overlay,
)
from tests.cli.clikit import invoke
from tests.conftest import MODELS
from tests.helpers import view_models
from tests.helpers.loops import write_nested_loops

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
REAL = sorted(p.parent.name for p in (MODELS / "real").glob("*/model.xml"))


def attrs(items: list[dict]) -> dict[str, object]:
    return {item["key"]: item["value"] for item in items}


def read_back(graph: dict) -> tuple[set, set, dict]:
    """The layers, edges and ports a graph's JSON describes: (layer ids, edges as (from layer, from position,
    to layer, to position), ports as layer id -> (input port ids, output port ids))."""
    layers, edges, ports = set(), set(), {}
    for node in graph["nodes"]:
        layers.add(node["id"])
        inputs = [attrs(item["attrs"]) for item in sorted(node["inputsMetadata"], key=lambda i: int(i["id"]))]
        outputs = [attrs(item["attrs"]) for item in sorted(node["outputsMetadata"], key=lambda i: int(i["id"]))]
        ports[node["id"]] = ([i["port id"] for i in inputs], [o["port id"] for o in outputs])
        for edge in node["incomingEdges"]:
            edges.add((edge["sourceNodeId"], int(edge["sourceNodeOutputId"]), node["id"],
                       int(edge["targetNodeInputId"])))
        for position, meta in enumerate(inputs):
            if "constant layer id" in meta:
                const = meta["constant layer id"]
                layers.add(const)
                edges.add((const, 0, node["id"], position))
                ports[const] = ([], [meta["constant port id"]])
    return layers, edges, ports


def described(graph) -> tuple[set, set, dict]:
    """What read_back should find: the IR graph's layers, edges and ports."""
    edges = {(source, position_out, layer_id, position) for layer_id, sources in graph.sources.items()
             for position, (source, position_out) in enumerate(sources)}
    ports = {lid: ([p.id for p in layer.inputs], [p.id for p in layer.outputs]) for lid, layer in graph.layers.items()}
    return set(graph.layers), edges, ports


@pytest.mark.parametrize("name", REAL)
def test_every_layer_edge_and_port_round_trips(name: str) -> None:
    path = MODELS / "real" / name / "model.xml"
    graph = read_graph(str(path))
    analysis = analyse(str(path))
    graphs = model_graphs(analysis)
    assert read_back(graphs["graphs"][0]) == described(graph)
    json.dumps(graphs, allow_nan=False)  # what the viewer reads: plain JSON
    # each node: its type-version, the attributes as written, both specs of every port and the check
    entries = {layer["id"]: layer for layer in inspect_data(analysis)["layers"]}
    for node in graphs["graphs"][0]["nodes"]:
        entry, layer = entries[node["id"]], graph.layers[node["id"]]
        shown = attrs(node["attrs"])
        assert shown["layer type"] == entry["type"] and shown["layer name"] == layer.name
        assert all(shown[key] == value for key, value in layer.data.items())
        for item, port in zip(sorted(node["outputsMetadata"], key=lambda i: int(i["id"])), entry["outputs"]):
            meta = attrs(item["attrs"])
            assert (meta["inferred"], meta["check"]) == (port["inferred"], "ok" if port["ok"] else "MISMATCH")
            assert meta["declared"] == port["declared"]


def test_a_large_transformer_opens_as_a_few_collapsed_groups(tmp_path: Path) -> None:
    path = view_models.transformer(tmp_path)
    analysis = analyse(str(path))
    assert len(analysis.graph.layers) > 1000
    nodes = model_graphs(analysis)["graphs"][0]["nodes"]
    top = {node["namespace"].split("/")[0] for node in nodes}
    assert top == {"", "encoder"}  # the root shows the input, the output and one group
    assert sum(1 for node in nodes if not node["namespace"]) == 2
    spaces = {node["namespace"] for node in nodes}
    assert "encoder/layer.47/attention/self/query/aten::linear" in spaces


@pytest.mark.parametrize(("name", "namespace"), [
    ("__module.encoder.layer.0.attention.self/aten::matmul/MatMul", "encoder/layer.0/attention/self/aten::matmul"),
    ("__module.model.layers.11/aten::add/Add", "model/layers.11/aten::add"),
    ("Constant_20916", ""),
    ("self.model.embed/fq_weights_0/convert", "self.model.embed/fq_weights_0"),
    ("a//b", "a"),
])
def test_namespaces_come_from_module_prefixes(name: str, namespace: str) -> None:
    assert node_namespace(name) == namespace


def test_a_decompression_subgraph_is_one_group_and_its_consts_are_folded(tmp_path: Path) -> None:
    analysis = analyse(str(view_models.compressed_matmul(tmp_path)))
    graphs = model_graphs(analysis)
    nodes = {attrs(n["attrs"])["layer name"]: n for n in graphs["graphs"][0]["nodes"]}
    unit = {name: node["namespace"] for name, node in nodes.items() if name.startswith("w/")}
    assert set(unit) == {"w/convert", "w/subtract", "w/multiply", "w/to_f32"}  # the Consts are folded
    assert len(set(unit.values())) == 1 and next(iter(unit.values())).startswith("w/decompression")
    assert nodes["__module.head/aten::linear/MatMul"]["namespace"] == "head/aten::linear"
    assert set(decompression_units(analysis).values()) == {nodes["w/to_f32"]["id"]}
    folded = attrs(nodes["w/convert"]["attrs"])["input 0: constant"]
    assert folded.startswith("u8[4,3]: [0, 1, 2, 3, 4, 5, 6, 7, ...] (w/u8, id ")
    info = graphs["graphs"][0]["groupNodeAttributes"]
    assert info[""]["decompression subgraphs"] == "1"
    assert info[next(iter(unit.values()))]["decompression subgraph"] == "computes f32[4,3] from constants"


def test_bodies_are_subgraphs_of_their_owner(tmp_path: Path) -> None:
    path = write_nested_loops(2, tmp_path / "loops.xml")
    graphs = model_graphs(analyse(str(path)))["graphs"]
    by_id = {graph["id"]: graph for graph in graphs}
    owners = [node for node in graphs[0]["nodes"] if node["subgraphIds"]]
    assert len(owners) == 1 and len(graphs) == 3
    body = by_id[owners[0]["subgraphIds"][0]]
    inner = [node for node in body["nodes"] if node["subgraphIds"]]
    assert len(inner) == 1 and inner[0]["subgraphIds"][0] in by_id
    assert inner[0]["subgraphIds"][0].startswith(body["id"] + " > ")
    outer = read_graph(str(path)).layers[owners[0]["id"]]
    assert read_back(body) == described(build_graph(outer.bodies["body"]))  # Consts folded, nothing lost
    inner_record = build_graph(outer.bodies["body"]).layers[inner[0]["id"]]
    assert read_back(by_id[inner[0]["subgraphIds"][0]]) == described(build_graph(inner_record.bodies["body"]))
    for graph in graphs[1:]:  # body ports: declared and inferred (for the owner's inputs)
        for node in graph["nodes"]:
            for item in node["outputsMetadata"]:
                meta = attrs(item["attrs"])
                assert meta["declared"] == "FP32[2,3]" and (meta["inferred"], meta["check"]) == ("f32[2,3]", "ok")


def test_variable_readers_and_writers_are_linked() -> None:
    path = Path(__file__).parent / "data" / "llm" / "gpt2-default" / "openvino_model.xml"
    graphs = model_graphs(analyse(str(path)))
    main = graphs["graphs"][0]
    linked = [attrs(node["attrs"]) for node in main["nodes"] if "variable" in attrs(node["attrs"])]
    variables = {item["variable"] for item in linked}
    assert len(variables) >= 2 and len(linked) == 2 * len(variables)  # one reader and one writer each
    ids = {node["id"] for node in main["nodes"]}
    for item in linked:
        assert set(item["variable layers"]["nodeIds"]) <= ids and len(item["variable layers"]["nodeIds"]) == 1
    overlays = main["tasksData"]["edgeOverlaysDataListLeftPane"][0]["overlays"]
    assert {overlay["edges"][0]["label"] for overlay in overlays} == variables


def test_validation_overlay_marks_the_mismatching_layer(tmp_path: Path) -> None:
    analysis = analyse(str(view_models.planted_mismatch(tmp_path)))
    graphs = model_graphs(analysis)
    overlay = validation_overlay(validation_data(analysis), graphs)
    results = overlay.data["main"]["results"]
    planted = next(n["id"] for n in graphs["graphs"][0]["nodes"]
                   if attrs(n["attrs"])["layer name"] == view_models.MISMATCH_LAYER)
    assert results[planted] == {"value": "mismatch: out 0", "bgColor": RED}
    assert all(r["value"] == "ok" for node, r in results.items() if node != planted)
    assert "red: mismatch" in overlay.legend


def test_crosscheck_overlay_pins_the_first_divergence(tmp_path: Path) -> None:
    pytest.importorskip("openvino")
    import ir_runner
    from ir_runner.divergence import report_data
    from tests.helpers.crosscheck_models import negative_gather

    builder, feeds, faulty, after = negative_gather()
    path = builder.write(tmp_path, "fault")
    # every layer observed: the layers after the fault are inherited (by default the device's fused groups
    # leave them not observable)
    result = report_data(ir_runner.crosscheck(ir_runner.load(str(path)), feeds, "CPU", every_layer=True))
    graphs = model_graphs(analyse(str(path)))
    error, status = crosscheck_overlays(result, graphs)
    where = node_ids(graphs)
    names = {n["id"]: attrs(n["attrs"])["layer name"] for n in graphs["graphs"][0]["nodes"]}
    first = where[result["first_divergence"]["id"]]
    assert names[first] == faulty
    assert status.data["main"]["results"][first]["bgColor"] == FIRST
    assert error.data["main"]["results"][first]["value"] > -99
    inherited = {names[n] for n, r in status.data["main"]["results"].items() if r["value"] == "inherited"}
    assert inherited == set(after)
    assert all(r["value"] == "agree" for n, r in status.data["main"]["results"].items()
               if names[n] not in {faulty, *after})


def test_bench_overlay_shares_add_up() -> None:
    graphs = model_graphs(analyse(str(MODELS / "select_gather.xml")))
    computed = [n["id"] for n in graphs["graphs"][0]["nodes"] if n["incomingEdges"]]
    rows = [{"id": lid, "mean_ms": 0.5 * (i + 1), "percent": 100 / len(computed)} for i, lid in enumerate(computed)]
    times, shares = bench_overlays(rows, graphs)
    assert set(times.data["main"]["results"]) == set(computed)
    assert sum(r["value"] for r in shares.data["main"]["results"].values()) == pytest.approx(100, abs=0.05)
    assert times.data["main"]["gradient"][0]["stop"] == 0


def test_export_writes_graph_and_overlays_without_the_viewer(tmp_path: Path) -> None:
    model = view_models.planted_mismatch(tmp_path)
    result = invoke("view", model, "--overlay", "validate", "--export", tmp_path / "out")
    assert result.exit_code == 0, result.output
    written = result.output.split()
    assert [Path(p).name for p in written] == ["graph.json", "overlay-validate.json"]
    graphs = json.loads(Path(written[0]).read_text())
    overlay = json.loads(Path(written[1]).read_text())
    assert set(overlay) == {"main"} and "mismatch: out 0" in {r["value"] for r in overlay["main"]["results"].values()}
    assert graphs["label"] == "mismatch.xml"  # a graph collection: Model Explorer's JSON adapter reads it as is
    assert "legend: validate" in graphs["graphs"][0]["groupNodeAttributes"][""]


def test_without_the_extra_one_error_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "model_explorer"
                        else real(name, *a))
    for args in (["view", MODELS / "select_gather.xml"],
                 ["crosscheck", MODELS / "select_gather.xml", "--input", MODELS / "select_gather.inputs.npz",
                  "--view"],
                 ["bench", MODELS / "select_gather.xml", "--per-layer", "--view", "-n", "1"],
                 ["precision", MODELS / "select_gather.xml", "--input", MODELS / "select_gather.inputs.npz",
                  "--view"],
                 ["view", MODELS / "select_gather.xml", "--overlay", "precision"]):
        result = invoke(*args, debug=False)
        assert result.exit_code == 5, result.output
        assert "pip install 'ir-run[view]'" in result.output and "Traceback" not in result.output
        assert "ImportError" not in result.output and "latency" not in result.output  # refused before the work
        assert "float layer outputs" not in result.output



def test_exports_need_no_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """--export writes files and serves nothing: with --view on crosscheck, bench and precision too, it runs
    without the view extra."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "model_explorer"
                        else real(name, *a))
    model, inputs = MODELS / "select_gather.xml", MODELS / "select_gather.inputs.npz"
    for command, extra in (("crosscheck", ["--input", inputs]), ("bench", ["--per-layer", "-n", "1"]),
                           ("precision", ["--input", inputs])):
        folder = tmp_path / command
        result = invoke(command, model, *extra, "--view", "--export", folder, debug=False)
        assert result.exit_code in (0, 1), result.output
        assert (folder / "graph.json").exists() and "pip install" not in result.output

def test_view_options_need_view() -> None:
    result = invoke("bench", MODELS / "select_gather.xml", "--no-browser", debug=False)
    assert result.exit_code == 2 and "--port, --no-browser and --export go with --view" in result.output
    result = invoke("bench", MODELS / "select_gather.xml", "--view", debug=False)
    assert result.exit_code == 2 and "--per-layer" in result.output


def test_view_of_a_missing_model_is_exit_3(tmp_path: Path) -> None:
    result = invoke("view", tmp_path / "none.xml", "--export", tmp_path, debug=False)
    assert result.exit_code == 3, result.output
    assert "none.xml" in result.output and not (tmp_path / "graph.json").exists()


def test_model_explorers_own_command_line_reads_an_ir_through_the_adapter_extension() -> None:
    pytest.importorskip("model_explorer", reason="the view extra is not installed (pip install 'ir-run[view]')")
    from model_explorer.extension_manager import ExtensionManager

    manager = ExtensionManager(["ir_runner.view"])  # what `model-explorer m.xml --extensions=ir_runner.view` loads
    manager.load_extensions()
    adapter = next(e for e in manager.get_extensions_metadata() if e["id"] == "ir_run_openvino_ir")
    assert adapter["fileExts"] == ["xml"] and adapter["type"] == "adapter"
    path = Path(__file__).parent / "data" / "llm" / "gpt2-default" / "openvino_model.xml"
    got = manager.run_cmd({"extensionId": "ir_run_openvino_ir", "cmdId": "convert", "modelPath": str(path),
                           "settings": {}, "deleteAfterConversion": False})
    ours = model_graphs(analyse(str(path)))
    assert [g["id"] for g in got["graphs"]] == [g["id"] for g in ours["graphs"]]
    for mine, theirs in zip(ours["graphs"][0]["nodes"], got["graphs"][0]["nodes"]):
        assert {k: theirs[k] for k in mine} == mine  # Model Explorer adds only its defaults (style, config)
    overlays = got["graphs"][0]["tasksData"]["edgeOverlaysDataListLeftPane"][0]["overlays"]
    assert len(overlays) == len(ours["graphs"][0]["tasksData"]["edgeOverlaysDataListLeftPane"][0]["overlays"]) > 0


def test_validation_overlay_marks_unsupported_layers_grey(tmp_path: Path) -> None:
    from ir_runner.view.overlays import GREY
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder("unknown")
    x = b.parameter("x", "f32", "4")
    odd = b.layer("Frobnicate", "opset1", [x], out_specs=[("FP32", [4])], name="odd")
    b.result(b.layer("Relu", "opset1", [odd], name="relu"), "out")
    analysis = analyse(str(b.write(tmp_path, "unknown")))
    graphs = model_graphs(analysis)
    results = validation_overlay(validation_data(analysis), graphs).data["main"]["results"]
    names = {n["id"]: attrs(n["attrs"])["layer name"] for n in graphs["graphs"][0]["nodes"]}
    marked = {names[node]: (r["value"], r["bgColor"]) for node, r in results.items()}
    assert marked["odd"] == ("unsupported: Frobnicate opset1", GREY)
    assert marked["relu"] == ("ok", "#e8f5e9")
    node = next(n for n in graphs["graphs"][0]["nodes"] if n["id"] in names and names[n["id"]] == "odd")
    assert attrs(node["attrs"])["supported"].startswith("no")


@pytest.mark.parametrize("command", ["crosscheck", "bench"])
def test_crosscheck_and_bench_view_their_own_run(command: str, tmp_path: Path) -> None:
    if command == "crosscheck":
        pytest.importorskip("openvino")
    model = MODELS / "picker.xml"
    extra = ["--per-layer", "-n", "2"] if command == "bench" else []
    result = invoke(command, model, "--input", MODELS / "picker.inputs.npz", *extra, "--view", "--export",
                    tmp_path / "out", "-q", debug=False)
    assert result.exit_code == (1 if command == "crosscheck" else 0), result.output  # picker diverges on CPU
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    graphs = json.loads((tmp_path / "out" / "graph.json").read_text())
    names = {n["id"]: attrs(n["attrs"])["layer name"] for n in graphs["graphs"][0]["nodes"]}
    if command == "crosscheck":
        assert files == ["graph.json", "overlay-crosscheck-log10-max-abs-error-vs-cpu-f32.json",
                         "overlay-crosscheck-status-vs-cpu-f32.json"]
        assert "first divergence: layer 'pick'" in result.output  # the report first, then the files
        status = json.loads((tmp_path / "out" / files[2]).read_text())["main"]["results"]
        first = [names[node] for node, r in status.items() if r["value"].startswith("first divergence")]
        assert first == ["pick"]
    else:
        assert files == ["graph.json", "overlay-bench-mean-ms-per-run.json", "overlay-bench-share-of-time.json"]
        shares = json.loads((tmp_path / "out" / files[2]).read_text())["main"]["results"]
        assert sum(r["value"] for r in shares.values()) == pytest.approx(100, abs=0.1)


def _precision_overlays(tmp_path: Path, make, to: str) -> tuple[list, dict[str, str]]:
    import ir_runner
    from ir_runner.headroom import report_data

    xml, weights, feeds = make()
    (tmp_path / "m.xml").write_bytes(xml)
    (tmp_path / "m.bin").write_bytes(weights)
    result = report_data(ir_runner.precision(ir_runner.load(str(tmp_path / "m.xml")), feeds, to, fix=False,
                                              learn=False))
    graphs = model_graphs(analyse(str(tmp_path / "m.xml")))
    names = {n["id"]: attrs(n["attrs"])["layer name"] for n in graphs["graphs"][0]["nodes"]}
    return precision_overlays(result, graphs), names


def test_precision_overlay_marks_the_planted_overflow_first(tmp_path: Path) -> None:
    from ir_runner.view.overlays import PALE, YELLOW
    from tests.helpers.precision_models import OVERFLOW_LAYER, overflow_model

    (bits, status), names = _precision_overlays(tmp_path, overflow_model, "f16")
    assert bits.name == "precision headroom bits in f16 as GPU" and status.name == "precision status in f16 as GPU"
    marked = {names[node]: r for node, r in status.data["main"]["results"].items()}
    assert marked[OVERFLOW_LAYER]["bgColor"] == FIRST
    assert marked[OVERFLOW_LAYER]["value"].startswith("first divergence (overflow: ")
    assert marked["project"] == {"value": "ok", "bgColor": PALE}
    assert marked["reduce"]["bgColor"] == YELLOW and marked["reduce"]["value"].startswith("diverges: ")
    headroom = {names[node]: r["value"] for node, r in bits.data["main"]["results"].items()}
    assert headroom[OVERFLOW_LAYER] < 0 < headroom["project"]  # beyond 65504: log2(65504 / max) is negative
    assert [t["value"] for t in bits.data["main"]["thresholds"]] == [0, 3, 8, 1e9]
    assert "red: < 0 bits (overflows)" in bits.legend and "orange: underflow" in status.legend


def test_precision_overlay_marks_an_underflow_and_the_layers_kept_in_f32(tmp_path: Path) -> None:
    from tests.helpers.precision_models import UNDERFLOW_LAYER, overflow_model, underflow_model

    (_, status), names = _precision_overlays(tmp_path, underflow_model, "f16")
    marked = {names[node]: r for node, r in status.data["main"]["results"].items()}
    assert marked[UNDERFLOW_LAYER]["value"].startswith("first divergence (underflow: ")
    (_, status), names = _precision_overlays(tmp_path, overflow_model, "bf16")  # CPU: the tail stays in f32
    marked = {names[node]: r["value"] for node, r in status.data["main"]["results"].items()}
    assert marked == {"project": "ok", "amplify": "ok", "reduce": "ok", "relu": "ok (runs in f32)"}


@pytest.mark.parametrize("command", ["view", "precision"])
def test_precision_view_exports_the_headroom_of_its_run(command: str, tmp_path: Path) -> None:
    model = EXAMPLES / "precision" / "overflow.xml"
    extra = ["--overlay", "precision"] if command == "view" else ["--view"]
    result = invoke(command, model, "--input", model.with_suffix(".npz"), *extra, "--export", tmp_path / "out",
                    "-q", debug=False)
    assert result.exit_code == (0 if command == "view" else 1), result.output  # precision: an output diverges
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert files == ["graph.json", "overlay-precision-headroom-bits-in-f16-as-gpu.json",
                     "overlay-precision-status-in-f16-as-gpu.json"]
    graphs = json.loads((tmp_path / "out" / "graph.json").read_text())
    names = {n["id"]: attrs(n["attrs"])["layer name"] for n in graphs["graphs"][0]["nodes"]}
    status = json.loads((tmp_path / "out" / files[2]).read_text())["main"]["results"]
    assert [names[n] for n, r in status.items() if r["value"].startswith("first divergence")] == ["amplify"]
    assert "legend: precision status in f16 as GPU" in graphs["graphs"][0]["groupNodeAttributes"][""]


def test_view_precision_overlay_takes_to_and_device(tmp_path: Path) -> None:
    model = EXAMPLES / "precision" / "overflow.xml"
    result = invoke("view", model, "--input", model.with_suffix(".npz"), "--overlay", "precision", "--to", "bf16",
                    "--export", tmp_path / "out", "-q", debug=False)
    assert result.exit_code == 0, result.output
    status = json.loads((tmp_path / "out" / "overlay-precision-status-in-bf16-as-cpu.json").read_text())
    assert all(not r["value"].startswith(("first", "overflow")) for r in status["main"]["results"].values())
    result = invoke("view", model, "--overlay", "precision", "--device", "NPU", "--export", tmp_path / "o2",
                    debug=False)
    assert result.exit_code == 4 and "'NPU' is not one of CPU, GPU" in result.output, result.output


def test_precision_view_refuses_compression() -> None:
    model = EXAMPLES / "precision" / "mlp_int8.xml"
    result = invoke("precision", model, "--input", model.with_suffix(".npz"), "--compression", "--view",
                    debug=False)
    assert result.exit_code == 2 and "--view is for the headroom report, not --compression" in result.output


def test_crosscheck_overlay_of_a_first_divergence_without_an_error_value() -> None:
    # a device output of another shape diverges with no max_abs: the layer is pinned, not a KeyError
    graphs = model_graphs(analyse(str(MODELS / "picker.xml")))
    layer = next(n["id"] for n in graphs["graphs"][0]["nodes"] if n["incomingEdges"])
    result = {"device": "CPU", "precision": "f32", "first_divergence": {"id": layer},
              "layers": [{"id": layer, "max_abs": None, "status": "diverges"}]}
    error, status = crosscheck_overlays(result, graphs)
    assert status.data["main"]["results"][layer]["value"] == "first divergence (diverges)"
    assert error.data["main"]["results"] == {}


@pytest.mark.parametrize("command", ["crosscheck", "precision"])
def test_json_with_view_keeps_stdout_one_json_document(command: str, tmp_path: Path) -> None:
    from tests.cli.clikit import as_json

    if command == "crosscheck":
        pytest.importorskip("openvino")
    model = MODELS / "picker.xml"
    result = invoke(command, model, "--input", MODELS / "picker.inputs.npz", "--json", "--view", "--export",
                    tmp_path / "out", debug=False)
    assert as_json(result)["command"] == command  # the files written are named on stderr
    assert str(tmp_path / "out" / "graph.json") in result.stderr


def test_a_port_in_use_is_an_input_error(tmp_path: Path) -> None:
    # Model Explorer exited 1 (ir-run's code for a failed comparison) with its own message
    pytest.importorskip("model_explorer", reason="the view extra is not installed (pip install 'ir-run[view]')")
    import socket

    with socket.socket() as busy:
        busy.bind(("localhost", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = invoke("view", MODELS / "picker.xml", "--no-browser", "--port", port, debug=False)
    assert result.exit_code == 4, result.output
    assert f"port {port} is in use" in result.stderr and "--port" in result.stderr


def test_serving_prints_only_the_address_to_open_on_stdout() -> None:
    # Model Explorer printed its own messages there, with an address that lacks the overlays and the selection
    pytest.importorskip("model_explorer", reason="the view extra is not installed (pip install 'ir-run[view]')")
    import os
    import socket
    import subprocess
    import sys

    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k != "IR_RUN_DEBUG"}
    process = subprocess.Popen([sys.executable, "-m", "ir_runner", "view", str(MODELS / "picker.xml"), "--overlay",
                                "validate", "--no-browser", "--port", str(port)], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        first = process.stdout.readline()
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert first.startswith(f"view: http://localhost:{port}/?data="), first
    assert "nodeData" in first


@pytest.mark.parametrize(("args", "unused"), [
    (["--input", MODELS / "picker.inputs.npz"], "--input"),
    (["--overlay", "validate", "--seed", "3", "--shape", "x=[6]"], "--shape, --seed"),
    (["--overlay", "bench", "--to", "bf16", "--device", "GPU", "--precision", "f16"], "--device, --precision, --to"),
    (["--overlay", "precision", "-n", "3"], "--iterations"),
])
def test_an_option_no_overlay_uses_is_a_usage_error(args: list, unused: str, tmp_path: Path) -> None:
    # they were silently ignored
    result = invoke("view", MODELS / "picker.xml", *args, "--export", tmp_path, debug=False)
    assert result.exit_code == 2 and f"no --overlay given uses {unused} (it would be ignored)" in result.output, \
        result.output
    assert not (tmp_path / "graph.json").exists()


def test_view_export_with_json_is_one_json_object(tmp_path: Path) -> None:
    # --json printed the paths as text (then, with the first fix, nothing on stdout)
    from tests.cli.clikit import as_json

    result = invoke("--json", "view", MODELS / "picker.xml", "--overlay", "validate", "--export", tmp_path,
                    debug=False)
    data = as_json(result)
    assert data["command"] == "view" and data["exit_code"] == 0
    assert data["export"] == [str(tmp_path / "graph.json"), str(tmp_path / "overlay-validate.json")]


@pytest.mark.parametrize("serving", [["--port", "9999"], ["--no-browser"]])
def test_serving_options_with_export_are_a_usage_error(serving: list, tmp_path: Path) -> None:
    # they were ignored
    result = invoke("view", MODELS / "picker.xml", *serving, "--export", tmp_path, debug=False)
    assert result.exit_code == 2 and "--export DIR serves nothing" in result.output, result.output
    result = invoke("bench", MODELS / "picker.xml", "--per-layer", "--view", *serving, "--export", tmp_path,
                    debug=False)
    assert result.exit_code == 2 and "--export DIR serves nothing" in result.output, result.output


def test_a_folded_constants_mismatch_is_named_on_its_consumer(tmp_path: Path) -> None:
    # the consumer showed "mismatch: out 0" (the Const's port) and hid its own mismatching input
    import numpy as np

    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder("const_mismatch")
    x = b.parameter("x", "f32", "4")
    w = b.const("w", np.ones(4, np.float32), out_spec=("FP32", [5]))
    b.result(b.layer("Add", "opset1", [x, w], attrs={"auto_broadcast": "numpy"}, out_specs=[("FP32", [4])],
                     name="add"), "out")
    analysis = analyse(str(b.write(tmp_path, "const_mismatch")))
    graphs = model_graphs(analysis)
    results = validation_overlay(validation_data(analysis), graphs).data["main"]["results"]
    names = {n["id"]: attrs(n["attrs"])["layer name"] for n in graphs["graphs"][0]["nodes"]}
    marked = {names[node]: r["value"] for node, r in results.items()}
    assert marked["add"] == "mismatch: constant 'w' out 0; in 1"


def test_an_export_folder_that_cannot_be_made_is_an_output_error(tmp_path: Path) -> None:
    # it was an internal error (exit 70, "a bug in ir-run")
    (tmp_path / "file").write_text("")
    result = invoke("view", MODELS / "picker.xml", "--export", tmp_path / "file" / "sub", debug=False)
    assert result.exit_code == 74, result.output
    assert f"cannot write the view into '{tmp_path / 'file' / 'sub'}'" in result.stderr
