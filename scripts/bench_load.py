"""Load the generated large IR with ir-run in a fresh process and time it (``bench.py`` starts it with a
timeout, so that a slow load cannot make the benchmark unbounded). Prints one JSON line:
``load_ns``, ``first_run_ns`` (load + first run) and ``exact`` (the output equals plain numpy's).

    python -m scripts.bench_load LARGE.xml LAYERS
"""

from __future__ import annotations

import json
import sys
import time


def main(xml: str, layers: int) -> dict:
    import ir_runner
    from scripts.bench_models import large_model_reference, make_input
    from scripts.bench_timing import same_bits

    feeds = {"cond": make_input("boolean", (2, 8), "mask:0.5", 1), "x": make_input("f32", (2, 8), "values", 2)}
    start = time.perf_counter_ns()
    model = ir_runner.load(xml)
    loaded = time.perf_counter_ns()
    out = model.run(feeds)["out"]
    done = time.perf_counter_ns()
    exact = same_bits(out, large_model_reference(layers, feeds["cond"], feeds["x"]))
    return {"load_ns": loaded - start, "first_run_ns": done - start, "exact": exact}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], int(sys.argv[2]))))
