"""Extensions: an operation declared outside ir-run, registered through the ``ir_runner.ops`` entry point of a
real distribution on sys.path (a ``*.dist-info`` folder with ``entry_points.txt``), then loaded, validated,
inspected and run; clashes and failing entry points are ExtensionErrors naming both sides.

Each case runs in a fresh interpreter: the registry loads the entry points once per process."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "extension"


def _distribution(site: Path, package: str, source: str | None, entry: str, dist: str = "my-ops-dist") -> None:
    """``package`` (copied from the example, or written from ``source``) with a dist-info declaring ``entry``."""
    if source is None:
        shutil.copytree(EXAMPLE / package, site / package)
    else:
        (site / package).mkdir(parents=True)
        (site / package / "__init__.py").write_text(textwrap.dedent(source))
    info = site / f"{dist.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[console_scripts]\nother = x:y\n\n[ir_runner.ops]\n{entry}\n")


def _python(site: Path, code: str, *args: str) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": f"{site}:{ROOT}", "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, *args, "-c", textwrap.dedent(code)] if code else [sys.executable, *args],
                          capture_output=True, text=True, env=env, timeout=60, cwd=ROOT)


def test_an_extension_registered_by_entry_point_loads_validates_inspects_and_runs(tmp_path):
    _distribution(tmp_path, "ir_run_scaled_tanh", None, "scaled_tanh = ir_run_scaled_tanh:register")
    done = _python(tmp_path, f"""
        import json, numpy as np, ir_runner
        model = ir_runner.load({str(EXAMPLE / 'model.xml')!r})
        x = np.linspace(-3, 3, 6, dtype=np.float32).reshape(2, 3)
        y = model.run({{"x": x}})["y"]
        report = ir_runner.validate({str(EXAMPLE / 'model.xml')!r})
        print(json.dumps({{"ok": report.ok, "max_error": float(np.abs(y - 2 * np.tanh(0.5 * x)).max()),
                          "dtype": str(y.dtype), "layer": str(report.layers[1].ref)}}))
    """)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result == {"ok": True, "max_error": result["max_error"], "dtype": "float32",
                      "layer": result["layer"]}
    assert result["max_error"] <= 4e-7 and "ScaledTanh-1" in result["layer"]
    inspected = _python(tmp_path, "", "-m", "ir_runner", "inspect", str(EXAMPLE / "model.xml"), "--json")
    assert inspected.returncode == 0, inspected.stderr
    layer = next(entry for entry in json.loads(inspected.stdout)["layers"] if entry["name"] == "st")
    assert layer["type"] == "ScaledTanh-1" and layer["supported"]
    assert layer["attributes"] == {"alpha": "2.0", "beta": "0.5"}
    ran = _python(tmp_path, "", "-m", "ir_runner", str(EXAMPLE / "model.xml"), "--fill", "random")
    assert ran.returncode == 0, ran.stderr


def test_without_the_extension_the_operation_is_unsupported(tmp_path):
    done = _python(tmp_path, "", "-m", "ir_runner", "validate", str(EXAMPLE / "model.xml"))
    assert done.returncode != 0
    assert "ScaledTanh" in done.stdout + done.stderr


@pytest.mark.parametrize(("declaration", "other"), [
    ('OpDef("Gather", 8, 8, 9, ("data", "indices", "axis"), infer)', r"Gather-8 \(opset8\.\.opset\d+\) from ir-run"),
    ('OpDef("ScaledTanh", 1, 0, 0, ("x",), infer, domain="my_ops")', r"ScaledTanh-1 \(my_ops\) from register_op"),
])
def test_a_clash_names_both_declarations(tmp_path, declaration, other):
    _distribution(tmp_path, "clashing", f"""
        from ir_runner.extension import OpDef, register_op

        def infer(ctx):
            return [ctx.inputs[0]], {{}}

        def register():
            register_op({declaration})
    """, "clash = clashing:register", dist="clashing-ops")
    done = _python(tmp_path, """
        import ir_runner
        from ir_runner.extension import OpDef, register_op
        register_op(OpDef("ScaledTanh", 1, 0, 0, ("x",), lambda ctx: ([ctx.inputs[0]], {}), domain="my_ops"))
    """)
    assert done.returncode != 0
    assert "ExtensionError" in done.stderr
    import re

    assert re.search(r"from clashing-ops \(entry point ir_runner\.ops: clash\) clashes with " + other, done.stderr) \
        or re.search(other + r".*clashes|clashes with .*" + other, done.stderr), done.stderr


def test_a_failing_entry_point_is_an_extension_error_naming_it(tmp_path):
    _distribution(tmp_path, "broken", "def register():\n    raise RuntimeError('no luck')\n",
                  "broken = broken:register", dist="broken-ops")
    done = _python(tmp_path, "", "-m", "ir_runner", "validate", str(ROOT / "models" / "gather1.xml"))
    assert done.returncode != 0
    assert "broken = broken:register" in done.stderr and "broken-ops" in done.stderr and "no luck" in done.stderr
    assert "Traceback" not in done.stderr


_FAULTY = """
    import numpy as np
    from ir_runner.extension import OpDef, TensorSpec, register_op

    def infer(ctx):
        return [TensorSpec(ctx.inputs[0].element_type, ctx.inputs[0].shape)], {{}}

    def kernel(x):
        {body}

    def register():
        register_op(OpDef("ScaledTanh", 1, 0, 0, ("x",), infer, kernel, domain="my_ops"))
"""


@pytest.mark.parametrize(("body", "message"), [
    ("return np.zeros((3, 3), x.dtype)", "returned f32[3,3] for output 0, where its inference gives f32[2,3]"),
    ("return x.astype(np.float64)", "returned f64[2,3] for output 0, where its inference gives f32[2,3]"),
    ("return x.tolist()", "returned list for output 0"),
    ("return (x, x)", "returned tuple for output 0"),
    ("return 1 / 0", "failed: ZeroDivisionError: division by zero"),
], ids=["shape", "dtype", "list", "tuple", "raises"])
def test_an_extension_kernel_is_checked_against_its_inference_and_named(tmp_path, body, message):
    """An extension's kernel that contradicts its own inference (shape, dtype, not an array) or raises is an
    ExtensionKernelError naming the layer and the extension's package (exit 7), not a silent wrong result or
    'a bug in ir-run'."""
    _distribution(tmp_path, "faulty", _FAULTY.format(body=body), "faulty = faulty:register", dist="faulty-ops")
    done = _python(tmp_path, "", "-m", "ir_runner", str(EXAMPLE / "model.xml"), "--fill", "random")
    assert done.returncode == 7, done.stderr
    assert "ScaledTanh-1" in done.stderr and "faulty-ops (entry point ir_runner.ops: faulty)" in done.stderr
    assert message in done.stderr and "bug in that extension, not in ir-run" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_extension_kernel_folding_a_constant_is_checked_too(tmp_path):
    """On constant inputs the kernel runs while loading (constant folding): the same check applies there."""
    _distribution(tmp_path, "faulty", _FAULTY.format(body="return x.astype(np.float64)"), "faulty = faulty:register",
                  dist="faulty-ops")
    done = _python(tmp_path, """
        import numpy as np, ir_runner
        from tests.helpers.irbuild import IRBuilder

        b = IRBuilder("folded")
        c = b.const("c", np.ones((2, 2), np.float32))
        b.result(b.layer("ScaledTanh", "my_ops", [c], out_specs=[("FP32", [2, 2])], name="st"))
        try:
            ir_runner.load(*b.build()).run({})
        except ir_runner.ExtensionKernelError as error:
            print(error.exit_code, error)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("7 layer 'st' (ScaledTanh-1, id 1") and "faulty-ops" in done.stdout, done.stdout
    assert "returned f64[2,2] for output 0, where its inference gives f32[2,2]" in done.stdout


@pytest.mark.parametrize(("body", "message"), [
    ("return x.astype(np.float64)", "returned f64[2,1] for output 0, where its inference gives f32[2,1]"),
    ("return 1 / 0", "failed: ZeroDivisionError: division by zero"),
], ids=["dtype", "raises"])
def test_an_extension_kernel_after_a_run_time_shape_is_checked_too(tmp_path, body, message):
    """After an If whose branches give [2,1] or [3,1], the layer is inferred again at run: its kernel's results
    are checked, and its failure named, as on every other path (it returned f64 silently, or 'internal error')."""
    _distribution(tmp_path, "faulty", _FAULTY.format(body=body), "faulty = faulty:register", dist="faulty-ops")
    done = _python(tmp_path, f"""
        import re
        import numpy as np, openvino as ov, ir_runner
        from openvino import opset13 as op

        x, cond = op.parameter([4, 1], np.float32, name="x"), op.parameter([], np.bool_, name="cond")
        bodies = []
        for stop in (2, 3):
            inner = op.parameter([4, 1], np.float32)
            bodies.append((inner, op.result(op.slice(inner, op.constant(np.array([0])), op.constant(np.array([stop])),
                                                     op.constant(np.array([1]))))))
        node = op.if_op(cond)
        node.set_then_body(ov.Model([bodies[0][1]], [bodies[0][0]]))
        node.set_else_body(ov.Model([bodies[1][1]], [bodies[1][0]]))
        node.set_input(x.output(0), bodies[0][0], bodies[1][0])
        relu = op.relu(node.set_output(bodies[0][1], bodies[1][1]), name="ext")
        ov.save_model(ov.Model([relu], [x, cond]), "{tmp_path}/if.xml", compress_to_fp16=False)
        xml = open("{tmp_path}/if.xml").read().replace('type="ReLU" version="opset1"',
                                                       'type="ScaledTanh" version="my_ops"')
        model = ir_runner.load(xml.encode(), open("{tmp_path}/if.bin", "rb").read())
        try:
            print(model.run([np.ones((4, 1), np.float32), np.array(True)]))
        except ir_runner.ExtensionKernelError as error:
            print(error.exit_code, error)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("7 layer 'ext' (ScaledTanh-1, id 3") and "faulty-ops" in done.stdout, done.stdout
    assert message in done.stdout
