"""Element-wise layers writing into an input no one reads again (ir_runner.inplace): every operation that declares
``in_place`` gives the same bits written over its input as into a new array (special values, broadcasting, blocked
and small paths); the plan never writes into a Parameter's array, a Const, a caller's out= array, a value a later
layer reads through a view, or a model output; the corpus, stateful models, sub-graph bodies and dask runs give
the same bits with and without the rule."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ir_runner
from ir_runner import plan as plan_module
from ir_runner.ops import registry
from ir_runner.ops.elementwise import binary, unary
from ir_runner.ops.toolkit.broadcasting import BLOCK
from tests.cli.clikit import load_npz
from tests.helpers.irbuild import DTYPE, IRBuilder

MODELS = Path(__file__).resolve().parent.parent / "models"
SMALL, LARGE = (2, 3, 5), (2, BLOCK + 7)  # one call; blocks of run_elementwise (BLOCK elements each)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(
        np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8))


@pytest.fixture
def without_rule(monkeypatch):
    """Plans made while it is active write nothing in place."""
    monkeypatch.setattr(plan_module, "reused_inputs", lambda steps_raw, *args: [None] * len(steps_raw))


def values(et: str, shape: tuple[int, ...], seed: int, nonzero: bool = False) -> np.ndarray:
    """Random values of ``et`` with the corners: NaNs (signed, with payloads), infinities, signed zeros,
    subnormals and the extremes; integers over their whole range (no 0 with ``nonzero``)."""
    rng = np.random.default_rng(seed)
    dtype = DTYPE[et]
    if et == "boolean":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
        x.reshape(-1)[:4] = [info.min, info.max, 1, 0][: x.size]
        if nonzero:
            x[x == 0] = 1
        return x
    wide = (rng.standard_normal(shape) * 4).astype(np.float32)
    flat = wide.reshape(-1)
    specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 3.0, -3.0, 6.0, 1e30],
                        np.float32)
    flat[: specials.size] = specials[: flat.size]
    flat[specials.size::97] = np.float32(-np.nan)
    with np.errstate(over="ignore"):
        x = wide.astype(dtype)
    if dtype == np.float32:
        x.reshape(-1)[-1:] = np.array([0x7FA00001], np.uint32).view(np.float32)  # a signalling NaN with a payload
    return x


def producer(b: IRBuilder, name: str, et: str, shape: tuple[int, ...]):
    """A Parameter and a layer computing a new array of it (which the layer under test may write into)."""
    p = b.parameter(name, et, ",".join(map(str, shape)))
    kind = "LogicalNot" if et == "boolean" else "Negative"
    return b.layer(kind, "opset1", [p], name=f"{name}_made")


def check_in_place(b: IRBuilder, layer, feeds: dict[str, np.ndarray], *, expect_reuse: bool = True) -> None:
    """The model's run writes ``layer`` in place (or not) and gives the bits of a run that writes nothing in place
    (a trace), leaving the feeds as they were."""
    b.result(layer)
    model = ir_runner.load(*b.build())
    kept = {name: value.copy() for name, value in feeds.items()}
    got = model.run(feeds)
    want = model.trace(feeds).outputs
    for name in want:
        assert same_bits(got[name], want[name]), name
    for name, value in feeds.items():
        assert same_bits(value, kept[name]), f"feed {name} was written"
    plan = model.plan_for([feeds[info.name] for info in model.inputs])
    (step,) = [s for s in plan.steps if s.layer.name == layer.name]
    assert (step.reuses is not None) == expect_reuse


# -- the declarations -------------------------------------------------------------------------------------------

BINARY_TYPES = {"arith": ("f32", "f16", "bf16", "f64", "i32", "u8"), "compare": ("boolean",),
                "logical": ("boolean",), "bitwise": ("i32", "u8", "boolean"), "shift": ("i8", "i64", "u32")}
BINARY_OPSET = {13: "opset13", 15: "opset15"}


def binary_cases():
    for entry in binary.TABLE:
        if not entry.in_place:
            continue
        for et in BINARY_TYPES[entry.kind]:
            if entry.type in ("Mod", "FloorMod", "Divide") and et == "bf16":
                continue  # (not this module's subject: the reference's bf16 rounding of these is tested elsewhere)
            for position in entry.in_place:
                for shape in (SMALL, LARGE):
                    yield pytest.param(entry, et, position, shape, id=f"{entry.type}-{et}-{position}-{shape[-1]}")


@pytest.mark.parametrize(("entry", "et", "position", "shape"), list(binary_cases()))
def test_binary_written_over_an_input(entry, et, position, shape):
    b = IRBuilder()
    made = producer(b, "x", et, shape)
    other_shape = (shape[0], 1) if shape == LARGE else (1, 3, 1)  # broadcast against the one written over
    other = b.parameter("y", et, ",".join(map(str, other_shape)))
    inputs = [made, other] if position == 0 else [other, made]
    attrs = {"auto_broadcast": "numpy"}
    if entry.type == "Divide":
        attrs["m_pythondiv"] = "false" if et == "i32" else "true"
    out_et = "boolean" if entry.kind in ("compare", "logical") else et
    layer = b.layer(entry.type, BINARY_OPSET.get(entry.first, "opset1"), inputs, attrs=attrs, name="under_test",
                    out_specs=[(out_et, list(shape))])
    divisor = entry.divides and et not in ("f32", "f16", "f64", "bf16")
    x = values(et, shape, 1, nonzero=divisor and position == 1)
    y = values(et, other_shape, 2, nonzero=divisor and position == 0)
    check_in_place(b, layer, {"x": x, "y": y})


def test_binary_of_one_array_with_itself():
    b = IRBuilder()
    made = producer(b, "x", "f32", LARGE)
    layer = b.layer("Multiply", "opset1", [made, made], attrs={"auto_broadcast": "numpy"}, name="under_test")
    check_in_place(b, layer, {"x": values("f32", LARGE, 3)})


UNARY_TYPES = {"numeric": ("f32", "f16", "bf16", "f64", "i32"), "real": ("f32", "f16", "bf16", "f64"),
               "numeric_float": ("f32", "f16", "bf16", "f64")}


def unary_cases():
    for entry in unary.TABLE:
        if entry.in_place:
            for et in UNARY_TYPES[entry.types]:
                for shape in (SMALL, LARGE):
                    yield pytest.param(entry.type, f"opset{entry.first_opset}", et, shape, {}, (),
                                       id=f"{entry.type}-{et}-{shape[-1]}")


OTHER_CASES = [  # (type, opset, element types, attributes, constant inputs after the data)
    ("LogicalNot", "opset1", ("boolean", "f32", "i32"), {}, ()),
    ("BitwiseNot", "opset13", ("i32", "u8", "boolean"), {}, ()),
    ("Clamp", "opset1", ("f32", "f16", "bf16", "i32", "u8"), {"min": "0.5", "max": "0.7"}, ()),
    ("Clamp", "opset1", ("f32", "i32"), {"min": "-2.5", "max": "3"}, ()),
    ("Elu", "opset1", ("f32", "f16", "f64", "i32"), {"alpha": "0.5"}, ()),
    ("Selu", "opset1", ("f32", "f16", "f64"), {}, (np.array([1.67]), np.array([1.05]))),
    ("HardSigmoid", "opset1", ("f32", "f16", "bf16"), {}, (np.array(0.2), np.array(0.5))),
    ("Identity", "opset16", ("f32", "i32", "boolean"), {}, ()),
    ("PRelu", "opset1", ("f32", "f16", "bf16"), {}, (np.array([0.5, -2.0, 3.0]),)),
    ("Swish", "opset4", ("f32", "f16", "f64"), {}, ()),
    ("Swish", "opset4", ("f32", "f64"), {}, (np.array(0.7),)),
]


def other_cases():
    for type_, opset, types, attrs, consts in OTHER_CASES:
        for et in types:
            for shape in (SMALL, LARGE):
                if type_ == "PRelu" and shape == LARGE:
                    shape = (2, 3, BLOCK // 2)  # (the slope runs along axis 1)
                yield pytest.param(type_, opset, et, shape, attrs, consts, id=f"{type_}-{et}-{shape[-1]}-{len(consts)}")


@pytest.mark.parametrize(("type_", "opset", "et", "shape", "attrs", "consts"),
                         list(unary_cases()) + list(other_cases()))
def test_unary_written_over_its_input(type_, opset, et, shape, attrs, consts):
    b = IRBuilder()
    made = producer(b, "x", et, shape)
    extra = [b.const(f"c{i}", value, et) for i, value in enumerate(consts)]
    layer = b.layer(type_, opset, [made, *extra], attrs=attrs or None, name="under_test")
    check_in_place(b, layer, {"x": values(et, shape, 4)})


def test_every_declaration_is_covered_here():
    """A new ``in_place`` declaration needs its case above (its kernel read over its own output)."""
    declared = {op.type for versions in registry._REGISTRY.values() for op in versions if op.in_place}
    covered = ({entry.type for entry in binary.TABLE if entry.in_place} | {"Xor"}
               | {entry.type for entry in unary.TABLE if entry.in_place} | {case[0] for case in OTHER_CASES})
    assert declared == covered


def test_xor_is_declared_as_logical_xor():
    (xor,) = registry._REGISTRY["xor"]
    assert xor.in_place == (0, 1)


# -- what the plan never writes ----------------------------------------------------------------------------------


def test_a_parameter_is_never_written():
    b = IRBuilder()
    x = b.parameter("x", "f32", "2,8")
    layer = b.layer("Relu", "opset1", [x], name="under_test")
    check_in_place(b, layer, {"x": values("f32", (2, 8), 5)}, expect_reuse=False)


def test_a_constant_is_never_written():
    b = IRBuilder()
    x = b.parameter("x", "f32", "2,8")
    c = b.const("c", values("f32", (2, 8), 6))
    layer = b.layer("Add", "opset1", [c, x], attrs={"auto_broadcast": "numpy"}, name="under_test")
    b.result(layer)
    model = ir_runner.load(*b.build())
    feeds = {"x": values("f32", (2, 8), 7)}
    (first,) = model.run(feeds).values()
    (second,) = model.run(feeds).values()
    with np.errstate(invalid="ignore"):
        assert same_bits(second, first) and same_bits(first, values("f32", (2, 8), 6) + feeds["x"])
    plan = model.plan_for([feeds["x"]])
    assert all(step.reuses is None for step in plan.steps)


def test_a_caller_out_array_is_never_written_over():
    b = IRBuilder()
    made = producer(b, "x", "f32", (4, 5))
    b.result(made, "made_out")
    layer = b.layer("Relu", "opset1", [made], name="under_test")
    b.result(layer)
    model = ir_runner.load(*b.build())
    x = values("f32", (4, 5), 8)
    buffer = np.empty((4, 5), np.float32)
    made_out, relu_out = model.run({"x": x}, out=[buffer, None]).values()
    assert made_out is buffer and same_bits(buffer, -x)
    assert same_bits(relu_out, np.where(-x < 0, np.float32(0), -x))


def test_a_model_output_is_never_written_over():
    b = IRBuilder()
    made = producer(b, "x", "f32", (3, 4))
    b.result(made)
    layer = b.layer("Relu", "opset1", [made], name="under_test")
    x = values("f32", (3, 4), 9)
    check_in_place(b, layer, {"x": x}, expect_reuse=False)


def test_an_output_through_a_view_is_never_written_over():
    b = IRBuilder()
    made = producer(b, "x", "f32", (3, 4))
    shape = b.const("shape", np.array([12], np.int64))
    flat = b.layer("Reshape", "opset1", [made, shape], attrs={"special_zero": "false"}, out_specs=[("f32", [12])])
    b.result(flat)
    layer = b.layer("Relu", "opset1", [made], name="under_test")
    check_in_place(b, layer, {"x": values("f32", (3, 4), 10)}, expect_reuse=False)


@pytest.mark.parametrize("view", ["Reshape", "Transpose", "Squeeze"])
def test_a_view_read_later_is_never_clobbered(view):
    b = IRBuilder()
    made = producer(b, "x", "f32", (1, 3, 4))
    if view == "Reshape":
        target = b.const("shape", np.array([1, 3, 4], np.int64))
        seen = b.layer("Reshape", "opset1", [made, target], attrs={"special_zero": "false"})
    elif view == "Transpose":
        seen = b.layer("Transpose", "opset1", [made, b.const("order", np.array([0, 1, 2], np.int64))])
    else:
        seen = b.layer("Squeeze", "opset1", [made, b.const("axes", np.array([0], np.int64))],
                       out_specs=[("f32", [3, 4])])
    layer = b.layer("Relu", "opset1", [made], name="under_test")  # made is read later through ``seen``
    total = b.layer("Add", "opset1", [layer, seen], attrs={"auto_broadcast": "numpy"}, out_specs=[("f32", [1, 3, 4])])
    b.result(total, "total")
    x = values("f32", (1, 3, 4), 11)
    model = ir_runner.load(*b.build())
    got = model.run({"x": x})["total"]
    with np.errstate(invalid="ignore"):
        assert same_bits(got, np.where(-x < 0, np.float32(0), -x) + -x)
    plan = model.plan_for([x])
    (step,) = [s for s in plan.steps if s.layer.name == "under_test"]
    assert step.reuses is None
    (last,) = [s for s in plan.steps if s.layer.name == total.name]
    assert last.reuses == 0  # (the Relu's array: new, dead after the Add)


def test_another_input_aliasing_it_through_a_view_keeps_it():
    b = IRBuilder()
    made = producer(b, "x", "f32", (3, 4))
    order = b.const("order", np.array([1, 0], np.int64))
    turned = b.layer("Transpose", "opset1", [made, order], out_specs=[("f32", [4, 3])])
    back = b.layer("Transpose", "opset1", [turned, order], out_specs=[("f32", [3, 4])])
    layer = b.layer("Add", "opset1", [made, back], attrs={"auto_broadcast": "numpy"}, name="under_test")
    check_in_place(b, layer, {"x": values("f32", (3, 4), 12)}, expect_reuse=False)


def test_a_chain_writes_one_array():
    b = IRBuilder()
    made = producer(b, "x", "f32", (2, 64))
    bias = b.const("bias", values("f32", (1, 64), 13))
    add = b.layer("Add", "opset1", [made, bias], attrs={"auto_broadcast": "numpy"})
    act = b.layer("HSwish", "opset4", [add])
    layer = b.layer("Multiply", "opset1", [act, add], attrs={"auto_broadcast": "numpy"}, name="under_test")
    check_in_place(b, layer, {"x": values("f32", (2, 64), 14)})  # (add is read by the Multiply: act is new)
    model = ir_runner.load(*b.build())
    plan = model.plan_for([np.zeros((2, 64), np.float32)])
    assert [step.reuses for step in plan.steps] == [None, 0, None, 0]


def test_a_read_only_or_strided_input_is_not_written(monkeypatch):
    """A kernel may return a read-only or non-contiguous array: the step then allocates."""
    from ir_runner.inplace import writing_into

    frozen = np.arange(6, dtype=np.float32)
    frozen.flags.writeable = False
    strided = np.arange(12, dtype=np.float32)[::2]
    for array in (frozen, strided):
        kept = array.copy()
        result = writing_into(np.negative, 0)(array)
        assert result is not array and same_bits(result, -kept) and same_bits(array, kept)
    fresh = np.arange(6, dtype=np.float32)
    assert writing_into(np.negative, 0)(fresh) is fresh


# -- whole models -----------------------------------------------------------------------------------------------


def corpus() -> list[tuple[Path, Path]]:
    samples = [(xml, xml.with_suffix(".inputs.npz")) for xml in sorted(MODELS.glob("*.xml"))]
    real = [(xml, xml.parent / "inputs.npz") for xml in sorted((MODELS / "real").glob("*/model.xml"))]
    return samples + real


@pytest.mark.parametrize(("xml", "inputs"), corpus(), ids=lambda p: p.parent.name if p.name == "model.xml" else p.stem)
def test_the_corpus_gives_the_same_bits_with_and_without_the_rule(xml, inputs, monkeypatch):
    feeds = load_npz(inputs)
    kept = {name: value.copy() for name, value in feeds.items()}
    model = ir_runner.load(xml)
    got = model.run(feeds)
    again = model.run(feeds)
    monkeypatch.setattr(plan_module, "reused_inputs", lambda steps_raw, *args: [None] * len(steps_raw))
    want = ir_runner.load(xml).run(feeds)
    for name in want:
        assert same_bits(got[name], want[name]) and same_bits(again[name], want[name]), name
        assert not any(np.may_share_memory(got[name], got[other]) for other in got if other != name)
    for name, value in feeds.items():
        assert same_bits(value, kept[name]), f"feed {name} was written"


def run_decoder(path: Path) -> list[np.ndarray]:
    """Three steps of the KV-cache decoder (residual Adds, attention) on one state."""
    model = ir_runner.load(path)
    state = model.new_state()
    outputs = []
    for step in range(3):
        feeds = {"input_ids": np.array([[3 + step, 5]], np.int64),
                 "attention_mask": np.ones((1, 2 * step + 2), np.int64),
                 "position_ids": np.array([[2 * step, 2 * step + 1]], np.int64), "beam_idx": np.array([0], np.int32)}
        outputs.append(model.run(feeds, state=state)["logits"])
    return outputs


def test_a_stateful_model_gives_the_same_bits_with_and_without_the_rule(tmp_path, monkeypatch):
    from tests.helpers.stateful_models import decoder

    path = decoder(tmp_path / "decoder.xml", layers=2)
    got = run_decoder(path)
    monkeypatch.setattr(plan_module, "reused_inputs", lambda steps_raw, *args: [None] * len(steps_raw))
    want = run_decoder(path)
    assert all(same_bits(g, w) for g, w in zip(got, want))


def loop_model(path: Path) -> Path:
    """A Loop of 3 iterations whose body computes ``relu(2 x) + x`` on the carried [2,3] (the Multiply and the
    Relu new arrays the next layers may take; the body's Parameter read twice)."""
    import openvino as ov
    from openvino import opset13

    x = opset13.parameter([2, 3], np.float32, name="x")
    inner = opset13.parameter([2, 3], np.float32, name="inner")
    doubled = opset13.relu(opset13.multiply(inner, opset13.constant(np.float32(2))))
    y = opset13.add(opset13.sigmoid(doubled), inner)
    results = [opset13.result(opset13.constant(np.array(True))), opset13.result(y)]
    loop = opset13.loop(opset13.constant(np.int64(3)), opset13.constant(np.array(True)))
    loop.set_function(ov.Model(results, [inner], "body"))
    loop.set_special_body_ports([-1, 0])
    loop.set_merged_input(inner, x.output(0), results[1].output(0))
    out = loop.get_iter_value(results[1].output(0), -1)
    ov.save_model(ov.Model([out], [x], "loop"), str(path), compress_to_fp16=False)
    return path


def test_a_loop_body_gives_the_same_bits_with_and_without_the_rule(tmp_path, monkeypatch):
    path = loop_model(tmp_path / "loop.xml")
    x = values("f32", (2, 3), 15)
    kept = x.copy()
    (got,) = ir_runner.load(path).run({"x": x}).values()
    monkeypatch.setattr(plan_module, "reused_inputs", lambda steps_raw, *args: [None] * len(steps_raw))
    (want,) = ir_runner.load(path).run({"x": x}).values()
    assert same_bits(got, want) and same_bits(x, kept)


def test_dask_blocks_are_not_written():
    dask_runner = pytest.importorskip("ir_runner.dask")
    import dask.array as da

    b = IRBuilder()
    made = producer(b, "x", "f32", ("?", 16))
    bias = b.const("bias", values("f32", (1, 16), 16))
    b.result(b.layer("Relu", "opset1", [b.layer("Add", "opset1", [made, bias], attrs={"auto_broadcast": "numpy"})],
                     name="out"))
    model = ir_runner.load(*b.build())
    x = values("f32", (40, 16), 17)
    kept = x.copy()
    (lazy,) = dask_runner.run(model, {"x": da.from_array(x, chunks=(10, 16))}).values()
    (want,) = model.run({"x": x}).values()
    assert same_bits(lazy.compute(scheduler="threads"), want)
    assert same_bits(x, kept)
