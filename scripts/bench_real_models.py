"""Real networks: ir-run against OpenVINO CPU, per network, in the same run.

    python -m scripts.bench_real_models                 # the committed corpus (models/real/)
    python -m scripts.bench_real_models --zoo           # and the ONNX zoo CNNs (needs onnx; cached IRs)
    python -m scripts.bench_real_models --cnn           # and the deployed CNNs (scripts/make_cnn_models.py)
    python -m scripts.bench_real_models gpt2 resnet50   # some networks

For each network whose operations ir-run implements (the others are listed with what they miss):

- latency: median of ``Model.run(feeds)`` against OpenVINO CPU's ``compiled_model(feeds)``
  (``INFERENCE_PRECISION_HINT=f32``), both warmed up, repeated for at least ``--seconds``; the outputs are
  first checked within |got - want| <= 1e-4 + 1e-3 max|want|;
- time to first result: a fresh Python process that imports ir-run, loads and runs once, against one
  that imports openvino, reads, compiles and infers once (wall time of the process, interpreter included;
  the best of 3, bytecode caches on in a temporary folder as for an installed package, see bench_timing);
- peak memory: the fresh processes' peak RSS (``VmHWM``), and the weights' size.

The goals (issue 27): geometric mean of the latency ratios <= 1.5, none above 3, first result below
OpenVINO's; peak memory at most 1.5x OpenVINO's. The header names the CPU and the load average.
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are removed from this process's environment and its children's only
(the script re-executes itself without them), never anywhere else.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CLEARED_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")

if any(name in os.environ for name in _CLEARED_ENV):
    env = {k: v for k, v in os.environ.items() if k not in _CLEARED_ENV}
    env["IR_RUN_BENCH_CLEARED"] = ",".join(n for n in _CLEARED_ENV if n in os.environ)
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)  # (as run: -m scripts.NAME)

import numpy as np  # noqa: E402

from scripts.bench_timing import bytecode_env, cpu_name  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "models" / "real"
CPU_CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}

# peak memory: VmHWM of the process's own address space (ru_maxrss would include the parent's, inherited
# through the fork/vfork that starts the child)
PEAK = "next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM'))"
FIRST_IR_RUN = """
import time, sys
start = time.perf_counter()
import numpy as np, ir_runner
feeds = dict(np.load(sys.argv[1]))
ir_runner.load(sys.argv[2]).run(feeds)
print(time.perf_counter() - start, PEAK)
""".replace("PEAK", PEAK)
FIRST_OPENVINO = """
import time, sys, json
start = time.perf_counter()
import numpy as np, openvino as ov
feeds = dict(np.load(sys.argv[1]))
compiled = ov.Core().compile_model(ov.Core().read_model(sys.argv[2]), "CPU", json.loads(sys.argv[3]))
compiled(feeds)
print(time.perf_counter() - start, PEAK)
""".replace("PEAK", PEAK)


def networks(names: list[str], zoo: bool, cnn: Path | None) -> list[tuple[str, Path]]:
    """(name, model.xml) of the corpus networks, then of the zoo CNNs (converted into the cache if needed),
    then of the CNNs ``scripts/make_cnn_models.py`` wrote into ``cnn``."""
    found = [(d.name, d / "model.xml") for d in sorted(REAL.iterdir()) if (d / "model.xml").exists()]
    found = [(n, p) for n, p in found if not names or n in names]
    if zoo or set(names) - {n for n, _ in found}:
        from tests.helpers.zoo import ZOO, zoo_ir

        found += [(n, zoo_ir(n)) for n in ZOO if (zoo and not names) or n in names]
    if cnn is not None:
        made = [(d.name, d / "model.xml") for d in sorted(cnn.iterdir()) if (d / "model.xml").exists()]
        found += [(n, p) for n, p in made if not names or n in names]
    return found


def missing_ops(xml: Path) -> list[str]:
    import ir_runner
    from ir_runner.errors import UnsupportedError

    report = ir_runner.validate(str(xml))
    return sorted({e.layer.type_version if e.layer else e.detail for e in report.errors
                   if isinstance(e, UnsupportedError)})


def timed(call, seconds: float) -> float:
    """Median seconds of ``call()`` over at least ``seconds`` (and 5 calls), after 2 warm-up calls."""
    call()
    call()
    times: list[float] = []
    deadline = time.perf_counter() + seconds
    while len(times) < 5 or time.perf_counter() < deadline:
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def fresh(script: str, feeds: Path, xml: Path, env: dict[str, str], *extra: str) -> tuple[float, float]:
    """(wall seconds of a fresh process, its peak RSS in MiB), the best of 3 runs in ``env``."""
    best = (float("inf"), 0.0)
    for _ in range(3):
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", script, str(feeds), str(xml), *extra], capture_output=True,
                             text=True, check=True, cwd=ROOT, env=env)
        wall = time.perf_counter() - start
        rss = float(out.stdout.split()[1]) / 1024
        best = min(best, (wall, rss))
    return best


def close(got: dict, want: list) -> float:
    """The largest |got - want| / (1e-4 + 1e-3 max|want|) over the outputs (<= 1 passes)."""
    worst = 0.0
    for g, w in zip(got.values(), want, strict=True):
        bound = 1e-4 + 1e-3 * float(np.max(np.abs(w), initial=0.0))
        worst = max(worst, float(np.max(np.abs(g.astype(np.float64) - w), initial=0.0)) / bound)
    return worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="networks (default: the committed corpus)")
    parser.add_argument("--zoo", action="store_true", help="also the ONNX model-zoo CNNs (needs onnx)")
    parser.add_argument("--cnn", type=Path, nargs="?", const=Path.home() / ".cache" / "ir-run-cnn",
                        help="also the CNNs scripts/make_cnn_models.py wrote to this folder (default: its default)")
    parser.add_argument("--seconds", type=float, default=2.0, help="minimum timing per measurement")
    parser.add_argument("--json", type=Path, help="write the rows to this file")
    parser.add_argument("--threads", type=int, help="threads of both engines (IR_RUN_THREADS and OpenVINO's"
                        " INFERENCE_NUM_THREADS; default: each its own): 1 compares CPU work on a busy machine")
    args = parser.parse_args()
    config = dict(CPU_CONFIG)
    if args.threads:
        os.environ["IR_RUN_THREADS"] = str(args.threads)  # before ir_runner is imported (read at import)
        config["INFERENCE_NUM_THREADS"] = args.threads
    import openvino as ov

    import ir_runner

    cleared = os.environ.get("IR_RUN_BENCH_CLEARED")
    print(f"OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE: {'unset for this run (' + cleared + ')' if cleared else 'not set'};"
          f" {cpu_name()}, {os.cpu_count()} CPUs; threads {args.threads or 'default'};"
          f" load average {os.getloadavg()[0]:.1f}; openvino {ov.__version__}")
    print(f"{'network':16} {'weights':>8} {'ir-run ms':>10} {'OV ms':>8} {'ratio':>6} {'first ir-run s':>14}"
          f" {'first OV s':>10} {'peak ir-run MiB':>15} {'peak OV MiB':>11} {'err/bound':>9}")
    rows, ratios, names = [], [], []
    scratch = tempfile.TemporaryDirectory(prefix="ir-run-bench-")  # removed at exit
    env = bytecode_env(Path(scratch.name))  # the first of each 3 processes writes the caches
    core = ov.Core()
    for name, xml in networks(args.names, args.zoo, args.cnn):
        missing = missing_ops(xml)
        if missing:
            print(f"{name:16} not run: {len(missing)} operation(s) not implemented: {', '.join(missing)}")
            rows.append({"network": name, "missing": missing})
            continue
        feeds_path = xml.parent / "inputs.npz"
        feeds = dict(np.load(feeds_path))
        try:
            model = ir_runner.load(str(xml))
        except ir_runner.IRError as error:
            print(f"{name:16} not run: {str(error).splitlines()[0]}")
            rows.append({"network": name, "error": str(error)})
            continue
        compiled = core.compile_model(str(xml), "CPU", config)
        want = [np.array(v) for v in compiled(feeds).values()]
        error = close(model.run(feeds), want)
        ours = timed(lambda: model.run(feeds), args.seconds)  # noqa: B023
        theirs = timed(lambda: compiled(feeds), args.seconds)  # noqa: B023
        first_ours, peak_ours = fresh(FIRST_IR_RUN, feeds_path, xml, env)
        first_theirs, peak_theirs = fresh(FIRST_OPENVINO, feeds_path, xml, env, json.dumps(config))
        weights = xml.with_suffix(".bin").stat().st_size / 2**20
        ratios.append(ours / theirs)
        names.append(name)
        row = {"network": name, "weights_mib": weights, "ir_run_ms": ours * 1e3, "openvino_ms": theirs * 1e3,
               "first_ir_run_s": first_ours, "first_openvino_s": first_theirs, "peak_ir_run_mib": peak_ours,
               "peak_openvino_mib": peak_theirs, "error_over_bound": error}
        rows.append(row)
        print(f"{name:16} {weights:7.1f}M {ours * 1e3:10.2f} {theirs * 1e3:8.2f} {ours / theirs:6.2f}"
              f" {first_ours:14.2f} {first_theirs:10.2f} {peak_ours:15.0f} {peak_theirs:11.0f} {error:9.3f}")
    if ratios:
        geomean = float(np.exp(np.mean(np.log(ratios))))
        worst = int(np.argmax(ratios))
        print(f"latency ratio ir-run/OpenVINO: geometric mean {geomean:.2f} over {len(ratios)} network(s),"
              f" worst {ratios[worst]:.2f} ({names[worst]}); goals (issue 27): <= 1.5, none above 3;"
              f" load average {os.getloadavg()[0]:.1f}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
