"""Serve a model's graph and overlays with Google's Model Explorer (``pip install 'ir-run[view]'``), or write
them as JSON files Model Explorer loads later.

The graph JSON and node data are handed to Model Explorer's server as built (``ModelExplorerConfig``'s
``graphs://`` model source, as its ``visualize_pytorch`` does), so a model is read once, its errors are ir-run's
own (with their exit codes) and the node ids of the overlays are those of the graph. The address opened selects
the selected layer (the first divergence) when there is one, its group expanded.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import socket
import threading
import time
import urllib.request
import webbrowser
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..errors import InputError, UnsupportedError
from ..record import Record
from .graph_json import MAIN_GRAPH, group_node_id
from .overlays import Overlay

EXTRA_HINT = "pip install 'ir-run[view]'"
HOST = "localhost"


class View(Record):
    """What to show: ``graphs`` (graph_json.model_graphs), ``overlays`` (overlays.Overlay: their legends go into
    the graph's info panel), the ``selected`` node id (or None: the first divergence, selected when the page
    opens) and the model's ``name`` (the viewer's title)."""

    __slots__ = ("name", "graphs", "overlays", "selected")

    def __init__(self, name: str, graphs: dict[str, Any], overlays: list[Overlay], selected: str | None = None
                 ) -> None:
        self.name = name
        self.graphs = graphs
        self.overlays = overlays
        self.selected = selected
        info = graphs["graphs"][0]["groupNodeAttributes"].setdefault("", {})
        for overlay in overlays:
            info[f"legend: {overlay.name}"] = overlay.legend


def require_model_explorer() -> None:
    """Raise an UnsupportedError (exit code 5) naming the extra to install when Model Explorer is missing."""
    if importlib.util.find_spec("model_explorer") is None:
        raise UnsupportedError("ir-run view needs Google's Model Explorer (the view extra), which is not installed",
                               hint=EXTRA_HINT)


def export(view: View, directory: str | Path) -> list[Path]:
    """Write ``graph.json`` (a graph collection, which Model Explorer's JSON adapter reads) and one node data file per
    overlay (``overlay-<name>.json``) into ``directory``; return the paths."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    written = [folder / "graph.json"]
    collection = {"label": view.name, **view.graphs}  # a graph collection: what Model Explorer's JSON adapter reads
    written[0].write_text(json.dumps(collection), encoding="utf-8")
    for overlay in view.overlays:
        path = folder / f"overlay-{_slug(overlay.name)}.json"
        path.write_text(json.dumps(overlay.data), encoding="utf-8")
        written.append(path)
    return written


def page_address(view: View, port: int, config: Any) -> str:
    """The viewer's address: the model and its overlays, and the selected layer (if any) with its group
    expanded."""
    data: dict[str, Any] = {"models": config.model_sources, "nodeData": config.node_data_sources,
                            "nodeDataTargets": config.node_data_target_models}
    if view.selected is not None:
        namespace = next(node["namespace"] for node in view.graphs["graphs"][0]["nodes"]
                         if node["id"] == view.selected)
        data["uiState"] = {"paneStates": [{
            "deepestExpandedGroupNodeIds": [group_node_id(namespace)] if namespace else [],
            "selectedNodeId": view.selected, "selectedGraphId": MAIN_GRAPH, "selectedCollectionLabel": view.name,
            "widthFraction": 1, "selected": True}]}
    return f"http://{HOST}:{port}/?data={quote(json.dumps(data))}"


def serve(view: View, port: int, open_browser: bool = True, announce=print) -> None:
    """Start Model Explorer's server on ``port`` with the view and keep serving until interrupted; open the
    page in the default browser unless ``open_browser`` is False. ``announce`` gets the page's address (while
    the server runs, ``sys.stdout`` is the null device: ``announce`` writes to a stream it holds). An InputError
    when something listens on ``port`` already."""
    require_model_explorer()
    if _in_use(port):
        raise InputError(f"port {port} is in use: the view cannot be served there",
                         hint="choose another --port, or leave it out to take the first free one")
    from model_explorer import config as make_config
    from model_explorer import server

    config = make_config()
    config.graphs_list.append(json.dumps(view.graphs))
    config.model_sources.append({"url": f"graphs://{view.name}/0"})
    for overlay in view.overlays:
        config.add_node_data(name=overlay.name, node_data=json.dumps(overlay.data))
    address = page_address(view, port, config)

    def ready() -> None:
        while not _answers(port):
            time.sleep(0.1)
        announce(address)
        if open_browser:
            webbrowser.open_new_tab(address)

    threading.Thread(target=ready, daemon=True).start()
    # Model Explorer's own messages go to the null device: they would follow a --json report on stdout, and the
    # address they print lacks the overlays and the selection (announce gets the one to open)
    with open(os.devnull, "w", encoding="utf-8") as null, contextlib.redirect_stdout(null):
        server.start(host=HOST, port=port, config=config, no_open_in_browser=True)


def _in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        return probe.connect_ex((HOST, port)) == 0


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://{HOST}:{port}/check_health", timeout=1) as response:
            return response.read() == b"model_explorer_ok"
    except OSError:
        return False


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower() or "overlay"
