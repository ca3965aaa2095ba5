"""A vectorised reference for Gather with batch_dims 0, as OpenVINO's reference kernel computes it:
indices read as int64, a negative index gets the axis size added once, an index still out of range
gives zeros."""

import numpy as np


def gather_with_zeros(data: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    dim = data.shape[axis]
    idx = np.asarray(indices).astype(np.int64)
    idx = np.where(idx < 0, idx + dim, idx)
    valid = (idx >= 0) & (idx < dim)
    out = np.take(data, np.where(valid, idx, 0), axis=axis)
    mask = valid.reshape((1,) * axis + valid.shape + (1,) * (data.ndim - axis - 1))
    return np.where(mask, out, np.zeros((), data.dtype))
