"""``ir-run crosscheck MODEL``: compare every layer with an OpenVINO device and name the first divergence."""

from __future__ import annotations

from typing import Any

import click

from .common import EXIT_CODES_HELP, json_option, quiet_option
from .options import given_on_command_line, input_options, model_options, pop_input_options
from .view import pop_view, view_options


@click.command(epilog=EXIT_CODES_HELP)
@model_options
@input_options(fill="error")
@click.option("--device", default="CPU", show_default=True, help="The OpenVINO device to compare with.")
@click.option("--precision", type=click.Choice(["f32", "f16", "bf16"]), default="f32", show_default=True,
              help="The device's INFERENCE_PRECISION_HINT; it also sets the default tolerances.")
@click.option("--atol", type=click.FloatRange(min=0), help="Absolute tolerance of float outputs compared within"
              " a bound (default by precision: f32 1e-6, f16 1e-3, bf16 1e-2).")
@click.option("--rtol", type=click.FloatRange(min=0), help="Relative tolerance, the same way (f32 1e-5, f16 2e-3,"
              " bf16 1.6e-2).")
@click.option("--ulp", type=click.IntRange(min=0), help="ULPs of the output type allowed, the same way (f32 4).")
@click.option("--strict-representations", is_flag=True, help="Count a layer output that differs only as the device"
              " represents it (a 64-bit integer held in 32 bits) as a divergence.")
@click.option("--all", "show_all", is_flag=True, help="List every layer output, not only those that differ.")
@click.option("--view", "show", is_flag=True, help="Then show the result in the viewer (ir-run view; needs"
              " pip install 'ir-run[view]').")
@view_options
@click.option("--every-layer", is_flag=True, help="Observe every layer output (all made device outputs), not only"
              " those the device materialises: finer, but the device may then compile the model otherwise.")
@click.option("--reduce", is_flag=True, help="On a divergence, write the smallest part of MODEL that still diverges"
              " (model.xml, model.bin, inputs.npz of the reference's values at the cut, README.md with the command"
              " that shows it) to the -o folder.")
@click.option("-o", "--output", type=click.Path(file_okay=False), default="repro", show_default=True,
              help="The folder --reduce writes (a usage error without --reduce).")
@json_option
@quiet_option
def crosscheck(**kw: Any) -> None:
    """Run MODEL in ir-run and on an OpenVINO device, compare the layer outputs, name the first divergence.

    By default only the layer outputs the device materialises are observed (the boundaries of the fused groups
    of its compiled graph), after checking that observing them changes nothing it compiles (a bisection
    otherwise); the diverging group is run alone to tell its own error from an inherited one. --every-layer
    observes every layer output.

    Integer, boolean and exactly computed float outputs must be equal bit for bit; other float outputs must
    be within the tolerances. A layer output that differs only as the device represents it (a 64-bit integer
    held in 32 bits, such as an INT64_MAX slice end) is reported as such and passes while every layer computed
    from it agrees and it is no model output; with --strict-representations it is a divergence (--strict is
    spec-strict index checking, as for every command). A difference the layer's operation accounts for (a
    FakeQuantize level flipped by a rounding tie) or a decompression subgraph computed in the device's
    precision is 'explained' and passes too. Exit 0 when every observable layer agrees or differs only as
    explained or as a device representation, 1 on any other divergence, 5 when openvino is not installed
    (pip install 'ir-run[openvino]').
    """
    from .crosscheck import CrosscheckOptions, crosscheck_command

    if not kw["reduce"] and given_on_command_line({"output": "-o"}):
        raise click.UsageError("-o is the folder --reduce writes: add --reduce (the report itself goes to stdout,"
                               " as JSON with --json)")
    view = pop_view(kw)
    crosscheck_command(CrosscheckOptions(inputs=pop_input_options(kw), **kw), view)
