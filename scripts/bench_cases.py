"""The benchmark cases of ``bench.py``: each measures ir-run, OpenVINO (CPU, f32 hint) and plain numpy.

Every case first checks that ir-run's outputs equal numpy's and OpenVINO's bit for bit (a mismatch is
recorded in ``Context.failures`` and makes ``bench.py`` exit 1), then times the three with inputs made
outside the timed region. Ratios are ir-run / OpenVINO times (below 1: ir-run is faster).
"""

from __future__ import annotations

import functools
import gc
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import openvino as ov
from lxml import etree

import ir_runner
from scripts.bench_models import (
    big_const_expected,
    big_const_model,
    gather_model,
    large_model,
    large_model_reference,
    make_input,
    select_gather_model,
    select_model,
)
from scripts.bench_timing import bytecode_env, medians, once_ns, same_bits

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
CPU_CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}
MIB = 2**20


@dataclass
class Row:
    """One line of the table; times in ns (``unit="ns"``) or sizes in bytes (``unit="bytes"``)."""

    group: str
    case: str
    ir: float | None
    ov: float | None
    numpy: float | None
    ratio: float | None
    target: str = ""
    met: bool | None = None
    unit: str = "ns"
    note: str = ""
    ir_lower_bound: bool = False


def time_row(group: str, case: str, ir: float | None, ovt: float | None, npt: float | None = None, *,
             max_ratio: float | None = None, target: str | None = None, note: str = "") -> Row:
    """A timing row; ``max_ratio`` is the largest ir/OpenVINO time ratio that meets the target."""
    ratio = ir / ovt if ir and ovt else None
    met = None if max_ratio is None or ratio is None else ratio <= max_ratio
    text = target if target is not None else (f"≤ {max_ratio:.2f}" if max_ratio is not None else "")
    return Row(group, case, ir, ovt, npt, ratio, text, met, "ns", note)


def throughput_target(minimum: float) -> tuple[float, str]:
    """A throughput target ``ir-run >= minimum x OpenVINO`` as the time ratio limit and its text."""
    return 1.0 / minimum, f"≤ {1.0 / minimum:.2f} (thr ≥ {minimum:g}×)"


@dataclass
class Context:
    """Settings and shared state of one benchmark run."""

    quick: bool
    workdir: Path
    core: ov.Core = field(default_factory=ov.Core)
    failures: list[str] = field(default_factory=list)
    meta: dict = field(default_factory=dict)

    def describe_openvino(self) -> None:
        """Record the CPU plugin's defaults (threads, streams, hint) for the quick-start model."""
        compiled = self.compile(MODELS / "select_gather.xml")
        self.meta["openvino_threads"] = int(compiled.get_property("INFERENCE_NUM_THREADS"))
        self.meta["openvino_streams"] = int(compiled.get_property("NUM_STREAMS"))
        self.meta["openvino_hint"] = str(compiled.get_property("PERFORMANCE_HINT"))

    def budget(self, full: float, quick: float) -> float:
        return quick if self.quick else full

    def compile(self, model: Path | ov.Model, **config) -> ov.CompiledModel:
        """Compile a model (or the IR at a path) for CPU with the f32 hint."""
        source = str(model) if isinstance(model, Path) else model
        return self.core.compile_model(source, "CPU", {**CPU_CONFIG, **config})

    def check(self, case: str, what: str, ok: bool) -> None:
        """Record a bit-exactness failure (the run goes on; ``bench.py`` exits 1 at the end)."""
        if not ok:
            self.failures.append(f"{case}: {what}")
            print(f"  EXACTNESS FAILURE in {case}: {what}", file=sys.stderr)


def _ov_output(result) -> np.ndarray:
    return np.asarray(next(iter(result.values())))


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- tiny graph


def tiny(ctx: Context) -> list[Row]:
    """The quick-start model (Select -> Gather with Const indices, [2,3] f32): per-call latency and load."""
    _say("tiny graph")
    xml = MODELS / "select_gather.xml"
    with np.load(MODELS / "select_gather.inputs.npz") as data:
        feeds = {k: data[k] for k in data.files}
    with np.load(MODELS / "select_gather.expected.npz") as data:
        expected = data["out"]
    cond, then, other = feeds["cond"], feeds["then"], feeds["else"]
    model = ir_runner.load(xml)
    compiled = ctx.compile(xml)
    compiled_1t = ctx.compile(xml, INFERENCE_NUM_THREADS=1)
    request = compiled.create_infer_request()
    preset, preset_1t = compiled.create_infer_request(), compiled_1t.create_infer_request()
    for req in (preset, preset_1t):
        for i, port in enumerate(compiled.inputs):
            req.set_input_tensor(i, ov.Tensor(feeds[port.get_any_name()], shared_memory=True))
    indices = np.array([2, 0], dtype=np.int32)

    def floor() -> np.ndarray:
        return np.take(np.where(cond, then, other), indices, axis=1)

    preset.infer()
    for what, value in (("Model.run", model.run(feeds)["out"]), ("Model(...)", model(cond, then, other)["out"]),
                        ("numpy", floor()), ("compiled_model", _ov_output(compiled(feeds))),
                        ("preset", preset.get_output_tensor(0).data)):
        ctx.check("tiny", f"{what} differs from the expected output", same_bits(value, expected))
    t = medians({
        "run": lambda: model.run(feeds),
        "call": lambda: model(cond, then, other),
        "ov_call": lambda: compiled(feeds),
        "ov_infer": lambda: request.infer(feeds, share_inputs=True),
        "ov_preset": preset.infer,
        "ov_preset_1t": preset_1t.infer,
        "numpy": floor,
    }, budget=ctx.budget(6.0, 1.5), min_reps=500)
    loads = medians({"ir": lambda: ir_runner.load(xml), "ov": lambda: ctx.compile(xml)},
                    budget=ctx.budget(3.0, 0.8), min_reps=5)
    load, ov_load = loads["ir"], loads["ov"]
    g = "tiny"
    return [
        time_row(g, "Model.run(feeds) vs compiled_model(inputs)", t["run"], t["ov_call"], t["numpy"],
                 max_ratio=0.10, note="numpy: hand-written np.take(np.where(...))"),
        time_row(g, "Model.run(feeds) vs req.infer(inputs, share_inputs=True)", t["run"], t["ov_infer"], t["numpy"]),
        time_row(g, "Model.run(feeds) vs preset shared tensors (default threads)", t["run"], t["ov_preset"],
                 t["numpy"], max_ratio=1.0),
        time_row(g, "Model.run(feeds) vs preset shared tensors (1 thread)", t["run"], t["ov_preset_1t"], t["numpy"]),
        time_row(g, "model(cond, then, else) vs compiled_model(inputs)", t["call"], t["ov_call"], t["numpy"]),
        time_row(g, "load() vs read_model + compile_model", load, ov_load),
    ]


# ---------------------------------------------------------------- process start to first result

_OV_SCRIPT = """\
import sys
import numpy as np
import openvino as ov
compiled = ov.Core().compile_model(sys.argv[1], "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
with np.load(sys.argv[2]) as data:
    feeds = {k: data[k] for k in data.files}
for port, value in compiled(feeds).items():
    print(f"{port.get_any_name()}: {value.dtype} {list(value.shape)}")
    print(np.array2string(value, threshold=20, edgeitems=3))
"""

_NUMPY_SCRIPT = """\
import sys
import click
import numpy as np
from lxml import etree
root = etree.parse(sys.argv[1]).getroot()
with np.load(sys.argv[2]) as data:
    feeds = {k: data[k] for k in data.files}
indices = np.fromfile(sys.argv[1][:-4] + ".bin", dtype=np.int32, count=2)
out = np.take(np.where(feeds["cond"], feeds["then"], feeds["else"]), indices, axis=1)
click.echo(f"out: {out.dtype} {list(out.shape)}")
click.echo(np.array2string(out, threshold=20, edgeitems=3))
"""


def ir_run_command() -> list[str]:
    """The installed ``ir-run`` next to this interpreter (not a version-manager shim), else ``-m ir_runner``."""
    script = Path(sys.executable).parent / "ir-run"
    return [str(script)] if script.exists() else [sys.executable, "-m", "ir_runner"]


def startup(ctx: Context) -> list[Row]:
    """Whole processes, from start to exit after printing the result of the quick-start model."""
    _say("process time to first result")
    xml, inputs = MODELS / "select_gather.xml", MODELS / "select_gather.inputs.npz"
    ov_script, np_script = ctx.workdir / "ov_first_result.py", ctx.workdir / "numpy_first_result.py"
    ov_script.write_text(_OV_SCRIPT)
    np_script.write_text(_NUMPY_SCRIPT)
    commands = {
        "ir": [*ir_run_command(), str(xml), "--input", str(inputs)],
        "ov": [sys.executable, str(ov_script), str(xml), str(inputs)],
        "np": [sys.executable, str(np_script), str(xml), str(inputs)],
    }
    with np.load(MODELS / "select_gather.expected.npz") as data:
        printed = np.array2string(data["out"], threshold=20, edgeitems=3)
    samples: dict[str, list[float]] = {k: [] for k in commands}
    env = bytecode_env(ctx.workdir)
    reps = 3 if ctx.quick else 10
    for rep in range(reps + 1):
        for name, command in commands.items():
            t, proc = once_ns(lambda c=command: subprocess.run(c, capture_output=True, text=True, cwd=ROOT, env=env))
            if rep == 0:  # warm-up round (page cache), also the correctness check
                ok = proc.returncode == 0 and printed in proc.stdout
                ctx.check("startup", f"{name} printed {proc.stdout!r} {proc.stderr[-300:]!r}", ok)
            else:
                samples[name].append(t)
    t = {k: float(np.median(v)) for k, v in samples.items()}
    return [time_row("startup", "`ir-run MODEL --input NPZ` vs an OpenVINO script", t["ir"], t["ov"], t["np"],
                     max_ratio=0.5, note="numpy: a script importing numpy, lxml and click")]


# ---------------------------------------------------------------- a large IR


def _child_load(xml: Path, layers: int, timeout: float) -> dict | None:
    """ir-run's load (and load + first run) of the large IR in a fresh process; None on timeout."""
    try:
        proc = subprocess.run([sys.executable, "-m", "scripts.bench_load", str(xml), str(layers)], capture_output=True,
                              text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return None
    if proc.returncode != 0:
        raise RuntimeError(f"ir-run failed to load the large IR: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def large(ctx: Context) -> list[Row]:
    """A generated IR of parallel Select/Gather chains: load, and load + first run.

    ir-run loads in fresh processes (at most ``timeout`` seconds each, so a slow load keeps the run
    bounded: the table then shows the timeout as a lower bound); OpenVINO reads in this process.
    """
    layers = 6000 if ctx.quick else 60000
    writer = large_model(layers)
    xml = writer.save(ctx.workdir, "large")
    size = xml.stat().st_size
    _say(f"large IR: {writer.layer_count} layers, {size / 1e6:.1f} MB of XML")
    feeds = {"cond": make_input("boolean", (2, 8), "mask:0.5", 1), "x": make_input("f32", (2, 8), "values", 2)}
    expected = large_model_reference(layers, feeds["cond"], feeds["x"])
    timeout = ctx.budget(150.0, 30.0)
    ir_load, ir_first, timed_out = [], [], False
    deadline = time.perf_counter() + ctx.budget(30.0, 6.0)
    while not ir_load or (len(ir_load) < 5 and time.perf_counter() < deadline):
        found = _child_load(xml, layers, timeout)
        if found is None:
            timed_out = True
            ir_load, ir_first = [timeout * 1e9], [timeout * 1e9]
            break
        ctx.check("large", "ir-run output differs from numpy", found["exact"])
        ir_load.append(found["load_ns"])
        ir_first.append(found["first_run_ns"])
    parse = medians({"parse": lambda: etree.parse(str(xml))}, budget=ctx.budget(3.0, 1.0), min_reps=3, warmup=1)
    read = medians({"read": lambda: ctx.core.read_model(str(xml))}, budget=ctx.budget(8.0, 2.0), min_reps=3,
                   warmup=1)
    _say("  OpenVINO read + compile + infer (slow)")

    def ov_full():
        compiled = ctx.compile(ctx.core.read_model(str(xml)))
        return _ov_output(compiled(feeds))

    t_ov_full, ov_out = once_ns(ov_full)
    ctx.check("large", "OpenVINO output differs from numpy", same_bits(ov_out, expected))
    name = f"{writer.layer_count} layers, {size / 1e6:.0f} MB"
    note = f"did not finish in {timeout:.0f} s (a lower bound)" if timed_out else f"fresh processes, n={len(ir_load)}"
    rows = [
        time_row("large IR", f"{name}: load() vs read_model", float(np.median(ir_load)), read["read"],
                 parse["parse"], max_ratio=1.0, note=f"numpy: lxml parse alone; ir-run {note}"),
        time_row("large IR", f"{name}: load + first run vs read + compile + infer", float(np.median(ir_first)),
                 t_ov_full, max_ratio=0.10, note="OpenVINO n=1" + ("; ir-run: the timeout, a lower bound"
                                                                  if timed_out else "")),
    ]
    if timed_out:
        for row in rows:
            row.met, row.ir_lower_bound = False, True
    return rows


# ---------------------------------------------------------------- a 200 MB Const


def big_const(ctx: Context) -> list[Row]:
    """A Const of 200 MB gathered by 100 indices: loading must not read or copy it."""
    _say("200 MB Const")
    rows, cols, picked = 50000, 1000, 100
    big = big_const_model(ctx.workdir, "big_const", rows, cols, picked)
    small = big_const_model(ctx.workdir, "small_const", 1, cols, picked)
    indices = make_input("i32", (picked,), f"index:{rows}", 3)
    feeds = {"indices": indices}
    model = ir_runner.load(big)
    out = model.run(feeds)["out"]
    ctx.check("200 MB Const", "ir-run output differs from numpy", same_bits(out, big_const_expected(indices, cols)))
    bin_path = big.with_suffix(".bin")
    t = medians({
        "big": lambda: ir_runner.load(big),
        "small": lambda: ir_runner.load(small),
        "ov_big": lambda: ctx.core.read_model(str(big)),
        "ov_small": lambda: ctx.core.read_model(str(small)),
        "np": lambda: np.memmap(bin_path, dtype=np.float32, mode="r", offset=64, shape=(rows, cols)),
    }, budget=ctx.budget(3.0, 1.0), min_reps=10)
    first_ir, _ = once_ns(lambda: ir_runner.load(big).run(feeds))

    def ov_full():
        return _ov_output(ctx.compile(ctx.core.read_model(str(big)))(feeds))

    first_ov, ov_out = once_ns(ov_full)
    ctx.check("200 MB Const", "OpenVINO output differs from ir-run", same_bits(ov_out, out))
    limit = min(5e6, 1.5 * t["small"])
    return [
        time_row("200 MB Const", "load() vs read_model (200 MB Const)", t["big"], t["ov_big"], t["np"],
                 target=f"≤ {limit / 1e6:.2f} ms (5 ms, 1.5× 4 KB)", note="numpy: np.memmap of the .bin"),
        time_row("200 MB Const", "load() vs read_model (4 KB Const)", t["small"], t["ov_small"]),
        time_row("200 MB Const", "load + first run vs read + compile + infer", first_ir, first_ov),
    ]


def big_const_met(rows: list[Row]) -> None:
    """The 200 MB row's target is absolute and relative to the 4 KB row: fill in ``met``."""
    big, small = rows[0], rows[1]
    big.met = big.ir is not None and big.ir <= min(5e6, 1.5 * small.ir)


# ---------------------------------------------------------------- Select


@dataclass(frozen=True)
class SelectCase:
    """A Select case; ``out_row`` adds a row for ``Model.run(..., out=)``, which carries the target when
    ``out_target`` (else the fresh-output row does)."""

    label: str
    cond: tuple[int, ...]
    then: tuple[int, ...]
    other: tuple[int, ...]
    et: str
    mask: str = "mask:0.5"
    min_throughput: float | None = None
    out_row: bool = False
    out_target: bool = False


def _select_cases(quick: bool) -> list[SelectCase]:
    sizes = [10**3, 10**5, 10**6, 10**7] if quick else [10**3, 10**4, 10**5, 10**6, 10**7, 5 * 10**7]
    cases = [SelectCase(f"f32 {n:.0e}", (n,), (n,), (n,), "f32", min_throughput=1.0 if n == 10**7 else None,
                        out_row=n >= 10**7, out_target=n == 10**7)
             for n in sizes]
    n = 10**6 if quick else 10**7
    r, c = n // 1000, 1000
    cases += [
        SelectCase(f"f32 {n:.0e} skewed mask (99% true)", (n,), (n,), (n,), "f32", "mask:0.99"),
        SelectCase(f"f32 {n:.0e} else broadcast [{c}]", (r, c), (r, c), (c,), "f32"),
        SelectCase(f"f32 {n:.0e} cond broadcast [{r},1]", (r, 1), (r, c), (r, c), "f32", out_row=True),
        SelectCase(f"f16 {n:.0e}", (n,), (n,), (n,), "f16"),
        SelectCase(f"i8 {n:.0e}", (n,), (n,), (n,), "i8"),
        SelectCase(f"boolean {n:.0e}", (n,), (n,), (n,), "boolean"),
    ]
    if not quick:
        cases += [SelectCase("f16 1e+05", (10**5,), (10**5,), (10**5,), "f16"),
                  SelectCase("i8 1e+05", (10**5,), (10**5,), (10**5,), "i8")]
    return cases


def select(ctx: Context) -> list[Row]:
    """Select-1 alone (numpy broadcast), Parameters only."""
    rows = []
    for case in _select_cases(ctx.quick):
        _say(f"Select {case.label}")
        xml = select_model(case.cond, case.then, case.other, case.et).save(ctx.workdir, "select")
        feeds = {
            "cond": make_input("boolean", case.cond, case.mask, 1),
            "then": make_input(case.et, case.then, "values", 2),
            "else": make_input(case.et, case.other, "values", 3),
        }
        c, t, e = feeds["cond"], feeds["then"], feeds["else"]
        rows += _throughput(ctx, "Select", case, xml, feeds, lambda c=c, t=t, e=e: np.where(c, t, e))
    return rows


OUT_NOTE = ("ir-run writes into an output array allocated once (Model.run(feeds, out=...)), as OpenVINO's column"
            " (share_outputs=True) writes into its reused output tensor: like for like")


def _throughput(ctx: Context, group: str, case, xml: Path, feeds: dict, reference: Callable) -> list[Row]:
    """The fresh-output row of a case, and its ``out=`` row when the case has one; the target goes on the
    row the case says. The numpy column allocates its result (``np.where``/``np.take``)."""
    label = case.label
    model = ir_runner.load(xml)
    request = ctx.compile(xml).create_infer_request()
    expected = reference()
    ctx.check(f"{group} {label}", "ir-run differs from numpy", same_bits(model.run(feeds)["out"], expected))
    fns = {"ir": lambda: model.run(feeds)}
    if case.out_row:
        buffers = {"out": np.empty_like(expected)}  # allocated once, outside the timed region
        ctx.check(f"{group} {label}", "ir-run out= differs from numpy",
                  same_bits(model.run(feeds, out=buffers)["out"], expected))
        fns["ir_out"] = lambda: model.run(feeds, out=buffers)
    ov_out = _ov_output(request.infer(feeds, share_inputs=True, share_outputs=True))
    ctx.check(f"{group} {label}", "OpenVINO differs from numpy", same_bits(ov_out, expected))
    del expected, ov_out
    t = medians({
        **fns,
        "ov": lambda: request.infer(feeds, share_inputs=True, share_outputs=True),
        "np": reference,
    }, budget=ctx.budget(1.5, 0.3), min_reps=5)
    limit, text = throughput_target(case.min_throughput) if case.min_throughput else (None, None)
    on_out = case.out_row and case.out_target
    moved = "target judged on the out= row (OpenVINO's column reuses its output buffer)" if on_out else ""
    rows = [time_row(group, label, t["ir"], t["ov"], t["np"], max_ratio=None if on_out else limit,
                     target=None if on_out else text, note=moved)]
    if case.out_row:
        rows.append(time_row(group, f"{label}, out=", t["ir_out"], t["ov"], t["np"],
                             max_ratio=limit if on_out else None, target=text if on_out else None,
                             note=OUT_NOTE if on_out else ""))
    return rows


# ---------------------------------------------------------------- Gather


@dataclass(frozen=True)
class GatherCase:
    """A Gather case; ``out_row`` and ``out_target`` as in :class:`SelectCase`."""

    label: str
    data: tuple[int, ...]
    indices: tuple[int, ...]
    axis: int
    batch_dims: int = 0
    index_et: str = "i32"
    index_kind: str = ""
    min_throughput: float | None = None
    out_row: bool = False
    out_target: bool = False


def _gather_cases(quick: bool) -> list[GatherCase]:
    ns = [10**3, 10**5, 10**7] if quick else [10**3, 10**4, 10**5, 10**6, 10**7]
    d1 = 10**6
    cases = [GatherCase(f"1-D {n:.0e} of [1e6]", (d1,), (n,), 0, min_throughput=0.8 if n == 10**7 else None,
                        out_row=n == 10**7, out_target=n == 10**7)
             for n in ns]
    cases += [
        GatherCase("1-D 1e6 of [1e6], i64 indices", (d1,), (10**6,), 0, index_et="i64"),
        GatherCase("1-D 1e6 of [1e6], negative indices", (d1,), (10**6,), 0, index_kind=f"signed_index:{d1}"),
    ]
    row_ns = [10**3, 10**4] if quick else [10**3, 10**4, 10**5]
    cases += [GatherCase(f"rows {n:.0e} of [1000,1000]", (1000, 1000), (n,), 0,
                         min_throughput=0.9 if n == row_ns[-1] else None, out_row=True,
                         out_target=n == row_ns[-1]) for n in row_ns]
    cube = (64, 512, 256)
    cases += [
        GatherCase("axis 2 [128] of [64,512,256]", cube, (128,), 2),
        GatherCase("axis 1 [256] of [64,512,256]", cube, (256,), 1),
        GatherCase("batch_dims=1 axis 1 [64,32] of [64,512,256]", cube, (64, 32), 1, 1, min_throughput=0.9,
                   out_row=True),
        GatherCase("batch_dims=1 axis 1 [64,128] of [64,512,256]", cube, (64, 128), 1, 1, out_row=True),
        GatherCase("batch_dims=1 axis 2 [64,64] of [64,512,256]", cube, (64, 64), 2, 1, out_row=True),
    ]
    return cases


def numpy_gather(data: np.ndarray, indices: np.ndarray, axis: int, batch_dims: int) -> np.ndarray:
    """Plain numpy Gather for in-range indices: ``take``; with batch_dims=1 on axis 1, flatten then ``take``."""
    if batch_dims == 0:
        return np.take(data, indices, axis=axis)
    b, d = data.shape[0], data.shape[1]
    if axis == 1:
        rows = (indices.astype(np.int64) + np.arange(b)[:, None] * d).reshape(-1)
        return np.take(data.reshape(b * d, -1), rows, axis=0).reshape(indices.shape + data.shape[2:])
    expand = indices.reshape(indices.shape[:1] + (1,) * (axis - 1) + indices.shape[1:])
    return np.take_along_axis(data, expand, axis=axis)


def gather(ctx: Context) -> list[Row]:
    """Gather-8 alone, data and indices as Parameters, axis a Const."""
    rows = []
    for case in _gather_cases(ctx.quick):
        _say(f"Gather {case.label}")
        xml = gather_model(case.data, case.indices, case.axis, case.batch_dims, index_et=case.index_et)
        xml = xml.save(ctx.workdir, "gather")
        kind = case.index_kind or f"index:{case.data[case.axis]}"
        feeds = {"data": make_input("f32", case.data, "values", 1),
                 "indices": make_input(case.index_et, case.indices, kind, 2)}
        d, i = feeds["data"], feeds["indices"]
        if case.index_kind.startswith("signed"):
            i = np.where(i < 0, i + case.data[case.axis], i)
        reference = functools.partial(numpy_gather, d, i, case.axis, case.batch_dims)
        rows += _throughput(ctx, "Gather", case, xml, feeds, reference)
    return rows


# ---------------------------------------------------------------- peak memory


def _child_memory(engine: str, xml: Path, inputs: list) -> dict:
    spec = json.dumps({"engine": engine, "xml": str(xml), "inputs": inputs})
    proc = subprocess.run([sys.executable, "-m", "scripts.bench_memory", spec], capture_output=True, text=True,
                          env=os.environ.copy(), cwd=ROOT)
    if proc.returncode != 0:
        raise RuntimeError(f"memory child failed ({engine}, {xml.name}): {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def memory(ctx: Context) -> list[Row]:
    """Peak RSS of one run in a fresh process, against inputs + outputs + live intermediates; the cases of
    Select, Gather and a large Const, then the operation families of ``bench_opmemory.py``.

    The ir-run and OpenVINO columns are the anonymous memory of the run (the high-water mark less the
    .bin pages mapped during it, which are shared page cache, not copies); the numpy column is what
    the run needs at least. The note gives the growth at load and the weight pages mapped.
    """
    _say("peak memory")
    n = 10**7
    w = ctx.workdir
    select_gather_xml = select_gather_model(1000, 10000, 5000).save(w, "mem_select_gather")
    cases = [
        ("Select f32 1e7", select_model((n,), (n,), (n,), "f32").save(w, "mem_select"),
         [["cond", "boolean", [n], "mask:0.5"], ["then", "f32", [n], "values"], ["else", "f32", [n], "values"]], 0),
        ("Select -> Gather [1000,10000] -> [1000,5000]", select_gather_xml,
         [["cond", "boolean", [1000, 10000], "mask:0.5"], ["then", "f32", [1000, 10000], "values"],
          ["else", "f32", [1000, 10000], "values"]], 4 * n),
        ("Gather 1-D 1e7 i32 of [1e6]", gather_model((10**6,), (n,), 0, 0).save(w, "mem_gather"),
         [["data", "f32", [10**6], "values"], ["indices", "i32", [n], f"index:{10**6}"]], 0),
        ("Gather batch_dims=1 [64,128] of [64,512,256]",
         gather_model((64, 512, 256), (64, 128), 1, 1).save(w, "mem_gather_bd"),
         [["data", "f32", [64, 512, 256], "values"], ["indices", "i32", [64, 128], "index:512"]], 0),
    ]
    big = ctx.workdir / "big_const.xml"
    if not big.exists():
        big = big_const_model(ctx.workdir, "big_const", 50000, 1000, 100)
    cases.append(("200 MB Const, 100 rows gathered", big, [["indices", "i32", [100], "index:50000"]], 0))
    from scripts.bench_opmemory import mem_cases, save_case

    for i, case in enumerate(mem_cases()):
        cases.append((case.label, *save_case(case, w, f"mem_op{i}"), case.live))
    rows = []
    for label, xml, inputs, live in cases:
        _say(f"  {label}")
        ir, ovr = _child_memory("ir-run", xml, inputs), _child_memory("openvino", xml, inputs)
        needed = ir["inputs_bytes"] + ir["outputs_bytes"] + live
        peak = ir["anon_peak_bytes"]
        met = peak <= 1.3 * needed + 4 * MIB
        note = (f"load +{ir['load_bytes'] / MIB:.1f} MiB (OpenVINO +{ovr['load_bytes'] / MIB:.1f});"
                f" weight pages mapped {ir['file_bytes'] / MIB:.1f} MiB (OpenVINO {ovr['file_bytes'] / MIB:.1f})")
        if not ir["peak_reset"]:
            note += "; high-water mark could not be reset"
        rows.append(Row("peak RSS", label, peak, ovr["anon_peak_bytes"], needed, peak / needed,
                        "≤ 1.3× needed +4 MiB", met, "bytes", note))
    return rows


# ---------------------------------------------------------------- per-step cost of a long chain


CHAIN_LAYERS = 1000


def chain(ctx: Context) -> list[Row]:
    """A chain of 1,000 cheap layers (Select of [8] f32 with a shared cond and a Const each): ``Model.run`` per
    layer against a hand-written loop calling the plan's own kernels in order, which is the floor of any
    executor built on them (goal: at most 1.5x); OpenVINO's compiled model on the same chain for scale."""
    _say("chain of 1,000 layers")
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder("chain")
    cond = b.parameter("cond", "boolean", "8")
    current = b.parameter("x", "f32", "8")
    for i in range(CHAIN_LAYERS):
        other = b.const(f"c{i}", np.full(8, i, np.float32))
        current = b.layer("Select", "opset1", [cond, current, other], attrs={"auto_broadcast": "numpy"},
                          out_specs=[("f32", "8")], name=f"s{i}")
    b.result(current, "out")
    xml = b.write(ctx.workdir, "chain")
    feeds = {"cond": np.arange(8) % 3 == 0, "x": np.arange(8, dtype=np.float32)}
    model = ir_runner.load(xml)
    plan = model.plan_for([feeds["cond"], feeds["x"]])
    constants = dict(plan.constants)
    kernels = [(step.kernel, constants[step.inputs[2]]) for step in plan.steps]

    def hand_loop() -> np.ndarray:
        cond_, x = feeds["cond"], feeds["x"]
        for kernel, other in kernels:
            x = kernel(cond_, x, other)
        return x

    compiled = ctx.compile(xml)
    expected = model.run(feeds)["out"]
    ctx.check("chain", "the hand loop differs from Model.run", same_bits(hand_loop(), expected))
    ctx.check("chain", "OpenVINO differs from Model.run", same_bits(_ov_output(compiled(feeds)), expected))
    t = medians({"run": lambda: model.run(feeds), "loop": hand_loop, "ov": lambda: compiled(feeds)},
                budget=ctx.budget(4.0, 1.0), min_reps=20)
    per = {k: v / CHAIN_LAYERS for k, v in t.items()}
    ratio = per["run"] / per["loop"]
    return [
        Row("chain", f"Model.run per layer vs a hand loop over the same kernels ({CHAIN_LAYERS} Select layers)",
            per["run"], per["loop"], None, ratio, "≤ 1.50", ratio <= 1.5, "ns",
            "the OpenVINO column here is the hand loop (same kernels, no executor)"),
        time_row("chain", f"Model.run per layer vs compiled_model per layer ({CHAIN_LAYERS} layers)", per["run"],
                 per["ov"], None),
    ]


def ops(ctx: Context) -> list[Row]:
    """The operation-family rows of ``bench_oprows.py`` (elementwise, movement, reduction, MatMul, Softmax)."""
    from scripts.bench_oprows import ops as op_rows

    return op_rows(ctx)


GROUPS: dict[str, Callable[[Context], list[Row]]] = {
    "tiny": tiny,
    "startup": startup,
    "large": large,
    "const": big_const,
    "select": select,
    "gather": gather,
    "memory": memory,
    "chain": chain,
    "ops": ops,
}


def run_groups(ctx: Context, names: list[str]) -> list[Row]:
    ctx.describe_openvino()
    rows: list[Row] = []
    for name in names:
        found = GROUPS[name](ctx)
        if name == "const":
            big_const_met(found)
        rows += found
        gc.collect()
    return rows


def rows_json(rows: list[Row]) -> list[dict]:
    return [asdict(r) for r in rows]

