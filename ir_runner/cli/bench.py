"""``bench``: latency percentiles and throughput of ``Model.run``, and optionally time per layer.

Inputs are bound (and generated) once, before any timing. Only the ``Model.run`` call is inside the
timed region; the progress bar is drawn between calls, on stderr, and only when stderr is a terminal.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

import click
import numpy as np

from .common import emit, info
from .formats import number, table
from .inputs import bind_inputs
from .options import InputOptions
from .run import binding_rows, binding_text, load_model
from .view import ViewOptions, open_view, require_viewer

DEFAULT_ITERATIONS = 100


@dataclass(frozen=True)
class BenchOptions:
    model: str
    weights: str | None = None
    strict: bool = False
    memory_limit: int | None = None
    inputs: InputOptions = field(default_factory=lambda: InputOptions(fill="random"))
    warmup: int = 5
    iterations: int | None = None
    seconds: float | None = None
    percentiles: tuple[float, ...] = (50.0, 90.0, 95.0, 99.0)
    per_layer: bool = False


def parse_percentiles(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a comma-separated list of numbers",
                                 param_hint="--percentiles") from None
    if not values or any(not 0 <= v <= 100 for v in values):
        raise click.BadParameter(f"{text!r}: percentiles lie in [0, 100]", param_hint="--percentiles")
    return values


class Progress:
    """A one-line progress bar on a terminal; nothing at all when the stream is not a terminal."""

    def __init__(self, label: str, total: int | None, seconds: float | None, stream: IO[str] | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.label, self.total, self.seconds = label, total, seconds
        self.start = time.perf_counter()
        self.last = float("-inf")
        self.drawn = 0

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self.last < 0.1:
            return
        self.last = now
        elapsed = now - self.start
        fraction = done / self.total if self.total else min(elapsed / (self.seconds or 1.0), 1.0)
        line = f"\r{self.label} [{'#' * int(fraction * 30):<30}] {done} runs, {elapsed:.1f} s"
        self.drawn = len(line)
        self.stream.write(line)
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.drawn:
            self.stream.write("\r" + " " * self.drawn + "\r")
            self.stream.flush()


def measure(call: Callable[[], Any], iterations: int | None, seconds: float | None, progress: Progress) -> list[float]:
    """Seconds per call: ``iterations`` calls, or as many as fit in ``seconds`` (at least one)."""
    latencies: list[float] = []
    deadline = None if seconds is None else time.perf_counter() + seconds
    while True:
        if iterations is not None and len(latencies) >= iterations:
            break
        if deadline is not None and latencies and time.perf_counter() >= deadline:
            break
        start = time.perf_counter()
        call()
        latencies.append(time.perf_counter() - start)
        progress.update(len(latencies))
    progress.close()
    return latencies


def bench_command(options: BenchOptions, view: ViewOptions | None = None) -> None:
    """Time the model and print it; with ``view`` (needs ``per_layer``), then show the times in the viewer."""
    require_viewer(view)
    result = bench_result(options)
    emit("bench", result, render_bench)
    if view is not None:
        open_view(options.model, options.weights, options.strict, view, bench=result["per_layer"])


def bench_result(options: BenchOptions) -> dict[str, Any]:
    """What ``bench`` prints, as JSON-ready data."""
    model = load_model(options.model, options.weights, options.strict, options.memory_limit)
    bound = bind_inputs(model, options.inputs)
    feeds = {b.info.name: b.array for b in bound.bindings}
    iterations = options.iterations if options.iterations or options.seconds else DEFAULT_ITERATIONS
    for _ in range(options.warmup):
        bound.model.run(feeds)
    latencies = measure(lambda: bound.model.run(feeds), iterations, options.seconds,
                        Progress("bench", iterations, options.seconds))
    layers = None
    if options.per_layer:  # as long as the timed part again, or longer: say so before it starts
        info(f"timing each layer: {len(latencies)} more runs after {options.warmup} warm-up runs, each layer timed"
             f" alone (the timed runs took {sum(latencies):.3g} s)")
        layers = _per_layer(bound, len(latencies), options.warmup)
    result: dict[str, Any] = {"model": {"path": options.model}, "seed": bound.seed, "inputs": binding_rows(bound),
                              "timing": _statistics(latencies, options)}
    if layers is not None:
        result["per_layer"] = layers
    return result


def _statistics(latencies: list[float], options: BenchOptions) -> dict[str, Any]:
    ms = np.array(latencies) * 1e3
    total = float(np.sum(latencies))
    return {
        "unit": "ms", "warmup": options.warmup, "iterations": len(latencies), "total_seconds": total,
        "mean": float(ms.mean()), "std": float(ms.std()), "min": float(ms.min()), "max": float(ms.max()),
        "percentiles": [{"percentile": p, "value": float(np.percentile(ms, p))} for p in options.percentiles],
        "throughput_per_second": len(latencies) / total if total > 0 else None,
    }


def _per_layer(bound, runs: int, warmup: int) -> list[dict[str, Any]]:
    totals: dict[str, float] = {}
    names: dict[str, tuple[str, str]] = {}
    progress = Progress("per layer", runs, None)
    progress.update(0)  # drawn during the warm-up runs already
    for _ in range(warmup):
        bound.model.run(bound.arrays)

    def observe(record) -> None:
        if record.source == "computed":  # the others cost nothing per run
            layer = record.layer
            totals[layer.id] = totals.get(layer.id, 0.0) + record.seconds
            names[layer.id] = (layer.name, layer.type_version)

    for done in range(runs):
        bound.model.trace(bound.arrays, callback=observe)
        progress.update(done + 1)
    progress.close()
    whole = sum(totals.values()) or 1.0
    rows = [{"layer": names[lid][0], "id": lid, "type": names[lid][1], "runs": runs,
             "total_ms": seconds * 1e3, "mean_ms": seconds * 1e3 / runs, "percent": 100.0 * seconds / whole}
            for lid, seconds in totals.items()]
    return sorted(rows, key=lambda row: -row["total_ms"])


def render_bench(result: dict[str, Any]) -> str:
    timing = result["timing"]
    parts = [binding_text(result)]
    lines = [f"latency over {timing['iterations']} runs after {timing['warmup']} warm-up runs"
             f" ({timing['total_seconds']:.3f} s timed), in ms"]
    rows = [("mean", _ms(timing["mean"])), ("std", _ms(timing["std"])), ("min", _ms(timing["min"]))]
    rows += [(f"p{number(p['percentile'])}", _ms(p["value"])) for p in timing["percentiles"]]
    rows += [("max", _ms(timing["max"]))]
    lines.append(table(rows))
    throughput = timing["throughput_per_second"]
    lines.append(f"throughput  {throughput:.1f} runs/s" if throughput else "throughput  -")
    parts.append("\n".join(lines))
    if "per_layer" in result:
        rows = [("layer", "type", "mean ms", "total ms", "%")]
        rows += [(f"{r['layer']} (id {r['id']})", r["type"], _ms(r["mean_ms"]), _ms(r["total_ms"]),
                  f"{r['percent']:.1f}") for r in result["per_layer"]]
        parts.append("per layer (each layer timed alone)\n" + table(rows))
    return "\n".join(part for part in parts if part)


def _ms(value: float) -> str:
    return f"{value:.4f}"
