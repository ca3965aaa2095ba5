"""Per-token latency of greedy decoding on one state: ir-run against OpenVINO's CPU plugin.

    python scripts/bench_decode.py                         # the tests' KV-cache decoder, 16 blocks, 40 steps
    python scripts/bench_decode.py --blocks 4 --steps 100
    python scripts/bench_decode.py --xml path/to/openvino_model.xml --prompt 1,2,3

Both run the same steps (ir-run's chosen tokens fed to both; OpenVINO with INFERENCE_PRECISION_HINT and
KV_CACHE_PRECISION f32), and every step's logits are checked within 1e-4 + 1e-3 * max|OpenVINO's| (exit 1
otherwise). Printed: the median milliseconds per decoding step (the prefill left out) of each, their ratio,
and ir-run's first step after the prefill (a new plan every step: the shapes grow).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--xml", help="a stateful IR to time (default: build the tests' decoder)")
    parser.add_argument("--blocks", type=int, default=16, help="blocks of the built decoder")
    parser.add_argument("--steps", type=int, default=40, help="decoding steps after the prefill")
    parser.add_argument("--prompt", default="1,5,7", help="the prompt's token ids")
    options = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import numpy as np

    import ir_runner
    from ir_runner.device import DeviceRequest
    from ir_runner.generation import find_roles, generate

    with tempfile.TemporaryDirectory() as folder:
        xml = options.xml
        if xml is None:
            from tests.helpers.stateful_models import decoder

            xml = str(decoder(Path(folder) / "decoder.xml", init=True, layers=options.blocks))
        model = ir_runner.load(xml)
        roles = find_roles(model)
        reference = DeviceRequest(model.source, model.weights_source, "CPU", "f32", True)
        theirs: list[float] = []
        worst = 0.0

        def compare(step) -> None:
            nonlocal worst
            started = time.perf_counter()
            want = reference.infer(step.feeds)[roles.logits]
            theirs.append(time.perf_counter() - started)
            error = float(np.abs(step.logits - want).max()) / (1e-4 + 1e-3 * float(np.abs(want).max()))
            worst = max(worst, error)

        steps = generate(model, [int(t) for t in options.prompt.split(",")], options.steps + 1, on_step=compare)
    ours = [step.seconds for step in steps[1:]]
    print(f"{len(model.graph.layers)} layers, {len(model.variables)} variables, {options.steps} steps")
    print(f"ir-run    median {1e3 * statistics.median(ours):.1f} ms per token (first decoding step"
          f" {1e3 * ours[0]:.1f} ms)")
    print(f"OpenVINO  median {1e3 * statistics.median(theirs[1:]):.1f} ms per token")
    print(f"ratio     {statistics.median(ours) / statistics.median(theirs[1:]):.1f}x;"
          f" worst logits error {worst:.3g} of the bound")
    return 0 if worst <= 1 else 1


if __name__ == "__main__":
    sys.exit(main())
