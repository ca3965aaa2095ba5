"""The ``ir-run`` click group. Each command lives in its own small ``cmd_*`` module, imported only
when the command is used (``run`` imports none of the others); each command in turn imports the module
that does the work only when it runs, so ``--help`` and shell completion stay light."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import Any

import click

from ..errors import IRError
from .common import (
    EXIT_CODES_HELP,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_RESOURCE,
    emit_error,
    json_option,
    log,
    quiet_option,
    settings,
)

COMMANDS = ("bench", "compare", "completion", "crosscheck", "extract", "gen-inputs", "generate", "inspect", "precision",
            "replay", "run", "validate", "view")


class IRRunGroup(click.Group):
    """``run`` is the default command, commands are loaded on first use, and every failure ends as one
    message and an exit code."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        if os.environ.get("_IR_RUN_COMPLETE"):  # completing: ir-run's bash and zsh scripts
            from .completion import register

            register()
        return super().main(*args, **kwargs)

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list:
        """Commands and options, and (for the default command ``run``) model files and folders."""
        items = super().shell_complete(ctx, incomplete)
        if not incomplete.startswith("-"):
            from click.shell_completion import CompletionItem

            from .options import model_paths

            items += [CompletionItem(path) for path in model_paths(incomplete)]
        return items

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            attribute = cmd_name.replace("-", "_")
            module = importlib.import_module(f"{__package__}.cmd_{attribute}")
            self.add_command(getattr(module, attribute), cmd_name)
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]):
        first = args[0] if args else ""
        known = self.list_commands(ctx)
        if first and first not in known and not first.startswith("-"):
            if _looks_like_model(first):
                return "run", self.get_command(ctx, "run"), args
            if not ctx.resilient_parsing:  # click would suggest only from the commands loaded so far
                model = _model_named(first)
                if model is not None:
                    raise click.UsageError(f"No such command '{first}'. Did you mean the model '{model}'?"
                                           f" (ir-run {model} ...)", ctx=ctx)
                raise click.exceptions.NoSuchCommand(first, possibilities=known, ctx=ctx)
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except IRError as error:
            emit_error(ctx.invoked_subcommand, error, error.exit_code, type(error).__name__)
            sys.exit(error.exit_code)
        except (click.exceptions.Exit, click.exceptions.Abort):
            raise
        except click.ClickException as error:
            if settings(ctx).json:  # one message: the JSON error and its line on stderr, with click's "Did you mean"
                emit_error(ctx.invoked_subcommand, _Usage(error.format_message()), error.exit_code, "UsageError")
                sys.exit(error.exit_code)
            raise
        except MemoryError as error:
            problem = RuntimeError(f"out of memory: {error}")
            emit_error(ctx.invoked_subcommand, problem, EXIT_RESOURCE, "ResourceLimitError")
            sys.exit(EXIT_RESOURCE)
        except KeyboardInterrupt:
            log("interrupted")
            sys.exit(EXIT_INTERRUPTED)
        except Exception as error:
            if os.environ.get("IR_RUN_DEBUG"):
                raise
            problem = RuntimeError(f"internal error: {type(error).__name__}: {error}"
                                   " (a bug in ir-run; IR_RUN_DEBUG=1 shows the traceback)")
            emit_error(ctx.invoked_subcommand, problem, EXIT_INTERNAL, "InternalError")
            sys.exit(EXIT_INTERNAL)


class _Usage(Exception):
    """A click usage error's whole message (``str`` of click's exception leaves out "Did you mean")."""


def _model_named(arg: str) -> str | None:
    """``arg.xml`` when that file exists (``ir-run mymodel`` for mymodel.xml), else None."""
    candidate = Path(arg + ".xml") if arg.strip(".") else None
    return str(candidate) if candidate is not None and candidate.is_file() else None


def _looks_like_model(arg: str) -> bool:
    return Path(arg).exists() or arg.lower().endswith(".xml") or "/" in arg or os.sep in arg


@click.group(cls=IRRunGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
             epilog=EXIT_CODES_HELP)
@click.version_option(package_name="ir-run", prog_name="ir-run")
@json_option
@quiet_option
def cli() -> None:
    """Load, check and run OpenVINO IR models with numpy kernels.

    `ir-run MODEL.xml --input ...` is `ir-run run MODEL.xml --input ...`. Results go to stdout,
    notes and progress to stderr; --json prints one JSON object instead of text.
    """


def main() -> None:
    """Entry point of the ``ir-run`` console script."""
    cli(prog_name="ir-run")
