"""RegionYolo-1 and ReorgYolo-2 (placeholder module, filled below)."""

OPS = ()
