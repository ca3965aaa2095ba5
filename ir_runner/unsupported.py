"""Layers whose operation ir-run does not implement yet: grouped by type once, instead of one message each.

``load`` refuses such a model with one UnsupportedError that counts them by type; ``validate`` checks the
rest of the model and says it is "not fully checked". Neither lists the supported operations (README does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import MESSAGE_ITEMS, UnsupportedError, clip_text
from .ops.registry import is_known_type, openvino_refusal, versions_of

if TYPE_CHECKING:
    from .infer import LayerInference

INSPECT_HINT = "`ir-run inspect MODEL.xml` shows every layer, the unsupported ones marked"


def not_implemented(info: LayerInference) -> bool:
    """Whether ir-run lacks the layer's operation (not when OpenVINO itself refuses its type and opset: an
    invalid model, see :func:`openvino_refusal`)."""
    return info.op is None and openvino_refusal(info.layer.type, info.layer.version) is None


def type_label(info: LayerInference) -> str:
    """``Type opsetN`` (each clipped: a hostile IR may have a type of megabytes)."""
    return f"{clip_text(info.layer.type)} {clip_text(info.layer.version)}"


def reason(info: LayerInference) -> str:
    layer = info.layer
    if is_known_type(layer.type):
        return (f"version '{clip_text(layer.version)}' of {layer.type} is not implemented (ir-run has"
                f" {versions_of(layer.type)})")
    return f"operation type '{clip_text(layer.type)}' is not implemented"


def by_type(unknown: list[LayerInference]) -> dict[str, list[LayerInference]]:
    """The layers grouped by type label, in order of first appearance."""
    groups: dict[str, list[LayerInference]] = {}
    for info in unknown:
        groups.setdefault(type_label(info), []).append(info)
    return groups


def summary(unknown: list[LayerInference]) -> str:
    """``3 layer(s) of 2 type(s): A opset1 x2 (first: layer ...: why), ...``."""
    groups = by_type(unknown)
    shown = [f"{label} x{len(infos)} (first: {infos[0].ref}: {reason(infos[0])})"
             for label, infos in list(groups.items())[:MESSAGE_ITEMS]]
    if len(groups) > MESSAGE_ITEMS:
        shown.append(f"and {len(groups) - MESSAGE_ITEMS} more type(s)")
    return f"{len(unknown)} layer(s) of {len(groups)} type(s): " + "; ".join(shown)


def unsupported_error(unknown: list[LayerInference], hint: str | None = None) -> UnsupportedError:
    """The one error ``load`` raises for a model with operations ir-run does not implement."""
    return UnsupportedError(f"{len(unknown)} layer(s) use operations that are not implemented in ir-run yet:"
                            f" {summary(unknown).split(': ', 1)[1]}",
                            hint=hint or INSPECT_HINT)
