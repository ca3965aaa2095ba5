"""ir_runner.heap: glibc's heap set to keep freed memory when the first plan is built, unless the user chose
otherwise."""

from __future__ import annotations

import numpy as np
import pytest

import ir_runner
from ir_runner import heap
from tests.helpers.irbuild import IRBuilder


@pytest.fixture
def calls(monkeypatch):
    """The mallopt calls the next run makes (heap switched back to 'not done yet', the environment clean)."""
    made: list[tuple[int, int]] = []
    monkeypatch.setattr(heap, "_done", False)
    monkeypatch.setattr(heap, "_glibc_mallopt", lambda: lambda option, value: made.append((option, value)) or 1)
    for name in ("IR_RUN_MALLOC", *heap._USER_SETTINGS):
        monkeypatch.delenv(name, raising=False)
    return made


def _model():
    b = IRBuilder()
    x = b.parameter("x", "f32", "2,3")
    b.result(b.layer("Relu", "opset1", [x], out_specs=[("f32", "2,3")]))
    return ir_runner.load(*b.build())


def test_a_run_sets_both_thresholds_once(calls):
    model = _model()
    x = np.array([[-1, 0, 2], [3, -4, 5]], np.float32)
    np.testing.assert_array_equal(model.run([x])[model.outputs[0].name], np.maximum(x, 0))
    assert calls == [(-3, heap.MMAP_THRESHOLD), (-1, heap.TRIM_THRESHOLD)]
    model.run([x])
    assert len(calls) == 2


def test_runs_of_a_built_plan_do_not_switch(calls, monkeypatch):
    """The switch is made when a plan is built, never on a run's own path: with it marked not done again, a run
    of the plan built earlier calls nothing."""
    model = _model()
    x = np.zeros((2, 3), np.float32)
    model.run([x])  # builds the plan: switched
    monkeypatch.setattr(heap, "_done", False)
    model.run([x])
    assert calls == [(-3, heap.MMAP_THRESHOLD), (-1, heap.TRIM_THRESHOLD)]


@pytest.mark.parametrize("name, value", [("IR_RUN_MALLOC", "system"), ("MALLOC_TRIM_THRESHOLD_", "1000000"),
                                         ("MALLOC_MMAP_THRESHOLD_", "65536"), ("MALLOC_TOP_PAD_", "0")])
def test_the_users_choice_is_left_alone(calls, monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    _model().run([np.zeros((2, 3), np.float32)])
    assert calls == []

