"""``ir-run extract MODEL --from A,B --to C -o sub.xml``: a part of a model as a standalone IR."""

from __future__ import annotations

import click

from .common import EXIT_CODES_HELP, emit, json_option, quiet_option
from .options import complete_model


def _layer_names(_ctx, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """Refuse a value that names no layer (empty, or commas and spaces only): it would silently mean the
    option's default, the whole model's inputs or outputs."""
    from ..parts import split_layer_names

    for value in values:
        if not split_layer_names([value]):
            default = "inputs" if param.name == "from_" else "outputs"
            raise click.BadParameter(f"{value!r} names no layer: give layer names or ids, separated by commas"
                                     f" (or leave the option out for the model's {default})")
    return values


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("model", type=click.Path(), shell_complete=complete_model)
@click.option("--weights", type=click.Path(), help="The .bin (default: MODEL with .bin).")
@click.option("--from", "from_", multiple=True, metavar="LAYER[,LAYER...]", callback=_layer_names,
              help="The first layers of the part (names, or ids); default: the model's inputs.")
@click.option("--to", multiple=True, metavar="LAYER[,LAYER...]", callback=_layer_names,
              help="The last layers of the part; their outputs become its outputs. Default: the model's outputs.")
@click.option("-o", "--output", required=True, type=click.Path(),
              help="The .xml to write (the .bin is written next to it).")
@json_option
@quiet_option
def extract(model: str, weights: str | None, from_: tuple[str, ...], to: tuple[str, ...], output: str) -> None:
    """Write the part of MODEL from the --from layers to the --to layers as a standalone IR.

    The part holds every layer reached from a --from layer that reaches a --to layer. What it reads from
    outside becomes a Parameter (the tensor's element type and shape, named as the layer that produced it);
    constants it reads are copied with their bytes into its own .bin. Exit 0 when written, 4 when a layer
    is unknown or a --to layer is not reached from the --from layers, 74 when the files cannot be written.
    """
    from ..errors import IRError
    from ..parts import extract_summary
    from .common import OutputError

    try:
        summary = extract_summary(model, weights, from_, to, output)
    except IRError:  # (a missing model or weights file is one too: not an output that cannot be written)
        raise
    except OSError as error:
        raise OutputError(f"cannot write '{output}': {error.strerror or error}") from None
    emit("extract", summary, _render)


def _render(result: dict) -> str:
    inputs = ", ".join(f"{item['name']} {item['spec']}" for item in result["inputs"]) or "none"
    outputs = ", ".join(item["name"] for item in result["outputs"])
    return (f"wrote {result['xml']} and {result['bin']} ({result['bin_bytes']} bytes): {result['layers']} layers;"
            f" inputs {inputs}; outputs {outputs}")
