"""PriorBox-1/8 and PriorBoxClustered-1 (``docs/semantics.md``, "Detection heads"): the anchor boxes of an SSD
head. From ``output_size`` [H, W] (the feature map) and ``image_size`` [IH, IW] (1-D, two integers each) they give
an f32 [2, 4 * H * W * P] tensor: row 0 the boxes (``xmin, ymin, xmax, ymax`` normalised by the image size, per
cell in row-major order and per prior), row 1 their variances. The output's length depends on the VALUES of
``output_size`` (a constant, or a ShapeOf of static dims, folds; else the plan is made per value).

Computed as OpenVINO's references (``ov::reference::prior_box``, ``prior_box_clustered``) in f32, in their order:

- PriorBox: the aspect ratios are 1 then each ``aspect_ratio`` not within 1e-6 of one already listed (and its
  inverse after it when ``flip``); ``step`` 0 puts centres at ``(w + 0.5) * IW / W``, else at ``(offset + w) *
  step``; ``scale_all_sizes`` false (MXNet) multiplies ``step`` (-1: ``IH / H``) and ``min_size`` by IH. Per cell:
  for each ``fixed_size`` the ``density``/``fixed_ratio`` grids (clipped at once to [0, 1]), then for each
  ``min_size`` its square box, the ``max_size`` box (``sqrt(min * max)``) and the aspect-ratio boxes (their order
  set by ``min_max_aspect_ratios_order``; PriorBox-1 has it true); a box is ``(centre -+ half) * (1 / IW)``.
  ``clip`` then clamps every coordinate to [0, 1] (NaN stays NaN).
- PriorBoxClustered: centres ``(w + offset) * step_w`` (``step_w``/``step_h`` 0 take ``step``; both 0:
  ``IW / W`` and ``IH / H``), boxes ``(centre -+ width / 2) / IW`` (a division), ``clip`` clamps them.
- Variances: one value repeated, four repeated per box, or none (0.1).

Bit-exact against ``Node.evaluate`` (every integral input type). Refused at load (``InferenceError``, naming the
attribute): a variance list of another length, a ``density`` shorter than ``fixed_size``, and attribute sets for
which the boxes the reference writes per cell differ from the count its shape inference declares (e.g. a
``max_size`` with ``scale_all_sizes`` false, a ``max_size`` longer than ``min_size``): the reference then writes
outside its output or leaves part of it unwritten. Refused at run (``InputError``): negative sizes.
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ...types import DYNAMIC_DIM, Dim, PartialShape, TensorSpec, element_type
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.dims import dim_mul
from ..toolkit.rounding import round_half_away

NAMES = ("output_size", "image_size")
ROLES = ("sizes", "image_size")
F32 = np.float32
MAX_ELEMENTS = 1 << 28  # output elements a run may make (a hostile size input would ask for exabytes)


def _ratios(aspect_ratio: list[float], flip: bool) -> list[np.float32]:
    """The aspect ratios as the reference lists them: 1, then each new one (not within 1e-6 of a listed one),
    followed by its inverse when ``flip``."""
    ratios = [F32(1.0)]
    for value in (F32(v) for v in aspect_ratio):
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            if any(float(abs(F32(value - r))) < 1e-6 for r in ratios):
                continue
            ratios.append(value)
            if flip:
                ratios.append(F32(F32(1.0) / value))
    return ratios


def _normalized_count(aspect_ratio: list[float], flip: bool) -> int:
    """How many distinct ratios the op's shape inference counts (each rounded to 1e-6 in f32, with 1)."""
    unique = {1.0}
    million = F32(1e6)
    with np.errstate(over="ignore"):
        for value in (F32(v) for v in aspect_ratio):
            for r in ((value, F32(F32(1.0) / value)) if flip else (value,)):
                rounded = round_half_away(F32(r * million))
                unique.add(float(F32(rounded / million)))
    return len(unique)


def _declared_priors(a: dict) -> int:
    """``PriorBox::number_of_priors``: the priors per cell the shape inference declares."""
    total = _normalized_count(a["aspect_ratio"], a["flip"])
    if a["scale_all_sizes"]:
        count = total * len(a["min_size"]) + len(a["max_size"])
    else:
        count = total + len(a["min_size"]) - 1
    if a["fixed_size"]:
        count = total * len(a["fixed_size"])
    for density in a["density"]:
        d = int(density)
        count += (len(a["fixed_ratio"]) if a["fixed_ratio"] else total) * (d * d - 1)
    return count


def _written_priors(a: dict) -> int:
    """The boxes the reference writes per cell."""
    ratios = [r for r in _ratios(a["aspect_ratio"], a["flip"]) if not abs(float(r) - 1.0) < 1e-6]
    count = 0
    for s in range(len(a["fixed_size"])):
        d = int(a["density"][s])
        cells = d * d if d > 0 else 0
        if a["fixed_ratio"]:
            count += len(a["fixed_ratio"]) * cells
        else:
            count += (cells if a["density"] else 0) + len(ratios) * cells
    mins = len(a["min_size"])
    for i in range(mins):
        count += 1 + (len(a["max_size"]) > i)
        if a["scale_all_sizes"] or i == mins - 1:
            count += len(ratios)
    return count


def _infer_prior_box(ctx: OpContext, version: int):
    a = {"min_size": ctx.attr_floats("min_size", []), "max_size": ctx.attr_floats("max_size", []),
         "aspect_ratio": ctx.attr_floats("aspect_ratio", []), "density": ctx.attr_floats("density", []),
         "fixed_ratio": ctx.attr_floats("fixed_ratio", []), "fixed_size": ctx.attr_floats("fixed_size", []),
         "clip": ctx.attr_bool("clip", False), "flip": ctx.attr_bool("flip", False),
         "step": ctx.attr_float("step", 0.0), "offset": ctx.attr_float("offset"),
         "variance": ctx.attr_floats("variance", []), "scale_all_sizes": ctx.attr_bool("scale_all_sizes", True),
         "min_max_order": ctx.attr_bool("min_max_aspect_ratios_order", True) if version == 8 else True}
    _check_inputs(ctx)
    if any(not np.isfinite(F32(v)) or v <= 0 for v in a["aspect_ratio"]):
        ctx.fail(f"attribute {ctx.attr_shown('aspect_ratio')} must hold positive finite numbers")
    if len(a["variance"]) not in (0, 1, 4):
        ctx.fail(f"attribute variance must have 0, 1 or 4 values, got {len(a['variance'])}",
                 hint="OpenVINO's reference asserts it")
    if a["fixed_size"] and len(a["density"]) < len(a["fixed_size"]):
        ctx.fail(f"attribute density ({len(a['density'])} values) must have a value per fixed_size"
                 f" ({len(a['fixed_size'])} values)", hint="OpenVINO's reference reads a density per fixed size")
    if any(not np.isfinite(v) or v < 0 or v > 2**31 for v in a["density"] + a["fixed_size"]):
        ctx.fail("attributes density and fixed_size must be finite, non-negative and below 2**31")
    if a["fixed_size"] and any(int(d) == 0 for d in a["density"][:len(a["fixed_size"])]):
        ctx.fail("attribute density must be at least 1 where a fixed_size uses it (the reference divides by it)")
    declared, written = _declared_priors(a), _written_priors(a)
    if declared != written:
        ctx.fail(f"these attributes make OpenVINO's reference write {written} boxes per cell into an output that"
                 f" its shape inference sizes for {declared} ({ctx.attr_shown('min_size')},"
                 f" {ctx.attr_shown('max_size')}, {ctx.attr_shown('aspect_ratio')}, scale_all_sizes="
                 f"{a['scale_all_sizes']}, {ctx.attr_shown('fixed_size')}): it would write outside the output or"
                 " leave part of it unwritten", hint="e.g. max_size needs scale_all_sizes=true and no more values"
                 " than min_size")
    params = {key: tuple(value) if isinstance(value, list) else value for key, value in a.items()}
    params["priors"] = declared
    return _output(ctx, declared), params


def _infer_clustered(ctx: OpContext):
    widths, heights = ctx.attr_floats("width", []), ctx.attr_floats("height", [])
    variance = ctx.attr_floats("variance", [])
    _check_inputs(ctx)
    if len(widths) != len(heights):
        ctx.fail(f"attributes width and height must have as many values, got {len(widths)} and {len(heights)}")
    if len(variance) not in (0, 1, 4):
        ctx.fail(f"attribute variance must have 0, 1 or 4 values, got {len(variance)}",
                 hint="OpenVINO's reference asserts it")
    params = {"widths": tuple(widths), "heights": tuple(heights), "clip": ctx.attr_bool("clip", True),
              "step": ctx.attr_float("step", 0.0), "step_w": ctx.attr_float("step_w", 0.0),
              "step_h": ctx.attr_float("step_h", 0.0), "offset": ctx.attr_float("offset"),
              "variance": tuple(variance)}
    return _output(ctx, len(widths)), params


def _check_inputs(ctx: OpContext) -> None:
    for position, spec in enumerate(ctx.inputs):
        if spec.element_type.kind not in ("int", "uint", "dynamic"):
            ctx.fail(f"{NAMES[position]} must have an integral element type, got {spec.element_type}",
                     position=position)
        if spec.shape.rank is not None and spec.shape.rank != 1:
            ctx.fail(f"{NAMES[position]} must be 1-D, got {spec.shape.brief()}", position=position)
    first = ctx.inputs[0].shape
    if first.rank == 1 and not first.dims[0].contains(2):
        ctx.fail(f"output_size must have two elements [H, W], got {first.brief()}", position=0)


def _output(ctx: OpContext, priors: int) -> list[TensorSpec]:
    value = ctx.partial_value(0)
    length = DYNAMIC_DIM
    if value is not None:
        if len(value) != 2:
            ctx.fail(f"output_size must have two elements [H, W], got {len(value)}", position=0)
        h, w = value
        if (h.hi is not None and h.hi < 0) or (w.hi is not None and w.hi < 0):
            ctx.fail(f"output_size must not be negative, got [{h}, {w}]", position=0)
        h, w = Dim(max(h.lo, 0), h.hi), Dim(max(w.lo, 0), w.hi)
        factor = 4 * priors
        length = dim_mul(dim_mul(h, w), factor)
    return [TensorSpec(element_type("f32"), PartialShape((Dim(2, 2), length)))]


def _sizes(output_size: np.ndarray, image_size: np.ndarray, priors: int) -> tuple[int, int, int, int]:
    """(H, W, IH, IW) as int64 (the reference's conversion), checked."""
    for position, (name, array) in enumerate(zip(NAMES, (output_size, image_size))):
        if array.shape != (2,):
            raise InputError(f"{name} must hold two values [height, width], got shape {list(array.shape)}",
                             port=f"input {position} ({name})")
    h, w = (int(v) for v in output_size.astype(np.int64))
    ih, iw = (int(v) for v in image_size.astype(np.int64))
    if h < 0 or w < 0:
        raise InputError(f"output_size [{h}, {w}] must not be negative", port="input 0 (output_size)")
    if 8 * h * w * priors > MAX_ELEMENTS:
        raise InputError(f"output_size [{h}, {w}] would make {8 * h * w * priors} values (more than"
                         f" {MAX_ELEMENTS})", port="input 0 (output_size)")
    return h, w, ih, iw


def _written(out: np.ndarray, coords: np.ndarray, clip: bool, variance: tuple[float, ...]) -> np.ndarray:
    """``out`` holding the boxes in row 0 (clipped to [0, 1] when ``clip``; NaN kept) and the variances in row 1."""
    if clip:
        coords = np.where(coords < 0, F32(0), coords)
        coords = np.where(coords > 1, F32(1), coords)
    out[0] = coords.reshape(-1)
    _variances(out, variance)
    return out


def _variances(out: np.ndarray, variance: tuple[float, ...]) -> None:
    values = np.asarray(variance or (0.1,), F32)
    out[1] = np.tile(values, out.shape[1] // values.size) if values.size == 4 else values[0]


def prior_box(output_size: np.ndarray, image_size: np.ndarray, *, min_size, max_size, aspect_ratio, density,
              fixed_ratio, fixed_size, clip: bool, flip: bool, step: float, offset: float, variance,
              scale_all_sizes: bool, min_max_order: bool, priors: int) -> np.ndarray:
    """PriorBox-1/8 as OpenVINO's reference computes it (see the module docstring)."""
    h, w, ih, iw = _sizes(output_size, image_size, priors)
    out = np.empty((2, 4 * h * w * priors), F32)
    with np.errstate(all="ignore"):
        f_ih, f_iw = F32(ih), F32(iw)
        step32 = F32(step)
        mins = [F32(v) for v in min_size]
        if not scale_all_sizes:
            step32 = F32(f_ih / F32(h)) if step32 == -1 else F32(step32 * f_ih)
            mins = [F32(v * f_ih) for v in mins]
        inv_w, inv_h = F32(F32(1.0) / f_iw), F32(F32(1.0) / f_ih)
        if step32 == 0:
            cx = (np.arange(w, dtype=F32) + F32(0.5)) * F32(f_iw / F32(w))
            cy = (np.arange(h, dtype=F32) + F32(0.5)) * F32(f_ih / F32(h))
        else:
            cx = (F32(offset) + np.arange(w, dtype=F32)) * step32
            cy = (F32(offset) + np.arange(h, dtype=F32)) * step32
        boxes = _prior_list(mins, max_size, aspect_ratio, density, fixed_ratio, fixed_size, flip, scale_all_sizes,
                            min_max_order)
        if not boxes or not out.size:
            _variances(out, variance)
            return out
        sx, sy, shifted, half_w, half_h, clipped = (np.asarray(c) for c in zip(*boxes))
        sx, sy, half_w, half_h = sx.astype(F32), sy.astype(F32), half_w.astype(F32), half_h.astype(F32)
        x = np.where(shifted, ((cx[None, :, None] - sx[:, 0]) + sx[:, 1]) + sx[:, 2], cx[None, :, None]).astype(F32)
        y = np.where(shifted, ((cy[:, None, None] - sy[:, 0]) + sy[:, 1]) + sy[:, 2], cy[:, None, None]).astype(F32)
        x, y = np.broadcast_to(x, (h, w, len(boxes))), np.broadcast_to(y, (h, w, len(boxes)))
        coords = np.stack([(x - half_w) * inv_w, (y - half_h) * inv_h, (x + half_w) * inv_w, (y + half_h) * inv_h],
                          axis=-1).astype(F32)
        low, high = coords[..., :2], coords[..., 2:]
        fixed = clipped.astype(bool)[:, None]
        coords[..., :2] = np.where(fixed & ~(low > 0), F32(0), low)
        coords[..., 2:] = np.where(fixed & ~(high < 1), F32(1), high)
    return _written(out, coords, clip, variance)


def _prior_list(mins, max_size, aspect_ratio, density, fixed_ratio, fixed_size, flip, scale_all_sizes, min_max_order):
    """Per prior of a cell, in the reference's order: (x shift terms, y shift terms, shifted, half width,
    half height, clipped at once). A shifted centre is ``((centre - a) + b) + c`` in f32, as the reference adds."""
    none = (F32(0), F32(0), F32(0))
    boxes = []
    ratios = [r for r in _ratios(aspect_ratio, flip) if not abs(float(r) - 1.0) < 1e-6]

    def grid(size: float, d: int, half_w, half_h):
        whole = int(size)  # size_t(fixed_size): the integer half ``whole / 2`` is an integer division
        shift = int(F32(size) / F32(d))
        for r in range(d):
            for c in range(d):
                boxes.append(((F32(whole // 2), F32(F32(shift) / F32(2)), F32(c * shift)),
                              (F32(whole // 2), F32(F32(shift) / F32(2)), F32(r * shift)), True, half_w, half_h, True))

    for s, size in enumerate(fixed_size):
        size32 = F32(size)
        half = F32(F32(int(size)) * F32(0.5))
        if fixed_ratio:
            for ar in fixed_ratio:
                root = np.sqrt(F32(ar))
                grid(size, int(density[s]), F32(F32(size32 * F32(0.5)) * root), F32(F32(size32 * F32(0.5)) / root))
            continue
        if density:
            grid(size, int(density[s]), half, half)
        for ar in ratios:
            root = np.sqrt(ar)
            grid(size, int(density[s]), F32(F32(size32 * F32(0.5)) * root), F32(F32(size32 * F32(0.5)) / root))
    for i, low in enumerate(mins):
        half = F32(low * F32(0.5))
        boxes.append((none, none, False, half, half, False))
        big = []
        if len(max_size) > i:
            half = F32(np.sqrt(F32(low * F32(max_size[i]))) * F32(0.5))
            big = [(none, none, False, half, half, False)]
        shaped = []
        if scale_all_sizes or i == len(mins) - 1:
            base = mins[i] if scale_all_sizes else mins[0]
            for ar in ratios:
                root = np.sqrt(ar)
                shaped.append((none, none, False, F32(F32(base * F32(0.5)) * root), F32(F32(base * F32(0.5)) / root),
                               False))
        boxes.extend(big + shaped if min_max_order else shaped + big)
    return boxes


def prior_box_clustered(output_size: np.ndarray, image_size: np.ndarray, *, widths, heights, clip: bool, step: float,
                        step_w: float, step_h: float, offset: float, variance) -> np.ndarray:
    """PriorBoxClustered-1 as OpenVINO's reference computes it (see the module docstring)."""
    priors = len(widths)
    h, w, ih, iw = _sizes(output_size, image_size, priors)
    out = np.empty((2, 4 * h * w * priors), F32)
    with np.errstate(all="ignore"):
        sw = F32(step) if F32(step_w) == 0 else F32(step_w)
        sh = F32(step) if F32(step_h) == 0 else F32(step_h)
        if sw == 0 and sh == 0:
            sw, sh = F32(F32(iw) / F32(w)), F32(F32(ih) / F32(h))
        cx = ((np.arange(w, dtype=F32) + F32(offset)) * sw)[None, :, None]
        cy = ((np.arange(h, dtype=F32) + F32(offset)) * sh)[:, None, None]
        half_w = np.asarray(widths, F32) / F32(2)
        half_h = np.asarray(heights, F32) / F32(2)
        coords = np.stack(np.broadcast_arrays((cx - half_w) / F32(iw), (cy - half_h) / F32(ih),
                                              (cx + half_w) / F32(iw), (cy + half_h) / F32(ih)), axis=-1).astype(F32)
    return _written(out, coords, clip, variance)


def _batch(params, inputs, outputs, axes):
    if all(axis is None for axis in axes):
        return [None]
    return "the inputs are sizes (values deciding the output's length), not batched data"


def _v1(ctx):
    return _infer_prior_box(ctx, 1)


def _v8(ctx):
    return _infer_prior_box(ctx, 8)


PRIOR_ATTRS = (Attr("min_size", ""), Attr("max_size", ""), Attr("aspect_ratio", ""), Attr("density", ""),
               Attr("fixed_ratio", ""), Attr("fixed_size", ""), Attr("clip", "false"), Attr("flip", "false"),
               Attr("step", "0"), Attr("offset"), Attr("variance", ""), Attr("scale_all_sizes", "true"))
OPS = (
    OpDef("PriorBox", 1, 1, 7, NAMES, _v1, prior_box, roles=ROLES, attrs=PRIOR_ATTRS, batch=_batch),
    OpDef("PriorBox", 8, 8, LATEST_OPSET, NAMES, _v8, prior_box, roles=ROLES, batch=_batch,
          attrs=PRIOR_ATTRS + (Attr("min_max_aspect_ratios_order", "true"),)),
    OpDef("PriorBoxClustered", 1, 1, LATEST_OPSET, NAMES, _infer_clustered, prior_box_clustered, roles=ROLES,
          batch=_batch, attrs=(Attr("width", ""), Attr("height", ""), Attr("clip", "true"), Attr("step", "0"),
                               Attr("step_w", "0"), Attr("step_h", "0"), Attr("offset"), Attr("variance", ""))),
)
