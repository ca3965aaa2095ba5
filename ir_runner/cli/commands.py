"""The click group and its commands. Each command parses its options and hands over to a module that is
imported only when the command runs, so ``--help`` and shell completion stay light."""

from __future__ import annotations

import glob
import os
import sys
from pathlib import Path
from typing import Any

import click
from click.shell_completion import CompletionItem

from ..errors import IRError
from .common import (
    EXIT_CODES_HELP,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_RESOURCE,
    emit,
    emit_error,
    json_option,
    log,
    quiet_option,
    settings,
)

KEYWORDS = ("random", "zeros", "ones")
_UNITS = {"": 1, "b": 1, "k": 2**10, "kb": 10**3, "kib": 2**10, "m": 2**20, "mb": 10**6, "mib": 2**20,
          "g": 2**30, "gb": 10**9, "gib": 2**30, "t": 2**40, "tb": 10**12, "tib": 2**40}


class IRRunGroup(click.Group):
    """``run`` is the default command, and every failure ends as one message and an exit code."""

    def resolve_command(self, ctx: click.Context, args: list[str]):
        first = args[0] if args else ""
        if first and first not in self.commands and not first.startswith("-") and _looks_like_model(first):
            return "run", self.commands["run"], args
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
            if settings(ctx).json:
                emit_error(ctx.invoked_subcommand, error, error.exit_code, "UsageError")
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


def _looks_like_model(arg: str) -> bool:
    return Path(arg).exists() or arg.lower().endswith(".xml") or "/" in arg or os.sep in arg


# -- shell completion -----------------------------------------------------------------------------


def _input_names(ctx: click.Context) -> list[str]:
    """The model's input names (tensor and layer names), read from the XML without inference."""
    model = ctx.params.get("model")  # unset while an option before the cursor still lacks its value
    model = model or next((a for a in ctx.args if a.lower().endswith(".xml") and os.path.isfile(a)), None)
    if not model:
        return []
    try:
        from ..ir.reader import read_ir

        net = read_ir(model)
    except (IRError, OSError, ValueError):
        return []
    names: list[str] = []
    for layer in net.layers:
        if layer.type.lower() == "parameter":
            port_names = layer.outputs[0].names if layer.outputs else ()
            for name in (*port_names, layer.name):
                if name not in names:
                    names.append(name)
    return names


def _files(prefix: str) -> list[str]:
    return sorted(p + ("/" if os.path.isdir(p) else "") for p in glob.glob(glob.escape(prefix) + "*"))[:50]


def complete_input(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """``--input``: ``NAME=`` for each model input, then a keyword or a file after the ``=``."""
    names = _input_names(ctx)
    for name in sorted(names, key=len, reverse=True):
        if incomplete.startswith(name + "="):
            rest = incomplete[len(name) + 1:]
            choices = [k for k in KEYWORDS if k.startswith(rest)] + _files(rest)
            return [CompletionItem(f"{name}={choice}") for choice in choices]
    items = [CompletionItem(f"{n}=", help="model input") for n in names if n.startswith(incomplete)]
    items += [CompletionItem(k) for k in KEYWORDS if k.startswith(incomplete)]
    return items + [CompletionItem(f) for f in _files(incomplete)]


def complete_name(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """``--value`` / ``--shape`` / ``--data-shape`` / ``--range``: ``NAME=`` for each model input."""
    return [CompletionItem(f"{n}=", help="model input") for n in _input_names(ctx) if n.startswith(incomplete)]


# -- option groups --------------------------------------------------------------------------------


def _memory(_ctx, _param, value: str | None) -> int | None:
    if value is None:
        return None
    text = value.strip().lower().replace(" ", "")
    digits = text.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = text[len(digits):]
    try:
        amount = float(digits)
    except ValueError:
        amount = -1.0
    if unit not in _UNITS or amount < 0:
        raise click.BadParameter(f"{value!r} is not a size such as 1073741824, 512MiB or 16GiB")
    return int(amount * _UNITS[unit])


def _seconds(_ctx, _param, value: str | None) -> float | None:
    if value is None:
        return None
    text = value.strip().lower()
    factor = 60.0 if text.endswith("min") else 1e-3 if text.endswith("ms") else 1.0
    try:
        seconds = float(text.removesuffix("min").removesuffix("ms").removesuffix("s")) * factor
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise click.BadParameter(f"{value!r} is not a duration such as 10, 10s, 500ms or 2min")
    return seconds


def model_options(function):
    decorators = [
        click.argument("model", type=click.Path(dir_okay=False)),
        click.option("--weights", type=click.Path(dir_okay=False), help="The .bin (default: MODEL with .bin)."),
        click.option("--strict", is_flag=True,
                     help="Spec-strict: index values outside an operation's spec range are errors."),
        click.option("--memory-limit", callback=_memory, metavar="SIZE",
                     help="Refuse runs whose tensors need more (default 16GiB), e.g. 512MiB."),
    ]
    for decorator in reversed(decorators):
        function = decorator(function)
    return function


def input_options(fill: str):
    def decorate(function):
        decorators = [
            click.option("-i", "--input", "inputs", multiple=True, metavar="[NAME=]SOURCE",
                         shell_complete=complete_input,
                         help="SOURCE: file.npy, file.npz (keys by name), file.npz:key, file.json, raw file.bin,"
                              " or random / zeros / ones. Unnamed sources fill inputs in model order."),
            click.option("--value", "values", multiple=True, metavar="NAME=JSON", shell_complete=complete_name,
                         help="An input given inline, e.g. --value 'idx=[0,2,1]'."),
            click.option("--shape", "shapes", multiple=True, metavar="NAME=[d,...]", shell_complete=complete_name,
                         help="Set an input's partial shape (as OpenVINO: 1,?,3 / -1 / 2..8) and re-infer."),
            click.option("--data-shape", "data_shapes", multiple=True, metavar="NAME=[d,...]",
                         shell_complete=complete_name, help="Concrete shape of generated data for a dynamic input."),
            click.option("--range", "ranges", multiple=True, metavar="NAME=[LO,HI]", shell_complete=complete_name,
                         help="Value range of an input's random data (integers: inclusive)."),
            click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
                         help="Seed of random inputs."),
            click.option("--fill", type=click.Choice(["error", *KEYWORDS]), default=fill, show_default=True,
                         help="What inputs not given get."),
            click.option("--cast", type=click.Choice(["no", "same_kind", "unsafe"]), default="same_kind",
                         show_default=True,
                         help="Converting file data to an input's type: same_kind checks every value fits."),
        ]
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return decorate


def tolerance_options(function):
    decorators = [
        click.option("--atol", multiple=True, metavar="[NAME=]X", help="Absolute tolerance, for all or one output."),
        click.option("--rtol", multiple=True, metavar="[NAME=]X", help="Relative tolerance, for all or one output."),
        click.option("--exact", is_flag=True, help="Every element must be equal (atol = rtol = 0)."),
        click.option("--max-mismatches", type=click.IntRange(min=0), default=5, show_default=True,
                     help="How many mismatching indices to list per output."),
    ]
    for decorator in reversed(decorators):
        function = decorator(function)
    return function


def _input_options(kw: dict[str, Any]):
    from .inputs import InputOptions

    return InputOptions(kw.pop("inputs"), kw.pop("values"), kw.pop("shapes"), kw.pop("data_shapes"),
                        kw.pop("ranges"), kw.pop("seed"), kw.pop("fill"), kw.pop("cast"))


def _tolerances(kw: dict[str, Any]):
    from .compare import Tolerances, parse_tolerances

    return Tolerances(parse_tolerances(kw.pop("atol"), "--atol"), parse_tolerances(kw.pop("rtol"), "--rtol"),
                      kw.pop("exact"), kw.pop("max_mismatches"))


# -- commands -------------------------------------------------------------------------------------


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


@cli.command(epilog=EXIT_CODES_HELP)
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
    from .run import RunOptions, run_command, with_replay

    inputs, tolerances = _input_options(kw), _tolerances(kw)
    run_command(with_replay(RunOptions(inputs=inputs, tolerances=tolerances, **kw), ctx))


@cli.command(name="gen-inputs", epilog=EXIT_CODES_HELP)
@model_options
@input_options(fill="random")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Where to write the inputs: .npz (default), .json or .npy.")
@json_option
@quiet_option
def gen_inputs(**kw: Any) -> None:
    """Write inputs for MODEL that fit the layers they feed (Gather indices in range, Select cond 0/1)."""
    from .run import RunOptions, gen_inputs_command

    gen_inputs_command(RunOptions(inputs=_input_options(kw), **kw))


@cli.command(epilog=EXIT_CODES_HELP)
@model_options
@input_options(fill="random")
@click.option("--warmup", type=click.IntRange(min=0), default=5, show_default=True, help="Untimed runs first.")
@click.option("--iterations", "-n", type=click.IntRange(min=1), help="Timed runs (default 100).")
@click.option("--time", "seconds", callback=_seconds, metavar="DURATION",
              help="Run for this long instead (10, 10s, 500ms, 2min).")
@click.option("--percentiles", default="50,90,95,99", show_default=True, help="Latency percentiles to report.")
@click.option("--per-layer", is_flag=True, help="Also time each layer (ir-run runs each layer itself).")
@json_option
@quiet_option
def bench(**kw: Any) -> None:
    """Time MODEL: latency percentiles, mean/min/max and throughput; inputs are prepared untimed."""
    from .bench import BenchOptions, bench_command, parse_percentiles

    if kw["iterations"] is not None and kw["seconds"] is not None:
        raise click.UsageError("give --iterations or --time, not both")
    kw["percentiles"] = parse_percentiles(kw["percentiles"])
    bench_command(BenchOptions(inputs=_input_options(kw), **kw))


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("actual", type=click.Path(dir_okay=False))
@click.argument("expected", type=click.Path(dir_okay=False))
@tolerance_options
@json_option
def compare(actual: str, expected: str, **kw: Any) -> None:
    """Compare ACTUAL with EXPECTED (.npz/.npy/.json, or file.npz:key); no model needed."""
    from .compare import compare_command

    compare_command(actual, expected, _tolerances(kw))


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("--weights", type=click.Path(dir_okay=False), help="The .bin (default: MODEL with .bin).")
@click.option("--strict", is_flag=True, help="Spec-strict: out-of-range constant indices are errors, not warnings.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "md"]), default="text", show_default=True)
@json_option
def validate(model: str, weights: str | None, strict: bool, fmt: str) -> None:
    """Check MODEL: declared vs inferred spec of every port, edges, Consts and .bin, constant indices."""
    from ..report import analyse, render_validation, validation_data

    analysis = analyse(model, weights, strict=strict)
    if fmt == "json":
        settings().json = True
    data = validation_data(analysis)
    emit("validate", {**data, "exit_code": analysis.exit_code}, lambda d: render_validation(d, fmt))


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("--weights", type=click.Path(dir_okay=False), help="The .bin (default: MODEL with .bin).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "md", "dot"]), default="text", show_default=True,
              help="dot is Graphviz source: ir-run inspect m.xml --format dot | dot -Tsvg > m.svg")
@json_option
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


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("record", type=click.Path(dir_okay=False), metavar="RUN.json")
@json_option
@quiet_option
def replay(record: str) -> None:
    """Re-run a run saved with --save-run and check inputs and outputs are identical to the recording."""
    from .run import replay_command

    replay_command(record)


@cli.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the shell completion script, e.g. `eval "$(ir-run completion bash)"` in ~/.bashrc.

    It completes commands, options, files, and after --input the model's input names.
    """
    from click.shell_completion import get_completion_class

    completer = get_completion_class(shell)(cli, {}, "ir-run", "_IR_RUN_COMPLETE")
    click.echo(completer.source())


def main() -> None:
    """Entry point of the ``ir-run`` console script."""
    cli(prog_name="ir-run")
