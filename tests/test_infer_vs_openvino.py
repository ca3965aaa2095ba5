"""ir-run's inferred types and partial shapes agree with OpenVINO's on random Select/Gather models.

Each case builds a small valid model with the real ``openvino`` Python API (random static,
interval, unbounded and dynamic-rank shapes; every Select broadcast mode; Gather-1/7/8 with
random axis, batch_dims and index types), saves it with ``openvino.save_model`` and loads the
file with ``ir_runner.load``. The seeds are fixed, so every case is reproducible by its id.
"""

from __future__ import annotations

import random

import numpy as np
import openvino as ov
import openvino.opset1 as ops1
import openvino.opset7 as ops7
import openvino.opset8 as ops8
import pytest
from openvino.utils.node_factory import NodeFactory

import ir_runner

N_SELECT = 300
N_GATHER = 400
N_CHAIN = 100

DATA_TYPES = ["f32", "f16", "bf16", "f64", "i8", "i32", "i64", "u8", "u64", "boolean"]


def relax(rng: random.Random, d: int) -> ov.Dimension:
    """A random partial dimension that still admits the static value ``d``."""
    r = rng.random()
    if r < 0.6:
        return ov.Dimension(d)
    if r < 0.75:
        return ov.Dimension()
    if r < 0.85:
        return ov.Dimension(max(0, d - rng.randint(0, 2)), d + rng.randint(0, 3))
    if r < 0.93:
        return ov.Dimension(max(0, d - rng.randint(0, 2)), -1)
    return ov.Dimension(-1, d + rng.randint(0, 3))


def partial(rng: random.Random, dims: list[int], p_dynamic_rank: float = 0.05) -> ov.PartialShape:
    """A random relaxation of the static shape ``dims``."""
    if rng.random() < p_dynamic_rank:
        return ov.PartialShape.dynamic()
    return ov.PartialShape([relax(rng, d) for d in dims])


def param(rng: random.Random, dims: list[int], et: str, name: str) -> ov.Node:
    """A Parameter whose shape relaxes ``dims``."""
    return ops1.parameter(partial(rng, dims), getattr(ov.Type, et), name=name)


def with_ones(rng: random.Random, dims: list[int], p: float = 0.3) -> list[int]:
    """``dims`` with some entries replaced by 1."""
    return [1 if rng.random() < p else d for d in dims]


def random_select(rng: random.Random, prefix: str = "") -> tuple[ov.Node, list[ov.Node]]:
    """A random valid Select-1 over fresh Parameters; returns the node and its Parameters."""
    mode = rng.choice(["numpy", "numpy", "numpy", "none", "pdpd", "pdpd"])
    et = rng.choice(DATA_TYPES)
    rank = rng.randint(0, 4)
    if mode == "pdpd":
        out = [rng.randint(1, 4) for _ in range(rank)]
        axis = rng.choice([-1, 0] + list(range(rank + 1)))

        def window() -> list[int]:
            if axis == -1:
                k = rng.randint(0, rank)
                return with_ones(rng, out[rank - k :])
            k = rng.randint(0, rank - axis)
            return with_ones(rng, out[axis : axis + k])

        shapes = [window(), out, window()]
    else:
        out = [rng.choice([0, 1, 2, 3, 5]) if rng.random() < 0.1 else rng.randint(1, 5) for _ in range(rank)]
        if mode == "none":
            shapes = [out, out, out]
        else:
            shapes = [with_ones(rng, out[rank - rng.randint(0, rank) :]) for _ in range(3)]
            shapes[rng.randrange(3)] = out
    ets = ["boolean", et, et]
    params = [param(rng, s, t, f"{prefix}{n}") for s, t, n in zip(shapes, ets, ("cond", "then", "else"))]
    if mode == "pdpd":
        attrs = {"auto_broadcast": "pdpd", "auto_broadcast.auto_broadcast_axis": axis}
        node = NodeFactory("opset1").create("Select", [p.output(0) for p in params], attrs)
    else:
        node = ops1.select(*params, auto_broadcast=mode)
    return node, params


def random_gather(rng: random.Random, data: ov.Output | None = None, data_dims: list[int] | None = None):
    """A random valid Gather-1/7/8 whose data is ``data`` (or a fresh Parameter); returns (node, new Parameters)."""
    version = rng.choice([1, 7, 8])
    new_params = []
    if data is None:
        rank = rng.randint(1, 4)
        data_dims = [rng.choice([0, 1]) if rng.random() < 0.05 else rng.randint(1, 5) for _ in range(rank)]
        node = param(rng, data_dims, rng.choice(DATA_TYPES), "data")
        new_params.append(node)
        data = node.output(0)
    rank = len(data_dims)
    batch_dims = 0 if version == 1 else rng.randint(0, min(rank - 1, 2))
    axis = rng.randint(batch_dims, rank - 1)
    idx_rank = rng.randint(batch_dims, batch_dims + 2)
    idx_dims = data_dims[:batch_dims] + [rng.randint(1, 4) for _ in range(idx_rank - batch_dims)]
    idx_et = rng.choice(["i32", "i64", "i64", "i32", "u8", "i8", "u64"])
    indices = param(rng, idx_dims, idx_et, "indices")
    new_params.append(indices)
    axis_value = axis - rank if rng.random() < 0.5 else axis
    axis_dtype = rng.choice([np.int32, np.int64])
    axis_shape = rng.choice([(), (1,)])
    axis_node = ops1.constant(np.full(axis_shape, axis_value, dtype=axis_dtype))
    if rng.random() < 0.2:
        axis_node = ops1.convert(axis_node, rng.choice(["i32", "i64"]))
    if version == 1:
        node = ops1.gather(data, indices, axis_node)
    else:
        bd = batch_dims - idx_rank if rng.random() < 0.4 else batch_dims
        node = (ops7 if version == 7 else ops8).gather(data, indices, axis_node, batch_dims=bd)
    return node, new_params


def check_against_openvino(ov_model: ov.Model, tmp_path) -> None:
    """Save ``ov_model``, load it with ir_runner, compare every input and output spec."""
    path = tmp_path / "model.xml"
    ov.save_model(ov_model, str(path), compress_to_fp16=False)
    model = ir_runner.load(path)
    assert len(model.outputs) == len(ov_model.outputs)
    pairs = list(zip(model.inputs, ov_model.inputs)) + list(zip(model.outputs, ov_model.outputs))
    for ours, theirs in pairs:
        expected = (str(theirs.get_partial_shape()), theirs.get_element_type().get_type_name())
        assert (str(ours.partial_shape), ours.element_type) == expected, ours.name


@pytest.mark.parametrize("seed", range(N_SELECT))
def test_select_matches_openvino(seed, tmp_path):
    """A random Select-1 model: ir-run infers what OpenVINO infers."""
    rng = random.Random(f"select-{seed}")
    node, params = random_select(rng)
    check_against_openvino(ov.Model([ops1.result(node)], params, "select"), tmp_path)


@pytest.mark.parametrize("seed", range(N_GATHER))
def test_gather_matches_openvino(seed, tmp_path):
    """A random Gather-1/7/8 model: ir-run infers what OpenVINO infers."""
    rng = random.Random(f"gather-{seed}")
    node, params = random_gather(rng)
    check_against_openvino(ov.Model([ops1.result(node)], params, "gather"), tmp_path)


@pytest.mark.parametrize("seed", range(N_CHAIN))
def test_select_then_gather_matches_openvino(seed, tmp_path):
    """Select feeding Gather, both outputs kept: inferred specs propagate like OpenVINO's."""
    rng = random.Random(f"chain-{seed}")
    while True:
        sel, params = random_select(rng, prefix="s_")
        pshape = sel.get_output_partial_shape(0)
        if pshape.rank.is_static and pshape.rank.get_length() > 0:
            break
    # Gather's generator needs static dims for batch_dims: pick a value each dim admits.
    dims = [d.get_length() if d.is_static else max(d.get_min_length(), 1) for d in pshape]
    gather, more = random_gather(rng, sel.output(0), dims)
    model = ov.Model([ops1.result(sel), ops1.result(gather)], params + more, "chain")
    check_against_openvino(model, tmp_path)
