"""``view``: a model's graph in Model Explorer with ``validate``, ``crosscheck``, ``bench --per-layer`` and
``precision`` laid over it; also what ``crosscheck --view``, ``bench --per-layer --view`` and ``precision --view``
call with their own results."""

from __future__ import annotations

import functools
import socket
import sys
from pathlib import Path
from typing import Any

import click

from ..record import Record
from .common import OutputError, emit, info, log, settings, write_stdout

OVERLAYS = ("validate", "crosscheck", "bench", "precision")
FIRST_PORT = 8080  # Model Explorer's own default; the first free port from here on is taken


class ViewOptions(Record):
    """How to show a view: the server's ``port`` (None: the first free one from 8080), whether to open a
    browser, and ``export``: a folder to write the JSON files to instead of serving them."""

    __slots__ = ("port", "open_browser", "export")

    def __init__(self, port: int | None = None, open_browser: bool = True, export: str | None = None) -> None:
        self.port = port
        self.open_browser = open_browser
        self.export = export


def view_options(function):
    """``--port``, ``--no-browser`` and ``--export DIR``."""
    decorators = [
        click.option("--port", type=click.IntRange(1, 65535), help="The viewer's port (default: the first free one"
                     f" from {FIRST_PORT})."),
        click.option("--no-browser", is_flag=True, help="Serve the view without opening a browser."),
        click.option("--export", type=click.Path(file_okay=False), metavar="DIR",
                     help="Write graph.json and one overlay-*.json per overlay into DIR instead of serving them"
                          " (Model Explorer loads them later; needs no viewer installed)."),
    ]
    for decorator in reversed(decorators):
        function = decorator(function)
    return function


def pop_view_options(kw: dict[str, Any]) -> ViewOptions:
    """The ``view_options`` values, taken out of a command's keyword arguments (``--port`` and ``--no-browser``
    with ``--export``, which serves nothing, are a usage error)."""
    options = ViewOptions(kw.pop("port"), not kw.pop("no_browser"), kw.pop("export"))
    if options.export is not None and (options.port is not None or not options.open_browser):
        raise click.UsageError("--port and --no-browser are for serving the view; --export DIR serves nothing")
    return options


def pop_view(kw: dict[str, Any]) -> ViewOptions | None:
    """``--view`` and the ``view_options`` of ``crosscheck`` and ``bench``, taken out of their keyword arguments:
    None without ``--view`` (the view options then are a usage error)."""
    show, options = kw.pop("show"), pop_view_options(kw)
    if not show and (options.port is not None or not options.open_browser or options.export is not None):
        raise click.UsageError("--port, --no-browser and --export go with --view")
    return options if show else None



def require_viewer(options: ViewOptions | None) -> None:
    """Before any work: exit 5 when ``options`` will serve a view and Model Explorer is not installed (an
    ``--export`` needs no viewer; None: no view asked for)."""
    if options is not None and options.export is None:
        from ..view.server import require_model_explorer

        require_model_explorer()

def open_view(model: str, weights: str | None, strict: bool, options: ViewOptions, *, validate: bool = False,
              crosscheck: dict[str, Any] | None = None, bench: list[dict[str, Any]] | None = None,
              precision: dict[str, Any] | None = None, command: str | None = None) -> None:
    """Build the view of ``model`` with the overlays asked for (``crosscheck``: its result; ``bench``: its
    per-layer rows; ``precision``: its report), then export it or serve it until interrupted. The page opens on
    the first divergence: crosscheck's, else precision's. ``command``: the view is that command's result (the
    files exported are its output, one JSON object with --json), not what follows another command's report."""
    from ..report import analyse, validation_data
    from ..view.graph_json import model_graphs
    from ..view.overlays import (
        Overlay,
        bench_overlays,
        crosscheck_overlays,
        node_ids,
        precision_overlays,
        validation_overlay,
    )
    from ..view.server import View, export, serve

    require_viewer(options)
    analysis = analyse(model, weights, strict=strict)
    if analysis.graph is None:
        raise analysis.errors[0]
    first = next((result["first_divergence"] for result in (crosscheck, precision)
                  if result is not None and result["first_divergence"] is not None), None)
    graphs = model_graphs(analysis)
    selected = node_ids(graphs).get(first["id"]) if first else None
    overlays: list[Overlay] = []
    if validate:
        overlays.append(validation_overlay(validation_data(analysis), graphs))
    if crosscheck is not None:
        overlays += crosscheck_overlays(crosscheck, graphs)
    if bench is not None:
        overlays += bench_overlays(bench, graphs)
    if precision is not None:
        overlays += precision_overlays(precision, graphs)
    view = View(Path(model).name, graphs, overlays, selected)
    say = log if settings().json else write_stdout  # after a --json report, stdout stays one JSON document
    if options.export is not None:
        try:
            written = [str(path) for path in export(view, options.export)]
        except OSError as exc:
            raise OutputError(f"cannot write the view into '{options.export}': {exc.strerror or exc}") from None
        if command is not None:
            emit(command, {"model": {"path": model, "weights": weights}, "export": written}, lambda r: "\n".join(
                r["export"]))
            return
        for path in written:
            say(path)
        return
    port = options.port if options.port is not None else free_port()
    info(f"serving the view on port {port}; Ctrl+C stops it")
    stdout = sys.stdout  # (while serving, sys.stdout is the null device: Model Explorer's own messages go there)
    show = log if settings().json else functools.partial(click.echo, file=stdout)
    serve(view, port, options.open_browser, announce=lambda address: show(f"view: {address}"))


def free_port() -> int:
    """The first port from 8080 nothing listens on (else one the system picks)."""
    for port in range(FIRST_PORT, FIRST_PORT + 20):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            if probe.connect_ex(("localhost", port)) != 0:
                return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]
