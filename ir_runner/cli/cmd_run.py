"""``ir-run run MODEL`` (also ``ir-run MODEL``): run once and show, save or compare the outputs."""

from __future__ import annotations

from typing import Any

import click

from .common import EXIT_CODES_HELP, json_option, quiet_option
from .options import input_options, model_options, pop_input_options, pop_tolerances, tolerance_options


@click.command(epilog=EXIT_CODES_HELP)
@model_options
@input_options(fill="error")
@click.option("-o", "--output", "--save-outputs", "output", type=click.Path(dir_okay=False),
              help="Write the outputs (.npz; .json or .npy by suffix), atomically.")
@click.option("--save-inputs", type=click.Path(dir_okay=False), help="Write the inputs used (generated ones too).")
@click.option("--save-run", type=click.Path(dir_okay=False),
              help="Record the run (hashes, seed, options) as JSON for `ir-run replay`.")
@click.option("--ref", type=click.Path(dir_okay=False), help="Compare the outputs with these (.npz/.npy/.json).")
@tolerance_options
@click.option("--trace", is_flag=True, help="One line per computed layer: output spec, min/max/mean, NaN count.")
@click.option("--dump-intermediate", type=click.Path(file_okay=False), metavar="DIR",
              help="Save every computed layer's output as DIR/NNNN_layer.npy (index in DIR/index.json).")
@json_option
@quiet_option
@click.pass_context
def run(ctx: click.Context, **kw: Any) -> None:
    """Run MODEL once and show each output (name, type, shape, stats, values)."""
    from .run import RunOptions, run_command

    inputs, tolerances = pop_input_options(kw), pop_tolerances(kw)
    run_command(RunOptions(inputs=inputs, tolerances=tolerances, replay=ctx.meta.get("ir_run.replay"), **kw))
