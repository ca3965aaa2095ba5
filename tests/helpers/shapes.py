"""Inferred shapes compared with OpenVINO's own, intervals included.

An IR port writes every non-static dim as -1, so :func:`check_shapes` also reads the IR back with
OpenVINO (``read_model`` infers it again) and compares each layer's output partial shapes, bounds
included (``1..10``, ``..1024``), with what ir-run inferred.
"""

from __future__ import annotations

from pathlib import Path

import openvino as ov

import ir_runner


def partial_shape(dims) -> ov.PartialShape:
    """An OpenVINO partial shape: None a dynamic rank, each dim an int (-1 dynamic) or an ``ov.Dimension``."""
    if dims is None:
        return ov.PartialShape.dynamic()
    return ov.PartialShape([d if isinstance(d, ov.Dimension) else ov.Dimension(d) for d in dims])


def check_shapes(xml: Path) -> ir_runner.ValidationReport:
    """Validate ``xml`` (no finding), require every port's inferred spec to equal the declared one (a bounded
    dim is declared -1), and every layer output's inferred partial shape to equal OpenVINO's."""
    report = ir_runner.validate(str(xml))
    assert report.ok, str(report)
    model = ov.Core().read_model(str(xml))
    theirs = {node.get_friendly_name(): node for node in model.get_ordered_ops()}
    differing = []
    for info in report.layers:
        for check in info.checks:
            spec = check.spec
            dims = spec.shape.port_dims
            inferred = (spec.element_type.precision, None if dims is None else tuple(-1 if d is None else d
                                                                                   for d in dims))
            declared = (check.port.precision, tuple(check.port.dims))
            if declared != inferred and not (dims is None and not check.port.dims):
                differing.append(f"{info.ref} {check.direction} {check.port.position}: declared {declared},"
                                 f" inferred {inferred}")
        node = theirs.get(info.layer.name)
        if node is None or node.get_type_name() == "Result":
            continue
        for i, spec in enumerate(info.outputs):
            want = str(node.get_output_partial_shape(i))
            got = str(spec.shape)
            if got != want:
                differing.append(f"{info.ref} output {i}: OpenVINO infers {want}, ir-run {got}")
    assert not differing, "\n".join(differing)
    return report
