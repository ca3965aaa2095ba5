"""Running a plan, and checking the data fed to a model against its inputs."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import numpy as np

from . import fpenv
from .casting import LEVELS, CastRefused, caller_stacklevel, cast_array, is_numpy_type, weakest_level
from .errors import InputError, IRError, with_layer
from .plan import Plan, Step, kernel_error
from .strided_copy import c_ordered_copy, copy_into
from .strings import as_strings, to_output
from .types import DYNAMIC, ElementType, PartialShape, TensorSpec, dims_text, element_type_of


class TensorInfo(NamedTuple):
    """A model input or output: names, element type and (partial) shape."""

    name: str
    names: tuple[str, ...]
    element_type: ElementType
    partial_shape: PartialShape
    layer_name: str

    @property
    def dtype(self) -> np.dtype | None:
        """The numpy dtype (None for a dynamic element type)."""
        return self.element_type.dtype

    @property
    def shape(self) -> tuple[int | None, ...] | None:
        """The shape with None for each non-static dim; None when the rank is dynamic."""
        return self.partial_shape.to_tuple()

    def spec_for(self, array: np.ndarray) -> TensorSpec:
        """The spec of ``array`` fed to this input: its shape, and the input's element type (the array's when
        the input's is dynamic)."""
        element_type = self.element_type if self.dtype is not None else element_type_of(array.dtype)
        return TensorSpec(element_type, PartialShape.of(array.shape))

    def __str__(self) -> str:
        return f"{self.name}: {self.element_type.name}{self.partial_shape}"

    def __repr__(self) -> str:
        return f"<TensorInfo {self}>"


Observer = Callable[[Step, np.ndarray, float], None]


class CastWarning(UserWarning):
    """An input array was cast to the model's element type because ``cast=`` allowed it."""


def bind_feeds(
    inputs: Sequence[TensorInfo], feeds, named: Mapping[str, object], cast: str | None
) -> list[np.ndarray]:
    """Order and check feeds (a mapping by name, or a sequence in input order) against the inputs; values are
    converted with FTZ/DAZ cleared (:mod:`.fpenv`)."""
    if feeds is None:
        feeds = {}
    if isinstance(feeds, Mapping):
        twice = set(feeds) & set(named)
        if twice:
            names = ", ".join(map(repr, sorted(twice)))
            raise InputError(f"input(s) {names} given twice (in the mapping and by keyword)")
        ordered = _by_name(inputs, {**feeds, **named})
    else:
        if isinstance(feeds, np.ndarray):
            feeds = [feeds]
        if not isinstance(feeds, (Sequence, np.ndarray)) or isinstance(feeds, (str, bytes)):
            raise InputError(
                f"feeds must be a mapping of name -> array or a sequence of arrays, got {type(feeds).__name__}",
                hint=_listing(inputs),
            )
        feeds = list(feeds)
        if named:
            raise InputError("pass inputs either by position or by name, not both", hint=_listing(inputs))
        if len(feeds) != len(inputs):
            raise InputError(
                f"the model has {len(inputs)} input(s), {len(feeds)} value(s) were given",
                hint=_listing(inputs),
            )
        ordered = feeds
    flushing = fpenv.enter()  # (a conversion to float32 flushes a subnormal under FTZ/DAZ)
    try:
        return [_check_value(info, value, cast) for info, value in zip(inputs, ordered)]
    finally:
        if flushing is not None:
            fpenv.leave(flushing)


def _by_name(inputs: Sequence[TensorInfo], feeds: Mapping) -> list:
    ordered, given = _place_by_name(inputs, feeds, lambda key: f"the model has no input named {key!r}",
                                    lambda name, key: f"input '{name}' is given twice (once as {key!r})",
                                    _listing(inputs))
    missing = [inputs[i].name for i, ok in enumerate(given) if not ok]
    if missing:
        raise InputError(f"no value given for input(s) {', '.join(map(repr, missing))}", hint=_listing(inputs))
    return ordered


def _place_by_name(infos: Sequence[TensorInfo], values: Mapping, unknown: Callable[[object], str],
                   twice: Callable[[str, object], str], listing: str) -> tuple[list, list[bool]]:
    """``values`` keyed by any name of ``infos`` (primary name, tensor names, layer name), placed in
    ``infos`` order, and which places were given. An unknown key (with the closest name as a hint) and
    one tensor given under two names are InputErrors with the messages ``unknown`` and ``twice`` make."""
    lookup: dict[str, int] = {}
    for index, info in enumerate(infos):
        for name in (info.name, *info.names, info.layer_name):
            lookup.setdefault(name, index)
    ordered: list = [None] * len(infos)
    given = [False] * len(infos)
    for key, value in values.items():
        index = lookup.get(key) if isinstance(key, str) else None
        if index is None:
            from .suggest import closest  # only for this error message

            close = closest(str(key), lookup)
            hint = f"did you mean '{close}'? " if close else ""
            raise InputError(unknown(key), hint=hint + listing)
        if given[index]:
            raise InputError(twice(infos[index].name, key))
        ordered[index], given[index] = value, True
    return ordered, given


def _listing(infos: Sequence[TensorInfo], what: str = "inputs") -> str:
    return f"the model's {what} are: " + "; ".join(str(info) for info in infos)


def _check_value(info: TensorInfo, value, cast: str | None) -> np.ndarray:
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
    else:
        array = _from_python(info, value, cast)
    if info.element_type.kind == "string":
        return _check_strings(info, array)
    unusual = info.element_type == DYNAMIC or array.dtype.kind == "V" or not is_numpy_type(array.dtype)
    if array.dtype.hasobject or array.dtype.kind in "USMm" or (unusual and element_type_of(array.dtype) is None):
        # (unusual: numpy's void and structured dtypes, and ml_dtypes' types the IR lacks, such as int2)
        raise InputError(f"input '{info.name}' got an array of dtype {array.dtype}, which is not an IR element type",
                         hint=None if info.dtype is None else
                         f"convert it first, e.g. array.astype({_dtype_expression(info.dtype)})")
    if info.element_type != DYNAMIC and array.dtype != info.dtype:
        array = _cast(info, array, cast)
    if not info.partial_shape.accepts(array.shape):
        raise InputError(
            f"input '{info.name}' expects shape {info.partial_shape.brief()}, got [{dims_text(array.shape, ', ')}]",
            hint=_shape_hint(info.partial_shape, array.shape),
        )
    limit = info.element_type.code_limit
    if limit is not None and array.size and array.max() > limit:
        raise InputError(f"input '{info.name}' has element type {info.element_type}: its values must be 0..{limit},"
                         f" got {array.max()}")
    return array


def _check_strings(info: TensorInfo, array: np.ndarray) -> np.ndarray:
    """A string input's array as an object array of str (no cast level turns numbers into text)."""
    converted = as_strings(array)
    if converted is None:
        raise InputError(f"input '{info.name}' has element type string, got an array of dtype {array.dtype}"
                         + (" holding values that are not str or bytes" if array.dtype.kind == "O" else ""),
                         hint="pass text: a numpy array of str (or bytes, UTF-8), e.g. np.array(['a', 'b'])")
    if not info.partial_shape.accepts(converted.shape):
        raise InputError(
            f"input '{info.name}' expects shape {info.partial_shape.brief()}, got [{dims_text(converted.shape, ', ')}]",
            hint=_shape_hint(info.partial_shape, converted.shape),
        )
    return converted


def _from_python(info: TensorInfo, value, cast: str | None) -> np.ndarray:
    """Python values (lists, numbers) as an array of the input's type, refusing lossy conversions."""
    try:
        natural = np.asarray(value, dtype=object if info.element_type.kind == "string" else None)
    except (TypeError, ValueError) as exc:
        raise InputError(f"input '{info.name}': the given value is not an array: {exc}") from None
    if natural.dtype.kind in "OUSVMmc" or info.dtype is None or info.element_type.kind == "string":
        return natural  # refused by the caller, or by _cast (complex values: unless exact under cast='unsafe')
    with np.errstate(all="ignore"):
        converted = natural.astype(info.dtype)
        both_float = natural.dtype.kind == "f" and info.element_type.kind == "float"
        if both_float or np.array_equal(converted.astype(natural.dtype), natural):
            return converted
    return _cast(info, natural, cast)


def _cast(info: TensorInfo, array: np.ndarray, cast: str | None) -> np.ndarray:
    """``array`` converted to the input's dtype as ``cast`` allows (ir_runner.casting), with a CastWarning
    pointing at the caller's line; refused with a hint naming a level or a conversion that works."""
    expected = info.dtype
    got = element_type_of(array.dtype)
    got_name = got.name if got else str(array.dtype)
    if cast is not None and cast not in LEVELS:
        raise InputError(f"cast={cast!r} is not one of {', '.join(map(repr, LEVELS))}")
    try:
        converted = cast_array(array, info.element_type, cast or "no")
    except CastRefused as refused:
        if cast is None:
            raise InputError(
                f"input '{info.name}' expects element type {info.element_type.name} ({expected}),"
                f" got {got_name} ({array.dtype}){_no_complex(array)}", hint=_cast_hint(info, array)) from None
        raise InputError(f"input '{info.name}': cannot cast {array.dtype} to {expected} under cast={cast!r}:"
                         f" {refused}", hint=_cast_hint(info, array)) from None
    except TypeError:  # ml_dtypes has no int4 <-> uint4 conversion
        raise InputError(f"input '{info.name}': numpy cannot convert {array.dtype} to {expected}",
                         hint=f"convert it first, e.g. array.astype(np.int8).astype({_dtype_expression(expected)})",
                         ) from None
    warnings.warn(f"input '{info.name}': cast {array.dtype} to {expected} (cast={cast!r})", CastWarning,
                  stacklevel=caller_stacklevel())
    return converted


def _no_complex(array: np.ndarray) -> str:
    return "; the IR has no complex element type" if array.dtype.kind == "c" else ""


def _cast_hint(info: TensorInfo, array: np.ndarray) -> str:
    """A call that works: the weakest level that converts this array, or a conversion to do first."""
    level = weakest_level(array, info.element_type)
    if array.dtype.kind == "c":
        return "pass array.real to drop the imaginary parts (cast='unsafe' converts only when all of them are 0)"
    if level is None:
        return f"convert it first, e.g. array.astype({_dtype_expression(info.dtype)})"
    lossy = " (floats are truncated toward zero)" if level == "unsafe" and array.dtype.kind == "f" else ""
    return f"pass cast={level!r}{lossy}, or convert it first: array.astype({_dtype_expression(info.dtype)})"


def _shape_hint(expected: PartialShape, got: tuple[int, ...]) -> str | None:
    if expected.rank is not None and expected.rank != len(got):
        return f"the rank must be {expected.rank}, the array has rank {len(got)}"
    return None


def execute(plan: Plan, feeds: Sequence[np.ndarray], observe: Observer | None = None,
            out: Sequence[np.ndarray | None] | None = None) -> list[np.ndarray]:
    """Run the plan's steps on ``feeds`` (already checked); outputs never alias a Const or an input.

    Floating-point warnings (overflow, invalid, division by zero) are ignored for the whole run: the values
    are the reference's (infinities, NaNs), never an error. (OpenBLAS on one thread, :mod:`.blas`, and glibc's
    heap keeping freed memory, :mod:`.heap`, were set when the first plan was built: ``plan.build_plan``.)
    Pool workers run a kernel's pieces in a copy of the calling thread's context, its errstate included
    (numpy's is per context: :func:`~ir_runner.parallel.run_pieces`).
    A thread that flushes subnormals to zero (FTZ/DAZ, as OpenVINO's CPU plugin leaves it) runs with them
    cleared and gets its own mode back after (:mod:`.fpenv`: 40 ns a run when it does not flush).

    ``observe(step, value, seconds)``, when given, is called after each step (for tracing and per-layer
    timing), before any slot is released; ``value`` is a tuple for a step of several outputs (such a run
    writes no step's output into its input, which the observer may keep: :mod:`.inplace`). ``out``, when
    given, holds per output a buffer checked by
    :func:`bind_outputs` (or None: a new array as usual): the step computing an output writes into its
    buffer when its kernel can, else the value is copied into it, and the buffers are returned.
    """
    into = None
    if out is not None:
        into = {slot: target for slot, target, ok in zip(plan.output_slots, out, plan.output_into)
                if ok and target is not None}
    slots = plan.initial_slots.copy()
    for slot, value in zip(plan.input_slots, feeds):
        slots[slot] = value
    quiet = _FP_STATE.set(_FP_IGNORED)  # once per run: kernels on this thread need no errstate of their own
    flushing = fpenv.enter()
    try:
        if observe is None and not into:
            _run_steps(plan.program, slots)
        else:
            _run_observed(plan.steps, slots, observe, into)
    finally:
        if flushing is not None:
            fpenv.leave(flushing)
        _FP_STATE.reset(quiet)
    return _outputs(plan, slots, out)


def _ignored_fp_state():
    """numpy's floating-point-error state (a context variable, numpy >= 2) and its value under
    ``np.errstate(all="ignore")``: setting it directly costs 0.1 us a run, entering ``np.errstate`` 1 us (15% of
    a two-layer model's run). A numpy without that private variable gets ``np.errstate`` itself."""
    try:
        from numpy._core._ufunc_config import _extobj_contextvar
    except ImportError:
        return _Errstate(), None
    with np.errstate(all="ignore"):
        return _extobj_contextvar, _extobj_contextvar.get()


class _Errstate:
    """``set``/``reset`` as a context variable has them, by entering and leaving ``np.errstate(all="ignore")``."""

    def set(self, _value) -> np.errstate:
        state = np.errstate(all="ignore")
        state.__enter__()
        return state

    def reset(self, state: np.errstate) -> None:
        state.__exit__(None, None, None)


_FP_STATE, _FP_IGNORED = _ignored_fp_state()


def _run_steps(program: Sequence[tuple], slots: list) -> None:
    """The plain loop over the plan's ``program``: each step's kernel on its input slots (the common path, as
    little per-step work as possible; an exception is turned into an IRError naming the step's layer by
    :func:`kernel_error`)."""
    step = None
    try:
        for kernel, fetch, target, release, step in program:  # noqa: B007 (the handlers name its layer)
            slots[target] = kernel(*fetch(slots))  # (several outputs: a tuple into a slice of slots)
            if release:
                for slot in release:
                    slots[slot] = None
    except IRError as error:
        raise with_layer(error, step.layer) from None
    except Exception as exc:
        raise kernel_error(exc, step.layer) from exc


def _run_observed(steps: Sequence[Step], slots: list, observe: Observer | None, into: dict | None) -> None:
    """The loop with an observer (timings, traces) or caller-given output buffers."""
    for step in steps:
        started = time.perf_counter() if observe is not None else 0.0
        target = into.get(step.output) if into else None
        try:
            if target is not None:
                step.kernel(*step.fetch(slots), out=target)
                slots[step.output] = target
            elif step.outputs is None:
                slots[step.output] = (step.kernel if observe is not None else step.call)(*step.fetch(slots))
            else:
                values = step.kernel(*step.fetch(slots))
                for slot, value in zip(step.outputs, values):
                    slots[slot] = value
        except IRError as error:
            raise with_layer(error, step.layer) from None
        except Exception as exc:
            raise kernel_error(exc, step.layer) from exc
        if observe is not None:
            observed = slots[step.output] if step.outputs is None else tuple(slots[i] for i in step.outputs)
            observe(step, observed, time.perf_counter() - started)
        for slot in step.release:
            slots[slot] = None


def _outputs(plan: Plan, slots: list, out: Sequence[np.ndarray | None] | None) -> list[np.ndarray]:
    """The run's outputs: an output that may alias is copied as a new C-ordered array (a Transpose's view too),
    or into its caller-given buffer."""
    if out is None:
        return [
            to_output(slots[slot]) if slots[slot].dtype.hasobject else
            c_ordered_copy(slots[slot]) if copy else slots[slot]
            for slot, copy in zip(plan.output_slots, plan.output_copies)
        ]
    results = []
    for slot, copy, target in zip(plan.output_slots, plan.output_copies, out):
        value = slots[slot]
        if target is None:
            results.append(to_output(value) if value.dtype.hasobject else
                           c_ordered_copy(value) if copy else value)
        else:
            if value is not target:
                copy_into(target, value)
            results.append(target)
    return results


def bind_outputs(inputs: Sequence[TensorInfo], outputs: Sequence[TensorInfo], plan: Plan, out,
                 feeds: Sequence[np.ndarray]) -> list[np.ndarray | None]:
    """Order and check caller-given output buffers (a mapping by output name, or a sequence in output
    order; None entries: allocate as usual) against the plan's output dtypes and shapes.

    Each must be an ndarray of exactly the output's dtype and shape, C-contiguous and writeable, and
    share no memory with an input feed or another buffer."""
    if isinstance(out, Mapping):
        ordered = _outputs_by_name(outputs, out)
    else:
        if isinstance(out, np.ndarray):
            out = [out]
        if not isinstance(out, Sequence) or isinstance(out, (str, bytes)):
            raise InputError(
                f"out= must be a mapping of output name -> array or a sequence of arrays, got {type(out).__name__}",
                hint=_listing(outputs, "outputs"),
            )
        if len(out) != len(outputs):
            raise InputError(
                f"the model has {len(outputs)} output(s), out= gives {len(out)} array(s)",
                hint="one array (or None) per output, in the order of model.outputs; " + _listing(outputs, "outputs"),
            )
        ordered = list(out)
    given = []
    for info, (dtype, shape), target in zip(outputs, plan.output_specs, ordered):
        if target is None:
            continue
        if info.element_type.kind == "string":
            raise InputError(f"output '{info.name}' is a string tensor: out= cannot hold a buffer for it",
                             hint="pass None in its place (a new numpy str array is returned)")
        if shape is None:
            raise InputError(f"output '{info.name}' has a shape only the run decides: out= cannot hold a buffer for it",
                             hint="pass None in its place (a new array is returned)")
        if not (isinstance(target, np.ndarray) and target.dtype == dtype and target.shape == shape
                and target.flags.c_contiguous and target.flags.writeable):
            raise _target_error(info, dtype, shape, target)
        given.append((info, target))
    for index, (info, target) in enumerate(given):
        for feed_info, feed in zip(inputs, feeds):
            if np.may_share_memory(target, feed):
                raise InputError(
                    f"the out= array for output '{info.name}' shares memory with input '{feed_info.name}'",
                    hint="outputs are written while inputs are read: pass a separate array",
                )
        for other, previous in given[:index]:
            if np.may_share_memory(target, previous):
                raise InputError(
                    f"the out= arrays for outputs '{other.name}' and '{info.name}' share memory",
                    hint="give each output its own array",
                )
    return ordered


def _outputs_by_name(outputs: Sequence[TensorInfo], out: Mapping) -> list:
    if sum(info.name in out for info in outputs) == len(out):  # the common case: every key a primary name
        return [out.get(info.name) for info in outputs]
    ordered, _ = _place_by_name(outputs, out, lambda key: f"out= names {key!r}, which is not an output of the model",
                                lambda name, key: f"out= gives output '{name}' twice (once as {key!r})",
                                _listing(outputs, "outputs"))
    return ordered


def _target_error(info: TensorInfo, dtype: np.dtype, shape: tuple[int, ...], target) -> InputError:
    if not isinstance(target, np.ndarray):
        problem = f"got {type(target).__name__}"
    elif target.dtype != dtype or target.shape != shape:
        problem = f"got {target.dtype} {list(target.shape)}"
    elif not target.flags.c_contiguous:
        problem = f"got a {target.dtype} {list(target.shape)} array that is not C-contiguous"
    else:
        problem = f"got a {target.dtype} {list(target.shape)} array that is read-only"
    return InputError(
        f"the out= array for output '{info.name}' must be a C-contiguous, writeable {dtype} array of shape"
        f" {list(shape)}, {problem}",
        hint=f"allocate it once, np.empty({tuple(shape)}, dtype={_dtype_expression(dtype)}), and pass it on every call",
    )


def _dtype_expression(dtype: np.dtype) -> str:
    """How to spell ``dtype`` in Python: ``np.float32``, or ``ml_dtypes.bfloat16`` for the types numpy lacks."""
    return f"np.{dtype.name}" if isinstance(getattr(np, dtype.name, None), type) else f"ml_dtypes.{dtype.name}"
