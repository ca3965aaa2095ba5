"""The wheel holds the ir_runner package (every module, and py.typed) and no tests; its metadata carries the
README. Built with pip from a copy of the checkout (about 3 s)."""

import importlib.util
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.project.docs_examples import copy_checkout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    source = tmp_path_factory.mktemp("source")
    out = tmp_path_factory.mktemp("wheel")
    copy_checkout(source)
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PIP_NO_INPUT": "1"})
    if done.returncode != 0 and "No matching distribution" in done.stderr:
        pytest.skip("no setuptools to build with (offline)")
    assert done.returncode == 0, done.stderr[-3000:]
    (built,) = out.glob("ir_run-*.whl")
    return built


def test_the_wheel_holds_the_package_and_its_data_and_no_tests(wheel: Path):
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {path.relative_to(ROOT).as_posix() for path in (ROOT / "ir_runner").rglob("*.py")}
    assert modules <= names, sorted(modules - names)
    assert "ir_runner/py.typed" in names
    top = {name.split("/", 1)[0] for name in names}
    assert top == {"ir_runner", "ir_run-0.1.0.dist-info".replace("0.1.0", _version())}, top


def _version() -> str:
    import ir_runner

    return ir_runner.__version__


def test_the_wheel_metadata_carries_the_readme_and_the_command(wheel: Path):
    archive = zipfile.ZipFile(wheel)
    info = next(name for name in archive.namelist() if name.endswith(".dist-info/METADATA"))
    metadata = archive.read(info).decode("utf-8")
    assert "Description-Content-Type: text/markdown" in metadata
    assert "## Quick start" in metadata and "License-Expression: Apache-2.0" in metadata
    entry_points = archive.read(info.replace("METADATA", "entry_points.txt")).decode("utf-8")
    assert "ir-run = ir_runner.cli:main" in entry_points
    if importlib.util.find_spec("twine") is not None:
        checked = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(wheel)],
                                 capture_output=True, text=True)
        assert checked.returncode == 0, checked.stdout + checked.stderr
