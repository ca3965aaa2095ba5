"""Run-to-run determinism: ir-run's threaded kernels and the real networks, called many times in a shuffled
order (the allocator's state shifted between calls by random-sized buffers), each output compared bit for
bit with the first call's. Run it with the machine loaded by another process to vary thread timing.

    python scripts/stress_determinism.py [ROUNDS]     (IR_RUN_THREADS=N to vary how rows are split)

Prints every difference (case, elements, first index, largest difference in ulps) and a summary; exits 1 if
any output differed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def _single(rng, type_, version, shapes, attrs, out_shape, consts=(), scale=4.0):
    """A one-layer model over f32 parameters of ``shapes`` (and constant inputs), with random feeds."""
    import ir_runner
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder()
    ins = [b.parameter(f"x{i}", "f32", ",".join(map(str, s))) for i, s in enumerate(shapes)]
    ins += [b.const(f"c{i}", c) for i, c in enumerate(consts)]
    b.result(b.layer(type_, version, ins, attrs=attrs, out_specs=[("FP32", list(out_shape))]))
    xml, weights = b.build()
    feeds = {f"x{i}": (rng.standard_normal(s) * scale).astype(np.float32) for i, s in enumerate(shapes)}
    return ir_runner.load(xml, weights=weights), feeds


def cases(rng) -> dict:
    """Threaded kernels (above their thresholds, with row blocks not dividing evenly) and the real networks."""
    import ir_runner

    found = {}
    for shape in [(64, 1000), (3000, 37), (256, 4096), (17, 1931), (5, 40, 300)]:
        found[f"Softmax last {shape}"] = _single(rng, "Softmax", "opset8", [shape], {"axis": -1}, shape)
    found["LogSoftmax last"] = _single(rng, "LogSoftmax", "opset5", [(300, 700)], {"axis": -1}, (300, 700))
    for shape, axis in [((700, 900), 0), ((40, 300, 50), 1), ((3, 200000), 0)]:
        found[f"Softmax axis {axis} {shape}"] = _single(rng, "Softmax", "opset8", [shape], {"axis": axis}, shape)
    found["Softmax wide range"] = _single(rng, "Softmax", "opset8", [(128, 2048)], {"axis": -1}, (128, 2048),
                                          scale=40.0)
    for op, version in [("Exp", "opset1"), ("Sigmoid", "opset1"), ("Tanh", "opset1"), ("Erf", "opset1"),
                        ("Swish", "opset4"), ("SoftPlus", "opset4"), ("HSwish", "opset4"), ("Mish", "opset4")]:
        for shape in [(1200, 1000), (1000003,)]:
            found[f"{op} {shape}"] = _single(rng, op, version, [shape], None, shape)
    for op in ["Add", "Multiply", "Divide", "Subtract", "Power", "SquaredDifference"]:
        numpy_rule = {"auto_broadcast": "numpy"}
        found[f"{op} broadcast"] = _single(rng, op, "opset1", [(1024, 1100), (1024, 1)], numpy_rule, (1024, 1100))
        found[f"{op} same"] = _single(rng, op, "opset1", [(1100003,), (1100003,)], numpy_rule, (1100003,))
    for axes, out in [([2], (64, 128, 1)), ([0], (1, 128, 300)), ([1], (64, 1, 300)), ([0, 2], (1, 128, 1))]:
        for op in ["ReduceSum", "ReduceMean", "ReduceL2"]:
            found[f"{op} {axes}"] = _single(rng, op, "opset4" if op == "ReduceL2" else "opset1", [(64, 128, 300)],
                                            {"keep_dims": "true"}, out, consts=[np.array(axes, np.int64)])
    found["Concat axis 1"] = _single(rng, "Concat", "opset1", [(512, 1024), (512, 1000)], {"axis": 1}, (512, 2024))
    found["Concat axis 0"] = _single(rng, "Concat", "opset1", [(512, 1024), (600, 1024)], {"axis": 0}, (1112, 1024))
    found["MatMul"] = _single(rng, "MatMul", "opset1", [(8, 512, 768), (768, 768)],
                              {"transpose_a": "false", "transpose_b": "false"}, (8, 512, 768))
    found["MatMul transpose_b"] = _single(rng, "MatMul", "opset1", [(4, 12, 256, 64), (4, 12, 256, 64)],
                                          {"transpose_a": "false", "transpose_b": "true"}, (4, 12, 256, 256))
    mvn = {"normalize_variance": "true", "eps": "1e-5"}
    found["MVN last"] = _single(rng, "MVN", "opset6", [(8, 512, 768)], mvn | {"eps_mode": "inside_sqrt"},
                                (8, 512, 768), consts=[np.array([-1], np.int64)])
    found["MVN spatial"] = _single(rng, "MVN", "opset6", [(8, 64, 56, 56)], mvn | {"eps_mode": "outside_sqrt"},
                                   (8, 64, 56, 56), consts=[np.array([2, 3], np.int64)])
    real = ROOT / "models" / "real"
    for name in json.loads((real / "manifest.json").read_text())["networks"]:
        if (real / name / "model.xml").exists():
            found[f"real {name}"] = (ir_runner.load(str(real / name / "model.xml")),
                                     dict(np.load(real / name / "inputs.npz")))
    return found


def main(rounds: int) -> int:
    sys.path.insert(0, str(ROOT))  # tests.helpers.irbuild builds the one-layer models
    rng = np.random.default_rng(0)
    models = cases(rng)

    def run(name: str) -> dict[str, np.ndarray]:
        model, feeds = models[name]
        return {k: np.array(v, copy=True) for k, v in model.run(feeds).items()}

    first = {name: run(name) for name in models}
    names, junk, calls, differed = list(models), [], 0, {}
    for r in range(rounds):
        for name in (names[i] for i in rng.permutation(len(names))):
            if rng.random() < 0.3:  # shift the allocator's state: buffers come back at other addresses
                junk.append(np.empty(int(rng.integers(1, 300000)), np.uint8))
                if len(junk) > 20:
                    junk.pop(int(rng.integers(0, len(junk))))
            calls += 1
            for key, got in run(name).items():
                want = first[name][key]
                if got.tobytes() != want.tobytes():
                    a = got.reshape(-1).view(np.uint32).astype(np.int64)
                    b = want.reshape(-1).view(np.uint32).astype(np.int64)
                    bad = np.flatnonzero(a != b)
                    differed[name] = differed.get(name, 0) + 1
                    print(f"DIFF {name} {key} round {r}: {bad.size} elements, first {bad[0]}, "
                          f"up to {np.abs(a - b).max()} ulps", flush=True)
    print(f"{calls} calls of {len(models)} cases over {rounds} rounds; differed: {differed or 'none'}")
    return 1 if differed else 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20))
