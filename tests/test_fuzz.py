"""Mutation fuzzing: broken variants of the sample models load and run, or end in one IRError.

Two fuzzers: hypothesis' byte- and element-level mutations of the samples (below), and a seeded slice of the
structure-aware fuzzer over real IRs, ``scripts/fuzz_ir.py`` (its long campaigns run as a script).

Hypothesis mutates the samples in models/ (attribute values, dims, edges, whole elements, bytes of the
.xml and the .bin); ``load``, ``validate`` and ``run`` must then succeed or raise an IRError: never another
exception, never a hang (each example has a 10 s alarm). The budget is small and derandomized so CI is
reproducible; ``IR_RUN_FUZZ_EXAMPLES=20000 pytest tests/test_fuzz.py`` runs a long campaign
(``IR_RUN_FUZZ_SEED=N`` replaces the fixed sequence by the one seed N gives).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from lxml import etree

import ir_runner
from tests.conftest import MODELS
from tests.helpers import fuzz_ir

EXAMPLES = int(os.environ.get("IR_RUN_FUZZ_EXAMPLES", "200"))
SEED = os.environ.get("IR_RUN_FUZZ_SEED")
MEMORY_LIMIT = 64 << 20
FEED_LIMIT = 1 << 20
ALARM_SECONDS = 30  # a hang guard, not a timing claim

SAMPLES = sorted(MODELS.glob("*.xml"))
INTERESTING = [
    "", " ", "0", "1", "2", "3", "-1", "-2", "7", "64", "2147483648", "4294967296", "9223372036854775807",
    "9223372036854775808", "-9223372036854775809", "1" * 40, "1e3", "0x10", "+1", " 1 ", "nan", "inf", "?",
    "...", "1..", "..5", "3..1", "2..4", "a", "1,2", ",", "1,,2", "[2,3]", "true", "FALSE", "numpy", "NUMPY",
    "none", "explicit", "pdpd", "f32", "f16", "bf16", "f64", "i4", "i8", "i32", "i64", "u1", "u4", "u64",
    "boolean", "string", "dynamic", "f8e4m3", "FP32", "BOOL", "BIN", "UNSPECIFIED", "opset1", "opset7", "opset8",
    "opset0", "opset99", "experimental", "Const", "Constant", "Parameter", "Result", "Select", "Gather",
    "Convert", "\u0663", "\U0001d7d9", "\u00e9", "x" * 300,
]


def _sample(path: Path) -> tuple[bytes, bytes, dict[str, np.ndarray]]:
    with np.load(path.with_suffix(".inputs.npz")) as stored:
        return path.read_bytes(), path.with_suffix(".bin").read_bytes(), dict(stored)


SEEDS = {path.stem: _sample(path) for path in SAMPLES}


# --- mutations: each takes the parsed tree (or bytes) and hypothesis' draw ---------------------------------


def _text(draw) -> str:
    xml_chars = st.characters(blacklist_categories=("Cs", "Cc"))
    return draw(st.one_of(st.sampled_from(INTERESTING), st.text(xml_chars, max_size=12),
                          st.integers(-(2**70), 2**70).map(str)))


def _elements(root, *, with_attributes: bool = False) -> list:
    """Elements of the tree (never the root unless it is about attributes)."""
    if with_attributes:
        return [el for el in root.iter() if isinstance(el.tag, str) and el.attrib]
    return [el for el in root.iter() if isinstance(el.tag, str) and el is not root]


def _set_attribute(root, draw) -> None:
    elements = _elements(root, with_attributes=True)
    if not elements:
        return
    element = draw(st.sampled_from(elements))
    key = draw(st.sampled_from(sorted(element.attrib) + ["batch_dims", "auto_broadcast", "shape", "size"]))
    element.set(key, _text(draw))


def _delete_attribute(root, draw) -> None:
    elements = _elements(root, with_attributes=True)
    if not elements:
        return
    element = draw(st.sampled_from(elements))
    del element.attrib[draw(st.sampled_from(sorted(element.attrib)))]


def _set_dim(root, draw) -> None:
    dims = root.findall(".//dim")
    if dims:
        draw(st.sampled_from(dims)).text = _text(draw)


def _rewire_edge(root, draw) -> None:
    edges = root.findall("edges/edge")
    if not edges:
        return
    edge = draw(st.sampled_from(edges))
    ids = sorted({layer.get("id", "") for layer in root.iter("layer")} | {p.get("id", "") for p in root.iter("port")})
    key = draw(st.sampled_from(["from-layer", "from-port", "to-layer", "to-port"]))
    edge.set(key, draw(st.sampled_from(ids + INTERESTING)))


def _delete_element(root, draw) -> None:
    elements = _elements(root)
    if elements:
        element = draw(st.sampled_from(elements))
        element.getparent().remove(element)


def _duplicate_element(root, draw) -> None:
    elements = _elements(root)
    if elements:
        element = draw(st.sampled_from(elements))
        element.addnext(etree.fromstring(etree.tostring(element)))


def _move_element(root, draw) -> None:
    elements = _elements(root)
    if not elements:
        return
    element, target = draw(st.sampled_from(elements)), draw(st.sampled_from(elements))
    if element is not target and element not in target.iterancestors():
        target.append(element)


TREE_MUTATIONS = [_set_attribute, _set_attribute, _set_dim, _rewire_edge, _delete_attribute, _delete_element,
                  _duplicate_element, _move_element]


def _mutate_bytes(data: bytes, draw) -> bytes:
    kind = draw(st.sampled_from(["truncate", "flip", "insert", "extend"]))
    position = draw(st.integers(0, max(len(data) - 1, 0)))
    if kind == "truncate":
        return data[:position]
    if kind == "flip" and data:
        return data[:position] + bytes([draw(st.integers(0, 255))]) + data[position + 1:]
    if kind == "insert":
        return data[:position] + draw(st.binary(min_size=1, max_size=8)) + data[position:]
    return data + draw(st.binary(max_size=64))


def _mutant(draw) -> tuple[bytes, bytes, dict[str, np.ndarray]]:
    xml, weights, feeds = SEEDS[draw(st.sampled_from(sorted(SEEDS)))]
    root = etree.fromstring(xml)
    for _ in range(draw(st.integers(1, 3))):
        draw(st.sampled_from(TREE_MUTATIONS))(root, draw)
    xml = etree.tostring(root, xml_declaration=True, encoding="UTF-8")
    if draw(st.integers(0, 9)) == 0:
        xml = _mutate_bytes(xml, draw)
    if weights and draw(st.booleans()):
        for _ in range(draw(st.integers(1, 4))):
            weights = _mutate_bytes(weights, draw)
    return xml, weights, feeds


def _synthetic_feeds(model: ir_runner.Model) -> dict[str, np.ndarray] | None:
    """Arrays that fit the model's inputs (dynamic dims at their lower bound or 1), or None if too large."""
    feeds = {}
    for info in model.inputs:
        dims = info.partial_shape.dims or ()
        shape = tuple(d.lo if d.is_static or d.lo > 0 else min(1, d.hi if d.hi is not None else 1) for d in dims)
        dtype = info.dtype or np.dtype(np.float32)
        if int(np.prod(shape, dtype=object)) * dtype.itemsize > FEED_LIMIT:
            return None
        feeds[info.name] = (np.arange(int(np.prod(shape)), dtype=np.int64) % 3).astype(dtype).reshape(shape)
    return feeds


def _exercise(xml: bytes, weights: bytes, feeds: dict[str, np.ndarray]) -> None:
    """Everything ir-run may do with the mutant: only IRError may escape."""
    ir_runner.validate(xml, weights)
    try:
        model = ir_runner.load(xml, weights, memory_limit=MEMORY_LIMIT)
    except ir_runner.IRError:
        return
    for attempt in (feeds, _synthetic_feeds(model)):
        if attempt is None:
            continue
        try:
            model.run(attempt)
        except ir_runner.IRError:
            pass


def _seeded(test):
    return seed(int(SEED))(test) if SEED is not None else test


@pytest.mark.skipif(not SEEDS, reason="models/ has no samples")
@_seeded
@settings(max_examples=EXAMPLES, deadline=None, derandomize=SEED is None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_mutants_load_run_or_raise_irerror(data):
    xml, weights, feeds = _mutant(data.draw)
    with fuzz_ir.time_box(ALARM_SECONDS), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy warnings are not failures here; exceptions are
        _exercise(xml, weights, feeds)


# --- a seeded slice of scripts/fuzz_ir.py: structure-aware mutants of the real IRs -----------------------------

FUZZ_IR_CAMPAIGN, FUZZ_IR_MUTANTS = 0, 60


def test_a_seeded_slice_of_structure_aware_mutants_ends_in_success_or_one_irerror():
    """Mutants 0..59 of campaign 0 (the same on every machine): validate, load and run each; anything but success
    or a clean IRError (another exception, a KernelError, outputs that model.outputs does not describe, a hang
    past 10 s) is reported with the command that reproduces it."""
    seeds = fuzz_ir.load_seeds()
    findings, kinds = [], set()
    for index in range(FUZZ_IR_MUTANTS):
        mutant = fuzz_ir.make_mutant(seeds, FUZZ_IR_CAMPAIGN, index)
        outcome = fuzz_ir.exercise(mutant, seconds=10)
        kinds.add(outcome.kind)
        if outcome.finding:
            findings.append(f"{outcome.signature} ({mutant.seed}: {mutant.steps}): python -m scripts.fuzz_ir"
                            f" --seed {FUZZ_IR_CAMPAIGN} --index {index} --show")
    assert not findings, "\n".join(findings)
    assert {"ok", "clean"} <= kinds  # the slice reaches runs that succeed and models that are refused


def test_structure_aware_mutants_are_reproducible():
    seeds = fuzz_ir.load_seeds(real=False, nested=False)
    first, again = (fuzz_ir.make_mutant(seeds, 7, 3) for _ in range(2))
    assert (first.xml, first.weights, first.steps, first.feed_seed) == (again.xml, again.weights, again.steps,
                                                                          again.feed_seed)
    assert fuzz_ir.make_mutant(seeds, 7, 4).xml != first.xml
