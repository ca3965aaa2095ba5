"""``ir-run inspect MODEL``: inputs, outputs, layers and constants, as text, JSON, Markdown or Graphviz."""

from __future__ import annotations

import click

from .common import EXIT_CODES_HELP, emit, json_option, quiet_option, settings
from .options import complete_model


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("model", type=click.Path(), shell_complete=complete_model)
@click.option("--weights", type=click.Path(), help="The .bin (default: MODEL with .bin).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "md", "dot"]), default="text", show_default=True,
              help="dot is Graphviz source: ir-run inspect m.xml --format dot | dot -Tsvg > m.svg")
@json_option
@quiet_option
def inspect(model: str, weights: str | None, fmt: str) -> None:
    """Describe MODEL: inputs, outputs, layers (attributes, defaults, port specs) and constants."""
    from ..report import analyse, inspect_data, render_dot, render_inspect

    analysis = analyse(model, weights)
    if analysis.graph is None:
        raise analysis.errors[0]
    if fmt == "json":
        settings().json = True
    data = inspect_data(analysis)
    emit("inspect", data, lambda d: render_dot(d) if fmt == "dot" else render_inspect(d, fmt))
