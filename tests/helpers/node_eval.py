"""One OpenVINO node evaluated on its own (``Node.evaluate``), with bf16 given and returned by its bits, and
the element-type tables the operation tests share."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import openvino as ov

BF16 = np.dtype(ml_dtypes.bfloat16)
OV_TYPES = {"f16": ov.Type.f16, "bf16": ov.Type.bf16, "f32": ov.Type.f32, "i8": ov.Type.i8, "u8": ov.Type.u8,
            "i32": ov.Type.i32, "u32": ov.Type.u32, "i64": ov.Type.i64, "u64": ov.Type.u64, "boolean": ov.Type.boolean}
NP_TYPES = {"f16": np.float16, "bf16": BF16, "f32": np.float32, "i8": np.int8, "u8": np.uint8, "i32": np.int32,
            "u32": np.uint32, "i64": np.int64, "u64": np.uint64, "boolean": np.bool_}


def evaluate(node, arrays) -> np.ndarray:
    """``node.evaluate`` on one node whose Parameters take ``arrays`` (bf16 given as its bits)."""
    tensors = []
    for array in arrays:
        if array.dtype == BF16:
            tensor = ov.Tensor(ov.Type.bf16, ov.Shape(list(array.shape)))
            tensor.data.view(np.uint16)[...] = array.view(np.uint16)
            tensors.append(tensor)
        else:
            tensors.append(ov.Tensor(np.require(array, requirements="C")))  # (ascontiguousarray: rank 0 -> 1)
    inputs = []
    it = iter(tensors)
    for port in node.inputs():
        source = port.get_source_output().get_node()
        inputs.append(ov.Tensor(source.get_data().copy()) if source.get_type_name() == "Constant" else next(it))
    out = ov.Tensor(node.get_output_element_type(0), ov.Shape([0]))
    assert node.evaluate([out], inputs)
    result = np.array(out.data, copy=True)
    return result.view(np.uint16).view(BF16) if node.get_output_element_type(0) == ov.Type.bf16 else result
