"""Shared test fixtures: where the samples live."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
SHARED_SAMPLES = ROOT.parent / "shared" / "samples"


@pytest.fixture
def models_dir() -> Path:
    return MODELS
