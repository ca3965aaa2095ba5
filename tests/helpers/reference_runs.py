"""Run an OpenVINO-built model through ir-run every way a caller may, and compare with OpenVINO's reference.

Needs ``openvino`` (a test dependency); the reference is ``tests/helpers/ov_random.py``'s ``Node.evaluate`` walk.
"""

from __future__ import annotations

import numpy as np
import openvino as ov

import ir_runner
from tests.helpers import ov_random as tv
from tests.helpers.bits import assert_same_bits


def strided(array: np.ndarray) -> np.ndarray:
    """The same values in a non-contiguous view with a negative stride (a feed the kernels must not assume
    contiguous)."""
    spread = np.zeros(array.shape + (2,), array.dtype)
    spread[..., 1] = array
    view = spread[..., 1]
    return np.flip(np.flip(view, 0).copy(), 0) if view.ndim else view


def check_every_way(model: ov.Model, feeds: dict[str, np.ndarray], tmp_path, *, strict: bool = False) -> None:
    """The model's outputs, run on strided feeds, with and without out= buffers (pre-filled with 0xAB bytes),
    twice, equal the reference bits (where ir-run documents a deviation, tv.reference_outputs says so)."""
    path = tmp_path / "model.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    expected = tv.reference_outputs(ov.Core().read_model(str(path)), feeds)
    ours = ir_runner.load(path, strict=strict)
    odd_feeds = {name: strided(value) for name, value in feeds.items()}
    for attempt in range(3):
        buffers = [np.frombuffer(b"\xab" * (int(np.prod(o.shape)) * o.dtype.itemsize), o.dtype).reshape(o.shape).copy()
                   for o in ours.outputs]
        got = ours.run(odd_feeds, out=buffers) if attempt else ours.run(odd_feeds)
        for out, (want, nan_only) in zip(got.values(), expected):
            if nan_only is not None:
                out, want = out[~nan_only], want[~nan_only]
            assert_same_bits(out, want)
