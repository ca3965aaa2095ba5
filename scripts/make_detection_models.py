"""Convert torchvision's detection models (seeded random weights) to OpenVINO IR in a cache outside the repository.

    pip install torch torchvision openvino && python scripts/make_detection_models.py [--out DIR] [NAME ...]

Each model is built with ``weights=None, weights_backbone=None``, given seeded random weights (``randomize``),
put in eval mode, wrapped so that it takes one batched image ``(1, 3, H, W)`` and returns the first image's
``boxes``, ``scores`` and ``labels`` (and ``masks`` for Mask R-CNN), and converted with
``openvino.convert_model(model, example_input=...)``.
The IR is written to ``DIR/<name>.{xml,bin}`` (default ``~/.cache/ir-run-detection``), never to the repository:
the tests build the small models they need at test time. torch, torchvision and openvino are this script's
optional dependencies, not the library's nor the tests'.

NAME is one of ``ssdlite``, ``fasterrcnn``, ``retinanet``, ``maskrcnn`` (default: all of them).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import openvino as ov
import torch
from torchvision.models import detection

# name -> (builder, image side); the small variants where torchvision has them
MODELS = {
    "ssdlite": (detection.ssdlite320_mobilenet_v3_large, 320),
    "fasterrcnn": (detection.fasterrcnn_mobilenet_v3_large_320_fpn, 320),
    "retinanet": (detection.retinanet_resnet50_fpn, 320),
    "maskrcnn": (detection.maskrcnn_resnet50_fpn, 320),
}


class FirstImage(torch.nn.Module):
    """A torchvision detector on a batched tensor ``(1, 3, H, W)``; returns the first image's detections."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, images: torch.Tensor) -> tuple[torch.Tensor, ...]:
        found = self.model(list(images))[0]
        return tuple(found[key] for key in ("boxes", "scores", "labels", "masks") if key in found)


def randomize(model: torch.nn.Module) -> None:
    """Seeded weights that give distinct scores: torchvision's own initialisation (no pretrained weights) makes
    every SSDlite class score exactly 1/91 and leaves Faster R-CNN with no score above its 0.05 threshold, so
    ties would decide everything. Convolutions and linear layers get N(0, 1/fan_in), biases U(-0.1, 0.1),
    BatchNorm scales U(0.9, 1.1) and shifts U(-0.1, 0.1); a two-stage detector's class logits are scaled by 10."""
    torch.manual_seed(0)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, (torch.nn.Conv2d, torch.nn.Linear)):
                module.weight.normal_(0.0, math.sqrt(1.0 / module.weight[0].numel()))
                if module.bias is not None:
                    module.bias.uniform_(-0.1, 0.1)
            elif isinstance(module, torch.nn.BatchNorm2d):
                module.weight.uniform_(0.9, 1.1)
                module.bias.uniform_(-0.1, 0.1)
        heads = getattr(model, "roi_heads", None)
        if heads is not None:
            heads.box_predictor.cls_score.weight.mul_(10.0)


def build(name: str) -> tuple[torch.nn.Module, int]:
    """The seeded, eval-mode wrapped detector ``name`` and its image side."""
    builder, side = MODELS[name]
    torch.manual_seed(0)
    kwargs = {"min_size": side, "max_size": side} if name in ("retinanet", "maskrcnn") else {}
    model = builder(weights=None, weights_backbone=None, **kwargs).eval()
    randomize(model)
    return FirstImage(model).eval(), side


def save_ir(name: str, module: torch.nn.Module, image: torch.Tensor, path: Path) -> ov.Model:
    """Convert ``module`` for the batched ``image`` (its shape fixed in the IR) and save it as ``path``."""
    start = time.perf_counter()
    with torch.no_grad():
        model = ov.convert_model(module, example_input=image)
    model.reshape({model.inputs[0]: list(image.shape)})
    path.parent.mkdir(parents=True, exist_ok=True)
    ov.save_model(model, str(path), compress_to_fp16=False)
    size = path.with_suffix(".bin").stat().st_size
    print(f"{name}: {path} ({size / 1e6:.1f} MB, converted in {time.perf_counter() - start:.1f} s)")
    return model


def convert(name: str, out: Path) -> Path:
    """Convert ``name`` and save its IR as ``out/<name>.xml``; returns that path."""
    module, side = build(name)
    example = torch.rand(1, 3, side, side, generator=torch.Generator().manual_seed(1))
    path = out / f"{name}.xml"
    save_ir(name, module, example, path)
    return path


def main(doc: str, models: dict, convert, default_out: Path) -> None:
    """Convert the NAMEs given (default: every one of ``models``) into ``--out``; shared with make_cnn_models."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"one of {', '.join(models)} (default: all)")
    parser.add_argument("--out", type=Path, default=default_out)
    args = parser.parse_args()
    unknown = sorted(set(args.names) - set(models))
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; choose from {', '.join(models)}")
    for name in args.names or models:
        convert(name, args.out)


if __name__ == "__main__":
    main(__doc__, MODELS, convert, Path.home() / ".cache" / "ir-run-detection")
