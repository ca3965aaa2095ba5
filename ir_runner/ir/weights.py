"""The weights (.bin) of a model, memory-mapped read-only, and Const data viewed from it.

Const arrays are read-only ``np.frombuffer`` views of the mapping: loading costs O(1) in the file's size. As in
OpenVINO, a Const's ``offset`` + ``size`` must lie within the weights, whatever its shape. Bit-packed types stay
packed in the weights until a Const's value is first read (:class:`PackedConst`: constant folding, the inference of
a layer that reads constant values, a plan's constants), then are unpacked once per model into a new array (kept by
:class:`Weights`, shared by every inference of the model). They are read as OpenVINO packs them (measured on its
``.bin``): u1 most significant bit first; u2 and the 4-bit types (u4, i4, nf4, f4e2m1) lowest bits first; u3 in
groups of 8 values in 3 bytes (two bytes of their low 2 bits, then one of their high bits, each most significant
first); u6 in groups of 4 values in 3 bytes (two bytes of their low 4 bits, high nibble first, then one of their
high 2 bits, most significant first). Boolean bytes are kept as stored: every kernel treats any non-zero byte as
true, and Convert reads the byte as a signed char, as OpenVINO does. A string Const is unpacked at load from
OpenVINO's packed layout (count, offsets, bytes; :mod:`ir_runner.strings`), its offsets checked against its size.
"""

from __future__ import annotations

import math
import mmap
import os
import stat
from pathlib import Path

import numpy as np

from ..errors import LayerRef, ModelFormatError, WeightsFileNotFoundError, clip_text
from ..strings import decode_const
from ..types import ElementType, PartialShape


class Weights:
    """A lazily opened, read-only byte source: a file path, bytes, or nothing at all."""

    def __init__(self, source: str | os.PathLike | bytes | bytearray | memoryview | None) -> None:
        self._path = None if source is None or isinstance(source, (bytes, bytearray, memoryview)) else Path(source)
        self._buffer: memoryview | None = None
        if isinstance(source, (bytes, bytearray, memoryview)):
            view = memoryview(source)
            self._buffer = (view if view.c_contiguous else memoryview(view.tobytes())).cast("B")
        self._missing = source is None
        self._unpacked: dict[tuple[int, str, tuple[int, ...]], np.ndarray] = {}

    @property
    def missing(self) -> bool:
        """True when there are no weights at all (an XML given in memory, without weights)."""
        return self._missing

    @property
    def path(self) -> Path | None:
        """The file the weights are read from (None for bytes, or no weights)."""
        return self._path

    @property
    def description(self) -> str:
        if self._path is not None:
            return f"weights file '{self._path}'"
        return "the weights given as bytes" if self._buffer is not None else "no weights"

    def const(self, layer: LayerRef, element_type: ElementType, shape: PartialShape, offset: int,
              size: int) -> np.ndarray | PackedConst:
        """The read-only array a Const of these weights describes (:func:`const_array`): what an operation that
        reads the weights (Const) calls, so that it needs no import of the reader."""
        return const_array(layer, element_type, shape, offset, size, self)

    def buffer(self, needed_by: LayerRef) -> memoryview:
        """The whole content; opens and maps the file on first use."""
        if self._buffer is None:
            if self._missing:
                raise ModelFormatError(
                    "this Const needs weights, but none were given",
                    layer=needed_by,
                    hint="pass the .bin file: load(xml, weights='model.bin') or --weights",
                )
            self._buffer = _map_file(self._path, needed_by)
        return self._buffer

    def unpacked(self, offset: int, element_type: ElementType, dims: tuple[int, ...]) -> np.ndarray:
        """The read-only unpacked values of the bit-packed Const at ``offset`` (bounds already checked), unpacked on
        the first call and kept: one array per Const for the model's lifetime."""
        key = (offset, element_type.name, dims)
        found = self._unpacked.get(key)
        if found is None:
            count = math.prod(dims)
            raw = np.frombuffer(self._buffer, dtype=np.uint8, count=element_type.byte_size(count), offset=offset)
            found = self._unpacked.setdefault(key, _read_only(_unpack(raw, element_type, count).reshape(dims)))
        return found


class PackedConst:
    """A bit-packed Const's value, still packed in the weights: :meth:`array` unpacks it (once per model)."""

    __slots__ = ("_weights", "_offset", "element_type", "shape")

    def __init__(self, weights: Weights, offset: int, element_type: ElementType, shape: tuple[int, ...]) -> None:
        self._weights, self._offset = weights, offset
        self.element_type, self.shape = element_type, shape

    def array(self) -> np.ndarray:
        """The values, one numpy element each (read-only)."""
        return self._weights.unpacked(self._offset, self.element_type, self.shape)

    def __repr__(self) -> str:
        return f"<packed {self.element_type.name}{list(self.shape)} at offset {self._offset}>"


def const_value(value: np.ndarray | PackedConst) -> np.ndarray:
    """A Const layer's value (its ``value`` parameter) as an array, unpacked if still packed."""
    return value.array() if type(value) is PackedConst else value


WEIGHTS_HINT = "put the .bin next to the .xml with the same stem, or pass weights= / --weights"


def _map_file(path: Path, needed_by: LayerRef) -> memoryview:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise ModelFormatError(f"the weights '{path}' are not a regular file (a device, FIFO, socket or directory)",
                                   layer=needed_by)
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size == 0:
                return memoryview(b"")
            return memoryview(mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ))
    except FileNotFoundError:
        missing = WeightsFileNotFoundError(
            f"the weights file '{path}' does not exist, and this Const needs it",
            layer=needed_by,
            hint=WEIGHTS_HINT,
        )
        missing.weights_path = str(path)
        raise missing from None
    except OSError as exc:
        raise ModelFormatError(f"cannot read the weights file '{path}': {exc.strerror}", layer=needed_by) from None


def const_array(
    layer: LayerRef, element_type: ElementType, shape: PartialShape, offset: int, size: int, weights: Weights
) -> np.ndarray | PackedConst:
    """The read-only array a Const describes, checked against the bounds of the weights; a bit-packed type's
    non-empty value stays packed (a :class:`PackedConst`; :func:`const_value` gives its array)."""
    if element_type.kind == "string":
        return _string_const(layer, shape, offset, size, weights)
    if element_type.dtype is None:
        raise ModelFormatError(f"a Const cannot have element type '{element_type.name}'", layer=layer)
    dims = shape.to_shape()
    count = math.prod(dims)
    needed = element_type.byte_size(count)
    if size < needed:
        raise ModelFormatError(
            f"size={size} bytes is too small for {element_type.name}{shape.brief()}:"
            f" it needs {clip_text(str(needed))} bytes",
            layer=layer,
        )
    # no weights at all (an XML in memory, weights=None) are 0 bytes for a Const that reads nothing
    data = None if count == 0 and weights.missing else weights.buffer(layer)
    length = 0 if data is None else len(data)
    if offset + size > length and data is None:
        raise ModelFormatError(f"offset={offset} + {size} bytes: no weights were given (0 bytes)", layer=layer,
                               hint='pass the weights, or write offset="0" size="0" for a Const of no elements')
    if offset + size > length:  # OpenVINO's check, also when count == 0 or size > needed
        raise ModelFormatError(
            f"offset={offset} + {size} bytes lies outside {weights.description} ({length} bytes)",
            layer=layer,
            hint="the .bin does not belong to this .xml, or it is truncated" if offset + needed > length else
            f"the {needed} bytes of {element_type.name}{shape.brief()} fit, but OpenVINO refuses a size that runs past"
            f" the end too: write size=\"{needed}\"",
        )
    if count == 0:
        try:
            return _read_only(np.zeros(dims, dtype=element_type.dtype))
        except ValueError:  # numpy refuses shapes whose non-zero dims multiply past its largest array
            raise ModelFormatError(
                f"{element_type.name}{shape.brief()} has no elements, but its other dims multiply beyond the largest"
                " array numpy can describe",
                layer=layer,
            ) from None
    if element_type.is_packed:
        return PackedConst(weights, offset, element_type, dims)
    return _read_only(np.ndarray(dims, element_type.dtype, data, offset))  # a view; 3x faster than frombuffer


def _string_const(layer: LayerRef, shape: PartialShape, offset: int, size: int, weights: Weights) -> np.ndarray:
    """A string Const's object array, read from OpenVINO's packed layout (see :mod:`ir_runner.strings`)."""
    data = weights.buffer(layer)
    if offset + size > len(data):
        raise ModelFormatError(f"offset={offset} + {size} bytes lies outside {weights.description} ({len(data)} bytes)",
                               layer=layer, hint="the .bin does not belong to this .xml, or it is truncated")
    try:
        return _read_only(decode_const(data[offset:offset + size], shape.to_shape()))
    except ValueError as exc:
        raise ModelFormatError(f"string{shape.brief()} at offset={offset}, size={size}: {exc}", layer=layer) from None


def _unpack(raw: np.ndarray, element_type: ElementType, count: int) -> np.ndarray:
    bits = element_type.bits
    if bits == 1:
        return np.unpackbits(raw, bitorder="big")[:count]
    if bits == 3:  # per 3 bytes: 8 low crumbs, then 8 high bits
        groups = raw.reshape(-1, 3)
        low = _fields(groups[:, :2], 2, lowest_first=False).reshape(-1, 8)
        high = np.unpackbits(groups[:, 2:], axis=1, bitorder="big")
        return (low | high << 2).reshape(-1)[:count]
    if bits == 6:  # per 3 bytes: 4 low nibbles, then 4 high crumbs
        groups = raw.reshape(-1, 3)
        low = _fields(groups[:, :2], 4, lowest_first=False).reshape(-1, 4)
        high = _fields(groups[:, 2:], 2, lowest_first=False).reshape(-1, 4)
        return (low | high << 4).reshape(-1)[:count]
    values = _fields(raw, bits, lowest_first=True).reshape(-1)[:count]
    if element_type.kind == "int":  # i4: sign-extended
        return (values.astype(np.int8) << 4 >> 4).astype(element_type.dtype)
    return values if element_type.dtype == np.uint8 else values.view(element_type.dtype)


def _fields(raw: np.ndarray, bits: int, *, lowest_first: bool) -> np.ndarray:
    """The ``bits``-wide fields of each byte (uint8), on a new last axis, in the byte's order or reversed."""
    shifts = np.arange(0, 8, bits, dtype=np.uint8)
    if not lowest_first:
        shifts = shifts[::-1]
    return (raw[..., None] >> shifts) & np.uint8((1 << bits) - 1)


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array
