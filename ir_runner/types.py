"""Element types, dimensions and partial shapes, with OpenVINO's semantics.

An IR spells an element type in two ways: lowercase ``element_type`` on Parameter/Const ``<data>``
(``f32``, ``boolean``) and uppercase ``precision`` on ports (``FP32``, ``BOOL``). Both map to one
:class:`ElementType`. numpy has no bfloat16, float8 or 4-bit integers: ``ml_dtypes`` provides them,
imported on first use of such a type's ``dtype`` (it costs ~5 ms of every process start otherwise).
``u1``, ``u2``, ``u3`` and ``u6`` are unpacked to ``uint8`` (their values): numpy has no such types. ``nf4``
(NormalFloat, as NNCF compresses weights) is unpacked to ``uint8`` codes 0..15 that stand for the 16 f32
values of its :attr:`ElementType.table`; ``f4e2m1`` and ``f8e8m0`` are ml_dtypes' ``float4_e2m1fn`` and
``float8_e8m0fnu`` (bit for bit OpenVINO's, NaN 0xFF of f8e8m0 included).

A :class:`Dim` is an interval ``[lo, hi]`` (``hi`` is ``None`` when unbounded), as in OpenVINO's
``Dimension``; a :class:`PartialShape` is a tuple of dims, or ``None`` dims for a dynamic rank.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .errors import clip_text


class ElementType:
    """One IR element type: its IR name, port precision spelling, numpy dtype and bit width. Immutable.

    Compares equal to another ElementType of the same name and to any IR spelling of it
    (``et == "f32"``, ``et == "FP32"``).
    """

    name: str
    precision: str
    dtype: np.dtype | None
    bits: int
    kind: str  # 'float', 'int', 'uint', 'bool', 'string', 'dynamic'
    table: np.ndarray | None  # nf4: the f32 value of each code (the array holds codes); None for other types

    def __init__(self, name: str, precision: str, dtype: np.dtype | None, bits: int, kind: str,
                 table: np.ndarray | None = None) -> None:
        self.__dict__.update(name=name, precision=precision, dtype=dtype, bits=bits, kind=kind, table=table)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"ElementType is immutable (cannot set {name!r})")

    def __repr__(self) -> str:
        return (f"ElementType(name={self.name!r}, precision={self.precision!r}, dtype={self.dtype!r},"
                f" bits={self.bits}, kind={self.kind!r})")

    @property
    def is_packed(self) -> bool:
        """True for sub-byte types stored bit-packed in the .bin (u1, u2, u3, u4, u6, i4, nf4, f4e2m1)."""
        return self.bits < 8 and self.kind not in ("dynamic", "string")

    def byte_size(self, count: int) -> int:
        """Bytes that ``count`` elements take in the .bin and in OpenVINO's tensors: packed types fill whole
        groups of ``lcm(bits, 8)`` bits (u3: 3 bytes per 8 values, u6: 3 bytes per 4)."""
        group_bits = math.lcm(self.bits, 8)
        return -(-count * self.bits // group_bits) * (group_bits // 8)

    @property
    def code_limit(self) -> int | None:
        """The largest value an array of this type may hold when it is stored in a wider numpy type than its
        bits (u1..u6: ``2**bits - 1``; nf4: 15, its largest code); None otherwise."""
        if self.is_packed and self.dtype == np.uint8:
            return (1 << self.bits) - 1
        return None

    def __str__(self) -> str:
        return self.name

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if isinstance(other, ElementType):
            return self.name == other.name
        if isinstance(other, str):
            return element_type(other) is self
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.name)

    def __getattr__(self, attribute: str) -> np.dtype:
        """``dtype`` of an ml_dtypes type on first use (only called when the instance has no ``dtype`` yet)."""
        ml_name = self.__dict__.get("_ml_dtypes_name")
        if attribute != "dtype" or ml_name is None:
            raise AttributeError(f"'ElementType' object has no attribute {attribute!r}")
        import ml_dtypes

        dtype = self.__dict__["dtype"] = np.dtype(getattr(ml_dtypes, ml_name))
        return dtype


def _et(name: str, precision: str, dtype, bits: int, kind: str, table: np.ndarray | None = None) -> ElementType:
    """An element type; ``dtype`` may be the name of an ml_dtypes type (``"ml_dtypes.bfloat16"``), resolved lazily."""
    if isinstance(dtype, str):
        et = ElementType(name, precision, None, bits, kind)
        del et.__dict__["dtype"]  # so that the first ``et.dtype`` goes to __getattr__
        et.__dict__["_ml_dtypes_name"] = dtype.removeprefix("ml_dtypes.")
        return et
    return ElementType(name, precision, None if dtype is None else np.dtype(dtype), bits, kind, table)


def _read_only_table(values: list[float]) -> np.ndarray:
    table = np.array(values, dtype=np.float32)
    table.flags.writeable = False
    return table


NF4_TABLE = _read_only_table([
    -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
    -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
    0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0,
])
"""The NormalFloat-4 values of codes 0..15, as f32 (OpenVINO's ``ConvertNF4`` table, QLoRA's quantiles)."""


ELEMENT_TYPES: dict[str, ElementType] = {
    t.name: t
    for t in (
        _et("boolean", "BOOL", np.bool_, 8, "bool"),
        _et("f16", "FP16", np.float16, 16, "float"),
        _et("f32", "FP32", np.float32, 32, "float"),
        _et("f64", "FP64", np.float64, 64, "float"),
        _et("bf16", "BF16", "ml_dtypes.bfloat16", 16, "float"),
        _et("f8e4m3", "F8E4M3", "ml_dtypes.float8_e4m3fn", 8, "float"),
        _et("f8e5m2", "F8E5M2", "ml_dtypes.float8_e5m2", 8, "float"),
        _et("f8e8m0", "F8E8M0", "ml_dtypes.float8_e8m0fnu", 8, "float"),
        _et("f4e2m1", "F4E2M1", "ml_dtypes.float4_e2m1fn", 4, "float"),
        _et("nf4", "NF4", np.uint8, 4, "float", NF4_TABLE),
        _et("i4", "I4", "ml_dtypes.int4", 4, "int"),
        _et("i8", "I8", np.int8, 8, "int"),
        _et("i16", "I16", np.int16, 16, "int"),
        _et("i32", "I32", np.int32, 32, "int"),
        _et("i64", "I64", np.int64, 64, "int"),
        _et("u1", "BIN", np.uint8, 1, "uint"),  # (OpenVINO writes u1 ports as precision="BIN")
        _et("u2", "U2", np.uint8, 2, "uint"),
        _et("u3", "U3", np.uint8, 3, "uint"),
        _et("u4", "U4", "ml_dtypes.uint4", 4, "uint"),
        _et("u6", "U6", np.uint8, 6, "uint"),
        _et("u8", "U8", np.uint8, 8, "uint"),
        _et("u16", "U16", np.uint16, 16, "uint"),
        _et("u32", "U32", np.uint32, 32, "uint"),
        _et("u64", "U64", np.uint64, 64, "uint"),
        _et("string", "STRING", object, 0, "string"),  # object arrays of str (ir_runner.strings)
        _et("dynamic", "UNSPECIFIED", None, 0, "dynamic"),
    )
}

DYNAMIC = ELEMENT_TYPES["dynamic"]
BOOLEAN = ELEMENT_TYPES["boolean"]

_SPELLINGS: dict[str, ElementType] = {}
for _t in ELEMENT_TYPES.values():
    _SPELLINGS[_t.name] = _t
    _SPELLINGS[_t.precision.lower()] = _t
_SPELLINGS.update(
    {
        "bin": ELEMENT_TYPES["u1"],
        "bool": BOOLEAN,
        "undefined": DYNAMIC,
        "f8e4m3fn": ELEMENT_TYPES["f8e4m3"],
        "fp8e4m3": ELEMENT_TYPES["f8e4m3"],
        "fp8e5m2": ELEMENT_TYPES["f8e5m2"],
    }
)

_BY_DTYPE: dict[np.dtype, ElementType] = {}
for _t in ELEMENT_TYPES.values():
    if "_ml_dtypes_name" not in _t.__dict__ and _t.dtype is not None and not _t.is_packed:
        _BY_DTYPE.setdefault(_t.dtype, _t)


@functools.cache
def _by_ml_dtype() -> dict[np.dtype, ElementType]:
    return {t.dtype: t for t in ELEMENT_TYPES.values() if "_ml_dtypes_name" in t.__dict__}


def element_type(spelling: str) -> ElementType | None:
    """The element type for an IR spelling (``f32``, ``FP32``, ``boolean``, ``BOOL``...), any case.

    Returns None for a spelling that is not an IR element type.
    """
    return _SPELLINGS.get(spelling.strip().lower())


def element_type_of(dtype: np.dtype) -> ElementType | None:
    """The IR element type of a numpy dtype, or None when the IR has no such type."""
    dtype = np.dtype(dtype)
    found = _BY_DTYPE.get(dtype)
    if found is None and "ml_dtypes" in sys.modules:  # an ml_dtypes dtype exists only once it is imported
        found = _by_ml_dtype().get(dtype)
    return found


class Dim(NamedTuple):
    """A dimension: the interval ``[lo, hi]``; ``hi is None`` means unbounded. Static when lo == hi."""

    lo: int
    hi: int | None

    @property
    def is_static(self) -> bool:
        return self.lo == self.hi

    def contains(self, n: int) -> bool:
        return self.lo <= n and (self.hi is None or n <= self.hi)

    def __str__(self) -> str:
        if self.is_static:
            return str(self.lo)
        if self.hi is None:
            return "?" if self.lo == 0 else f"{self.lo}.."
        return f"..{self.hi}" if self.lo == 0 else f"{self.lo}..{self.hi}"


DYNAMIC_DIM = Dim(0, None)
MAX_DIM = 2**63 - 1  # OpenVINO's Dimension is int64, and numpy's largest dim is too
NUMPY_MAX_RANK = 64  # numpy 2's NPY_MAXDIMS (pyproject requires numpy>=2); OpenVINO has no limit
MESSAGE_DIMS = 12  # a message shows at most this many dims of a shape (a hostile IR may declare a million)


def merge_dims(a: Dim, b: Dim) -> Dim | None:
    """The intersection of two dims, or None when they cannot be equal."""
    lo = max(a.lo, b.lo)
    if a.hi is None:
        hi = b.hi
    elif b.hi is None:
        hi = a.hi
    else:
        hi = min(a.hi, b.hi)
    if hi is not None and lo > hi:
        return None
    return Dim(lo, hi)


def broadcast_dims(a: Dim, b: Dim) -> Dim | None:
    """numpy-style broadcast of two dims (OpenVINO's ``Dimension::broadcast_merge``), None if impossible."""
    a_has_1, b_has_1 = a.contains(1), b.contains(1)
    if a_has_1 and b_has_1:
        hi = None if a.hi is None or b.hi is None else max(a.hi, b.hi)
        return Dim(min(a.lo, b.lo), hi)
    if a_has_1:
        return b
    if b_has_1:
        return a
    return merge_dims(a, b)


class PartialShape:
    """A shape whose rank (``dims is None``) or dims may be dynamic. Immutable; equal when the dims are."""

    __slots__ = ("dims", "is_static", "_port_dims")
    dims: tuple[Dim, ...] | None
    is_static: bool

    def __init__(self, dims: tuple[Dim, ...] | None) -> None:
        object.__setattr__(self, "dims", dims)
        object.__setattr__(self, "is_static", dims is not None and all(d.lo == d.hi for d in dims))

    @property
    def port_dims(self) -> tuple[int | None, ...] | None:
        """The ``<dim>``s a port declares for exactly this shape: ``n`` for a static dim, -1 for a fully
        dynamic one, None for a bounded interval (no port declares that); None for a dynamic rank.
        Computed once per shape (ports are compared with it by the hundred thousand in large IRs)."""
        try:
            return self._port_dims
        except AttributeError:
            value = None if self.dims is None else tuple(
                d.lo if d.lo == d.hi else -1 if d == DYNAMIC_DIM else None for d in self.dims
            )
            object.__setattr__(self, "_port_dims", value)
            return value

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"PartialShape is immutable (cannot set {name!r})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PartialShape):
            return NotImplemented
        return self.dims == other.dims

    def __hash__(self) -> int:
        return hash(self.dims)

    def __repr__(self) -> str:
        return f"PartialShape(dims={self.dims!r})"

    def __reduce__(self):
        return PartialShape, (self.dims,)

    @staticmethod
    def of(shape) -> PartialShape:
        """A static partial shape from a sequence of ints."""
        return PartialShape(tuple(Dim(int(n), int(n)) for n in shape))

    @staticmethod
    @functools.lru_cache(maxsize=4096)
    def from_port_dims(dims: tuple[int, ...]) -> PartialShape:
        """A port's declared dims, where -1 is a dynamic dim."""
        return PartialShape(tuple(DYNAMIC_DIM if d == -1 else Dim(d, d) for d in dims))

    @property
    def rank(self) -> int | None:
        return None if self.dims is None else len(self.dims)

    def to_shape(self) -> tuple[int, ...]:
        """The concrete shape; only valid when :attr:`is_static`."""
        assert self.dims is not None
        return tuple(d.lo for d in self.dims)

    def to_tuple(self) -> tuple[int | None, ...] | None:
        """A tuple with None for each non-static dim, or None for a dynamic rank."""
        if self.dims is None:
            return None
        return tuple(d.lo if d.is_static else None for d in self.dims)

    def accepts(self, shape: tuple[int, ...]) -> bool:
        """True when a concrete shape fits this partial shape."""
        if self.dims is None:
            return True
        return len(shape) == len(self.dims) and all(d.contains(n) for d, n in zip(self.dims, shape))

    def __str__(self) -> str:
        if self.dims is None:
            return "[...]"
        return "[" + ",".join(str(d) for d in self.dims) + "]"

    def brief(self) -> str:
        """``str(self)`` for a message: past MESSAGE_DIMS dims, the first ones and the rank."""
        return "[...]" if self.dims is None else f"[{dims_text(self.dims)}]"


def dims_text(dims: Sequence[object], separator: str = ",") -> str:
    """Dims joined for a message, at most MESSAGE_DIMS of them: ``1,2,3`` or ``1,1,...,1,... (rank 100000)``."""
    if len(dims) <= MESSAGE_DIMS:
        return separator.join(map(str, dims))
    return f"{separator.join(map(str, dims[:MESSAGE_DIMS]))}{separator}... (rank {len(dims)})"


DYNAMIC_SHAPE = PartialShape(None)


def parse_dim(text: str) -> Dim:
    """Parse one dim as OpenVINO writes it: ``3``, ``?``, ``-1``, ``1..10``, ``2..``, ``..5``.

    Raises ValueError for anything else, and for a bound above MAX_DIM.
    """
    text = text.strip()
    if text in ("?", "-1"):
        return DYNAMIC_DIM
    if ".." in text:
        lo_text, hi_text = text.split("..", 1)
        lo = _non_negative(lo_text) if lo_text.strip() else 0
        hi = _non_negative(hi_text) if hi_text.strip() else None
        if hi is not None and lo > hi:
            raise ValueError(f"empty interval {clip_text(text)!r}")
        return Dim(lo, hi)
    n = _non_negative(text)
    return Dim(n, n)


def _non_negative(text: str) -> int:
    text = text.strip()
    value = decimal_int(text, 19)  # MAX_DIM's digits
    if value is None or value > MAX_DIM:
        shown = repr(text) if len(text) <= 40 else f"a text of {len(text)} characters"
        raise ValueError(f"{shown} is not an integer in 0..{MAX_DIM}")
    return value


def decimal_int(text: str, max_digits: int) -> int | None:
    """``int(text)`` when ``text`` is 1..``max_digits`` ASCII decimal digits (no sign, no spaces), else None.

    The bound keeps ``int()`` clear of Python's 4300-digit limit (a ValueError) and of its quadratic cost.
    """
    if len(text) <= max_digits and text.isascii() and text.isdigit():
        return int(text)
    return None


def parse_partial_shape(text: str) -> PartialShape:
    """Parse a Parameter ``shape`` attribute: ``2,3``, ``?,1..10``, ``...`` (dynamic rank), ``""`` (scalar).

    Brackets are accepted (``[1,?,3]``). Raises ValueError for anything else.
    """
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1].strip()
    if text == "...":
        return DYNAMIC_SHAPE
    if text == "":
        return PartialShape(())
    return PartialShape(tuple(parse_dim(part) for part in text.split(",")))


class TensorSpec(NamedTuple):
    """What is known about a tensor before running: its element type and partial shape."""

    element_type: ElementType
    shape: PartialShape

    def __str__(self) -> str:
        return f"{self.element_type.name}{self.shape}"

    def brief(self) -> str:
        """``str(self)`` for a message (see :meth:`PartialShape.brief`)."""
        return f"{self.element_type.name}{self.shape.brief()}"
