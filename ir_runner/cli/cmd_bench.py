"""``ir-run bench MODEL``: latency and throughput."""

from __future__ import annotations

import math
from typing import Any

import click

from .common import EXIT_CODES_HELP, json_option, quiet_option
from .options import input_options, model_options, pop_input_options
from .view import pop_view, view_options


def _seconds(_ctx, _param, value: str | None) -> float | None:
    if value is None:
        return None
    text = value.strip().lower()
    factor = 60.0 if text.endswith("min") else 1e-3 if text.endswith("ms") else 1.0
    try:
        seconds = float(text.removesuffix("min").removesuffix("ms").removesuffix("s")) * factor
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < math.inf:
        raise click.BadParameter(f"{value!r} is not a duration such as 10, 10s, 500ms or 2min")
    return seconds


@click.command(epilog=EXIT_CODES_HELP)
@model_options
@input_options(fill="random")
@click.option("--warmup", type=click.IntRange(min=0), default=5, show_default=True, help="Untimed runs first.")
@click.option("--iterations", "-n", type=click.IntRange(min=1), help="Timed runs (default 100).")
@click.option("--time", "seconds", callback=_seconds, metavar="DURATION",
              help="Run for this long instead (10, 10s, 500ms, 2min).")
@click.option("--percentiles", default="50,90,95,99", show_default=True, help="Latency percentiles to report.")
@click.option("--per-layer", is_flag=True, help="Also time each layer (ir-run runs each layer itself).")
@click.option("--view", "show", is_flag=True, help="Then show the per-layer times in the viewer (ir-run view; needs"
              " pip install 'ir-run[view]'); with --per-layer.")
@view_options
@json_option
@quiet_option
def bench(**kw: Any) -> None:
    """Time MODEL: latency percentiles, mean/min/max and throughput; inputs are prepared untimed."""
    from .bench import BenchOptions, bench_command, parse_percentiles

    if kw["iterations"] is not None and kw["seconds"] is not None:
        raise click.UsageError("give --iterations or --time, not both")
    kw["percentiles"] = parse_percentiles(kw["percentiles"])
    view = pop_view(kw)
    if view is not None and not kw["per_layer"]:
        raise click.UsageError("--view shows the per-layer times: add --per-layer")
    bench_command(BenchOptions(inputs=pop_input_options(kw), **kw), view)
