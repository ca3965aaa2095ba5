"""StringTensorUnpack and StringTensorPack of openvino-tokenizers (``extension`` opset): the classes OpenVINO
serialises for string tensors when ``openvino_tokenizers`` is imported (deprecated there, kept for old IRs).
Written from ``string_tensor_unpack.cpp``, ``string_tensor_pack.hpp`` and ``utils.cpp`` (2026.4).

Both take ``mode``, of which only ``begins_ends`` exists (the core opset's layout, see
``toolkit/string_tensors.py``); the kernels are the core operations'. Differences from the core versions:

- Unpack's ``symbols`` is always ``[?]`` (the core's is static for constant strings), i32 begins and ends.
- Unpack also takes the legacy u8 packed strings: a 1-D u8 tensor holding the count ``n`` (i32), ``n + 1``
  offsets (i32) and the bytes. Its begins and ends (``[?]``) are the offsets as written, ``symbols`` the first
  ``offsets[n]`` bytes after the offsets (from the first byte even when ``offsets[0]`` is not 0). As in the
  C++, the offsets are not checked against each other (the operation reading the strings does that); ir-run
  refuses what the C++ would read past the tensor's end for (a count or offsets beyond it, a last offset
  outside the bytes) or fails on (a negative count), with an InputError.
- Pack is StringTensorPack-15 with ``mode``.
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError, ModelFormatError
from ...types import DYNAMIC_SHAPE, ELEMENT_TYPES
from ..api import Attr, OpContext, OpDef
from ..toolkit.string_tensors import infer_pack, pack, unpack
from ._ragged import FLAT, U8, string_specs

_STRING = ELEMENT_TYPES["string"]
_MODE = "begins_ends"


def _check_mode(ctx: OpContext) -> None:
    """Fail unless ``mode`` is ``begins_ends`` (compared exactly, as the C++ does)."""
    mode = ctx.attr("mode")
    if mode is not None and mode != _MODE:
        raise ModelFormatError(f"attribute {ctx.attr_shown('mode')} is not supported: only '{_MODE}' exists",
                               layer=ctx.ref, hint=f'write mode="{_MODE}"')


def infer_unpack(ctx: OpContext):
    _check_mode(ctx)
    data = ctx.inputs[0]
    if data.element_type == _STRING:
        shape = data.shape
    elif data.element_type == U8:
        if data.shape.rank not in (None, 1):
            ctx.fail(f"u8 data (legacy packed strings) must be 1-D, got {data.shape.brief()}", position=0)
        shape = FLAT
    elif data.element_type.kind == "dynamic":
        shape = DYNAMIC_SHAPE
    else:
        ctx.fail(f"data must be a string tensor or u8 packed strings, got {data.element_type}", position=0)
    return string_specs(shape), {}


def unpack_any(data: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """StringTensorUnpack (extension): (begins i32, ends i32, symbols u8) of a string tensor, or of legacy
    packed strings (a u8 tensor)."""
    return unpack_legacy(data) if data.dtype == np.uint8 else unpack(data)


def unpack_legacy(data: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The offsets (begins, ends) and bytes of legacy packed strings: count, ``count + 1`` offsets, bytes."""
    raw = data.tobytes()
    if len(raw) < 4:
        raise InputError(f"packed strings of {len(raw)} bytes cannot hold their count (4 bytes)")
    count = int(np.frombuffer(raw, "<i4", 1)[0])
    if count < 0:
        raise InputError(f"packed strings declare a count of {count}")
    header = 4 * (count + 2)
    if len(raw) < header:
        raise InputError(f"packed strings of {len(raw)} bytes cannot hold their count and {count + 1} offsets"
                         f" ({header} bytes)")
    offsets = np.frombuffer(raw, "<i4", count + 1, 4).astype(np.int32)
    total, available = int(offsets[-1]), len(raw) - header
    if not 0 <= total <= available:
        raise InputError(f"packed strings end at offset {total}, outside their {available} bytes")
    return offsets[:-1].copy(), offsets[1:].copy(), np.frombuffer(raw, np.uint8, total, header).copy()


def infer_pack_extension(ctx: OpContext):
    _check_mode(ctx)
    return infer_pack(ctx)


_MODE_ATTR = Attr("mode", _MODE, (_MODE,))

OPS = (
    OpDef("StringTensorUnpack", 1, 0, 0, ("data",), infer_unpack, unpack_any, domain="extension",
          attrs=(_MODE_ATTR,)),
    OpDef("StringTensorPack", 1, 0, 0, ("begins", "ends", "symbols"), infer_pack_extension, pack,
          domain="extension", attrs=(_MODE_ATTR,)),
)
