"""``ir-run replay RUN.json``: re-run a run recorded with ``--save-run`` and check it is identical."""

from __future__ import annotations

import click

from .common import EXIT_CODES_HELP, json_option, quiet_option


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("record", type=click.Path(dir_okay=False), metavar="RUN.json")
@json_option
@quiet_option
def replay(record: str) -> None:
    """Re-run a run saved with --save-run and check inputs and outputs are identical to the recording."""
    from .replay import replay_command

    replay_command(record)
