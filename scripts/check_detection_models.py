"""Load, validate and run the detection IRs of scripts/make_detection_models.py; compare with OpenVINO CPU.

    python scripts/check_detection_models.py [--dir DIR] [--runs N] [NAME ...]

For each ``DIR/<name>.xml`` (default ``~/.cache/ir-run-detection``, all of them): ``ir_runner.validate`` and
``ir_runner.load``, then ``run`` on a seeded image (``numpy.random.default_rng(0).random``, f32 in [0, 1)) and
OpenVINO CPU with ``INFERENCE_PRECISION_HINT=f32`` on the same image. Detections are compared as sets, not in
order: with random weights many scores tie, and tied detections may come in either order. A detection of
OpenVINO's is matched by one of ir-run's with the same label and every box coordinate within
``1e-3 * max|box|``; the script prints the counts, how many matched, the largest score and box differences over
the matched pairs (and mask differences for Mask R-CNN), the scores of unmatched ones, and the best time per
image of each engine over N runs after a first one (ir-run's first run, which makes the plan, is printed apart).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import openvino as ov

import ir_runner


def best_time(call, runs: int) -> float:
    """The shortest wall time of ``runs`` calls, in seconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def match(got: list[np.ndarray], want: list[np.ndarray]) -> dict[str, object]:
    """Pair OpenVINO's detections (boxes, scores, labels[, masks]) with ir-run's: same label, boxes within
    ``1e-3 * max|box|``, the closest score first; the counts and the largest differences over the pairs."""
    boxes, scores, labels = got[:3]
    tolerance = 1e-3 * max(1.0, float(np.abs(want[0]).max(initial=0.0)))
    free = np.ones(len(scores), bool)
    pairs = []
    for i in range(len(want[1])):
        near = np.flatnonzero(free & (labels == want[2][i]) & (np.abs(boxes - want[0][i]).max(axis=1) <= tolerance))
        if len(near):
            j = int(near[np.argmin(np.abs(scores[near] - want[1][i]))])
            free[j] = False
            pairs.append((i, j))
    paired = {i for i, _ in pairs}

    def largest(k: int) -> float:
        return max((float(np.abs(got[k][j] - want[k][i]).max()) for i, j in pairs), default=0.0)

    found = {"ir-run": len(scores), "openvino": len(want[1]), "matched": len(pairs),
             "score": largest(1), "box": largest(0),
             "unmatched scores": sorted(float(want[1][i]) for i in range(len(want[1])) if i not in paired)}
    if len(got) > 3:
        found["mask"] = largest(3)
    return found


def check(path: Path, runs: int) -> None:
    report = ir_runner.validate(str(path))
    model = ir_runner.load(str(path))
    compiled = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    image = np.random.default_rng(0).random(tuple(compiled.inputs[0].shape), dtype=np.float32)
    feeds = {model.inputs[0].name: image}
    start = time.perf_counter()
    got = list(model.run(feeds).values())
    first = time.perf_counter() - start
    result = compiled(image)
    want = [result[output] for output in compiled.outputs]
    mine = best_time(lambda: model.run(feeds), runs)
    theirs = best_time(lambda: compiled(image), runs)
    print(f"{path.stem}: validate {'ok' if report.ok else 'FAILED'}, {len(report.errors)} error(s); "
          f"ir-run {mine:.3f} s per image (first run {first:.2f} s), OpenVINO {theirs:.3f} s ({mine / theirs:.1f}x)")
    print(f"  {match(got, want)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", metavar="NAME", help="models to check (default: every IR in DIR)")
    parser.add_argument("--dir", type=Path, default=Path.home() / ".cache" / "ir-run-detection")
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each engine (default 3)")
    args = parser.parse_args()
    paths = [args.dir / f"{name}.xml" for name in args.names] or sorted(args.dir.glob("*.xml"))
    for path in paths:
        check(path, args.runs)


if __name__ == "__main__":
    main()
