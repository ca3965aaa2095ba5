"""Binding a model's inputs from the command line (generated data comes from ``generate``).

``--input [NAME=]SOURCE``: SOURCE is a ``.npy``, a ``.npz`` (keys bound by name, or ``file.npz:key``),
a ``.json`` (nested lists, or an object of them by name), a raw ``.bin`` (element type and shape from
the model), or ``random`` / ``zeros`` / ``ones``. Names are matched against the model's input names
(tensor names and layer names), never with a pattern, so they may hold ``.``, ``/``, ``:`` or ``=``.
Unnamed sources fill the inputs not bound by name, in model order.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click
import numpy as np

from ..casting import CastRefused, cast_array, integer_bounds, weakest_level
from ..errors import InputError, ResourceLimitError
from ..model import DEFAULT_MEMORY_LIMIT, Model, TensorInfo, array_from_bytes
from ..record import Record
from ..types import NUMPY_MAX_RANK, PartialShape, TensorSpec, element_type_of, parse_partial_shape
from .common import flag
from .files import json_array, read_json, read_numpy, regular_file, split_key
from .options import KEYWORDS, InputOptions
from .shapes import bracketed, generated_shape


class Binding(Record):
    """One model input and the array bound to it."""

    __slots__ = ("info", "array", "source", "replay", "file", "cast")

    def __init__(self, info: TensorInfo, array: np.ndarray, source: str, replay: tuple[str, str],
                 file: str | None = None, cast: str | None = None) -> None:
        self.info = info
        self.array = array
        self.source = source
        self.replay = replay
        self.file = file
        self.cast = cast


class Bound(Record):
    """The (possibly reshaped) model and its bindings, in model input order."""

    __slots__ = ("model", "bindings", "seed")

    def __init__(self, model: Model, bindings: list[Binding], seed: int) -> None:
        self.model = model
        self.bindings = bindings
        self.seed = seed

    @property
    def arrays(self) -> list[np.ndarray]:
        return [b.array for b in self.bindings]


class _Source(Record):
    """A source before it is fitted to an input: loaded data, or a keyword to generate. ``kind`` is
    'array', 'json', 'bin', or one of KEYWORDS."""

    __slots__ = ("kind", "data", "description", "replay", "option", "file")

    def __init__(self, kind: str, data: Any = None, description: str = "", replay: str = "", option: str = "--input",
                 file: str | None = None) -> None:
        self.kind = kind
        self.data = data
        self.description = description
        self.replay = replay
        self.option = option
        self.file = file


class Names:
    """Every name an input answers to (tensor names, first name, layer name) -> its position."""

    def __init__(self, inputs: tuple[TensorInfo, ...]) -> None:
        self.inputs = inputs
        self.lookup: dict[str, int] = {}
        for index, info in enumerate(inputs):
            for name in (info.name, *info.names, info.layer_name):
                self.lookup.setdefault(name, index)

    def index(self, name: str) -> int | None:
        return self.lookup.get(name)

    def split(self, token: str) -> tuple[int, str] | None:
        """``NAME=REST`` where NAME is the longest prefix before a ``=`` that names an input."""
        best = None
        for position, char in enumerate(token):
            if char == "=" and token[:position] in self.lookup:
                best = (self.lookup[token[:position]], token[position + 1:])
        return best

    def unknown(self, name: str, option: str) -> InputError:
        from ..suggest import closest

        close = closest(name, self.lookup, cutoff=0.5)
        hint = f"did you mean '{close}'? " if close else ""
        return InputError(f"{option}: the model has no input named {name!r}", hint=hint + self.listing())

    def listing(self) -> str:
        return "the model's inputs are: " + "; ".join(str(info) for info in self.inputs)


def bind_inputs(model: Model, options: InputOptions) -> Bound:
    """Load, check and generate every input; reshape first when ``--shape`` is given."""
    names = Names(model.inputs)
    shapes = _named_values(options.shapes, names, "--shape", _partial_shape)
    if shapes:
        model = with_shapes(model, shapes)
        names = Names(model.inputs)
    data_shapes = _named_values(options.data_shapes, names, "--data-shape", _static_shape)
    ranges = _named_values(options.ranges, names, "--range", _range)
    slots: list[_Source | None] = [None] * len(model.inputs)
    positional: list[_Source] = []
    for token in options.inputs:
        for index, source in _input_sources(token, names):
            if index is None:
                positional.append(source)
            else:
                _assign(slots, index, source, model.inputs)
    for token in options.values:
        index, source = _value_source(token, names)
        _assign(slots, index, source, model.inputs)
    unbound = [i for i, slot in enumerate(slots) if slot is None]
    if len(positional) > len(unbound):
        raise InputError(
            f"{len(positional)} unnamed input source(s) given, but only {len(unbound)} input(s) are not bound by name",
            hint=names.listing(),
        )
    for index, source in zip(unbound, positional):
        slots[index] = source
    missing = [i for i, slot in enumerate(slots) if slot is None]
    if missing and options.fill == "error":
        listed = ", ".join(repr(model.inputs[i].name) for i in missing)
        raise InputError(
            f"no data given for input(s) {listed}",
            hint="bind each with --input NAME=FILE, or generate data: --input NAME=random (or --fill random). "
            + names.listing(),
        )
    for index in missing:
        slots[index] = _Source(options.fill, description=options.fill, replay=options.fill)
    return _resolve(model, slots, data_shapes, ranges, options)  # type: ignore[arg-type]


def with_shapes(model: Model, shapes: dict[int, PartialShape]) -> Model:
    """The model with some inputs' partial shapes replaced (OpenVINO's reshape), re-inferred."""
    specs = [TensorSpec(info.element_type, shapes.get(i, info.partial_shape)) for i, info in enumerate(model.inputs)]
    given = " ".join(flag("--shape", model.inputs[i].name, str(s)) for i, s in shapes.items())
    inference = model.inference_for(specs, context=f"with {given}")
    if inference is model.inference:
        return model
    reshaped = Model(model.graph, inference, strict=model.strict, memory_limit=model.memory_limit)
    reshaped.source, reshaped.weights_source = model.source, model.weights_source  # the same file
    return reshaped


# -- parsing the options --------------------------------------------------------------------------


def _named_values(tokens: tuple[str, ...], names: Names, option: str, parse) -> dict[int, Any]:
    result: dict[int, Any] = {}
    for token in tokens:
        split = names.split(token)
        if split is None:
            if "=" not in token:
                raise click.BadParameter(f"{token!r} is not NAME=VALUE", param_hint=option)
            raise names.unknown(token.partition("=")[0], option)
        index, text = split
        try:
            result[index] = parse(text)
        except ValueError as exc:
            raise click.BadParameter(f"{token!r}: {exc}", param_hint=option) from None
    return result


def _partial_shape(text: str) -> PartialShape:
    """``[1,?,3]``, ``[1,-1,3]``, ``[1,2..5,3]`` (brackets optional), as OpenVINO writes shapes."""
    return parse_partial_shape(text)


def _static_shape(text: str) -> tuple[int, ...]:
    shape = parse_partial_shape(text)
    if not shape.is_static:
        raise ValueError(f"a data shape must be concrete, got {shape.brief()}")
    if len(shape.dims) > NUMPY_MAX_RANK:
        raise ValueError(f"rank {len(shape.dims)} is above numpy's limit of {NUMPY_MAX_RANK} dims")
    return shape.to_shape()


def _range(text: str) -> tuple[float, float]:
    import json

    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        value = None
    if not (isinstance(value, list) and len(value) == 2 and all(_is_number(v) for v in value)):
        raise ValueError("a range is [LOW,HIGH], e.g. [0,9] or [-1.5,1.5]")
    lo, hi = value
    if lo > hi:
        raise ValueError(f"LOW {lo} is above HIGH {hi}")
    return lo, hi


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _input_sources(token: str, names: Names) -> list[tuple[int | None, _Source]]:
    split = names.split(token)
    if split is not None:
        index, text = split
        return [(index, _load(text))]
    if "=" in token and token not in KEYWORDS and not Path(split_key(token)[0]).is_file():
        raise names.unknown(token.partition("=")[0], "--input")
    source = _load(token)
    if isinstance(source.data, dict):
        return _by_key(source, names)
    return [(None, source)]


def _by_key(source: _Source, names: Names) -> list[tuple[int | None, _Source]]:
    """An unnamed .npz (or JSON object): keys are input names; ``np.savez(f, a, b)`` keys are positional."""
    keys = list(source.data)
    if keys and all(key == f"arr_{i}" for i, key in enumerate(keys)):
        return [(None, _keyed(source, key)) for key in keys]
    result = []
    for key in keys:
        index = names.index(key)
        if index is None:
            error = names.unknown(key, "--input")
            raise InputError(f"{source.description} has an array named {key!r}, which is not an input of the model",
                             hint=error.hint)
        result.append((index, _keyed(source, key)))
    return result


def _keyed(source: _Source, key: str) -> _Source:
    kind = "json" if source.kind == "json" else "array"
    return _Source(kind, source.data[key], f"{source.description}['{key}']", f"{source.replay}:{key}",
                   file=source.file)


def _load(text: str) -> _Source:
    if text in KEYWORDS:
        return _Source(text, description=text, replay=text)
    path, key = split_key(text)
    absolute = str(Path(path).resolve())
    suffix = Path(path).suffix.lower()
    if suffix == ".json":
        data = read_json(path)
        source = _Source("json", data, path, absolute, file=path)
    elif suffix == ".bin":
        regular_file(path)
        try:
            size = Path(path).stat().st_size
            if size > DEFAULT_MEMORY_LIMIT:
                raise ResourceLimitError(f"'{path}' holds {size} bytes, above the memory limit of"
                                         f" {DEFAULT_MEMORY_LIMIT} bytes for one input")
            raw = Path(path).read_bytes()
        except FileNotFoundError:
            raise InputError(f"the file '{path}' does not exist") from None
        except OSError as exc:
            raise InputError(f"cannot read '{path}': {exc.strerror}") from None
        return _Source("bin", raw, path, absolute, file=path)
    else:
        source = _Source("array", read_numpy(path, only=key), path, absolute, file=path)
    if key is not None:
        if not isinstance(source.data, dict) or key not in source.data:
            keys = ", ".join(source.data) if isinstance(source.data, dict) else "none (not a .npz)"
            raise InputError(f"'{path}' has no array named {key!r}; its keys: {keys}")
        return _keyed(source, key)
    return source


def _value_source(token: str, names: Names) -> tuple[int, _Source]:
    split = names.split(token)
    if split is None:
        if "=" not in token:
            raise click.BadParameter(f"{token!r} is not NAME=JSON", param_hint="--value")
        raise names.unknown(token.partition("=")[0], "--value")
    index, text = split
    import json

    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(f"{token!r}: the value is not JSON ({exc})", param_hint="--value") from None
    except RecursionError:
        raise InputError(f"--value {names.inputs[index].name}: the JSON nests too deeply to be an array") from None
    return index, _Source("json", data, "--value", text, option="--value")


def _assign(slots: list[_Source | None], index: int, source: _Source, inputs) -> None:
    previous = slots[index]
    if previous is not None:
        raise InputError(
            f"input '{inputs[index].name}' is bound twice: by {previous.description} and by {source.description}"
        )
    slots[index] = source


# -- fitting sources to inputs --------------------------------------------------------------------


def _resolve(model: Model, slots: list[_Source], data_shapes: dict[int, tuple[int, ...]],
             ranges: dict[int, tuple[float, float]], options: InputOptions) -> Bound:
    arrays: list[np.ndarray | None] = [None] * len(slots)
    casts: list[str | None] = [None] * len(slots)
    for index, (info, source) in enumerate(zip(model.inputs, slots)):
        if source.kind in KEYWORDS:
            continue
        arrays[index], casts[index] = _fit(model, index, source, data_shapes.get(index), options.cast)
        wanted = data_shapes.get(index)
        if wanted is not None and tuple(arrays[index].shape) != wanted:
            raise InputError(f"{flag('--data-shape', info.name, bracketed(wanted))}, but {source.description} has shape"
                             f" {list(arrays[index].shape)}")
    kinds = {i: source.kind for i, source in enumerate(slots) if source.kind in KEYWORDS}
    descriptions: dict[int, str] = {}
    if kinds:
        from .generate import generate_inputs

        descriptions = generate_inputs(model, arrays, kinds, data_shapes, ranges, options.seed)
    arrays = model.bind(arrays)  # the library's own checks (u1 values are 0 or 1)
    bindings = []
    for index, (info, source) in enumerate(zip(model.inputs, slots)):
        description = descriptions.get(index, source.description)
        if casts[index]:
            description += f" ({casts[index]})"
        bindings.append(Binding(info, arrays[index], description, (source.option, f"{info.name}={source.replay}"),
                                source.file, casts[index]))
    return Bound(model, bindings, options.seed)


def _fit(model: Model, position: int, source: _Source, data_shape, cast: str) -> tuple[np.ndarray, str | None]:
    info = model.inputs[position]
    where = source.description
    if source.kind == "bin":
        return _from_bin(model, position, source.data, where, data_shape), None
    if source.kind == "json":
        data = source.data
        if isinstance(data, dict):
            data = _single(info, data, where)
        array, note = _from_json(info, json_array(data, where), where), None
    else:
        data = source.data
        if isinstance(data, dict):
            data = _single(info, data, where)
        array, note = _cast(info, data, where, cast)
    if not info.partial_shape.accepts(array.shape):
        hint = None
        if info.partial_shape.rank is not None and info.partial_shape.rank != array.ndim:
            hint = f"the rank must be {info.partial_shape.rank}, the array has rank {array.ndim}"
        raise InputError(f"input '{info.name}' expects shape {info.partial_shape}, {where} has shape"
                         f" {list(array.shape)}", hint=hint)
    return array, note


def _single(info: TensorInfo, data: dict, where: str):
    """The array of a .npz/JSON object bound to one input: its only array, or the one named like it."""
    for name in (info.name, *info.names, info.layer_name):
        if name in data:
            return data[name]
    if len(data) == 1:
        return next(iter(data.values()))
    raise InputError(f"{where} holds {len(data)} arrays ({', '.join(data)}) and none is named '{info.name}'",
                     hint=f"pick one with FILE:KEY, e.g. --input {info.name}={where}:{next(iter(data))}")


def _cast(info: TensorInfo, array: np.ndarray, where: str, cast: str) -> tuple[np.ndarray, str | None]:
    """File data converted to the input's type as ``--cast`` allows (ir_runner.casting, the library's
    policy), with the note the binding table shows; refused with a hint naming a level that works."""
    expected = info.dtype
    if info.element_type.kind == "dynamic":
        if element_type_of(array.dtype) is None:
            raise InputError(f"{where} has dtype {array.dtype}, which is not an IR element type")
        return array, None
    if expected is None:
        raise InputError(f"input '{info.name}' has element type {info.element_type}, which ir-run cannot feed")
    if info.element_type.kind == "string":
        if array.dtype.kind not in "US":
            raise InputError(f"input '{info.name}' is string, {where} has dtype {array.dtype}",
                             hint="save text as a numpy str array: np.save(path, np.array(['a', 'b']))")
        return array, None  # (the model binds str and UTF-8 bytes)
    if array.dtype.kind == "V" and array.dtype.itemsize == expected.itemsize and expected.kind == "V":
        return array.view(expected), None  # bf16/f8 saved by np.save come back as raw bytes
    if array.dtype == expected:
        return array, None
    got = element_type_of(array.dtype)
    if got is None:
        raise InputError(f"input '{info.name}' is {info.element_type.name}, {where} has dtype {array.dtype},"
                         " which is not an IR element type")
    note = f"{got.name}->{info.element_type.name}"
    try:
        converted = cast_array(array, info.element_type, cast)
    except CastRefused as refused:
        level = weakest_level(array, info.element_type)
        why = "" if cast == "no" else f": {refused}"
        lossy = " (floats are truncated toward zero)" if level == "unsafe" and got.kind == "float" else ""
        raise InputError(f"input '{info.name}' is {info.element_type.name}, {where} holds {got.name}{why}",
                         hint=f"--cast {level} converts it{lossy}" if level else "convert the file") from None
    except TypeError:  # ml_dtypes has no int4 <-> uint4 conversion
        raise InputError(f"input '{info.name}' is {info.element_type.name}: numpy cannot convert {where}'s"
                         f" {got.name} to it", hint="save the data as int8 (or as the input's own type)") from None
    return converted, note + (" unsafe" if cast == "unsafe" else "")


def _from_json(info: TensorInfo, array: np.ndarray, where: str) -> np.ndarray:
    """JSON numbers into the input's type; integers must be whole and in range, booleans 0/1."""
    et = info.element_type
    if et.kind == "dynamic":
        return array
    if et.dtype is None:
        raise InputError(f"input '{info.name}' has element type {et}, which ir-run cannot feed")
    if (et.kind == "string") != (array.dtype.kind == "O") and array.size:  # (json_array: strings as objects)
        raise InputError(f"input '{info.name}' is {et.name}, {where} holds "
                         + ("numbers or booleans" if et.kind == "string" else "strings"))
    if et.kind == "string":
        return array if array.size else array.astype(str)  # (an empty list is float64)
    if et.kind in ("bool", "int", "uint"):
        if array.dtype.kind == "f" and array.size and not np.all(np.isfinite(array) & (array == np.trunc(array))):
            raise InputError(f"input '{info.name}' is {et.name}, {where} holds numbers that are not whole")
        if array.size:
            lo, hi = integer_bounds(info.element_type)
            low, high = array.min().item(), array.max().item()
            if low < lo or high > hi:
                raise InputError(f"input '{info.name}' is {et.name}, {where} holds values in [{low}, {high}],"
                                 f" outside [{lo}, {hi}]")
        if et.kind == "bool":
            return array != 0
        return array.astype(np.int64).astype(et.dtype) if array.dtype.kind == "f" else array.astype(et.dtype)
    return array.astype(et.dtype)


def _from_bin(model: Model, position: int, raw: bytes, where: str, data_shape) -> np.ndarray:
    info = model.inputs[position]
    et = info.element_type
    if et.dtype is None or et.kind == "string":
        raise InputError(f"input '{info.name}' has element type {et}: a raw .bin cannot be read for it",
                         hint="give strings with --value or a .npy of str" if et.kind == "string" else None)
    shape = generated_shape(info, data_shape)
    count = math.prod(shape)
    needed = -(-count * et.bits // 8)
    if len(raw) != needed:
        raise InputError(
            f"{where} has {len(raw)} bytes, but input '{info.name}' ({et.name}{PartialShape.of(shape)}) needs"
            f" {needed} bytes ({count} elements of {et.bits} bits)",
            hint="a raw .bin holds exactly the input's elements, in C order, without a header",
        )
    return array_from_bytes(model, position, raw, shape)
