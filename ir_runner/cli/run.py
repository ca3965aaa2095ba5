"""``run`` (the default command), ``gen-inputs`` and ``replay``: bind inputs, run, show, save, compare."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click
import numpy as np

from .. import InputError, load
from ..model import Model
from ..record import Record
from .common import EXIT_COMPARISON, emit, info, settings
from .compare import Tolerances, check_tolerance_names, compare_outputs, render_comparison
from .files import array_sha256, file_sha256, make_folder, read_arrays, same_file, save_arrays, save_json
from .formats import array_stats, number, shape_text, table, type_name, values_text
from .inputs import Bound, bind_inputs
from .options import InputOptions

RUN_SCHEMA = "ir-run/run/1"
OPENVINO = "openvino"  # --ref openvino: compare with OpenVINO's CPU plugin, not a file
# the run options _run_record writes into a record's args: replay accepts no other (none writes a file)
REPLAY_PARAMETERS = frozenset({"model", "weights", "strict", "memory_limit", "inputs", "values", "shapes",
                               "data_shapes", "ranges", "seed", "cast", "ref", "atol", "rtol", "exact", "trace"})


class RunOptions(Record):
    """Everything ``run`` was asked to do, as given on the command line; ``replay`` is the record being
    replayed, if any."""

    __slots__ = ("model", "weights", "strict", "memory_limit", "inputs", "output", "save_inputs", "save_run", "ref",
                 "tolerances", "trace", "dump_intermediate", "replay")

    def __init__(self, model: str, weights: str | None = None, strict: bool = False, memory_limit: int | None = None,
                 inputs: InputOptions | None = None, output: str | None = None, save_inputs: str | None = None,
                 save_run: str | None = None, ref: str | None = None, tolerances: Tolerances | None = None,
                 trace: bool = False, dump_intermediate: str | None = None,
                 replay: dict[str, Any] | None = None) -> None:
        self.model = model
        self.weights = weights
        self.strict = strict
        self.memory_limit = memory_limit
        self.inputs = InputOptions() if inputs is None else inputs
        self.output = output
        self.save_inputs = save_inputs
        self.save_run = save_run
        self.ref = ref
        self.tolerances = Tolerances() if tolerances is None else tolerances
        self.trace = trace
        self.dump_intermediate = dump_intermediate
        self.replay = replay


def load_model(path: str, weights: str | None, strict: bool, memory_limit: int | None, *,
               allow_unsupported: bool = False) -> Model:
    """``ir_runner.load`` with the CLI's options (``allow_unsupported``: for gen-inputs, which needs only the
    model's inputs)."""
    kwargs = {} if memory_limit is None else {"memory_limit": memory_limit}
    return load(path, weights, strict=strict, allow_unsupported=allow_unsupported, **kwargs)


def run_model(model: Model, arrays: list[np.ndarray]) -> dict[str, np.ndarray]:
    """``model.run`` on arrays in input order."""
    return model.run({info.name: array for info, array in zip(model.inputs, arrays)})


def run_command(options: RunOptions) -> None:
    model = load_model(options.model, options.weights, options.strict, options.memory_limit)
    check_tolerance_names(options.tolerances, [info.name for info in model.outputs])
    bound = bind_inputs(model, options.inputs)
    _refuse_overwrites(options, bound)
    if options.replay is not None:
        _check_replay_inputs(options, bound)
    expected = _read_reference(bound, options.ref) if options.ref and options.ref != OPENVINO else None  # fails
    # before a long run
    trace: list[dict[str, Any]] = []
    if options.trace or options.dump_intermediate:
        outputs = _traced(bound, trace if options.trace else None, options.dump_intermediate)
    else:
        outputs = run_model(bound.model, bound.arrays)
    result: dict[str, Any] = {"model": _model_entry(options), "seed": bound.seed, "inputs": binding_rows(bound)}
    if options.trace:
        result["trace"] = trace
    result["outputs"] = [_output_row(i, outputs[i.name]) for i in bound.model.outputs]
    if options.ref == OPENVINO:
        expected = openvino_outputs(bound.model, bound.arrays)
    if expected is not None:
        result["comparison"] = compare_outputs(outputs, expected, options.tolerances)
        result["comparison"]["reference"] = options.ref
        if not result["comparison"]["passed"]:
            result["exit_code"] = EXIT_COMPARISON
            from ..divergence import decompressions, rounding_ties

            ties = rounding_ties(bound.model, bound.arrays)
            if ties:  # (the outputs may differ because of them: say where they are)
                result["comparison"]["rounding_ties"] = [
                    {"layer": tie.layer.name, "id": tie.layer.id, "type": tie.layer.type_version, "count": tie.count,
                     "size": tie.size, "text": tie.text} for tie in ties]
            found = decompressions(bound.model)
            if found:
                result["comparison"]["decompressions"] = [
                    {"layer": d.layer.name, "id": d.layer.id, "type": d.layer.type_version, "spec": d.spec,
                     "narrow": d.narrow} for d in found]
    if options.replay is not None:
        result["replay"] = _check_replay_outputs(options.replay, outputs)
        if not result["replay"]["outputs_identical"]:
            result["exit_code"] = EXIT_COMPARISON
    result["files"] = _save(options, bound, outputs)
    emit("replay" if options.replay is not None else "run", result, lambda r: render_run(r, outputs))


def gen_inputs_command(options: RunOptions) -> None:
    """Bind (and generate) inputs, save them, and show the binding table. Layers of operations ir-run does
    not implement are no obstacle: only the Parameters matter (and the layers they feed, for ranges)."""
    model = load_model(options.model, options.weights, options.strict, options.memory_limit,
                       allow_unsupported=True)
    bound = bind_inputs(model, options.inputs)
    _refuse_overwrites(options, bound)
    save_arrays(Path(options.output), {b.info.name: b.array for b in bound.bindings})
    result = {"model": _model_entry(options), "seed": bound.seed, "inputs": binding_rows(bound),
              "files": {"inputs": options.output}}
    emit("gen-inputs", result, lambda r: binding_text(r, always=True) + f"\nwrote {options.output}")


# -- pieces ---------------------------------------------------------------------------------------


def binding_rows(bound: Bound) -> list[dict[str, Any]]:
    return [{"name": b.info.name, "element_type": b.info.element_type.name, "shape": list(b.array.shape),
             "source": b.source, "file": b.file, "cast": b.cast} for b in bound.bindings]


def binding_text(result: dict[str, Any], always: bool = False) -> str:
    if settings().quiet and not always:
        return ""
    rows = [("input", "type", "shape", "source")]
    rows += [(r["name"], r["element_type"], shape_text(r["shape"]), r["source"]) for r in result["inputs"]]
    seeded = any(r["source"].startswith("random") for r in result["inputs"])
    header = f"inputs (seed {result['seed']}; change it with --seed)" if seeded else "inputs"
    return header + "\n" + table(rows)


def _output_row(info, value: np.ndarray) -> dict[str, Any]:
    return {"name": info.name, "element_type": type_name(value.dtype) if info.element_type.kind == "dynamic"
            else info.element_type.name, "shape": list(value.shape), **array_stats(value)}


def render_run(result: dict[str, Any], outputs: dict[str, np.ndarray]) -> str:
    parts = [binding_text(result)]
    if "trace" in result:
        rows = [("#", "layer", "type", "output", "min", "max", "mean", "nan", "ms")]
        rows += [(t["step"], f"{t['layer']} (id {t['id']})", t["type"], f"{t['element_type']}{shape_text(t['shape'])}",
                  number(t["min"]), number(t["max"]), number(t["mean"]), t["nan"], f"{t['ms']:.3f}")
                 for t in result["trace"]]
        parts.append("trace\n" + table(rows))
    lines = ["outputs"]
    for row in result["outputs"]:
        stats = f"min {number(row['min'])}  max {number(row['max'])}  mean {number(row['mean'])}"
        if row["nan"] or row["inf"]:
            stats += f"  nan {row['nan']}  inf {row['inf']}"
        lines.append(f"{row['name']}: {row['element_type']}{shape_text(row['shape'])}  {stats}")
        lines.append(values_text(outputs[row["name"]]))
    parts.append("\n".join(lines))
    if "comparison" in result:
        parts.append(render_comparison(result["comparison"], result["comparison"]["reference"]))
    if "replay" in result:
        replay = result["replay"]
        verdict = "identical to" if replay["outputs_identical"] else "DIFFERENT from"
        changed = f" (differ: {', '.join(replay['different'])})" if replay["different"] else ""
        parts.append(f"replay: inputs identical to the recording; outputs {verdict} the recording{changed}")
    return "\n".join(part for part in parts if part)


def _traced(bound: Bound, rows: list[dict[str, Any]] | None, dump: str | None) -> dict[str, np.ndarray]:
    """Run step by step: a trace row per computed layer into ``rows`` (when given), each layer's output
    saved into the folder ``dump`` (when given) and listed in its index.json."""
    folder = Path(dump) if dump else None
    if folder is not None:
        make_folder(folder)
    index: list[dict[str, Any]] = []
    count = 0

    def observe(record) -> None:
        nonlocal count
        if record.source != "computed":  # inputs, Consts and layers folded when planning are not traced
            return
        layer, value = record.layer, record.value
        entry = {"layer": layer.name, "id": layer.id, "type": layer.type_version,
                 "element_type": type_name(value.dtype), "shape": list(value.shape)}  # both the trace and index
        if rows is not None:
            stats = array_stats(value)
            del stats["values"]
            rows.append({"step": count, **entry, **stats, "ms": record.seconds * 1e3})
        if folder is not None:
            name = f"{count:04d}_{re.sub(r'[^A-Za-z0-9._-]', '_', layer.name)[:80]}.npy"
            save_arrays(folder / name, {layer.name: value})
            index.append({"file": name, **entry})
        count += 1

    outputs = bound.model.trace(bound.arrays, callback=observe).outputs
    if folder is not None:
        save_json(folder / "index.json", {"layers": index})
    return outputs


def openvino_outputs(model: Model, arrays: list[np.ndarray]) -> dict[str, np.ndarray]:
    """The outputs of OpenVINO's CPU plugin (``INFERENCE_PRECISION_HINT`` f32; openvino-tokenizers' extension
    loaded for a tokenizer IR) on the same inputs, by output name; strings as a run returns them."""
    from ..device import run_on_device
    from ..errors import UnsupportedError
    from ..strings import to_output

    graph = model.graph
    keys = {}
    for result in graph.results:
        layer_id, position = graph.sources[result.id][0]
        keys[result.name] = (graph.layers[layer_id].name, position)
    fed = {info.layer_name: array for info, array in zip(model.inputs, arrays)}
    device_run = run_on_device(model.source, model.weights_source, list(keys.values()), fed, "CPU", "f32")
    outputs = {}
    for output in model.outputs:
        key = keys[output.layer_name]
        if key not in device_run.values:
            raise UnsupportedError(f"OpenVINO does not return the output '{output.name}':"
                                   f" {device_run.unobservable.get(key)}")
        value = device_run.values[key]
        outputs[output.name] = to_output(value) if value.dtype == object else value
    return outputs


def _read_reference(bound: Bound, path: str) -> dict[str, np.ndarray]:
    """The ``--ref`` arrays by output name (a single array is the only output's)."""
    expected = read_arrays(path)
    if isinstance(expected, dict):
        return expected
    if len(bound.model.outputs) != 1:
        raise InputError(f"'{path}' holds one array, the model has {len(bound.model.outputs)} outputs",
                         hint="give a .npz (or JSON object) keyed by output name")
    return {bound.model.outputs[0].name: expected}


def _model_entry(options: RunOptions) -> dict[str, Any]:
    return {"path": options.model, "weights": options.weights}


def _refuse_overwrites(options: RunOptions, bound: Bound) -> None:
    read = [options.model, options.weights or str(Path(options.model).with_suffix(".bin"))]
    read += [options.ref] if options.ref != OPENVINO else []
    read += [b.file for b in bound.bindings]
    for option, target in (("--output", options.output), ("--save-inputs", options.save_inputs),
                            ("--save-run", options.save_run)):
        for source in read:
            if target and source and same_file(target, source):
                raise click.BadParameter(f"'{target}' is also read by this run; ir-run never overwrites an input",
                                         param_hint=option)


def _save(options: RunOptions, bound: Bound, outputs: dict[str, np.ndarray]) -> dict[str, str]:
    files = {}
    if options.output:
        save_arrays(Path(options.output), outputs)
        files["outputs"] = options.output
    if options.save_inputs:
        save_arrays(Path(options.save_inputs), {b.info.name: b.array for b in bound.bindings})
        files["inputs"] = options.save_inputs
    if options.save_run:
        save_json(Path(options.save_run), _run_record(options, bound, outputs))
        files["run"] = options.save_run
    if options.dump_intermediate:
        files["intermediate"] = options.dump_intermediate
    for kind, path in files.items():
        info(f"wrote {kind} to {path}")
    return files


def _run_record(options: RunOptions, bound: Bound, outputs: dict[str, np.ndarray]) -> dict[str, Any]:
    """What ``replay`` needs: absolute paths with hashes, every input bound by name, and the options."""
    import shlex  # only when saving a run

    xml = str(Path(options.model).resolve())
    weights = str(Path(options.weights).resolve()) if options.weights else str(Path(xml).with_suffix(".bin"))
    args = [xml]
    if options.weights:
        args += ["--weights", weights]
    for binding in bound.bindings:
        args += list(binding.replay)
    io = options.inputs
    args += ["--seed", str(io.seed), "--cast", io.cast]
    for flag, tokens in (("--shape", io.shapes), ("--data-shape", io.data_shapes), ("--range", io.ranges)):
        for token in tokens:
            args += [flag, token]
    if options.strict:
        args.append("--strict")
    if options.memory_limit is not None:
        args += ["--memory-limit", str(options.memory_limit)]
    if options.ref:
        args += ["--ref", options.ref if options.ref == OPENVINO else str(Path(options.ref).resolve())]
        tol = options.tolerances
        for flag, given in (("--atol", tol.atol), ("--rtol", tol.rtol)):
            for name, value in given.items():
                args += [flag, repr(value) if name is None else f"{name}={value!r}"]
        if tol.exact:
            args.append("--exact")
    if options.trace:
        args.append("--trace")
    return {
        "schema": RUN_SCHEMA,
        "model": {"xml": {"path": xml, "sha256": file_sha256(xml)},
                  "weights": {"path": weights, "sha256": file_sha256(weights)} if Path(weights).is_file() else None},
        "seed": io.seed,
        "inputs": [{"name": b.info.name, "element_type": b.info.element_type.name, "shape": list(b.array.shape),
                    "source": b.source, "sha256": array_sha256(b.array)} for b in bound.bindings],
        "outputs": [{"name": name, "sha256": array_sha256(value)} for name, value in outputs.items()],
        "args": args,
        "command": shlex.join(["ir-run", "run", *args]),
    }


def _check_replay_inputs(options: RunOptions, bound: Bound) -> None:
    recorded = {entry["name"]: entry["sha256"] for entry in options.replay["inputs"]}
    for binding in bound.bindings:
        if recorded.get(binding.info.name) != array_sha256(binding.array):
            raise InputError(f"input '{binding.info.name}' ({binding.source}) differs from the recorded run",
                             hint="the file changed since the run was recorded")


def _check_replay_outputs(record: dict[str, Any], outputs: dict[str, np.ndarray]) -> dict[str, Any]:
    recorded = {entry["name"]: entry["sha256"] for entry in record["outputs"]}
    different = [name for name, value in outputs.items() if recorded.get(name) != array_sha256(value)]
    return {"inputs_identical": True, "outputs_identical": not different, "different": different}
