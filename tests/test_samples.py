"""Every sample in models/ runs and reproduces OpenVINO's reference outputs bit for bit;
every real IR in tests/data/samples loads and validates."""

from pathlib import Path

import numpy as np
import pytest

import ir_runner
from tests.conftest import MODELS
from tests.conftest import SAMPLES as REAL_IRS

SAMPLES = sorted(MODELS.glob("*.xml"))


def test_models_folder_has_samples():
    assert len(SAMPLES) >= 10


@pytest.mark.parametrize("xml", SAMPLES, ids=lambda p: p.stem)
def test_sample_matches_expected(xml: Path):
    model = ir_runner.load(xml)
    with np.load(xml.with_suffix(".inputs.npz")) as inputs:
        feeds = dict(inputs)
    with np.load(xml.with_suffix(".expected.npz")) as expected_file:
        expected = dict(expected_file)
    outputs = model.run(feeds)
    assert list(outputs) == [o.name for o in model.outputs]
    assert set(outputs) == set(expected)
    for name, want in expected.items():
        got = outputs[name]
        assert got.dtype == want.dtype, name
        assert got.shape == want.shape, name
        assert got.tobytes() == want.tobytes(), name


@pytest.mark.parametrize("name", ["static_nocompress", "static_fp16compress", "dynamic", "gather7_bd_neg",
                                  "select_pdpd_axis0"])
def test_real_ir_loads_and_validates(name: str):
    model = ir_runner.load(REAL_IRS / f"{name}.xml")
    assert model.inputs and model.outputs
    assert ir_runner.validate(REAL_IRS / f"{name}.xml").ok


def test_the_real_irs_are_in_the_repository():
    """A clone alone runs every test: the real IRs ship with the tests, nothing is looked for outside."""
    assert sorted(p.stem for p in REAL_IRS.glob("*.xml")) == ["dynamic", "gather7_bd_neg", "select_pdpd_axis0",
                                                           "static_fp16compress", "static_nocompress"]
    assert all(p.with_suffix(".bin").is_file() for p in REAL_IRS.glob("*.xml"))
