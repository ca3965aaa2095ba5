"""RandomUniform-8: shapes as OpenVINO infers them (constant, computed and unknown output shapes), refusals naming
the layer and port, values bit for bit against ``Node.evaluate`` (a fresh node's first evaluation) for every
output type and both alignments (tensorflow's Philox, pytorch's MT19937) over seeded random seeds, ranges and
shapes, and the deviations (every run draws from the initial state; both seeds 0 draw a fresh seed)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset3, opset8  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, IRError  # noqa: E402
from ir_runner.ops.generation._uniform import mt19937, philox  # noqa: E402
from ir_runner.ops.generation.random_uniform import OPS  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402

NP = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16, "f64": np.float64, "i32": np.int32,
      "i64": np.int64}
OV = {"f32": ov.Type.f32, "f16": ov.Type.f16, "bf16": ov.Type.bf16, "f64": ov.Type.f64, "i32": ov.Type.i32,
      "i64": ov.Type.i64}


def _model(tmp_path, shape, low, high, et="f32", seeds=(150, 10), alignment="tensorflow", const=True, name="m"):
    """RandomUniform of a constant (or Parameter) output shape and constant min and max."""
    params = []
    if const:
        shape_in = ov.op.Constant(ov.Type.i64, ov.Shape([len(shape)]), list(shape))
    else:
        shape_in = opset8.parameter([len(shape)], np.int64, name="shape")
        params.append(shape_in)
    bounds = [opset8.constant(np.array(v, NP[et])) if et != "bf16" else
              ov.op.Constant(ov.Type.bf16, ov.Shape([]), [float(v)]) for v in (low, high)]
    node = opset8.random_uniform(shape_in, *bounds, et, seeds[0], seeds[1], alignment)
    out = opset3.add(node, bounds[0]) if not params else node  # (a model needs a Parameter or a consumer)
    return write_ir(out if params else node, params, tmp_path, name), node


def _run(path, feeds=None):
    return list(ir_runner.load(str(path)).run(feeds or {}).values())[0]


@pytest.mark.parametrize("et", list(NP))
@pytest.mark.parametrize("alignment", ["tensorflow", "pytorch"])
def test_every_type_and_alignment_against_evaluate(et, alignment, tmp_path):
    low, high = (-3, 70000) if et in ("i32", "i64", "f64", "f32") else (-3, 9)
    path, _ = _model(tmp_path, [3, 7], low, high, et, (2**40 + 3, 77), alignment)
    check_inference(path)
    got = check_run(path, {})
    assert list(got.values())[0].dtype == NP[et]


@pytest.mark.parametrize("seed", range(24))
def test_random_seeds_ranges_and_shapes_against_evaluate(seed, tmp_path):
    rng = np.random.default_rng(seed)
    et = list(NP)[seed % len(NP)]
    alignment = ("tensorflow", "pytorch")[seed // len(NP) % 2]
    shape = [int(d) for d in rng.integers(0 if seed % 7 == 0 else 1, 6, int(rng.integers(0, 4)))]
    if et in ("i32", "i64"):
        low = int(rng.integers(-2**20, 2**20))
        high = low + int(rng.integers(1, 2**31 - 2**21 if et == "i32" else 2**40))
    else:
        low = float(rng.uniform(-100, 100))
        high = low + float(rng.uniform(0.5, 50))
    seeds = (int(rng.integers(0, 2**63)), int(rng.integers(0, 2**63))) if seed % 3 else (int(rng.integers(1, 9)), 0)
    path, _ = _model(tmp_path, shape, low, high, et, seeds, alignment)
    check_run(path, {})


@pytest.mark.parametrize("alignment", ["tensorflow", "pytorch"])
def test_negative_seeds_wrap_to_uint64(alignment, tmp_path):
    """OpenVINO's IR reader takes seeds as int64 and holds them as uint64: a negative seed wraps."""
    path, _ = _model(tmp_path, [5, 3], -1.0, 1.0, "f32", (123, 456), alignment)
    text = path.read_text()
    assert 'global_seed="123"' in text and 'op_seed="456"' in text
    path.write_text(text.replace('global_seed="123"', 'global_seed="-5"')
                    .replace('op_seed="456"', f'op_seed="{-(2**63)}"'))
    check_run(path, {})


def test_seeds_beyond_int64_are_refused_as_openvino_refuses_them(tmp_path):
    path, _ = _model(tmp_path, [2], 0.0, 1.0)
    path.write_text(path.read_text().replace('global_seed="150"', f'global_seed="{2**63}"'))
    with pytest.raises(IRError, match="int64"):
        ir_runner.load(str(path))


def test_i64_from_two_words_in_pytorch_alignment(tmp_path):
    """min or max beyond 2**32: PyTorch (and OpenVINO) build each i64 from two words."""
    path, _ = _model(tmp_path, [9], -5, 2**40, "i64", (3, 0), "pytorch")
    check_run(path, {})


def test_philox_known_answer():
    """Philox-4x32-10 of the Random123 known-answer test (counter 0, key 0)."""
    assert philox(1, 0, 0)[0].tolist() == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]


def test_mt19937_known_answer():
    """The first output of MT19937 seeded 5489 (its reference value)."""
    assert int(mt19937(1, 5489)[0]) == 3499211612


def test_every_run_draws_from_the_initial_state(tmp_path):
    """OpenVINO's node continues its sequence on each evaluation; ir-run's runs all give the first draw."""
    path, _ = _model(tmp_path, [4, 4], 0.0, 1.0)
    model = ir_runner.load(str(path))
    first, second = (list(model.run({}).values())[0] for _ in range(2))
    np.testing.assert_array_equal(first, second)


def test_both_seeds_zero_draw_a_fresh_seed(tmp_path):
    """Per run when the output shape is computed at run time; once per load when every input is constant (the
    layer is then evaluated at load, as constant layers are)."""
    path, _ = _model(tmp_path, [64], 2.0, 3.0, seeds=(0, 0), const=False)
    model = ir_runner.load(str(path))
    feeds = {"shape": np.array([64], np.int64)}
    first, second = (list(model.run(feeds).values())[0] for _ in range(2))
    assert not np.array_equal(first, second)
    assert ((first >= 2) & (first < 3)).all() and first.dtype == np.float32
    path, _ = _model(tmp_path, [64], 2.0, 3.0, seeds=(0, 0), name="folded")
    once, again = (_run(path) for _ in range(2))
    assert not np.array_equal(once, again)


@pytest.mark.parametrize("shape", [[2, 3], [0], [], [4, 1, 2]])
def test_shape_from_a_parameter_is_planned_per_value(shape, tmp_path):
    path, node = _model(tmp_path, shape, 0.0, 1.0, const=False)
    check_inference(path)
    check_output_shapes(path, node)
    assert _run(path, {"shape": np.array(shape, np.int64)}).shape == tuple(shape)


def test_shape_from_shape_of(tmp_path):
    """torch.rand_like's pattern: the output shape is the ShapeOf of a tensor (bounds propagate)."""
    x = opset8.parameter(ov.PartialShape([ov.Dimension(1, 4), 3]), np.float32, name="x")
    node = opset8.random_uniform(opset3.shape_of(x), np.float32(0), np.float32(1), "f32", 5, 6)
    out = opset3.add(x, node)
    path = write_ir(out, [x], tmp_path)
    check_inference(path)
    check_output_shapes(path, out)
    check_run(path, {"x": np.ones((2, 3), np.float32)})


def _ir(tmp_path, shape_type="i64", shape_dims="2", et="f32", low="0", high="1", attrs=None, bound_dims=("", "")):
    b = IRBuilder()
    shape = b.parameter("shape", shape_type, shape_dims)
    bounds = [b.const(f"b{i}", np.full([int(d)] if d else [], float(v), np.float32 if et == "f32" else np.float16))
              for i, (v, d) in enumerate(zip((low, high), bound_dims))]
    data = {"output_type": et, "global_seed": "1", "op_seed": "2", **(attrs or {})}
    b.result(b.layer("RandomUniform", "opset8", [shape, *bounds], attrs=data,
                     out_specs=[(et.upper() if et != "f32" else "FP32", [-1, -1])]))
    return str(b.write(tmp_path))


@pytest.mark.parametrize("kwargs, error, what, port", [
    ({"low": "1", "high": "1"}, InferenceError, "min must be less than max", "min"),
    ({"low": "2", "high": "1"}, InferenceError, "min must be less than max", "min"),
    ({"shape_dims": "2,1"}, InferenceError, "output_shape must be 1-D", "output_shape"),
    ({"shape_type": "f32"}, InferenceError, "i32 or i64", "output_shape"),
    ({"bound_dims": ("2", "")}, InferenceError, "scalar or have one element", "min"),
    ({"attrs": {"output_type": "f16"}}, InferenceError, "output type", "min"),
    ({"attrs": {"output_type": "u8"}}, IRError, "output_type", None),
    ({"attrs": {"alignment": "numpy"}}, IRError, "alignment", None),
])
def test_bad_layers_name_layer_and_port(kwargs, error, what, port, tmp_path):
    with pytest.raises(error, match=what) as info:
        ir_runner.load(_ir(tmp_path, **kwargs))
    assert "RandomUniform-8" in str(info.value)
    if port:
        assert f"({port})" in str(info.value)


def test_batch_rule_refuses():
    assert "generator" in OPS[0].batch({}, [], [None], [None, None, None])
