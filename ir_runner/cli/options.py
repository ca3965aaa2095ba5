"""Options that several commands share, their parsers, and shell completion of model input names.

Nothing here imports numpy or lxml at module level: each ``cmd_*`` module builds its command from these.
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any

import click

from ..errors import IRError
from ..record import Record

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

    from .compare import Tolerances

KEYWORDS = ("random", "zeros", "ones")
_UNITS = {"": 1, "b": 1, "k": 2**10, "kb": 10**3, "kib": 2**10, "m": 2**20, "mb": 10**6, "mib": 2**20,
          "g": 2**30, "gb": 10**9, "gib": 2**30, "t": 2**40, "tb": 10**12, "tib": 2**40}


class InputOptions(Record):
    """The input-related options of ``run``, ``bench`` and ``gen-inputs``, as given."""

    __slots__ = ("inputs", "values", "shapes", "data_shapes", "ranges", "seed", "fill", "cast")

    def __init__(self, inputs: tuple[str, ...] = (), values: tuple[str, ...] = (), shapes: tuple[str, ...] = (),
                 data_shapes: tuple[str, ...] = (), ranges: tuple[str, ...] = (), seed: int = 0, fill: str = "error",
                 cast: str = "same_kind") -> None:
        self.inputs = inputs
        self.values = values
        self.shapes = shapes
        self.data_shapes = data_shapes
        self.ranges = ranges
        self.seed = seed
        self.fill = fill
        self.cast = cast


# -- shell completion -----------------------------------------------------------------------------


def _input_names(ctx: click.Context) -> list[str]:
    """The model's input names (tensor and layer names), read from the XML without inference."""
    model = ctx.params.get("model")  # unset while an option before the cursor still lacks its value
    model = model or next((a for a in ctx.args if a.lower().endswith(".xml") and os.path.isfile(a)), None)
    if not model:
        return []
    from ..model import input_names

    try:
        return input_names(model)
    except (IRError, OSError, ValueError):
        return []


def _files(prefix: str) -> list[str]:
    import glob

    return sorted(p + ("/" if os.path.isdir(p) else "") for p in glob.glob(glob.escape(prefix) + "*"))[:50]


def model_paths(prefix: str) -> list[str]:
    """What completes a model argument: the ``.xml`` files starting with ``prefix``, then the folders (with a
    ``/``), each sorted; no other file."""
    import glob

    paths = sorted(glob.glob(glob.escape(prefix) + "*"))
    xml = [p for p in paths if p.lower().endswith(".xml") and os.path.isfile(p)]
    return (xml + [p + "/" for p in paths if os.path.isdir(p)])[:50]


def complete_model(_ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """A MODEL argument: :func:`model_paths`."""
    from click.shell_completion import CompletionItem

    return [CompletionItem(path) for path in model_paths(incomplete)]


def _bound(ctx: click.Context, *params: str) -> set[str]:
    """The input names that the values of ``params`` given so far (``NAME=...``) bind."""
    return {value.partition("=")[0] for param in params for value in ctx.params.get(param) or () if "=" in value}


def complete_input(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """``--input``: ``NAME=`` for each model input not bound yet, then a keyword or a file after the ``=``."""
    from click.shell_completion import CompletionItem

    names = _input_names(ctx)
    for name in sorted(names, key=len, reverse=True):
        if incomplete.startswith(name + "="):
            rest = incomplete[len(name) + 1:]
            choices = [k for k in KEYWORDS if k.startswith(rest)] + _files(rest)
            return [CompletionItem(f"{name}={choice}") for choice in choices]
    bound = _bound(ctx, "inputs", "values")
    items = [CompletionItem(f"{n}=", help="model input") for n in names if n.startswith(incomplete) and n not in bound]
    items += [CompletionItem(k) for k in KEYWORDS if k.startswith(incomplete)]
    return items + [CompletionItem(f) for f in _files(incomplete)]


def complete_name(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """``--value`` / ``--shape`` / ``--data-shape`` / ``--range``: ``NAME=`` for each model input that this
    option (and, for ``--value``, ``--input``) has not named yet."""
    from click.shell_completion import CompletionItem

    bound = _bound(ctx, param.name, *(("inputs",) if param.name == "values" else ()))
    return [CompletionItem(f"{n}=", help="model input") for n in _input_names(ctx)
            if n.startswith(incomplete) and n not in bound]


# -- option groups --------------------------------------------------------------------------------


def _memory(_ctx, _param, value: str | None) -> int | None:
    if value is None:
        return None
    text = value.strip().lower().replace(" ", "")
    digits = text.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = text[len(digits):]
    try:
        size = float(digits) * _UNITS[unit]
    except (ValueError, KeyError):
        size = -1.0
    if not 0 <= size < math.inf:
        raise click.BadParameter(f"{value!r} is not a size such as 1073741824, 512MiB or 16GiB")
    return int(size)


def model_options(function):
    decorators = [
        click.argument("model", type=click.Path(), shell_complete=complete_model),  # a folder: exit 3
        click.option("--weights", type=click.Path(), help="The .bin (default: MODEL with .bin)."),
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
            click.option("--cast", type=click.Choice(["no", "safe", "same_kind", "unsafe"]), default="same_kind",
                         show_default=True,
                         help="Converting file data to an input's type, as the library's cast=: no; safe (the"
                              " types keep every value); same_kind (also when every value of the data fits);"
                              " unsafe (anything; floats truncated)."),
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


def pop_input_options(kw: dict[str, Any]) -> InputOptions:
    """The ``input_options`` values, taken out of a command's keyword arguments."""
    return InputOptions(kw.pop("inputs"), kw.pop("values"), kw.pop("shapes"), kw.pop("data_shapes"),
                        kw.pop("ranges"), kw.pop("seed"), kw.pop("fill"), kw.pop("cast"))


def pop_tolerances(kw: dict[str, Any]) -> Tolerances:
    """The ``tolerance_options`` values, taken out of a command's keyword arguments."""
    from .compare import Tolerances, parse_tolerances

    return Tolerances(parse_tolerances(kw.pop("atol"), "--atol"), parse_tolerances(kw.pop("rtol"), "--rtol"),
                      kw.pop("exact"), kw.pop("max_mismatches"))


def given_on_command_line(flags: dict[str, str]) -> list[str]:
    """The flags (parameter name -> flag) of the current command that were given, not left at their default."""
    from click.core import ParameterSource

    context = click.get_current_context()
    return [flag for name, flag in flags.items()
            if context.get_parameter_source(name) not in (None, ParameterSource.DEFAULT)]
