"""The C heap: freed intermediates kept for the next run instead of given back to the OS.

A run allocates and frees every intermediate array. With glibc's defaults an array above the mmap threshold
(128 KiB at first, raised as such arrays are freed) is mapped fresh, and heap memory freed at the top is
trimmed back to the OS once more than twice that threshold is free: the next run then takes a page fault for
every 4 KiB it touches again. On MobileNet-V3-small (one thread, 176 layers, most arrays 50 KiB-1 MiB) that
was a quarter of the run (10.6 -> 7.7 ms median); EfficientNet-B0 66 -> 55 ms.

:func:`keep_freed_memory` (called when a plan is built, effective once per process: before the first run, and
never on a run's own path) sets glibc's
``M_MMAP_THRESHOLD`` to 32 MiB (the largest value glibc's own adaptation reaches) and ``M_TRIM_THRESHOLD``
to 128 MiB. This is process-wide: the process keeps up to 128 MiB of freed heap for reuse (its peak memory
is unchanged). Nothing is changed when the C library is not glibc, when the environment already sets
``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_`` or ``MALLOC_TOP_PAD_`` (the user chose), or when
``IR_RUN_MALLOC=system``.
"""

from __future__ import annotations

import os

MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 128 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h
_USER_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_")

_done = False


def keep_freed_memory() -> None:
    """Set glibc's heap to keep freed memory (see the module docstring), once per process."""
    global _done
    if _done:
        return
    _done = True
    if os.environ.get("IR_RUN_MALLOC") == "system" or any(name in os.environ for name in _USER_SETTINGS):
        return
    mallopt = _glibc_mallopt()
    if mallopt is not None:
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)


def _glibc_mallopt():
    """glibc's ``mallopt`` from this process's C library, or None (another C library, or none found)."""
    import ctypes

    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    if getattr(libc, "gnu_get_libc_version", None) is None:
        return None
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is not None:
        mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return mallopt
