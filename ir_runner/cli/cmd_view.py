"""``ir-run view MODEL``: the model's graph in Google's Model Explorer, with ir-run's findings laid over it."""

from __future__ import annotations

from typing import Any

import click

from .common import EXIT_CODES_HELP, info, quiet_option
from .options import InputOptions, given_on_command_line, input_options, model_options, pop_input_options
from .view import OVERLAYS, ViewOptions, open_view, pop_view_options, require_viewer, view_options


@click.command(epilog=EXIT_CODES_HELP)
@model_options
@click.option("--overlay", "overlays", multiple=True, type=click.Choice(OVERLAYS),
              help="Lay findings over the graph (repeatable): validate (mismatching ports, unsupported layers),"
                   " crosscheck (error per layer against --device, the first divergence selected), bench (time"
                   " per layer and its share), precision (headroom of every layer against --to's range, overflow,"
                   " underflow, the first divergence in the emulation selected).")
@input_options(fill="random")
@click.option("--device", help="The OpenVINO device of --overlay crosscheck (default CPU); for --overlay precision,"
              " whose way of applying the hint to emulate, CPU or GPU (default: GPU for f16, CPU for bf16).")
@click.option("--precision", type=click.Choice(["f32", "f16", "bf16"]), default="f32", show_default=True,
              help="The device's INFERENCE_PRECISION_HINT for --overlay crosscheck.")
@click.option("--to", "to", type=click.Choice(["f16", "bf16"]), default="f16", show_default=True,
              help="The INFERENCE_PRECISION_HINT --overlay precision emulates.")
@click.option("--iterations", "-n", type=click.IntRange(min=1), default=10, show_default=True,
              help="Runs timed per layer for --overlay bench.")
@view_options
@quiet_option
def view(**kw: Any) -> None:
    """Show MODEL's graph in Google's Model Explorer (pip install 'ir-run[view]'), served on localhost.

    Every layer with its type-version, attributes and declared and inferred port specs; groups from the
    layer names' module prefixes; Const weights folded into their consumers; decompression subgraphs as one
    group; bodies as subgraphs; variable readers and writers linked. Each --overlay is a node data layer
    (pick it in the viewer's node data panel). Inputs for crosscheck, bench and precision are random unless given.
    Exit 5 when the view extra is not installed (--export needs no extra).
    """
    _check_overlay_options(kw["overlays"])
    show_model(kw.pop("model"), kw.pop("weights"), kw.pop("strict"), kw.pop("memory_limit"), pop_input_options(kw),
               pop_view_options(kw), **kw)


RUN_OPTIONS = {"inputs": "--input", "values": "--value", "shapes": "--shape", "data_shapes": "--data-shape",
               "ranges": "--range", "seed": "--seed", "fill": "--fill", "cast": "--cast"}
USED_BY = {"crosscheck": {**RUN_OPTIONS, "device": "--device", "precision": "--precision"},
           "bench": {**RUN_OPTIONS, "iterations": "--iterations"},
           "precision": {**RUN_OPTIONS, "device": "--device", "to": "--to"}}


def _check_overlay_options(overlays: tuple[str, ...]) -> None:
    """A usage error for an option given on the command line that no overlay asked for uses: it would be
    ignored."""
    used = {name for overlay in overlays for name in USED_BY.get(overlay, {})}
    unused = given_on_command_line({name: flag for flags in USED_BY.values() for name, flag in flags.items()
                                    if name not in used})
    if unused:
        raise click.UsageError(f"no --overlay given uses {', '.join(unused)} (it would be ignored): crosscheck, bench"
                               " and precision run the model with the inputs given")


def show_model(model: str, weights: str | None, strict: bool, memory_limit: int | None, inputs: InputOptions,
               options: ViewOptions, overlays: tuple[str, ...], device: str | None, precision: str, iterations: int,
               to: str) -> None:
    """``ir-run view``: run what the overlays need, then :func:`open_view` (``device``: crosscheck's, CPU when
    None; precision's emulation, its default for ``to`` when None)."""
    require_viewer(options)
    crosscheck = bench = headroom = None
    if "crosscheck" in overlays:
        from .crosscheck import CrosscheckOptions, crosscheck_result

        crosscheck = crosscheck_result(CrosscheckOptions(model, weights, strict, memory_limit, inputs,
                                                         device or "CPU", precision))
        first = crosscheck["first_divergence"]
        info(f"crosscheck: first divergence: layer '{first['layer']}' (id {first['id']})" if first
             else "crosscheck: no divergence")
    if "bench" in overlays:
        from .bench import BenchOptions, bench_result

        bench = bench_result(BenchOptions(model, weights, strict, memory_limit, inputs, warmup=1,
                                          iterations=iterations, per_layer=True))["per_layer"]
    if "precision" in overlays:
        from .precision import PrecisionOptions, precision_result

        headroom = precision_result(PrecisionOptions(model, weights, strict, memory_limit, inputs, to, device,
                                                     no_fix=True))["precision"]
        first = headroom["first_divergence"]
        info(f"precision: first divergence in {to}: layer '{first['layer']}' (id {first['id']})" if first
             else f"precision: no divergence in {to}")
    open_view(model, weights, strict, options, validate="validate" in overlays, crosscheck=crosscheck, bench=bench,
              precision=headroom, command="view")
