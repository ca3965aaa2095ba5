"""Per-token latency of greedy decoding on one state: ir-run against OpenVINO's CPU plugin.

    python -m scripts.bench_decode --corpus                # every model of the LLM corpus (tests/data/llm/)
    python -m scripts.bench_decode --corpus llama-int4 gpt2-default --steps 40
    python -m scripts.bench_decode                         # the tests' KV-cache decoder, 16 blocks, 40 steps
    python -m scripts.bench_decode --blocks 4 --steps 100
    python -m scripts.bench_decode --xml path/to/openvino_model.xml --prompt 1,2,3
    python -m scripts.bench_decode --stateless             # the same model with its KV cache as inputs/outputs

Both run the same steps: the prefill, then greedy decoding on one state, ir-run's chosen tokens fed to both
(OpenVINO with INFERENCE_PRECISION_HINT and KV_CACHE_PRECISION f32 and DYNAMIC_QUANTIZATION_GROUP_SIZE 0, as
the corpus tests compile it; the IR as exported). Every step's logits are checked within
1e-4 + R * max|OpenVINO's|, R = 1e-3, or 5e-3 for a corpus model with compressed weights (the CPU plugin
decompresses them in f32 where the IR's types and ir-run round to f16: tests/test_llm_corpus.py); exit 1
otherwise. Printed per model: the median milliseconds per decoding step (the prefill left out) of each and
their ratio; with several models, the geometric mean and the worst ratio. A corpus model's prompt (and a
Whisper decoder's encoder_hidden_states) are its recorded first step's. ``--stateless`` runs the stateless copy of
each model instead (OpenVINO's stateful-to-stateless transformation, as ``optimum-cli export openvino
--disable-stateful`` writes it: the KV cache as inputs ``past_key_values.*`` and outputs ``present.*``, no
beam_idx; Whisper's decoder keeps its cross-attention caches computed from encoder_hidden_states), carrying each
step's cache outputs to the next step's inputs.

OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are removed from this process's environment (the script re-executes
itself without them), never anywhere else.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from scripts.bench import _reexec_without_openblas_overrides  # (the standard library only)
from scripts.bench_timing import cpu_name

_reexec_without_openblas_overrides()
ROOT = Path(__file__).resolve().parent.parent
LOOSE = 5e-3


def time_decoding(xml: str, prompt: list[int], steps: int, given: dict, relative: float) -> tuple[float, float, float]:
    """(ir-run's median seconds per decoding step, OpenVINO's, the worst logits error over its bound)."""
    import numpy as np

    import ir_runner
    from ir_runner.device import DeviceRequest
    from ir_runner.generation import find_roles, generate

    model = ir_runner.load(xml)
    roles = find_roles(model, given)
    reference = DeviceRequest(model.source, model.weights_source, "CPU", "f32", True)
    theirs: list[float] = []
    worst = 0.0

    def compare(step) -> None:
        nonlocal worst
        started = time.perf_counter()
        want = reference.infer(step.feeds)[roles.logits]
        theirs.append(time.perf_counter() - started)
        error = float(np.abs(step.logits - want).max()) / (1e-4 + relative * float(np.abs(want).max()))
        worst = max(worst, error)

    done = generate(model, prompt, steps + 1, on_step=compare, given=given)
    return statistics.median(s.seconds for s in done[1:]), statistics.median(theirs[1:]), worst


def time_stateless(xml: str, prompt: list[int], steps: int, given: dict, relative: float
                   ) -> tuple[float, float, float]:
    """As :func:`time_decoding`, on a model whose KV cache is inputs and outputs (``tests.helpers.llm.next_cache``):
    each step fed the cache the step before returned (empty, of length 0, for the prefill)."""
    import numpy as np

    import ir_runner
    from ir_runner.device import DeviceRequest
    from tests.helpers.llm import empty_cache, next_cache, step_feeds

    model = ir_runner.load(xml)
    # (configured as for a stateful model, as the corpus tests are: else the CPU quantizes the activations of
    # MatMuls with compressed weights, 5x the bound on llama-int4)
    reference = DeviceRequest(model.source, model.weights_source, "CPU", "f32", True)
    names = {info.name for info in model.inputs}
    cache = empty_cache(model)
    ours: list[float] = []
    theirs: list[float] = []
    worst = 0.0
    tokens, past = list(prompt), 0
    for _ in range(steps + 1):
        feeds = {**step_feeds(names, tokens, past), **given, **cache}
        started = time.perf_counter()
        out = model.run(feeds)
        ours.append(time.perf_counter() - started)
        started = time.perf_counter()
        want = reference.infer(feeds)["logits"]
        theirs.append(time.perf_counter() - started)
        worst = max(worst, float(np.abs(out["logits"] - want).max()) / (1e-4 + relative * float(np.abs(want).max())))
        cache = next_cache(out)
        past += len(tokens)
        tokens = [int(np.argmax(out["logits"][0, -1]))]
    return statistics.median(ours[1:]), statistics.median(theirs[1:]), worst


def _timed(xml: str, folder: str, stateless: bool):
    """The IR to time and the function that times it: ``xml`` itself, or its stateless copy in ``folder``."""
    if not stateless:
        return xml, time_decoding
    from tests.helpers.llm import stateless_copy

    return str(stateless_copy(Path(xml), Path(tempfile.mkdtemp(dir=folder)))), time_stateless


def corpus(names: list[str], steps: int, stateless: bool = False) -> list[tuple[str, float, float, float]]:
    """One row per corpus model (all when ``names`` is empty): name, ir-run and OpenVINO seconds, worst error."""
    from tests.helpers.llm import LLM_DIR, STEP_INPUTS, corpus_models, recorded_steps

    rows = []
    for name in names or corpus_models():
        first = recorded_steps(name)[0]
        prompt = [int(t) for t in first["input_ids"][0]]
        given = {k: v for k, v in first.items() if k not in STEP_INPUTS and not k.endswith("logits")}
        relative = 1e-3 if name.endswith("-default") else LOOSE
        with tempfile.TemporaryDirectory() as folder:
            xml, timer = _timed(str(LLM_DIR / name / "openvino_model.xml"), folder, stateless)
            row = (name, *timer(xml, prompt, steps, given, relative))
        print(f"{row[0]:20} {1e3 * row[1]:9.2f} {1e3 * row[2]:9.2f} {row[1] / row[2]:6.1f}x {row[3]:9.2f}",
              flush=True)
        rows.append(row)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="corpus models to time with --corpus (default: all)")
    parser.add_argument("--corpus", action="store_true", help="time the LLM corpus's models")
    parser.add_argument("--xml", help="a stateful IR to time (default: build the tests' decoder)")
    parser.add_argument("--blocks", type=int, default=16, help="blocks of the built decoder")
    parser.add_argument("--steps", type=int, default=40, help="decoding steps after the prefill")
    parser.add_argument("--prompt", default="1,5,7", help="the prompt's token ids")
    parser.add_argument("--stateless", action="store_true",
                        help="time the model's stateless copy (the KV cache as inputs and outputs)")
    options = parser.parse_args()
    import openvino

    cleared = os.environ.get("IR_RUN_BENCH_CLEARED")
    print(f"OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE: {'unset for this run (' + cleared + ')' if cleared else 'not set'};"
          f" {cpu_name()}, {os.cpu_count()} CPUs; openvino {openvino.__version__}; {options.steps} decoding steps")
    if options.corpus:
        print(f"{'model':20} {'ir-run ms':>9} {'OV ms':>9} {'ratio':>7} {'err/bound':>9}")
        rows = corpus(options.names, options.steps, options.stateless)
        ratios = [ours / theirs for _, ours, theirs, _ in rows]
        worst = max(row[3] for row in rows)
        print(f"geometric mean ratio {math.exp(statistics.fmean(map(math.log, ratios))):.2f}x, worst"
              f" {max(ratios):.2f}x ({rows[ratios.index(max(ratios))][0]}); worst logits error {worst:.3g} of the"
              " bound")
        return 0 if worst <= 1 else 1
    with tempfile.TemporaryDirectory() as folder:
        xml = options.xml
        if xml is None:
            from tests.helpers.stateful_models import decoder

            xml = str(decoder(Path(folder) / "decoder.xml", init=True, layers=options.blocks))
        prompt = [int(t) for t in options.prompt.split(",")]
        xml, timer = _timed(xml, folder, options.stateless)
        ours, theirs, worst = timer(xml, prompt, options.steps, {}, 1e-3)
    print(f"ir-run    median {1e3 * ours:.1f} ms per token")
    print(f"OpenVINO  median {1e3 * theirs:.1f} ms per token")
    print(f"ratio     {ours / theirs:.1f}x; worst logits error {worst:.3g} of the bound")
    return 0 if worst <= 1 else 1


if __name__ == "__main__":
    sys.exit(main())
