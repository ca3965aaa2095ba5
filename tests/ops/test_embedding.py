"""EmbeddingBagOffsetsSum-3, EmbeddingBagPackedSum-3, EmbeddingSegmentsSum-3, EmbeddingBagOffsets-15 and
EmbeddingBagPacked-15.

OpenVINO's wheel has no ``Node.evaluate`` for these operations (its reference kernels run only in the template
plugin), so values are compared bit for bit with ``_reference`` below, a plain loop written after the
reference kernels (``ov::reference::embeddingBagOffsets``, ``embeddingBagPacked``, ``embeddingSegmentsSum``:
+0, then each row in index order in the table's type), and with the CPU plugin where it computes the same
thing (f32, i32, i8, u8; see docs/semantics.md for where it differs). Shapes are inferred as OpenVINO declares
them (static, dynamic, interval and dynamic-rank inputs); bad types and shapes are refused at load naming the
layer; bad index values at run time naming the layer and the port."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset3, opset15  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, InputError  # noqa: E402
from ir_runner.ops.toolkit.convert_rules import bf16_as_openvino_rounds  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, cpu_outputs, write_ir  # noqa: E402

FLOATS = ("f32", "f16", "bf16", "f64")
INTEGERS = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")


def _dtype(name: str) -> np.dtype:
    return ir_runner.types.element_type(name).dtype


# -- the reference, as a loop --------------------------------------------------------------------------------

class _T:
    """Arithmetic in the table's type, one operation at a time (bf16 through f32 with OpenVINO's rounding)."""

    def __init__(self, dtype: np.dtype) -> None:
        self.dtype = dtype
        self.bf16 = dtype.name == "bfloat16"

    def _fix(self, value: np.ndarray) -> np.ndarray:
        return bf16_as_openvino_rounds(value, self.dtype) if self.bf16 else value.astype(self.dtype)

    def add(self, a, b):
        return self._fix(a.astype(np.float32) + b.astype(np.float32)) if self.bf16 else a + b

    def mul(self, a, b):
        return self._fix(a.astype(np.float32) * b.astype(np.float32)) if self.bf16 else a * b

    def zeros(self, depth: int) -> np.ndarray:
        return np.zeros(depth, self.dtype)


def _bag(t: _T, table, rows, weights, depth):
    out = t.zeros(depth)
    for k, row in enumerate(rows):
        term = table[row] if weights is None else t.mul(table[row], np.full(depth, weights[k], t.dtype))
        out = t.add(out, term)
    return out


def _reference(kind: str, reduction: str, table, indices, second=None, third=None, default=None, weights=None):
    """The reference kernels' results (Offsets: second = offsets; Segments: second = ids, third = count)."""
    t = _T(table.dtype)
    flat = table.reshape(table.shape[0], -1)
    depth = flat.shape[1]
    bags = []
    with np.errstate(all="ignore"):
        if kind == "packed":
            for b in range(indices.shape[0]):
                out = _bag(t, flat, indices[b], None if weights is None else weights[b], depth)
                if reduction == "mean":
                    out = _divide_by_type(t, out, indices.shape[1])
                bags.append(out)
        elif kind == "offsets":
            ends = list(second[1:]) + [indices.size]
            for start, end in zip(second, ends):
                rows = indices[start:end]
                w = None if weights is None else weights[start:end]
                if rows.size:
                    out = _bag(t, flat, rows, w, depth)
                    if reduction == "mean":
                        out = _divide_by_type(t, out, rows.size)
                elif default is not None and default >= 0:
                    out = t.add(t.zeros(depth), flat[default])
                else:
                    out = t.zeros(depth)
                bags.append(out)
        else:
            for s in range(int(third)):
                members = [k for k in range(indices.size) if second[k] == s]
                if members:
                    bags.append(_bag(t, flat, indices[members], None if weights is None else weights[members], depth))
                elif default is not None:
                    bags.append(flat[default].copy())
                else:
                    bags.append(t.zeros(depth))
    stacked = np.array(bags, dtype=table.dtype).reshape((len(bags),) + table.shape[1:])
    return stacked


def _divide_by_type(t: _T, out: np.ndarray, count: int) -> np.ndarray:
    """``out /= (T)count`` as C++ computes it (integers: truncating)."""
    if t.bf16:
        return t._fix(out.astype(np.float32) / t._fix(np.array([count], np.float32)).astype(np.float32))
    divisor = np.array([count]).astype(out.dtype)
    if out.dtype.kind == "f":
        return out / divisor
    wide = np.int64 if out.dtype.kind == "i" else np.uint64
    return np.array([_cdiv(int(v), int(divisor[0])) for v in out], wide).astype(out.dtype)


def _cdiv(a: int, b: int) -> int:
    """C's truncating division."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


# -- graphs ----------------------------------------------------------------------------------------------------

def _param(shape, et, name):
    return opset3.parameter(shape, getattr(ov.Type, et), name=name)


def _optional_inputs(params, args, n, et, it, default, weights):
    """The Parameters and node inputs with the optional default index (also before weights) and weights."""
    extra = [_param([], it, "default")] if default or weights else []
    extra += [_param([n], et, "weights")] if weights else []
    return params + extra, args + extra


def _offsets_graph(tmp_path, version, table_shape, n, bags, et="f32", it="i32", default=False, weights=False,
                   reduction="sum"):
    table = _param(table_shape, et, "table")
    idx = _param([n], it, "indices")
    off = _param([bags], it, "offsets")
    params, args = _optional_inputs([table, idx, off], [table, idx, off], n, et, it, default, weights)
    if version == 3:
        node = opset3.embedding_bag_offsets_sum(*args)
    else:
        node = opset15.embedding_bag_offsets(*args, reduction=reduction)
    return write_ir(node, params, tmp_path), node


def _packed_graph(tmp_path, version, table_shape, ind_shape, et="f32", it="i32", weights=False, reduction="sum"):
    table = _param(table_shape, et, "table")
    idx = _param(ind_shape, it, "indices")
    params = [table, idx]
    if weights:
        params.append(_param(ind_shape, et, "weights"))
    if version == 3:
        node = opset3.embedding_bag_packed_sum(*params)
    else:
        node = opset15.embedding_bag_packed(*params, reduction=reduction)
    return write_ir(node, params, tmp_path), node


def _segments_graph(tmp_path, table_shape, n, num, et="f32", it="i32", default=False, weights=False):
    table = _param(table_shape, et, "table")
    idx = _param([n], it, "indices")
    ids = _param([n], it, "ids")
    count = opset3.constant(np.array(num, dtype=np.int32 if it == "i32" else np.int64))
    params, args = _optional_inputs([table, idx, ids], [table, idx, ids, count], n, et, it, default, weights)
    node = opset3.embedding_segments_sum(*args)
    return write_ir(node, params, tmp_path), node


def _table(rng, shape, et):
    dtype = _dtype(et)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100) + 1, size=shape).astype(dtype)
    return (rng.standard_normal(shape) * 4).astype(np.float32).astype(dtype)


def _cpu_static(xml, feeds):
    """The CPU plugin on the model reshaped to the feeds' shapes (it cannot compile a weighted bag of dynamic
    shape: 'to_shape was called on a dynamic shape')."""
    model = ov.Core().read_model(str(xml))
    model.reshape({p.output(0): ov.PartialShape(list(np.shape(feeds[p.output(0).get_any_name()])))
                   for p in model.get_parameters()})
    with tempfile.TemporaryDirectory() as folder:  # (not beside ``xml``: that may be the checkout's tests/data)
        static = Path(folder) / "static.xml"
        ov.save_model(model, str(static), compress_to_fp16=False)
        return cpu_outputs(static, feeds)


def _oracle(kind, reduction, **fixed):
    def run(xml, feeds):
        return [_reference(kind, reduction, feeds["table"], feeds["indices"], feeds.get(fixed.get("second")),
                           fixed.get("third"), None if "default" not in feeds else int(feeds["default"]),
                           feeds.get("weights"))]
    return run


# -- shapes ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("table, n, bags", [
    ([10, 3], 4, 2), ([10, 2, 3], -1, -1), ([-1, 5], 7, 3), ([(2, 8), (1, 4)], (0, 9), (1, 5)), (None, 4, 2),
])
@pytest.mark.parametrize("version", [3, 15])
def test_offsets_shapes(table, n, bags, version, tmp_path):
    shape = ov.PartialShape.dynamic() if table is None else table
    t = opset3.parameter(shape, ov.Type.f32, name="table")
    idx = opset3.parameter([n], ov.Type.i64, name="indices")
    off = opset3.parameter([bags], ov.Type.i64, name="offsets")
    d = opset3.parameter([], ov.Type.i64, name="default")
    w = opset3.parameter([n], ov.Type.f32, name="weights")
    make = opset3.embedding_bag_offsets_sum if version == 3 else opset15.embedding_bag_offsets
    nodes = [make(t, idx, off), make(t, idx, off, d), make(t, idx, off, d, w)]
    path = write_ir(nodes, [t, idx, off, d, w], tmp_path)
    check_inference(path)
    for i, node in enumerate(nodes):
        single = write_ir(node, [t, idx, off, d, w], tmp_path, f"m{i}")
        check_output_shapes(single, node)


@pytest.mark.parametrize("table, ind", [
    ([10, 3], [2, 4]), ([10, 2, 3], [-1, -1]), ([-1, 5], [3, 7]), ([(2, 8), 4], [(1, 5), 2]), (None, [4, 2]),
])
@pytest.mark.parametrize("version", [3, 15])
def test_packed_shapes(table, ind, version, tmp_path):
    shape = ov.PartialShape.dynamic() if table is None else table
    t = opset3.parameter(shape, ov.Type.f16, name="table")
    idx = opset3.parameter(ind, ov.Type.i32, name="indices")
    w_shape = [ind[0] if ind[0] != -1 else 6, -1]
    w = opset3.parameter(w_shape, ov.Type.f16, name="weights")
    make = opset3.embedding_bag_packed_sum if version == 3 else opset15.embedding_bag_packed
    nodes = [make(t, idx), make(t, idx, w)]
    path = write_ir(nodes, [t, idx, w], tmp_path)
    check_inference(path)
    single = write_ir(nodes[1], [t, idx, w], tmp_path, "weighted")
    check_output_shapes(single, nodes[1])  # (the bag count from the weights when indices' is dynamic)


@pytest.mark.parametrize("table, n", [([10, 3], 4), ([-1, 2, 3], -1), ([(2, 8), (1, 4)], (0, 9)), (None, 4)])
def test_segments_shapes(table, n, tmp_path):
    shape = ov.PartialShape.dynamic() if table is None else table
    t = opset3.parameter(shape, ov.Type.i8, name="table")
    idx = opset3.parameter([n], ov.Type.i32, name="indices")
    ids = opset3.parameter([n], ov.Type.i32, name="ids")
    count_param = opset3.parameter([], ov.Type.i32, name="count")
    d = opset3.parameter([], ov.Type.i32, name="default")
    w = opset3.parameter([n], ov.Type.i8, name="weights")
    nodes = [opset3.embedding_segments_sum(t, idx, ids, opset3.constant(np.int32(5))),
             opset3.embedding_segments_sum(t, idx, ids, opset3.constant(np.int32(0)), d),
             opset3.embedding_segments_sum(t, idx, ids, count_param, d, w)]
    path = write_ir(nodes, [t, idx, ids, count_param, d, w], tmp_path)
    check_inference(path)


def test_segment_count_from_a_shape_is_planned_per_value(tmp_path):
    t = opset3.parameter([6, 2], ov.Type.f32, name="table")
    idx = opset3.parameter([-1], ov.Type.i32, name="indices")
    ids = opset3.parameter([-1], ov.Type.i32, name="ids")
    x = opset3.parameter([-1], ov.Type.f32, name="x")  # its length is the segment count
    count = opset3.squeeze(opset3.shape_of(x, "i32"), opset3.constant(np.int64(0)))
    node = opset3.embedding_segments_sum(t, idx, ids, count)
    path = write_ir(node, [t, idx, ids, x], tmp_path)
    check_inference(path)
    check_output_shapes(path, node)
    rng = np.random.default_rng(1)
    for segments in (1, 4, 7):
        oracle = _oracle("segments", "sum", second="ids", third=segments)
        feeds = {"table": _table(rng, (6, 2), "f32"), "indices": np.array([0, 5, 2], np.int32),
                 "ids": np.array([0, 0, segments - 1], np.int32), "x": np.zeros(segments, np.float32)}
        check_run(path, feeds, oracle=oracle)


# -- invalid models ---------------------------------------------------------------------------------------------

def _retype(path, old: str, new: str):
    """Change every ``old`` element type of the IR to ``new`` (ports and Parameters)."""
    precision = {"i32": "I32", "i64": "I64", "f32": "FP32", "f16": "FP16", "i16": "I16", "u8": "U8",
                 "boolean": "BOOL"}
    text = path.read_text()
    text = text.replace(f'element_type="{old}"', f'element_type="{new}"')
    text = text.replace(f'precision="{precision[old]}"', f'precision="{precision[new]}"')
    path.write_text(text)


def test_bad_index_types_are_refused_naming_the_layer(tmp_path):
    path, _ = _offsets_graph(tmp_path, 15, [5, 2], 4, 2, it="i64")
    _retype(path, "i64", "f32")
    with pytest.raises(InferenceError, match=r"EmbeddingBagOffsets.*indices must be i32 or i64, got f32"):
        ir_runner.load(str(path))
    path, _ = _packed_graph(tmp_path, 3, [5, 2], [2, 2], it="i32", et="f16")
    _retype(path, "i32", "i16")
    with pytest.raises(InferenceError, match=r"EmbeddingBagPackedSum.*indices must be i32 or i64, got i16"):
        ir_runner.load(str(path))


def test_mismatched_types_are_refused(tmp_path):
    t = _param([5, 2], "f32", "table")
    idx = _param([4], "i32", "indices")
    off = _param([2], "i64", "offsets")
    off32 = _param([2], "i32", "offsets32")
    node = opset15.embedding_bag_offsets(t, idx, off32)
    path = write_ir([node, off], [t, idx, off32, off], tmp_path)
    text = path.read_text()
    # rewire the layer's offsets input to the i64 Parameter (OpenVINO itself refuses to build it)
    ids = {m.group(2): m.group(1) for m in re.finditer(r'<layer id="(\d+)" name="([^"]+)"', text)}
    text = text.replace(f'from-layer="{ids["offsets32"]}" from-port="0" to-layer',
                        f'from-layer="{ids["offsets"]}" from-port="0" to-layer', 1)
    path.write_text(text.replace('<port id="2" precision="I32">', '<port id="2" precision="I64">'))
    with pytest.raises(InferenceError, match=r"offsets \(i64\) must have the element type of indices \(i32\)"):
        ir_runner.load(str(path))


def test_bad_shapes_and_modes_are_refused(tmp_path):
    path, _ = _packed_graph(tmp_path, 15, [5, 2], [2, 3], weights=True)
    text = path.read_text()
    path.write_text(text.replace('reduction="sum"', 'reduction="mean"'))
    with pytest.raises(InferenceError, match=r"per_sample_weights can only be used with reduction='sum'"):
        ir_runner.load(str(path))
    path, _ = _offsets_graph(tmp_path, 15, [5, 2], 4, 2)
    path.write_text(path.read_text().replace('reduction="sum"', 'reduction="max"'))
    with pytest.raises(ir_runner.IRError, match=r"reduction='max' is not one of mean, sum"):
        ir_runner.load(str(path))
    t, idx, off = _param([5, 2], "f32", "table"), _param([4], "i32", "indices"), _param([2], "i32", "offsets")
    d, w = _param([], "i32", "default"), _param([-1], "f32", "weights")
    path = write_ir(opset3.embedding_bag_offsets_sum(t, idx, off, d, w), [t, idx, off, d, w], tmp_path)
    text = path.read_text().replace('shape="?"', 'shape="5"').replace("<dim>-1</dim>", "<dim>5</dim>")
    path.write_text(text)  # weights of 5 elements against 4 indices (OpenVINO refuses to build it)
    with pytest.raises(InferenceError, match=r"per_sample_weights \[5\] must have the shape of indices \[4\]"):
        ir_runner.load(str(path))
    path, _ = _packed_graph(tmp_path, 3, [5, 2], [2, 3])
    path.write_text(path.read_text().replace('shape="2,3"', 'shape="6"').replace(
        "<dim>2</dim>\n\t\t\t\t\t<dim>3</dim>", "<dim>6</dim>"))
    with pytest.raises(InferenceError, match=r"indices must be 2-D"):
        ir_runner.load(str(path))


def test_scalar_table_and_bool_table_are_refused(tmp_path):
    path, _ = _packed_graph(tmp_path, 3, [5, 2], [2, 3], et="u8")
    _retype(path, "u8", "boolean")
    with pytest.raises(InferenceError, match=r"emb_table of element type boolean is not supported"):
        ir_runner.load(str(path))


# -- values --------------------------------------------------------------------------------------------------

SPEC_TABLE = np.array([[-0.2, -0.6], [-0.1, -0.4], [-1.9, -1.8], [-1.0, 1.5], [0.8, -0.7]], np.float32)


@pytest.mark.parametrize("version", [3, 15])
def test_spec_examples_offsets(version, tmp_path):
    path, _ = _offsets_graph(tmp_path, version, [5, 2], 4, 3, weights=True)
    for default, weights in ((0, [0.5, 0.5, 0.5, 0.5]), (-1, [0.5, 0.2, -2, 1])):
        feeds = {"table": SPEC_TABLE, "indices": np.array([0, 2, 3, 4], np.int32),
                 "offsets": np.array([0, 2, 2], np.int32), "default": np.int32(default),
                 "weights": np.array(weights, np.float32)}
        got = check_run(path, feeds, oracle="cpu")
        check_run(path, feeds, oracle=_oracle("offsets", "sum", second="offsets"))
        want = {0: [[-1.05, -1.2], [-0.2, -0.6], [-0.1, 0.4]], -1: [[-0.48, -0.66], [0, 0], [2.8, -3.7]]}[default]
        np.testing.assert_allclose(next(iter(got.values())), want, rtol=1e-6, atol=1e-6)


def test_spec_example_mean(tmp_path):
    path, _ = _offsets_graph(tmp_path, 15, [5, 2], 4, 3, reduction="mean")
    feeds = {"table": SPEC_TABLE, "indices": np.array([0, 2, 3, 4], np.int32),
             "offsets": np.array([0, 2, 2], np.int32)}
    got = check_run(path, feeds, oracle="cpu")
    np.testing.assert_allclose(next(iter(got.values())), [[-1.05, -1.2], [0, 0], [-0.1, 0.4]], rtol=1e-6)
    path, _ = _packed_graph(tmp_path, 15, [5, 2], [2, 2], reduction="mean")
    got = check_run(path, {"table": SPEC_TABLE, "indices": np.array([[0, 2], [1, 2]], np.int32)}, oracle="cpu")
    np.testing.assert_allclose(next(iter(got.values())), [[-1.05, -1.2], [-1.0, -1.1]], rtol=1e-6)


def test_segments_values_default_and_order(tmp_path):
    path, _ = _segments_graph(tmp_path, [5, 2], 4, 3, default=True, weights=True)
    feeds = {"table": SPEC_TABLE, "indices": np.array([0, 2, 3, 4], np.int32),
             "ids": np.array([0, 0, 2, 2], np.int32), "default": np.int32(0),
             "weights": np.array([0.5, 0.5, 0.5, 0.5], np.float32)}
    got = check_run(path, feeds, oracle="cpu")
    np.testing.assert_allclose(next(iter(got.values())), [[-1.05, -1.2], [-0.2, -0.6], [-0.1, 0.4]], rtol=1e-6)
    feeds["ids"] = np.array([2, 0, 2, 0], np.int32)  # unsorted segment ids: each segment in index order
    got = check_run(path, feeds, oracle=_oracle("segments", "sum", second="ids", third=3))
    np.testing.assert_allclose(next(iter(got.values())), [[-0.55, -1.25], [-0.2, -0.6], [-0.6, 0.45]], rtol=1e-6)
    cpu = cpu_outputs(path, feeds)[0]  # the CPU plugin takes a segment's count of indices from its first one on
    assert not np.array_equal(cpu, next(iter(got.values())))


@pytest.mark.parametrize("et", FLOATS + INTEGERS)
@pytest.mark.parametrize("it", ["i32", "i64"])
def test_every_type_against_the_reference_loop(et, it, tmp_path):
    rng = np.random.default_rng(7)
    table = _table(rng, (6, 3), et)
    idx = rng.integers(0, 6, size=9).astype(_dtype(it))
    weights = _table(rng, 9, et)
    offsets = np.array([0, 3, 3, 8], _dtype(it))
    path, _ = _offsets_graph(tmp_path, 15, [6, 3], 9, 4, et=et, it=it, weights=True)
    feeds = {"table": table, "indices": idx, "offsets": offsets, "default": np.array(4, _dtype(it)),
             "weights": weights}
    check_run(path, feeds, oracle=_oracle("offsets", "sum", second="offsets"))
    for reduction in ("sum", "mean"):
        path, _ = _offsets_graph(tmp_path, 15, [6, 3], 9, 4, et=et, it=it, default=True, reduction=reduction)
        feeds.pop("weights", None)
        check_run(path, feeds, oracle=_oracle("offsets", reduction, second="offsets"))
        path, _ = _packed_graph(tmp_path, 15, [6, 3], [3, 3], et=et, it=it, reduction=reduction)
        check_run(path, {"table": table, "indices": idx.reshape(3, 3)}, oracle=_oracle("packed", reduction))
    path, _ = _segments_graph(tmp_path, [6, 3], 9, 5, et=et, it=it, default=True, weights=True)
    feeds = {"table": table, "indices": idx, "ids": rng.integers(0, 4, size=9).astype(_dtype(it)),
             "default": np.array(1, _dtype(it)), "weights": weights}
    check_run(path, feeds, oracle=_oracle("segments", "sum", second="ids", third=5))


@pytest.mark.parametrize("et", ["f32", "i32", "i8", "u8"])
def test_types_the_cpu_plugin_computes_match_it(et, tmp_path):
    rng = np.random.default_rng(3)
    table = _table(rng, (7, 2, 2), et)
    idx = rng.integers(0, 7, size=10).astype(np.int32)
    path, _ = _offsets_graph(tmp_path, 3, [7, 2, 2], 10, 4, et=et, default=True)
    check_run(path, {"table": table, "indices": idx, "offsets": np.array([0, 4, 4, 9], np.int32),
                     "default": np.int32(6)}, oracle="cpu")
    path, _ = _packed_graph(tmp_path, 3, [7, 2, 2], [5, 2], et=et, weights=True)
    check_run(path, {"table": table, "indices": idx.reshape(5, 2), "weights": _table(rng, (5, 2), et)},
              oracle="cpu")


def test_f16_and_bf16_round_after_every_step(tmp_path):
    """2048 + 1 + 1 in f16: each +1 rounds back to 2048 (the reference's per-step rounding); a sum in f32
    rounded once would give 2050. bf16 the same at 256, with OpenVINO's rounding (half up on an odd last bit)."""
    for et, big in (("f16", 2048.0), ("bf16", 256.0)):
        dtype = _dtype(et)
        table = np.array([[big], [1.0]], np.float32).astype(dtype)
        path, _ = _packed_graph(tmp_path, 3, [2, 1], [1, 3], et=et)
        got = check_run(path, {"table": table, "indices": np.array([[0, 1, 1]], np.int32)},
                        oracle=lambda xml, f: [_reference("packed", "sum", f["table"], f["indices"])])
        assert float(next(iter(got.values()))[0, 0]) == big
        cpu = cpu_outputs(path, {"table": table, "indices": np.array([[0, 1, 1]], np.int32)})[0]
        assert float(cpu[0, 0]) == big + 2  # the CPU plugin sums f16/bf16 in f32


def test_integer_means_follow_the_reference(tmp_path):
    """Both divide by (T)count, truncating towards zero, as the reference and the CPU plugin."""
    table = np.array([[-2], [7], [5]], np.int32)
    path, _ = _packed_graph(tmp_path, 15, [3, 1], [2, 3], et="i32", reduction="mean")
    got = next(iter(check_run(path, {"table": table, "indices": np.array([[0, 0, 0], [1, 2, 2]], np.int32)},
                              oracle=_oracle("packed", "mean")).values()))
    assert got[:, 0].tolist() == [-2, 5]
    check_run(path, {"table": table, "indices": np.array([[0, 0, 0], [1, 2, 2]], np.int32)}, oracle="cpu")
    path, _ = _offsets_graph(tmp_path, 15, [3, 1], 5, 2, et="i32", reduction="mean")
    got = next(iter(check_run(path, {"table": table, "indices": np.array([0, 0, 0, 1, 2], np.int32),
                                     "offsets": np.array([0, 3], np.int32)},
                              oracle=_oracle("offsets", "mean", second="offsets")).values()))
    assert got[:, 0].tolist() == [-2, 6]
    check_run(path, {"table": table, "indices": np.array([0, 0, 0, 1, 2], np.int32),
                     "offsets": np.array([0, 3], np.int32)}, oracle="cpu")
    i8 = np.array([[-100], [100]], np.int8)  # -100 * 3 wraps to -44 in i8; / (i8)3 = -14
    path, _ = _packed_graph(tmp_path, 3, [2, 1], [1, 3], et="i8")
    got = next(iter(check_run(path, {"table": i8, "indices": np.array([[0, 0, 0]], np.int32)},
                              oracle="cpu").values()))
    assert got.tolist() == [[-44]]


def test_empty_bags_means_and_default_index(tmp_path):
    path, _ = _offsets_graph(tmp_path, 15, [5, 2], 3, 4, default=True, reduction="mean")
    base = {"table": SPEC_TABLE, "indices": np.array([1, 2, 3], np.int32), "offsets": np.array([0, 0, 1, 1], np.int32)}
    for default in (-1, -5, 0, 4):
        got = check_run(path, {**base, "default": np.int32(default)}, oracle=_oracle("offsets", "mean",
                                                                                    second="offsets"))
        out = next(iter(got.values()))
        want = np.zeros(2, np.float32) if default < 0 else SPEC_TABLE[default]
        np.testing.assert_array_equal(out[0], want)
        np.testing.assert_array_equal(out[2], want)
    path, _ = _packed_graph(tmp_path, 15, [5, 2], [2, 0], reduction="mean")
    got = check_run(path, {"table": SPEC_TABLE, "indices": np.zeros((2, 0), np.int32)},
                    oracle=lambda xml, f: [_reference("packed", "mean", f["table"], f["indices"])])
    assert np.isnan(next(iter(got.values()))).all()  # 0 / 0, as the reference
    path, _ = _packed_graph(tmp_path, 3, [5, 2], [0, 3])
    got = check_run(path, {"table": SPEC_TABLE, "indices": np.zeros((0, 3), np.int32)}, oracle="cpu")
    assert next(iter(got.values())).shape == (0, 2)
    path, _ = _segments_graph(tmp_path, [5, 2], 0, 3, default=True)
    feeds = {"table": SPEC_TABLE, "indices": np.zeros(0, np.int32), "ids": np.zeros(0, np.int32),
             "default": np.int32(3)}
    got = check_run(path, feeds, oracle="cpu")
    np.testing.assert_array_equal(next(iter(got.values())), SPEC_TABLE[[3, 3, 3]])


def test_bad_values_raise_naming_the_layer_and_port(tmp_path):
    path, _ = _offsets_graph(tmp_path, 15, [5, 2], 3, 2, default=True)
    model = ir_runner.load(str(path))
    base = {"table": SPEC_TABLE, "indices": np.array([1, 2, 3], np.int32), "offsets": np.array([0, 1], np.int32),
            "default": np.int32(0)}
    cases = [
        ({"indices": np.array([1, 5, 3], np.int32)}, r"EmbeddingBagOffsets.*input 1 \(indices\).*index 5"),
        ({"indices": np.array([1, -1, 3], np.int32)}, r"input 1 \(indices\).*index -1"),
        ({"offsets": np.array([0, 3], np.int32)}, r"input 2 \(offsets\).*offset 3 of bag 1"),
        ({"offsets": np.array([-1, 1], np.int32)}, r"input 2 \(offsets\).*offset -1"),
        ({"offsets": np.array([2, 1], np.int32)}, r"input 2 \(offsets\).*decrease"),
        ({"offsets": np.array([1, 1], np.int32), "default": np.int32(5)}, r"input 3 \(default_index\)"),
    ]
    for change, message in cases:
        with pytest.raises(InputError, match=message):
            model.run({**base, **change})
    model.run({**base, "indices": np.array([9, 2, 3], np.int32), "offsets": np.array([1, 2], np.int32)})  # unread
    path, _ = _segments_graph(tmp_path, [5, 2], 3, 2, default=True)
    model = ir_runner.load(str(path))
    base = {"table": SPEC_TABLE, "indices": np.array([1, 2, 3], np.int32), "ids": np.array([0, 0, 0], np.int32),
            "default": np.int32(0)}
    for change, message in [({"ids": np.array([0, 2, 0], np.int32)}, r"input 2 \(segment_ids\).*segment id 2"),
                            ({"ids": np.array([0, -1, 0], np.int32)}, r"segment id -1"),
                            ({"default": np.int32(-1)}, r"input 4 \(default_index\).*-1"),
                            ({"indices": np.array([1, 2, 7], np.int32)}, r"input 1 \(indices\).*index 7")]:
        with pytest.raises(InputError, match=message):
            model.run({**base, **change})
    path, _ = _packed_graph(tmp_path, 15, [5, 1], [2, 0], et="i32", reduction="mean")
    with pytest.raises(InputError, match=r"EmbeddingBagPacked.*divides an integer by zero"):
        ir_runner.load(str(path)).run({"table": np.ones((5, 1), np.int32), "indices": np.zeros((2, 0), np.int32)})
    path, _ = _packed_graph(tmp_path, 15, [5, 1], [1, 256], et="u8", reduction="mean")  # (u8)256 is 0
    with pytest.raises(InputError, match=r"a bag of 256 indices: its mean divides by \(uint8\)\(256\) = 0"):
        ir_runner.load(str(path)).run({"table": np.ones((5, 1), np.uint8), "indices": np.zeros((1, 256), np.int32)})


def test_batch_rules():
    from ir_runner.ops.indexing.embedding import _batch_packed, _batch_table_only

    assert _batch_packed({}, [], [None], [None, 0]) == [0]
    assert _batch_packed({}, [], [None], [None, 0, 0]) == [0]
    assert _batch_packed({}, [], [None], [1, None, None]) == [1]
    assert "numbers the embeddings" in _batch_packed({}, [], [None], [0, None])
    assert "across the indices of a bag" in _batch_packed({}, [], [None], [None, 1])
    assert "both carry" in _batch_packed({}, [], [None], [None, 0, None])
    assert "different output axes" in _batch_packed({}, [], [None], [1, 0])
    assert _batch_table_only({}, [], [None], [2, None, None]) == [2]
    assert _batch_table_only({}, [], [None], [None, None, None]) == [None]
    assert "offsets or segment ids" in _batch_table_only({}, [], [None], [None, 0, None])
    assert "numbers the embeddings" in _batch_table_only({}, [], [None], [0, None, None])


# -- differential ----------------------------------------------------------------------------------------------

def _random_case(rng, tmp_path):
    kind = rng.choice(["offsets", "packed", "segments"])
    version = int(rng.choice([3, 15]))
    et = str(rng.choice(["f32", "f32", "i32", "i8", "u8"]))
    it = str(rng.choice(["i32", "i64"]))
    num_emb = int(rng.integers(1, 9))
    emb_dims = [int(d) for d in rng.integers(1, 4, size=int(rng.integers(0, 3)))]
    table = _table(rng, [num_emb] + emb_dims, et)
    weighted = bool(rng.random() < 0.5)
    reduction = "mean" if version == 15 and not weighted and rng.random() < 0.5 else "sum"
    if kind == "packed":
        shape = [int(rng.integers(0, 5)), int(rng.integers(1, 5))]
        idx = rng.integers(0, num_emb, size=shape).astype(_dtype(it))
        path, _ = _packed_graph(tmp_path, version, [num_emb] + emb_dims, shape, et, it, weighted, reduction)
        feeds = {"table": table, "indices": idx}
        if weighted:
            feeds["weights"] = _table(rng, shape, et)
        oracle = _oracle("packed", reduction)
    elif kind == "offsets":
        n = int(rng.integers(1, 12))
        bags = int(rng.integers(1, 5))
        offsets = np.sort(rng.integers(0, n, size=bags)).astype(_dtype(it))
        default = bool(rng.random() < 0.6)
        path, _ = _offsets_graph(tmp_path, version, [num_emb] + emb_dims, n, bags, et, it, default, weighted,
                                 reduction)
        feeds = {"table": table, "indices": rng.integers(0, num_emb, size=n).astype(_dtype(it)), "offsets": offsets}
        if default or weighted:
            feeds["default"] = np.array(rng.integers(-1, num_emb), _dtype(it))
        if weighted:
            feeds["weights"] = _table(rng, n, et)
        oracle = _oracle("offsets", reduction, second="offsets")
    else:
        n = int(rng.integers(0, 12))
        segments = int(rng.integers(1, 6))
        default = bool(rng.random() < 0.6)
        path, _ = _segments_graph(tmp_path, [num_emb] + emb_dims, n, segments, et, it, default, weighted)
        feeds = {"table": table, "indices": rng.integers(0, num_emb, size=n).astype(_dtype(it)),
                 "ids": np.sort(rng.integers(0, segments, size=n)).astype(_dtype(it))}  # (CPU: sorted only)
        if default or weighted:
            feeds["default"] = np.array(rng.integers(0, num_emb), _dtype(it))
        if weighted:
            feeds["weights"] = _table(rng, n, et)
        oracle = _oracle("segments", "sum", second="ids", third=segments)
    return path, feeds, oracle


@pytest.mark.parametrize("seed", range(30))
def test_random_against_the_reference_loop_and_the_cpu_plugin(seed, tmp_path):
    path, feeds, oracle = _random_case(np.random.default_rng(seed), tmp_path)
    check_inference(path)
    check_run(path, feeds, oracle=oracle)
    check_run(path, feeds, oracle="cpu")


# -- torch ------------------------------------------------------------------------------------------------------

TORCH_BAGS = Path(__file__).parent.parent / "data" / "embedding" / "torch_bags.xml"


def test_torch_embedding_bag_converts_and_runs():
    """torch.nn.EmbeddingBag (sum with per_sample_weights, mean, and 2-D input) as ``openvino.convert_model``
    (2026.4.1, torch 2.13) wrote it: three EmbeddingBagOffsets-15, inferred as declared, bit-exact to the CPU
    plugin, and close to torch's outputs (``scripts/make_torch_samples.py`` wrote the IR and them)."""
    assert TORCH_BAGS.read_text().count('type="EmbeddingBagOffsets" version="opset15"') == 3
    check_inference(TORCH_BAGS)
    stored = np.load(TORCH_BAGS.with_name("torch_bags_expected.npz"), allow_pickle=False)
    for case in (0, 1):
        feeds = {name: stored[f"case{case}_{name}"] for name in ("idx", "off", "w")}
        got = check_run(TORCH_BAGS, feeds, oracle=_cpu_static)
        for j, value in enumerate(got.values()):
            np.testing.assert_allclose(value, stored[f"case{case}_out{j}"], rtol=1e-6, atol=1e-6)
