"""Differential generators for the operations of issue 23's last batch (SparseFillEmptyRows, CTCLoss,
Multinomial, ErfInv, ...): registered into ``fuzz_ops.GENERATORS``, so ``scripts/fuzz_ops.py`` and
``tests/ops/test_fuzz_ops.py`` run them like every other generator. Most of these operations have no
``Node.evaluate`` in the wheel: the oracle is then the CPU plugin (``case.oracle = "cpu"``)."""

from __future__ import annotations

import numpy as np
from openvino import opset16

from tests.helpers.fuzz_ops import CPU_TYPES, Case, exact, op


@op("SparseFillEmptyRows")
def gen_sparse_fill(case: Case, name: str):
    """Random sparse tensors (distinct cells, any order, empty rows), constant or fed indices: the CPU plugin's
    types (it computes i64 values in i32) and at least one value (with none it fills with garbage, 2026.4.1;
    tests/ops/test_sparse_fill.py checks that case)."""
    case.oracle, case.compare = "cpu", exact
    et, it = case.rng.choice(CPU_TYPES), case.rng.choice(["i32", "i64"])
    rows, cols = case.rng.randint(1, 6), case.rng.randint(1, 5)
    count = case.rng.randint(1, rows * cols)
    cells = case.np.permutation(rows * cols)[:count]
    pairs = np.stack([cells // cols, cells % cols], axis=1).reshape(count, 2)
    return [opset16.sparse_fill_empty_rows(
        case.input(et, case.values(et, [count], finite=True), p_const=0.1),
        case.input(it, np.array([rows, cols]), p_const=0.5, p_dyn=0.3),
        case.input(it, pairs, p_const=0.5, p_dyn=0.3), case.input(et, case.values(et, [], finite=True)))]
