"""Shared pieces of the shape-family op tests (tests/ops/test_shape.py, test_expand.py, test_range.py,
test_slicing.py): shapes written short, integer constants, concrete shapes fitting partial ones, and a
check of a graph's shapes followed by runs on concrete inputs."""

from __future__ import annotations

import numpy as np
import openvino as ov
from openvino import opset13

from tests.helpers.optest import check_run
from tests.helpers.shapes import check_shapes

D = ov.Dimension


def P(*dims):  # noqa: N802 (a shape)
    return ov.PartialShape([D(*d) if isinstance(d, tuple) else d for d in dims])


def const(values, dtype=np.int64):
    return opset13.constant(np.array(values, dtype=dtype))


def concrete(shape: ov.PartialShape, rng: np.random.Generator) -> tuple[int, ...]:
    """A concrete shape fitting ``shape`` (dynamic dims drawn small)."""
    out = []
    for d in shape:
        if d.is_static:
            out.append(d.get_length())
        else:
            hi = d.get_max_length() if d.get_max_length() >= 0 and d.get_max_length() < 10 else 4
            out.append(int(rng.integers(max(d.get_min_length(), 1), max(hi, d.get_min_length(), 1) + 1)))
    return tuple(out)


def run_cases(path, params, rng):
    """check_shapes, then runs on two concrete shapes per dynamic input."""
    check_shapes(path)
    for _ in range(2):
        feeds = {}
        for p in params:
            shape = concrete(p.get_partial_shape(), rng)
            et = p.get_element_type().to_dtype()
            feeds[p.get_friendly_name()] = (rng.standard_normal(shape) * 10).astype(et)
        check_run(path, feeds)
