"""Regenerate the sample IRs in models/ with the real OpenVINO package.

Run it from anywhere (it needs the `openvino` package):

    python scripts/make_samples.py

It deletes models/*.xml, *.bin and *.npz, then writes for every sample NAME:

- models/NAME.xml and models/NAME.bin, written by openvino.save_model;
- models/NAME.inputs.npz, keyed by the model's input names;
- models/NAME.expected.npz, keyed by the model's output names.

The expected outputs are OpenVINO's reference result: every node of the saved and re-read model
evaluated in topological order by Node.evaluate, the code constant folding runs. Each is checked bit
for bit against an independent computation (the spec's literal values, or numpy). The CPU plugin runs
too, and every place where it disagrees with the reference is printed. Seeds, node names and the
timestamps inside the .npz archives are fixed, so a rerun reproduces the same bytes.
"""

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import openvino as ov
from openvino import opset1, opset7, opset8
from openvino.utils.node_factory import NodeFactory

MODELS = Path(__file__).resolve().parent.parent / "models"
CPU_CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}
NPZ_TIMESTAMP = (1980, 1, 1, 0, 0, 0)

F16 = np.float16
F32 = np.float32
I32 = np.int32
I64 = np.int64


@dataclass(frozen=True)
class Sample:
    """A model, its inputs, and its outputs computed without OpenVINO."""

    name: str
    model: ov.Model
    inputs: dict[str, np.ndarray]
    expected: dict[str, np.ndarray]
    compress_to_fp16: bool = False


# ---------------------------------------------------------------- graph building


def parameter(name: str, shape: str, element_type: ov.Type) -> ov.Node:
    """A Parameter whose friendly name and only tensor name are `name`; `shape` as the IR spells it."""
    node = opset1.parameter(ov.PartialShape(shape), element_type, name=name)
    node.output(0).get_tensor().set_names({name})
    return node


def element_type(dtype: np.dtype) -> ov.Type:
    """ov.Type(dtype), except that bool is boolean (ov.Type makes it 'char')."""
    return ov.Type.boolean if dtype == np.bool_ else ov.Type(dtype)


def parameters(inputs: dict[str, np.ndarray]) -> list[ov.Node]:
    """Static Parameters with the names, shapes and element types of `inputs`."""
    return [parameter(name, ",".join(map(str, value.shape)), element_type(value.dtype))
            for name, value in inputs.items()]


def constant(name: str, value: np.ndarray) -> ov.Node:
    return opset1.constant(value, name=name)


def make_model(name: str, params: list[ov.Node], outputs: dict[str, ov.Node]) -> ov.Model:
    """A Model whose output names are the keys of `outputs`: each producer's tensor and its Result."""
    results = []
    for out_name, node in outputs.items():
        node.output(0).get_tensor().set_names({out_name})
        results.append(opset1.result(node, name=out_name))
    return ov.Model(results, params, name)


def select_pdpd(cond: ov.Node, then: ov.Node, other: ov.Node, axis: int) -> ov.Node:
    """Select-1 with auto_broadcast pdpd at `axis`: opset1.select cannot set the axis."""
    attributes = {"auto_broadcast": "pdpd", "auto_broadcast.auto_broadcast_axis": axis}
    args = [cond.output(0), then.output(0), other.output(0)]
    node = NodeFactory("opset1").create("Select", args, attributes)
    node.set_friendly_name("select")
    return node


# ---------------------------------------------------------------- numpy counterparts


def np_gather(data: np.ndarray, indices: np.ndarray, axis: int, batch_dims: int = 0) -> np.ndarray:
    """Gather with in-range indices; a negative index counts from the end of the axis."""
    axis %= data.ndim
    if batch_dims < 0:
        batch_dims += indices.ndim
    if batch_dims == 0:
        return np.take(data, np.where(indices < 0, indices + data.shape[axis], indices), axis=axis)
    pairs = zip(data, indices, strict=True)
    return np.stack([np_gather(d, i, axis - 1, batch_dims - 1) for d, i in pairs])


def np_pdpd(x: np.ndarray, rank: int, axis: int) -> np.ndarray:
    """`x` reshaped to `rank` dims, its own dims starting at `axis` (-1: aligned right)."""
    if axis == -1:
        axis = rank - x.ndim
    return x.reshape((1,) * axis + x.shape + (1,) * (rank - axis - x.ndim))


# ---------------------------------------------------------------- the samples


def select_spec() -> Sample:
    """The example of the Select-1 specification."""
    inputs = {"cond": np.array([[False, False], [True, False], [True, True]]),
              "then": np.array([[-1, 0], [1, 2], [3, 4]], F32),
              "else": np.array([[11, 10], [9, 8], [7, 6]], F32)}
    params = parameters(inputs)
    out = opset1.select(*params, name="select")
    return Sample("select_spec", make_model("select_spec", params, {"out": out}), inputs,
                  {"out": np.array([[11, 10], [1, 8], [3, 4]], F32)})


def gather7_example(number: int, data: list, indices: list, *, axis: int, batch_dims: int,
                    output: list) -> Sample:
    """Example `number` of the Gather-7 specification, on i32 data and indices."""
    inputs = {"data": np.array(data, I32), "indices": np.array(indices, I32)}
    params = parameters(inputs)
    out = opset7.gather(*params, constant("axis", np.array(axis, I64)), batch_dims, name="gather")
    name = f"gather7_example{number}"
    return Sample(name, make_model(name, params, {"out": out}), inputs, {"out": np.array(output, I32)})


def gather7_examples() -> list[Sample]:
    rows = [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]]
    batched = [[0, 0, 4], [4, 0, 0]]
    return [
        gather7_example(1, [1, 2, 3, 4, 5], [0, 0, 4], axis=0, batch_dims=0, output=[1, 1, 5]),
        gather7_example(2, rows, batched, axis=1, batch_dims=1, output=[[1, 1, 5], [10, 6, 6]]),
        gather7_example(3, [rows, [[11, 12, 13, 14, 15], [16, 17, 18, 19, 20]]],
                        [batched, [[1, 2, 4], [4, 3, 2]]], axis=2, batch_dims=2,
                        output=[[[1, 1, 5], [10, 6, 6]], [[12, 13, 15], [20, 19, 18]]]),
        gather7_example(4, np.arange(1, 41).reshape(2, 1, 5, 4).tolist(), [[1, 2, 4], [4, 3, 2]],
                        axis=2, batch_dims=1,
                        output=[[[[5, 6, 7, 8], [9, 10, 11, 12], [17, 18, 19, 20]]],
                                [[[37, 38, 39, 40], [33, 34, 35, 36], [29, 30, 31, 32]]]]),
        gather7_example(5, rows, batched, axis=1, batch_dims=-1, output=[[1, 1, 5], [10, 6, 6]]),
    ]


def select_gather() -> Sample:
    """The README quick start: Select, then Gather-7 of columns 2 and 0."""
    inputs = {"cond": np.array([[True, False, True], [False, True, False]]),
              "then": np.array([[1, 2, 3], [4, 5, 6]], F32),
              "else": np.array([[10, 20, 30], [40, 50, 60]], F32)}
    params = parameters(inputs)
    chosen = opset1.select(*params, name="select")
    indices, axis = constant("indices", np.array([2, 0], I32)), constant("axis", np.array(1, I64))
    out = opset7.gather(chosen, indices, axis, name="gather")
    return Sample("select_gather", make_model("select_gather", params, {"out": out}), inputs,
                  {"out": np.array([[3, 1], [60, 40]], F32)})


def select_inputs(seed: int, cond: tuple, then: tuple, other: tuple) -> dict[str, np.ndarray]:
    """Random inputs of these shapes for Select: boolean cond, f32 then and else."""
    rng = np.random.default_rng(seed)
    return {"cond": rng.integers(0, 2, cond, dtype=bool), "then": rng.standard_normal(then, F32),
            "else": rng.standard_normal(other, F32)}


def select_broadcast() -> Sample:
    """Select-1 numpy broadcasting of all three inputs, cond being the largest."""
    inputs = select_inputs(1, (2, 3, 2), (3, 1), (2,))
    params = parameters(inputs)
    out = opset1.select(*params, name="select")
    return Sample("select_broadcast", make_model("select_broadcast", params, {"out": out}), inputs,
                  {"out": np.where(*inputs.values())})


def pdpd_sample(name: str, seed: int, shapes: tuple[tuple, tuple, tuple], axis: int) -> Sample:
    """Select-1 auto_broadcast pdpd: cond and else fitted into then's shape from `axis`."""
    inputs = select_inputs(seed, *shapes)
    params = parameters(inputs)
    rank = inputs["then"].ndim
    cond, other = np_pdpd(inputs["cond"], rank, axis), np_pdpd(inputs["else"], rank, axis)
    return Sample(name, make_model(name, params, {"out": select_pdpd(*params, axis)}), inputs,
                  {"out": np.where(cond, inputs["then"], other)})


def dynamic() -> Sample:
    """Dynamic (`?`) and interval (`1..10`, `..3`) dims through Select and Gather-8; two outputs."""
    inputs = {**select_inputs(2, (3, 4), (3, 4), (4,)), "indices": np.array([[3, -1], [0, -4]], I64)}
    params = [parameter("cond", "1..10,4", ov.Type.boolean), parameter("then", "?,4", ov.Type.f32),
              parameter("else", "4", ov.Type.f32), parameter("indices", "?,..3", ov.Type.i64)]
    chosen = opset1.select(*params[:3], name="select")
    out = opset8.gather(chosen, params[3], constant("axis", np.array(1, I64)), name="gather")
    selected = np.where(inputs["cond"], inputs["then"], inputs["else"])
    return Sample("dynamic", make_model("dynamic", params, {"selected": chosen, "out": out}), inputs,
                  {"selected": selected, "out": np_gather(selected, inputs["indices"], 1)})


def fp16_compressed() -> Sample:
    """An f32 Const saved as an f16 Const plus a decompression Convert (compress_to_fp16=True)."""
    inputs = {"cond": np.array([[False, True, False], [False, False, True]]),
              "x": np.random.default_rng(3).standard_normal((2, 3), F32)}
    weights = np.array([[0.1, 1 / 3, -2.5], [1e-3, 3.14159, 100.7]], F32)
    params = parameters(inputs)
    out = opset1.select(*params, constant("weights", weights), name="select")
    expected = np.where(inputs["cond"], inputs["x"], weights.astype(F16).astype(F32))
    return Sample("fp16_compressed", make_model("fp16_compressed", params, {"out": out}), inputs,
                  {"out": expected}, compress_to_fp16=True)


def gather_sample(name: str, gather, data: np.ndarray, indices: np.ndarray, axis: int) -> Sample:
    """`gather(data, indices, Const axis)` with data and indices as Parameters."""
    inputs = {"data": data, "indices": indices}
    params = parameters(inputs)
    out = gather(*params, constant("axis", np.array(axis, I64)), name="gather")
    return Sample(name, make_model(name, params, {"out": out}), inputs,
                  {"out": np_gather(data, indices, axis)})


def gather_samples() -> list[Sample]:
    data = np.arange(1, 13, dtype=F32).reshape(3, 4)
    negative = np.array([[-1, 0], [-4, 2]], I32)
    large = np.array([[2**40 + 1, -(2**33), 7], [2**62, -1, 2**31]], I64)
    return [
        gather_sample("gather1", opset1.gather, data, np.array([[3, 0], [1, 1]], I64), -1),
        gather_sample("gather7_negative_indices", opset7.gather, data, negative, 1),
        gather_sample("gather8_negative_indices", opset8.gather, data, negative, 1),
        gather_sample("gather8_i64", opset8.gather, large, np.array([2, 0, -2], I64), 1),
    ]


def convert_chain() -> Sample:
    """Convert-1 f32 -> f16 -> i32 -> u8 -> boolean, each step an output."""
    inputs = {"x": np.array([-2.7, -0.5, 0.0, 0.5, 2.5, 2.7, 127.9, 300.0], F32)}
    params = parameters(inputs)
    steps, node = {}, params[0]
    for target in (ov.Type.f16, ov.Type.i32, ov.Type.u8, ov.Type.boolean):
        type_name = target.to_string()
        node = steps[f"as_{type_name}"] = opset1.convert(node, target, name=f"to_{type_name}")
    as_f16 = inputs["x"].astype(F16)
    as_i32 = as_f16.astype(I32)
    as_u8 = as_i32.astype(np.uint8)
    return Sample("convert_chain", make_model("convert_chain", params, steps), inputs,
                  {"as_f16": as_f16, "as_i32": as_i32, "as_u8": as_u8, "as_boolean": as_u8 != 0})


def picker() -> Sample:
    """docs/crosscheck.md's example: Convert i32 -> f32, Gather-7 with negative indices fed at run time, Convert
    to f16 and back, Select with an all-true mask; the CPU plugin gives 0 for the negative indices."""
    inputs = {"x": np.array([10, 20, 30, 40, 50, 60], I32), "idx": np.array([-1, 0, -2, 2], I32),
              "keep": np.ones(4, bool)}
    x, idx, keep = parameters(inputs)
    floats = opset1.convert(x, ov.Type.f32, name="to_float")
    pick = opset7.gather(floats, idx, constant("axis", np.array(0, I64)), name="pick")
    widened = opset1.convert(opset1.convert(pick, ov.Type.f16, name="to_half"), ov.Type.f32, name="widen")
    mask = opset1.select(keep, widened, constant("zero", np.zeros(4, F32)), name="mask")
    return Sample("picker", make_model("picker", [x, idx, keep], {"out": mask}), inputs,
                  {"out": np.array([60, 10, 50, 30], F32)})


def samples() -> list[Sample]:
    return [
        select_spec(),
        *gather7_examples(),
        select_gather(),
        select_broadcast(),
        pdpd_sample("select_pdpd", 4, ((3, 1), (2, 3, 4, 2), (3, 4)), axis=1),
        pdpd_sample("select_pdpd_right", 5, ((3, 1), (2, 3, 4), (3, 4)), axis=-1),
        dynamic(),
        fp16_compressed(),
        *gather_samples(),
        convert_chain(),
        picker(),
    ]


# ---------------------------------------------------------------- evaluation


def to_tensor(value: np.ndarray, element_type: ov.Type) -> ov.Tensor:
    """An ov.Tensor of `element_type` holding a copy of `value`."""
    tensor = ov.Tensor(element_type, ov.Shape(list(value.shape)))
    tensor.data[...] = value
    return tensor


def reference_outputs(model: ov.Model, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every node evaluated in topological order by OpenVINO's reference code (Node.evaluate)."""
    values = {}
    for node in model.get_ordered_ops():
        if node.get_type_name() == "Parameter":
            port = node.output(0)
            values[port] = to_tensor(inputs[port.get_any_name()], port.get_element_type())
            continue
        args = [values[port.get_source_output()] for port in node.inputs()]
        # Empty tensors: evaluate gives each its shape.
        results = [ov.Tensor(port.get_element_type(), ov.Shape([0])) for port in node.outputs()]
        if not node.evaluate(results, args):
            raise RuntimeError(f"no reference evaluate for {node.get_type_name()} {node.get_friendly_name()}")
        values.update(zip(node.outputs(), results, strict=True))
    return {result.input_value(0).get_any_name(): values[result.output(0)].data.copy()
            for result in model.get_results()}


def cpu_outputs(core: ov.Core, model: ov.Model, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    compiled = core.compile_model(model, "CPU", CPU_CONFIG)
    results = compiled(inputs)
    return {port.get_any_name(): np.asarray(results[port]) for port in compiled.outputs}


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def differences(actual: dict[str, np.ndarray], wanted: dict[str, np.ndarray]) -> list[str]:
    """One line per name whose `actual` array lacks `wanted`'s bits, or that only one of them has."""
    return [f"{name}: {actual.get(name)!r} instead of {wanted.get(name)!r}"
            for name in sorted(actual.keys() | wanted.keys())
            if name not in actual or name not in wanted or not same_bits(actual[name], wanted[name])]


def check_fp16_compression(model: ov.Model) -> None:
    """The saved model really holds an f16 Const decompressed by a Convert."""
    if not any(node.get_type_name() == "Convert" and node.input_value(0).get_element_type() == ov.Type.f16
               and node.input_value(0).get_node().get_type_name() == "Constant" for node in model.get_ops()):
        raise AssertionError("compress_to_fp16=True wrote no f16 Const + Convert")


# ---------------------------------------------------------------- writing


def save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """np.savez with a fixed timestamp per member, so the archive's bytes are reproducible."""
    with zipfile.ZipFile(path, "w") as archive:
        for key, value in arrays.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, value, allow_pickle=False)
            archive.writestr(zipfile.ZipInfo(f"{key}.npy", NPZ_TIMESTAMP), buffer.getvalue())


def write_sample(core: ov.Core, sample: Sample) -> None:
    """Save the model, read it back, and store the reference outputs once they pass the checks."""
    xml = MODELS / f"{sample.name}.xml"
    ov.save_model(sample.model, xml, compress_to_fp16=sample.compress_to_fp16)
    saved = core.read_model(xml)
    if sample.compress_to_fp16:
        check_fp16_compression(saved)
    reference = reference_outputs(saved, sample.inputs)
    if mismatches := differences(reference, sample.expected):
        raise AssertionError(f"{sample.name}: reference != independent computation: {mismatches}")
    save_npz(MODELS / f"{sample.name}.inputs.npz", sample.inputs)
    save_npz(MODELS / f"{sample.name}.expected.npz", reference)
    try:
        cpu_mismatches = differences(cpu_outputs(core, saved, sample.inputs), reference)
    except RuntimeError as error:
        cpu_mismatches = [f"compile/infer failed: {str(error).strip().splitlines()[-1]}"]
    verdict = "agrees" if not cpu_mismatches else "DIFFERS:\n    " + "\n    ".join(cpu_mismatches)
    print(f"{sample.name}: reference == independent computation; CPU plugin {verdict}")


def main() -> None:
    np.set_printoptions(precision=4, linewidth=200)
    MODELS.mkdir(exist_ok=True)
    for pattern in ("*.xml", "*.bin", "*.npz"):
        for stale in MODELS.glob(pattern):
            stale.unlink()
    core = ov.Core()
    for sample in samples():
        write_sample(core, sample)


if __name__ == "__main__":
    main()
