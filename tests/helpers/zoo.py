"""The 9 ONNX model-zoo CNNs shipped in the ``onnx`` wheel, as OpenVINO IRs with usable weights (cached).

The zoo files (``onnx/backend/test/data/light/light_*.onnx``) make their weights with ``ConstantOfShape``:
one value (0.02) repeated, which gives degenerate outputs. :func:`zoo_ir` replaces each such tensor with
seeded random values chosen by what consumes it (through Unsqueeze/Reshape/Squeeze/Flatten):

- Conv and Gemm weights: He normal, std sqrt(2 / fan-in), so ReLU activations keep a moderate scale;
- biases (Conv/Gemm input 2, an Add): 0.05 * normal;
- BatchNormalization: scale 1 + 0.1 * normal, bias and mean 0.05 * normal, variance uniform [0.5, 1.5];
  a scale applied by Mul: 1 + 0.1 * normal.

The initialisers the zoo files hold with real values are kept. The network is then converted (once: a
conversion is most of the build) with the Softmax's input as an extra output and run on OpenVINO CPU, and a
Multiply by a constant is put after the logits so that they have standard deviation ``LOGIT_STD``: the
Softmax neither saturates (float rounding alone would decide the winner) nor flattens. The final IR is written by
``openvino.save_model(..., compress_to_fp16=False)`` with its input (normal noise, [1,3,224,224]) and
OpenVINO CPU's output (``INFERENCE_PRECISION_HINT=f32``).

The cache is ``$IR_RUN_ZOO_CACHE`` or ``~/.cache/ir-run-tests/zoo``; an entry's key hashes this file, the
parameters, the onnx file and the onnx/openvino versions, so any change regenerates it. Needs ``onnx``
and ``openvino``; VGG-19's IR is 0.5 GB.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

ZOO = {
    "alexnet": "light_bvlc_alexnet.onnx",
    "densenet121": "light_densenet121.onnx",
    "inception_v1": "light_inception_v1.onnx",
    "inception_v2": "light_inception_v2.onnx",
    "resnet50": "light_resnet50.onnx",
    "shufflenet": "light_shufflenet.onnx",
    "squeezenet": "light_squeezenet.onnx",
    "vgg19": "light_vgg19.onnx",
    "zfnet512": "light_zfnet512.onnx",
}
SEED = 13
LOGIT_STD = 2.0
CPU_CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}
PASS_THROUGH = {"Unsqueeze", "Reshape", "Squeeze", "Flatten"}


def onnx_path(name: str) -> Path:
    import onnx

    return Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / ZOO[name]


def cache_root() -> Path:
    return Path(os.environ.get("IR_RUN_ZOO_CACHE") or Path.home() / ".cache" / "ir-run-tests" / "zoo")


def cache_key(name: str) -> str:
    """A hash of what the cached IR depends on: this file, the parameters, the onnx file, the versions."""
    import onnx
    import openvino

    digest = hashlib.sha256()
    for part in (Path(__file__).read_bytes(), onnx_path(name).read_bytes(),
                 f"{SEED} {LOGIT_STD} {onnx.__version__} {openvino.__version__}".encode()):
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()[:16]


def zoo_ir(name: str) -> Path:
    """The cached IR (``model.xml``; ``inputs.npz`` and ``expected_openvino.npz`` beside it), made if absent."""
    directory = cache_root() / f"{name}-{cache_key(name)}"
    if (directory / "model.xml").exists():
        return directory / "model.xml"
    directory.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=directory.parent))
    try:
        _build(name, work)
        try:
            work.rename(directory)  # atomic: a reader sees a whole entry or none
        except OSError:  # another process made it first
            if not (directory / "model.xml").exists():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return directory / "model.xml"


def _consumers(graph) -> dict[str, list]:
    uses: dict[str, list] = {}
    for node in graph.node:
        for position, tensor in enumerate(node.input):
            uses.setdefault(tensor, []).append((node, position))
    return uses


def _role(tensor: str, uses: dict[str, list]) -> tuple[str, int, object]:
    """The first consumer of ``tensor`` that is not a reshaping: (op type, input position, node)."""
    for _ in range(8):
        node, position = uses[tensor][0]
        if node.op_type not in PASS_THROUGH or position != 0:
            return node.op_type, position, node
        tensor = node.output[0]
    return node.op_type, position, node


def _random_weight(shape: tuple[int, ...], role: tuple[str, int, object], rng: np.random.Generator) -> np.ndarray:
    kind, position, node = role
    normal = rng.standard_normal(shape, dtype=np.float32)
    if (kind, position) == ("Conv", 1):
        return normal * np.float32(np.sqrt(2.0 / np.prod(shape[1:])))
    if (kind, position) == ("Gemm", 1):
        trans_b = any(a.name == "transB" and a.i for a in node.attribute)
        return normal * np.float32(np.sqrt(2.0 / shape[1 if trans_b else 0]))
    if kind == "BatchNormalization" and position == 1 or kind == "Mul":
        return 1 + np.float32(0.1) * normal
    if kind == "BatchNormalization" and position == 4:
        return rng.uniform(0.5, 1.5, shape).astype(np.float32)
    return np.float32(0.05) * normal  # biases, BatchNorm means, Add


def randomised(name: str):
    """The zoo model with every ConstantOfShape-made weight replaced by a seeded random initializer."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(onnx_path(name)))
    graph = model.graph
    initial = {t.name: t for t in graph.initializer}
    uses = _consumers(graph)
    rng = np.random.default_rng(SEED)
    kept, made, shapes_used = [], [], set()
    for node in graph.node:
        if node.op_type != "ConstantOfShape" or node.input[0] not in initial:
            kept.append(node)
            continue
        shape = tuple(int(d) for d in numpy_helper.to_array(initial[node.input[0]]))
        made.append(numpy_helper.from_array(_random_weight(shape, _role(node.output[0], uses), rng), node.output[0]))
        shapes_used.add(node.input[0])
    remaining = [t for t in graph.initializer if t.name not in shapes_used]
    del graph.node[:]
    graph.node.extend(kept)
    del graph.initializer[:]
    graph.initializer.extend(remaining + made)
    inputs = [i for i in graph.input if i.name not in shapes_used]
    del graph.input[:]
    graph.input.extend(inputs)
    return model


def _logits(graph) -> str:
    """The logits: the Softmax's input, else the graph's output (DenseNet-121 has no Softmax)."""
    return next((n.input[0] for n in graph.node if n.op_type == "Softmax"), graph.output[0].name)


def _convert(model, directory: Path):
    """``openvino.convert_model`` of an ONNX ModelProto (through a file in ``directory``, deleted after)."""
    import onnx
    import openvino as ov

    path = directory / "source.onnx"
    onnx.save(model, str(path))
    try:
        return ov.convert_model(str(path))
    finally:
        path.unlink()


def _scale(network, tensor: str, scale: np.float32) -> None:
    """Multiply the output named ``tensor`` of the OpenVINO model by ``scale`` for every consumer; the
    product takes over the tensor's names (the model's output names stay)."""
    from openvino import opset13

    port = next(out for op in network.get_ordered_ops() for out in op.outputs() if tensor in out.get_names())
    consumers = list(port.get_target_inputs())
    product = opset13.multiply(port, opset13.constant(scale))
    for consumer in consumers:
        consumer.replace_source_output(product.output(0))
    names = port.get_names()
    port.get_tensor().set_names(set())
    product.output(0).get_tensor().set_names(names)
    network.validate_nodes_and_infer_types()


def _build(name: str, directory: Path) -> None:
    import openvino as ov
    from onnx import helper

    model = randomised(name)
    graph = model.graph
    logits = _logits(graph)
    initial = {t.name: t for t in graph.initializer}
    (data,) = [i for i in graph.input if i.name not in initial]
    shape = [d.dim_value for d in data.type.tensor_type.shape.dim]
    feeds = {data.name: np.random.default_rng(SEED + 1).standard_normal(shape, dtype=np.float32)}

    probe_output = logits not in {o.name for o in graph.output}
    if probe_output:
        graph.output.append(helper.make_tensor_value_info(logits, 1, None))  # 1: FLOAT
    network = _convert(model, directory)
    probe = ov.Core().compile_model(network, "CPU", CPU_CONFIG)
    values = probe(feeds)[probe.outputs[-1]]
    del probe
    if probe_output:
        network.remove_result(network.get_results()[-1])
    _scale(network, logits, np.float32(LOGIT_STD / max(float(np.std(values)), 1e-30)))

    xml = directory / "model.xml"
    ov.save_model(network, str(xml), compress_to_fp16=False)
    compiled = ov.Core().compile_model(str(xml), "CPU", CPU_CONFIG)
    result = compiled(feeds)
    np.savez(directory / "inputs.npz", **feeds)
    np.savez(directory / "expected_openvino.npz", **{o.get_any_name(): result[o] for o in compiled.outputs})
