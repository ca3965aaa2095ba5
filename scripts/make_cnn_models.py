"""Convert the CNNs people deploy (torchvision, seeded random weights) to OpenVINO IR in a cache outside the
repository, for ``scripts/bench_real_models.py --cnn``.

    pip install torch==2.14.1 torchvision==0.29.1 openvino && python -m scripts.make_cnn_models [--out DIR] [NAME ...]

Each network is built from torchvision's own configuration with ``weights=None`` (never a hub download),
given seeded random weights (``make_detection_models.randomize``: N(0, 1/fan_in) weights, BatchNorm near
identity), put in eval mode and converted with ``openvino.convert_model`` for one ``(1, 3, S, S)`` image.
Written to ``DIR/<name>/model.xml`` (+ ``.bin``) with ``DIR/<name>/inputs.npz`` (one seeded N(0, 1) image under
the model's input name); default DIR ``~/.cache/ir-run-cnn``. torch, torchvision and openvino are this
script's optional dependencies, not the library's nor the tests'.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torchvision.models as classify
from torchvision.models import segmentation

from scripts.make_detection_models import main, randomize, save_ir


class MainOutput(torch.nn.Module):
    """A segmentation network returning only its ``out`` map (torchvision returns a dict)."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.model(images)["out"]


# name -> (builder, image side, wrapper)
MODELS = {
    "efficientnet_b0": (classify.efficientnet_b0, 224, None),
    "mobilenet_v3_small": (classify.mobilenet_v3_small, 224, None),
    "mobilenet_v3_large": (classify.mobilenet_v3_large, 224, None),
    "convnext_tiny": (classify.convnext_tiny, 224, None),
    "regnet_y_400mf": (classify.regnet_y_400mf, 224, None),
    "lraspp_mobilenet_v3": (segmentation.lraspp_mobilenet_v3_large, 256, MainOutput),
    "deeplabv3_mobilenet_v3": (segmentation.deeplabv3_mobilenet_v3_large, 256, MainOutput),
}


def convert(name: str, out: Path) -> Path:
    """Convert ``name`` into ``out/<name>/model.xml`` with its ``inputs.npz``; returns the xml's path."""
    builder, side, wrapper = MODELS[name]
    torch.manual_seed(0)
    extra = {"weights_backbone": None, "aux_loss": False} if wrapper is MainOutput else {}
    network = builder(weights=None, **extra).eval()
    randomize(network)
    module = (wrapper(network) if wrapper else network).eval()
    image = np.random.default_rng(1).standard_normal((1, 3, side, side)).astype(np.float32)
    folder = out / name
    model = save_ir(name, module, torch.from_numpy(image), folder / "model.xml")
    np.savez(folder / "inputs.npz", **{model.inputs[0].get_any_name(): image})
    return folder / "model.xml"


if __name__ == "__main__":
    main(__doc__, MODELS, convert, Path.home() / ".cache" / "ir-run-cnn")
