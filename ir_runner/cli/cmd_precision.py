"""``ir-run precision MODEL``: f16/bf16 headroom per layer with a checked fix, or compressed weights ranked."""

from __future__ import annotations

from typing import Any

import click

from .common import EXIT_CODES_HELP, json_option, quiet_option
from .options import given_on_command_line, input_options, model_options, pop_input_options
from .view import pop_view, view_options


@click.command(epilog=EXIT_CODES_HELP)
@model_options
@input_options(fill="error")
@click.option("--to", "to", type=click.Choice(["f16", "bf16"]), default="f16", show_default=True,
              help="The INFERENCE_PRECISION_HINT to emulate.")
@click.option("--device", type=click.Choice(["CPU", "GPU"], case_sensitive=False),
              help="Whose way of applying the hint to emulate (default: GPU for f16, CPU for bf16).")
@click.option("--atol", type=click.FloatRange(min=0), help="Absolute tolerance of the emulated outputs (default 0).")
@click.option("--rtol", type=click.FloatRange(min=0), help="Relative tolerance, also of the output's largest value"
              " (default 8 epsilons of the type: f16 7.8e-3, bf16 6.25e-2).")
@click.option("--headroom", type=click.FloatRange(min=1), default=8.0, show_default=True,
              help="The scale fix brings the largest activation below the type's maximum divided by this.")
@click.option("--keep", multiple=True, metavar="LAYER", help="A layer already kept in f32 (repeatable).")
@click.option("--emulated-tail", is_flag=True, help="With --device CPU: the emulated rule of which layers the CPU"
              " plugin keeps in f32, even where OpenVINO's CPU plugin on this machine could tell (by default it is"
              " asked: the model compiled with the hint).")
@click.option("--no-fix", is_flag=True, help="Report only; do not search the fixes (each costs emulated runs).")
@click.option("--compression", is_flag=True, help="Rank the layers with compressed weights (int8/int4/nf4"
              " decompression subgraphs) by the error their compression causes, instead.")
@click.option("--reference", type=click.Path(), metavar="ORIGINAL.xml", help="With --compression: the model"
              " without compression (same layer names), to measure the actual error rather than the step sensitivity.")
@click.option("--top", type=click.IntRange(min=1), default=3, show_default=True,
              help="With --compression: how many of the worst layers the nncf.IgnoredScope snippet names.")
@click.option("--all", "show_all", is_flag=True, help="List every float layer output, not only those with a problem.")
@click.option("--view", "show", is_flag=True, help="Then show the headroom in the viewer (ir-run view; needs"
              " pip install 'ir-run[view]').")
@view_options
@json_option
@quiet_option
def precision(**kw: Any) -> None:
    """Emulate an f16 or bf16 inference-precision hint on MODEL and report every float layer output: its f32 range
    against the type's (overflow, underflow to zero, subnormals), its emulated error, the first layer that diverges,
    and the fixes, each checked in the emulation: an ACTIVATIONS_SCALE_FACTOR (on an overflow) and the smallest set
    of layers to keep in f32 (with a Python snippet that marks them). Exit 0 when no model output diverges in the
    emulation, 1 when one does.

    With --compression, rank the layers whose weights are compressed by the output error the compression causes
    (against --reference, or by one quantisation step), with an nncf.IgnoredScope snippet for the worst; exit 0.
    """
    from .precision import PrecisionOptions, precision_command

    _check_mode(kw["compression"])
    _check_tail_device(kw)
    view = pop_view(kw)
    precision_command(PrecisionOptions(inputs=pop_input_options(kw), **kw), view)


HEADROOM_ONLY = {"to": "--to", "device": "--device", "atol": "--atol", "rtol": "--rtol", "headroom": "--headroom",
                 "keep": "--keep", "no_fix": "--no-fix", "show": "--view", "emulated_tail": "--emulated-tail"}
COMPRESSION_ONLY = {"reference": "--reference", "top": "--top"}


def _check_mode(compression: bool) -> None:
    """A usage error for an option given on the command line that the other mode (headroom or --compression)
    takes: it would be ignored."""
    given = given_on_command_line(HEADROOM_ONLY if compression else COMPRESSION_ONLY)
    if given:
        verb = "is" if len(given) == 1 else "are"
        raise click.UsageError(f"{', '.join(given)} {verb} for the headroom report, not --compression" if compression
                               else f"{', '.join(given)} {verb} for --compression: add --compression")


def _check_tail_device(kw: dict[str, Any]) -> None:
    """A usage error for --emulated-tail with a device other than the CPU (given, or f16's default GPU): only the
    CPU plugin keeps layers in f32, so it would be ignored."""
    if not kw["emulated_tail"] or kw["compression"]:
        return
    from ..headroom import DEFAULT_DEVICE

    device = (kw["device"] or DEFAULT_DEVICE.get(kw["to"], "")).upper()
    if device != "CPU":
        raise click.UsageError(f"--emulated-tail is for --device CPU (the layers the CPU plugin keeps in f32), not"
                               f" {device}{' (the default for ' + kw['to'] + ')' if kw['device'] is None else ''}:"
                               " add --device CPU, or leave it out")
