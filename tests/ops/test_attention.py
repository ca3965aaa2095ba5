"""ScaledDotProductAttention-13: shapes (broadcast batch dims, dynamic dims and ranks, masks of every rank, as
OpenVINO's type_prop tests), values against the CPU plugin (the core node has no evaluate) within the stated
bound, causal, boolean and float masks, the scale input, and seeded random graphs."""

from __future__ import annotations

import re

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset13  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import IRError  # noqa: E402
from tests.helpers.cpu_oracle import check_run_cpu  # noqa: E402
from tests.helpers.optest import check_inference, write_ir  # noqa: E402

RTOL, ATOL = 1e-5, 1e-6


def _p(name, shape, et=ov.Type.f32):
    return opset13.parameter(ov.PartialShape(shape), et, name=name)


@pytest.mark.parametrize("q, k, v, m", [
    ([2, 4, 7, 8], [2, 4, 9, 8], [2, 4, 9, 16], None),
    ([2, 4, 7, 8], [2, 1, 9, 8], [1, 4, 9, 16], [1, 1, 7, 9]),
    ([2, 4, 7, 8], [2, 4, 9, 8], [2, 4, 9, 16], [7, 9]),
    ([2, 4, 7, 8], [2, 4, 9, 8], [2, 4, 9, 16], [2, 4, 1, 9]),
    ([-1, 4, -1, 8], [-1, 4, -1, 8], [-1, 4, -1, 5], [-1, 1, -1, -1]),
    ([-1, -1, -1, -1], [-1, -1, -1, -1], [-1, -1, -1, -1], None),
    ([4, 7, 8], [4, 9, 8], [4, 9, 16], []),
    ([1, 2, 3, 7, 8], [3, 9, 8], [2, 1, 9, 16], None),
    ([-1, -1, -1], [2, 5, 3], [2, 5, 4], [2, 6, 5]),
], ids=str)
def test_shapes(q, k, v, m, tmp_path):
    params = [_p("q", q), _p("k", k), _p("v", v)] + ([] if m is None else [_p("m", m)])
    node = opset13.scaled_dot_product_attention(*params)
    check_inference(write_ir(node, params, tmp_path))


def test_dynamic_rank_and_scale(tmp_path):
    params = [_p("q", ov.PartialShape.dynamic()), _p("k", [2, 4, 9, 8]), _p("v", [2, 4, 9, 16]),
              _p("m", [1, 9], ov.Type.boolean), _p("s", [1])]
    check_inference(write_ir(opset13.scaled_dot_product_attention(*params), params, tmp_path))


def test_causal_ignores_the_mask_shape(tmp_path):
    params = [_p("q", [2, 7, 8]), _p("k", [2, 9, 8]), _p("v", [2, 9, 4]), _p("m", [2, 5, 5])]
    path = write_ir(opset13.scaled_dot_product_attention(*params, causal=True), params, tmp_path)
    check_inference(path)


@pytest.mark.parametrize("old, new", [("<dim>9</dim>", "<dim>10</dim>"), ("<dim>8</dim>", "<dim>3</dim>")])
def test_mismatched_dims_are_errors(old, new, tmp_path):
    params = [_p("q", [2, 7, 8]), _p("k", [2, 9, 8]), _p("v", [2, 9, 4])]
    path = write_ir(opset13.scaled_dot_product_attention(*params), params, tmp_path)
    text = path.read_text()
    # change the value's S (second port of the layer) or key's E
    head, sep, tail = text.partition('type="ScaledDotProductAttention"')
    ports = tail.split("<port")
    target = 3 if old == "<dim>9</dim>" else 2
    ports[target] = ports[target].replace(old, new, 1)
    path.write_text(head + sep + "<port".join(ports))
    with pytest.raises(IRError):
        ir_runner.load(str(path))


def _feeds(rng, shapes, mask_type=None):
    feeds = {name: rng.standard_normal(shape).astype(np.float32) for name, shape in shapes.items() if name != "m"}
    if "m" in shapes:
        if mask_type == "bool":
            feeds["m"] = rng.random(shapes["m"]) < 0.7
            feeds["m"][..., 0] = True  # no row masked everywhere
        else:
            feeds["m"] = (rng.standard_normal(shapes["m"]) * 2).astype(np.float32)
    return feeds


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("mask", [None, "bool", "float"])
@pytest.mark.parametrize("with_scale", [False, True])
def test_values(causal, mask, with_scale, tmp_path):
    rng = np.random.default_rng(3)
    shapes = {"q": (2, 3, 5, 8), "k": (2, 3, 6, 8), "v": (2, 3, 6, 4)}
    if mask:
        shapes["m"] = (1, 3, 5, 6)
    params = [_p(n, s, ov.Type.boolean if n == "m" and mask == "bool" else ov.Type.f32) for n, s in shapes.items()]
    args = list(params)
    if with_scale:
        if not mask:
            args.append(opset13.constant(np.float32(0)))  # a scalar 0 mask: no mask
        args.append(opset13.constant(np.float32(0.3)))
    path = write_ir(opset13.scaled_dot_product_attention(*args, causal=causal), params, tmp_path)
    check_inference(path)
    check_run_cpu(path, _feeds(rng, shapes, mask), rtol=RTOL, atol=ATOL)


def test_broadcast_batch_dims(tmp_path):
    """Grouped-query style: key and value with one head broadcast over the query's four."""
    rng = np.random.default_rng(5)
    shapes = {"q": (2, 4, 5, 8), "k": (2, 1, 7, 8), "v": (1, 1, 7, 3), "m": (7,)}
    shapes["m"] = (2, 1, 1, 7)
    params = [_p(n, s) for n, s in shapes.items()]
    path = write_ir(opset13.scaled_dot_product_attention(*params), params, tmp_path)
    check_inference(path)
    check_run_cpu(path, _feeds(rng, shapes, "float"), rtol=RTOL, atol=ATOL)


def test_masked_row_is_nan(tmp_path):
    """A row masked everywhere: softmax over -inf only, NaN (the specification's formula)."""
    params = [_p("q", (1, 2, 4)), _p("k", (1, 3, 4)), _p("v", (1, 3, 2)), _p("m", (1, 2, 3), ov.Type.boolean)]
    path = write_ir(opset13.scaled_dot_product_attention(*params), params, tmp_path)
    rng = np.random.default_rng(0)
    feeds = _feeds(rng, {"q": (1, 2, 4), "k": (1, 3, 4), "v": (1, 3, 2)})
    feeds["m"] = np.array([[[True, False, True], [False, False, False]]])
    got = next(iter(ir_runner.load(str(path)).run(feeds).values()))
    assert np.isnan(got[0, 1]).all() and np.isfinite(got[0, 0]).all()


def test_f16(tmp_path):
    rng = np.random.default_rng(9)
    shapes = {"q": (1, 2, 5, 8), "k": (1, 2, 5, 8), "v": (1, 2, 5, 8)}
    params = [_p(n, s, ov.Type.f16) for n, s in shapes.items()]
    path = write_ir(opset13.scaled_dot_product_attention(*params, causal=True), params, tmp_path)
    check_inference(path)
    feeds = {n: rng.standard_normal(s).astype(np.float16) for n, s in shapes.items()}
    check_run_cpu(path, feeds, rtol=1e-2, atol=2e-3)


@pytest.mark.parametrize("seed", range(16))
def test_random_attention(seed, tmp_path):
    rng = np.random.default_rng(seed)
    nb = int(rng.integers(1, 3))
    batch = [int(n) for n in rng.integers(1, 4, size=nb)]
    big_l, big_s, e, ev = (int(n) for n in rng.integers(1, 9, size=4))

    def some_ones(dims):
        return [1 if rng.random() < 0.3 else d for d in dims]

    shapes = {"q": tuple(batch + [big_l, e]), "k": tuple(some_ones(batch) + [big_s, e]),
              "v": tuple(some_ones(batch) + [big_s, ev])}
    mask = str(rng.choice(["none", "bool", "float"]))
    if mask != "none":
        shapes["m"] = tuple(some_ones(batch) + [1 if rng.random() < 0.3 else big_l, big_s])
    params = [_p(n, s, ov.Type.boolean if n == "m" and mask == "bool" else ov.Type.f32) for n, s in shapes.items()]
    path = write_ir(opset13.scaled_dot_product_attention(*params, causal=bool(rng.random() < 0.3)), params, tmp_path)
    check_inference(path)
    check_run_cpu(path, _feeds(rng, shapes, mask), rtol=RTOL, atol=1e-5)


def test_batch_rule():
    from ir_runner.ops.linalg.attention import OPS
    from ir_runner.types import PartialShape, TensorSpec, element_type

    def spec(*dims):
        return TensorSpec(element_type("f32"), PartialShape.of(dims))

    rule = OPS[0].batch
    q, k, out = spec(2, 4, 5, 8), spec(4, 7, 8), spec(2, 4, 5, 8)
    assert rule({}, [q, k, k], [out], [0, None, None]) == [0]
    assert rule({}, [q, k, k], [out], [1, 0, 0]) == [1]  # key's axis 0 aligns with the output's axis 1
    assert isinstance(rule({}, [q, k, k], [out], [0, 0, None]), str)
    assert isinstance(rule({}, [q, k, k], [out], [2, None, None]), str)  # L


# ---------------------------------------------------------------- the sink input (attention sinks, gpt-oss)


def _dims(shape) -> str:
    return shape if isinstance(shape, str) else ",".join(map(str, shape))


def _sink_layer(shapes: dict, *, causal=False, mask=None, sink_value=None, sink_type="f32", out_dims=None):
    """The IR (xml, weights) of an SDPA with a sixth input ``sink``: a Parameter, or a Const ``sink_value``
    (the Python API has no sink argument)."""
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder()
    q, k, v = (b.parameter(n, "f32", _dims(shapes[n])) for n in ("q", "k", "v"))
    m = b.parameter("m", "boolean" if mask == "bool" else "f32", _dims(shapes["m"])) if mask else \
        b.const("m", np.float32(0))
    scale = b.const("scale", np.float32(0.5))
    sink = b.const("sink", sink_value) if sink_value is not None else \
        b.parameter("sink", sink_type, _dims(shapes["sink"]))
    b.result(b.layer("ScaledDotProductAttention", "opset13", [q, k, v, m, scale, sink],
                     attrs={"causal": str(causal).lower()}, out_specs=[("FP32", out_dims)]))
    return b.build()


def _sink_ir(tmp_path, shapes: dict, **options):
    """:func:`_sink_layer` read and re-saved by OpenVINO (the IR's ports then declare what OpenVINO infers)."""
    from tests.helpers.irbuild import read_with_openvino

    path = tmp_path / "sink.xml"
    ov.save_model(read_with_openvino(*_sink_layer(shapes, **options)), str(path), compress_to_fp16=False)
    return path


@pytest.mark.parametrize("sink_shape", [(1, 4, 1, 1), (2, 4, 5, 1), (2, 1, 1, 1), (1, 1, 5, 1)], ids=str)
@pytest.mark.parametrize("mask", [None, "bool", "float", "causal"])
def test_sink_values(sink_shape, mask, tmp_path):
    """The sink joins each row's softmax: large sinks (near log S) take a visible share of every row."""
    rng = np.random.default_rng(11)
    shapes = {"q": (2, 4, 5, 8), "k": (2, 4, 6, 8), "v": (2, 4, 6, 4), "sink": sink_shape}
    if mask in ("bool", "float"):
        shapes["m"] = (1, 1, 5, 6)
    path = _sink_ir(tmp_path, shapes, causal=mask == "causal", mask=mask if mask != "causal" else None)
    check_inference(path)
    feeds = _feeds(rng, {n: s for n, s in shapes.items() if n != "sink"}, mask)
    feeds["sink"] = (np.log(6) + rng.standard_normal(sink_shape)).astype(np.float32)
    got = check_run_cpu(path, feeds, rtol=RTOL, atol=ATOL)
    feeds["sink"] = np.full(sink_shape, -np.inf, np.float32)  # a sink of -inf takes no share: plain attention
    without = next(iter(ir_runner.load(str(path)).run(feeds).values()))
    assert not np.allclose(next(iter(got.values())), without, rtol=1e-2)


def test_sink_const_as_gpt_oss_exports(tmp_path):
    """gpt-oss: a per-head Const [1, H, 1, 1], key and value broadcast over the query's heads."""
    rng = np.random.default_rng(2)
    shapes = {"q": (1, 4, 3, 16), "k": (1, 4, 7, 16), "v": (1, 4, 7, 16), "m": (1, 1, 3, 7)}
    path = _sink_ir(tmp_path, shapes, mask="float", sink_value=rng.standard_normal((1, 4, 1, 1)).astype(np.float32))
    check_inference(path)
    check_run_cpu(path, _feeds(rng, shapes, "float"), rtol=RTOL, atol=ATOL)


def test_sink_with_a_row_masked_everywhere_gives_zeros(tmp_path):
    shapes = {"q": (1, 1, 2, 4), "k": (1, 1, 3, 4), "v": (1, 1, 3, 2), "m": (1, 1, 2, 3), "sink": (1, 1, 1, 1)}
    path = _sink_ir(tmp_path, shapes, mask="bool")
    feeds = _feeds(np.random.default_rng(0), {n: s for n, s in shapes.items() if n not in ("m", "sink")})
    feeds["m"] = np.array([[[[True, False, True], [False, False, False]]]])
    feeds["sink"] = np.ones((1, 1, 1, 1), np.float32)
    got = next(iter(check_run_cpu(path, feeds, rtol=RTOL, atol=ATOL).values()))
    assert (got[0, 0, 1] == 0).all() and (got[0, 0, 0] != 0).all()


@pytest.mark.parametrize("sink_shape", ["1,4,1,1", "?,?,?,?", "1,4,3,1", "1,1,1,1", "..."])
def test_sink_shapes_openvino_accepts(sink_shape, tmp_path):
    check_inference(_sink_ir(tmp_path, {"q": (1, 4, 3, 8), "k": (1, 4, 5, 8), "v": (1, 4, 5, 8), "sink": sink_shape}))


@pytest.mark.parametrize("sink_shape, message", [
    ("4,1,1", "the sink must have the query's rank 4, got [4,1,1]"),
    ("1,4,1,1,1", "the sink must have the query's rank 4"),
    ("1,4,1,2", "the sink's last dim must be 1, got [1,4,1,2]"),
    ("1,3,1,1", "the sink [1,3,1,1] does not broadcast to [N..,L,1] = [1,4,3,1]"),
    ("1,4,2,1", "does not broadcast"),
])
def test_sink_shape_errors(sink_shape, message):
    """Shapes OpenVINO refuses too (rank, last dim, a head count or L that differs)."""
    from tests.helpers.irbuild import read_with_openvino

    xml, weights = _sink_layer({"q": "1,4,3,8", "k": "1,4,5,8", "v": "1,4,5,8", "sink": sink_shape},
                               out_dims=[1, 4, 3, 8])
    with pytest.raises(Exception, match="[Ss]ink"):
        read_with_openvino(xml, weights)
    with pytest.raises(IRError, match=re.escape(message)) as caught:
        ir_runner.load(xml, weights)
    assert "sink" in str(caught.value) and "ScaledDotProductAttention-13" in str(caught.value)


def test_sink_must_have_the_attention_type():
    layer = _sink_layer({"q": "1,2,3,4", "k": "1,2,3,4", "v": "1,2,3,4", "sink": "1,2,1,1"}, sink_type="f16",
                        out_dims=[1, 2, 3, 4])
    with pytest.raises(IRError, match="f16"):
        ir_runner.load(*layer)


@pytest.mark.parametrize("mask_shape,wrong", [("1,1,1,12", "the last of the mask"), ("1,1,1,1", None)])
def test_a_mask_wider_than_the_key_is_refused_before_the_kernel(mask_shape, wrong):
    """One token (key S=1) against an attention_mask of 12 (a T5 or Llama export fed input_ids [1,1] and an
    attention_mask [1,12]): the mask widened S and the kernel failed (KernelError, exit 7); a mask S of 1
    broadcasts."""
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder()
    q, k, v = (b.parameter(name, "f32", "1,2,?,8") for name in "qkv")
    mask = b.parameter("mask", "f32", "1,1,?,?")
    b.result(b.layer("ScaledDotProductAttention", "opset13", [q, k, v, mask], attrs={"causal": "false"},
                     out_specs=[("FP32", [1, 2, -1, 8])]))
    model = ir_runner.load(*b.build())
    feeds = {name: np.ones((1, 2, 1, 8), np.float32) for name in "qkv"}
    feeds["mask"] = np.zeros(tuple(int(d) for d in mask_shape.split(",")), np.float32)
    if wrong is None:
        (out,) = model.run(feeds).values()
        assert np.array_equal(out, feeds["v"])
        return
    with pytest.raises(ir_runner.InputError, match=f"S .*{wrong}.* differ: 1 and 12"):
        model.run(feeds)


@pytest.mark.parametrize("causal", ["false", "true"])
def test_an_empty_key_is_refused_before_the_kernel(causal):
    """S = 0 (an empty key and value) leaves each query row nothing to attend to: the kernel failed on the
    maximum of no logits (KernelError, exit 7); OpenVINO's CPU plugin returns uninitialised memory."""
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder()
    q = b.parameter("q", "f32", "1,1,2,4")
    k, v = (b.parameter(name, "f32", "1,1,?,4") for name in "kv")
    b.result(b.layer("ScaledDotProductAttention", "opset13", [q, k, v], attrs={"causal": causal},
                     out_specs=[("FP32", [1, 1, 2, 4])]))
    model = ir_runner.load(*b.build())
    feeds = {"q": np.ones((1, 1, 2, 4), np.float32), "k": np.ones((1, 1, 0, 4), np.float32),
             "v": np.ones((1, 1, 0, 4), np.float32)}
    with pytest.raises(ir_runner.InputError, match="S .* is 0"):
        model.run(feeds)
    feeds["k"] = feeds["v"] = np.ones((1, 1, 3, 4), np.float32)
    (out,) = model.run(feeds).values()
    assert np.array_equal(out, np.ones((1, 1, 2, 4), np.float32))


def test_no_query_rows_and_no_keys_give_an_empty_result():
    """L = 0 and S = 0 (an empty sequence through an encoder): an empty output, as every row's attention is
    empty; the kernel failed on the maximum of a zero-size row (found by the mutation fuzzer on t5_encoder)."""
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder()
    q, k, v = (b.parameter(name, "f32", "1,2,?,8") for name in "qkv")
    b.result(b.layer("ScaledDotProductAttention", "opset13", [q, k, v], attrs={"causal": "false"},
                     out_specs=[("FP32", [1, 2, -1, 8])]))
    model = ir_runner.load(*b.build())
    (out,) = model.run({name: np.ones((1, 2, 0, 8), np.float32) for name in "qkv"}).values()
    assert out.shape == (1, 2, 0, 8) and out.dtype == np.float32
