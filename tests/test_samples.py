"""Every sample in models/ runs and reproduces OpenVINO's reference outputs bit for bit;
every real IR in ../shared/samples loads."""

from pathlib import Path

import numpy as np
import pytest

import ir_runner
from tests.conftest import MODELS, SHARED_SAMPLES

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


@pytest.mark.skipif(not SHARED_SAMPLES.is_dir(), reason="../shared/samples is not beside this checkout")
@pytest.mark.parametrize("name", ["static_nocompress", "static_fp16compress", "dynamic", "gather7_bd_neg",
                                  "select_pdpd_axis0"])
def test_shared_sample_loads_and_validates(name: str):
    model = ir_runner.load(SHARED_SAMPLES / f"{name}.xml")
    assert model.inputs and model.outputs
    assert ir_runner.validate(SHARED_SAMPLES / f"{name}.xml").ok
