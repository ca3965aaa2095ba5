"""Run a model over data larger than memory with Dask: block by block along a batch axis, lazily.

``run(model, feeds, batch_axis=0)`` returns one lazy ``dask.array.Array`` per model output. The batched
inputs are cut into blocks of rows along the batch axis (the inputs' own chunks, or ``chunk`` rows); each
block runs ``Model.run`` on one worker; inputs without the batch axis (a mask shared by every row) go whole
to every block. Before anything is built, ``batching.trace_batches`` proves from the operations' batch rules
and the graph inferred at every block size, the whole data's rows and two sample sizes, that no layer mixes
rows (shapes computed from the block's shape included), so the result equals, bit for bit, ``Model.run`` on
the whole data (operations computed through BLAS: within their bounds, as OpenBLAS's kernels depend on the
block's size; docs/scale.md). Outputs without the batch axis are the same in every block and are
taken from the first one.

Tasks carry the model as a :class:`ModelHandle`: the Model itself in this process (threads scheduler),
and, pickled for other processes (processes scheduler, ``dask.distributed`` workers), the paths (or
bytes) it was loaded from; each process loads it once and keeps it, with its plans (one per block shape).
Memory-mapped ``.npy`` inputs are re-opened by path in each process instead of being pickled.

An optional extra: ``pip install 'ir-run[dask]'`` (dask, distributed, zarr). ``import ir_runner`` never
imports this module.
"""

from __future__ import annotations

import hashlib
import mmap
import operator
import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from .errors import BatchError, InputError, UnsupportedError

try:
    import dask
    import dask.array as da
except ImportError:  # pragma: no cover - the extra is installed in tests
    raise UnsupportedError("running on Dask needs the dask extra, which is not installed",
                           hint="pip install 'ir-run[dask]'") from None

from .batching import Kind, trace_batches
from .model import Model, load
from .ops.api import Sized
from .types import PartialShape, TensorSpec, element_type_of

BLOCK_BYTES = 64 << 20
"""The default block: this many bytes of batched inputs (see docs/scale.md for how to pick one)."""

BatchAxis = int | Mapping[str | int, int | None]

SAMPLE_ROWS = (2, 3)
"""Block sizes the proof also infers the model for, besides the run's own (see ir_runner.batching)."""


def run(model: Model | str | os.PathLike, feeds: Mapping[str | int, Any] | Sequence[Any], *,
        batch_axis: BatchAxis = 0, chunk: int | None = None) -> dict[str, da.Array]:
    """Lazy outputs (by name, in ``model.outputs`` order) of ``model`` run block by block over ``feeds``.

    ``feeds`` maps input names or positions (or is a sequence in input order) to dask arrays, numpy
    arrays, memory-mapped ``.npy`` files (``np.load(path, mmap_mode='r')``) or other array-likes (a Zarr
    array); element types must be the inputs' own. ``batch_axis``: the axis of the rows, for every input
    that has it (an input of lower rank, or whose size there differs from the rows', is shared by every
    block); or a mapping from input name or position to its batch axis, the inputs not in it being shared.
    ``chunk``: rows per block (default: the first batched dask input's chunks, a static batch dim of the
    model, else about BLOCK_BYTES of batched inputs per block).

    Raises BatchError (before any work) when a layer may mix rows, InputError for feeds that do not fit.
    """
    if not isinstance(model, Model):
        model = load(model)
    handle = ModelHandle.of(model)
    feeds = _feeds_in_order(model, feeds)
    axes = _batch_axes(model, feeds, batch_axis)
    chunks = _row_chunks(model, feeds, axes, chunk)
    arrays = [_as_dask(feed, axis, chunks) for feed, axis in zip(feeds, axes)]
    layout = _prove(model, arrays, axes, chunks)
    return _build(handle, model, arrays, axes, layout)


# -- binding --------------------------------------------------------------------------------------------


def _feeds_in_order(model: Model, feeds) -> list[Any]:
    names = [info.name for info in model.inputs]
    if isinstance(feeds, Mapping):
        by_position: dict[int, Any] = {}
        for key, value in feeds.items():
            position = _position(model, key, "feeds")
            if position in by_position:
                raise InputError(f"input '{names[position]}' is fed twice (by name and by position)")
            by_position[position] = value
        missing = [names[i] for i in range(len(names)) if i not in by_position]
        if missing:
            raise InputError(f"no data for input(s) {', '.join(missing)}",
                             hint=f"the model's inputs are: {', '.join(names)}")
        ordered = [by_position[i] for i in range(len(names))]
    else:
        ordered = list(feeds)
        if len(ordered) != len(names):
            raise InputError(f"{len(ordered)} feeds given, the model has {len(names)} inputs ({', '.join(names)})")
    for info, feed in zip(model.inputs, ordered):
        if not (hasattr(feed, "shape") and hasattr(feed, "dtype")):
            raise InputError(f"input '{info.name}' is fed a {type(feed).__name__}, not an array",
                             hint="give a dask array, a numpy array or np.load(path, mmap_mode='r')")
        dtype = np.dtype(feed.dtype)
        if info.dtype is not None and dtype != info.dtype or element_type_of(dtype) is None:
            raise InputError(f"input '{info.name}' takes {info.element_type.name}, it is fed {dtype}",
                             hint="convert the data first (x.astype(...)): a chunked run never casts")
        if info.partial_shape.rank is not None and len(feed.shape) != info.partial_shape.rank:
            raise InputError(f"input '{info.name}' takes rank {info.partial_shape.rank}"
                             f" ({info.partial_shape}), it is fed shape {list(feed.shape)}")
    return ordered


def _position(model: Model, key: str | int, what: str) -> int:
    names = [info.name for info in model.inputs]
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        if not 0 <= key < len(names):
            raise InputError(f"{what}: input position {key} is outside [0, {len(names) - 1}]")
        return int(key)
    for position, info in enumerate(model.inputs):
        if key == info.name or key in info.names:
            return position
    raise InputError(f"{what}: the model has no input named {key!r}", hint=f"its inputs are: {', '.join(names)}")


def _batch_axes(model: Model, feeds: list[Any], batch_axis: BatchAxis) -> list[int | None]:
    """Per input, its batch axis or None (shared by every block)."""
    if isinstance(batch_axis, Mapping):
        axes: list[int | None] = [None] * len(feeds)
        for key, axis in batch_axis.items():
            position = _position(model, key, "batch_axis")
            if axis is not None:
                axes[position] = _normalised(model, position, feeds[position], axis)
    else:
        axes = [axis if 0 <= axis < len(feed.shape) else None
                for feed in feeds for axis in [batch_axis + len(feed.shape) if batch_axis < 0 else batch_axis]]
        sizes = [feed.shape[axis] for feed, axis in zip(feeds, axes) if axis is not None]
        rows = max(sizes, default=0)
        axes = [axis if axis is not None and feed.shape[axis] == rows else None for feed, axis in zip(feeds, axes)]
    if all(axis is None for axis in axes):
        raise InputError(f"no input has a batch axis {batch_axis}: nothing to cut into blocks",
                         hint="pass batch_axis= the axis of the rows")
    return axes


def _normalised(model: Model, position: int, feed, axis: int) -> int:
    rank = len(feed.shape)
    if not -rank <= axis < rank:
        raise InputError(f"batch axis {axis} of input '{model.inputs[position].name}' is outside its rank {rank}")
    return axis + rank if axis < 0 else axis


def _row_chunks(model: Model, feeds: list[Any], axes: list[int | None], chunk: int | None) -> tuple[int, ...]:
    """The rows of each block: every batched input must have the same number of rows."""
    batched = [(info, feed, axis) for info, feed, axis in zip(model.inputs, feeds, axes) if axis is not None]
    sizes = {info.name: int(feed.shape[axis]) for info, feed, axis in batched}
    rows = next(iter(sizes.values()))
    if len(set(sizes.values())) > 1:
        listed = ", ".join(f"{name}: {size}" for name, size in sizes.items())
        raise InputError(f"the batched inputs have different numbers of rows ({listed})",
                         hint="give batch_axis={name: axis or None} to say which inputs carry the rows")
    if chunk is not None:
        if chunk < 1:
            raise InputError(f"chunk must be at least 1 row, got {chunk}")
        return _even(rows, chunk)
    for _, feed, axis in batched:
        if isinstance(feed, da.Array):
            return tuple(int(c) for c in feed.chunks[axis])
    for info, _, axis in batched:
        dims = info.partial_shape.dims
        if dims is not None and dims[axis].is_static:
            return _even(rows, max(dims[axis].lo, 1))
    row_bytes = sum(np.dtype(feed.dtype).itemsize * int(np.prod(feed.shape)) // max(rows, 1)
                    for _, feed, _ in batched)
    return _even(rows, max(1, BLOCK_BYTES // max(row_bytes, 1)))


def _even(rows: int, chunk: int) -> tuple[int, ...]:
    full, rest = divmod(rows, chunk)
    return (chunk,) * full + ((rest,) if rest or not full else ())


def _as_dask(feed, axis: int | None, chunks: tuple[int, ...]) -> da.Array:
    """``feed`` as a dask array: whole rows per block along ``axis`` (one chunk on every other axis), or one
    chunk when it has no batch axis."""
    shape = tuple(int(n) for n in feed.shape)
    wanted = tuple(chunks if d == axis else (n,) for d, n in enumerate(shape))
    if isinstance(feed, da.Array):
        return feed if feed.chunks == wanted else feed.rechunk(wanted)
    if isinstance(feed, np.memmap):
        mapped = MappedNpy.of(feed)
        if mapped is not None:
            return da.from_array(mapped, chunks=wanted, asarray=True, name=f"npy-{mapped.token}")
    return da.from_array(feed, chunks=wanted, asarray=True)


class MappedNpy:
    """A C-ordered memory-mapped array that pickles as its file, offset, dtype and shape (so a worker maps
    the file itself instead of receiving its bytes); numpy-style slicing."""

    def __init__(self, filename: str, offset: int, dtype: np.dtype, shape: tuple[int, ...]) -> None:
        self.filename, self.offset, self.dtype, self.shape = filename, offset, np.dtype(dtype), shape
        self.ndim = len(shape)
        stat = os.stat(filename)
        self.token = hashlib.sha256(repr((filename, offset, self.dtype.str, shape, stat.st_size,
                                          stat.st_mtime_ns)).encode()).hexdigest()[:16]
        self._array: np.ndarray | None = None

    @classmethod
    def of(cls, array: np.memmap) -> MappedNpy | None:
        """The file region behind ``array`` (also a slice of a mapped file), or None when it has no file or
        is not C-contiguous."""
        buffer = getattr(array, "_mmap", None)
        if not array.filename or buffer is None or not array.flags.c_contiguous or not array.size:
            return None
        start = np.frombuffer(buffer, dtype=np.uint8).ctypes.data
        offset = array.offset - array.offset % mmap.ALLOCATIONGRANULARITY + (array.ctypes.data - start)
        return cls(str(array.filename), offset, array.dtype, tuple(array.shape))

    def __getitem__(self, index) -> np.ndarray:
        if self._array is None:
            self._array = np.memmap(self.filename, dtype=self.dtype, mode="r", offset=self.offset, shape=self.shape)
        return np.asarray(self._array[index])

    def __reduce__(self):
        return MappedNpy, (self.filename, self.offset, self.dtype, self.shape)


# -- proof and layout -----------------------------------------------------------------------------------


class _Output(NamedTuple):
    """How a model output is laid out in blocks: its batch axis (None: the same in every block), its shape
    for a block (the batch dim: that block's rows times ``per_row``), its dtype, and how many elements of
    the batch axis each row has (a reshape may have merged a row's elements into it: ``[r,8,V] -> [8r,V]``)."""

    axis: int | None
    shape: tuple[int, ...]
    dtype: np.dtype
    per_row: int = 1

    def across_blocks(self) -> tuple:
        """What must not change from one block size to another."""
        shape = self.shape if self.axis is None else self.shape[:self.axis] + self.shape[self.axis + 1:]
        return self.axis, shape, self.dtype, self.per_row


def _prove(model: Model, arrays: list[da.Array], axes: list[int | None], chunks: tuple[int, ...]) -> list[_Output]:
    """Infer the model for each distinct block size and for the whole data's rows (when the model takes
    them), after checking that every batched input's declared dims take each, and follow the rows through
    the graph at all these probes at once (``trace_batches``). The outputs' layout (for the largest block)
    must be the same for every block size but for the rows."""
    values = _deciding_values(model, arrays, axes)
    sizes = sorted(set(chunks), reverse=True)
    for rows in sizes:
        for info, shape, axis in zip(model.inputs, _shapes(arrays, axes, rows), axes):
            if axis is not None and not info.partial_shape.accepts(shape):
                raise InputError(
                    f"input '{info.name}' takes {info.partial_shape}, a block of {rows} rows is {list(shape)}",
                    hint=f"make dim {axis} dynamic ('?') in the IR, or cut blocks of the rows it takes (chunk=)")
    def accepted(rows: int) -> bool:
        return rows not in sizes and all(info.partial_shape.accepts(shape) for info, shape, axis
                                         in zip(model.inputs, _shapes(arrays, axes, rows), axes) if axis is not None)

    whole = sum(chunks)
    if accepted(whole):
        sizes.append(whole)  # (the whole run: shapes computed from the rows must give it the blocks' layout)
    inferences = [model.inference_for(_specs(model, arrays, axes, rows), values=values,
                                      context=f"a block of {rows} rows does not fit the model") for rows in sizes]
    for rows in SAMPLE_ROWS if len(sizes) > 1 else ():  # (small: constant folding computes their values)
        if accepted(rows):
            try:
                inferences.append(model.inference_for(_specs(model, arrays, axes, rows), values=values))
            except InputError:  # (a size the model cannot take, e.g. 3 rows reshaped in pairs: no sample)
                continue
            sizes.append(rows)
    layout: list[_Output] | None = None
    for rows, inference, kinds in zip(sizes, inferences, trace_batches(inferences, axes)):
        graph = inference.graph
        found = [_output(info, inference.output_spec(*graph.sources[result.id][0]), kind, rows)
                 for info, result, kind in zip(model.outputs, graph.results, kinds)]
        if layout is None:
            layout = found
        elif [o.across_blocks() for o in found] != [o.across_blocks() for o in layout]:
            raise BatchError(f"the outputs change with the block's rows beyond their batch axes: {layout} for"
                             f" {max(chunks)} rows, {found} for {rows}")
    assert layout is not None  # there is at least one block
    return layout


def _shapes(arrays: list[da.Array], axes: list[int | None], rows: int) -> list[tuple[int, ...]]:
    return [tuple(rows if d == axis else n for d, n in enumerate(a.shape)) for a, axis in zip(arrays, axes)]


def _specs(model: Model, arrays: list[da.Array], axes: list[int | None], rows: int) -> list[TensorSpec]:
    shapes = _shapes(arrays, axes, rows)
    return [TensorSpec(info.element_type if info.dtype is not None else element_type_of(a.dtype),
                       PartialShape.of(shape)) for info, a, shape in zip(model.inputs, arrays, shapes)]


def _output(info, spec: TensorSpec, axis: Kind, rows: int) -> _Output:
    if isinstance(axis, Sized):
        raise BatchError(f"output '{info.name}' is computed from the block's shape (its number of rows), not from"
                         " its rows: each block would give its own value, not the whole run's")
    if not spec.shape.is_static:
        raise BatchError(f"output '{info.name}' is {spec} for a block of {rows} rows: its size depends on the"
                         " values, so the blocks cannot be laid out before the run")
    shape = spec.shape.to_shape()
    if axis is None:
        return _Output(None, shape, spec.element_type.dtype)
    if not rows or shape[axis] % rows:
        raise BatchError(f"output '{info.name}' has {shape[axis]} elements on its batch axis {axis} for a block of"
                         f" {rows} rows (a batch rule that does not keep rows)")
    return _Output(axis, shape, spec.element_type.dtype, shape[axis] // rows)


def _deciding_values(model: Model, arrays: list[da.Array], axes: list[int | None]) -> dict[str, np.ndarray] | None:
    """The values of the inputs that decide shapes (an axis fed at run time): computed now, as they are
    small; refused when they carry the batch axis (the plan would depend on each block's data)."""
    positions = model.inference.value_inputs
    if not positions:
        return None
    values = {}
    for position in positions:
        info = model.inputs[position]
        if axes[position] is not None:
            raise BatchError(f"input '{info.name}' decides shapes through its values and carries the batch axis:"
                             " blocks would not share one layout", hint="feed it without the batch axis")
        values[model.graph.parameters[position].id] = np.asarray(arrays[position].compute(scheduler="sync"))
    return values


# -- the task graph -------------------------------------------------------------------------------------


def _build(handle: ModelHandle, model: Model, arrays: list[da.Array], axes: list[int | None],
           layout: list[_Output]) -> dict[str, da.Array]:
    token = dask.base.tokenize(handle.key, *arrays, axes)
    pairs: list[Any] = [handle, None]
    for position, (array, axis) in enumerate(zip(arrays, axes)):
        pairs += [array, tuple("b" if d == axis else f"i{position}_{d}" for d in range(array.ndim))]
    blocks = da.blockwise(_run_block, ("b",), *pairs, concatenate=False, dtype=object,
                          meta=np.empty((0,), dtype=object), name=f"ir-run-{token}")
    outputs = {}
    for position, (info, (axis, shape, dtype, per_row)) in enumerate(zip(model.outputs, layout)):
        if axis is None:
            first = dask.delayed(operator.getitem)(blocks.to_delayed()[0], position)
            outputs[info.name] = da.from_delayed(first, shape, dtype=dtype, name=f"ir-run-{position}-{token}")
            continue
        index = tuple("b" if d == axis else f"o{d}" for d in range(len(shape)))
        outputs[info.name] = da.blockwise(
            operator.getitem, index, blocks, ("b",), position, None, dtype=dtype,
            new_axes={f"o{d}": n for d, n in enumerate(shape) if d != axis},
            adjust_chunks={"b": lambda rows, per_row=per_row: rows * per_row} if per_row != 1 else None,
            meta=np.empty((0,) * len(shape), dtype=dtype), name=f"ir-run-{position}-{token}")
    return outputs


def _run_block(handle: ModelHandle, *arrays) -> tuple[np.ndarray, ...]:
    """One block: the outputs of the model, in ``model.outputs`` order. The plan for the block's shapes is
    made once per process (the model caches it; the lock keeps two threads from making it twice)."""
    model = handle.get()
    arrays = [np.asarray(_single(array)) for array in arrays]
    with _plan_lock:
        model.plan_for(arrays)
    return tuple(model.run(arrays).values())


_plan_lock = threading.Lock()


def _single(block):
    """The one block blockwise passes, unwrapped from the nested lists of the axes it does not map (each has
    one chunk: concatenating them would copy the block)."""
    while isinstance(block, list):
        (block,) = block
    return block


# -- shipping the model ---------------------------------------------------------------------------------


class ModelHandle:
    """A model as tasks carry it: the Model itself in the process that made the handle; elsewhere (after
    pickling) how to load it again (absolute paths, or bytes, of its XML and weights; strict; memory
    limit), loaded once per process and kept under ``key``."""

    def __init__(self, key: str, recipe: tuple | None, model: Model | None = None) -> None:
        self.key = key
        self.recipe = recipe
        self._model = model

    @classmethod
    def of(cls, model: Model) -> ModelHandle:
        if model.source is None:
            return cls(f"model-{id(model)}", None, model)
        xml, weights = (_shippable(part) for part in (model.source, model.weights_source))
        if weights is None and isinstance(xml, str):
            weights = os.path.splitext(xml)[0] + ".bin"
        recipe = (xml, weights, model.strict, model.memory_limit)
        digest = hashlib.sha256()
        for part in (xml, weights):
            digest.update(_identity(part))
        digest.update(repr(recipe[2:]).encode())
        return cls(digest.hexdigest()[:32], recipe, model)

    def get(self) -> Model:
        if self._model is None:
            self._model = _loaded(self.key, self.recipe)
        return self._model

    def __reduce__(self):
        if self.recipe is None:
            raise UnsupportedError("this Model was not made by ir_runner.load, so other processes cannot load it",
                                   hint="pass the model's path, or use the threads scheduler")
        return ModelHandle, (self.key, self.recipe)


def _shippable(part: Any) -> str | bytes | None:
    if part is None or isinstance(part, bytes):
        return part
    if isinstance(part, (bytearray, memoryview)):
        return bytes(part)
    if isinstance(part, str) and part.lstrip().startswith("<"):
        return part.encode("utf-8")
    return os.path.abspath(os.fspath(part))


def _identity(part: str | bytes | None) -> bytes:
    """What makes a model file or its bytes the same: content hash for bytes; path, size and time for files."""
    if part is None:
        return b"-"
    if isinstance(part, bytes):
        return hashlib.sha256(part).digest()
    try:
        stat = os.stat(part)
    except OSError:
        return part.encode()
    return repr((part, stat.st_size, stat.st_mtime_ns)).encode()


_loaded_models: dict[str, Model] = {}
_load_lock = threading.Lock()


def _loaded(key: str, recipe: tuple) -> Model:
    """The model of ``recipe``, loaded once per process."""
    model = _loaded_models.get(key)
    if model is None:
        with _load_lock:
            model = _loaded_models.get(key)
            if model is None:
                xml, weights, strict, memory_limit = recipe
                model = load(xml, weights, strict=strict, memory_limit=memory_limit)
                _loaded_models[key] = model
    return model
