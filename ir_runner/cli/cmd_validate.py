"""``ir-run validate MODEL``: the declared vs inferred check of every port, as text, JSON or Markdown."""

from __future__ import annotations

import click

from .common import EXIT_CODES_HELP, emit, json_option, quiet_option, settings
from .options import complete_model


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("model", type=click.Path(), shell_complete=complete_model)
@click.option("--weights", type=click.Path(), help="The .bin (default: MODEL with .bin).")
@click.option("--strict", is_flag=True, help="Spec-strict: out-of-range constant indices are errors, not warnings.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "md"]), default="text", show_default=True)
@json_option
@quiet_option
def validate(model: str, weights: str | None, strict: bool, fmt: str) -> None:
    """Check MODEL: declared vs inferred spec of every port, edges, Consts and .bin, constant indices."""
    from ..report import analyse, render_validation, validation_data

    analysis = analyse(model, weights, strict=strict)
    if fmt == "json":
        settings().json = True
    data = validation_data(analysis)
    emit("validate", {**data, "exit_code": analysis.exit_code}, lambda d: render_validation(d, fmt))
