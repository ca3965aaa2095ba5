"""The ``ir-run`` command: a thin shell over the library.

``ir-run MODEL.xml --input a.npy ...`` runs a model (``run`` is the default command);
``ir-run validate MODEL.xml`` and ``ir-run inspect MODEL.xml`` check and describe one.
An IRError is printed as one paragraph on stderr, without a traceback, and sets the exit code.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
import numpy as np

from . import InputError, IRError, load, validate

EXIT_USAGE = 2


class _DefaultRunGroup(click.Group):
    """A group whose default command is ``run``: ``ir-run model.xml ...`` means ``ir-run run model.xml ...``."""

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_DefaultRunGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ir-run")
def cli() -> None:
    """Load, check and run OpenVINO IR models with numpy kernels.

    Exit codes: 0 ok, 1 comparison failed, 2 usage error, 3 invalid model, 4 bad input,
    5 unsupported operation, 6 resource limit.
    """


def _fail(error: IRError) -> None:
    click.echo(f"error: {error}", err=True)
    sys.exit(error.exit_code)


def _read_array(path: str) -> dict[str, np.ndarray] | np.ndarray:
    try:
        data = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise InputError(f"input file '{path}' does not exist") from None
    except ValueError as exc:
        raise InputError(f"cannot read '{path}' without unpickling, which ir-run never does: {exc}") from None
    except OSError as exc:
        raise InputError(f"cannot read '{path}' as .npy/.npz: {exc}") from None
    if isinstance(data, np.lib.npyio.NpzFile):
        with data:
            return {key: data[key] for key in data.files}
    return data


def _bind_inputs(model, specs: tuple[str, ...]) -> dict[str, np.ndarray]:
    feeds: dict[str, np.ndarray] = {}
    positional: list[np.ndarray] = []
    names = {n for info in model.inputs for n in (info.name, *info.names, info.layer_name)}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if sep and name in names:
            feeds[name] = _read_array(path)
            continue
        value = _read_array(spec)
        if isinstance(value, dict):
            feeds.update(value)
        else:
            positional.append(value)
    unbound = [info for info in model.inputs if not any(n in feeds for n in (info.name, *info.names))]
    if len(positional) > len(unbound):
        raise InputError(
            f"{len(positional)} positional input file(s) given, but only {len(unbound)} input(s) are unbound"
        )
    for info, value in zip(unbound, positional):
        feeds[info.name] = value
    return feeds


@cli.command()
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("--input", "-i", "inputs", multiple=True, metavar="[NAME=]FILE",
              help="An input as .npy, or .npz whose keys are input names; positional files fill inputs in order.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the outputs to this .npz (atomically).")
@click.option("--weights", type=click.Path(dir_okay=False), help="The .bin (default: MODEL's stem + .bin).")
@click.option("--strict", is_flag=True, help="Index values outside the spec's range are errors.")
def run(model: str, inputs: tuple[str, ...], output: str | None, weights: str | None, strict: bool) -> None:
    """Run MODEL on the given inputs and print a summary of each output."""
    try:
        loaded = load(model, weights, strict=strict)
        results = loaded.run(_bind_inputs(loaded, inputs))
    except IRError as error:
        _fail(error)
    for name, value in results.items():
        click.echo(f"{name}: {value.dtype} {list(value.shape)}")
        click.echo(np.array2string(value, threshold=20, edgeitems=3))
    if output:
        _write_npz(Path(output), results)


def _write_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    with open(temporary, "wb") as handle:
        np.savez(handle, **arrays)
    temporary.replace(path)


@cli.command(name="validate")
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("--weights", type=click.Path(dir_okay=False))
def validate_command(model: str, weights: str | None) -> None:
    """Compare every port's declared dims and precision with inferred ones; exit 3 on any mismatch."""
    report = validate(model, weights)
    click.echo(str(report))
    if not report.ok:
        sys.exit(max(error.exit_code for error in report.errors))


@cli.command()
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("--weights", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def inspect(model: str, weights: str | None, fmt: str) -> None:
    """Show the inputs, outputs and layers of MODEL."""
    try:
        loaded = load(model, weights)
    except IRError as error:
        _fail(error)
    info = {
        "inputs": [{"name": i.name, "element_type": i.element_type.name, "shape": str(i.partial_shape)}
                   for i in loaded.inputs],
        "outputs": [{"name": o.name, "element_type": o.element_type.name, "shape": str(o.partial_shape)}
                    for o in loaded.outputs],
        "layers": [{"id": li.layer.id, "name": li.layer.name, "type": li.ref.type_version,
                    "attributes": li.layer.data, "outputs": [str(s) for s in li.outputs]}
                   for li in loaded.inference.layers.values()],
    }
    if fmt == "json":
        click.echo(json.dumps(info, indent=2))
        return
    for key in ("inputs", "outputs"):
        click.echo(f"{key}:")
        for item in info[key]:
            click.echo(f"  {item['name']}: {item['element_type']}{item['shape']}")
    click.echo("layers:")
    for layer in info["layers"]:
        click.echo(f"  {layer['id']:>4} {layer['type']:<12} {layer['name']}  -> {', '.join(layer['outputs'])}")


def main() -> None:
    """Entry point of the ``ir-run`` console script."""
    cli(prog_name="ir-run")
