"""Peak memory of one run, measured in a fresh process (``bench.py`` starts it; prints one JSON line).

    python -m scripts.bench_memory '{"engine": "ir-run", "xml": "m.xml", "inputs": [["x", "f32", [10], "values"]]}'

Steps: import, load the model (ir-run ``load`` or OpenVINO read + compile), note VmRSS (``base``), make
the inputs, reset the high-water mark (``/proc/self/clear_refs``, so the inputs' construction does not
count), run once, read VmHWM. ``peak`` is VmHWM - base: inputs + outputs + everything the run allocated.
``getrusage().ru_maxrss`` is not used: after exec it can report the parent's high-water mark, and it
cannot be reset. ``load`` is VmRSS after loading minus VmRSS before it (weights copied show up there).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def main(spec: dict) -> dict:
    import numpy as np

    from scripts.bench_models import make_input

    if spec["engine"] == "ir-run":
        import ir_runner

        before_load = _status_kib("VmRSS")
        model = ir_runner.load(spec["xml"])

        def run(feeds):
            return list(model.run(feeds).values())
    else:
        import openvino as ov

        before_load = _status_kib("VmRSS")
        compiled = ov.Core().compile_model(spec["xml"], "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        request = compiled.create_infer_request()

        def run(feeds):
            return list(request.infer(feeds, share_inputs=True, share_outputs=True).values())

    base, base_file = _status_kib("VmRSS"), _status_kib("RssFile")
    feeds = {name: make_input(dtype, tuple(shape), kind, seed) for seed, (name, dtype, shape, kind)
             in enumerate(spec["inputs"])}
    reset = _reset_peak()
    outputs = run(feeds)
    peak = _status_kib("VmHWM")
    file_growth = _status_kib("RssFile") - base_file
    return {
        "load_bytes": (base - before_load) * 1024,
        "peak_bytes": (peak - base) * 1024,
        "file_bytes": file_growth * 1024,
        "anon_peak_bytes": (peak - base - file_growth) * 1024,
        "inputs_bytes": int(sum(a.nbytes for a in feeds.values())),
        "outputs_bytes": int(sum(np.asarray(a).nbytes for a in outputs)),
        "peak_reset": reset,
    }


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
