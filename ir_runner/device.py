"""Running a model on an OpenVINO device with every layer output made a model output (for ``crosscheck``).

``openvino`` is an optional dependency (``pip install 'ir-run[openvino]'``), imported only here and only
when a crosscheck runs. Layers are matched by name: OpenVINO's friendly name of a node is the IR layer's
name. A layer output OpenVINO cannot make an output of (a name that is missing or not unique, or one that
``add_outputs`` refuses) is returned with the reason it is not observable.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .errors import UnsupportedError

INSTALL_HINT = "install it with: pip install 'ir-run[openvino]'"
PRECISIONS = ("f32", "f16", "bf16")

Key = tuple[str, int]  # (layer name, output position)


def import_openvino():
    """The ``openvino`` module, or an UnsupportedError saying how to install it."""
    try:
        import openvino
    except ImportError as error:
        raise UnsupportedError(f"crosscheck needs the openvino package, which cannot be imported ({error})",
                               hint=INSTALL_HINT) from None
    return openvino


class DeviceRun:
    """What the device computed: ``values`` by (layer name, output position), ``unobservable`` (same keys,
    with the reason), and the OpenVINO version that ran."""

    __slots__ = ("values", "unobservable", "version")

    def __init__(self, values: dict[Key, np.ndarray], unobservable: dict[Key, str], version: str) -> None:
        self.values = values
        self.unobservable = unobservable
        self.version = version


def device_config(device: str, precision: str, stateful: bool) -> dict[str, str]:
    """What a model is compiled with: ``INFERENCE_PRECISION_HINT=precision`` and, for a stateful model on the
    CPU, ``KV_CACHE_PRECISION=precision`` (the CPU plugin otherwise keeps a KV cache in u8, whose rounding is
    not the model's: 1e-2 on logits of 8)."""
    config = {"INFERENCE_PRECISION_HINT": precision}
    if stateful and device.upper().startswith("CPU"):
        config["KV_CACHE_PRECISION"] = precision
    return config


def set_variables(ov, request, variables: dict[str, np.ndarray | None]) -> None:
    """Set an infer request's variables to these values by id (None: reset, the initial value)."""
    for variable in request.query_state():
        value = variables.get(variable.name)
        if value is None:
            variable.reset()
        else:
            variable.state = _tensor(ov, value, variable.state.element_type.get_type_name())


def run_on_device(xml: str | os.PathLike | bytes, weights, wanted: Sequence[Key], feeds: dict[str, np.ndarray],
                  device: str, precision: str, variables: dict[str, np.ndarray | None] | None = None) -> DeviceRun:
    """Read the IR with OpenVINO, make every ``wanted`` layer output a model output, compile it for ``device``
    (``device_config``) and infer once on ``feeds`` (by Parameter layer name), its variables set to
    ``variables`` (by id; None: the initial value) for a stateful model."""
    ov = import_openvino()
    core = ov.Core()
    try:
        ov_model = _read(ov, core, xml, weights)
    except Exception as error:  # OpenVINO raises plain RuntimeErrors
        raise UnsupportedError(f"OpenVINO cannot read this model: {_first_line(error)}") from None
    nodes: dict[str, object] = {}
    duplicates: set[str] = set()
    for node in ov_model.get_ordered_ops():
        name = node.get_friendly_name()
        if name in nodes:
            duplicates.add(name)
        nodes[name] = node
    unobservable: dict[Key, str] = {}
    requested: list[Key] = []
    sinks = {sink.get_friendly_name() for sink in ov_model.get_sinks()}
    for key in wanted:
        name, position = key
        node = nodes.get(name)
        if name in duplicates:
            unobservable[key] = "its name is not unique in OpenVINO's model"
        elif node is None:
            unobservable[key] = "OpenVINO's model has no node of that name"
        elif name in sinks:
            unobservable[key] = "a sink (it writes a variable): the CPU plugin refuses it as a model output"
        elif position >= node.get_output_size():
            unobservable[key] = f"OpenVINO's node has {node.get_output_size()} output(s)"
        else:
            try:
                ov_model.add_outputs([node.output(position)])
            except Exception as error:
                unobservable[key] = f"add_outputs refused it: {_first_line(error)}"
            else:
                requested.append(key)
    try:
        compiled = core.compile_model(ov_model, device, device_config(device, precision, variables is not None))
        request = compiled.create_infer_request()
        if variables is not None:
            set_variables(ov, request, variables)
        for parameter, port in zip(ov_model.get_parameters(), compiled.inputs):
            name = parameter.get_friendly_name()
            if name not in feeds:
                raise UnsupportedError(f"OpenVINO's model has an input '{name}' that ir-run's model does not have")
            request.set_tensor(port, _tensor(ov, feeds[name], parameter.get_element_type().get_type_name()))
        request.infer()
    except UnsupportedError:
        raise
    except Exception as error:
        raise UnsupportedError(f"OpenVINO could not compile or run this model on {device}: {_first_line(error)}",
                               hint="crosscheck compares layers only where the device runs the model") from None
    produced: dict[Key, np.ndarray] = {}
    for result, port in zip(ov_model.outputs, compiled.outputs):
        source = result.get_node().input_value(0)
        key = (source.get_node().get_friendly_name(), source.get_index())
        produced.setdefault(key, _array(request.get_tensor(port)))
    values = {}
    for key in requested:
        if key in produced:
            values[key] = produced[key]
        else:
            unobservable[key] = f"removed when compiling for {device}"
    return DeviceRun(values, unobservable, ov.get_version())


class DeviceRequest:
    """One infer request of a model compiled for a device (``device_config``): a stateful model keeps its
    state in it from one ``infer`` to the next, as OpenVINO GenAI runs a language model."""

    def __init__(self, xml: str | os.PathLike | bytes, weights, device: str, precision: str, stateful: bool) -> None:
        self._ov = import_openvino()
        core = self._ov.Core()
        try:
            compiled = core.compile_model(_read(self._ov, core, xml, weights), device,
                                          device_config(device, precision, stateful))
        except Exception as error:
            raise UnsupportedError(f"OpenVINO could not compile this model for {device}:"
                                   f" {_first_line(error)}") from None
        self._request = compiled.create_infer_request()
        self._outputs = compiled.outputs
        self.version = self._ov.get_version()

    def infer(self, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The outputs (by each of their tensor names) for ``feeds`` (by input tensor name)."""
        try:
            result = self._request.infer({name: np.ascontiguousarray(value) for name, value in feeds.items()})
        except Exception as error:
            raise UnsupportedError(f"OpenVINO could not run this model: {_first_line(error)}") from None
        return {name: np.array(result[port], copy=True) for port in self._outputs for name in port.get_names()}


def _read(ov, core, xml, weights):
    if isinstance(xml, (bytes, bytearray)):
        if isinstance(weights, (str, os.PathLike)):
            weights = Path(weights).read_bytes()
        data = np.frombuffer(bytes(weights or b""), dtype=np.uint8).copy()
        return core.read_model(model=bytes(xml).decode("utf-8"), weights=ov.Tensor(data))
    if weights is None:
        weights = Path(xml).with_suffix(".bin")
    if isinstance(weights, (bytes, bytearray, memoryview)):
        data = np.frombuffer(bytes(weights), dtype=np.uint8).copy()
        return core.read_model(model=Path(xml).read_text(encoding="utf-8"), weights=ov.Tensor(data))
    return core.read_model(str(xml), str(weights)) if Path(weights).is_file() else core.read_model(str(xml))


_RAW_TYPES = {"bf16": np.uint16, "f8e4m3": np.uint8, "f8e5m2": np.uint8}  # numpy lacks them: moved as bits


def _tensor(ov, array: np.ndarray, element_type: str):
    """An ov.Tensor holding ``array``; bf16 and f8 values are copied as their bits."""
    raw = _RAW_TYPES.get(element_type)
    if raw is None:
        return ov.Tensor(np.ascontiguousarray(array))
    tensor = ov.Tensor(getattr(ov.Type, element_type), list(array.shape))
    np.copyto(tensor.data.view(raw).reshape(array.shape), np.ascontiguousarray(array).view(raw))
    return tensor


def _array(tensor) -> np.ndarray:
    """A copy of an ov.Tensor's values; bf16 and f8 become ml_dtypes arrays (OpenVINO shows their bits)."""
    element_type = tensor.element_type.get_type_name()
    raw = _RAW_TYPES.get(element_type)
    if raw is None:
        return np.array(tensor.data, copy=True)
    import ml_dtypes

    dtype = {"bf16": ml_dtypes.bfloat16, "f8e4m3": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2}
    return np.array(tensor.data, copy=True).view(raw).view(dtype[element_type]).reshape(tuple(tensor.shape))


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith("Exception from")]
    return (useful or lines or [type(error).__name__])[-1][:300]
