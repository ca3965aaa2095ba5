"""Model Explorer's adapter extension for OpenVINO IR ``.xml`` files, for Model Explorer's own command line:
``model-explorer model.xml --extensions=ir_runner.view`` (Model Explorer imports ``<extension>.main``).
``ir-run view`` hands its graphs to the server directly and does not need it."""

from __future__ import annotations

from typing import Any

import dacite
from model_explorer import Adapter, AdapterMetadata, graph_builder

from ..report import analyse
from .graph_json import model_graphs


class IRAdapter(Adapter):
    """Reads the IR (its weights: the .bin next to it) and returns graph_json.model_graphs as Model Explorer's
    graph objects. A model ir-run cannot read raises its IRError, which Model Explorer shows."""

    metadata = AdapterMetadata(id="ir_run_openvino_ir", name="OpenVINO IR adapter (ir-run)",
                               description="OpenVINO IR model.xml + model.bin, read by ir-run",
                               source_repo="https://pypi.org/project/ir-run/", fileExts=["xml"])

    def convert(self, model_path: str, settings: dict[str, Any]) -> dict[str, Any]:
        analysis = analyse(model_path)
        if analysis.graph is None:
            raise analysis.errors[0]
        graphs = model_graphs(analysis)["graphs"]
        return {"graphs": [dacite.from_dict(graph_builder.Graph, graph) for graph in graphs]}
