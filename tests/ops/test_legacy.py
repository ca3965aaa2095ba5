"""Xor-1 (opset1's LogicalXor): served in opset1 only, inferred as OpenVINO infers it, values bit for bit against
its reference (``Node.evaluate``) with broadcasting; non-boolean inputs refused naming the layer."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1  # noqa: E402
from openvino.utils.node_factory import NodeFactory  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.ops.registry import lookup  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402


def _xor(tmp_path, a_shape, b_shape, broadcast="numpy"):
    params = []
    for name, shape in (("a", a_shape), ("b", b_shape)):
        p = opset1.parameter(shape, ov.Type.boolean, name=name)
        p.output(0).get_tensor().set_names({name})
        params.append(p)
    node = NodeFactory("opset1").create("Xor", [p.output(0) for p in params], {"auto_broadcast": broadcast})
    return write_ir(node, params, tmp_path), node


@pytest.mark.parametrize(("a_shape", "b_shape"), [([2, 3], [2, 3]), ([2, 1], [1, 4]), ([3], []), ([-1, 3], [2, -1])])
def test_values_and_shapes_as_the_reference(a_shape, b_shape, tmp_path):
    path, node = _xor(tmp_path, a_shape, b_shape)
    check_inference(path)
    check_output_shapes(path, node)
    rng = np.random.default_rng(0)
    shape_a = [d if d >= 0 else 2 for d in a_shape]
    shape_b = [d if d >= 0 else 3 for d in b_shape]
    check_run(path, {"a": rng.random(shape_a) < 0.5, "b": rng.random(shape_b) < 0.5})


def test_served_in_opset1_only():
    assert lookup("Xor", "opset1").label == "Xor-1" and lookup("Xor", "opset2") is None


def test_non_boolean_inputs_are_refused_naming_the_layer():
    b = IRBuilder("xor")
    x = b.parameter("x", "f32", "2")
    b.result(b.layer("Xor", "opset1", [x, x], out_specs=[("BOOL", [2])], name="either"))
    with pytest.raises(ir_runner.InferenceError, match=r"layer 'either' \(Xor-1"):
        ir_runner.load(*b.build())
