"""Running a model on an OpenVINO device with layer outputs made model outputs (for ``crosscheck``): every
layer's (``run_on_device``), or only those the device materialises anyway, at the boundaries of the fused groups
of its runtime graph, with the check that adding them changed nothing (``run_at_boundaries``).

``openvino`` is an optional dependency (``pip install 'ir-run[openvino]'``), imported only here and only
when a crosscheck runs. Layers are matched by name: OpenVINO's friendly name of a node is the IR layer's
name. A layer output OpenVINO cannot make an output of (a name that is missing or not unique, or one that
``add_outputs`` refuses) is returned with the reason it is not observable.

A model with operations of the ``extension`` opset (openvino-tokenizers' IRs) is read with that package's
binary extension: ``openvino_tokenizers`` is imported (it registers the extension with every ``ov.Core`` made
afterwards). String tensors go in as their UTF-8 bytes (``Tensor.bytes_data``; an element that ends in a NUL
byte cannot: numpy drops it, an UnsupportedError says so) and come out as object
arrays of ``str`` (bytes that are not UTF-8 kept through ``surrogateescape``, as in ir-run's runs); OpenVINO's
Python API returns them as numpy ``S`` arrays, which drop an element's trailing NUL bytes.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from . import fpenv, strings
from .errors import UnsupportedError
from .record import Record

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


TOKENIZERS_HINT = "install it with: pip install openvino-tokenizers (the version of openvino)"


def new_core(ov, xml: str | os.PathLike | bytes):
    """An ``ov.Core`` that can read ``xml``: with openvino-tokenizers' extension when the model uses operations
    of the ``extension`` opset (an UnsupportedError when it cannot be imported or does not fit this OpenVINO)."""
    text = bytes(xml) if isinstance(xml, (bytes, bytearray)) else Path(xml).read_bytes()
    if b'version="extension"' in text:
        try:
            import openvino_tokenizers
        except ImportError as error:
            raise UnsupportedError("the model has operations of the extension opset (openvino-tokenizers'), which"
                                   f" OpenVINO reads only with that package, and it cannot be imported ({error})",
                                   hint=TOKENIZERS_HINT) from None
        if not openvino_tokenizers.is_openvino_tokenizers_compatible:
            raise UnsupportedError(f"openvino-tokenizers {openvino_tokenizers.__version__} cannot be loaded into"
                                   f" OpenVINO {ov.get_version()} (not binary compatible)", hint=TOKENIZERS_HINT)
    return ov.Core()  # (openvino_tokenizers, once imported, adds its extension to every new Core)


class DeviceRun:
    """What the device computed: ``values`` by (layer name, output position), ``unobservable`` (same keys,
    with the reason), and the OpenVINO version that ran."""

    __slots__ = ("values", "unobservable", "version")

    def __init__(self, values: dict[Key, np.ndarray], unobservable: dict[Key, str], version: str) -> None:
        self.values = values
        self.unobservable = unobservable
        self.version = version


def device_config(device: str, precision: str, stateful: bool) -> dict[str, str]:
    """What a model is compiled with: ``INFERENCE_PRECISION_HINT=precision`` and, for a stateful model (a language
    model) on the CPU, ``KV_CACHE_PRECISION=precision`` (the CPU plugin otherwise keeps a KV cache in u8, whose
    rounding is not the model's: 1e-2 on logits of 8) and ``DYNAMIC_QUANTIZATION_GROUP_SIZE=0`` (it otherwise
    quantizes the activations of MatMuls with compressed weights to 8 bits in groups of 32)."""
    config = {"INFERENCE_PRECISION_HINT": precision}
    if stateful and device.upper().startswith("CPU"):
        config["KV_CACHE_PRECISION"] = precision
        config["DYNAMIC_QUANTIZATION_GROUP_SIZE"] = "0"
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
    core = new_core(ov, xml)
    ov_model = _read_checked(ov, core, xml, weights)
    requested, unobservable = _add_outputs(ov_model, wanted)
    _, produced = _compile_and_infer(ov, core, ov_model, feeds, device, precision, variables)
    return _device_run(ov, requested, unobservable, produced, device)


class RuntimeGroup(Record):
    """One node of a compiled model's runtime graph that computes: the IR ``layers`` it holds (its rt_info
    ``originalLayersNames``: a fused group), the device's ``kernel`` (``layerType``), ``primitive``
    (``primitiveType``), ``runtime_precision`` and ``output_precisions``, and its ``order`` of execution."""

    __slots__ = ("layers", "kernel", "primitive", "runtime_precision", "output_precisions", "order", "for_outputs",
                 "neighbours")

    def __init__(self, layers: tuple[str, ...], kernel: str, primitive: str, runtime_precision: str,
                 output_precisions: str, order: int, for_outputs: bool = False,
                 neighbours: tuple[str, ...] = ()) -> None:
        self.layers = layers
        self.kernel = kernel
        self.primitive = primitive
        self.runtime_precision = runtime_precision
        self.output_precisions = output_precisions
        self.order = order
        self.for_outputs = for_outputs  # it feeds only the model's outputs
        self.neighbours = neighbours  # the layers named by the nodes it reads and the nodes reading it

    def signature(self, names: set[str]) -> tuple | None:
        """What must not change: its IR layers (of ``names``: a device names the nodes it adds by counters, or as
        ``layer.0``), kernel and precisions; None for a node of no IR layer that only feeds outputs (a conversion
        to the type an output is returned in)."""
        layers = tuple(sorted(name for name in self.layers if name in names))
        if not layers and self.for_outputs:
            return None
        return layers, self.kernel, self.primitive, self.runtime_precision, self.output_precisions


_NOT_COMPUTING = ("Input", "Output", "Reorder")  # the runtime graph's inputs, outputs and layout changes


def runtime_groups(compiled) -> list[RuntimeGroup]:
    """The computing nodes of ``compiled.get_runtime_model()``, in execution order (inputs, outputs and
    reorders, which only change a layout, left out)."""
    groups = []
    for node in compiled.get_runtime_model().get_ordered_ops():
        info = node.get_rt_info()
        layer_type, names, primitive, runtime, outputs, order = (
            str(info[key].astype(str)) if key in info else "" for key in (
                "layerType", "originalLayersNames", "primitiveType", "runtimePrecision", "outputPrecisions",
                "execOrder"))
        if layer_type in _NOT_COMPUTING:
            continue
        groups.append(RuntimeGroup(tuple(name for name in names.split(",") if name), layer_type, primitive,
                                   runtime, outputs, int(order) if order.lstrip("-").isdigit() else -1,
                                   _feeds_outputs_only(node), _neighbour_names(node)))
    groups.sort(key=lambda group: group.order)
    return groups


def _neighbour_names(node) -> tuple[str, ...]:
    """The ``originalLayersNames`` of the runtime nodes around ``node`` (what it reads, what reads it)."""
    around = [value.get_node() for value in node.input_values()]
    around += [target.get_node() for output in node.outputs() for target in output.get_target_inputs()]
    names = []
    for other in around:
        info = other.get_rt_info()
        if "originalLayersNames" in info:
            names.extend(name for name in str(info["originalLayersNames"].astype(str)).split(",") if name)
    return tuple(names)


def _feeds_outputs_only(node) -> bool:
    """Whether every consumer of a runtime node is an output (or a reorder feeding only outputs)."""
    users = [target.get_node() for output in node.outputs() for target in output.get_target_inputs()]
    return bool(users) and all(
        user.get_type_name() == "Result" or (_layer_type(user) == "Reorder" and _feeds_outputs_only(user))
        for user in users)


def _layer_type(node) -> str:
    info = node.get_rt_info()
    return str(info["layerType"].astype(str)) if "layerType" in info else ""


class BoundaryRun(Record):
    """A run observed only where the device materialises tensors: ``run`` (a DeviceRun of the group
    boundaries), the ``groups`` of the uninstrumented compilation, and the proof of non-intrusion: ``same_groups``
    (the instrumented compilation has the same groups, kernels and precisions) and ``same_outputs`` (its
    final outputs equal the uninstrumented ones bit for bit), with ``difference`` saying what changed."""

    __slots__ = ("run", "groups", "same_groups", "same_outputs", "difference")

    def __init__(self, run: DeviceRun, groups: list[RuntimeGroup], same_groups: bool, same_outputs: bool,
                 difference: str | None) -> None:
        self.run = run
        self.groups = groups
        self.same_groups = same_groups
        self.same_outputs = same_outputs
        self.difference = difference

    @property
    def proven(self) -> bool:
        return self.same_groups and self.same_outputs


MAX_ROUNDS = 4  # instrumented compilations, each leaving out the boundaries the previous one disturbed


def run_at_boundaries(xml: str | os.PathLike | bytes, weights,
                      boundaries: Callable[[list[RuntimeGroup], list[RuntimeGroup]], list[Key]],
                      feeds: dict[str, np.ndarray], device: str, precision: str,
                      variables: dict[str, np.ndarray | None] | None, names: set[str]) -> BoundaryRun:
    """Compile and run the model as it is, read its runtime graph's groups, then compile and run it again with
    outputs added only at ``boundaries(groups, disturbed)`` (tensors the device materialises anyway), and check
    that this changed nothing: the same groups (by the IR layer ``names`` they hold), kernels and precisions,
    the same final outputs bit for bit. When a group changed (an output added where a device computes in place,
    such as a convolution summing into the tensor of another branch), it is passed back as ``disturbed`` for
    ``boundaries`` to leave its tensors out, and the model is compiled again (``MAX_ROUNDS`` in all)."""
    ov = import_openvino()
    core = new_core(ov, xml)
    plain = _read_checked(ov, core, xml, weights)
    compiled, produced = _compile_and_infer(ov, core, plain, feeds, device, precision, variables)
    groups = runtime_groups(compiled)
    finals = [_result_key(result) for result in plain.get_results()]
    disturbed: list[RuntimeGroup] = []
    for _ in range(MAX_ROUNDS):
        instrumented = _read_checked(ov, core, xml, weights)
        requested, unobservable = _add_outputs(instrumented, boundaries(groups, disturbed))
        compiled_again, produced_again = _compile_and_infer(ov, core, instrumented, feeds, device, precision,
                                                            variables)
        again = runtime_groups(compiled_again)
        difference = _group_difference(groups, again, names)
        changed = [key for key in finals if not same_bits(produced.get(key), produced_again.get(key))]
        lost = _lost_groups(groups, again, names) + _next_to_new(groups, again, names)
        if (difference is None and not changed) or not lost:
            break
        disturbed.extend(lost)  # (a group lost again: its neighbourhood left out grows by one layer each time)
    if changed:
        name, position = changed[0]
        difference = (difference + "; " if difference else "") + (
            f"{len(changed)} final output(s) differ from the uninstrumented run's (the first: '{name}' output"
            f" {position})")
    run = _device_run(ov, requested, unobservable, produced_again, device)
    return BoundaryRun(run, groups, not _group_difference(groups, again, names), not changed, difference)


def _next_to_new(before: list[RuntimeGroup], after: list[RuntimeGroup], names: set[str]) -> list[RuntimeGroup]:
    """The groups of ``before`` next to a node ``after`` has in addition that holds no IR layer (a device names
    the nodes it splits off by counters: the scaling its attention kernel no longer holds)."""
    known = Counter(group.signature(names) for group in before)
    around = {name for group in after if group.signature(names) is not None and not known[group.signature(names)]
              and not any(name in names for name in group.layers) for name in group.neighbours}
    return [group for group in before if around.intersection(group.layers)]


def _lost_groups(before: list[RuntimeGroup], after: list[RuntimeGroup], names: set[str]) -> list[RuntimeGroup]:
    """The groups of ``before`` that ``after`` lacks."""
    left = Counter(group.signature(names) for group in after)
    lost = []
    for group in before:
        signature = group.signature(names)
        if signature is None:
            continue
        if left[signature]:
            left[signature] -= 1
        else:
            lost.append(group)
    return lost


def probe_one(xml: str | os.PathLike | bytes, weights, key: Key, groups: list[RuntimeGroup],
              feeds: dict[str, np.ndarray], device: str, precision: str,
              variables: dict[str, np.ndarray | None] | None, names: set[str]) -> tuple[np.ndarray | None, str | None]:
    """The device's value of one layer output, made the only added output (a bisection's probe), and what the
    instrumentation changed in the compiled groups (None when nothing)."""
    ov = import_openvino()
    core = new_core(ov, xml)
    ov_model = _read_checked(ov, core, xml, weights)
    requested, unobservable = _add_outputs(ov_model, [key])
    compiled, produced = _compile_and_infer(ov, core, ov_model, feeds, device, precision, variables)
    run = _device_run(ov, requested, unobservable, produced, device)
    return run.values.get(key), _group_difference(groups, runtime_groups(compiled), names)


def _group_difference(before: list[RuntimeGroup], after: list[RuntimeGroup], names: set[str]) -> str | None:
    """What differs between two compilations' groups (None when nothing): the first group of each side that the
    other lacks."""
    left = Counter(group.signature(names) for group in before)
    right = Counter(group.signature(names) for group in after)
    left.pop(None, None)
    right.pop(None, None)
    if left == right:
        return None
    lost, gained = list((left - right).elements()), list((right - left).elements())

    def text(signature) -> str:
        return f"{','.join(signature[0]) or '-'} ({signature[1]}, {signature[2]}, {signature[3]} -> {signature[4]})"

    parts = [f"{len(lost)} group(s) of the original compilation are gone (the first: {text(lost[0])})" if lost
             else "", f"{len(gained)} new (the first: {text(gained[0])})" if gained else ""]
    return "the instrumented compilation's groups differ: " + "; ".join(part for part in parts if part)


def same_bits(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Whether two values have the same type, shape and bits (strings: the same items)."""
    if a is None or b is None:
        return a is b
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == object:
        return bool(np.array_equal(a, b))
    return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def _read_checked(ov, core, xml, weights):
    try:
        return _read(ov, core, xml, weights)
    except Exception as error:  # OpenVINO raises plain RuntimeErrors
        raise UnsupportedError(f"OpenVINO cannot read this model: {_first_line(error)}") from None


def _add_outputs(ov_model, wanted: Sequence[Key]) -> tuple[list[Key], dict[Key, str]]:
    """Make each ``wanted`` layer output a model output: the keys done, and the others with the reason."""
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
    return requested, unobservable


@fpenv.preserved()  # the CPU plugin may set FTZ/DAZ in this thread: restored after
def _compile_and_infer(ov, core, ov_model, feeds: dict[str, np.ndarray], device: str, precision: str,
                       variables: dict[str, np.ndarray | None] | None):
    """The compiled model and its outputs after one inference, by (source layer name, output position)."""
    try:
        compiled = core.compile_model(ov_model, device, device_config(device, precision, variables is not None))
        request = compiled.create_infer_request()
        if variables is not None:
            set_variables(ov, request, variables)
        for parameter, port in zip(ov_model.get_parameters(), compiled.inputs):
            name = parameter.get_friendly_name()
            if name not in feeds:
                raise UnsupportedError(f"OpenVINO's model has an input '{name}' that ir-run's model does not have")
            request.set_tensor(port, _tensor(ov, feeds[name], parameter.get_element_type().get_type_name(), name))
        request.infer()
    except UnsupportedError:
        raise
    except Exception as error:
        raise UnsupportedError(f"OpenVINO could not compile or run this model on {device}: {_first_line(error)}",
                               hint="crosscheck compares layers only where the device runs the model") from None
    produced: dict[Key, np.ndarray] = {}
    for result, port in zip(ov_model.outputs, compiled.outputs):
        produced.setdefault(_result_key(result.get_node()), _array(request.get_tensor(port)))
    return compiled, produced


def _result_key(result) -> Key:
    source = result.input_value(0)
    return source.get_node().get_friendly_name(), source.get_index()


def _device_run(ov, requested: list[Key], unobservable: dict[Key, str], produced: dict[Key, np.ndarray],
                device: str) -> DeviceRun:
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

    @fpenv.preserved()  # the CPU plugin may set FTZ/DAZ in this thread: restored after
    def __init__(self, xml: str | os.PathLike | bytes, weights, device: str, precision: str, stateful: bool) -> None:
        self._ov = import_openvino()
        core = new_core(self._ov, xml)
        try:
            compiled = core.compile_model(_read(self._ov, core, xml, weights), device,
                                          device_config(device, precision, stateful))
        except Exception as error:
            raise UnsupportedError(f"OpenVINO could not compile this model for {device}:"
                                   f" {_first_line(error)}") from None
        self._request = compiled.create_infer_request()
        self._outputs = compiled.outputs
        self.version = self._ov.get_version()

    @fpenv.preserved()  # the CPU plugin may set FTZ/DAZ in this thread: restored after
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


def _tensor(ov, array: np.ndarray, element_type: str, name: str = "a variable"):
    """An ov.Tensor holding ``array`` (the value of input ``name``); bf16 and f8 values are copied as their bits,
    strings as their UTF-8 bytes (an UnsupportedError for one that ends in a NUL byte: OpenVINO's Python API
    passes strings through numpy, whose ``S`` and ``U`` types drop them)."""
    if element_type == "string":
        text = strings.as_strings(np.asarray(array))
        if text is None:
            raise UnsupportedError(f"'{name}' is a string input; {np.asarray(array).dtype} values cannot be given")
        items = [strings.encode(item) for item in text.ravel().tolist()]
        ending = next((index for index, item in enumerate(items) if item.endswith(b"\0")), None)
        if ending is not None:
            raise UnsupportedError(f"element {ending} of the string input '{name}' ends in a NUL byte"
                                   f" ({items[ending][-20:]!r}), which OpenVINO's Python API cannot take (it"
                                   " passes strings as numpy bytes, which drop trailing NULs)",
                                   hint="compare with OpenVINO on texts that do not end in NUL")
        tensor = ov.Tensor(ov.Type.string, list(text.shape))
        if items:  # (OpenVINO refuses to fill an empty one: 'Unknown string kind')
            tensor.bytes_data = items
        return tensor
    raw = _RAW_TYPES.get(element_type)
    array = np.require(array, requirements="C")  # unlike np.ascontiguousarray, keeps a rank-0 array rank 0
    if raw is None:
        return ov.Tensor(array)
    tensor = ov.Tensor(getattr(ov.Type, element_type), list(array.shape))
    np.copyto(tensor.data.view(raw).reshape(array.shape), array.view(raw))
    return tensor


def _array(tensor) -> np.ndarray:
    """A copy of an ov.Tensor's values; bf16 and f8 become ml_dtypes arrays (OpenVINO shows their bits)."""
    element_type = tensor.element_type.get_type_name()
    if element_type == "string":  # (numpy S: an element's trailing NUL bytes are lost)
        items = [strings.decode(item) for item in tensor.bytes_data.ravel().tolist()]
        return strings.from_items(items, tuple(tensor.shape))
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
