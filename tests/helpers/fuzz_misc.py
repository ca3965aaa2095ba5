"""Differential generators for the operations of issue 23's last batch (SparseFillEmptyRows, ErfInv, CTCLoss,
Multinomial, OneHot-16, Xor, ISTFT, BinaryConvolution, GroupedMatMul, RGBtoNV12/BGRtoNV12 and five
ExperimentalDetectron operations): registered into ``fuzz_ops.GENERATORS``, so ``scripts/fuzz_ops.py`` and
``tests/ops/test_fuzz_ops.py`` run them like every other generator. Most of these operations have no
``Node.evaluate`` in the wheel: the oracle is then the CPU plugin (``case.oracle = "cpu"``), or, where the CPU
plugin has no kernel or a wrong one, a loop written from OpenVINO's C++ reference (``multinomial_reference``,
``binary_conv_reference``, ``nv12_reference``) or a direct float64 computation (GroupedMatMul)."""

from __future__ import annotations

import math

import numpy as np
import openvino as ov
from openvino import opset1, opset4, opset8, opset13, opset16, opset17
from openvino.utils.node_factory import NodeFactory

from ir_runner.ops.sequence_recurrent.ctc_loss import BOUND
from ir_runner.ops.signal.istft import BOUND as ISTFT_BOUND
from ir_runner.ops.toolkit.libm import c_function
from ir_runner.ops.toolkit.numeric import Arith
from tests.helpers.fuzz_ops import CPU_TYPES, NP, Case, exact, op
from tests.helpers.node_eval import BF16, evaluate, to_tensor

F = np.float32


@op("SparseFillEmptyRows")
def gen_sparse_fill(case: Case, name: str):
    """Random sparse tensors (distinct cells, any order, empty rows), constant or fed indices: the CPU plugin's
    types (it computes i64 values in i32) and at least one value (with none it fills with garbage, 2026.4.1;
    tests/ops/test_sparse_fill.py checks that case)."""
    case.oracle, case.compare = "cpu", exact
    et, it = case.rng.choice(CPU_TYPES), case.rng.choice(["i32", "i64"])
    rows, cols = case.rng.randint(1, 6), case.rng.randint(1, 5)
    count = case.rng.randint(1, rows * cols)
    cells = case.np.permutation(rows * cols)[:count]
    pairs = np.stack([cells // cols, cells % cols], axis=1).reshape(count, 2)
    return [opset16.sparse_fill_empty_rows(
        case.input(et, case.values(et, [count], finite=True), p_const=0.1),
        case.input(it, np.array([rows, cols]), p_const=0.5, p_dyn=0.3),
        case.input(it, pairs, p_const=0.5, p_dyn=0.3), case.input(et, case.values(et, [], finite=True)))]


@op("ErfInv")
def gen_erfinv(case: Case, name: str):
    """Random f32 tensors in and around [-1, 1] (ones, zeros, NaN, infinities) against the CPU plugin, within its
    measured 2e-4 relative of the reference's formula (tests/ops/test_erfinv.py compares with the formula itself)."""
    case.oracle = "cpu"
    shape = case.shape(3)
    x = case.np.uniform(-1.05, 1.05, shape)
    x = np.where(case.np.random(shape) < 0.05, case.np.choice([0.0, 1.0, -1.0, np.nan, np.inf], shape), x)

    def compare(got, want, _index):
        g, w = got.astype(np.float64), want.astype(np.float64)
        assert np.array_equal(np.isnan(g), np.isnan(w)), "NaNs differ"
        finite = np.isfinite(g)
        assert np.array_equal(g[~finite & ~np.isnan(g)], w[~finite & ~np.isnan(g)]), "infinities differ"
        np.testing.assert_allclose(w[finite], g[finite], rtol=2e-4, atol=0)
    case.compare = compare
    return [opset17.erfinv(case.input("f32", x.astype(np.float32), p_const=0.1))]


@op("CTCLoss")
def gen_ctc_loss(case: Case, name: str):
    """Random f32 logits, lengths, labels (never blank), every attribute, with or without blank_index, against
    the CPU plugin within ctc_loss.BOUND. Label lengths are at least 1: the CPU plugin crashes on 0 (2026.4.1)."""
    case.oracle = "cpu"
    batch, time, classes = case.rng.randint(1, 3), case.rng.randint(1, 8), case.rng.randint(2, 6)
    blank = case.rng.randrange(classes)
    it = case.rng.choice(["i32", "i64"])
    frames = case.np.integers(1, time + 1, batch)
    labels = case.np.integers(0, classes, (batch, time))
    labels = np.where(labels == blank, (blank + 1) % classes, labels)
    counts = np.array([case.rng.randint(1, f) for f in frames])
    args = [case.input("f32", (case.np.standard_normal((batch, time, classes)) * 3).astype(np.float32), p_const=0),
            case.input(it, frames.astype(NP[it])), case.input(it, labels.astype(NP[it])),
            case.input(it, counts.astype(NP[it])),
            case.input(it, np.array(blank, NP[it]), p_dyn=0) if blank != classes - 1 or case.rng.random() < 0.5
            else None]

    def compare(got, want, _index):
        assert np.array_equal(np.isinf(got), np.isinf(want)), (got, want)
        finite = np.isfinite(want)
        np.testing.assert_allclose(got[finite], want[finite], rtol=BOUND, atol=1e-6)
    case.compare = compare
    return [opset4.ctc_loss(*args, case.rng.random() < 0.5, case.rng.random() < 0.5, case.rng.random() < 0.3)]


def _uniform(et, shape, seeds):
    """OpenVINO's RandomUniform-8 reference: the numbers the Multinomial reference draws."""
    low, high = (ov.op.Constant(to_tensor(np.array(v, NP[et]))) for v in (0, 1))
    node = opset8.random_uniform(opset1.constant(np.array(shape, np.int64)), low, high, et, *seeds)
    return evaluate(node, []).reshape(shape)


def multinomial_reference(probs, count, replacement, log_probs, seeds, et):
    """The reference's loop, element by element in T (f16/bf16: each operation through float)."""
    t = NP[et]

    def r(v):  # (bf16: ov::bfloat16's rounding, which roi_align.Arith reproduces, checked there against evaluate)
        wide = np.array(v, np.float64 if t == np.float64 else np.float32)
        return Arith(BF16).of(wide) if t == BF16 else wide.astype(t)

    batch, classes = probs.shape
    uniform = _uniform(et, [batch, count], seeds)
    out = np.zeros((batch, count), np.int64)
    for i in range(batch):
        # (std::exp: the C library's exp for f64, expf for float, f16/bf16 converted to float)
        values = [r(math.exp(float(v)) if t == np.float64 else c_function("expf")(float(v))) if log_probs else v
                  for v in probs[i]]
        cdf = [values[0]]
        for v in values[1:]:
            cdf.append(r(float(cdf[-1]) + float(v)))
        cdf = [r(float(c) / float(cdf[-1])) for c in cdf]
        for j in range(count):
            chosen = next((k for k in range(classes) if float(uniform[i, j]) <= float(cdf[k])), None)
            out[i, j] = chosen or 0
            if replacement or chosen is None:
                continue
            p = r(float(cdf[chosen]) - float(cdf[chosen - 1])) if chosen else cdf[0]
            divisor = r(1 - float(p))
            with np.errstate(all="ignore"):  # (the last class drawn: 0 / 0, as in C++)
                cdf = [r(np.float64(r(float(c) - float(p)) if k >= chosen else c) / np.float64(divisor))
                       for k, c in enumerate(cdf)]
    return out


@op("Multinomial")
def gen_multinomial(case: Case, name: str):
    """Random probabilities or log-probabilities of every float type, seeds, counts, with or without replacement,
    bit for bit against the reference's loop (:func:`multinomial_reference`, OpenVINO's RandomUniform numbers)."""
    et = case.rng.choice(["f32", "f16", "bf16", "f64"])
    replacement, log_probs = case.rng.random() < 0.5, case.rng.random() < 0.5
    batch, classes = case.rng.randint(1, 3), case.rng.randint(1, 6)
    count = case.rng.randint(1, 8 if replacement else classes)
    probs = case.np.random((batch, classes)) + 0.01
    probs = (np.log(probs) if log_probs else probs).astype(NP[et])
    seeds = (case.rng.randrange(1, 2**40), case.rng.randrange(2**40))
    case.oracle = lambda xml, feeds: [multinomial_reference(probs, count, replacement, log_probs, seeds, et)]
    return [opset13.multinomial(case.input(et, probs, p_const=0), case.index_input(np.array([count])), "i64",
                                replacement, log_probs, *seeds)]


@op("OneHot16")
def gen_one_hot16(case: Case, name: str):
    """OneHot-16 in both negative_indices_modes against the reference: indices from -depth-2 to depth+1."""
    et, it = case.rng.choice(["f32", "i32", "f16", "i64", "boolean"]), case.rng.choice(["i32", "i64"])
    shape, depth = case.shape(3), case.rng.randint(0, 5)
    indices = case.values(it, shape, low=-depth - 2, high=depth + 1)
    return [opset16.one_hot(case.input(it, indices), case.const(it, depth), case.const(et, case.values(et, [])),
                            case.const(et, case.values(et, [])), case.rng.randint(-len(shape) - 1, len(shape)),
                            negative_indices_mode=case.rng.choice(["ignore_negative", "normalize"]))]


@op("Xor")
def gen_xor(case: Case, name: str):
    """opset1's Xor on broadcast boolean tensors against the reference."""
    shape = case.shape(4)
    other = [1 if case.rng.random() < 0.3 else d for d in shape[case.rng.randint(0, len(shape)):]]
    a, b = (case.input("boolean", case.values("boolean", s)) for s in (shape, other))
    return [NodeFactory("opset1").create("Xor", [a, b], {"auto_broadcast": "numpy"})]


@op("ISTFT")
def gen_istft(case: Case, name: str):
    """Random f32 frames, windows, frame sizes and steps (constant or fed), center, normalized, signal_length,
    against the CPU plugin within istft.BOUND of the largest output."""
    case.oracle = "cpu"
    size, frames = case.rng.randint(1, 12), case.rng.randint(1, 6)
    step, window = case.rng.randint(1, size + 2), case.rng.randint(1, size)
    batch = [case.rng.randint(1, 3)] if case.rng.random() < 0.5 else []
    data = case.np.standard_normal([*batch, size // 2 + 1, frames, 2]).astype(np.float32)
    length = case.index_input(np.int64(case.rng.randint(0, 30))) if case.rng.random() < 0.3 else None

    def compare(got, want, _index):
        assert got.shape == want.shape
        assert np.abs(got - want).max(initial=0) <= ISTFT_BOUND * np.abs(want).max(initial=0), (got, want)
    case.compare = compare
    return [opset16.istft(case.input("f32", data, p_const=0), case.input("f32", case.np.random(window).astype(
        np.float32) + 0.1, p_const=0.3), case.index_input(np.int64(size)), case.index_input(np.int64(step)),
        case.rng.random() < 0.5, case.rng.random() < 0.5, length)]


def u1_constant(bits):
    """A u1 Constant of these bits (OpenVINO's packing: the first element in the most significant bit)."""
    tensor = ov.Tensor(ov.Type.u1, ov.Shape(list(bits.shape)))
    packed = np.packbits(bits.reshape(-1).astype(np.uint8))  # (the first element in the most significant bit)
    tensor.data.view(np.uint8)[: packed.size] = packed
    return ov.op.Constant(tensor)


def binary_conv_reference(x, bits, strides, pads, dilations, pad_value):
    """The reference's loop: per output, per input channel, popcount of equal bits, ``sum += 2 * popcount - K``
    (f32 data: every count exact)."""
    n, c, h, w = x.shape
    o, _, kh, kw = bits.shape
    (pb_h, pb_w), (pe_h, pe_w) = pads
    oh = (h + pb_h + pe_h - (dilations[0] * (kh - 1) + 1)) // strides[0] + 1
    ow = (w + pb_w + pe_w - (dilations[1] * (kw - 1) + 1)) // strides[1] + 1
    out = np.zeros((n, o, oh, ow), np.float32)
    for b in range(n):
        for f in range(o):
            for i in range(oh):
                for j in range(ow):
                    total = 0
                    for ch in range(c):
                        count = 0
                        for y in range(kh):
                            for z in range(kw):
                                r = i * strides[0] - pb_h + y * dilations[0]
                                s = j * strides[1] - pb_w + z * dilations[1]
                                value = x[b, ch, r, s] if 0 <= r < h and 0 <= s < w else np.float32(pad_value)
                                count += value == bits[f, ch, y, z]
                        total += 2 * count - kh * kw
                    out[b, f, i, j] = total
    return out


@op("BinaryConvolution")
def gen_binary_convolution(case: Case, name: str):
    """Random bits, strides, dilations, pads and pad values, 0/1 data with a few other values, against the
    reference's loop (:func:`binary_conv_reference`)."""
    channels, outs = case.rng.randint(1, 3), case.rng.randint(1, 3)
    kernel = [case.rng.randint(1, 3), case.rng.randint(1, 3)]
    strides, dilations = [case.rng.randint(1, 2) for _ in range(2)], [case.rng.randint(1, 2) for _ in range(2)]
    pads = ((case.rng.randint(0, 1), case.rng.randint(0, 1)), (case.rng.randint(0, 1), case.rng.randint(0, 1)))
    shape = [case.rng.randint(1, 2), channels] + [case.rng.randint(k * 2, 6) for k in kernel]
    bits = case.np.random([outs, channels, *kernel]) < 0.5
    x = (case.np.random(shape) < 0.5).astype(np.float32)
    x[case.np.random(shape) < 0.05] = 0.5
    pad_value = case.rng.choice([0.0, 1.0, -1.0])
    case.oracle = lambda xml, feeds: [binary_conv_reference(x, bits, strides, pads, dilations, pad_value)]
    return [opset1.binary_convolution(case.input("f32", x, p_const=0), u1_constant(bits), strides, list(pads[0]),
                                      list(pads[1]), dilations, "xnor-popcount", pad_value)]


@op("GroupedMatMul")
def gen_grouped_matmul(case: Case, name: str):
    """3-D x 3-D or 2-D x 3-D with random (sometimes empty) groups, f32 within K·2⁻²⁴·Σ|a·b| of a float64
    computation, i32 exact (wrapping)."""
    et = case.rng.choice(["f32", "i32"])
    groups, rows, n, k = case.rng.randint(1, 3), case.rng.randint(0, 6), case.rng.randint(1, 4), case.rng.randint(1, 8)
    b = case.values(et, [groups, n, k], low=-20, high=20) if et == "i32" else case.np.standard_normal(
        [groups, n, k]).astype(np.float32)
    three = case.rng.random() < 0.5
    a_shape = [groups, rows, k] if three else [rows, k]
    a = case.values(et, a_shape, low=-20, high=20) if et == "i32" else case.np.standard_normal(a_shape).astype(
        np.float32)
    ends = np.sort(case.np.integers(0, rows + 1, groups))

    def direct(xml, feeds):
        wa, wb = a.astype(np.float64), b.astype(np.float64)
        if three:
            return [np.einsum("gmk,gnk->gmn", wa, wb).astype(NP[et])]
        out, start = np.zeros((rows, n)), 0
        for g, end in enumerate(ends):
            out[start:end] = wa[start:end] @ wb[g].T
            start = end
        return [out.astype(NP[et])]  # (f32: the float64 products rounded once; i32: exact, |values| < 2**31)

    def compare(got, want, _index):
        if et == "i32":
            assert got.tolist() == want.tolist()
        else:
            size = np.abs(a).max(initial=0) * np.abs(b).max(initial=0) * k
            assert np.abs(got - want).max(initial=0) <= (k + 1) * 2.0**-24 * size
    case.oracle, case.compare = direct, compare
    args = [case.input(et, a), case.input(et, b)]
    if not three or case.rng.random() < 0.3:
        it = case.rng.choice(["i32", "i64"])
        args.append(case.input(it, ends.astype(NP[it]), p_const=0.5, p_dyn=0))
    return [opset17.grouped_matmul(*args)]


def _nv12_cast(value, dtype):
    """``static_cast<T>(float)``: u8 truncates (values are already rounded), bf16 as ov::bfloat16 rounds."""
    if dtype == np.uint8:
        return np.uint8(value)
    if dtype == BF16:
        return Arith(np.dtype(dtype)).of(np.array([value], F))[0]
    return np.array([value], F).astype(dtype)[0]


def nv12_reference(image, bgr, single):
    """The reference's loops, one pixel at a time with f32 scalars."""
    dtype = image.dtype
    integral = dtype == np.uint8

    def rnd(a):
        return F(math.copysign(math.floor(abs(float(a)) + 0.5), float(a))) if math.isfinite(a) else a

    def clip(a):
        a = rnd(a) if integral else a
        a = F(0) if a < 0 else a
        return _nv12_cast(F(255) if F(255) < a else a, dtype)

    n, h, w, _ = image.shape
    y = np.zeros((n, h, w), dtype)
    uv = np.zeros((n, h // 2, w // 2, 2), dtype)
    for b in range(n):
        for i in range(0, h, 2):
            for j in range(0, w, 2):
                sums = [F(0), F(0)]
                for di in range(2):
                    for dj in range(2):
                        px = image[b, i + di, j + dj].astype(F)
                        r, g, bl = (px[2], px[1], px[0]) if bgr else (px[0], px[1], px[2])
                        y[b, i + di, j + dj] = clip(F(0.257) * r + F(0.504) * g + F(0.098) * bl + F(16))
                        u = clip(F(-0.148) * r - F(0.291) * g + F(0.439) * bl + F(128))
                        v = clip(F(0.439) * r - F(0.368) * g - F(0.071) * bl + F(128))
                        sums = [sums[0] + F(u), sums[1] + F(v)]
                for k in range(2):
                    mean = sums[k] / F(4)
                    uv[b, i // 2, j // 2, k] = _nv12_cast(rnd(mean) if integral else mean, dtype)
    if not single:
        return [y[..., None], uv]
    return [np.concatenate([y, uv.reshape(n, h // 2, w)], axis=1)[..., None]]


@op("RGBtoNV12", "BGRtoNV12")
def gen_to_nv12(case: Case, name: str):
    """Random images of every computed type (u8 0..255, floats around [0, 255] with NaN), both plane layouts,
    against the reference's loop (:func:`nv12_reference`)."""
    et = case.rng.choice(["u8", "f32", "f16", "bf16", "f64"])
    shape = [case.rng.randint(1, 2), 2 * case.rng.randint(1, 3), 2 * case.rng.randint(1, 3), 3]
    image = case.values(et, shape, low=0, high=255) if et == "u8" else \
        case.np.uniform(-10, 270, shape).astype(NP[et])
    single = case.rng.random() < 0.5
    case.oracle = lambda xml, feeds: nv12_reference(image, name.startswith("BGR"), single)
    return [NodeFactory("opset17").create(name, [case.input(et, image, p_const=0)], {"single_plane": single})]


@op("ExperimentalDetectronTopKROIs")
def gen_topk_rois(case: Case, name: str):
    """Random rois with distinct probabilities (ties have no specified order), max_rois up to N (past N the CPU
    plugin's rows are unwritten memory), against the CPU plugin."""
    case.oracle, case.compare = "cpu", exact
    count = case.rng.randint(1, 9)
    probs = (case.np.permutation(count) / count).astype(np.float32)
    rois = case.np.standard_normal((count, 4)).astype(np.float32)
    return [NodeFactory("opset6").create("ExperimentalDetectronTopKROIs", [case.input("f32", rois),
                                         case.input("f32", probs)], {"max_rois": case.rng.randint(0, count)})]


@op("ExperimentalDetectronPriorGridGenerator")
def gen_prior_grid(case: Case, name: str):
    """Random priors, feature map and image sizes, strides or none, flattened or not, against the CPU plugin."""
    case.oracle, case.compare = "cpu", exact
    height, width = case.rng.randint(1, 5), case.rng.randint(1, 5)
    attrs = {"flatten": case.rng.random() < 0.5, "h": 0, "w": 0,
             "stride_x": case.rng.choice([0.0, 0.0, 2.5, 7.0]), "stride_y": case.rng.choice([0.0, 0.0, 1.75])}
    inputs = [case.input("f32", case.np.standard_normal((case.rng.randint(1, 4), 4)).astype(np.float32) * 8),
              case.input("f32", np.zeros((1, 2, height, width), np.float32), p_const=0),
              case.input("f32", np.zeros((1, 3, case.rng.randint(8, 50), case.rng.randint(8, 50)), np.float32),
                         p_const=0)]
    return [NodeFactory("opset6").create("ExperimentalDetectronPriorGridGenerator", inputs, attrs)]


@op("ExperimentalDetectronROIFeatureExtractor")
def gen_roi_feature_extractor(case: Case, name: str):
    """Random pyramids, rois of every size (some empty), sampling ratios and alignment, against the CPU plugin."""
    case.oracle, case.compare = "cpu", exact
    levels, channels, count = case.rng.randint(1, 3), case.rng.randint(1, 3), case.rng.randint(1, 6)
    corner, size = case.np.uniform(0, 200, (count, 2)), case.np.uniform(-5, 300, (count, 2))
    inputs = [case.input("f32", np.concatenate([corner, corner + size], axis=1).astype(np.float32), p_const=0)]
    inputs += [case.input("f32", case.np.standard_normal((1, channels, case.rng.randint(4, 30), case.rng.randint(
        4, 30))).astype(np.float32), p_const=0) for _ in range(levels)]
    attrs = {"output_size": case.rng.randint(1, 3), "sampling_ratio": case.rng.randint(0, 2),
             "pyramid_scales": [4 * 2**i for i in range(levels)], "aligned": case.rng.random() < 0.5}
    return [NodeFactory("opset6").create(name, inputs, attrs)]


@op("ExperimentalDetectronGenerateProposalsSingleImage")
def gen_proposals_single_image(case: Case, name: str):
    """Random anchors, deltas, scores, min sizes, thresholds and counts against the CPU plugin, bit for bit."""
    case.oracle, case.compare = "cpu", exact
    count, height, width = case.rng.randint(1, 3), case.rng.randint(1, 5), case.rng.randint(1, 5)
    total = count * height * width
    corner, size = case.np.uniform(0, 200, (total, 2)), case.np.uniform(1, 120, (total, 2))
    inputs = [case.input("f32", np.array([240, 320, 1], np.float32)),
              case.input("f32", np.concatenate([corner, corner + size], axis=1).astype(np.float32)),
              case.input("f32", (case.np.standard_normal((count * 4, height, width)) * 0.5).astype(np.float32)),
              case.input("f32", case.np.random((count, height, width)).astype(np.float32))]
    attrs = {"min_size": case.rng.choice([0.0, 4.0, 30.0]), "nms_threshold": case.rng.uniform(0.2, 0.9),
             "post_nms_count": case.rng.randint(1, 20), "pre_nms_count": case.rng.randint(1, 40)}
    return [NodeFactory("opset6").create(name, inputs, attrs)]


@op("ExperimentalDetectronDetectionOutput")
def gen_detectron_detection_output(case: Case, name: str):
    """Random rois, deltas, scores (sometimes quantised into ties), thresholds and counts against the CPU plugin."""
    case.oracle, case.compare = "cpu", exact
    count, classes = case.rng.randint(1, 10), case.rng.randint(2, 4)
    corner, size = case.np.uniform(0, 200, (count, 2)), case.np.uniform(-10, 120, (count, 2))
    scores = case.np.random((count, classes))
    scores = np.round(scores * 4) / 4 if case.rng.random() < 0.3 else scores
    inputs = [case.input("f32", np.concatenate([corner, corner + size], axis=1).astype(np.float32)),
              case.input("f32", case.np.standard_normal((count, 4 * classes)).astype(np.float32)),
              case.input("f32", scores.astype(np.float32)), case.input("f32", np.array([[240, 320, 1]], np.float32))]
    attrs = {"score_threshold": case.rng.uniform(0, 0.5), "nms_threshold": case.rng.uniform(0.2, 0.8),
             "max_delta_log_wh": 4.135, "num_classes": classes, "post_nms_count": case.rng.randint(1, 6),
             "max_detections_per_image": case.rng.randint(1, 12), "class_agnostic_box_regression": False,
             "deltas_weights": [10.0, 10.0, 5.0, 5.0]}
    return [NodeFactory("opset6").create(name, inputs, attrs)]
