"""Run-to-run determinism: ir-run's threaded kernels and the real networks (tests/helpers/determinism.py, at
several times the thread thresholds), called many times in a shuffled order (the allocator's state shifted
between calls by random-sized buffers), each output compared bit for bit with the first call's. Run it with the
machine loaded by another process to vary thread timing. tests/test_determinism.py is its short version.

    python -m scripts.stress_determinism [ROUNDS]     (IR_RUN_THREADS=N to vary how rows are split)

Prints every difference (case, elements, first index, largest difference in ulps) and a summary; exits 1 if
any output differed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def main(rounds: int) -> int:
    from tests.helpers.determinism import differences, kernel_cases, real_networks, snapshot

    rng = np.random.default_rng(0)
    models = kernel_cases(rng, large=True) | real_networks()
    first = {name: snapshot(models[name]) for name in models}
    names, junk, calls, differed = list(models), [], 0, {}
    for r in range(rounds):
        for name in (names[i] for i in rng.permutation(len(names))):
            if rng.random() < 0.3:  # shift the allocator's state: buffers come back at other addresses
                junk.append(np.empty(int(rng.integers(1, 300000)), np.uint8))
                if len(junk) > 20:
                    junk.pop(int(rng.integers(0, len(junk))))
            calls += 1
            for line in differences(snapshot(models[name]), first[name]):
                differed[name] = differed.get(name, 0) + 1
                print(f"DIFF {name} round {r}: {line}", flush=True)
    print(f"{calls} calls of {len(models)} cases over {rounds} rounds; differed: {differed or 'none'}")
    return 1 if differed else 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20))
