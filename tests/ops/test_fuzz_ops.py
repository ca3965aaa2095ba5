"""A fixed, seeded slice of the differential fuzzer of ``tests/helpers/fuzz_ops.py``: two random graphs per generator
(the elementwise, shape, movement, indexing, reduction, MatMul and Softmax operations, their chains,
the window, normalisation and classification operations, every
element type they draw), each checked as the fuzzer checks it: inferred port specs equal to the declared ones,
output shapes (bounds included) equal to OpenVINO's, values against OpenVINO's reference (or its CPU plugin)
under the operation's class (bits, ULPs, relative bound). A case OpenVINO rejects counts as skipped.
``python -m scripts.fuzz_ops --seeds 500`` runs a long campaign."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("openvino")

from tests.helpers import fuzz_ops  # noqa: E402

SEEDS = (0, 1)


@pytest.mark.parametrize("name", sorted(fuzz_ops.GENERATORS))
def test_fuzz_slice(name, tmp_path):
    failures = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for seed in SEEDS:
            status, detail = fuzz_ops.run_case(name, seed, tmp_path)
            if status == "fail":
                failures.append(f"python -m scripts.fuzz_ops --ops {name} --seed {seed}: {detail}")
    assert not failures, "\n".join(failures)
