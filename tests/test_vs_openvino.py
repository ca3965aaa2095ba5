"""Differential test: ir-run against OpenVINO's reference evaluation on random Select/Gather/Convert models.

The models, the reference walk (``Node.evaluate`` in topological order) and the bit-for-bit comparison are in
tests/helpers/ov_random.py, whose docstring states what the reference covers and where ir-run deliberately
differs. Seeds are fixed: a failing case is reproducible by its id.
"""

from __future__ import annotations

import random

import numpy as np
import openvino as ov
import pytest
from openvino import opset1, opset8

from tests.helpers.ov_random import TYPES, Inputs, check, random_convert, random_gather, random_select, single

N_SELECT = 250
N_GATHER = 350
N_CONVERT = 250
N_CHAIN = 100


@pytest.mark.parametrize("seed", range(N_SELECT))
def test_select(seed, tmp_path):
    rng = random.Random(f"select-{seed}")
    inputs = Inputs(rng)
    check(single(random_select(rng, inputs), inputs, "select"), inputs.feeds, tmp_path)


@pytest.mark.parametrize("seed", range(N_GATHER))
def test_gather(seed, tmp_path):
    rng = random.Random(f"gather-{seed}")
    inputs = Inputs(rng)
    check(single(random_gather(rng, inputs), inputs, "gather"), inputs.feeds, tmp_path)


@pytest.mark.parametrize("seed", range(N_CONVERT))
def test_convert(seed, tmp_path):
    rng = random.Random(f"convert-{seed}")
    inputs = Inputs(rng)
    check(single(random_convert(rng, inputs), inputs, "convert"), inputs.feeds, tmp_path)


@pytest.mark.parametrize("seed", range(N_CHAIN))
def test_chain(seed, tmp_path):
    """Select -> Convert -> Gather, every intermediate also an output.

    The Convert avoids ir-run's two deviations and conversions that can make f16 signalling NaNs.
    """
    rng = random.Random(f"chain-{seed}")
    while True:
        inputs = Inputs(rng)
        sel = random_select(rng, inputs)
        if sel.get_output_partial_shape(0).rank.get_length() > 0:
            break
    src = sel.get_output_element_type(0).get_type_name()
    avoid = {"bf16", "u32" if src == "f32" else "", "f16" if src in ("f64", "f8e5m2") else ""}
    cvt = opset1.convert(sel, rng.choice([t for t in TYPES if t not in avoid]))
    gather = random_gather(rng, inputs, cvt.output(0))
    outputs = [sel, cvt, gather]
    for i, node in enumerate(outputs):
        node.output(0).get_tensor().set_names({f"out{i}"})
    model = ov.Model([opset1.result(n) for n in outputs], inputs.params, "chain")
    check(model, inputs.feeds, tmp_path)


@pytest.mark.parametrize("op", ["select", "gather"])
def test_f16_signalling_nan(op, tmp_path):
    """f16 signalling NaNs moved by Select or Gather: OpenVINO's reference returns them quietened."""
    inputs = Inputs(random.Random(op))
    data = inputs.add("x", "f16", np.array([0xFC93, 0x7C01, 0x7D00, 0x3C00], np.uint16).view(np.float16), 0)
    if op == "select":
        node = opset1.select(inputs.add("cond", "boolean", np.array([True, False, True, False]), 0), data, data)
    else:
        indices = inputs.add("indices", "i32", np.array([0, 1, 2, -1], np.int32), 0)
        node = opset8.gather(data, indices, opset1.constant(np.int64(0)))
    check(single(node, inputs, op), inputs.feeds, tmp_path)
