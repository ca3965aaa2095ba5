"""Reduce a crosscheck's first divergence to a small standalone IR that still diverges on the device.

The search first tries each layer of the diverging fused group, and each layer it reads that the device did not
show, alone (in execution order), fed the reference's values (ir-run's) of what it reads; then it grows the part
ending at the first divergence backwards one producer level at a time (constants always come along, the
model's inputs never: their values are fed), until the device's result of the part diverges from ir-run's, by
the same rules as the whole model's crosscheck (:func:`ir_runner.crosscheck` on the part). The first part that
diverges is written to the directory: ``model.xml`` + ``model.bin`` (:mod:`ir_runner.ir.writer`), ``inputs.npz``
(the values at the cut, keyed by the part's input names) and ``README.md`` with the command that shows the
divergence. A fault that shows only inside a larger context (a device fusing the layer with later ones) is not
reduced: the search ends at the model's inputs and says so.

The part never grows forwards: the first divergence is the output of the device's fused group (what the device
materialises), so the layers fused with it that it needs are before it and come along; only a fault that needs a
consumer the device did not fuse with it (a layer computed otherwise because of what reads it) is missed.

A stateful model (variables) reduces as :func:`ir_runner.extract` cuts one: a part that reads or writes a
variable keeps all its readers and its writer, and runs one step from the variables' initial values, as the
model's crosscheck did from a new state; the README says which variables it keeps. A variable that held a value
before the checked run (a state advanced by earlier runs) cannot be set by the part's command, so its readers are
cut instead: their values (the state's) are inputs of the part. A first divergence at such a reader (the device
reads back other values than it was given) is not reduced, and the reason says so.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from .errors import InputError, clip_text
from .model import Model, load
from .parts import cut_of, overwritten, sub_ir
from .record import Record

Slot = tuple[str, int]


class Reduction(Record):
    """The outcome of a reduction: ``directory`` with the files (None when no part diverges, ``reason`` then
    says why), the ``layers`` of the model in the part (names, constants included),
    the ``command`` that shows the divergence, the part's own crosscheck ``report``, and the ``probes`` run."""

    __slots__ = ("directory", "layers", "command", "report", "probes", "reason")

    def __init__(self, directory: Path | None, layers: list[str], command: str | None, report, probes: int,
                 reason: str | None = None) -> None:
        self.directory = directory
        self.layers = layers
        self.command = command
        self.report = report
        self.probes = probes
        self.reason = reason


FILES = ("model.xml", "model.bin", "inputs.npz", "README.md")  # what a reduction writes to its directory


def check_directory(directory: str | os.PathLike, sources: Iterable[str | os.PathLike | None]) -> None:
    """InputError when a file a reduction writes to ``directory`` would replace one of ``sources`` (the model's
    files, its inputs): a reduction written to the model's own folder must not overwrite the model."""
    folder = Path(directory)
    source = overwritten([folder / name for name in FILES],
                         [None if path is None else Path(path) for path in sources])
    if source is not None:
        raise InputError(f"--reduce -o '{clip_text(str(folder))}' would write over '{clip_text(str(source))}'",
                         hint="give -o a folder of its own (default: repro)")


MAX_SINGLES = 24  # layers of a diverging group (and what it reads unseen) tried alone, at most


def reduce_divergence(model: Model, report, values: Mapping[Slot, np.ndarray], directory: str | os.PathLike,
                      suspects: Sequence[str], crosscheck: Callable, held: Collection[str] = (), **check
                      ) -> Reduction:
    """Search the smallest part of ``model`` that still diverges on the device when fed ``values`` (ir-run's, by
    (layer id, output position)): each of ``suspects`` (layer ids, in execution order: the layers of the
    diverging fused group and those it reads that the device did not show) alone first, then the part ending at
    ``report``'s first divergence, grown backwards. ``held``: the layers reading a variable that held a value
    before the run, cut as inputs (see the module docstring). ``crosscheck`` is :func:`ir_runner.crosscheck`, and
    ``check`` what each part's crosscheck is given (device, precision, tolerance, strict_representations)."""
    graph = model.graph
    first = report.first
    target = first.layer.id
    if target in held:
        return Reduction(None, [], None, None, 0,
                         f"the first divergence, {first.layer}, reads a variable that held a value before the run:"
                         " the device reads back other values than the state it was given, and a part's command"
                         " starts from the variables' initial values, so no part shows it (crosscheck the model"
                         " from a new state to reduce what its first step computes)")
    fed = {layer.id for layer in graph.parameters} | set(held)
    probes = 0

    def attempt(keep: set[str], outputs: list[Slot]):
        nonlocal probes
        cut = cut_of(model, keep, outputs, values, fed)
        xml, weights = sub_ir(model, cut)
        part = load(xml, weights)
        probes += 1
        options = {key: value for key, value in check.items() if key != "default_tolerance"}
        return cut, xml, weights, part, crosscheck(part, [np.asarray(values[slot]) for slot in cut.inputs],
                                                   **options)

    computing = [layer_id for layer_id in suspects if layer_id != target and graph.sources[layer_id]
                 and layer_id not in fed]
    for suspect in computing[:MAX_SINGLES]:  # (a constant alone is its bytes: a fault shows in what reads it)
        outputs = [(suspect, position) for position in range(len(graph.layers[suspect].outputs))
                   if (suspect, position) in values]
        if outputs:
            cut, xml, weights, part, part_report = attempt({suspect}, outputs)
            if not part_report.ok:
                return _write(Path(directory), model, part, cut, xml, weights, values, part_report, probes, check)
    keep, frontier = {target}, {target}
    while True:
        cut, xml, weights, part, part_report = attempt(keep, [(target, first.position)])
        if not part_report.ok:
            return _write(Path(directory), model, part, cut, xml, weights, values, part_report, probes, check)
        frontier = {source for layer_id in frontier for source, _ in graph.sources[layer_id]
                    if source not in keep and source not in fed and source not in cut.keep}
        if not frontier:
            return Reduction(None, [], None, part_report, probes,
                             f"no part of the model ending at {first.layer} diverges when fed the reference's values"
                             f" ({probes} parts tried, up to the model's inputs): the device differs only with the"
                             " layers after it (fused), or with its own values upstream")
        keep |= frontier


def _write(directory: Path, model: Model, part: Model, cut, xml: bytes, weights: bytes, values, part_report,
           probes: int, check: dict) -> Reduction:
    from .cli.files import atomic_write, save_arrays  # (each file whole; an .npz of any input name)

    command = _command(check)
    first = part_report.first
    layers = [model.graph.layers[layer_id].name for layer_id in model.graph.order if layer_id in cut.keep]
    lines = [f"# {first.layer.type_version} diverges on {part_report.device}",
             "",
             "In this folder,",
             "",
             "    " + command,
             "",
             f"shows it (exit code 1): {first.mismatches} of {first.size} elements of layer '{first.layer.name}'"
             f" ({first.layer.type_version}) differ; at {list(first.worst_index or ())} ir-run (OpenVINO's"
             f" reference semantics) gives {first.ours}, {part_report.device} gives {first.device}"
             f" (OpenVINO {part_report.openvino_version.split('-')[0]},"
             f" INFERENCE_PRECISION_HINT {part_report.precision}).",
             "",
             f"`model.xml` is the part of '{model.name}' made of {', '.join(repr(name) for name in layers)}"
             f" ({len(part.graph.layers)} layers with its constants, inputs and output), reduced by"
             f" `ir-run crosscheck --reduce` in {probes} step(s); `inputs.npz` holds the reference's values of"
             " the tensors where it was cut from the model."]
    kept = [variable.id for variable in model.variables if set(variable.readers) & cut.keep]
    if kept:
        lines += ["", f"It keeps the variable(s) {', '.join(repr(name) for name in kept)} with their readers and"
                      " writer, and runs one step from their initial values, as the model's crosscheck did."]
    read = [variable.id for variable in model.variables
            if any((reader, 0) in cut.inputs for reader in variable.readers)]
    if read:
        lines += ["", f"The value(s) read from the variable(s) {', '.join(repr(name) for name in read)} are inputs of"
                      " the part (`inputs.npz`): what the model's run read from its state."]
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in (("model.xml", xml), ("model.bin", weights),
                          ("README.md", ("\n".join(lines) + "\n").encode("utf-8"))):
        atomic_write(directory / name, lambda stream, content=content: stream.write(content))
    save_arrays(directory / "inputs.npz", {info.name: np.asarray(values[slot])
                                           for info, slot in zip(part.inputs, cut.inputs)})
    return Reduction(directory, layers, command, part_report, probes)


def _command(check: dict) -> str:
    words = ["ir-run crosscheck model.xml --input inputs.npz", f"--device {check['device']}",
             f"--precision {check['precision']}"]
    tolerance, default = check.get("tolerance"), check["default_tolerance"]
    if tolerance is not None:
        for name in ("atol", "rtol", "ulp"):
            if getattr(tolerance, name) != getattr(default, name) and getattr(tolerance, name) is not None:
                words.append(f"--{name} {getattr(tolerance, name)!r}")  # (all digits: the same bound)
    if check.get("strict_representations"):
        words.append("--strict-representations")
    return " ".join(words)
