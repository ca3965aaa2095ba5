"""``ir-run compare ACTUAL EXPECTED``: compare array files with tolerances, no model needed."""

from __future__ import annotations

from typing import Any

import click

from .common import EXIT_CODES_HELP, json_option, quiet_option
from .options import pop_tolerances, tolerance_options


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("actual", type=click.Path(dir_okay=False))
@click.argument("expected", type=click.Path(dir_okay=False))
@tolerance_options
@json_option
@quiet_option
def compare(actual: str, expected: str, **kw: Any) -> None:
    """Compare ACTUAL with EXPECTED (.npz/.npy/.json, or file.npz:key); no model needed."""
    from .compare import compare_command

    compare_command(actual, expected, pop_tolerances(kw))
