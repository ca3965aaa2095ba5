"""The per-operation test template: every operation's tests follow it.

An operation's test file (``tests/ops/test_<family>.py``) has three parts:

1. **Shape and type cases** (ported from OpenVINO's ``type_prop`` tests; written anew): build a graph
   with OpenVINO's own Python API, serialise it (:func:`write_ir`: the IR is then written by OpenVINO,
   with its declared dims), and check that :func:`check_inference` finds every inferred port spec *equal*
   to the declared one. Invalid cases: ``ir_runner.load`` raises an IRError naming the layer.
2. **Value cases** (ported from OpenVINO's ``op_reference`` tests; written anew): :func:`check_run` runs
   the IR in ir-run and compares every output with OpenVINO's reference implementation
   (:func:`reference_outputs`: ``Node.evaluate`` node by node, the code constant folding runs; not the
   CPU plugin), bit for bit for exact operations, or within ``ulp``/``rtol``.
3. **A generator for differential tests**: a function drawing random shapes, attributes and inputs from
   a seeded ``np.random.Generator``, run over many seeds with :func:`check_run`.

Everything here needs ``openvino`` (a test dependency); ir-run itself never imports it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov

import ir_runner
from tests.helpers.bits import assert_same_bits
from tests.helpers.node_eval import evaluate, evaluate_tensors, from_tensor, to_tensor

FLOAT_BITS = {np.dtype(np.float16): np.uint16, np.dtype(np.float32): np.uint32, np.dtype(np.float64): np.uint64}


def write_ir(outputs, parameters, directory: Path, name: str = "model") -> Path:
    """Serialise a graph made with OpenVINO's Python API (``outputs``: nodes or outputs; ``parameters``:
    the Parameter nodes) to ``directory/name.xml`` (+ ``.bin``), as OpenVINO writes it; returns the xml path."""
    model = ov.Model([o if isinstance(o, ov.Output) else o.output(0) for o in _flat(outputs)], list(parameters),
                     name)
    path = Path(directory) / f"{name}.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


def _flat(outputs):
    if isinstance(outputs, (list, tuple)):
        return list(outputs)
    node = outputs
    if isinstance(node, ov.Node) and node.get_output_size() > 1:
        return [node.output(i) for i in range(node.get_output_size())]
    return [node]


def check_inference(xml: Path) -> ir_runner.ValidationReport:
    """Validate ``xml`` and require every port's inferred spec to *equal* the declared one (dims and precision):
    IRs written by OpenVINO declare exactly what its inference found, and ir-run must infer the same. The IR
    writes every dim that is not static as -1 (bounds included), so an inferred dim is compared as the IR would
    write it; :func:`check_output_shapes` compares bounds with OpenVINO's own inference."""
    report = ir_runner.validate(str(xml))
    assert report.ok, str(report)
    differing = []
    for info in report.layers:
        for check in info.checks:
            declared = (check.port.precision, tuple(check.port.dims))
            spec = check.spec
            dims = spec.shape.dims
            written = None if dims is None else tuple(d.lo if d.is_static else -1 for d in dims)
            inferred = (spec.element_type.precision, written)
            if declared != inferred and not (written is None and not check.port.dims):
                differing.append(f"{info.ref} {check.direction} {check.port.position}: declared {declared},"
                                 f" inferred {inferred}")
    assert not differing, "\n".join(differing)
    return report


def run_and_evaluate(tmp_path: Path, node, params, feeds: dict[str, np.ndarray]):
    """The one-node model of ``node`` checked by :func:`check_inference` and run by ir-run, and OpenVINO's
    ``Node.evaluate`` on the same feeds (given in the node's Parameter order): (ir-run's output 0, reference)."""
    path = write_ir(node, params, tmp_path)
    check_inference(path)
    got = next(iter(ir_runner.load(str(path)).run(feeds).values()))
    return got, evaluate(node, list(feeds.values()))


def check_output_shapes(xml: Path, node) -> None:
    """The model's outputs inferred as OpenVINO infers ``node``'s outputs, bounds included (an IR writes a
    bounded dim such as ``1..`` as -1, so :func:`check_inference` cannot compare those): the printed partial
    shapes must be equal."""
    assert ir_runner.validate(str(xml)).ok
    model = ir_runner.load(str(xml))
    want = [str(node.get_output_partial_shape(i)).replace(" ", "") for i in range(node.get_output_size())]
    got = [str(info.partial_shape) for info in model.outputs]
    assert got == want, (got, want)


def reference_outputs(xml: Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """OpenVINO's reference results for the model's Results: each node's ``evaluate`` in topological order."""
    model = ov.Core().read_model(str(xml))
    model.reshape({p.output(0): ov.PartialShape(list(np.shape(feeds[p.output(0).get_any_name()])))
                   for p in model.get_parameters()})  # static shapes: multi-output evaluates need sized outputs
    values: dict = {}
    for node in model.get_ordered_ops():
        kind = node.get_type_name()
        if kind == "Parameter":
            name = node.output(0).get_any_name()
            values[node.output(0)] = to_tensor(np.array(feeds[name], order="C"))  # (ascontiguousarray: 0-D -> 1-D)
            continue
        if kind == "Result":
            continue
        args = [values[i.get_source_output()] for i in node.inputs()]
        outputs = evaluate_tensors(node, args)
        for i, tensor in enumerate(outputs):
            values[node.output(i)] = tensor
    return [from_tensor(values[r.input_value(0)]) for r in model.get_results()]


_CORE = None


def cpu_outputs(xml: Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """OpenVINO's CPU plugin results (``INFERENCE_PRECISION_HINT=f32``), in output order: the oracle for
    operations without a reference ``evaluate`` (Convolution, AvgPool, GatherND, Roll, Einsum, If, LSTM...:
    their reference kernels only run in the template plugin, which the wheel does not ship). Feeds by input
    name; a 0-d feed stays 0-d, bf16 goes by its bits, string tensors as numpy arrays of str."""
    global _CORE
    _CORE = _CORE or ov.Core()
    compiled = _CORE.compile_model(str(xml), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    result = request.infer({name: to_tensor(value) if value.dtype.name == "bfloat16" else value
                            for name, value in ((n, np.require(v, requirements="C")) for n, v in feeds.items())})
    return [from_tensor(request.get_output_tensor(i)) if out.get_element_type() == ov.Type.bf16
            else np.array(result[out]) for i, out in enumerate(compiled.outputs)]


def check_run(xml: Path, feeds: dict[str, np.ndarray], *, ulp: int | None = None, rtol: float | None = None,
              atol: float = 0.0, oracle="reference") -> dict[str, np.ndarray]:
    """Run ``xml`` in ir-run on ``feeds`` and compare each output with :func:`reference_outputs` (``oracle``
    ``"cpu"``: :func:`cpu_outputs`; or any function of (xml, feeds) giving the expected outputs): bit for bit by
    default, else within ``ulp`` units in the last place or ``|got - want| <= atol + rtol * |want|`` (NaN where
    the oracle has NaN). Also checks that no kernel returns a view of its inputs unless its declaration says
    ``views`` (:func:`check_ownership`), and that the caller owns every output. Returns ir-run's outputs."""
    model = ir_runner.load(str(xml))
    got = model.run(feeds)
    check_ownership(model, feeds, got)
    oracle = {"reference": reference_outputs, "cpu": cpu_outputs, None: reference_outputs}.get(oracle, oracle)
    want = oracle(xml, feeds)
    assert len(got) == len(want)
    for (name, g), w in zip(got.items(), want):
        assert g.shape == w.shape, (name, g.shape, w.shape)
        assert g.dtype == w.dtype or w.dtype.kind == "V" or str(w.dtype) == str(g.dtype), (name, g.dtype, w.dtype)
        if ulp is None and rtol is None:
            assert_same_bits(g, w.view(g.dtype) if w.dtype != g.dtype else w, name)
        elif ulp is not None:
            assert_within_ulp(name, g, w, ulp)
        else:
            assert_close(name, g, w, rtol, atol)
    return got


def check_ownership(model, feeds: dict[str, np.ndarray], outputs: dict[str, np.ndarray]) -> None:
    """Kernels return new arrays unless their operation declares ``views``; outputs never share memory with a
    feed or with each other (the plan copies what may alias)."""
    trace = model.trace(feeds)
    values = {(r.layer.id, r.position): r.value for r in trace.layers}
    graph, inference = model.graph, model.inference
    for record in trace.layers:
        op = inference.layers[record.layer.id].op
        if record.source != "computed" or op is None or op.views or not record.value.size:
            continue
        for source in graph.sources[record.layer.id]:
            value = values.get(source)
            if value is not None and value.size and np.shares_memory(record.value, value):
                raise AssertionError(f"{record.layer} returns a view of its input {source} but does not declare"
                                     " views=True")
    arrays = [a for a in outputs.values() if a.size]
    for i, array in enumerate(arrays):
        assert not any(np.shares_memory(array, np.asarray(f)) for f in feeds.values()), "an output aliases a feed"
        assert not any(np.shares_memory(array, other) for other in arrays[i + 1:]), "two outputs share memory"


def ulp_distance(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Units in the last place between two float arrays of one dtype (NaN against NaN: 0; NaN against a
    number: the largest distance)."""
    unsigned = FLOAT_BITS[got.dtype]
    signed = np.dtype(unsigned).str.replace("u", "i")
    bits = got.dtype.itemsize * 8

    def ordered(x: np.ndarray) -> np.ndarray:
        raw = x.view(signed).astype(np.int64) if bits < 64 else x.view(signed).astype(object)
        return np.where(raw < 0, -(raw & ((1 << (bits - 1)) - 1)), raw)

    distance = np.abs(ordered(got) - ordered(want))
    both_nan = np.isnan(got) & np.isnan(want)
    one_nan = np.isnan(got) ^ np.isnan(want)
    distance = np.where(both_nan, 0, distance)
    return np.where(one_nan, np.iinfo(np.int64).max, distance)


def assert_within_ulp(name: str, got: np.ndarray, want: np.ndarray, ulp: int) -> None:
    distance = ulp_distance(got, want)
    if distance.size and distance.max() > ulp:
        worst = np.unravel_index(np.argmax(distance), distance.shape)
        raise AssertionError(f"{name}: {int((distance > ulp).sum())} element(s) beyond {ulp} ULP; worst at"
                             f" {worst}: got {got[worst]!r}, want {want[worst]!r} ({distance[worst]} ULP)")


def assert_close(name: str, got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> None:
    g, w = got.astype(np.float64), want.astype(np.float64)
    bad = ~((np.abs(g - w) <= atol + rtol * np.abs(w)) | (np.isnan(g) & np.isnan(w)) | (g == w))
    if bad.any():
        worst = np.unravel_index(np.argmax(np.where(bad, np.abs(g - w), -1)), bad.shape)
        raise AssertionError(f"{name}: {int(bad.sum())} element(s) beyond rtol={rtol} atol={atol}; worst at {worst}:"
                             f" got {got[worst]!r}, want {want[worst]!r}")
