"""ir-run's results do not depend on the calling thread's flush-to-zero mode (ir_runner.fpenv).

OpenVINO's CPU plugin, compiling with ``CPU_DENORMALS_OPTIMIZATION=True``, sets FTZ and DAZ in the calling thread
and leaves them set; numpy then flushes subnormals in that thread. The checks run in a subprocess (the mode is
process state that would leak into other tests): models whose reference result is subnormal give the reference's
bits, the caller's mode is back after each run, threads and the pool's workers too, and crosscheck compares
without flushing. The reference values are computed (``Node.evaluate``) before the bits are set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import timeit
from pathlib import Path

import numpy as np
import pytest

from ir_runner import fpenv

ROOT = Path(__file__).resolve().parent.parent
SUPPORTED = fpenv._load()  # x86-64 glibc (elsewhere fpenv changes nothing, and says so)

SCRIPT = r'''
import ctypes, json, sys, threading, timeit
import numpy as np
import openvino as ov
from openvino import opset13 as o
import ir_runner
from ir_runner import fpenv, parallel, strided_copy
from tests.helpers.node_eval import evaluate_tensors, from_tensor, to_tensor

how, workdir = sys.argv[1], sys.argv[2]
parallel.SPLIT_MIN_NS, parallel.PIECE_NS = 200_000, 100_000  # (the 2M-element Multiply split over the pool)
f32 = np.float32
x_mul = np.array([1e-45, 1e-40, 3e-39, -6e-39, 1.0], f32)
x_prod = np.array([[1e-30, 1e-15], [1e-20, 1e-19], [2.0, 3.0]], f32)
x_mm = np.array([[1e-45, 1e-40], [3e-39, 1e-38]], f32)
x_big = np.resize(x_mul, 1 << 21)
x_mul64 = x_mul.astype(np.float64)  # (made now: a conversion flushes too)
c_fold = np.array([1e-40, 3e-39], f32)
folded_reference = c_fold * f32(2)

def build(name, x, make):
    p = o.parameter(list(x.shape), f32, name="x")
    node = make(p)
    path = f"{workdir}/{name}.xml"
    ov.save_model(ov.Model([node], [p], name), path, compress_to_fp16=False)
    inputs = [to_tensor(x)] + [to_tensor(s.get_node().get_data()) for s in node.input_values()[1:]]
    reference = from_tensor(evaluate_tensors(node, inputs)[0])
    return ir_runner.load(path), x, reference

cases = {
    "multiply": build("multiply", x_mul, lambda p: o.multiply(p, o.constant(f32(2)))),
    "reduce_prod": build("reduce_prod", x_prod, lambda p: o.reduce_prod(p, o.constant(np.int64(1)), False)),
    "matmul": build("matmul", x_mm, lambda p: o.matmul(p, o.constant(np.array([[1, .5], [2, 1]], f32)),
                                                       False, False)),
    "multiply_pool": build("multiply_pool", x_big, lambda p: o.multiply(p, o.constant(f32(2)))),
}
out = {"reference_subnormal": {k: bool(np.any((r != 0) & (np.abs(r) < np.finfo(f32).tiny)))
                               for k, (_, _, r) in cases.items()}}
probe = np.array([1e-45], f32)

def flushing():
    return bool(fpenv.flushes_subnormals() and (probe * f32(1))[0] == 0)

def same(name):
    model, x, reference = cases[name]
    return bool(np.array_equal(model.run([x])[model.outputs[0].name].view(np.uint32),
                               reference.view(np.uint32)))

out["flushing_at_start"] = flushing()
if how == "openvino":
    p = o.parameter([2], f32)
    m = ov.Model([o.multiply(p, o.constant(f32(2)))], [p])
    ov.Core().compile_model(m, "CPU", {"CPU_DENORMALS_OPTIMIZATION": True})(np.array([1e-45, 1e-40], f32))
else:
    libm = ctypes.CDLL("libm.so.6")
    env = ctypes.create_string_buffer(32)
    libm.fegetenv(env)
    raw = bytearray(env.raw)
    raw[28:32] = (int.from_bytes(raw[28:32], "little") | 0x8040).to_bytes(4, "little")
    libm.fesetenv(ctypes.create_string_buffer(bytes(raw), 32))
out["flushing_set"] = flushing()
strided_copy.c_ordered_copy(x_big)  # outside a run: the pool's worker is made now, inheriting the flushing mode
out["worker_flushing"] = parallel._get_pool(2).submit(fpenv.flushes_subnormals).result()
out["numpy_flushes"] = bool((x_mul * f32(2) == 0)[:4].all())
out["same"] = {name: same(name) for name in cases}
model, x, reference = cases["multiply"]
cast = model.run([x_mul64], cast="same_kind")[model.outputs[0].name]
out["cast_same"] = bool(np.array_equal(cast.view(np.uint32), reference.view(np.uint32)))
p = o.parameter([2], f32, name="x")
ov.save_model(ov.Model([o.add(p, o.multiply(o.constant(c_fold), o.constant(f32(2))))], [p], "folded"),
              f"{workdir}/folded.xml", compress_to_fp16=False)
folded = ir_runner.load(f"{workdir}/folded.xml")  # loaded in the flushing thread: the Multiply folds at load
result = folded.run([np.zeros(2, f32)])[folded.outputs[0].name]
out["folded_same"] = bool(np.array_equal(result.view(np.uint32), folded_reference.view(np.uint32)))
out["flushing_after_runs"] = flushing()
trace = model.trace([x])
out["trace_same"] = bool(np.array_equal(trace.outputs[model.outputs[0].name].view(np.uint32),
                                        reference.view(np.uint32)))
results = {}

def in_thread(i):
    results[i] = ({name: same(name) for name in ("multiply", "reduce_prod", "matmul")}, flushing())

threads = [threading.Thread(target=in_thread, args=(i,)) for i in range(3)]
for t in threads:
    t.start()
for t in threads:
    t.join()
out["threads"] = [results[i] for i in range(3)]
report = ir_runner.crosscheck(f"{workdir}/multiply.xml", [x])
out["crosscheck_ok"] = bool(report.ok)
out["flushing_after_crosscheck"] = flushing()
enter = fpenv.enter
fpenv.enter = lambda: None  # without the guard, ir-run's results here are flushed: the checks above can fail
out["unguarded_same"] = same("multiply")
fpenv.enter = enter
on_worker, drain = parallel._drain_on_worker, parallel._drain
parallel.STARVED_S, parallel._serial_until = float("inf"), 0.0  # (splitting on, whatever the load did before)
worker_started = threading.Event()

def unguarded_worker(job):  # the pieces a worker claims are flushed
    worker_started.set()
    drain(job)

def late_caller(job):  # the caller waits for the worker to wake, so that it claims a piece even on a loaded machine
    worker_started.wait(5)
    drain(job)

parallel._drain_on_worker, parallel._drain = unguarded_worker, late_caller
out["unguarded_worker_same"] = all(same("multiply_pool") for _ in range(3))
parallel._drain_on_worker, parallel._drain = on_worker, drain
run = lambda: model.run([x])
out["run_us_flushing"] = min(timeit.repeat(run, number=2000, repeat=5)) / 2000 * 1e6
out["enter_leave_us_flushing"] = min(timeit.repeat(lambda: fpenv.leave(fpenv.enter()), number=20000,
                                                    repeat=5)) / 20000 * 1e6
print(json.dumps(out))
'''


@pytest.fixture(scope="module", params=["openvino", "fesetenv"])
def outcome(request, tmp_path_factory) -> dict:
    """The subprocess's findings, with FTZ/DAZ set by OpenVINO (as in the bug) or by fesetenv."""
    workdir = tmp_path_factory.mktemp(f"fpenv_{request.param}")
    done = subprocess.run([sys.executable, "-c", SCRIPT, request.param, str(workdir)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env={**os.environ, "IR_RUN_THREADS": "2"})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


pytestmark = pytest.mark.skipif(not SUPPORTED, reason="fpenv clears FTZ/DAZ on x86-64 glibc only")


def test_the_bits_are_set_and_numpy_flushes(outcome):
    assert not outcome["flushing_at_start"]
    assert outcome["flushing_set"] and outcome["numpy_flushes"]
    assert all(outcome["reference_subnormal"].values())  # every case's reference has a subnormal


def test_runs_give_the_reference_bits_in_a_flushing_thread(outcome):
    """Multiply (DAZ and FTZ), ReduceProd (normal inputs, subnormal product: FTZ), MatMul (BLAS), and a Multiply of
    2M elements split over the pool's workers (IR_RUN_THREADS=2; a worker made after the bits were set inherits
    them); trace too."""
    assert outcome["same"] == {"multiply": True, "reduce_prod": True, "matmul": True, "multiply_pool": True}
    assert outcome["trace_same"]


def test_feeds_cast_and_constants_folded_at_load_keep_their_subnormals(outcome):
    """A float64 feed cast to f32 (``cast='same_kind'``) and a Multiply of Consts folded while loading, both in the
    flushing thread."""
    assert outcome["cast_same"]
    assert outcome["folded_same"]


def test_without_the_guard_the_run_is_flushed(outcome):
    """The controls: the same checks with fpenv.enter disabled, or the pool worker's guard, fail (so the checks
    above can fail)."""
    assert outcome["worker_flushing"]
    assert outcome["unguarded_same"] is False
    assert outcome["unguarded_worker_same"] is False


def test_the_callers_mode_is_restored(outcome):
    assert outcome["flushing_after_runs"] and outcome["flushing_after_crosscheck"]


def test_threads_inheriting_the_mode_give_the_reference_and_keep_their_mode(outcome):
    assert outcome["threads"] == [[{"multiply": True, "reduce_prod": True, "matmul": True}, True]] * 3


def test_crosscheck_agrees_after_openvino_set_the_bits(outcome):
    assert outcome["crosscheck_ok"]


def test_probe_cost(outcome, record_property):
    """The cost of the guard (no timed assertion): enter+leave in a clean thread (the probe alone) and in a
    flushing one (fegetenv, two fesetenv), and a small model's run in the flushing thread."""
    clean = min(timeit.repeat(lambda: fpenv.leave(fpenv.enter()), number=100000, repeat=3)) / 100000 * 1e6
    assert fpenv.enter() is None  # this thread does not flush: nothing is changed
    record_property("enter_leave_us_clean", clean)
    record_property("enter_leave_us_flushing", outcome["enter_leave_us_flushing"])
    record_property("run_us_flushing", outcome["run_us_flushing"])
    print(f"fpenv: enter+leave {clean:.3f} us clean, {outcome['enter_leave_us_flushing']:.2f} us flushing;"
          f" a 5-element Multiply's run {outcome['run_us_flushing']:.1f} us flushing")


def test_a_new_thread_of_a_clean_thread_is_clean():
    found = []
    thread = threading.Thread(target=lambda: found.append(fpenv.flushes_subnormals()))
    thread.start()
    thread.join()
    assert found == [False] and (np.array([1e-45], np.float32) * np.float32(1))[0] != 0
