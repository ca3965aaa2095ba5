"""The C library's functions as OpenVINO's reference calls them, bit for bit: on f32 values ``expf`` and
``map_expf`` (an f32 function of ``expf`` over cache-sized blocks; near rounding ties, glibc's ``expf``
computed by :mod:`.glibc_expf` or read through ctypes) and ``libm`` (a call computed in double and rounded to
f32); on f64 values ``exp_double``. :func:`c_function` is the one loader of the C library's functions."""

from __future__ import annotations

import functools
import platform
from collections.abc import Callable

import numpy as np

from ...parallel import run_by_cost
from .glibc_expf import glibc_expf

F32 = np.float32
F64 = np.float64


def libm(fn: np.ufunc, x: np.ndarray) -> np.ndarray:
    """A C library call of the reference on f32 values (``logf``, ``tanhf``): computed in double, rounded to
    f32 (within 1 ULP of the C library's)."""
    return fn(x.astype(F64)).astype(F32)


_EXPF_NEAR_TIE = 0.4975
_F32_TINY = 2.0 ** -126  # below it expf's result is subnormal: its rounding drops more than 29 bits of a double
_DROPPED = np.int64((1 << 29) - 1)  # the bits of a double's significand that rounding to f32 drops
_TIE_WINDOW = round((1 - 2 * _EXPF_NEAR_TIE) / 2 * (1 << 29))  # 0.0025 ULP of f32, in ULPs of f64
_WINDOW_START = np.int64((1 << 28) - _TIE_WINDOW)  # the dropped bits at a rounding tie are 1 << 28
_WINDOW_SIZE = np.uint64(2 * _TIE_WINDOW)
_F32_TINY_BITS = np.float64(_F32_TINY).view(np.int64)
_AT_TIE = np.int64(1 << 28)  # the bits of a double at a tie (the dropped bits alone)
_TOP_18 = np.int64((1 << 18) - 1)  # the significand's top 18 bits, below the implicit 1
EXPF_BLOCK = 1 << 16  # elements per block (1.3 MB of buffers): 64K measured best, 32K and 128K within 10%


def expf(x: np.ndarray) -> np.ndarray:
    """The C library's ``expf`` on f32 values, as the reference calls it (see :func:`map_expf`)."""
    x = np.asarray(x, dtype=F32)
    result = np.empty(x.shape, dtype=F32)
    map_expf(x, result)
    return result


EXPF_NS = 3.5  # one thread's time an element of map_expf with a finish (Swish, Sigmoid: 3-4 ns measured)
Finish = Callable[[np.ndarray, np.ndarray, np.ndarray], None]


def map_expf(x: np.ndarray, out: np.ndarray, finish: Finish | None = None, *, negate: bool = False,
             scale: np.ndarray | None = None) -> None:
    """``out = finish(x, e, out)`` with ``e`` the C library's ``expf`` of ``a = x`` (``x * scale`` rounded to
    f32 when ``scale`` is given, negated when ``negate``), over f32 ``x`` and ``out`` of one shape; no
    ``finish``: ``out = e``. ``finish`` computes an elementwise f32 function of ``x`` and ``e`` into its third
    argument (and may overwrite ``e``). ``out`` may be ``x`` (``finish`` must then read ``x`` before writing
    ``out``).

    ``expf`` bit for bit: ``exp`` in double rounded to f32, except where that lies near a rounding tie, which take
    the C library's own ``expf`` (:func:`_exact_expf`: glibc's method computed with numpy, or ctypes). Near: within
    1.75·2^-34 of the value (glibc's expf computes a double within 1.69·2^-34 relative error before rounding, so
    only there can it round the other way; at most 0.0017 ULP of f32); subnormal results: within 0.0025 ULP of f32
    (its spacing). The distance to a tie is read from the 29 bits of the double that rounding drops, first against
    the widest window (0.0025 ULP) and then, for those inside, against the relative bound; infinities and NaNs (from
    f32 data) have none of them set, so they are never near a tie.

    Computed in blocks of EXPF_BLOCK elements through reused buffers (the argument and ``exp`` in double, the
    bits, the mask, ``e``): every pass, ``finish``'s included, reads from cache and no full-size temporary is
    made. The elements near a tie are finished with a provisional ``e`` and recomputed at the end of a run of
    blocks, all at once (:func:`_exact_expf`); tensors whose work is long enough are cut into such runs over threads
    (:func:`~ir_runner.parallel.run_by_cost`)."""
    if x.size == 0:
        return
    flat_x = np.ascontiguousarray(x).reshape(-1)
    direct = out.flags.c_contiguous
    flat = out.reshape(-1) if direct else np.empty(x.size, F32)
    if finish is None and np.may_share_memory(flat_x, flat):
        finish = _copy_e  # (``e`` written over ``x`` would lose the near ties' arguments before they are read)
    work = _Blocks(flat_x, flat, finish, negate, scale)
    if flat.size <= EXPF_BLOCK:
        work.blocks(0, 1)  # (in the caller's floating-point error state, as numpy's own functions)
    else:
        run_by_cost(flat.size * EXPF_NS, -(-flat.size // EXPF_BLOCK), work.run)
    if not direct:
        out[...] = flat.reshape(out.shape)


def _copy_e(x: np.ndarray, e: np.ndarray, out: np.ndarray) -> None:
    """The finish of a plain ``expf`` written over its own argument: ``e`` into ``out``."""
    np.copyto(out, e)


class _Blocks:
    """The blocks of one :func:`map_expf` call (``run(start, stop)``: blocks start..stop, then their fix-ups)."""

    def __init__(self, x: np.ndarray, out: np.ndarray, finish: Finish | None, negate: bool,
                 scale: np.ndarray | None) -> None:
        self.x, self.out, self.finish, self.negate, self.scale = x, out, finish, negate, scale

    def argument(self, x: np.ndarray, out: np.ndarray | None = None, narrow: np.ndarray | None = None) -> np.ndarray:
        """``a`` of the f32 values ``x``, in f32: ``x`` itself, or into ``out`` when negated (a new array
        without it); ``narrow``: an f32 buffer for ``x * scale``."""
        if self.scale is not None:
            x = np.multiply(x, self.scale, out=narrow)
        return np.negative(x, out=out) if self.negate else x

    def run(self, start: int, stop: int) -> None:
        """:meth:`blocks`, floating-point errors ignored (in every piece, whatever the caller's state)."""
        with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
            self.blocks(start, stop)

    def blocks(self, start: int, stop: int) -> None:
        size = min(self.x.size - start * EXPF_BLOCK, EXPF_BLOCK)
        wide, bits, mask = np.empty(size, F64), np.empty(size, np.int64), np.empty(size, bool)
        e = np.empty(size, F32) if self.finish is not None else None
        narrow = np.empty(size, F32) if self.scale is not None else None
        fixes: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        exact = c_function("expf") is not None
        for lo in range(start * EXPF_BLOCK, min(stop * EXPF_BLOCK, self.x.size), EXPF_BLOCK):
            hi = min(lo + EXPF_BLOCK, self.x.size)
            count = hi - lo
            x, out = self.x[lo:hi], self.out[lo:hi]
            w = wide[:count]
            block_e = out if e is None else e[:count]
            np.copyto(w, self.argument(x, block_e, None if narrow is None else narrow[:count]))
            np.exp(w, out=w)
            np.copyto(block_e, w, casting="same_kind")
            if exact:
                near, near_bits = _near_ties(w, block_e, bits[:count], mask[:count])
                if near.size:
                    fixes.append((near + lo, x[near], near_bits))
            if self.finish is not None:
                self.finish(x, block_e, out)
        if fixes:
            where, x, near_bits = fixes[0] if len(fixes) == 1 else (np.concatenate(p) for p in zip(*fixes))
            if where.size > _FILTER_MIN:
                close = _within_error(near_bits)
                where, x = where[close], x[close]
            values = _exact_expf(self.argument(x))
            if self.finish is None:
                self.out[where] = values
            else:
                result = np.empty(where.size, F32)
                self.finish(x, values, result)
                self.out[where] = result


def _near_ties(w: np.ndarray, rounded: np.ndarray, b: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions where ``w``, an ``exp`` in double, may lie near an f32 rounding tie (see
    :func:`map_expf`), and the bits of their doubles for :func:`_within_error` (applied to a run of blocks at
    once); subnormal results near a tie come with bits at the tie. ``rounded``: ``w`` rounded to f32; ``b``,
    ``n``: int64 and bool buffers of ``w``'s size."""
    wide_bits = w.view(np.int64)
    np.bitwise_and(wide_bits, _DROPPED, out=b)
    np.subtract(b, _WINDOW_START, out=b)
    np.less(b.view(np.uint64), _WINDOW_SIZE, out=n)  # |dropped - tie| < window, as one unsigned comparison
    near = n.nonzero()[0]
    bits = wide_bits[near]
    if np.fmin.reduce(rounded) <= _F32_TINY:  # some result is subnormal (fmin: NaNs ignored)
        tiny = np.flatnonzero(w < _F32_TINY)
        small, low = w[tiny], rounded[tiny]
        tiny = tiny[np.abs(small - low) > _EXPF_NEAR_TIE * np.spacing(np.abs(low)).astype(F64)]
        normal = bits >= _F32_TINY_BITS
        near = np.concatenate([near[normal], tiny])
        bits = np.concatenate([bits[normal], np.full(tiny.size, _AT_TIE)])
    return near, bits


def _within_error(bits: np.ndarray) -> np.ndarray:
    """Whether the doubles of ``bits`` (int64) lie within glibc's relative error of an f32 rounding tie:
    1.75·2^-34 of the value, in f64 ULPs."""
    distance = np.abs((bits & _DROPPED) - (1 << 28))
    significand = ((bits >> 34) & _TOP_18) + (1 << 18)  # 2^18 · [1, 2)
    return distance < (significand * 7) >> 2


def _exact_expf(x: np.ndarray) -> np.ndarray:
    """The C library's ``expf`` of f32 ``x``: from :func:`glibc_expf` when the C library's is glibc's (see
    :func:`_glibc_build`) and there are at least REPLICA_MIN values, else through ctypes element by element."""
    fused = _glibc_build() if x.size >= REPLICA_MIN else None
    return _through_ctypes(x) if fused is None else glibc_expf(x, fused)


def _through_ctypes(x: np.ndarray) -> np.ndarray:
    c_expf = c_function("expf")
    return np.array([c_expf(v) for v in x.tolist()], F32)


_FILTER_MIN = 32  # below it, fixing every candidate costs less than choosing the half that need it
REPLICA_MIN = 256  # from here on glibc_expf (60 us, then 0.045 us a value) costs less than ctypes (0.25 us a call)


_BUILD: list = []


@functools.cache
def c_function(name: str) -> Callable[[float], float] | None:
    """The C library's function ``name`` of one argument through ctypes: ``expf`` (float) or ``exp`` (double);
    None where there is none to load."""
    import ctypes  # (here: a plain run imports no more than it needs, tests/cli/test_lazy_imports.py)
    import ctypes.util

    kind = {"expf": ctypes.c_float, "exp": ctypes.c_double}[name]
    try:
        function = getattr(ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6"), name)
    except (OSError, AttributeError):
        return None
    function.restype, function.argtypes = kind, [kind]
    return function


def exp_double(x: np.ndarray) -> np.ndarray:
    """The C library's ``exp`` on f64 values, element by element, as the reference's ``std::exp`` of a double
    (numpy's differs from it by 1 ULP on about 5 % of values); numpy's where there is no C library to load."""
    exp = c_function("exp")
    return np.exp(x) if exp is None else np.array([exp(v) for v in x.reshape(-1).tolist()], F64).reshape(x.shape)


def _glibc_build() -> bool | None:
    """Which build of glibc's ``expf`` the C library's is: True the FMA one (x86-64 glibc picks it on CPUs
    with FMA), False the plain one, None neither (another C library, none, or not x86-64, where compilers
    may fuse other operations): the one of :func:`glibc_expf`'s two that gives the C library's values on
    DISCRIMINATING (f32 bit patterns where the two builds' results differ, found by
    ``scripts/check_expf.py``). Decided once."""
    if not _BUILD:
        c_expf = c_function("expf")
        build = None
        if c_expf is not None and platform.machine().lower() in ("x86_64", "amd64"):
            x = np.array(DISCRIMINATING, np.uint32).view(F32)
            want = _through_ctypes(x).view(np.uint32)
            for fused in (True, False):
                if np.array_equal(glibc_expf(x, fused).view(np.uint32), want):
                    build = fused
                    break
        _BUILD.append(build)
    return _BUILD[0]


DISCRIMINATING = (0x4202422F, 0xC27C65D9)
"""f32 bit patterns near a rounding tie whose ``expf`` differs between glibc's FMA and plain builds."""
