"""Shared test fixtures: where the samples live."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
SAMPLES = ROOT / "tests" / "data" / "samples"  # real IRs written by OpenVINO (their README says which)


@pytest.fixture
def models_dir() -> Path:
    return MODELS
