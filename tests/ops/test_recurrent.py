"""Recurrent operations (ir_runner/ops/sequence_recurrent/recurrent.py): LSTM/GRU/RNN sequences and cells.

OpenVINO's Python reference has no ``evaluate`` for these operations, so values are compared with its CPU
plugin (a compiled model with ``INFERENCE_PRECISION_HINT=f32``) within the bound the module states:
``|got - want| <= 1e-5 * (1 + max|want|)`` per output. Shapes: IRs written by OpenVINO declare what its
``shape_infer`` found (type_prop cases of lstm_sequence.cpp, gru_sequence.cpp, rnn_sequence.cpp,
lstm_cell.cpp, gru_cell.cpp, rnn_cell.cpp: static, dynamic batch/seq/hidden/input dims, dynamic ranks;
intervals are left out: an IR port cannot declare one), and ir-run must infer exactly that; the invalid
ones are hand-written IRs.
"""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset3, opset4, opset5  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, IRError, UnsupportedError  # noqa: E402
from ir_runner.ops.registry import lookup  # noqa: E402
from ir_runner.ops.sequence_recurrent import recurrent  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, cpu_outputs, write_ir  # noqa: E402

BOUND = 1e-5
GATES = {"lstm": 4, "gru": 3, "rnn": 1}


def check_cpu(xml, feeds, bound: float = BOUND) -> dict[str, np.ndarray]:
    got = ir_runner.load(str(xml)).run(feeds)
    want = cpu_outputs(xml, feeds)
    assert len(got) == len(want)
    for (name, g), w in zip(got.items(), want):
        assert g.shape == w.shape and g.dtype == w.dtype, (name, g.shape, w.shape, g.dtype, w.dtype)
        wide = w.astype(np.float64)
        limit = bound * (1 + (np.abs(wide).max() if w.size else 0))
        err = np.abs(g.astype(np.float64) - wide)
        assert not err.size or err.max() <= limit, f"{name}: max error {err.max():.3g} > {limit:.3g}"
    return got


# -- graphs ------------------------------------------------------------------------------------------------

def _values(rng, shape, dtype=np.float32, scale=1.0):
    return (rng.uniform(-scale, scale, shape)).astype(dtype)


def sequence_graph(kind, direction, *, batch, seq, inp, hidden, et=ov.Type.f32, dtype=np.float32, clip=0.0,
                   activations=None, lbr=False, weights=None, rng=None, dynamic=False, lengths=None):
    """A sequence layer with Parameters X, h, (c,) sequence_lengths and Const W/R/B (Parameters when
    ``weights='param'``); with ``lengths``, h, c and sequence_lengths are constants (as converters write
    them). Returns the layer and its Parameters."""
    dirs = 2 if direction == "bidirectional" else 1
    g = GATES[kind]
    shape = lambda *dims: [-1 if dynamic and i == 0 else d for i, d in enumerate(dims)]  # noqa: E731
    x = opset5.parameter(shape(batch, seq, inp), et, name="X")
    if lengths is None:
        h = opset5.parameter(shape(batch, dirs, hidden), et, name="h")
        c = opset5.parameter(shape(batch, dirs, hidden), et, name="c")
        lengths = opset5.parameter(shape(batch), ov.Type.i32, name="lengths")
    else:
        h, c = (opset5.constant(_values(rng, (batch, dirs, hidden), dtype)) for _ in range(2))
        lengths = opset5.constant(np.asarray(lengths, np.int32))
    shapes = (dirs, g * hidden, inp), (dirs, g * hidden, hidden), (dirs, (g + lbr) * hidden)
    if weights == "param":
        w, r, b = (opset5.parameter(s, et, name=n) for s, n in zip(shapes, "WRB"))
    else:
        w, r, b = (opset5.constant(_values(rng, s, dtype)) for s in shapes)
    kw = {"clip": clip} if clip else {}
    if activations:
        kw["activations"] = activations
    if kind == "lstm":
        node = opset5.lstm_sequence(x, h, c, lengths, w, r, b, hidden, direction, **kw)
        inputs = [x, h, c, lengths, w, r, b]
    elif kind == "gru":
        node = opset5.gru_sequence(x, h, lengths, w, r, b, hidden, direction, linear_before_reset=lbr, **kw)
        inputs = [x, h, lengths, w, r, b]
    else:
        node = opset5.rnn_sequence(x, h, lengths, w, r, b, hidden, direction, **kw)
        inputs = [x, h, lengths, w, r, b]
    return node, [n for n in inputs if n.get_type_name() == "Parameter"]


def sequence_feeds(rng, params, lengths, dtype=np.float32):
    feeds = {}
    for p in params:
        name = p.get_friendly_name()
        shape = [d.get_length() if d.is_static else len(lengths) for d in p.get_partial_shape()]  # (batch)
        feeds[name] = np.asarray(lengths, np.int32) if name == "lengths" else _values(rng, shape, dtype)
    return feeds


# -- shapes (type_prop) --------------------------------------------------------------------------------------

def _seq_shapes(kind, *, batch, dirs, seq, inp, hidden, rank_dynamic=()):
    """Partial shapes of a sequence's inputs in the type_prop tests' layout (``hidden`` may be -1 / a string)."""
    g = GATES[kind]
    rows = -1 if hidden == -1 else g * hidden
    shapes = {"X": [batch, seq, inp], "h": [batch, dirs, hidden], "c": [batch, dirs, hidden], "lengths": [batch],
              "W": [dirs, rows, inp], "R": [dirs, rows, hidden], "B": [dirs, rows]}
    if kind != "lstm":
        del shapes["c"]
    return {k: (ov.PartialShape.dynamic() if k in rank_dynamic else ov.PartialShape(v)) for k, v in shapes.items()}


def _seq_node(kind, direction, shapes, hidden):
    p = {k: opset5.parameter(v, ov.Type.f32 if k != "lengths" else ov.Type.i32, name=k) for k, v in shapes.items()}
    if kind == "lstm":
        node = opset5.lstm_sequence(p["X"], p["h"], p["c"], p["lengths"], p["W"], p["R"], p["B"], hidden, direction)
    elif kind == "gru":
        node = opset5.gru_sequence(p["X"], p["h"], p["lengths"], p["W"], p["R"], p["B"], hidden, direction)
    else:
        node = opset5.rnn_sequence(p["X"], p["h"], p["lengths"], p["W"], p["R"], p["B"], hidden, direction)
    return node, list(p.values())


SEQ_SHAPE_CASES = [  # (direction, batch, dirs, seq, input, hidden, dynamic-rank inputs)
    ("forward", 8, 1, 6, 4, 16, ()),
    ("bidirectional", 24, 2, 12, 8, 32, ()),
    ("reverse", -1, 1, 6, 4, 16, ()),
    ("bidirectional", 3, -1, 5, 4, 8, ()),
    ("forward", 3, 1, -1, 4, 8, ()),
    ("forward", 3, 1, 5, -1, 8, ()),
    ("bidirectional", -1, -1, -1, -1, 8, ()),
    ("forward", 3, 1, 5, 4, 8, ("X",)),
    ("forward", 3, 1, 5, 4, 8, ("h",)),
    ("bidirectional", 3, 2, 5, 4, 8, ("W", "R", "B")),
    ("forward", 3, 1, 5, 4, 8, ("X", "h", "c", "lengths", "W", "R", "B")),
]


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn"])
@pytest.mark.parametrize("case", SEQ_SHAPE_CASES, ids=lambda c: "-".join(map(str, c[:6])) + "-" + "".join(c[6]))
def test_sequence_shapes(kind, case, tmp_path):
    direction, batch, dirs, seq, inp, hidden, rank_dynamic = case
    shapes = _seq_shapes(kind, batch=batch, dirs=dirs, seq=seq, inp=inp, hidden=hidden, rank_dynamic=rank_dynamic)
    node, params = _seq_node(kind, direction, shapes, hidden)
    check_inference(write_ir(node, params, tmp_path))


def test_sequence_hidden_from_weights_when_states_are_dynamic(tmp_path):
    """hidden_size comes from R's last dim, else W/R's rows / gates (OpenVINO's Dimension division)."""
    for kind in ("lstm", "gru", "rnn"):
        shapes = _seq_shapes(kind, batch=2, dirs=1, seq=3, inp=4, hidden=5, rank_dynamic=("h", "c"))
        shapes["R"] = ov.PartialShape([1, GATES[kind] * 5, -1])
        node, params = _seq_node(kind, "forward", shapes, 5)
        check_inference(write_ir(node, params, tmp_path, kind))


CELL_SHAPE_CASES = [  # (batch, input, hidden, dynamic-rank inputs)
    (2, 3, 4, ()), (-1, 3, 4, ()), (2, -1, 4, ()), (2, 3, 4, ("X",)), (2, 3, 4, ("h",)),
    (2, 3, 4, ("W", "R", "B")), (-1, -1, 4, ("h", "c")),
]


def _cell_node(kind, shapes, hidden, version=None):
    p = {k: opset4.parameter(v, ov.Type.f32, name=k) for k, v in shapes.items()}
    if kind == "lstm":
        make = opset1.lstm_cell if version == 1 else opset4.lstm_cell
        node = make(p["X"], p["h"], p["c"], p["W"], p["R"], p["B"], hidden)
    elif kind == "gru":
        node = opset3.gru_cell(p["X"], p["h"], p["W"], p["R"], p["B"], hidden)
    else:
        node = opset4.rnn_cell(p["X"], p["h"], p["W"], p["R"], p["B"], hidden, ["tanh"], [], [])
    return node, list(p.values())


@pytest.mark.parametrize("kind", ["lstm", "lstm1", "gru", "rnn"])
@pytest.mark.parametrize("case", CELL_SHAPE_CASES, ids=lambda c: "-".join(map(str, c[:3])) + "-" + "".join(c[3]))
def test_cell_shapes(kind, case, tmp_path):
    batch, inp, hidden, rank_dynamic = case
    base = kind[:4] if kind != "lstm1" else "lstm"
    g = GATES[base]
    shapes = {"X": [batch, inp], "h": [batch, hidden], "c": [batch, hidden], "W": [g * hidden, inp],
              "R": [g * hidden, hidden], "B": [g * hidden]}
    if base != "lstm":
        del shapes["c"]
    shapes = {k: ov.PartialShape.dynamic() if k in rank_dynamic else ov.PartialShape(v) for k, v in shapes.items()}
    node, params = _cell_node(base, shapes, hidden, 1 if kind == "lstm1" else None)
    check_inference(write_ir(node, params, tmp_path))


def test_lstm_cell_falls_back_on_the_hidden_size_attribute(tmp_path):
    shapes = {k: ov.PartialShape.dynamic() for k in ("X", "h", "c", "W", "R")}
    shapes["B"] = ov.PartialShape([-1])
    node, params = _cell_node("lstm", shapes, 7)
    report = check_inference(write_ir(node, params, tmp_path))
    assert any("7" in str(check.spec) for info in report.layers for check in info.checks if check.direction != "in")


# -- invalid models ------------------------------------------------------------------------------------------

def _bad_sequence(kind="lstm", direction="forward", *, x="2,3,4", h="2,1,5", lengths="2", w=None, r=None, b=None,
                  et="f32", attrs=None):
    g = GATES[kind]
    builder = IRBuilder()
    inputs = [builder.parameter("X", et, x), builder.parameter("h", "f32", h)]
    if kind == "lstm":
        inputs.append(builder.parameter("c", "f32", h))
    inputs.append(builder.parameter("lengths", "i32", lengths))
    for name, shape in (("W", w or f"1,{g * 5},4"), ("R", r or f"1,{g * 5},5"), ("B", b or f"1,{g * 5}")):
        inputs.append(builder.parameter(name, "f32", shape))
    data = {"hidden_size": "5", "direction": direction, **(attrs or {})}
    states = 2 if kind == "lstm" else 1
    node = builder.layer(f"{kind.upper()}Sequence", "opset5", inputs, attrs=data,
                         out_specs=[("FP32", None)] * (1 + states))
    for i in range(1 + states):
        builder.result((node, i))
    return builder.build()


@pytest.mark.parametrize("args, error, words", [
    ({"h": "3,1,5"}, InferenceError, "batch_size"),
    ({"lengths": "7"}, InferenceError, "batch_size"),
    ({"h": "2,2,5"}, InferenceError, "num_directions"),
    ({"direction": "bidirectional"}, InferenceError, "num_directions"),
    ({"r": "1,20,6"}, InferenceError, "hidden_size"),
    ({"w": "1,21,4"}, InferenceError, "W must have 20"),
    ({"b": "1,19"}, InferenceError, "B must have 20"),
    ({"x": "2,3"}, InferenceError, "rank 3"),
    ({"lengths": "2,1"}, InferenceError, "rank 1"),
    ({"et": "f16"}, InferenceError, "element types"),
    ({"et": "i32", "kind": "rnn"}, InferenceError, "element types"),
    ({"attrs": {"activations": "sigmoid,hardsigmoid,tanh"}}, UnsupportedError, "hardsigmoid"),
    ({"attrs": {"activations": "sigmoid,tanh"}}, IRError, "needs 3"),
    ({"attrs": {"direction": "sideways"}}, IRError, "direction"),
    ({"attrs": {"clip": "x"}}, IRError, "clip"),
])
def test_sequence_errors_name_the_layer(args, error, words):
    args = dict(args)
    kind = args.pop("kind", "lstm")
    if "direction" in args:
        args["attrs"] = {"direction": args.pop("direction")}
    xml, weights = _bad_sequence(kind, **args)
    with pytest.raises(error) as info:
        ir_runner.load(xml, weights=weights)
    assert words in str(info.value) and "Sequence" in str(info.value)


def test_integer_sequences_are_refused():
    builder = IRBuilder()
    inputs = [builder.parameter(n, "i32", s) for n, s in (("X", "2,3,4"), ("h", "2,1,5"))]
    inputs.append(builder.parameter("lengths", "i32", "2"))
    inputs += [builder.parameter(n, "i32", s) for n, s in (("W", "1,5,4"), ("R", "1,5,5"), ("B", "1,5"))]
    node = builder.layer("RNNSequence", "opset5", inputs, attrs={"hidden_size": "5", "direction": "forward"},
                         out_specs=[("I32", None)] * 2)
    builder.result((node, 0))
    builder.result((node, 1))
    with pytest.raises(UnsupportedError, match="floating-point"):
        ir_runner.load(*builder.build())


# -- values -----------------------------------------------------------------------------------------------

REFERENCE_CASES = [  # configurations of OpenVINO's op_reference lstm/gru/rnn_sequence tests (values are ours)
    ("lstm", "forward", 5, 10, 10, 10, 0.0, None, False, [10, 10, 10, 10, 10]),
    ("lstm", "reverse", 5, 10, 10, 10, 0.7, None, False, [10, 2, 7, 1, 9]),
    ("lstm", "bidirectional", 5, 10, 10, 10, 0.0, None, False, [3, 10, 5, 1, 8]),
    ("gru", "forward", 5, 10, 10, 10, 0.0, None, True, [10, 10, 10, 10, 10]),
    ("gru", "reverse", 5, 10, 10, 10, 0.7, None, False, [4, 10, 1, 7, 2]),
    ("gru", "bidirectional", 5, 10, 10, 10, 0.0, None, True, [6, 3, 10, 1, 9]),
    ("rnn", "forward", 5, 10, 10, 10, 0.0, ["relu"], False, [10, 10, 10, 10, 10]),
    ("rnn", "reverse", 5, 10, 10, 10, 0.7, ["sigmoid"], False, [2, 10, 5, 1, 8]),
    ("rnn", "bidirectional", 5, 10, 10, 10, 0.0, None, False, [1, 4, 10, 7, 3]),
]


@pytest.mark.parametrize("case", REFERENCE_CASES, ids=lambda c: f"{c[0]}-{c[1]}-clip{c[6]}")
def test_sequence_values(case, tmp_path):
    kind, direction, batch, seq, inp, hidden, clip, activations, lbr, lengths = case
    rng = np.random.default_rng(len(tmp_path.name))
    node, params = sequence_graph(kind, direction, batch=batch, seq=seq, inp=inp, hidden=hidden, clip=clip,
                                  activations=activations, lbr=lbr, rng=rng)
    xml = write_ir(node, params, tmp_path)
    check_inference(xml)
    got = check_cpu(xml, sequence_feeds(rng, params, lengths))
    y = got[list(got)[0]]
    for row, n in enumerate(lengths):
        assert not y[row, :, n:].any()  # zero past each row's length


def test_lengths_of_zero_and_past_the_sequence_give_zero_states(tmp_path):
    """Forward only: OpenVINO's CPU plugin refuses such lengths in reverse (its ReverseSequence checks them)."""
    rng = np.random.default_rng(7)
    node, params = sequence_graph("lstm", "forward", batch=3, seq=4, inp=3, hidden=5, rng=rng)
    xml = write_ir(node, params, tmp_path)
    got = check_cpu(xml, sequence_feeds(rng, params, [0, 4, 6]))
    y, ho, co = got.values()
    assert not y[0].any() and not ho[0].any() and not co[0].any()
    assert not ho[2].any() and y[2].all()


@pytest.mark.parametrize("dtype, et", [(np.float16, ov.Type.f16), (np.float64, ov.Type.f64)])
def test_other_float_types(dtype, et, tmp_path):
    rng = np.random.default_rng(3)
    node, params = sequence_graph("gru", "bidirectional", batch=2, seq=4, inp=3, hidden=4, et=et, dtype=dtype,
                                  rng=rng)
    xml = write_ir(node, params, tmp_path)
    check_inference(xml)
    feeds = sequence_feeds(rng, params, [4, 2], dtype)
    got = ir_runner.load(str(xml)).run(feeds)
    assert all(v.dtype == dtype for v in got.values())
    if dtype == np.float16:  # computed in f32 and rounded once, as the CPU plugin does
        check_cpu(xml, feeds, bound=1e-3)


def test_dynamic_batch_and_empty_batch(tmp_path):
    """With a dynamic batch, OpenVINO's CPU plugin ignores sequence_lengths (every row runs to the end; with a
    static batch it masks as the reference does): compared with it at full lengths, and with ir-run's run of
    the same layer with a static batch at shorter lengths."""
    graphs = [sequence_graph("lstm", "bidirectional", batch=3, seq=4, inp=3, hidden=5, rng=np.random.default_rng(5),
                             dynamic=dynamic) for dynamic in (True, False)]
    (dynamic_xml, params), (static_xml, _) = (
        (write_ir(node, p, tmp_path, name), p) for (node, p), name in zip(graphs, ("dynamic", "static")))
    check_inference(dynamic_xml)
    rng = np.random.default_rng(6)
    check_cpu(dynamic_xml, sequence_feeds(rng, params, [4, 4, 4]))
    feeds = sequence_feeds(rng, params, [4, 1, 3])
    for got, want in zip(ir_runner.load(str(dynamic_xml)).run(feeds).values(),
                         ir_runner.load(str(static_xml)).run(feeds).values()):
        assert got.tobytes() == want.tobytes()
    empty = {p.get_friendly_name(): np.zeros((0, *s), np.float32) for p, s in zip(params[:3], [(4, 3), (2, 5), (2, 5)])}
    got = ir_runner.load(str(dynamic_xml)).run({**empty, "lengths": np.zeros(0, np.int32)})
    assert [v.shape for v in got.values()] == [(0, 2, 4, 5), (0, 2, 5), (0, 2, 5)]


def _sequence_kernels(xml, feeds) -> list:
    """The prepared recurrent kernels of the plan ir-run makes for ``feeds``."""
    plan = ir_runner.load(str(xml)).plan_for(list(feeds.values()))
    return [step.kernel for step in plan.steps if isinstance(step.kernel, recurrent.SequenceKernel)]


@pytest.mark.parametrize("kind, lbr", [("lstm", False), ("gru", False), ("gru", True), ("rnn", False)])
def test_directions_run_together_or_apart(kind, lbr, monkeypatch, tmp_path):
    """A small bidirectional layer runs both directions in one block-diagonal product per step, a large one
    each direction on its own (forced here by a threshold of 0): both agree with the CPU plugin."""
    rng = np.random.default_rng(21)
    node, params = sequence_graph(kind, "bidirectional", batch=3, seq=5, inp=4, hidden=6, lbr=lbr, rng=rng)
    xml = write_ir(node, params, tmp_path)
    feeds = sequence_feeds(rng, params, [5, 2, 4])
    for threshold, groups in ((recurrent._FUSE_MAX_MACS, 1), (0, 2)):
        monkeypatch.setattr(recurrent, "_FUSE_MAX_MACS", threshold)
        [kernel] = _sequence_kernels(xml, feeds)
        assert len(kernel.weights) == groups
        check_cpu(xml, feeds)


@pytest.mark.parametrize("kind, direction, lengths", [
    ("lstm", "reverse", [5, 2, 4]), ("lstm", "bidirectional", [5, 5, 5]), ("gru", "bidirectional", [1, 5, 3]),
    ("rnn", "forward", [2, 5, 5]),
])
def test_constant_states_and_lengths(kind, direction, lengths, tmp_path):
    """Constant initial states and sequence_lengths (as converters write them) are laid out when the plan is
    made, like W, R and B."""
    rng = np.random.default_rng(23)
    node, params = sequence_graph(kind, direction, batch=3, seq=5, inp=4, hidden=6, lbr=kind == "gru", rng=rng,
                                  lengths=lengths)
    xml = write_ir(node, params, tmp_path)
    feeds = sequence_feeds(rng, params, lengths)
    [kernel] = _sequence_kernels(xml, feeds)
    assert kernel.states is not None and kernel.lengths is not None and kernel.weights is not None
    y = next(iter(check_cpu(xml, feeds).values()))
    for row, n in enumerate(lengths):
        assert not y[row, :, n:].any()


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn"])
def test_hidden_size_one(kind, tmp_path):
    """Hidden size 1 and batch 4: gate blocks of one column. numpy 2.4's in-place np.negative reads such a
    column view [4, 1] of a [4, 4] f32 array with the wrong stride; the kernels never negate a view in place."""
    rng = np.random.default_rng(27)
    node, params = sequence_graph(kind, "bidirectional", batch=4, seq=3, inp=1, hidden=1, rng=rng,
                                  activations=["sigmoid", "sigmoid", "sigmoid"][:{"lstm": 3, "gru": 2, "rnn": 1}[kind]])
    xml = write_ir(node, params, tmp_path)
    check_cpu(xml, sequence_feeds(rng, params, [3, 3, 3, 3]))


def test_no_time_step_with_lengths_gives_zero_states():
    """X with 0 steps: a length outside 1..0 gives zero Ho/Co (the kernel, as a dynamic seq dim runs it)."""
    kernel = lookup("LSTMSequence", "opset5").kernel
    h0 = np.ones((2, 2, 3), np.float32)
    w, r, b = np.ones((2, 12, 4), np.float32), np.ones((2, 12, 3), np.float32), np.ones((2, 12), np.float32)
    y, ho, co = kernel(np.zeros((2, 0, 4), np.float32), h0, h0, np.array([1, 0], np.int32), w, r, b, kind="lstm",
                       direction="bidirectional", activations=("sigmoid", "tanh", "tanh"), clip=0.0,
                       linear_before_reset=False)
    assert y.shape == (2, 2, 0, 3) and ho.shape == co.shape == (2, 2, 3)
    assert not ho.any() and not co.any()


def test_weights_fed_at_run_time(tmp_path):
    """W, R and B as Parameters: laid out at each run."""
    rng = np.random.default_rng(25)
    node, params = sequence_graph("gru", "bidirectional", batch=2, seq=4, inp=3, hidden=5, lbr=True, rng=rng,
                                  weights="param")
    xml = write_ir(node, params, tmp_path)
    feeds = sequence_feeds(rng, params, [4, 3])
    [kernel] = _sequence_kernels(xml, feeds)
    assert kernel.weights is None
    check_cpu(xml, feeds)


def _cell_graph(kind, rng, *, batch, inp, hidden, clip=0.0, activations=None, lbr=False, version=None):
    g = GATES[kind]
    x = opset4.parameter([batch, inp], ov.Type.f32, name="X")
    h = opset4.parameter([batch, hidden], ov.Type.f32, name="h")
    c = opset4.parameter([batch, hidden], ov.Type.f32, name="c")
    w, r, b = (opset4.constant(_values(rng, s)) for s in ((g * hidden, inp), (g * hidden, hidden),
                                                          ((g + lbr) * hidden,)))
    kw = {"clip": clip, **({"activations": activations} if activations else {})}
    if kind == "lstm":
        node = (opset1 if version == 1 else opset4).lstm_cell(x, h, c, w, r, b, hidden, **kw)
        return node, [x, h, c]
    if kind == "gru":
        return opset3.gru_cell(x, h, w, r, b, hidden, linear_before_reset=lbr, **kw), [x, h]
    return opset4.rnn_cell(x, h, w, r, b, hidden, activations or ["tanh"], [], [], clip), [x, h]


@pytest.mark.parametrize("kind, version, clip, activations, lbr", [
    ("lstm", 4, 0.0, None, False), ("lstm", 4, 0.5, ["tanh", "relu", "sigmoid"], False), ("lstm", 1, 0.3, None, False),
    ("gru", 3, 0.0, None, False), ("gru", 3, 0.4, None, True), ("gru", 3, 0.0, ["relu", "tanh"], True),
    ("rnn", 0, 0.0, None, False), ("rnn", 0, 0.6, ["relu"], False),
])
def test_cell_values(kind, version, clip, activations, lbr, tmp_path):
    rng = np.random.default_rng(11)
    node, params = _cell_graph(kind, rng, batch=4, inp=3, hidden=5, clip=clip, activations=activations, lbr=lbr,
                               version=version)
    xml = write_ir(node, params, tmp_path)
    check_inference(xml)
    check_cpu(xml, {p.get_friendly_name(): _values(rng, list(p.get_shape())) for p in params})


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn"])
def test_cell_with_dynamic_batch(kind, tmp_path):
    """A cell whose batch is known only at run time gets the plain kernel (W, R, B laid out at each run)."""
    rng = np.random.default_rng(17)
    node, params = _cell_graph(kind, rng, batch=-1, inp=3, hidden=5, clip=0.5, lbr=kind == "gru")
    xml = write_ir(node, params, tmp_path)
    check_inference(xml)
    check_cpu(xml, {p.get_friendly_name(): _values(rng, (3, p.get_partial_shape()[1].get_length())) for p in params})


def _lstm_cell_1(tmp_path, rng, input_forget="false", weights_format="fico"):
    node, params = _cell_graph("lstm", rng, batch=3, inp=4, hidden=5, version=1)
    xml = write_ir(node, params, tmp_path)
    xml.write_text(xml.read_text().replace('input_forget="false" weights_format="fico"',
                                           f'input_forget="{input_forget}" weights_format="{weights_format}"'))
    return xml, node


def test_lstm_cell_1_input_forget(tmp_path):
    """i = 1 - f, as the reference's lstm_cell_v1 (the CPU plugin ignores input_forget): checked against the
    equations written out here."""
    rng = np.random.default_rng(13)
    xml, node = _lstm_cell_1(tmp_path, rng, input_forget="true")
    x, h, c = (_values(rng, (3, n)) for n in (4, 5, 5))
    w, r, b = (node.input_value(i).get_node().get_data().astype(np.float64) for i in (3, 4, 5))
    gates = x @ w.T + h @ r.T + b
    f = 1 / (1 + np.exp(-gates[:, :5]))
    c_new = f * c + (1 - f) * np.tanh(gates[:, 10:15])
    h_new = 1 / (1 + np.exp(-gates[:, 15:])) * np.tanh(c_new)
    got_h, got_c = ir_runner.load(str(xml)).run({"X": x, "h": h, "c": c}).values()
    np.testing.assert_allclose(got_h, h_new, rtol=0, atol=1e-6)
    np.testing.assert_allclose(got_c, c_new, rtol=0, atol=1e-6)


def test_lstm_cell_1_refuses_other_gate_orders(tmp_path):
    xml, _ = _lstm_cell_1(tmp_path, np.random.default_rng(1), weights_format="ifco")
    with pytest.raises(UnsupportedError, match="weights_format='ifco'"):
        ir_runner.load(str(xml))


def _random_sequence(seed: int, tmp_path):
    rng = np.random.default_rng(seed)
    kind = ["lstm", "gru", "rnn"][seed % 3]
    direction = ["forward", "reverse", "bidirectional"][(seed // 3) % 3]
    batch, seq, inp, hidden = (int(n) for n in rng.integers(1, [5, 9, 6, 9]))
    clip = float(rng.choice([0.0, 0.0, 0.5, 2.0]))
    pool = ["sigmoid", "tanh", "relu"]
    activations = None if rng.random() < 0.5 else [str(a) for a in rng.choice(pool, {"lstm": 3, "gru": 2,
                                                                                    "rnn": 1}[kind])]
    lbr = kind == "gru" and bool(rng.random() < 0.5)
    lengths = rng.integers(1, seq + 1, batch) if rng.random() < 0.6 else np.full(batch, seq)
    node, params = sequence_graph(kind, direction, batch=batch, seq=seq, inp=inp, hidden=hidden, clip=clip,
                                  activations=activations, lbr=lbr, rng=rng)
    return write_ir(node, params, tmp_path), sequence_feeds(rng, params, lengths)


@pytest.mark.parametrize("seed", range(30))
def test_random_sequences_against_cpu(seed, tmp_path):
    xml, feeds = _random_sequence(seed, tmp_path)
    check_inference(xml)
    check_cpu(xml, feeds)


# -- batch axes --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("type_name, version, rowed, outputs", [
    ("LSTMSequence", "opset5", 4, 3), ("GRUSequence", "opset5", 3, 2), ("RNNSequence", "opset5", 3, 2),
    ("LSTMCell", "opset4", 3, 2), ("LSTMCell", "opset1", 3, 2), ("GRUCell", "opset3", 2, 1),
    ("RNNCell", "opset1", 2, 1),
])
def test_batch_rule(type_name, version, rowed, outputs):
    op = lookup(type_name, version)
    weights = len(op.input_names) - rowed
    specs = [None] * outputs
    assert op.batch({}, [], specs, [0] * rowed + [None] * weights) == [0] * outputs
    assert isinstance(op.batch({}, [], specs, [1] + [0] * (rowed - 1) + [None] * weights), str)
    assert isinstance(op.batch({}, [], specs, [0] * rowed + [0] + [None] * (weights - 1)), str)
    assert isinstance(op.batch({}, [], specs, [0] + [None] * (rowed - 1 + weights)), str)


def test_generated_lengths_fit_the_sequence(tmp_path):
    node, params = sequence_graph("gru", "reverse", batch=64, seq=5, inp=3, hidden=4, rng=np.random.default_rng(0))
    xml = write_ir(node, params, tmp_path)
    op = lookup("GRUSequence", "opset5")
    report = ir_runner.validate(str(xml))
    layer = next(info for info in report.layers if info.ref.type_version == "GRUSequence-5")
    specs = [check.spec for check in layer.checks if check.direction == "in"]
    fit = op.fit({"kind": "gru"}, specs, 2)
    assert (fit.kind, fit.low, fit.high) == ("index", 0, 5)
    assert op.fit({"kind": "gru"}, specs, 0) is None


@pytest.mark.parametrize("kind", ["LSTMSequence", "RNNCell"])
def test_an_input_size_other_than_the_weights_is_refused_naming_the_layer(kind):
    """X's input size (a dynamic dim) fed as 5 against W of input size 3: the kernel failed (KernelError,
    exit 7); inference now needs them equal."""
    b, hidden, size = IRBuilder(), 2, 3
    if kind == "LSTMSequence":
        x = b.parameter("x", "f32", "1,4,?")
        inputs = [x, b.const("h", np.zeros((1, 1, hidden), np.float32)),
                  b.const("c", np.zeros((1, 1, hidden), np.float32)), b.const("len", np.array([4], np.int32)),
                  b.const("w", np.ones((1, 4 * hidden, size), np.float32)),
                  b.const("r", np.ones((1, 4 * hidden, hidden), np.float32)),
                  b.const("b", np.zeros((1, 4 * hidden), np.float32))]
        outs = [("FP32", [1, 1, 4, hidden]), ("FP32", [1, 1, hidden]), ("FP32", [1, 1, hidden])]
        attrs, version, shape = {"direction": "forward", "hidden_size": hidden}, "opset5", (1, 4)
    else:
        x = b.parameter("x", "f32", "1,?")
        inputs = [x, b.const("h", np.zeros((1, hidden), np.float32)),
                  b.const("w", np.ones((hidden, size), np.float32)),
                  b.const("r", np.ones((hidden, hidden), np.float32)), b.const("b", np.zeros(hidden, np.float32))]
        outs, attrs, version, shape = [("FP32", [1, hidden])], {"hidden_size": hidden}, "opset1", (1,)
    layer = b.layer(kind, version, inputs, attrs=attrs, out_specs=outs)
    b.result(layer[0])
    model = ir_runner.load(*b.build())
    with pytest.raises(ir_runner.InputError, match=f"{kind}-.*input_size.*5 vs 3"):
        model.run({"x": np.ones(shape + (5,), np.float32)})
    model.run({"x": np.ones(shape + (size,), np.float32)})
