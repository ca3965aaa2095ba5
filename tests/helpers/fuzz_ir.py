"""Structure-aware mutation fuzzer over real IRs: every mutant ends in success or in one clean IRError.

The seeds are the IRs in models/ (the samples and the networks of models/real/, with their inputs) and
tests/data/samples/, plus nested Loops built with OpenVINO's Python API (1 to 16 deep) when it is installed.
A mutant is a seed with one to three mutations that know the IR's structure:

- ``attribute``: a ``<data>`` attribute set to an interesting value, or one element of a list attribute changed;
- ``dim``: a port ``<dim>`` or a Parameter's ``shape`` dim (0, -1, huge, intervals, garbage);
- ``precision``: a port precision or an ``element_type`` / ``destination_type``;
- ``edge``: an edge re-wired to another layer's output port of the same graph (bodies included);
- ``back_edge``: a Loop's or TensorIterator's ``<back_edges>`` edge naming other body layers;
- ``offset``: a Const's ``offset``/``size`` moved, shrunk or made huge;
- ``bytes``: bytes of a Const's region in the ``.bin`` overwritten (NaN, infinities, 0xff..., random);
- ``shape_value``: an element of a small integer Const (the kind that decides shapes, axes, sizes) set to
  -2, -1, 0, 2**31, 2**63-1...;
- ``const_to_parameter``: a Const turned into a Parameter of dynamic dims or rank, fed at run time;
- ``inputs``: the arrays fed (dynamic dims of 0..13, extreme and non-finite values).

Half the mutants also declare every port dim but the Parameters' as -1, so that a changed shape reaches the
run instead of ending in a declared-versus-inferred mismatch at load.

Each mutant goes through ``validate``, ``load`` (64 MiB memory limit) and ``run`` twice (with the seed's inputs
filled in, and with generated ones). A finding is anything but success or a clean IRError: another exception,
a KernelError (exit 7, "a bug in ir-run"), a run whose outputs ``model.outputs`` does not describe (shape or
dtype), a hang past the time box or a memory blow-up (the worker's address space is capped). A run of a model
with Loops past the time box is counted as slow, not as a finding: it runs the iterations the model asks for
(OpenVINO writes equal trip counts once in the .bin, so one mutated value of 3 makes 16 nested Loops run 3**16
times). Mutant ``i`` of campaign ``--seed s`` is the same on every run, so a finding is reproduced by its index
alone.

``scripts/fuzz_ir.py`` runs campaigns of them in a worker process; ``tests/test_fuzz.py`` runs a short
seeded slice.
"""

from __future__ import annotations

import io
import json
import random
import signal
import tempfile
import traceback
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from lxml import etree

import ir_runner

ROOT = Path(__file__).resolve().parents[2]

MEMORY_LIMIT = 64 << 20  # load(memory_limit=): the tensors of a run
FEED_LIMIT = 1 << 20  # bytes of one generated input
INTERESTING_INTS = [-9223372036854775808, -(2**31), -3, -2, -1, 0, 1, 2, 3, 4, 7, 13, 64, 255, 65536, 2**31 - 1,
                    2**31, 2**32, 2**40, 2**62, 2**63 - 1]
INTERESTING_TEXT = ["", " ", "-1", "-2", "0", "1", "2", "3", "7", "2147483648", "4294967296", "9223372036854775807",
                    "9223372036854775808", "-9223372036854775809", "1e3", "nan", "inf", "-inf", "?", "...", "1..",
                    "..5", "3..1", "a", "1,2", ",", "1,,2", "true", "false", "numpy", "none", "explicit", "pdpd",
                    "bidirectional", "f32", "f16", "i4", "u1", "i64", "boolean", "string", "dynamic", "x" * 200]
DIM_TEXT = ["0", "1", "2", "3", "-1", "-2", "7", "65536", "2147483648", "9223372036854775807", "1..4", "?", "a",
            "", "4..2"]
ELEMENT_TYPES = ["f32", "f16", "bf16", "f64", "i8", "i16", "i32", "i64", "u1", "u4", "u8", "u16", "u32", "u64",
                 "boolean", "i4", "f8e4m3", "string", "dynamic", "undefined"]
PRECISIONS = ["FP32", "FP16", "BF16", "FP64", "I8", "I32", "I64", "U8", "U64", "BOOL", "BIN", "U4", "UNSPECIFIED"]
_FLOAT_PATTERNS = [b"\x00\x00\xc0\x7f", b"\x00\x00\x80\x7f", b"\x00\x00\x80\xff", b"\xff\xff\xff\xff",
                   b"\x7f\xff\xff\xff", b"\x00\x00\x00\x80", b"\x01\x00\x00\x00"]
DYNAMIC_SIZES = [0, 1, 1, 2, 3, 5, 13]
# Findings whose fix is under way elsewhere (signature prefix -> why): reported as "known", not as findings.
KNOWN: dict[str, str] = {}


@dataclass
class Seed:
    name: str
    xml: bytes
    weights: bytes
    feeds: dict[str, np.ndarray]


@dataclass
class Mutant:
    seed: str
    xml: bytes
    weights: bytes
    feeds: dict[str, np.ndarray]
    feed_seed: int
    steps: list[str] = field(default_factory=list)


def _npz(path: Path) -> dict[str, np.ndarray]:
    if not path.exists():
        return {}
    with np.load(path) as stored:
        return dict(stored)


def _nested_loops(depth: int) -> Seed | None:
    """``depth`` nested Loops (tests/helpers/loops.py), None without openvino."""
    try:
        import openvino  # noqa: F401
    except ImportError:
        return None
    from tests.helpers.loops import write_nested_loops

    with tempfile.TemporaryDirectory() as folder:
        path = write_nested_loops(depth, Path(folder) / "nested.xml")
        return Seed(f"nested_loops_{depth}", path.read_bytes(), path.with_suffix(".bin").read_bytes(),
                    {"x": np.arange(6, dtype=np.float32).reshape(2, 3)})


def load_seeds(real: bool = True, nested: bool = True) -> list[Seed]:
    """The seed IRs, in a fixed order (mutant numbers depend on it)."""
    seeds = []
    for path in sorted((ROOT / "models").glob("*.xml")):
        seeds.append(Seed(path.stem, path.read_bytes(), path.with_suffix(".bin").read_bytes(),
                          _npz(path.with_suffix(".inputs.npz"))))
    for path in sorted((ROOT / "tests" / "data" / "samples").glob("*.xml")):
        seeds.append(Seed(f"samples/{path.stem}", path.read_bytes(), path.with_suffix(".bin").read_bytes(), {}))
    if real:
        for path in sorted((ROOT / "models" / "real").glob("*/model.xml")):
            seeds.append(Seed(f"real/{path.parent.name}", path.read_bytes(), path.with_suffix(".bin").read_bytes(),
                              _npz(path.parent / "inputs.npz")))
    if nested:
        for depth in (1, 3, 16):
            found = _nested_loops(depth)
            if found is not None:
                seeds.append(found)
    return seeds


# --- mutations: each changes the tree, the weights or the feeds, and says what it did (None: not applicable) ----

class Work:
    """A mutant being made: the parsed tree, the weights and the feeds."""

    def __init__(self, seed: Seed, rng: random.Random) -> None:
        self.rng = rng
        self.root = etree.fromstring(seed.xml)
        self.weights = bytearray(seed.weights)
        self.feeds = dict(seed.feeds)

    def layers(self, kind: str | None = None) -> list:
        return [el for el in self.root.iter("layer") if kind is None or el.get("type") == kind]

    def consts(self) -> list:
        """Const layers with a <data> that places them in the .bin."""
        found = []
        for layer in self.layers("Const"):
            data = layer.find("data")
            if data is not None and _int(data.get("offset")) is not None and _int(data.get("size")) is not None:
                found.append((layer, data))
        return found

    def pick(self, items):
        return self.rng.choice(items) if items else None


def _int(text: str | None) -> int | None:
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def _value_text(rng: random.Random, current: str) -> str:
    """An interesting value, or the current one with one list element changed, dropped or repeated."""
    parts = current.split(",")
    choice = rng.random()
    if choice < 0.4 or not current:
        return rng.choice(INTERESTING_TEXT)
    i = rng.randrange(len(parts))
    if choice < 0.8:
        parts[i] = str(rng.choice(INTERESTING_INTS)) if rng.random() < 0.8 else rng.choice(INTERESTING_TEXT)
    elif choice < 0.9 and len(parts) > 1:
        del parts[i]
    else:
        parts.insert(i, parts[i])
    return ",".join(parts)


def m_attribute(w: Work) -> str | None:
    data = w.pick([d for d in w.root.iter("data") if d.getparent().tag == "layer" and d.attrib])
    if data is None:
        return None
    key = w.rng.choice(sorted(data.attrib))
    value = _value_text(w.rng, data.get(key))
    data.set(key, value)
    return f"attribute {key}={value[:40]!r} of layer {data.getparent().get('id')}"


def m_dim(w: Work) -> str | None:
    if w.rng.random() < 0.5:
        dim = w.pick(list(w.root.iter("dim")))
        if dim is None:
            return None
        dim.text = w.rng.choice(DIM_TEXT)
        return f"dim {dim.text!r} in a port of layer {dim.getparent().getparent().getparent().get('id')}"
    layer = w.pick(w.layers("Parameter"))
    data = layer.find("data") if layer is not None else None
    if data is None or data.get("shape") is None:
        return None
    dims = [d for d in data.get("shape").split(",") if d.strip()] or ["1"]
    dims[w.rng.randrange(len(dims))] = w.rng.choice(DIM_TEXT)
    data.set("shape", ",".join(dims))
    return f"Parameter {layer.get('id')} shape={data.get('shape')!r}"


def m_precision(w: Work) -> str | None:
    if w.rng.random() < 0.4:
        port = w.pick([p for p in w.root.iter("port") if p.get("precision")])
        if port is None:
            return None
        port.set("precision", w.rng.choice(PRECISIONS))
        return f"port precision {port.get('precision')}"
    data = w.pick([d for d in w.root.iter("data") if d.get("element_type") or d.get("destination_type")])
    if data is None:
        return None
    key = "element_type" if data.get("element_type") else "destination_type"
    data.set(key, w.rng.choice(ELEMENT_TYPES))
    return f"{key}={data.get(key)} of layer {data.getparent().get('id')}"


def _output_ports(layers_el) -> list[tuple[str, str]]:
    """(layer id, port id) of every output port of the layers directly under a <layers> element."""
    return [(layer.get("id"), port.get("id")) for layer in layers_el.iterfind("layer")
            for output in layer.iterfind("output") for port in output.iterfind("port")]


def m_edge(w: Work) -> str | None:
    edges = w.pick([e for e in w.root.iter("edges") if len(e)])
    if edges is None:
        return None
    edge = w.rng.choice(list(edges))
    layers = edges.getparent().find("layers")
    if layers is None:
        return None
    if w.rng.random() < 0.8:
        source = w.pick(_output_ports(layers))
        if source is None:
            return None
        edge.set("from-layer", source[0])
        edge.set("from-port", source[1])
        return f"edge into layer {edge.get('to-layer')} now from {source}"
    edge.set("to-port", str(w.rng.choice([0, 1, 2, 3, 7])))
    return f"edge to-port={edge.get('to-port')}"


def m_back_edge(w: Work) -> str | None:
    edge = w.pick([e for back in w.root.iter("back_edges") for e in back])
    if edge is None:
        return None
    layers = edge.getparent().getparent().find("body/layers")
    ids = [layer.get("id") for layer in layers.iterfind("layer")] if layers is not None else ["0"]
    key = w.rng.choice(["from-layer", "to-layer"])
    edge.set(key, w.rng.choice(ids + ["999"]))
    return f"back edge {key}={edge.get(key)}"


def m_offset(w: Work) -> str | None:
    found = w.pick(w.consts())
    if found is None:
        return None
    layer, data = found
    key = w.rng.choice(["offset", "size"])
    value = _int(data.get(key))
    value = w.rng.choice([value + 1, value - 1, value + 4, 0, len(w.weights), len(w.weights) + 1, 2**40, 2**63 - 1,
                          -1, value * 2, value // 2])
    data.set(key, str(value))
    return f"Const {layer.get('id')} {key}={value}"


def _region(w: Work, data) -> tuple[int, int] | None:
    offset, size = _int(data.get("offset")), _int(data.get("size"))
    if offset is None or size is None or size <= 0 or offset < 0 or offset + size > len(w.weights):
        return None
    return offset, size


def m_bytes(w: Work) -> str | None:
    regions = [(layer, r) for layer, data in w.consts() for r in [_region(w, data)] if r is not None]
    found = w.pick(regions)
    if found is None:
        return None
    layer, (offset, size) = found
    for _ in range(w.rng.randint(1, 4)):
        pattern = w.rng.choice(_FLOAT_PATTERNS + [bytes([w.rng.randrange(256)])])
        at = offset + w.rng.randrange(size)
        pattern = pattern[:offset + size - at]
        w.weights[at:at + len(pattern)] = pattern
    return f"bytes of Const {layer.get('id')}"


def m_shape_value(w: Work) -> str | None:
    """An element of a small integer Const: the kind that decides shapes, axes and sizes."""
    small = []
    for layer, data in w.consts():
        et, region = data.get("element_type"), _region(w, data)
        if et in ("i32", "i64") and region is not None and region[1] <= 64:
            small.append((layer, et, region))
    found = w.pick(small)
    if found is None:
        return None
    layer, et, (offset, size) = found
    dtype = np.dtype(np.int32 if et == "i32" else np.int64)
    size -= size % dtype.itemsize  # (an offset or size mutated before may have left a partial element)
    values = np.frombuffer(bytes(w.weights[offset:offset + size]), dtype).copy()
    if not values.size:
        return None
    i = w.rng.randrange(values.size)
    info = np.iinfo(dtype)
    values[i] = min(max(w.rng.choice(INTERESTING_INTS), info.min), info.max)
    w.weights[offset:offset + size] = values.tobytes()
    return f"Const {layer.get('id')} ({et}) element {i} = {values[i]}"


def m_const_to_parameter(w: Work) -> str | None:
    found = w.pick([(layer, data) for layer, data in w.consts() if data.get("element_type") not in ("u1", "u4", "i4")])
    if found is None:
        return None
    layer, data = found
    dims = [d.strip() for d in (data.get("shape") or "").split(",") if d.strip()]
    dims = [("-1" if w.rng.random() < 0.5 else d) for d in dims]
    for key in ("offset", "size"):
        data.attrib.pop(key, None)
    data.set("shape", "..." if w.rng.random() < 0.2 else ",".join(dims))
    layer.set("type", "Parameter")
    return f"Const {layer.get('id')} ({layer.get('name')}) became a Parameter [{data.get('shape')}]"


def m_inputs(w: Work) -> str | None:
    """The seed's arrays changed: a value set to an extreme, NaN or infinity, or an array emptied."""
    name = w.pick(sorted(w.feeds))
    if name is None:
        return None
    array = np.array(w.feeds[name])
    if array.size and w.rng.random() < 0.8:
        flat = array.reshape(-1)
        i = w.rng.randrange(flat.size)
        if array.dtype.kind == "f":
            flat[i] = w.rng.choice([np.nan, np.inf, -np.inf, 1e30, -0.0, 65504.0])
        elif array.dtype.kind in "iu":
            info = np.iinfo(array.dtype)
            flat[i] = min(max(w.rng.choice(INTERESTING_INTS), info.min), info.max)
        else:
            flat[i] = not flat[i]
        w.feeds[name] = array
        return f"input {name}[{i}] = {flat[i]}"
    axis = w.rng.randrange(array.ndim) if array.ndim else None
    if axis is None:
        return None
    w.feeds[name] = np.take(array, [], axis=axis) if w.rng.random() < 0.5 else np.concatenate([array, array], axis)
    return f"input {name} axis {axis} now {w.feeds[name].shape[axis]}"


MUTATIONS = {"attribute": (m_attribute, 3), "dim": (m_dim, 2), "precision": (m_precision, 1), "edge": (m_edge, 2),
             "back_edge": (m_back_edge, 1), "offset": (m_offset, 1), "bytes": (m_bytes, 2),
             "shape_value": (m_shape_value, 3), "const_to_parameter": (m_const_to_parameter, 2),
             "inputs": (m_inputs, 2)}


def make_mutant(seeds: list[Seed], campaign: int, index: int) -> Mutant:
    """Mutant ``index`` of campaign ``campaign``: the same on every run and machine."""
    rng = random.Random(f"{campaign}:{index}")
    seed = rng.choice(seeds)
    work = Work(seed, rng)
    names, weights = zip(*[(name, weight) for name, (_, weight) in MUTATIONS.items()])
    steps = []
    for _ in range(rng.randint(1, 3)):
        for _attempt in range(8):  # a mutation that does not apply to this seed: draw another
            name = rng.choices(names, weights)[0]
            done = MUTATIONS[name][0](work)
            if done is not None:
                steps.append(done)
                break
    if rng.random() < 0.5:  # declared port dims made dynamic: a changed shape then reaches the run, not a mismatch
        steps.append("port dims -1")
        for layer in work.layers():
            if layer.get("type") != "Parameter":
                for dim in layer.iterfind("*/port/dim"):
                    dim.text = "-1"
    xml = etree.tostring(work.root, xml_declaration=True, encoding="UTF-8")
    return Mutant(seed.name, xml, bytes(work.weights), work.feeds, rng.randrange(2**31), steps)


# --- running a mutant ---------------------------------------------------------------------------------------------

class Hang(BaseException):
    """A mutant ran past its time box (a BaseException: no `except Exception` in ir-run swallows it)."""


@contextmanager
def time_box(seconds: float):
    def ring(signum, frame):
        raise Hang(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def generated_feeds(model: ir_runner.Model, given: dict[str, np.ndarray], seed: int) -> dict[str, np.ndarray] | None:
    """Arrays for every input: the given one when it fits, else one drawn for the input's partial shape (dynamic
    dims of 0..13, a dynamic rank of 0..4) and dtype; None when an input would be too large."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for info in model.inputs:
        if info.name in given:
            feeds[info.name] = given[info.name]
            continue
        dims = info.partial_shape.dims
        if dims is None:  # a dynamic rank: 0 to 4 dims
            dims = (ir_runner.types.DYNAMIC_DIM,) * int(rng.integers(0, 5))
        shape = tuple(d.lo if d.is_static else max(d.lo, min(int(rng.choice(DYNAMIC_SIZES)), d.hi or 13))
                      for d in dims)
        dtype = info.dtype or np.dtype(np.float32)
        if int(np.prod(shape, dtype=object)) * dtype.itemsize > FEED_LIMIT or max(shape, default=0) > FEED_LIMIT:
            return None  # (numpy cannot make an array with a dim of 2**63 - 1, even an empty one)
        if dtype.kind == "b":
            feeds[info.name] = rng.integers(0, 2, shape).astype(dtype)
        elif dtype.kind in "iu":
            feeds[info.name] = rng.integers(0 if dtype.kind == "u" else -2, 6, shape).astype(dtype)
        else:
            feeds[info.name] = rng.standard_normal(shape).astype(dtype)
    return feeds


def _check_outputs(model: ir_runner.Model, outputs: dict[str, np.ndarray]) -> str | None:
    """What ``model.outputs`` says must hold for the arrays a run returned."""
    for info in model.outputs:
        array = outputs.get(info.name)
        if array is None:
            continue
        if info.dtype is not None and array.dtype != info.dtype:
            return f"output {info.name!r}: model.outputs says {info.dtype}, the run returned {array.dtype}"
        if not info.partial_shape.accepts(array.shape):
            return (f"output {info.name!r}: model.outputs says {info.partial_shape.brief()}, the run returned"
                    f" shape {array.shape}")
    return None


@dataclass
class Outcome:
    kind: str  # ok, clean (an IRError), slow (a Loop's run past the box), or a finding: exception, kernel,
    # outputs, hang, memory, crash
    detail: str = ""
    where: str = ""  # the innermost ir_runner frame of a finding
    trace: str = ""

    @property
    def finding(self) -> bool:
        return self.kind not in ("ok", "clean", "slow") and not self.known

    @property
    def known(self) -> bool:
        return any(self.signature.startswith(prefix) for prefix in KNOWN)

    @property
    def signature(self) -> str:
        return f"{self.kind}: {self.detail.split(':')[0][:60]} at {self.where}"


def _where(exc: BaseException) -> str:
    """The innermost ir_runner frame of the exception, or of the one it was raised from (a kernel's)."""
    while exc.__cause__ is not None or exc.__context__ is not None:
        exc = exc.__cause__ or exc.__context__
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "ir_runner" in f.filename]
    frame = frames[-1] if frames else None
    return f"{Path(frame.filename).name}:{frame.name}" if frame else "?"


def exercise(mutant: Mutant, seconds: float = 10.0) -> Outcome:
    """validate, load and run the mutant: the outcome (never raises but for KeyboardInterrupt)."""
    step = "validate"
    try:
        with time_box(seconds), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ir_runner.validate(mutant.xml, mutant.weights)
            step = "load"
            model = ir_runner.load(mutant.xml, mutant.weights, memory_limit=MEMORY_LIMIT)
            attempts = [generated_feeds(model, mutant.feeds, mutant.feed_seed),
                        generated_feeds(model, {}, mutant.feed_seed + 1)]
            last: Outcome = Outcome("ok")
            for feeds in attempts:
                if feeds is None:
                    continue
                step = "run"
                try:
                    outputs = model.run(feeds)
                except ir_runner.KernelError:
                    raise
                except ir_runner.IRError as error:
                    last = Outcome("clean", f"{type(error).__name__} at run")
                    continue
                wrong = _check_outputs(model, outputs)
                if wrong is not None:
                    shapes = {k: (v.shape, str(v.dtype)) for k, v in feeds.items()}
                    return Outcome("outputs", wrong, "model.outputs", f"feeds: {shapes}")
            return last
    except ir_runner.KernelError as error:
        return Outcome("kernel", f"{step}: {error}", _where(error), traceback.format_exc())
    except ir_runner.IRError as error:
        return Outcome("clean", f"{type(error).__name__} at {step}")
    except Hang as error:
        if step == "run" and b'type="Loop"' in mutant.xml:  # the iterations the model asks for (3**16 when a
            return Outcome("slow", f"{step}: {error}", _where(error))  # trip count shared by 16 levels is 3)
        return Outcome("hang", f"{step}: {error}", _where(error), traceback.format_exc())
    except MemoryError as error:
        return Outcome("memory", f"{step}: MemoryError", _where(error), traceback.format_exc())
    except RecursionError as error:
        return Outcome("exception", f"{step}: RecursionError", _where(error), "")
    except Exception as error:  # noqa: BLE001 - every other exception is what the fuzzer looks for
        return Outcome("exception", f"{step}: {type(error).__name__}: {str(error)[:200]}", _where(error),
                       traceback.format_exc())


def write_reproducer(folder: Path, campaign: int, index: int, mutant: Mutant, outcome: Outcome) -> Path:
    """The mutant's files and what it found, in ``folder/<kind>-<campaign>-<index>/``."""
    target = folder / f"{outcome.kind}-{campaign}-{index}"
    target.mkdir(parents=True, exist_ok=True)
    (target / "model.xml").write_bytes(mutant.xml)
    (target / "model.bin").write_bytes(mutant.weights)
    buffer = io.BytesIO()
    np.savez(buffer, **mutant.feeds)
    (target / "inputs.npz").write_bytes(buffer.getvalue())
    (target / "finding.json").write_text(json.dumps({
        "campaign": campaign, "index": index, "seed_model": mutant.seed, "mutations": mutant.steps,
        "kind": outcome.kind, "detail": outcome.detail, "where": outcome.where, "traceback": outcome.trace,
        "reproduce": f"python -m scripts.fuzz_ir --seed {campaign} --index {index} --show"}, indent=1))
    return target
