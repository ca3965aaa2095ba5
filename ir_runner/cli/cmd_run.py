"""``ir-run run MODEL`` (also ``ir-run MODEL``): run once and show, save or compare the outputs."""

from __future__ import annotations

import os
from typing import Any

import click

from .common import EXIT_CODES_HELP, json_option, quiet_option
from .options import input_options, model_options, pop_input_options, pop_tolerances, tolerance_options


@click.command(epilog=EXIT_CODES_HELP)
@model_options
@input_options(fill="error")
@click.option("-o", "--output", "--save-outputs", "output", type=click.Path(),
              help="Write the outputs (.npz; .json or .npy by suffix; a chunked run: .zarr), atomically.")
@click.option("--save-inputs", type=click.Path(dir_okay=False), help="Write the inputs used (generated ones too).")
@click.option("--save-run", type=click.Path(dir_okay=False),
              help="Record the run (hashes, seed, options) as JSON for `ir-run replay`.")
@click.option("--ref", type=click.Path(dir_okay=False),
              help="Compare the outputs with these (.npz/.npy/.json), or with OpenVINO's CPU plugin (`--ref openvino`;"
                   " f32, openvino-tokenizers loaded for tokenizer IRs; a file of that name: ./openvino).")
@tolerance_options
@click.option("--trace", is_flag=True, help="One line per computed layer: output spec, min/max/mean, NaN count.")
@click.option("--dump-intermediate", type=click.Path(file_okay=False), metavar="DIR",
              help="Save every computed layer's output as DIR/NNNN_layer.npy (index in DIR/index.json).")
@click.option("--batch-axis", type=int, default=None, metavar="AXIS",
              help="Chunked run (Dask): the axis of the rows, cut into blocks (default 0). See docs/scale.md.")
@click.option("--chunk", type=click.IntRange(min=1), default=None, metavar="ROWS",
              help="Chunked run: rows per block (default: about 64 MiB of inputs).")
@click.option("--scheduler", default=None, metavar="threads|processes|sync|ADDRESS",
              help="Chunked run: Dask's local threads (default) or processes, or a dask.distributed scheduler"
                   " such as tcp://host:8786.")
@json_option
@quiet_option
@click.pass_context
def run(ctx: click.Context, **kw: Any) -> None:
    """Run MODEL once and show each output (name, type, shape, stats, values).

    With a .zarr input or output, or --batch-axis/--chunk/--scheduler, run it block by block on Dask over
    data larger than memory and write the outputs as Zarr (needs `pip install 'ir-run[dask]'`).
    """
    from .scale import wants_scale

    if wants_scale(kw["inputs"], kw["output"], kw["batch_axis"], kw["chunk"], kw["scheduler"]):
        from .scale import scale_command

        scale_command(kw)
        return
    del kw["batch_axis"], kw["chunk"], kw["scheduler"]
    if kw["output"] and os.path.isdir(kw["output"]):
        raise click.BadParameter(f"File {kw['output']!r} is a directory.", param_hint="'-o' / '--output'")
    from .run import RunOptions, run_command

    inputs, tolerances = pop_input_options(kw), pop_tolerances(kw)
    run_command(RunOptions(inputs=inputs, tolerances=tolerances, replay=ctx.meta.get("ir_run.replay"), **kw))
