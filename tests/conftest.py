"""Shared test fixtures: where the samples live; each test in the floating-point environment it started in."""

from pathlib import Path

import pytest

from ir_runner import fpenv

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
SAMPLES = ROOT / "tests" / "data" / "samples"  # real IRs written by OpenVINO (their README says which)


@pytest.fixture
def models_dir() -> Path:
    return MODELS


@pytest.fixture(autouse=True)
def _floating_point_environment():
    """The thread's floating-point environment restored after each test: a test that compiles for OpenVINO's CPU
    plugin with ``CPU_DENORMALS_OPTIMIZATION`` leaves FTZ/DAZ set (ir_runner.fpenv), which would flush the numpy
    and ``Node.evaluate`` references of every later test in the thread (ir-run's own runs clear them)."""
    with fpenv.preserved():
        yield
