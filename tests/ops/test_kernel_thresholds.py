"""Select, Gather and Convert with the kernels' size thresholds lowered, so that their chunked, blocked and
threaded paths run on small tensors: random models, strict Gather, and every f16 bit pattern, each run through
``ir_runner.load(...).run`` and compared bit for bit with OpenVINO's reference (``Node.evaluate``, through
``tests/helpers/ov_random.py``'s helpers)."""

from __future__ import annotations

import random

import numpy as np
import openvino as ov
import pytest
from openvino import opset1, opset7, opset8

import ir_runner
from ir_runner import parallel
from ir_runner.ops import api
from ir_runner.ops.elementwise import select
from ir_runner.ops.indexing import gather
from tests.helpers import ov_random as tv
from tests.helpers.reference_runs import check_every_way, strided

THRESHOLDS = {  # (module, name): (tiny, small); "_WORKERS": 3 threads even on a machine with fewer cores
    (parallel, "PARALLEL_MIN_ELEMENTS"): (2, 2000),
    (parallel, "_WORKERS"): (3, 3),
    (gather, "PARALLEL_MIN_ELEMENTS"): (2, 2000),
    (gather, "RANDOM_READ_PARALLEL_MIN_ELEMENTS"): (2, 200),
    (gather, "_INDEX_CHUNK"): (3, 70),
    (select, "BITSELECT_MIN_ELEMENTS"): (1, 1000),
    (select, "ROW_MIN_BYTES"): (1, 32),
    (select, "_CHUNK"): (5, 700),
    (api, "_QUIET_CHUNK"): (2, 900),
}


@pytest.fixture
def tiny_thresholds(monkeypatch):
    """Every chunked, blocked and threaded kernel path taken on tensors of a few elements."""
    for (module, name), (tiny, _) in THRESHOLDS.items():
        monkeypatch.setattr(module, name, tiny)


@pytest.fixture
def small_thresholds(monkeypatch):
    """The same paths on tensors of thousands of elements, in blocks of hundreds."""
    for (module, name), (_, small) in THRESHOLDS.items():
        monkeypatch.setattr(module, name, small)


# ----------------------------------------------------------------------------- random models, every path

# (the "round4-..." seed strings name the review these cases came from; they fix the random cases)


@pytest.mark.usefixtures("tiny_thresholds")
@pytest.mark.parametrize("seed", range(60))
@pytest.mark.parametrize("kind", ["select", "gather", "convert"])
def test_random_models_on_every_kernel_path(kind, seed, tmp_path):
    """test_vs_openvino's random models (every broadcast mode, batch_dims, index and element type) with the
    thresholds lowered: blocked bit-selects, row copies, chunked and threaded takes, chunked f16 quietening."""
    rng = random.Random(f"round4-{kind}-{seed}")
    inputs = tv.Inputs(rng)
    make = {"select": tv.random_select, "gather": tv.random_gather, "convert": tv.random_convert}[kind]
    check_every_way(tv.single(make(rng, inputs), inputs, kind), inputs.feeds, tmp_path)


@pytest.mark.usefixtures("tiny_thresholds")
@pytest.mark.parametrize("seed", range(80))
def test_strict_gather_refuses_exactly_the_indices_outside_the_spec(seed, tmp_path):
    """Random Gather models in strict mode: an IndexOutOfRangeError exactly when an index value is outside
    ``[0, dim-1]`` (Gather-1/7) or ``[-dim, dim-1]`` (Gather-8), else the reference result."""
    rng = random.Random(f"round4-strict-{seed}")
    inputs = tv.Inputs(rng)
    node = tv.random_gather(rng, inputs)
    source = node.input_value(1).get_node()
    if source.get_type_name() == "Parameter":
        indices = inputs.feeds[source.get_friendly_name()]
    else:  # i4/u4 unpacked
        indices = tv.from_tensor(source.get_output_element_type(0).get_type_name(), source.get_tensor_view())
    dim = node.get_input_shape(0)[int(node.input_value(2).get_node().get_data().reshape(-1)[0])]
    low = -dim if node.get_type_info().version_id == "opset8" else 0
    outside = any(not low <= int(v) < dim for v in np.asarray(indices).reshape(-1).astype(object))
    model = tv.single(node, inputs, "gather")
    if outside:
        path = tmp_path / "model.xml"
        ov.save_model(model, str(path), compress_to_fp16=False)
        with pytest.raises(ir_runner.IndexOutOfRangeError, match="strict mode"):
            ir_runner.load(path, strict=True).run({k: strided(v) for k, v in inputs.feeds.items()})
    else:
        check_every_way(model, inputs.feeds, tmp_path, strict=True)


# ----------------------------------------------------------------------------- every f16 bit pattern


ALL_F16 = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16).reshape(256, 256)


@pytest.mark.usefixtures("small_thresholds")
@pytest.mark.parametrize("cond_shape, else_shape", [((256, 256), (256, 256)), ((256, 1), (256, 256)),
                                                    ((1, 256), (256,)), ((), (1, 256))],
                         ids=["bit_select", "rows", "broadcast", "scalar_cond"])
@pytest.mark.parametrize("const", [False, True], ids=["param", "const"])
def test_select_moves_every_f16_pattern_as_the_reference(cond_shape, else_shape, const, tmp_path):
    """All 65,536 f16 patterns (signalling NaNs, -0.0, subnormals) through each Select path: the reference
    returns signalling NaNs quietened, every other pattern unchanged."""
    rng = np.random.default_rng(1)
    inputs = tv.Inputs(random.Random(0))
    cond = inputs.add("cond", "boolean", rng.integers(0, 2, cond_shape).astype(bool), p_const=0.0)
    then = inputs.add("then", "f16", ALL_F16, p_const=float(const))
    other = inputs.add("else", "f16", np.flip(ALL_F16).reshape(-1)[:int(np.prod(else_shape))].reshape(else_shape),
                       p_const=0.0)
    check_every_way(tv.single(opset1.select(cond, then, other), inputs, "select"), inputs.feeds, tmp_path)


@pytest.mark.usefixtures("small_thresholds")
@pytest.mark.parametrize("version, axis, indices_shape, batch_dims", [
    (8, 0, (300,), 0), (7, 1, (2, 150), 0), (8, 1, (256, 3), 1), (1, -1, (), 0)])
@pytest.mark.parametrize("const", [False, True], ids=["param", "const"])
def test_gather_moves_every_f16_pattern_as_the_reference(version, axis, indices_shape, batch_dims, const, tmp_path):
    """All 65,536 f16 patterns gathered with valid, negative and out-of-range indices on each Gather path."""
    rng = np.random.default_rng(2)
    inputs = tv.Inputs(random.Random(0))
    data = inputs.add("data", "f16", ALL_F16, p_const=0.0)
    indices = inputs.add("indices", "i32", rng.integers(-300, 300, indices_shape).astype(np.int32),
                         p_const=float(const))
    axis_node = opset1.constant(np.int64(axis))
    node = (opset1.gather(data, indices, axis_node) if version == 1 else
            (opset7 if version == 7 else opset8).gather(data, indices, axis_node, batch_dims=batch_dims))
    check_every_way(tv.single(node, inputs, "gather"), inputs.feeds, tmp_path)
