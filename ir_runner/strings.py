"""String tensors: the facts of element type ``string`` in one place.

Inside a run a string tensor is a numpy object array of Python ``str``. Text is UTF-8; bytes that are not
valid UTF-8 are kept through ``surrogateescape``, so every byte string OpenVINO can hold round-trips.
Inputs may be numpy unicode (``<U..``), bytes (``S..``, decoded as UTF-8) or object arrays of ``str``/``bytes``;
outputs are numpy unicode arrays, as OpenVINO's Python API returns them (numpy's ``<U`` drops trailing NUL
characters, in OpenVINO's outputs as in ours; invalid UTF-8 becomes U+FFFD there, see :func:`to_output`).

A string Const is stored in the ``.bin`` as OpenVINO writes it (measured with ``ov.save_model``), all little
endian i32: the element count, then count + 1 offsets (the first 0), then the bytes; element ``i`` is
``bytes[offsets[i]:offsets[i + 1]]``.
"""

from __future__ import annotations

import numpy as np

_HEADER = np.dtype("<i4")


def decode(raw: bytes) -> str:
    """The str of one element's bytes (invalid UTF-8 kept as surrogates)."""
    return raw.decode("utf-8", "surrogateescape")


def encode(text: str) -> bytes:
    """One element's bytes (the inverse of :func:`decode`)."""
    return text.encode("utf-8", "surrogateescape")


def from_items(items: list, shape: tuple[int, ...]) -> np.ndarray:
    """An object array of ``shape`` holding ``items`` (str) in C order."""
    array = np.empty(len(items), dtype=object)
    array[:] = items
    return array.reshape(shape)


def as_strings(array: np.ndarray) -> np.ndarray | None:
    """``array`` (unicode, bytes or object of str/bytes) as an object array of str; None when it is not text."""
    if array.dtype.kind == "U":
        return from_items([str(x) for x in array.ravel().tolist()], array.shape)
    if array.dtype.kind == "S":
        return from_items([decode(x) for x in array.ravel().tolist()], array.shape)
    if array.dtype.kind == "O":
        items = array.ravel().tolist()
        if all(isinstance(x, str) for x in items):
            return from_items(items, array.shape)
        if all(isinstance(x, (str, bytes)) for x in items):
            return from_items([x if isinstance(x, str) else decode(x) for x in items], array.shape)
    return None


def to_output(array: np.ndarray) -> np.ndarray:
    """The numpy unicode array that a run returns for a string tensor. Bytes that are not valid UTF-8 become
    U+FFFD, as in OpenVINO's Python API outputs (measured: ``b"ab\\xffd"`` gives ``"ab\\ufffdd"``)."""
    items = array.ravel().tolist()
    try:
        "".join(items).encode("utf-8")
    except UnicodeEncodeError:  # surrogates: bytes kept through surrogateescape
        items = [encode(x).decode("utf-8", "replace") for x in items]
        return np.array(items, dtype=str).reshape(array.shape) if items else array.astype(str)
    return array.astype(str)


def encode_const(array: np.ndarray) -> bytes:
    """The ``.bin`` bytes of a string Const holding ``array`` (count, offsets, bytes)."""
    encoded = [encode(x) for x in np.asarray(array, dtype=object).ravel().tolist()]
    offsets = np.zeros(len(encoded) + 1, dtype=_HEADER)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return np.array([len(encoded)], _HEADER).tobytes() + offsets.tobytes() + b"".join(encoded)


def decode_const(data: memoryview, shape: tuple[int, ...]) -> np.ndarray:
    """The object array of ``shape`` that a string Const's bytes ``data`` (its offset..offset + size) hold.

    Raises ValueError with the reason when the layout is inconsistent: too short, a count that is not the
    shape's, offsets that decrease or run past the bytes.
    """
    expected = int(np.prod(shape, dtype=np.int64))
    if len(data) < 4:
        raise ValueError(f"{len(data)} bytes cannot hold the element count (4 bytes)")
    count = int(np.frombuffer(data, _HEADER, 1)[0])
    if count != expected:
        raise ValueError(f"the packed strings declare {count} elements, the shape has {expected}")
    header = 4 * (count + 2)
    if len(data) < header:
        raise ValueError(f"{len(data)} bytes cannot hold the count and {count + 1} offsets ({header} bytes)")
    offsets = np.frombuffer(data, _HEADER, count + 1, 4).astype(np.int64)
    available = len(data) - header
    if offsets[0] < 0 or np.any(np.diff(offsets) < 0) or offsets[-1] > available:
        bad = int(np.argmax((offsets < 0) | (offsets > available) | np.r_[False, np.diff(offsets) < 0]))
        raise ValueError(f"offset {bad} is {int(offsets[bad])}: offsets must rise from 0 within the"
                         f" {available} bytes of text")
    text = bytes(data[header:])
    return from_items([decode(text[a:b]) for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())], shape)
