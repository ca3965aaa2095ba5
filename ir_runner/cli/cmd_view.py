"""``ir-run view MODEL``: the model's graph in Google's Model Explorer, with ir-run's findings laid over it."""

from __future__ import annotations

from typing import Any

import click

from .common import EXIT_CODES_HELP, quiet_option
from .options import given_on_command_line, input_options, model_options, pop_input_options
from .view import OVERLAYS, pop_view_options, view_options


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
    from .view import show_model

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
