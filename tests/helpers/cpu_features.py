"""The CPU features that decide what OpenVINO's CPU plugin computes, for the few tests whose expectation
depends on them (docs/performance.md, "Tested on"). A feature counts when ``/proc/cpuinfo`` lists it and
``ONEDNN_MAX_CPU_ISA`` (which oneDNN's and the plugin's kernels honour) does not cap it away, so that
``ONEDNN_MAX_CPU_ISA=AVX2 pytest`` on an AVX-512 machine expects what an AVX2 machine computes. (The
plugin's ``OPTIMIZATION_CAPABILITIES`` reads CPUID and ignores the cap: it still lists BF16 under it.)

- ``avx512``: AVX-512 (F, BW, VL, DQ). The plugin's f32 IsFinite calls subnormals not finite with it
  (``vfpclassps``), finite without it.
- ``vnni``: AVX-512 VNNI or AVX-VNNI. Without it, int8 convolutions multiply u8 by s8 through 16-bit
  saturating instructions: an NNCF-style int8 network differs by far more than a quantization level.
- ``bf16``: AVX-512 BF16. Without it the plugin handles bf16 data in f32 kernels of its own (other roundings,
  bf16 subnormals kept or flushed differently); only the AVX-512 BF16 behaviour is measured, so CPUs with
  AVX-NE-CONVERT alone count as without."""

from __future__ import annotations

import functools
import os

import pytest

# the /proc/cpuinfo flags of each feature, and the ONEDNN_MAX_CPU_ISA values that keep it
_FEATURES = {
    "avx512": ({"avx512f", "avx512bw", "avx512vl", "avx512dq"}, None),
    "vnni": ({"avx512_vnni"}, {"avx_vnni"}),
    "bf16": ({"avx512_bf16"}, None),
}
_CAPS = {  # the ISAs each cap allows, in oneDNN's names (src/cpu/x64/cpu_isa_traits.hpp)
    "SSE41": set(), "AVX": set(), "AVX2": set(), "AVX2_VNNI": {"vnni"}, "AVX2_VNNI_2": {"vnni"},
    "AVX512_CORE": {"avx512"}, "AVX512_CORE_VNNI": {"avx512", "vnni"},
}
_ALL = {"avx512", "vnni", "bf16"}  # any newer cap (AVX512_CORE_BF16, AMX, AVX10...) or none
REASONS = {
    "avx512": "needs AVX-512: without it the CPU plugin's IsFinite calls f32 subnormals finite",
    "vnni": "needs VNNI: without it the CPU plugin's int8 convolutions multiply u8 by s8 through 16-bit"
            " saturating instructions (far more than a quantization level apart)",
    "bf16": "needs avx512_bf16: without it the CPU plugin runs bf16 data through f32 kernels of its own"
            " (other roundings and subnormals)",
}


@functools.cache
def _flags() -> frozenset[str]:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def has(feature: str) -> bool:
    """Whether the CPU has ``feature`` (a key of ``REASONS``) and ``ONEDNN_MAX_CPU_ISA`` allows it."""
    avx512_flags, avx2_flags = _FEATURES[feature]
    flags = _flags()
    present = avx512_flags <= flags or (avx2_flags is not None and avx2_flags <= flags)
    cap = os.environ.get("ONEDNN_MAX_CPU_ISA", "").upper()
    allowed = _CAPS.get(cap, _ALL)
    if cap == "AVX2_VNNI" or cap == "AVX2_VNNI_2":  # (AVX-VNNI only: the AVX-512 forms are capped away)
        present = avx2_flags is not None and avx2_flags <= flags
    return present and feature in allowed


def require(feature: str) -> None:
    """Skip the running test, naming ``feature`` and what the CPU plugin does without it."""
    if not has(feature):
        pytest.skip(REASONS[feature])
