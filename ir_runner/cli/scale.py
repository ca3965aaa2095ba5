"""``run`` over data larger than memory, on Dask: Zarr and ``.npy`` inputs streamed block by block, outputs
written as Zarr (``ir_runner.dask`` does the work).

``run`` comes here when an input is a ``.zarr``, ``--output`` ends in ``.zarr``, or ``--batch-axis``,
``--chunk`` or ``--scheduler`` is given. Inputs are ``[NAME=]data.zarr`` (an array, or a group holding an
array named like the input or a single array) or ``[NAME=]big.npy`` (memory-mapped, never read whole). The
outputs go to one Zarr group, an array per output, written under a temporary name in the same folder and
renamed at the end: an interrupted run leaves nothing under the final name. Progress (Dask's own
diagnostics) with rows per second goes to stderr when it is a terminal.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click

from ..errors import InputError
from .common import emit, settings

SCHEDULERS = ("threads", "processes", "sync")
REFUSED = {"values": "--value", "shapes": "--shape", "data_shapes": "--data-shape", "ranges": "--range",
           "save_inputs": "--save-inputs", "save_run": "--save-run", "ref": "--ref", "trace": "--trace",
           "dump_intermediate": "--dump-intermediate"}


def wants_scale(inputs: tuple[str, ...], output: str | None, batch_axis: int | None, chunk: int | None,
                scheduler: str | None) -> bool:
    """Whether a ``run`` is a chunked one (see the module's docstring)."""
    given = batch_axis is not None or chunk is not None or scheduler is not None
    zarr = any(_is_zarr(token.rsplit("=", 1)[-1]) for token in inputs) or (output is not None and _is_zarr(output))
    return given or zarr


def _is_zarr(path: str) -> bool:
    return path.rstrip("/\\").lower().endswith(".zarr")


def scale_command(kw: dict[str, Any]) -> None:
    """The chunked run: bind the inputs lazily, prove the model separable, write the outputs as Zarr."""
    for key, flag in REFUSED.items():
        if kw.get(key):
            raise click.UsageError(f"{flag} cannot be used in a chunked run (Zarr input/output, --batch-axis,"
                                   " --chunk, --scheduler)")
    if kw.get("fill") not in (None, "error"):
        raise click.UsageError("--fill cannot be used in a chunked run: every input must come from a file")
    if kw.get("cast") not in (None, "same_kind"):
        raise click.UsageError("--cast cannot be used in a chunked run: it never casts, convert the data first")
    scheduler = kw.get("scheduler")
    if scheduler is not None and scheduler not in SCHEDULERS and ":" not in scheduler:
        raise click.BadParameter(f"{scheduler!r} is not one of {', '.join(SCHEDULERS)}, nor a scheduler address such"
                                 " as tcp://host:8786", param_hint="--scheduler")
    output = kw.get("output")
    if not output or not _is_zarr(output):
        raise click.BadParameter("a chunked run writes its outputs as Zarr: give --output OUT.zarr",
                                 param_hint="--output")
    from .. import dask as ir_dask  # an UnsupportedError (exit 5) naming the extra when dask is missing
    from .run import load_model

    model = load_model(kw["model"], kw.get("weights"), kw.get("strict", False), kw.get("memory_limit"))
    batch_axis = 0 if kw.get("batch_axis") is None else kw["batch_axis"]
    feeds, sources = _bind(model, kw["inputs"], batch_axis, kw.get("chunk"))
    target = Path(output)
    _refuse_overwrite(target, [kw["model"], *sources.values()])
    outputs = ir_dask.run(model, feeds, batch_axis=batch_axis, chunk=kw.get("chunk"))
    rows = max(int(feed.shape[batch_axis]) for feed in feeds.values()
               if -len(feed.shape) <= batch_axis < len(feed.shape))
    seconds = _write(outputs, target, kw.get("scheduler") or "threads", rows)
    result = {
        "model": {"path": kw["model"], "weights": kw.get("weights")},
        "inputs": [{"name": name, "element_type": _type(model, name), "shape": list(feeds[name].shape),
                    "source": sources[name]} for name in feeds],
        "outputs": [{"name": info.name, "element_type": info.element_type.name if info.dtype is not None
                     else str(outputs[info.name].dtype), "shape": list(outputs[info.name].shape),
                     "file": f"{output}/{info.name}"} for info in model.outputs],
        "rows": rows, "seconds": seconds, "rows_per_second": rows / seconds if seconds else None,
        "files": {"outputs": output},
    }
    emit("run", result, _render)


def _type(model, name: str) -> str:
    return next(info.element_type.name for info in model.inputs if info.name == name)


def _bind(model, tokens: tuple[str, ...], batch_axis: int, chunk: int | None) -> tuple[dict[str, Any], dict[str, str]]:
    """Each input opened lazily (Zarr as a dask array, .npy memory-mapped), by name, in model order."""
    from .inputs import Names

    names = Names(model.inputs)
    slots: dict[int, tuple[Any, str]] = {}
    unnamed = 0
    for token in tokens:
        split = names.split(token)
        if split is None and "=" in token and not Path(token).exists():
            raise names.unknown(token.split("=", 1)[0], "--input")
        if split is None:
            while unnamed in slots:
                unnamed += 1
            if unnamed >= len(model.inputs):
                raise InputError(f"--input {token}: the model has only {len(model.inputs)} inputs")
            index, path = unnamed, token
        else:
            index, path = split
        if index in slots:
            raise InputError(f"input '{model.inputs[index].name}' is given twice")
        slots[index] = (_open(path, model.inputs[index].name, batch_axis, chunk), path)
    missing = [info.name for i, info in enumerate(model.inputs) if i not in slots]
    if missing:
        raise InputError(f"no data for input(s) {', '.join(missing)}",
                         hint="give each as --input NAME=data.zarr or --input NAME=big.npy")
    feeds = {model.inputs[i].name: slots[i][0] for i in sorted(slots)}
    return feeds, {model.inputs[i].name: slots[i][1] for i in sorted(slots)}


def _open(path: str, name: str, batch_axis: int, chunk: int | None):
    if _is_zarr(path):
        return _open_zarr(path, name, batch_axis, chunk)
    if path.lower().endswith(".npy"):
        import numpy as np

        from .files import regular_file

        regular_file(path)
        try:
            return np.load(path, mmap_mode="r", allow_pickle=False)
        except (ValueError, OSError) as exc:
            raise InputError(f"cannot read '{path}' as .npy: {exc}") from None
    raise InputError(f"'{path}' is neither a .zarr nor a .npy: a chunked run streams only those",
                     hint="convert small inputs with np.save, large ones with zarr")


def _open_zarr(path: str, name: str, batch_axis: int, chunk: int | None):
    import dask.array as da
    import zarr

    location = os.path.abspath(path)
    try:
        found = zarr.open(location, mode="r")
    except Exception as exc:  # zarr raises several kinds for a missing or broken store
        raise InputError(f"cannot open '{path}' as Zarr: {type(exc).__name__}: {exc}") from None
    component = None
    if isinstance(found, zarr.Group):
        arrays = dict(found.arrays())
        if name in arrays:
            component = name
        elif len(arrays) == 1:
            component = next(iter(arrays))
        else:
            raise InputError(f"the Zarr group '{path}' holds {len(arrays)} arrays and none is named '{name}'",
                             hint=f"give the array's own path, e.g. {path}/ARRAY")
        found = arrays[component]
    shape, stored = found.shape, found.chunks
    if batch_axis < 0:
        batch_axis += len(shape)
    rows = chunk
    if rows is None and 0 <= batch_axis < len(shape):
        from ..dask import BLOCK_BYTES

        row_bytes = max(1, found.dtype.itemsize * int(_product(shape)) // max(shape[batch_axis], 1))
        step = max(1, stored[batch_axis])
        rows = max(step, BLOCK_BYTES // row_bytes // step * step)
    chunks = tuple(rows if d == batch_axis and rows else -1 for d in range(len(shape)))
    return da.from_zarr(location, component=component, chunks=chunks)


def _product(shape) -> int:
    total = 1
    for n in shape:
        total *= int(n)
    return total


def _refuse_overwrite(target: Path, sources: list[str]) -> None:
    from .files import OutputError

    for source in sources:
        if os.path.abspath(source) == os.path.abspath(target):
            raise click.BadParameter(f"'{target}' is also read by this run; ir-run never overwrites an input",
                                     param_hint="--output")
    if target.exists() and not (target / "zarr.json").is_file():
        raise OutputError(f"'{target}' exists and is not a Zarr store; ir-run does not replace it",
                          hint="remove it or choose another --output")
    if not target.parent.is_dir():
        raise OutputError(f"cannot write '{target}': the folder '{target.parent}' does not exist")


def _write(outputs: dict[str, Any], target: Path, scheduler: str, rows: int) -> float:
    """Every output into a Zarr group under a temporary name next to ``target``, then renamed to it (an
    existing store there is replaced only once the new one is complete); the seconds the computation took."""
    import dask.array as da
    import zarr

    from .files import OutputError

    try:
        temporary = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    except OSError as exc:
        raise OutputError(f"cannot write '{target}': {exc.strerror}") from None
    try:
        zarr.open_group(str(temporary), mode="w")
        writes = [da.to_zarr(array, str(temporary), component=name, compute=False) for name, array in outputs.items()]
        seconds = _compute(writes, scheduler, rows)
        _replace(temporary, target)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    return seconds


def _replace(temporary: Path, target: Path) -> None:
    old = None
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
        os.replace(target, old / target.name)
    os.replace(temporary, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _compute(writes: list[Any], scheduler: str, rows: int) -> float:
    """Run the writes; the seconds they took. The progress bar is drawn on a terminal only (not ``-q``),
    its last line from those seconds."""
    line = None
    if not settings().quiet and sys.stderr.isatty():
        from .progress import RowLine

        line = RowLine(sys.stderr, rows)
    started = time.perf_counter()
    try:
        _run_writes(writes, scheduler, line)
    except BaseException:
        if line is not None:
            line.end()
        raise
    seconds = time.perf_counter() - started
    if line is not None:
        line.finish(seconds)
    return seconds


def _run_writes(writes: list[Any], scheduler: str, line) -> None:
    if scheduler in SCHEDULERS:
        import dask

        if line is None:
            dask.compute(*writes, scheduler=scheduler)
            return
        from .progress import RowsProgressBar

        with RowsProgressBar(line):
            dask.compute(*writes, scheduler=scheduler)
        return
    from distributed import Client

    try:
        client = Client(scheduler, timeout="10s", set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise InputError(f"--scheduler: cannot connect to a Dask scheduler at '{scheduler}': {exc}",
                         hint="start one (dask scheduler / LocalCluster), or use threads or processes") from None
    with client:
        futures = client.compute(writes)
        if line is not None:
            from .progress import rows_text_bar

            rows_text_bar(futures, client, line)
        client.gather(futures)


def _render(result: dict[str, Any]) -> str:
    from .formats import shape_text, table

    lines = []
    if not settings().quiet:
        rows = [("input", "type", "shape", "source")]
        rows += [(r["name"], r["element_type"], shape_text(r["shape"]), r["source"]) for r in result["inputs"]]
        lines.append("inputs\n" + table(rows))
    lines.append("outputs")
    lines += [f"{r['name']}: {r['element_type']}{shape_text(r['shape'])} -> {r['file']}" for r in result["outputs"]]
    rate = result["rows_per_second"]
    lines.append(f"wrote outputs to {result['files']['outputs']} ({result['rows']} rows in {result['seconds']:.2f} s"
                 + (f", {rate:,.0f} rows/s)" if rate else ")"))
    return "\n".join(lines)
