"""Micro-benchmarks behind the proposals in docs/performance.md: candidate kernels and loaders next to
what ir-run does now and to OpenVINO (CPU, f32 hint), on the same inputs, interleaved.

    python -m scripts.bench_micro                 # every experiment (about two minutes)
    python -m scripts.bench_micro gather1d alloc  # some of them

Each experiment prints a Markdown table: variant, median, and the ratio to its first line. Every
candidate kernel is checked bit for bit against numpy before it is timed. The candidates are sketches
for measurement only; ir-run's own kernels live in ir_runner/.
"""

from __future__ import annotations

import gc
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import openvino as ov
from lxml import etree

import ir_runner
from scripts.bench_models import gather_model, large_model, make_input, select_model
from scripts.bench_timing import bytecode_env, fmt_time, medians, same_bits

WORK = Path("/tmp/ir-run-bench-micro")
CPU_CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}
POOL = ThreadPoolExecutor(2)
CORE = ov.Core()


def report(title: str, results: dict[str, float], notes: str = "") -> None:
    base = next(iter(results.values()))
    print(f"\n### {title}\n")
    if notes:
        print(notes + "\n")
    print("| variant | median | vs first |\n|---|---:|---:|")
    for name, ns in results.items():
        print(f"| {name} | {fmt_time(ns)} | {ns / base:.2f} |")
    sys.stdout.flush()


def ov_request(xml: Path) -> ov.InferRequest:
    return CORE.compile_model(str(xml), "CPU", CPU_CONFIG).create_infer_request()


def ov_call(request: ov.InferRequest, feeds: dict) -> Callable[[], object]:
    return lambda: request.infer(feeds, share_inputs=True, share_outputs=True)


def two_threads(total: int, work: Callable[[int, int], None], align: int = 1) -> None:
    """``work`` over [0, total) split in two halves, one on a pool thread (numpy releases the GIL)."""
    half = (total // 2) // align * align
    future = POOL.submit(work, half, total)
    work(0, half)
    future.result()


# ---------------------------------------------------------------- fresh vs reused outputs


def alloc() -> None:
    """What a fresh output costs: the kernel zero-fills new pages on first touch."""
    n = 10**7
    src = make_input("f32", (n,), "values", 1)
    reused = np.empty(n, dtype=np.float32)
    report("Fresh vs reused output buffers (40 MB copy)", medians({
        "copy 1e7 f32 into a fresh array (np.copy)": lambda: np.copy(src),
        "copy 1e7 f32 into a reused array (np.copyto)": lambda: np.copyto(reused, src),
    }, budget=3.0, min_reps=10))
    data = make_input("f32", (1000, 1000), "values", 2)
    for count in (10**4, 10**5):
        rows = make_input("i32", (count,), "index:1000", 3)
        rows_out = np.empty((count, 1000), dtype=np.float32)
        xml = gather_model((1000, 1000), (count,), 0, 0).save(WORK, "alloc_gather")
        request = ov_request(xml)
        feeds = {"data": data, "indices": rows}
        model = ir_runner.load(xml)

        def two(out: np.ndarray, rows: np.ndarray = rows) -> np.ndarray:
            def work(lo: int, hi: int) -> None:
                np.take(data, rows[lo:hi], axis=0, mode="wrap", out=out[lo:hi])

            two_threads(rows.size, work)
            return out

        report(f"Gather {count:.0e} rows of [1000,1000] f32: output {count * 4000 / 1e6:.0f} MB", medians({
            "ir-run Model.run": lambda m=model, f=feeds: m.run(f),
            "OpenVINO infer(share_outputs=True) (writes into its own buffer)": ov_call(request, feeds),
            "OpenVINO infer() (output copied out)": lambda r=request, f=feeds: r.infer(f, share_inputs=True),
            "take, 2 threads, fresh out": lambda o=rows_out: two(np.empty_like(o)),
            "take, 2 threads, reused out": lambda o=rows_out: two(o),
        }, budget=5.0, min_reps=5), "A fresh array costs page faults and zeroing on first write; OpenVINO with"
            " share_outputs=True writes into the same buffer every time.")


# ---------------------------------------------------------------- Gather 1-D, 1e7 scalar indices

_CHUNK = 1 << 15


def take_1d_chunked(data: np.ndarray, indices: np.ndarray, out: np.ndarray, threads: int) -> np.ndarray:
    """1-D Gather for i32/i64 indices: per cache-sized chunk, check the range and ``take(out=, mode='wrap')``.

    The indices are never converted as a whole (``take`` converts each chunk in cache). A chunk with
    negative indices is first made non-negative without branches (``idx + ((idx >> bits-1) & dim)``), as
    numpy's wrap mode branches per index; an out-of-range chunk zeroes its invalid positions (the
    reference kernel's rule).
    """
    dim = data.shape[0]
    sign_shift = indices.dtype.itemsize * 8 - 1

    def work(start: int, stop: int) -> None:
        scratch = np.empty(_CHUNK, dtype=indices.dtype)
        for lo in range(start, stop, _CHUNK):
            hi = min(lo + _CHUNK, stop)
            chunk = indices[lo:hi]
            low, high = chunk.min(), chunk.max()
            if low < -dim or high >= dim:
                valid = (chunk >= -dim) & (chunk < dim)
                np.take(data, np.where(valid, chunk, 0), out=out[lo:hi], mode="wrap")
                out[lo:hi][~valid] = 0
                continue
            if low < 0:
                fixed = scratch[: hi - lo]
                np.right_shift(chunk, sign_shift, out=fixed)
                np.bitwise_and(fixed, dim, out=fixed)
                np.add(fixed, chunk, out=fixed)
                chunk = fixed
            np.take(data, chunk, out=out[lo:hi], mode="wrap")

    if threads == 1:
        work(0, indices.size)
    else:
        two_threads(indices.size, work, _CHUNK)
    return out


def gather1d() -> None:
    n, dim = 10**7, 10**6
    data = make_input("f32", (dim,), "values", 1)
    indices = make_input("i32", (n,), f"index:{dim}", 2)
    feeds = {"data": data, "indices": indices}
    xml = gather_model((dim,), (n,), 0, 0).save(WORK, "gather1d")
    model, request = ir_runner.load(xml), ov_request(xml)
    expected = np.take(data, indices)
    reused = np.empty(n, dtype=np.float32)
    for threads in (1, 2):
        assert same_bits(take_1d_chunked(data, indices, np.empty(n, np.float32), threads), expected)
    assert same_bits(model.run(feeds)["out"], expected)
    report("Gather 1-D: 1e7 i32 indices into [1e6] f32", medians({
        "ir-run Model.run": lambda: model.run(feeds),
        "OpenVINO": ov_call(request, feeds),
        "numpy np.take(data, indices) (converts all indices to intp first)": lambda: np.take(data, indices),
        "chunked i32 take + per-chunk range check, 1 thread, fresh out": lambda: take_1d_chunked(
            data, indices, np.empty(n, np.float32), 1),
        "same, 2 threads, fresh out": lambda: take_1d_chunked(data, indices, np.empty(n, np.float32), 2),
        "same, 2 threads, reused out": lambda: take_1d_chunked(data, indices, reused, 2),
        "indices.astype(int64) alone": lambda: indices.astype(np.int64),
        "indices.min() + indices.max() alone": lambda: (indices.min(), indices.max()),
    }, budget=10.0, min_reps=5))


def negative_indices() -> None:
    n, dim = 10**6, 10**6
    data = make_input("f32", (dim,), "values", 1)
    indices = make_input("i32", (n,), f"signed_index:{dim}", 2)
    feeds = {"data": data, "indices": indices}
    xml = gather_model((dim,), (n,), 0, 0).save(WORK, "gather_neg")
    model, request = ir_runner.load(xml), ov_request(xml)
    out = np.empty(n, dtype=np.float32)
    expected_indices = np.where(indices < 0, indices + dim, indices)
    expected = np.take(data, expected_indices)
    for threads in (1, 2):
        assert same_bits(take_1d_chunked(data, indices, np.empty(n, np.float32), threads), expected)
    assert same_bits(model.run(feeds)["out"], expected)
    report("Gather 1-D with negative indices: 1e6 i32 in [-1e6, 1e6)", medians({
        "ir-run Model.run": lambda: model.run(feeds),
        "OpenVINO": ov_call(request, feeds),
        "np.take(mode='wrap') on the signed indices, reused out": lambda: np.take(data, indices, out=out, mode="wrap"),
        "chunked, branch-free normalisation, 1 thread, fresh out": lambda: take_1d_chunked(
            data, indices, np.empty(n, np.float32), 1),
        "same, 2 threads, fresh out": lambda: take_1d_chunked(data, indices, np.empty(n, np.float32), 2),
        "non-negative indices (same values + dim): take, reused out": lambda: np.take(
            data, expected_indices, out=out, mode="wrap"),
    }, budget=5.0, min_reps=10), "numpy's wrap mode loops `while (i < 0) i += dim` per index: with random signs the"
        " branch mispredicts half the time.")


# ---------------------------------------------------------------- Select

_U = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def bit_select_rows(cond: np.ndarray, then: np.ndarray, other: np.ndarray, out: np.ndarray,
                    rows: int = 64) -> np.ndarray:
    """Bit-select over 2-D operands that broadcast to ``out`` ([R, C]; each is [R, C], [1, C], [R, 1] or [C]),
    in blocks of ``rows`` rows; the mask comes from one cast-and-negate of the boolean cond."""
    u = _U[out.dtype.itemsize]
    t, e, o = then.view(u), other.view(u), out.view(u)
    mask = np.empty((rows, cond.shape[-1]), dtype=u)
    diff = np.empty((rows, out.shape[1]), dtype=u)

    def block(x: np.ndarray, lo: int, hi: int) -> np.ndarray:
        return x if x.ndim == 1 or x.shape[0] == 1 else x[lo:hi]

    for lo in range(0, out.shape[0], rows):
        hi = min(lo + rows, out.shape[0])
        c = block(cond, lo, hi)
        m = mask[: c.shape[0]] if c.ndim == 2 else mask[0]
        np.negative(c, dtype=u, out=m, casting="unsafe")
        ee = block(e, lo, hi)
        np.bitwise_xor(block(t, lo, hi), ee, out=diff[: hi - lo])
        np.bitwise_and(diff[: hi - lo], m, out=diff[: hi - lo])
        np.bitwise_xor(ee, diff[: hi - lo], out=o[lo:hi])
    return out


def select_rows_by_column(cond_col: np.ndarray, then: np.ndarray, other: np.ndarray) -> np.ndarray:
    """Select whose cond is [R, 1]: whole rows are copied (memcpy speed), no per-element work."""
    pick = cond_col.reshape(-1)
    out = np.copy(other)
    out[pick] = then[pick]
    return out


def select_broadcast() -> None:
    r, c = 1000, 1000
    cond = make_input("boolean", (r, c), "mask:0.5", 1)
    cond_col = make_input("boolean", (r, 1), "mask:0.5", 1)
    then = make_input("f32", (r, c), "values", 2)
    other = make_input("f32", (r, c), "values", 3)
    other_row = other[0].copy()
    cases = {
        "else broadcast [1000] over [1000,1000]": ((r, c), (r, c), (c,), cond, then, other_row),
        "cond broadcast [1000,1] over [1000,1000]": ((r, 1), (r, c), (r, c), cond_col, then, other),
    }
    for title, (cs, ts, es, cv, tv, ev) in cases.items():
        xml = select_model(cs, ts, es, "f32").save(WORK, "select_bcast")
        feeds = {"cond": cv, "then": tv, "else": ev}
        model, request = ir_runner.load(xml), ov_request(xml)
        expected = np.where(cv, tv, ev)
        assert same_bits(bit_select_rows(cv, tv, ev, np.empty((r, c), np.float32)), expected)
        variants = {
            "ir-run Model.run": lambda m=model, f=feeds: m.run(f),
            "OpenVINO": ov_call(request, feeds),
            "np.where": lambda cv=cv, tv=tv, ev=ev: np.where(cv, tv, ev),
            "bit-select in 64-row blocks, operands broadcast by the ufuncs": (
                lambda cv=cv, tv=tv, ev=ev: bit_select_rows(cv, tv, ev, np.empty((r, c), np.float32))),
        }
        if cv.shape == (r, 1):
            assert same_bits(select_rows_by_column(cv, tv, ev), expected)
            variants["copy else, then copy the picked rows of then"] = (
                lambda cv=cv, tv=tv, ev=ev: select_rows_by_column(cv, tv, ev))
        report(f"Select f32 1e6, {title}", medians(variants, budget=5.0, min_reps=10))


def select_mask() -> None:
    """The same-shape bit-select: the current kernel against a one-op mask and other chunk sizes."""
    for n in (10**6, 10**7):
        _select_mask_case(n)


def _select_mask_case(n: int) -> None:
    from ir_runner.ops.elementwise.select import bit_select

    cond = make_input("boolean", (n,), "mask:0.5", 1)
    then = make_input("f32", (n,), "values", 2)
    other = make_input("f32", (n,), "values", 3)
    expected = np.where(cond, then, other)
    xml = select_model((n,), (n,), (n,), "f32").save(WORK, "select_same")
    request = ov_request(xml)
    feeds = {"cond": cond, "then": then, "else": other}
    flat = (n // 1000, 1000)
    c2, t2, e2 = cond.reshape(flat), then.reshape(flat), other.reshape(flat)

    def candidate(rows: int, threads: int, out: np.ndarray | None = None) -> np.ndarray:
        target = np.empty(flat, np.float32) if out is None else out
        if threads == 1:
            return bit_select_rows(c2, t2, e2, target, rows)

        def work(lo: int, hi: int) -> None:
            bit_select_rows(c2[lo:hi], t2[lo:hi], e2[lo:hi], target[lo:hi], rows)

        two_threads(flat[0], work, rows)
        return target

    assert same_bits(candidate(64, 2).reshape(-1), expected) and same_bits(bit_select(cond, then, other), expected)
    reused = np.empty(flat, np.float32)
    report(f"Select f32 {n:.0e}, same shapes, random mask", medians({
        "ir-run bit_select (not_equal + negative + 3 bit ops, 64K chunks)": lambda: bit_select(cond, then, other),
        "OpenVINO": ov_call(request, feeds),
        "np.where": lambda: np.where(cond, then, other),
        "cast-and-negate mask + 3 bit ops, 16K chunks, 1 thread": lambda: candidate(16, 1),
        "same, 64K chunks, 1 thread": lambda: candidate(64, 1),
        "same, 64K chunks, 2 threads": lambda: candidate(64, 2),
        "same, 64K chunks, 2 threads, reused out": lambda: candidate(64, 2, reused),
        "memory roofline: np.add(then, else, out=reused)": lambda: np.add(then, other, out=reused.reshape(-1)),
    }, budget=6.0 if n > 10**6 else 3.0, min_reps=5))


def quiet_f16_chunked(out: np.ndarray) -> np.ndarray:
    """Quieten signalling f16 NaNs in place, per cache-sized chunk: with the sign masked off, a signalling
    NaN is 0x7C01..0x7DFF, so ``(bits & 0x7FFF) - 0x7C01 < 0x1FF`` (u16 wrap-around) finds them in 3 ops."""
    bits = out.reshape(-1).view(np.uint16)
    scratch = np.empty(1 << 16, np.uint16)
    flags = np.empty(1 << 16, np.bool_)
    for lo in range(0, bits.size, 1 << 16):
        chunk = bits[lo:lo + (1 << 16)]
        k = chunk.size
        np.bitwise_and(chunk, 0x7FFF, out=scratch[:k])
        np.subtract(scratch[:k], 0x7C01, out=scratch[:k])
        np.less(scratch[:k], 0x1FF, out=flags[:k])
        if flags[:k].any():
            chunk[flags[:k]] |= 0x200
    return out


def select_f16() -> None:
    """f16 Select: the bit-select plus the quieting of signalling NaNs the reference does."""
    from ir_runner.ops.api import quiet_f16_nans
    from ir_runner.ops.elementwise.select import bit_select

    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    assert same_bits(quiet_f16_nans(every.copy()), quiet_f16_chunked(every.copy()))
    n = 10**7
    cond = make_input("boolean", (n,), "mask:0.5", 1)
    then = make_input("f16", (n,), "values", 2)
    other = make_input("f16", (n,), "values", 3)
    xml = select_model((n,), (n,), (n,), "f16").save(WORK, "select_f16")
    feeds = {"cond": cond, "then": then, "else": other}
    model, request = ir_runner.load(xml), ov_request(xml)
    selected = bit_select(cond, then, other)
    report("Select f16 1e7, same shapes", medians({
        "ir-run Model.run (bit_select + quiet_f16_nans)": lambda: model.run(feeds),
        "OpenVINO": ov_call(request, feeds),
        "bit_select alone": lambda: bit_select(cond, then, other),
        "quiet_f16_nans (ir-run now)": lambda: quiet_f16_nans(selected),
        "chunked 3-op quieting (same result on all 65,536 f16 bit patterns)": lambda: quiet_f16_chunked(selected),
    }, budget=5.0, min_reps=5))


# ---------------------------------------------------------------- large IR


def _lean_ports(group) -> tuple:
    return tuple(
        (port.get("id"), position, port.get("precision"), tuple([int(d.text) for d in port]), port.get("names"))
        for position, port in enumerate(group)
    )


def lean_walk(root) -> tuple[list, list]:
    """One pass over <layers> children with tag dispatch and plain tuples (no find/iterfind per layer)."""
    layers = []
    for el in root.find("layers"):
        data, inputs, outputs = {}, (), ()
        for child in el:
            tag = child.tag
            if tag == "data":
                data = dict(child.attrib)
            elif tag == "input":
                inputs = _lean_ports(child)
            elif tag == "output":
                outputs = _lean_ports(child)
        layers.append((dict(el.attrib), data, inputs, outputs, el.sourceline))
    edges = [(e.get("from-layer"), e.get("from-port"), e.get("to-layer"), e.get("to-port"), e.sourceline)
             for e in root.find("edges")]
    return layers, edges


def _best_of(fn: Callable[[], object], reps: int) -> float:
    times = []
    for _ in range(reps):
        gc.collect()
        start = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - start)
    return float(min(times))


def _large_xml() -> Path:
    xml = WORK / "large.xml"
    if not xml.exists():
        large_model(60000).save(WORK, "large")
    return xml


def large_read() -> None:
    """Reading the 60,000-layer IR: ir-run's reader and graph against lxml alone, a lean walk, OpenVINO."""
    from ir_runner.graph import build_graph
    from ir_runner.ir.reader import read_ir
    from ir_runner.ir.records import PortRecord

    xml = _large_xml()
    data = xml.read_bytes()
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, remove_comments=True,
                             remove_pis=True)
    root = etree.fromstring(data, parser)
    net = read_ir(xml)
    gc.disable()
    try:
        results = {
            "OpenVINO read_model": _best_of(lambda: CORE.read_model(str(xml)), 3),
            "ir-run read_ir (parse + records)": _best_of(lambda: read_ir(xml), 3),
            "ir-run build_graph": _best_of(lambda: build_graph(net), 3),
            "lxml parse alone (etree.fromstring)": _best_of(lambda: etree.fromstring(data, parser), 3),
            "lean walk of the parsed tree (tuples, dims, sourceline)": _best_of(lambda: lean_walk(root), 3),
            "lxml XPath //dim/text() (all dims, one C call)": _best_of(lambda: root.xpath("//dim/text()"), 3),
            "300,000 ir-run PortRecords (__slots__ records, as records.py defines them)": _best_of(
                lambda: [PortRecord("0", 1, "FP32", (2, 8), ()) for _ in range(300_000)], 3),
            "300,000 records as tuples": _best_of(lambda: [("0", 1, "FP32", (2, 8), ()) for _ in range(300_000)], 3),
        }
    finally:
        gc.enable()
    report(f"Large IR, reading: {xml.stat().st_size / 1e6:.0f} MB, 60,000 layers (best of 3, gc paused)", results)


def large_infer(layers: int = 12000) -> None:
    """Inference and planning of a ``layers``-layer IR, stage by stage, and what computing memo keys for
    every layer costs (ir_runner/infer.py memoises inference of repeated layers)."""
    from ir_runner.graph import build_graph
    from ir_runner.infer import infer_graph
    from ir_runner.ir.reader import read_ir
    from ir_runner.plan import build_plan

    xml = large_model(layers).save(WORK, f"large_{layers}")
    graph = build_graph(read_ir(xml))
    inference = infer_graph(graph)
    gc.disable()
    try:
        results = {
            "ir-run load() (gc paused inside)": _best_of(lambda: ir_runner.load(xml), 2),
            "OpenVINO read_model": _best_of(lambda: CORE.read_model(str(xml)), 3),
            "  stage: infer_graph": _best_of(lambda: infer_graph(graph), 2),
            "  stage: build_plan (first run)": _best_of(lambda: build_plan(inference, None), 2),
            "memo keys of all layers (type, version, data, input specs) + dict lookup": _best_of(
                lambda: _memo_keys(inference), 3),
        }
    finally:
        gc.enable()
    distinct = len(_memo_keys(inference))
    report(f"Large IR, inference: {layers} layers (best of 2-3, gc paused)", results,
           f"{distinct} distinct (type, version, <data>, input specs) keys among {len(inference.layers)} layers"
           " (Consts, never memoised, counted by their <data>).")


def _memo_keys(inference) -> dict:
    """A memo key per layer (like infer._InferenceMemo's, without constant inputs), the distinct ones."""
    seen: dict = {}
    for info in inference.layers.values():
        layer = info.layer
        specs = tuple((s.element_type.name, s.shape.to_tuple()) for s in info.inputs)
        key = (layer.type, layer.version, tuple(layer.data.items()), specs)
        seen.setdefault(key, info)
    return seen


# ---------------------------------------------------------------- tiny graph and process start


def tiny() -> None:
    models = Path(__file__).resolve().parent.parent / "models"
    xml = models / "select_gather.xml"
    with np.load(models / "select_gather.inputs.npz") as archive:
        feeds = {k: archive[k] for k in archive.files}
    model = ir_runner.load(xml)
    compiled = CORE.compile_model(str(xml), "CPU", CPU_CONFIG)
    preset = compiled.create_infer_request()
    for i, port in enumerate(compiled.inputs):
        preset.set_input_tensor(i, ov.Tensor(feeds[port.get_any_name()], shared_memory=True))
    cond, then, other = feeds["cond"], feeds["then"], feeds["else"]
    indices = np.array([2, 0], dtype=np.int32)
    out = np.empty((2, 2), dtype=np.float32)
    lean = _lean_interpreter(indices)
    assert same_bits(lean(feeds)["out"], model.run(feeds)["out"])
    report("Tiny graph per call", medians({
        "ir-run Model.run(dict)": lambda: model.run(feeds),
        "ir-run model(cond, then, else)": lambda: model(cond, then, other),
        "OpenVINO preset shared tensors, infer()": preset.infer,
        "OpenVINO compiled_model(inputs)": lambda: compiled(feeds),
        "numpy np.take(np.where(c, t, e), idx, axis=1)": lambda: np.take(np.where(cond, then, other), indices, axis=1),
        "numpy floor with out=: where then take(out=, mode='wrap')": lambda: np.where(cond, then, other).take(
            indices, axis=1, out=out, mode="wrap"),
        "lean generic interpreter (fast bind, (kernel, args, out) loop)": lambda: lean(feeds),
        "np.where alone": lambda: np.where(cond, then, other),
        "dict(zip(...)) of one output": lambda: dict(zip(("out",), (out,))),
    }, budget=4.0, min_reps=1000))


def _lean_interpreter(indices: np.ndarray) -> Callable[[dict], dict]:
    """The least a generic plan interpreter does for the quick-start model: check each feed's type,
    dtype and shape, run a flat list of (kernel, argument slots, output slot), return a dict."""
    spec = (("cond", np.dtype(np.bool_), (2, 3)), ("then", np.dtype(np.float32), (2, 3)),
            ("else", np.dtype(np.float32), (2, 3)))

    def gather_step(data: np.ndarray) -> np.ndarray:
        return data.take(indices, axis=1, out=np.empty((2, 2), np.float32), mode="wrap")

    steps = ((np.where, (0, 1, 2), 3), (gather_step, (3,), 4))

    def run(feeds: dict) -> dict:
        if type(feeds) is not dict or len(feeds) != len(spec):
            raise TypeError("slow path")
        slots: list = [None] * 5
        for i, (name, dtype, shape) in enumerate(spec):
            array = feeds[name]
            if type(array) is not np.ndarray or array.dtype != dtype or array.shape != shape:
                raise TypeError("slow path")
            slots[i] = array
        for kernel, args, target in steps:
            slots[target] = kernel(*[slots[a] for a in args])
        return {"out": slots[4]}

    return run


def _process_ms(code: list[str], reps: int) -> float:
    times = []
    for _ in range(reps + 1):
        start = time.perf_counter_ns()
        subprocess.run(code, check=True, capture_output=True, env=bytecode_env(WORK))
        times.append(time.perf_counter_ns() - start)
    return float(np.median(times[1:]))


def startup() -> None:
    py = sys.executable
    models = Path(__file__).resolve().parent.parent / "models"
    results = {
        "python -c pass": _process_ms([py, "-c", "pass"], 7),
        "import numpy": _process_ms([py, "-c", "import numpy"], 7),
        "import numpy, lxml.etree, click": _process_ms([py, "-c", "import numpy, lxml.etree, click"], 7),
        "import numpy, ml_dtypes": _process_ms([py, "-c", "import numpy, ml_dtypes"], 7),
        "import ir_runner": _process_ms([py, "-c", "import ir_runner"], 7),
        "import ir_runner.cli": _process_ms([py, "-c", "import ir_runner.cli"], 7),
        "ir-run models/select_gather.xml --input ...": _process_ms(
            [py, "-m", "ir_runner", str(models / "select_gather.xml"), "--input",
             str(models / "select_gather.inputs.npz")], 7),
        "import openvino": _process_ms([py, "-c", "import openvino"], 7),
    }
    report("Process start (median of 7; bytecode caches on, as for an installed package)", results)
    own: dict[str, int] = {}
    cumulative: dict[str, int] = {}
    for _ in range(5):
        proc = subprocess.run([py, "-X", "importtime", "-m", "ir_runner", str(models / "select_gather.xml"),
                               "--input", str(models / "select_gather.inputs.npz")], capture_output=True, text=True,
                              env=bytecode_env(WORK))
        for line in proc.stderr.splitlines():
            parts = line.split("|")
            if len(parts) == 3 and line.startswith("import time:") and parts[1].strip().isdigit():
                name = parts[2].strip()
                own[name] = min(own.get(name, 1 << 62), int(parts[0].split(":")[1]))
                cumulative[name] = min(cumulative.get(name, 1 << 62), int(parts[1]))
    print("\n| module (`-X importtime` of `python -m ir_runner MODEL --input NPZ`, min of 5) | self | cumulative |")
    print("|---|---:|---:|")
    for name, us in sorted(own.items(), key=lambda kv: -kv[1])[:25]:
        print(f"| {name} | {us / 1000:.1f} ms | {cumulative[name] / 1000:.1f} ms |")


def _hwm_growth(fn: Callable[[], object]) -> int:
    """Bytes by which one call raises the resident high-water mark (VmHWM reset through clear_refs)."""

    def status(field: str) -> int:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
        raise RuntimeError(field)

    gc.collect()
    Path("/proc/self/clear_refs").write_text("5")
    base = status("VmRSS")
    result = fn()
    peak = status("VmHWM")
    del result
    return peak - base


def memory() -> None:
    """Extra memory of one 1-D Gather of 1e7 i32 indices (the output itself is 40 MB)."""
    n, dim = 10**7, 10**6
    data = make_input("f32", (dim,), "values", 1)
    indices = make_input("i32", (n,), f"index:{dim}", 2)
    model = ir_runner.load(gather_model((dim,), (n,), 0, 0).save(WORK, "gather_mem"))
    feeds = {"data": data, "indices": indices}
    model.run(feeds)
    take_1d_chunked(data, indices, np.empty(n, np.float32), 2)
    rows = {
        "ir-run Model.run": _hwm_growth(lambda: model.run(feeds)),
        "np.take(data, indices)": _hwm_growth(lambda: np.take(data, indices)),
        "chunked candidate (2 threads, fresh out)": _hwm_growth(
            lambda: take_1d_chunked(data, indices, np.empty(n, np.float32), 2)),
    }
    print("\n### Peak memory growth of one Gather, 1e7 i32 indices into [1e6] f32 (output 38.1 MiB)\n")
    print("| variant | peak growth |\n|---|---:|")
    for name, grown in rows.items():
        print(f"| {name} | {grown / 2**20:.1f} MiB |")


EXPERIMENTS = {
    "memory": memory,  # first: its high-water mark needs a process that has not held large arrays yet
    "alloc": alloc,
    "gather1d": gather1d,
    "negidx": negative_indices,
    "select_bcast": select_broadcast,
    "select_mask": select_mask,
    "select_f16": select_f16,
    "large_read": large_read,
    "large_infer": large_infer,
    "tiny": tiny,
    "startup": startup,
}


def main(names: list[str]) -> int:
    if names in (["-h"], ["--help"]):
        print(f"{__doc__}\nexperiments: {' '.join(EXPERIMENTS)}")
        return 0
    unknown = [name for name in names if name not in EXPERIMENTS]
    if unknown:
        print(f"unknown experiment(s): {', '.join(unknown)}; there are: {' '.join(EXPERIMENTS)}", file=sys.stderr)
        return 2
    WORK.mkdir(parents=True, exist_ok=True)
    for name in names or list(EXPERIMENTS):
        EXPERIMENTS[name]()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
