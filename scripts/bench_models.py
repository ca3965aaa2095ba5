"""IR files for the benchmarks: a small string-based IR v11 writer and the benchmark models.

The XML is laid out as ``openvino.save_model`` writes it (tab indentation, ``precision`` and ``<dim>``s on
every port, ``names`` on Parameter outputs), so that reading it costs what reading a real IR costs.
Identical Const payloads share one offset in the .bin, as OpenVINO's serializer does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

PRECISION = {
    "f32": "FP32",
    "f16": "FP16",
    "i8": "I8",
    "u8": "U8",
    "i32": "I32",
    "i64": "I64",
    "boolean": "BOOL",
}
DTYPE = {
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
    "i8": np.dtype(np.int8),
    "u8": np.dtype(np.uint8),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "boolean": np.dtype(np.bool_),
}


@dataclass(frozen=True)
class Port:
    """An output port of a layer written so far: layer id, port id, element type and static shape."""

    layer: int
    port: int
    et: str
    shape: tuple[int, ...]


def _port_xml(pid: int, et: str, shape: tuple[int, ...], indent: str, names: str | None = None) -> str:
    attr = f' names="{names}"' if names else ""
    if not shape:
        return f'{indent}<port id="{pid}" precision="{PRECISION[et]}"{attr} />\n'
    dims = "".join(f"{indent}\t<dim>{d}</dim>\n" for d in shape)
    return f'{indent}<port id="{pid}" precision="{PRECISION[et]}"{attr}>\n{dims}{indent}</port>\n'


def _shape_text(shape: tuple[int, ...]) -> str:
    return ",".join(str(d) for d in shape)


class IRWriter:
    """Append layers, then ``save`` the .xml and .bin (or take ``xml()`` / ``weights()``)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._layers: list[str] = []
        self._edges: list[str] = []
        self._weights = bytearray()
        self._offsets: dict[bytes, int] = {}
        self._next_id = 0

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id - 1

    def parameter(self, name: str, et: str, shape: tuple[int, ...]) -> Port:
        lid = self._new_id()
        self._layers.append(
            f'\t\t<layer id="{lid}" name="{name}" type="Parameter" version="opset1">\n'
            f'\t\t\t<data shape="{_shape_text(shape)}" element_type="{et}" />\n'
            f"\t\t\t<output>\n{_port_xml(0, et, shape, chr(9) * 4, names=name)}\t\t\t</output>\n\t\t</layer>\n"
        )
        return Port(lid, 0, et, tuple(shape))

    def const(self, name: str, value: np.ndarray, et: str) -> Port:
        """A Const holding ``value`` (stored once in the .bin per distinct payload)."""
        payload = np.ascontiguousarray(value, dtype=DTYPE[et]).tobytes()
        offset = self._offsets.get(payload)
        if offset is None:
            offset = len(self._weights)
            self._offsets[payload] = offset
            self._weights += payload
        return self.const_at(name, et, tuple(value.shape), offset, len(payload))

    def const_at(self, name: str, et: str, shape: tuple[int, ...], offset: int, size: int) -> Port:
        """A Const whose payload the caller places in the .bin at ``offset``."""
        lid = self._new_id()
        self._layers.append(
            f'\t\t<layer id="{lid}" name="{name}" type="Const" version="opset1">\n'
            f'\t\t\t<data element_type="{et}" shape="{_shape_text(shape)}" offset="{offset}" size="{size}" />\n'
            f"\t\t\t<output>\n{_port_xml(0, et, shape, chr(9) * 4)}\t\t\t</output>\n\t\t</layer>\n"
        )
        return Port(lid, 0, et, tuple(shape))

    def op(self, type_: str, version: str, inputs: list[Port], et: str, shape: tuple[int, ...], name: str,
           data: dict[str, str] | None = None) -> Port:
        """A computing layer with one output of element type ``et`` and static ``shape``."""
        lid = self._new_id()
        data_xml = ""
        if data:
            data_xml = "\t\t\t<data " + " ".join(f'{k}="{v}"' for k, v in data.items()) + " />\n"
        ins = "".join(_port_xml(i, p.et, p.shape, "\t" * 4) for i, p in enumerate(inputs))
        out_pid = len(inputs)
        self._layers.append(
            f'\t\t<layer id="{lid}" name="{name}" type="{type_}" version="{version}">\n{data_xml}'
            f"\t\t\t<input>\n{ins}\t\t\t</input>\n"
            f"\t\t\t<output>\n{_port_xml(out_pid, et, shape, chr(9) * 4)}\t\t\t</output>\n\t\t</layer>\n"
        )
        for i, p in enumerate(inputs):
            self._edge(p, lid, i)
        return Port(lid, out_pid, et, tuple(shape))

    def result(self, src: Port, name: str) -> None:
        lid = self._new_id()
        self._layers.append(
            f'\t\t<layer id="{lid}" name="{name}" type="Result" version="opset1">\n'
            f"\t\t\t<input>\n{_port_xml(0, src.et, src.shape, chr(9) * 4)}\t\t\t</input>\n\t\t</layer>\n"
        )
        self._edge(src, lid, 0)

    def _edge(self, src: Port, layer: int, port: int) -> None:
        self._edges.append(
            f'\t\t<edge from-layer="{src.layer}" from-port="{src.port}" to-layer="{layer}" to-port="{port}" />\n'
        )

    @property
    def layer_count(self) -> int:
        return self._next_id

    def xml(self) -> bytes:
        return (
            f'<?xml version="1.0"?>\n<net name="{self.name}" version="11">\n\t<layers>\n'
            + "".join(self._layers)
            + "\t</layers>\n\t<edges>\n"
            + "".join(self._edges)
            + "\t</edges>\n</net>\n"
        ).encode()

    def weights(self) -> bytes:
        return bytes(self._weights)

    def save(self, directory: Path, stem: str) -> Path:
        """Write ``stem.xml`` and ``stem.bin``; return the .xml path."""
        xml_path = directory / f"{stem}.xml"
        xml_path.write_bytes(self.xml())
        xml_path.with_suffix(".bin").write_bytes(self.weights())
        return xml_path


def select_model(cond: tuple[int, ...], then: tuple[int, ...], else_: tuple[int, ...], et: str) -> IRWriter:
    """Parameters cond (boolean), then, else (``et``) -> Select-1 (numpy broadcast) -> Result."""
    w = IRWriter("bench_select")
    c = w.parameter("cond", "boolean", cond)
    t = w.parameter("then", et, then)
    e = w.parameter("else", et, else_)
    shape = np.broadcast_shapes(cond, then, else_)
    out = w.op("Select", "opset1", [c, t, e], et, shape, "select", {"auto_broadcast": "numpy"})
    w.result(out, "out")
    return w


def gather_output_shape(data: tuple[int, ...], indices: tuple[int, ...], axis: int, batch_dims: int) -> tuple:
    return data[:axis] + indices[batch_dims:] + data[axis + 1:]


def gather_model(data: tuple[int, ...], indices: tuple[int, ...], axis: int, batch_dims: int,
                 et: str = "f32", index_et: str = "i32") -> IRWriter:
    """Parameters data and indices -> Gather-8 (Const axis) -> Result."""
    w = IRWriter("bench_gather")
    d = w.parameter("data", et, data)
    i = w.parameter("indices", index_et, indices)
    a = w.const("axis", np.array(axis, dtype=np.int64), "i64")
    shape = gather_output_shape(data, indices, axis, batch_dims)
    out = w.op("Gather", "opset8", [d, i, a], et, shape, "gather", {"batch_dims": str(batch_dims)})
    w.result(out, "out")
    return w


def select_gather_model(rows: int, cols: int, picked: int) -> IRWriter:
    """cond/then/else [rows, cols] -> Select -> Gather of ``picked`` Const column indices on axis 1."""
    w = IRWriter("bench_select_gather")
    c = w.parameter("cond", "boolean", (rows, cols))
    t = w.parameter("then", "f32", (rows, cols))
    e = w.parameter("else", "f32", (rows, cols))
    s = w.op("Select", "opset1", [c, t, e], "f32", (rows, cols), "select", {"auto_broadcast": "numpy"})
    idx = w.const("indices", np.arange(0, 2 * picked, 2, dtype=np.int32) % cols, "i32")
    a = w.const("axis", np.array(1, dtype=np.int64), "i64")
    out = w.op("Gather", "opset8", [s, idx, a], "f32", (rows, picked), "gather", {"batch_dims": "0"})
    w.result(out, "out")
    return w


def _large_constants(shape: tuple[int, int]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    rng = np.random.default_rng(7)
    elses = [rng.standard_normal(shape).astype(np.float32) for _ in range(4)]
    perms = [rng.permutation(shape[1]).astype(np.int32) for _ in range(2)]
    return elses, perms


def _large_plan(layers: int, depth: int) -> tuple[int, int]:
    """(chains, blocks per chain) so that chains of 5-layer blocks plus the merging Selects make ~``layers``."""
    chains = max(1, (layers - 3) // (5 * depth + 1))
    return chains, max(1, (layers - 3 - (chains - 1)) // (5 * chains))


def large_model(layers: int, width: int = 8, depth: int = 100) -> IRWriter:
    """About ``layers`` layers: parallel chains of ``depth`` blocks (Const else, Select-1, Const indices,
    Const axis, Gather-8) over Parameters x f32 [2, width] and cond boolean [2, width], merged pairwise by
    Selects into one Result. (One single deep chain would do as well for ir-run, but OpenVINO's CPU
    compile time grows quadratically with depth: 8,000 layers in one chain take 12 s, 60,000 ten minutes.)"""
    w = IRWriter("bench_large")
    shape = (2, width)
    cond = w.parameter("cond", "boolean", shape)
    x0 = w.parameter("x", "f32", shape)
    elses, perms = _large_constants(shape)
    axis = np.array(1, dtype=np.int64)
    chains, blocks = _large_plan(layers, depth)
    ends = []
    for chain in range(chains):
        x = x0
        for block in range(blocks):
            k = chain * blocks + block
            e = w.const(f"else_{k}", elses[k % 4], "f32")
            x = w.op("Select", "opset1", [cond, x, e], "f32", shape, f"select_{k}", {"auto_broadcast": "numpy"})
            idx = w.const(f"indices_{k}", perms[k % 2], "i32")
            a = w.const(f"axis_{k}", axis, "i64")
            x = w.op("Gather", "opset8", [x, idx, a], "f32", shape, f"gather_{k}", {"batch_dims": "0"})
        ends.append(x)
    merge = 0
    while len(ends) > 1:
        merged = [w.op("Select", "opset1", [cond, ends[i], ends[i + 1]], "f32", shape, f"merge_{merge + i}",
                       {"auto_broadcast": "numpy"}) for i in range(0, len(ends) - 1, 2)]
        merge += len(ends)
        ends = merged + ends[len(ends) - len(ends) % 2:]
    w.result(ends[0], "out")
    return w


def big_const_model(directory: Path, stem: str, rows: int, cols: int, picked: int) -> Path:
    """A Const f32 [rows, cols] (``rows * cols * 4`` bytes of .bin) gathered by Parameter indices [picked].

    The .bin is written in chunks, never held in memory whole; returns the .xml path.
    """
    w = IRWriter("bench_big_const")
    idx = w.parameter("indices", "i32", (picked,))
    data_offset, data_size = 64, rows * cols * 4
    data = w.const_at("table", "f32", (rows, cols), data_offset, data_size)
    a = w.const_at("axis", "i64", (), 0, 8)
    out = w.op("Gather", "opset8", [data, idx, a], "f32", (picked, cols), "gather", {"batch_dims": "0"})
    w.result(out, "out")
    xml_path = directory / f"{stem}.xml"
    xml_path.write_bytes(w.xml())
    with open(xml_path.with_suffix(".bin"), "wb") as handle:
        handle.write(np.zeros(8, dtype=np.int64).tobytes())  # axis 0, then padding up to offset 64
        chunk_rows = max(1, 2**22 // cols)
        for start in range(0, rows, chunk_rows):
            stop = min(rows, start + chunk_rows)
            block = np.arange(start * cols, stop * cols, dtype=np.int64).astype(np.float32)
            handle.write(block.tobytes())
    return xml_path


def big_const_expected(indices: np.ndarray, cols: int) -> np.ndarray:
    """What the big-Const model returns for ``indices`` (row r holds r*cols .. r*cols+cols-1 as f32)."""
    rows = indices.astype(np.int64)[:, None] * cols + np.arange(cols, dtype=np.int64)
    return rows.astype(np.float32)


def make_input(dtype: str, shape: tuple[int, ...], kind: str, seed: int = 0) -> np.ndarray:
    """A deterministic input: ``mask:P`` (boolean, P = share of true), ``values`` (normal floats, or the
    whole integer range), ``index:D`` (integers in [0, D)) or ``signed_index:D`` (in [-D, D))."""
    rng = np.random.default_rng(seed)
    dt = DTYPE[dtype]
    name, _, arg = kind.partition(":")
    if name == "mask":
        out = np.empty(shape, dtype=np.bool_)
        np.less(rng.random(shape, dtype=np.float32), float(arg), out=out)
        return out.astype(dt, copy=False)
    if name == "values":
        if dt.kind == "f":
            return rng.standard_normal(shape, dtype=np.float32).astype(dt, copy=False)
        if dt.kind == "b":
            return rng.random(shape, dtype=np.float32) < 0.5
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    if name == "index":
        return rng.integers(0, int(arg), size=shape, dtype=dt)
    if name == "signed_index":
        return rng.integers(-int(arg), int(arg), size=shape, dtype=dt)
    raise ValueError(f"unknown input kind {kind!r}")


def large_model_reference(layers: int, cond: np.ndarray, x: np.ndarray, depth: int = 100) -> np.ndarray:
    """What ``large_model(layers, width, depth)`` computes, in plain numpy."""
    elses, perms = _large_constants(x.shape)
    chains, blocks = _large_plan(layers, depth)
    ends = []
    for chain in range(chains):
        y = x
        for block in range(blocks):
            k = chain * blocks + block
            y = np.take(np.where(cond, y, elses[k % 4]), perms[k % 2], axis=1)
        ends.append(y)
    while len(ends) > 1:
        merged = [np.where(cond, ends[i], ends[i + 1]) for i in range(0, len(ends) - 1, 2)]
        ends = merged + ends[len(ends) - len(ends) % 2:]
    return ends[0]
