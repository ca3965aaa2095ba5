"""The model and feeds of the Dask tests (tests/test_dask.py, tests/cli/test_cli_dask.py): rows carried by two
inputs, a third shared; Select, a Gather of columns and a Convert to f16. ``grown_from`` grows a network's sample
inputs to many rows (tests/test_dask_networks.py, scripts/bench_dask_networks.py)."""

from __future__ import annotations

import numpy as np

from tests.helpers.irbuild import IRBuilder

C = 8


def select_gather_model(directory, columns: int = C, *, gather_axis: int = 1, rows: str = "?"):
    """cond bool[rows,C] and then f32[rows,C] carry the rows, else f32[C] is shared: Select, then a Gather of
    three columns (or along ``gather_axis``) converted to f16, and the Select's own output."""
    b = IRBuilder()
    cond = b.parameter("cond", "boolean", f"{rows},{columns}")
    then = b.parameter("then", "f32", f"{rows},{columns}")
    other = b.parameter("else", "f32", f"{columns}")
    sel = b.layer("Select", "opset1", [cond, then, other], name="select", out_specs=[("f32", f"{rows},{columns}")],
                  out_names=["selected"])
    idx = b.const("idx", np.array([columns - 1, 0, 3], dtype=np.int64))
    axis = b.const("axis", np.array(gather_axis, dtype=np.int64))
    out_dims = f"{rows},3" if gather_axis == 1 else f"3,{columns}"
    gather = b.layer("Gather", "opset8", [sel, idx, axis], name="pick", out_specs=[("f32", out_dims)])
    half = b.convert(gather, "f16", name="half")
    b.result(half, name="picked")
    b.result(sel, name="selected_out")
    return b.write(directory)


def feeds(rows: int, seed: int = 0, columns: int = C) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    then = rng.standard_normal((rows, columns)).astype(np.float32)
    then[::7, 1] = np.float32("nan")
    return {"cond": rng.random((rows, columns)) > 0.5, "then": then,
            "else": rng.standard_normal(columns).astype(np.float32)}


def grown_from(sample: dict[str, np.ndarray], rows: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Sample inputs repeated to ``rows`` rows, made distinct: noise on floats, integers (token ids,
    attention masks) shuffled within each row."""
    rng = np.random.default_rng(seed)
    out = {}
    for key, value in sample.items():
        repeated = np.concatenate([value] * -(-rows // value.shape[0]))[:rows].copy()
        if repeated.dtype.kind == "f":
            repeated += (rng.standard_normal(repeated.shape) * repeated.std()).astype(repeated.dtype)
        elif repeated.ndim > 1:
            repeated = rng.permuted(repeated, axis=1)
        out[key] = repeated
    return out
