"""One OpenVINO node evaluated on its own (``Node.evaluate``, the code constant folding runs), with bf16 given
and returned by its bits, and the element-type tables the operation tests share. The one wrapper of
``Node.evaluate``: ``optest.reference_outputs`` and ``ov_random.evaluate`` call :func:`evaluate_tensors`."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import openvino as ov

BF16 = np.dtype(ml_dtypes.bfloat16)
OV_TYPES = {"f16": ov.Type.f16, "bf16": ov.Type.bf16, "f32": ov.Type.f32, "f64": ov.Type.f64, "i8": ov.Type.i8,
            "u8": ov.Type.u8, "i32": ov.Type.i32, "u32": ov.Type.u32, "i64": ov.Type.i64, "u64": ov.Type.u64,
            "boolean": ov.Type.boolean}
NP_TYPES = {"f16": np.float16, "bf16": BF16, "f32": np.float32, "f64": np.float64, "i8": np.int8, "u8": np.uint8,
            "i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64, "boolean": np.bool_}


def to_tensor(array: np.ndarray) -> ov.Tensor:
    """An OpenVINO tensor of ``array``; bf16 (which the Python API does not take) by its bits."""
    if array.dtype != BF16:
        return ov.Tensor(np.require(array, requirements="C"))  # (ascontiguousarray: rank 0 -> 1)
    tensor = ov.Tensor(ov.Type.bf16, ov.Shape(list(array.shape)))
    tensor.data.view(np.uint16)[...] = array.view(np.uint16)
    return tensor


def from_tensor(tensor: ov.Tensor) -> np.ndarray:
    """A copy of ``tensor``'s values; bf16 as ``ml_dtypes.bfloat16``."""
    value = np.array(tensor.data, copy=True)
    return value.view(np.uint16).view(BF16) if tensor.get_element_type() == ov.Type.bf16 else value


def evaluate_tensors(node: ov.Node, inputs: list[ov.Tensor], out_types: list[ov.Type] | None = None
                     ) -> list[ov.Tensor]:
    """``node.evaluate`` on ``inputs``, one output tensor per output (of ``out_types`` when given: evaluate
    dispatches on the tensors' element types). A static output gets its buffer (some evaluates, MVN-6, write
    without resizing a 0-size tensor); a dynamic one starts empty and the evaluate sizes it."""
    outputs = [ov.Tensor(out_types[i] if out_types else node.get_output_element_type(i),
                         node.get_output_shape(i) if node.get_output_partial_shape(i).is_static else ov.Shape([0]))
               for i in range(node.get_output_size())]
    assert node.evaluate(outputs, inputs), f"OpenVINO has no reference evaluate for {node}"
    return outputs


def evaluate(node: ov.Node, arrays: list[np.ndarray]) -> np.ndarray:
    """Output 0 of one node whose Parameters take ``arrays`` (its Constant inputs are read from the node)."""
    tensors = iter([to_tensor(array) for array in arrays])
    inputs = []
    for port in node.inputs():
        source = port.get_source_output().get_node()
        inputs.append(ov.Tensor(source.get_data().copy()) if source.get_type_name() == "Constant" else next(tensors))
    return from_tensor(evaluate_tensors(node, inputs)[0])
