"""ir_runner.dask on whole networks: the models/real networks whose outputs keep their rows apart run chunked
(threads scheduler and a 2-worker LocalCluster) and agree with Model.run; the proof carries the batch through
ShapeOf -> Gather -> Concat -> Reshape subgraphs and refuses, naming the layer and port, where rows mix."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ir_runner
from ir_runner.errors import BatchError
from tests.helpers.bits import same_bits
from tests.helpers.dask_models import grown_from
from tests.helpers.irbuild import IRBuilder

da = pytest.importorskip("dask.array")
ird = pytest.importorskip("ir_runner.dask")

REAL = Path(__file__).resolve().parent.parent / "models" / "real"
BIT_EXACT = ["cnn_onnx", "resnet_block"]  # no MatMul: every operation is computed the same way in any block
THROUGH_BLAS = ["bert", "bert_onnx", "distilbert", "gpt2", "gru", "llama", "lstm", "qwen2", "t5_encoder", "vit",
                "whisper_encoder"]  # MatMul: OpenBLAS's kernels depend on the rows


def grown(name: str, rows: int, seed: int = 0) -> dict[str, np.ndarray]:
    """The network's sample inputs (models/real/NAME/inputs.npz) grown to ``rows`` rows (:func:`grown_from`)."""
    return grown_from(dict(np.load(REAL / name / "inputs.npz")), rows, seed)


def _whole_and_chunked(name: str, rows: int, chunk: int, **compute):
    model = ir_runner.load(REAL / name / "model.xml")
    feeds = grown(name, rows)
    outputs = ird.run(model, feeds, batch_axis=0, chunk=chunk)
    return model.run(feeds), dict(zip(outputs, da.compute(*outputs.values(), **compute)))


@pytest.mark.parametrize("name", BIT_EXACT)
def test_a_cnn_runs_chunked_bit_for_bit(name):
    whole, chunked = _whole_and_chunked(name, 7, 3, scheduler="threads")
    for key, value in whole.items():
        assert same_bits(chunked[key], value), key


@pytest.mark.parametrize("name", THROUGH_BLAS)
def test_networks_with_matmuls_run_chunked_within_blas_rounding(name):
    """Blocks of 3, 3 and 1 rows: a one-row block is a matrix-vector product in OpenBLAS, so the last bits
    may differ (measured: at most 2.4e-6 on outputs of about 1); shapes, dtypes and NaNs (a row whose
    attention mask is all zeros) are the whole run's."""
    whole, chunked = _whole_and_chunked(name, 7, 3, scheduler="threads")
    for key, value in whole.items():
        got = chunked[key]
        assert got.dtype == value.dtype and got.shape == value.shape, key
        scale = float(np.nanmax(np.abs(value), initial=1.0))
        np.testing.assert_allclose(got, value, rtol=1e-5, atol=1e-5 * scale, equal_nan=True, err_msg=key)


def test_a_network_on_a_two_worker_local_cluster():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster):
        whole, chunked = _whole_and_chunked("resnet_block", 5, 2)
    for key, value in whole.items():
        assert same_bits(chunked[key], value), key


def _row_index_model(directory, step: int):
    """x i64[?,3] -> Gather along axis 0 at ``Range(0, rows) * step`` (rows from ShapeOf(x)), as PyTorch
    exports ``x[arange(batch)]`` -> Result."""
    b = IRBuilder()
    x = b.parameter("x", "i64", "?,3")
    shape = b.layer("ShapeOf", "opset3", [x], attrs={"output_type": "i64"}, out_specs=[("i64", "2")])
    zero = b.const("zero", np.array(0, np.int64))
    rows = b.layer("Gather", "opset8", [shape, zero, zero], out_specs=[("i64", "")])
    index = b.layer("Range", "opset4", [zero, rows, b.const("one", np.array(1, np.int64))],
                    attrs={"output_type": "i64"}, out_specs=[("i64", "?")])
    index = b.layer("Multiply", "opset1", [index, b.const("step", np.array(step, np.int64))], out_specs=[("i64", "?")])
    b.result(b.layer("Gather", "opset8", [x, index, zero], name="pick", out_specs=[("i64", "?,3")]), name="y")
    return b.write(directory)


def test_a_gather_at_the_row_index_runs_chunked(tmp_path):
    model = ir_runner.load(_row_index_model(tmp_path, 1))
    x = np.arange(33, dtype=np.int64).reshape(11, 3)
    (y,) = ird.run(model, {"x": x}, chunk=4).values()
    assert same_bits(y.compute(scheduler="threads"), x)


def test_a_gather_at_other_rows_is_refused_naming_layer_and_port(tmp_path):
    """``x[arange(batch) * 2]``: in the whole run row i takes row 2i, in a block another row."""
    model = ir_runner.load(_row_index_model(tmp_path, 2))
    with pytest.raises(BatchError, match=r"layer 'pick' \(Gather-8, id \d+, line \d+\), input 0 \(data\): .*its"
                                         r" indices step by 2 per row, the data's batch axis holds 4 elements"):
        ird.run(model, {"x": np.zeros((11, 3), np.int64)}, chunk=4)


def _flatten_model(directory, target: str):
    """x f32[?,4,2] -> Reshape to a target computed from ShapeOf(x) (``[batch, 8]``, as torch's flatten
    exports it) or a constant ``[-1, 16]`` (which merges two rows into one) -> Relu."""
    b = IRBuilder()
    x = b.parameter("x", "f32", "?,4,2")
    if target == "from_shape":
        shape = b.layer("ShapeOf", "opset3", [x], attrs={"output_type": "i64"}, out_specs=[("i64", "3")])
        first = b.layer("Gather", "opset8", [shape, b.const("i0", np.array([0], np.int64)),
                                             b.const("a0", np.array(0, np.int64))], out_specs=[("i64", "1")])
        target_layer = b.layer("Concat", "opset1", [first, b.const("eight", np.array([8], np.int64))],
                               attrs={"axis": "0"}, out_specs=[("i64", "2")])
        dims = "?,8"
    else:
        target_layer = b.const("t", np.array([-1, 16], np.int64))
        dims = "?,16"
    flat = b.layer("Reshape", "opset1", [x, target_layer], attrs={"special_zero": "false"}, name="flat",
                   out_specs=[("f32", dims)])
    b.result(b.layer("Relu", "opset1", [flat], out_specs=[("f32", dims)]), name="y")
    return b.write(directory)


def test_a_reshape_whose_target_comes_from_shapeof_runs_chunked(tmp_path):
    model = ir_runner.load(_flatten_model(tmp_path, "from_shape"))
    x = np.random.default_rng(0).standard_normal((11, 4, 2)).astype(np.float32)
    (y,) = ird.run(model, {"x": x}, chunk=4).values()
    assert y.chunks == ((4, 4, 3), (8,))
    assert same_bits(y.compute(scheduler="threads"), model.run({"x": x})["y"])


def test_an_output_with_several_elements_per_row(tmp_path):
    """``[r,4,2] -> [2r,4]``: each row is two output rows, laid out in blocks of twice the rows."""
    b = IRBuilder()
    x = b.parameter("x", "f32", "?,4,2")
    flat = b.layer("Reshape", "opset1", [x, b.const("t", np.array([-1, 4], np.int64))],
                   attrs={"special_zero": "false"}, out_specs=[("f32", "?,4")])
    b.result(flat, name="y")
    model = ir_runner.load(b.write(tmp_path))
    x = np.random.default_rng(2).standard_normal((11, 4, 2)).astype(np.float32)
    (y,) = ird.run(model, {"x": x}, chunk=4).values()
    assert y.chunks == ((8, 8, 6), (4,))
    assert same_bits(y.compute(scheduler="threads"), model.run({"x": x})["y"])


def test_a_reshape_that_merges_rows_is_refused(tmp_path):
    model = ir_runner.load(_flatten_model(tmp_path, "merge"))
    x = np.zeros((10, 4, 2), np.float32)
    with pytest.raises(BatchError, match=r"layer 'flat' \(Reshape-1, id \d+.*input 0 \(data\).*reshapes \[4, 4, 2\]"
                                         r" into \[2, 16\]"):
        ird.run(model, {"x": x}, chunk=4)


def test_the_block_size_used_as_data_is_refused(tmp_path):
    """``x + x.shape[0]``: each block would add its own row count."""
    b = IRBuilder()
    x = b.parameter("x", "i64", "?,3")
    shape = b.layer("ShapeOf", "opset3", [x], attrs={"output_type": "i64"}, out_specs=[("i64", "2")])
    rows = b.layer("Gather", "opset8", [shape, b.const("i0", np.array(0, np.int64)),
                                        b.const("a0", np.array(0, np.int64))], out_specs=[("i64", "")])
    b.result(b.layer("Add", "opset1", [x, rows], name="plus", out_specs=[("i64", "?,3")]), name="y")
    model = ir_runner.load(b.write(tmp_path))
    with pytest.raises(BatchError, match=r"layer 'plus' \(Add-1, id \d+.*input 1 \(b\): its input 1 is computed"
                                         r" from the block's shape"):
        ird.run(model, {"x": np.zeros((6, 3), np.int64)}, chunk=2)
    (y,) = ird.run(model, {"x": np.zeros((6, 3), np.int64)}, chunk=6).values()  # one block: the whole run
    assert (y.compute(scheduler="sync") == 6).all()


def _zoo_with_a_dynamic_batch(name: str, directory: Path) -> Path:
    """The zoo CNN (tests/helpers/zoo.py, batch 1) reshaped by OpenVINO to a batch of ``?`` and saved."""
    pytest.importorskip("onnx", reason="the zoo CNNs need the onnx package")
    ov = pytest.importorskip("openvino")
    from tests.helpers.zoo import zoo_ir

    model = ov.Core().read_model(str(zoo_ir(name)))
    model.reshape({model.inputs[0].get_any_name(): ov.PartialShape([-1, 3, 224, 224])})
    ov.save_model(model, str(directory / "model.xml"), compress_to_fp16=False)
    return directory / "model.xml"


@pytest.mark.parametrize("name, exact", [("squeezenet", True), ("zfnet512", False)])
def test_zoo_cnns_with_a_dynamic_batch_run_chunked(name, exact, tmp_path):
    """SqueezeNet (convolutions, pooling, Softmax) bit for bit; ZFNet's Gemm layers (MatMul) within BLAS
    rounding (measured: 9e-8 on probabilities)."""
    model = ir_runner.load(_zoo_with_a_dynamic_batch(name, tmp_path))
    x = np.random.default_rng(3).standard_normal((3, 3, 224, 224)).astype(np.float32)
    (got,) = (array.compute(scheduler="threads") for array in ird.run(model, [x], chunk=2).values())
    (whole,) = model.run([x]).values()
    if exact:
        assert same_bits(got, whole)
    else:
        np.testing.assert_allclose(got, whole, rtol=1e-5, atol=1e-6)


def test_a_zoo_cnn_with_a_static_batch_runs_one_row_per_block():
    """Batch 1 in the IR: every block is one row, one run of the model as OpenVINO would make it."""
    pytest.importorskip("onnx", reason="the zoo CNNs need the onnx package")
    from tests.helpers.zoo import zoo_ir

    model = ir_runner.load(zoo_ir("squeezenet"))
    x = np.random.default_rng(4).standard_normal((2, 3, 224, 224)).astype(np.float32)
    (out,) = ird.run(model, [x]).values()
    assert out.chunks[0] == (1, 1)
    got = out.compute(scheduler="threads")
    for row in range(2):
        assert same_bits(got[row:row + 1], next(iter(model.run([x[row:row + 1]]).values())))


def _rows_of(b: IRBuilder, x, rank: int):
    """``[x.shape[0]]`` as PyTorch exports it: ShapeOf -> Gather of dim 0 (1-D)."""
    shape = b.layer("ShapeOf", "opset3", [x], attrs={"output_type": "i64"}, out_specs=[("i64", str(rank))])
    return b.layer("Gather", "opset8", [shape, b.const("i0", np.array([0], np.int64)),
                                        b.const("a0", np.array(0, np.int64))], out_specs=[("i64", "1")])


def test_shared_data_broadcast_to_the_block_s_rows_is_the_same_in_every_row(tmp_path):
    """``x + bias.expand(x.shape[0], -1)``: the Broadcast's rows are copies, so they are the whole run's."""
    b = IRBuilder()
    x = b.parameter("x", "f32", "?,4")
    target = b.layer("Concat", "opset1", [_rows_of(b, x, 2), b.const("four", np.array([4], np.int64))],
                     attrs={"axis": "0"}, out_specs=[("i64", "2")])
    bias = b.const("bias", np.array([1, -2, 3, 0.5], np.float32))
    expanded = b.layer("Broadcast", "opset3", [bias, target], attrs={"mode": "numpy"}, out_specs=[("f32", "?,4")])
    b.result(b.layer("Add", "opset1", [x, expanded], out_specs=[("f32", "?,4")]), name="y")
    model = ir_runner.load(b.write(tmp_path))
    x = np.random.default_rng(1).standard_normal((9, 4)).astype(np.float32)
    (y,) = ird.run(model, {"x": x}, chunk=4).values()
    assert same_bits(y.compute(scheduler="threads"), model.run({"x": x})["y"])


@pytest.mark.parametrize("start, stop, axis, refused", [
    (1, 3, 1, None), (0, 2**62, 0, None), (1, 2**62, 0, "it slices the batch axis")])
def test_a_slice_keeps_rows_when_it_takes_them_all(tmp_path, start, stop, axis, refused):
    b = IRBuilder()
    x = b.parameter("x", "f32", "?,4")
    const = [b.const(name, np.array([v], np.int64)) for name, v in (("b", start), ("e", stop), ("s", 1), ("a", axis))]
    dims = "?,2" if axis == 1 else "?,4"
    b.result(b.layer("Slice", "opset8", [x, *const], name="cut", out_specs=[("f32", dims)]), name="y")
    model = ir_runner.load(b.write(tmp_path))
    x = np.arange(36, dtype=np.float32).reshape(9, 4)
    if refused:
        with pytest.raises(BatchError, match=rf"layer 'cut' \(Slice-8.*{refused}"):
            ird.run(model, {"x": x}, chunk=4)
        return
    (y,) = ird.run(model, {"x": x}, chunk=4).values()
    assert same_bits(y.compute(scheduler="threads"), model.run({"x": x})["y"])
