"""The run loop (runtime.execute over a plan's program): several outputs fill consecutive slots, a kernel giving
the wrong number of them is a KernelError naming its layer, intermediates are freed after their last use,
floating-point warnings are silenced once per run, and feeds of dynamic inputs are checked on the fast path."""

from __future__ import annotations

import gc
import warnings
import weakref

import numpy as np
import pytest

import ir_runner
from ir_runner import runtime
from ir_runner.errors import InputError, KernelError, LayerRef
from ir_runner.plan import Plan, Step
from ir_runner.runtime import execute
from tests.helpers.irbuild import IRBuilder

F32 = np.dtype(np.float32)


def _ref(name: str) -> LayerRef:
    return LayerRef(name, "Test-1", name)


def _plan(steps: list[Step], slot_count: int, outputs: tuple[int, ...]) -> Plan:
    specs = tuple((F32, (2,)) for _ in outputs)
    return Plan(slot_count, (), (0,), tuple(steps), outputs, (False,) * len(outputs), specs, (False,) * len(outputs))


def test_a_step_of_several_outputs_fills_its_slots():
    def halves(x):
        return x[:1] + 0, x[1:] + 0

    plan = _plan([Step(halves, (0,), 1, _ref("split"), (), (1, 2)), Step(np.add, (1, 2), 3, _ref("add"), ())], 4, (3,))
    (out,) = execute(plan, [np.array([1.0, 2.0], np.float32)])
    assert out.tolist() == [3.0]


@pytest.mark.parametrize("count", [1, 3])
def test_a_kernel_giving_the_wrong_number_of_outputs_is_a_kernel_error_naming_its_layer(count):
    def wrong(x):
        return tuple(x + i for i in range(count))

    plan = _plan([Step(wrong, (0,), 1, _ref("split"), (), (1, 2)), Step(np.add, (1, 2), 3, _ref("add"), ())], 4, (3,))
    with pytest.raises(KernelError, match=f"returned {count} values for 2 outputs") as raised:
        execute(plan, [np.array([1.0, 2.0], np.float32)])
    assert raised.value.layer.name == "split"


def test_an_intermediate_is_freed_after_its_last_use():
    made: list[weakref.ref] = []
    alive_at_last_step: list[bool] = []

    def first(x):
        value = x * 2
        made.append(weakref.ref(value))
        return value

    def last(y):
        gc.collect()
        alive_at_last_step.append(made[0]() is not None)
        return y + 1

    steps = [Step(first, (0,), 1, _ref("a"), ()), Step(np.negative, (1,), 2, _ref("b"), (1,)),
             Step(last, (2,), 3, _ref("c"), (2,))]
    (out,) = execute(_plan(steps, 4, (3,)), [np.array([1.0, 2.0], np.float32)])
    assert out.tolist() == [-1.0, -3.0] and alive_at_last_step == [False]


@pytest.mark.parametrize("state", ["numpy's context variable", "np.errstate (numpy without it)"])
def test_float_overflow_and_invalid_values_give_the_references_values_without_warnings(tmp_path, monkeypatch,
                                                                                        state):
    if state.startswith("np.errstate"):
        monkeypatch.setattr(runtime, "_FP_STATE", runtime._Errstate())
    b = IRBuilder("overflow")
    x = b.parameter("x", "f32", "4")
    y = b.layer("Multiply", "opset1", [x, x], attrs={"auto_broadcast": "numpy"})
    z = b.layer("Subtract", "opset1", [y, y], attrs={"auto_broadcast": "numpy"})
    b.result(z, "z")
    model = ir_runner.load(b.write(tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = model.run({"x": np.array([1e30, -1e30, 2.0, np.inf], np.float32)})["z"]
    assert np.isnan(out[[0, 1, 3]]).all() and out[2] == 0
    assert np.geterr()["over"] == "warn"  # the caller's state is back


def test_feeds_of_bounded_dynamic_dims_are_checked_on_the_fast_path(tmp_path):
    b = IRBuilder("bounded")
    x = b.parameter("x", "f32", "1..3,?")
    b.result(b.layer("Add", "opset1", [x, x], attrs={"auto_broadcast": "numpy"}), "y")
    model = ir_runner.load(b.write(tmp_path))
    assert model.run({"x": np.ones((3, 5), np.float32)})["y"].tolist() == [[2.0] * 5] * 3
    for shape in [(4, 5), (0, 5), (3,)]:
        with pytest.raises(InputError, match="expects shape"):
            model.run({"x": np.ones(shape, np.float32)})
    with pytest.raises(InputError, match="expects element type f32"):
        model.run({"x": np.ones((2, 2), np.float64)})
