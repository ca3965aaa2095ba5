"""``ir-run gen-inputs MODEL -o FILE``: write inputs that fit the model."""

from __future__ import annotations

from typing import Any

import click

from .common import EXIT_CODES_HELP, json_option, quiet_option
from .options import input_options, model_options, pop_input_options


@click.command(name="gen-inputs", epilog=EXIT_CODES_HELP)
@model_options
@input_options(fill="random")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Where to write the inputs: .npz (default), .json or .npy.")
@json_option
@quiet_option
def gen_inputs(**kw: Any) -> None:
    """Write inputs for MODEL that fit the layers they feed (Gather indices in range, Select cond 0/1)."""
    from .run import RunOptions, gen_inputs_command

    gen_inputs_command(RunOptions(inputs=pop_input_options(kw), **kw))
