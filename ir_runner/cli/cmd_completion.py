"""``ir-run completion SHELL``: print the shell completion script."""

from __future__ import annotations

import click


@click.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the shell completion script, e.g. `eval "$(ir-run completion bash)"` in ~/.bashrc.

    It completes commands, options, files, and after --input the model's input names.
    """
    from click.shell_completion import get_completion_class

    from .completion import register

    register()
    group = click.get_current_context().find_root().command  # the ir-run group (importing it would be a cycle)
    completer = get_completion_class(shell)(group, {}, "ir-run", "_IR_RUN_COMPLETE")
    click.echo(completer.source())
