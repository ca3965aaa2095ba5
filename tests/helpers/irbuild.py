"""Build OpenVINO IR v11 (XML text and .bin bytes) from Python, for tests.

Example::

    b = IRBuilder()
    cond = b.parameter("cond", "boolean", "2,4")
    then = b.parameter("then", "f32", "2,4")
    other = b.parameter("else", "f32", "2,4")
    sel = b.layer("Select", "opset1", [cond, then, other],
                  attrs={"auto_broadcast": "numpy"}, out_specs=[("FP32", "2,4")])
    b.result(sel)
    xml_bytes, bin_bytes = b.build()

Port ids follow OpenVINO's writer: input ports are numbered 0..n-1 and output
ports continue from n. Every port carries a ``precision`` and ``<dim>``
children taken from a *spec* ``(precision, dims)``:

- ``precision`` is a port precision (``"FP32"``) or an element type (``"f32"``),
  or ``None`` to leave the attribute out;
- ``dims`` is a list of ints (``-1`` allowed, anything allowed), ``None`` for no
  ``<dim>`` at all, or a partial-shape string in OpenVINO syntax (``"?,1..10,3"``,
  ``"..."``, ``""``) that is turned into port dims the way OpenVINO writes them
  (every non-static dim becomes -1, dynamic rank and scalars have no dims).

Defaults: a Parameter or Const declares exactly its own shape; an input port
copies the spec of the output port feeding it; a layer's output copies the
spec of its first input unless ``out_specs`` is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
from lxml import etree

#: element_type (lowercase IR spelling) -> port precision, as OpenVINO writes them.
PRECISION = {
    "f32": "FP32",
    "f16": "FP16",
    "bf16": "BF16",
    "f64": "FP64",
    "f8e4m3": "F8E4M3",
    "f8e5m2": "F8E5M2",
    "f8e8m0": "F8E8M0",
    "f4e2m1": "F4E2M1",
    "nf4": "NF4",
    "u2": "U2",
    "u3": "U3",
    "u6": "U6",
    "i4": "I4",
    "i8": "I8",
    "i16": "I16",
    "i32": "I32",
    "i64": "I64",
    "u1": "BIN",
    "u4": "U4",
    "u8": "U8",
    "u16": "U16",
    "u32": "U32",
    "u64": "U64",
    "boolean": "BOOL",
    "string": "STRING",
    "dynamic": "UNSPECIFIED",
}

#: element_type -> numpy dtype, for the types numpy (with ml_dtypes) can hold byte-wise.
DTYPE = {
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f64": np.dtype(np.float64),
    "f8e4m3": np.dtype(ml_dtypes.float8_e4m3fn),
    "f8e5m2": np.dtype(ml_dtypes.float8_e5m2),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "u8": np.dtype(np.uint8),
    "u16": np.dtype(np.uint16),
    "u32": np.dtype(np.uint32),
    "u64": np.dtype(np.uint64),
    "boolean": np.dtype(np.bool_),
}
_ELEMENT_TYPE = {dt: et for et, dt in DTYPE.items()}

Dims = Sequence[int] | str | None
Spec = tuple  # (precision | None, Dims)


def port_dims(shape: str) -> list[int] | None:
    """Port dims OpenVINO writes for a partial-shape string (``None`` for dynamic rank)."""
    text = shape.replace(" ", "").strip("[]")
    if text == "...":
        return None
    if text == "":
        return []
    return [int(d) if d.isdigit() else -1 for d in text.split(",")]


def _precision(p: str | None) -> str | None:
    if p is None:
        return None
    return PRECISION.get(p, p)


def _dims(d: Dims) -> list[int] | None:
    if isinstance(d, str):
        return port_dims(d)
    return None if d is None else [int(x) for x in d]


def normalize_spec(spec: Spec) -> tuple[str | None, list[int] | None]:
    """``(precision, dims)`` with an element type turned into a precision and dims into a list."""
    precision, dims = spec
    return _precision(precision), _dims(dims)


def _attr_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(_attr_text(v) for v in value)
    return str(value)


@dataclass(frozen=True)
class Out:
    """One output of a layer: the layer and the output's position (0-based)."""

    layer: Layer
    pos: int = 0


@dataclass(eq=False)
class Layer:
    """A layer being built; use it (or ``layer[i]``) as an input of later layers."""

    id: int
    name: str
    type: str
    version: str
    attrs: dict | None
    inputs: list[Out]
    in_specs: list[tuple]
    out_specs: list[tuple]
    out_names: list[str | None] = field(default_factory=list)
    extra: dict = field(default_factory=dict)  # more <layer> attributes, e.g. output_names

    def __getitem__(self, pos: int) -> Out:
        return Out(self, pos)

    def spec(self, pos: int = 0) -> tuple[str | None, list[int] | None]:
        """The declared ``(precision, dims)`` of output ``pos``."""
        return self.out_specs[pos]


Source = Layer | Out | tuple


def _out(src: Source) -> Out:
    if isinstance(src, Out):
        return src
    if isinstance(src, Layer):
        return Out(src, 0)
    layer, pos = src
    return Out(layer, pos)


class IRBuilder:
    """Collects layers and Const bytes; ``build()`` returns ``(xml_bytes, bin_bytes)``."""

    def __init__(self, name: str = "test", version: int | str | None = 11) -> None:
        self.name = name
        self.version = version
        self.layers: list[Layer] = []
        self._bin = bytearray()

    # -- layers ---------------------------------------------------------------------------

    def _add(
        self,
        type_: str,
        version: str,
        name: str | None,
        attrs: dict | None,
        inputs: Sequence[Source],
        in_specs,
        out_specs,
        out_names,
    ) -> Layer:
        lid = len(self.layers)
        outs = [_out(s) for s in inputs]
        if in_specs is None:
            in_specs = [None] * len(outs)
        if len(in_specs) != len(outs):
            raise ValueError("in_specs must have one entry per input")
        resolved_in = [o.layer.spec(o.pos) if s is None else normalize_spec(s) for o, s in zip(outs, in_specs)]
        if out_specs is None:
            out_specs = [resolved_in[0]] if resolved_in else []
        resolved_out = [normalize_spec(s) for s in out_specs]
        names = list(out_names) if out_names is not None else [None] * len(resolved_out)
        names += [None] * (len(resolved_out) - len(names))
        layer = Layer(
            lid,
            name or f"{type_}_{lid}",
            type_,
            version,
            attrs,
            outs,
            resolved_in,
            resolved_out,
            names,
        )
        self.layers.append(layer)
        return layer

    def parameter(
        self,
        name: str,
        element_type: str,
        shape: str,
        *,
        out_spec: Spec | None = None,
        names: str | None = None,
    ) -> Layer:
        """A Parameter with ``shape`` in OpenVINO syntax (``"?,3"``, ``"1..10"``, ``"..."``, ``""``)."""
        spec = out_spec if out_spec is not None else (PRECISION.get(element_type, element_type), port_dims(shape))
        return self._add(
            "Parameter",
            "opset1",
            name,
            {"shape": shape, "element_type": element_type},
            [],
            [],
            [spec],
            [name if names is None else names],
        )

    def const(
        self,
        name: str,
        value: Any,
        element_type: str | None = None,
        *,
        out_spec: Spec | None = None,
        offset: int | None = None,
        size: int | None = None,
    ) -> Layer:
        """A Const holding ``value``; its bytes are appended to the .bin.

        ``element_type`` defaults from the array's dtype; ``offset``/``size`` may be
        overridden to build broken files.
        """
        arr = np.asarray(value)
        if element_type is None:
            element_type = _ELEMENT_TYPE[arr.dtype]
        else:
            arr = arr.astype(DTYPE[element_type])
        data = np.ascontiguousarray(arr).tobytes()
        start = len(self._bin)
        self._bin += data
        attrs = {
            "element_type": element_type,
            "shape": ", ".join(str(d) for d in arr.shape),
            "offset": start if offset is None else offset,
            "size": len(data) if size is None else size,
        }
        spec = out_spec if out_spec is not None else (PRECISION[element_type], list(arr.shape))
        return self._add("Const", "opset1", name, attrs, [], [], [spec], [None])

    def packed_const(self, name: str, raw: bytes, element_type: str, shape: Sequence[int]) -> Layer:
        """A Const of ``element_type`` whose bytes in the .bin are ``raw`` as given (for packed types)."""
        start = len(self._bin)
        self._bin += raw
        attrs = {"element_type": element_type, "shape": ", ".join(map(str, shape)), "offset": start, "size": len(raw)}
        return self._add("Const", "opset1", name, attrs, [], [], [(PRECISION[element_type], list(shape))], [None])

    def layer(
        self,
        type_: str,
        version: str = "opset1",
        inputs: Sequence[Source] = (),
        *,
        attrs: dict | None = None,
        out_specs: Sequence[Spec] | None = None,
        in_specs: Sequence[Spec | None] | None = None,
        name: str | None = None,
        out_names: Sequence[str | None] | None = None,
    ) -> Layer:
        """Any layer. ``inputs`` are layers, ``layer[i]`` or ``(layer, i)`` pairs.

        ``attrs=None`` writes no ``<data>`` element. ``in_specs`` entries that are
        ``None`` copy the producer's output spec.
        """
        return self._add(type_, version, name, attrs, inputs, in_specs, out_specs, out_names)

    def convert(self, src: Source, destination_type: str, *, name: str | None = None) -> Layer:
        """A Convert-1 to ``destination_type``, declaring the source's dims."""
        o = _out(src)
        dims = o.layer.spec(o.pos)[1]
        return self.layer(
            "Convert",
            "opset1",
            [o],
            attrs={"destination_type": destination_type},
            out_specs=[(PRECISION[destination_type], dims)],
            name=name,
        )

    def result(self, src: Source, name: str | None = None, *, in_spec: Spec | None = None) -> Layer:
        """A Result consuming ``src``."""
        return self._add("Result", "opset1", name, None, [src], [in_spec], [], [])

    # -- output ---------------------------------------------------------------------------

    @property
    def bin(self) -> bytes:
        return bytes(self._bin)

    def xml(self) -> bytes:
        """The XML document as bytes."""
        net = etree.Element("net", name=self.name)
        if self.version is not None:
            net.set("version", str(self.version))
        layers_el = etree.SubElement(net, "layers")
        for layer in self.layers:
            el = etree.SubElement(
                layers_el,
                "layer",
                id=str(layer.id),
                name=layer.name,
                type=layer.type,
                version=layer.version,
            )
            for k, v in layer.extra.items():
                el.set(k, _attr_text(v))
            if layer.attrs is not None:
                data = etree.SubElement(el, "data")
                for k, v in layer.attrs.items():
                    data.set(k, _attr_text(v))
            n_in = len(layer.in_specs)
            if n_in:
                inp = etree.SubElement(el, "input")
                for i, spec in enumerate(layer.in_specs):
                    _port(inp, i, spec, None)
            if layer.out_specs:
                out = etree.SubElement(el, "output")
                for j, spec in enumerate(layer.out_specs):
                    _port(out, n_in + j, spec, layer.out_names[j])
        edges = etree.SubElement(net, "edges")
        for layer in self.layers:
            for i, src in enumerate(layer.inputs):
                from_port = len(src.layer.in_specs) + src.pos
                etree.SubElement(
                    edges,
                    "edge",
                    {
                        "from-layer": str(src.layer.id),
                        "from-port": str(from_port),
                        "to-layer": str(layer.id),
                        "to-port": str(i),
                    },
                )
        return etree.tostring(net, xml_declaration=True, encoding="UTF-8", pretty_print=True)

    def build(self) -> tuple[bytes, bytes]:
        """``(xml_bytes, bin_bytes)``."""
        return self.xml(), self.bin

    def write(self, directory: str | Path, stem: str = "model") -> Path:
        """Write ``stem.xml`` and ``stem.bin`` into ``directory``; return the .xml path."""
        directory = Path(directory)
        xml_path = directory / f"{stem}.xml"
        xml_path.write_bytes(self.xml())
        (directory / f"{stem}.bin").write_bytes(self.bin)
        return xml_path


def _port(parent, pid: int, spec: tuple, names: str | None) -> None:
    precision, dims = spec
    port = etree.SubElement(parent, "port", id=str(pid))
    if precision is not None:
        port.set("precision", precision)
    if names is not None:
        port.set("names", names)
    for d in dims or ():
        etree.SubElement(port, "dim").text = str(d)


def read_with_openvino(xml: bytes, weights: bytes = b""):
    """Read the IR with the real OpenVINO (imported lazily); return the ``ov.Model``."""
    import openvino as ov

    tensor = (
        ov.Tensor(np.frombuffer(weights, dtype=np.uint8).copy()) if weights else ov.Tensor(np.zeros(0, dtype=np.uint8))
    )
    return ov.Core().read_model(model=xml.decode(), weights=tensor)
