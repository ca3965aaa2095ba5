"""What every command shares: settings, exit codes, logging to stderr, and emitting the result.

Nothing here imports numpy, so ``ir-run --help`` stays cheap once the package itself imports lazily.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import click

from ..errors import IRError, error_entry

SCHEMA = "ir-run/1"

EXIT_OK = 0
EXIT_COMPARISON = 1
EXIT_RESOURCE = 6
EXIT_OUTPUT = 74
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130

EXIT_CODES_HELP = (
    "Exit codes: 0 ok; 1 comparison failed (--ref, compare, replay, crosscheck, precision); 2 usage error;"
    " 3 invalid model;"
    " 4 bad input; 5 unsupported operation (crosscheck: openvino missing, or it cannot read or compile the"
    " model); 6 resource limit;"
    " 7 kernel failure (a bug, reported with the layer);"
    " 70 other internal error; 74 cannot write output;"
    " 130 interrupted."
)


class OutputError(IRError):
    """A result cannot be written (missing folder, no space, permissions, a closed or full stdout)."""

    exit_code = EXIT_OUTPUT


class Settings:
    """Global switches, kept in ``ctx.obj``."""

    def __init__(self) -> None:
        self.json = False
        self.quiet = False


def settings(ctx: click.Context | None = None) -> Settings:
    """The settings of the current invocation (created on first use, e.g. when a command runs alone)."""
    ctx = ctx or click.get_current_context()
    root = ctx.find_root()
    if not isinstance(root.obj, Settings):
        root.obj = Settings()
    return root.obj


def set_json(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        settings(ctx).json = True


def set_quiet(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        settings(ctx).quiet = True


json_option = click.option(
    "--json", "json_flag", is_flag=True, expose_value=False, callback=set_json,
    help="Print one JSON object (schema ir-run/1) on stdout instead of text.",
)
quiet_option = click.option(
    "-q", "--quiet", is_flag=True, expose_value=False, callback=set_quiet,
    help="Leave out the binding table and notes.",
)


def flag(option: str, name: str, value: str) -> str:
    """``--option 'NAME=VALUE'`` quoted for POSIX shells, so it can be pasted: zsh reads an unquoted
    ``x=[2,4]`` as a glob and stops with "no matches found"."""
    import shlex

    return f"{option} {shlex.quote(f'{name}={value}')}"


def log(message: str) -> None:
    """A note or warning for people: always on stderr, so stdout stays parseable."""
    click.echo(message, err=True)


def info(message: str) -> None:
    """A note that ``--quiet`` hides."""
    if not settings().quiet:
        log(message)


def emit(command: str, result: dict[str, Any], render: Callable[[dict[str, Any]], str]) -> None:
    """Print ``result`` as JSON (``--json``) or as the text ``render`` makes, then exit with its code."""
    code = int(result.get("exit_code", EXIT_OK))
    if settings().json:
        from .formats import to_json

        write_stdout(to_json({"schema": SCHEMA, "tool": "ir-run", "version": _version(), "command": command,
                              "ok": code == EXIT_OK, "exit_code": code, **result}))
    else:
        text = render(result)
        if text:
            write_stdout(text)
    if code:
        sys.exit(code)


def emit_error(command: str | None, error: BaseException, code: int, kind: str) -> None:
    """Report a failure: one paragraph on stderr, and with ``--json`` an error object on stdout."""
    if settings().json:
        import json  # (not formats.to_json: its numpy would cost a usage error ~50 ms; this holds no numpy value)

        try:
            write_stdout(json.dumps({"schema": SCHEMA, "tool": "ir-run", "version": _version(), "command": command,
                                     "ok": False, "exit_code": code, "error": error_entry(error, kind, detail=True)},
                                    indent=2, allow_nan=False, ensure_ascii=False))
        except OutputError:
            pass  # stdout is the problem: the line on stderr says what happened
    log(f"error: {error}")


def write_stdout(text: str) -> None:
    """``text`` and a newline on stdout; a stdout that cannot take it (a full disk, a closed pipe) is an
    OutputError, and stdout is then pointed at the null device so that Python's flush at exit cannot fail again."""
    try:
        click.echo(text)
    except OSError as exc:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
        raise OutputError(f"cannot write the result to stdout: {exc.strerror or exc}") from None


def _version() -> str:
    from .. import __version__

    return __version__
