"""OneHot-16: OneHot-1 (``movement.py``) with ``negative_indices_mode``: ``ignore_negative`` (the default, as
OneHot-1: a negative index gives an all-``off_value`` row) or ``normalize`` (an index in ``[-depth, -1]`` counts
from the end, ``index + depth``, as PyTorch and ONNX do). Bit-exact against OpenVINO's reference (``Node.evaluate``).
"""

from __future__ import annotations

import numpy as np

from .api import LATEST_OPSET, Attr, OpContext, OpDef
from .movement import _batch_one_hot, _fit_one_hot, infer_one_hot, one_hot

MODES = {"ignore_negative": False, "normalize": True}


def infer_one_hot16(ctx: OpContext):
    outputs, params = infer_one_hot(ctx)
    return outputs, {**params, "normalize": ctx.attr_choice("negative_indices_mode", MODES, False)}


def one_hot16(indices: np.ndarray, depth_input: np.ndarray, on: np.ndarray, off: np.ndarray, *, axis: int,
              depth: int, normalize: bool) -> np.ndarray:
    """OneHot-16 (see the module docstring)."""
    if normalize and indices.dtype.kind == "i":
        wide = indices.astype(np.int64)
        indices = np.where((wide < 0) & (wide >= -depth), wide + depth, wide)
    return one_hot(indices, depth_input, on, off, axis=axis, depth=depth)


OPS = (
    OpDef("OneHot", 16, 16, LATEST_OPSET, ("indices", "depth", "on_value", "off_value"), infer_one_hot16, one_hot16,
          attrs=(Attr("axis"), Attr("negative_indices_mode", "ignore_negative", tuple(MODES))), fit=_fit_one_hot,
          batch=_batch_one_hot),
)
