"""Helpers for the CLI tests: invoking ``ir-run`` in-process or as a real process, and small models built with
IRBuilder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from click.testing import CliRunner, Result

from ir_runner.cli import cli
from tests.conftest import MODELS
from tests.helpers.irbuild import IRBuilder

SELECT_GATHER = MODELS / "select_gather.xml"
DYNAMIC = MODELS / "dynamic.xml"


def invoke(*args: object, debug: bool = True, env: dict | None = None) -> Result:
    """Run ``ir-run ARGS`` with CliRunner. With ``debug`` an internal error raises instead of exiting 70."""
    environment = {"IR_RUN_DEBUG": "1" if debug else None, **(env or {})}
    result = CliRunner().invoke(cli, [str(a) for a in args], prog_name="ir-run", env=environment)
    if debug and result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert "Traceback" not in result.output
    return result


def ir_run(*args: object, env: dict | None = None) -> subprocess.CompletedProcess:
    """``ir-run`` as a real process (``python -m ir_runner``), without the caller's IR_RUN_DEBUG."""
    environment = {k: v for k, v in os.environ.items() if k != "IR_RUN_DEBUG"}
    environment.update(env or {})
    return subprocess.run([sys.executable, "-m", "ir_runner", *map(str, args)], capture_output=True, text=True,
                          env=environment, timeout=60)


def as_json(result: Result) -> dict:
    return json.loads(result.stdout)


def inputs_of(name: str) -> dict[str, np.ndarray]:
    with np.load(MODELS / f"{name}.inputs.npz") as data:
        return dict(data)


def expected_of(name: str) -> dict[str, np.ndarray]:
    with np.load(MODELS / f"{name}.expected.npz") as data:
        return dict(data)


def load_npz(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        return dict(data)


def odd_names_model(folder: Path) -> Path:
    """Select(cond, then, else) -> Gather(axis 1, indices from a Parameter); names with . / : and =."""
    b = IRBuilder("odd")
    cond = b.parameter("c", "boolean", "2,4", names="input.cond/x:0")
    then = b.parameter("t", "f32", "2,4", names="then=1")
    other = b.parameter("e", "f32", "2,4", names="e")
    idx = b.parameter("idx", "i32", "3", names="idx:0")
    sel = b.layer("Select", "opset1", [cond, then, other], attrs={"auto_broadcast": "numpy"},
                  out_specs=[("FP32", [2, 4])])
    axis = b.const("axis", np.array(1, dtype=np.int64))
    gather = b.layer("Gather", "opset8", [sel, idx, axis], attrs={"batch_dims": "0"},
                     out_specs=[("FP32", [2, 3])], name="g", out_names=["out.0"])
    b.result(gather, "result")
    return b.write(folder, "odd")


def const_gather_model(folder: Path, indices, version: str = "opset8", batch_dims: str | None = "0") -> Path:
    """Gather of a [2,4] f32 Parameter with Const indices along axis 1."""
    b = IRBuilder("constgather")
    data = b.parameter("data", "f32", "2,4")
    idx = b.const("indices", np.array(indices, dtype=np.int64))
    axis = b.const("axis", np.array(1, dtype=np.int64))
    attrs = None if batch_dims is None else {"batch_dims": batch_dims}
    gather = b.layer("Gather", version, [data, idx, axis], attrs=attrs,
                     out_specs=[("FP32", [2, len(indices)])], name="g")
    b.result(gather, "out")
    return b.write(folder, "constgather")


def typed_model(folder: Path, element_type: str, shape: str = "2,3") -> Path:
    """One Parameter of ``element_type`` straight to a Result."""
    b = IRBuilder("typed")
    x = b.parameter("x", element_type, shape)
    b.result(x, "out")
    return b.write(folder, f"typed_{element_type}")


def convert_cond_model(folder: Path) -> Path:
    """An f32 Parameter converted to boolean feeds Select's cond; i32 Parameter indices of a Gather-1."""
    b = IRBuilder("convcond")
    flag = b.parameter("flag", "f32", "3")
    cond = b.convert(flag, "boolean")
    a = b.parameter("a", "f32", "3")
    sel = b.layer("Select", "opset1", [cond, a, a], attrs={"auto_broadcast": "numpy"}, out_specs=[("FP32", [3])])
    idx = b.parameter("pos", "f32", "5")
    axis = b.const("axis", np.array(0, dtype=np.int64))
    gather = b.layer("Gather", "opset1", [sel, b.convert(idx, "i32"), axis], out_specs=[("FP32", [5])], name="g1")
    b.result(gather, "out")
    return b.write(folder, "convcond")


def unsupported_model(folder: Path) -> Path:
    """A layer of a type no opset defines (so that no implementation ever makes it supported)."""
    b = IRBuilder("unsupported")
    x = b.parameter("x", "f32", "2")
    relu = b.layer("Frobnicate", "opset1", [x], name="relu")
    b.result(relu, "out")
    return b.write(folder, "unsupported")


def mismatch_model(folder: Path) -> Path:
    """A Select whose output declares [2,5] where [2,4] is inferred."""
    b = IRBuilder("mismatch")
    cond = b.parameter("cond", "boolean", "2,4")
    then = b.parameter("then", "f32", "2,4")
    sel = b.layer("Select", "opset1", [cond, then, then], out_specs=[("FP32", [2, 5])], name="sel")
    b.result(sel, "out", in_spec=("FP32", [2, 5]))
    return b.write(folder, "mismatch")


def dynamic_type_model(folder: Path) -> str:
    """x of element type dynamic -> Convert to f32 -> r1, y f32[2,3] -> r2."""
    b = IRBuilder("dyn")
    x = b.parameter("x", "dynamic", "2,3", names="x")
    y = b.parameter("y", "f32", "2,3", names="y")
    b.result(b.convert(x, "f32"), "r1")
    b.result(y, "r2")
    return str(b.write(folder, "dyn"))
