"""ir-run's work in the IEEE floating-point environment, whatever flush-to-zero mode the calling thread is in.

x86's MXCSR register has two bits that make SSE/AVX arithmetic (numpy's, OpenBLAS's) give non-IEEE results:
FTZ (bit 15, a subnormal result becomes 0) and DAZ (bit 6, a subnormal input counts as 0). They are per thread
and a new thread inherits its creator's. OpenVINO's CPU plugin sets both in the calling thread when a model is
compiled with ``CPU_DENORMALS_OPTIMIZATION=True`` and leaves them set, so every later numpy computation in that
thread flushes: ``np.float32(1e-45) * 1`` gives 0 there, where OpenVINO's reference gives 1e-45.

:func:`enter` probes for flushing with one Python float product on a subnormal (25 ns; a Python float product
uses the same SSE unit and MXCSR as numpy) and, only when it flushes, saves the thread's environment with the C
library's ``fegetenv`` and clears FTZ and DAZ with ``fesetenv``; :func:`leave` restores the saved environment, so
the caller's own numpy flushes again afterwards, as it did before (2-3 us in all, paid only in a flushing
thread). Supported on x86-64 Linux with glibc, whose ``fenv_t`` is 32 bytes with MXCSR at byte offset 28
(checked once, on first need: with the bits set the probe must flush, with them cleared it must not).
Elsewhere (another CPU or C library: an aarch64 FPCR's FZ bit, musl, macOS, Windows) nothing is changed, and
a flushing thread computes flushed values.
"""

from __future__ import annotations

import contextlib
import ctypes
import platform
import threading
from collections.abc import Iterator

_TINY, _ONE = 5e-324, 1.0  # the smallest subnormal double: its product with 1 is 0 under FTZ or DAZ
_FENV_BYTES = 32
_MXCSR_OFFSET = 28
_FLUSH_BITS = (1 << 15) | (1 << 6)  # FTZ, DAZ

_libm: ctypes.CDLL | None = None
_checked: bool | None = None  # None: not tried yet; False: clearing is not supported here
_check_lock = threading.Lock()


def flushes_subnormals() -> bool:
    """Whether float arithmetic in the calling thread flushes subnormals to zero (FTZ or DAZ set)."""
    return _TINY * _ONE == 0.0


def _load() -> bool:
    """Whether the C library's fenv functions can clear FTZ/DAZ here: x86-64 glibc, checked once by setting the
    bits (the probe must then flush) and clearing them (it must not), then restoring the environment."""
    global _libm, _checked
    with _check_lock:
        if _checked is None:
            _checked = False
            if (platform.machine().lower() in ("x86_64", "amd64") and ctypes.sizeof(ctypes.c_void_p) == 8
                    and platform.libc_ver()[0] == "glibc"):  # (a 32-bit Python's fenv_t is another layout)
                try:
                    libm = ctypes.CDLL("libm.so.6")
                except OSError:
                    return False
                saved = _get(libm)
                if saved is not None:
                    _checked = (_set(libm, _with_bits(saved, True)) and flushes_subnormals()
                                and _set(libm, _with_bits(saved, False)) and not flushes_subnormals())
                    _set(libm, saved)
                    _libm = libm if _checked else None
        return _checked


def _get(libm: ctypes.CDLL) -> ctypes.Array | None:
    env = ctypes.create_string_buffer(_FENV_BYTES)
    return env if libm.fegetenv(env) == 0 else None


def _set(libm: ctypes.CDLL, env: ctypes.Array) -> bool:
    return libm.fesetenv(env) == 0


def _with_bits(env: ctypes.Array, flush: bool) -> ctypes.Array:
    """A copy of ``env`` with FTZ and DAZ set (``flush``) or cleared in its MXCSR."""
    raw = bytearray(env.raw)
    mxcsr = int.from_bytes(raw[_MXCSR_OFFSET:_MXCSR_OFFSET + 4], "little")
    mxcsr = mxcsr | _FLUSH_BITS if flush else mxcsr & ~_FLUSH_BITS
    raw[_MXCSR_OFFSET:_MXCSR_OFFSET + 4] = mxcsr.to_bytes(4, "little")
    return ctypes.create_string_buffer(bytes(raw), _FENV_BYTES)


def enter() -> ctypes.Array | None:
    """Clear FTZ/DAZ in the calling thread if it flushes (and this platform allows it); the environment to give
    :func:`leave` afterwards, or None when nothing was changed (the common case: one 25 ns probe)."""
    if _TINY * _ONE != 0.0 or (_libm is None and not _load()):
        return None
    saved = _get(_libm)
    if saved is None or not _set(_libm, _with_bits(saved, False)):
        return None
    return saved


def leave(saved: ctypes.Array | None) -> None:
    """Restore the environment :func:`enter` saved (nothing when it returned None)."""
    if saved is not None:
        _set(_libm, saved)


@contextlib.contextmanager
def exact_subnormals() -> Iterator[None]:
    """``with exact_subnormals():`` runs its body with FTZ/DAZ cleared (see :func:`enter`), restored after."""
    saved = enter()
    try:
        yield
    finally:
        leave(saved)


@contextlib.contextmanager
def preserved() -> Iterator[None]:
    """``with preserved():`` restores the calling thread's floating-point environment after its body, whatever the
    body (OpenVINO's CPU plugin) set; nothing on a platform :func:`enter` does not support."""
    libm = _libm if _libm is not None or _load() else None
    saved = _get(libm) if libm is not None else None
    try:
        yield
    finally:
        if saved is not None:
            _set(libm, saved)
