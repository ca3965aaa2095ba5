"""Convert the CNNs people deploy (torchvision, timm, ultralytics; seeded random weights) to OpenVINO IR in a
cache outside the repository, for ``scripts/bench_real_models.py --cnn``.

    pip install torch==2.14.1 torchvision==0.29.1 openvino && python -m scripts.make_cnn_models [--out DIR] [NAME ...]
    pip install timm ultralytics torch==2.14.1 torchvision==0.29.1     # for mobilevit_s and yolov8n / yolo11n

Each network is built from its library's own configuration, never a hub download: torchvision's builders with
``weights=None``, ``timm.create_model(name, pretrained=False)``, ``ultralytics.YOLO("NAME.yaml")``. It gets
seeded random weights (``make_detection_models.randomize``: N(0, 1/fan_in) weights, BatchNorm near identity;
YOLO's DFL keeps its fixed 0..15 projection), is put in eval mode and converted for one ``(1, 3, S, S)``
image: with ``openvino.convert_model``, and a YOLO as deployed, by ultralytics' own
``model.export(format="openvino")`` (BatchNorm fused into the convolutions, the head's decoded ``(1, 84, 8400)``
output; run offline, ``YOLO_OFFLINE=1``, in a temporary folder). Written to ``DIR/<name>/model.xml`` (+ ``.bin``)
with ``DIR/<name>/inputs.npz`` (one seeded image under the model's input name: N(0, 1) for the torchvision
networks, which normalise by ImageNet's mean and deviation, U[0, 1) for timm's MobileViT and YOLO, which take
the pixels scaled to [0, 1]); default DIR ``~/.cache/ir-run-cnn``. torch, torchvision, timm, ultralytics and
openvino are this script's optional dependencies, not the library's nor the tests'; timm and ultralytics are
imported only for their networks.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import openvino as ov
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


def segmenter(builder):
    """A torchvision segmentation ``builder`` without pretrained backbone or auxiliary head, returning ``out``."""
    return lambda: MainOutput(builder(weights=None, weights_backbone=None, aux_loss=False))


def timm_model(name: str):
    """timm's ``name`` built from its configuration (``pretrained=False``)."""
    def build() -> torch.nn.Module:
        import timm

        return timm.create_model(name, pretrained=False)
    return build


# name -> (builder of the unseeded torch module, image side, input pixels: "normal" N(0, 1) or "unit" U[0, 1))
MODELS = {
    "efficientnet_b0": (lambda: classify.efficientnet_b0(weights=None), 224, "normal"),
    "mobilenet_v3_small": (lambda: classify.mobilenet_v3_small(weights=None), 224, "normal"),
    "mobilenet_v3_large": (lambda: classify.mobilenet_v3_large(weights=None), 224, "normal"),
    "convnext_tiny": (lambda: classify.convnext_tiny(weights=None), 224, "normal"),
    "regnet_y_400mf": (lambda: classify.regnet_y_400mf(weights=None), 224, "normal"),
    "lraspp_mobilenet_v3": (segmenter(segmentation.lraspp_mobilenet_v3_large), 256, "normal"),
    "deeplabv3_mobilenet_v3": (segmenter(segmentation.deeplabv3_mobilenet_v3_large), 256, "normal"),
    "mobilevit_s": (timm_model("mobilevit_s"), 256, "unit"),
    "yolov8n": (None, 640, "unit"),
    "yolo11n": (None, 640, "unit"),
}


def export_yolo(name: str, side: int, xml: Path) -> None:
    """Build ultralytics' ``name.yaml`` with seeded weights and export it as ``model.export(format="openvino")``
    does for deployment (fused, f32, static ``side`` x ``side``) into ``xml`` (+ ``.bin``), offline."""
    os.environ["YOLO_OFFLINE"] = "1"  # before ultralytics is imported: no update checks, no downloads
    from ultralytics import YOLO
    from ultralytics.nn.modules import DFL

    torch.manual_seed(0)
    yolo = YOLO(f"{name}.yaml")
    randomize(yolo.model)
    with torch.no_grad():  # the distribution-focal-loss projection is a fixed 0..c1-1, not a learned weight
        for module in yolo.model.modules():
            if isinstance(module, DFL):
                module.conv.weight.copy_(torch.arange(module.c1, dtype=torch.float32).view(1, -1, 1, 1))
    with tempfile.TemporaryDirectory(prefix="ir-run-yolo-") as scratch:
        yolo.model.pt_path = str(Path(scratch) / f"{name}.pt")  # the export goes next to this (never written)
        folder = Path(yolo.export(format="openvino", imgsz=side, quantize=None, dynamic=False, device="cpu"))
        xml.parent.mkdir(parents=True, exist_ok=True)
        for suffix in (".xml", ".bin"):
            shutil.move(folder / f"{name}{suffix}", xml.with_suffix(suffix))


def convert(name: str, out: Path) -> Path:
    """Convert ``name`` into ``out/<name>/model.xml`` with its ``inputs.npz``; returns the xml's path."""
    builder, side, pixels = MODELS[name]
    rng = np.random.default_rng(1)
    shape = (1, 3, side, side)
    image = (rng.standard_normal(shape) if pixels == "normal" else rng.random(shape)).astype(np.float32)
    folder = out / name
    if builder is None:
        export_yolo(name, side, folder / "model.xml")
        model = ov.Core().read_model(folder / "model.xml")
    else:
        torch.manual_seed(0)
        module = builder().eval()
        randomize(module)
        model = save_ir(name, module, torch.from_numpy(image), folder / "model.xml")
    np.savez(folder / "inputs.npz", **{model.inputs[0].get_any_name(): image})
    return folder / "model.xml"


if __name__ == "__main__":
    main(__doc__, MODELS, convert, Path.home() / ".cache" / "ir-run-cnn")
