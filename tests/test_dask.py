"""ir_runner.dask: a model run block by block on Dask equals Model.run bit for bit (BLAS operations: within
their bound), with threads, processes and a real 2-worker LocalCluster over data 4x larger than a worker's
memory limit; graphs that would mix rows are refused before any work."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

import ir_runner
from ir_runner.errors import BatchError, InputError
from tests.helpers.bits import same_bits
from tests.helpers.dask_models import C, feeds, select_gather_model
from tests.helpers.irbuild import IRBuilder

da = pytest.importorskip("dask.array")
ird = pytest.importorskip("ir_runner.dask")


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    return select_gather_model(tmp_path_factory.mktemp("sg"))


@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_blocks_equal_the_whole_run_with_a_shorter_last_block(model_path, scheduler):
    model = ir_runner.load(model_path)
    data = feeds(1003)
    outputs = ird.run(model, data, chunk=100)
    assert list(outputs) == [o.name for o in model.outputs]
    assert outputs["selected"].chunks == ((100,) * 10 + (3,), (C,))
    assert outputs["picked"].chunks[0][-1] == 3
    expected = model.run(data)
    for name, array in outputs.items():
        assert same_bits(array.compute(scheduler=scheduler), expected[name]), name



def test_blas_operations_agree_within_their_bound_not_bit_for_bit(tmp_path):
    """A MatMul's rows go through OpenBLAS, whose kernels depend on the matrix sizes (a one-row block is a
    matrix-vector product): blocks agree with the whole run within MatMul's bound, not bit for bit
    (docs/scale.md)."""
    b = IRBuilder()
    x = b.parameter("x", "f32", "?,64")
    w = np.random.default_rng(0).standard_normal((64, 1)).astype(np.float32)
    b.result(b.layer("MatMul", "opset1", [x, b.const("w", w)], name="mm", out_specs=[("f32", "?,1")]), "y")
    model = ir_runner.load(b.write(tmp_path))
    rows = np.random.default_rng(1).standard_normal((1001, 64)).astype(np.float32)
    whole = model.run({"x": rows})[model.outputs[0].name]
    blocks = ird.run(model, {"x": rows}, chunk=7)[model.outputs[0].name].compute(scheduler="sync")
    bound = 2 * 64 * np.finfo(np.float32).eps * (np.abs(rows) @ np.abs(w))
    assert (np.abs(blocks.astype(np.float64) - whole) <= bound).all()

def test_processes_scheduler_loads_the_model_from_its_path(model_path):
    data = feeds(500, seed=1)
    outputs = ird.run(str(model_path), data, chunk=128)
    expected = ir_runner.load(model_path).run(data)
    got = da.compute(*outputs.values(), scheduler="processes")
    assert all(same_bits(g, expected[name]) for g, name in zip(got, outputs))


def test_positions_dask_feeds_and_their_chunks(model_path):
    model = ir_runner.load(model_path)
    data = feeds(300, seed=2)
    chunked = [da.from_array(data["cond"], chunks=(70, 4)), da.from_array(data["then"], chunks=(70, C)), data["else"]]
    outputs = ird.run(model, chunked)
    assert outputs["selected"].chunks[0] == (70, 70, 70, 70, 20)  # the first batched dask input's rows
    assert same_bits(outputs["picked"].compute(), model.run(data)["picked"])


def test_memory_mapped_npy_is_reopened_by_path(model_path, tmp_path):
    model = ir_runner.load(model_path)
    data = feeds(257, seed=3)
    for name, value in data.items():
        np.save(tmp_path / f"{name}.npy", value)
    mapped = {name: np.load(tmp_path / f"{name}.npy", mmap_mode="r") for name in data}
    region = ird.MappedNpy.of(mapped["then"][10:])
    assert region is not None and same_bits(pickle.loads(pickle.dumps(region))[:5], data["then"][10:15])
    outputs = ird.run(model, mapped, chunk=64)
    got = da.compute(*outputs.values(), scheduler="processes")
    assert all(same_bits(g, model.run(data)[name]) for g, name in zip(got, outputs))


def test_rows_on_another_axis(tmp_path):
    b = IRBuilder()
    cond = b.parameter("cond", "boolean", "4,?")
    then = b.parameter("then", "i32", "4,?")
    other = b.parameter("else", "i32", "4,1")  # shared: broadcast along the rows
    b.result(b.layer("Select", "opset1", [cond, then, other], out_specs=[("i32", "4,?")]))
    model = ir_runner.load(b.write(tmp_path))
    rng = np.random.default_rng(4)
    data = {"cond": rng.random((4, 99)) > 0.5, "then": rng.integers(-9, 9, (4, 99), dtype=np.int32),
            "else": rng.integers(-9, 9, (4, 1), dtype=np.int32)}
    (output,) = ird.run(model, data, batch_axis=1, chunk=25).values()
    assert output.chunks == ((4,), (25, 25, 25, 24))
    assert same_bits(output.compute(), next(iter(model.run(data).values())))


def test_an_output_without_the_batch_axis_comes_from_the_first_block(tmp_path):
    b = IRBuilder()
    x = b.parameter("x", "f32", "?,3")
    table = b.parameter("table", "f32", "5")
    b.result(b.convert(x, "f64"), name="rows")
    b.result(b.convert(table, "i32"), name="shared")
    model = ir_runner.load(b.write(tmp_path))
    data = {"x": np.arange(30, dtype=np.float32).reshape(10, 3), "table": np.linspace(-2, 2, 5, dtype=np.float32)}
    outputs = ird.run(model, data, batch_axis={"x": 0}, chunk=4)
    assert outputs["shared"].chunks == ((5,),) and outputs["rows"].chunks[0] == (4, 4, 2)
    expected = model.run(data)
    assert all(same_bits(outputs[k].compute(), expected[k]) for k in expected)


def test_a_block_shape_is_planned_once(model_path, monkeypatch):
    import ir_runner.model as model_module

    calls = []
    real = model_module.build_plan
    monkeypatch.setattr(model_module, "build_plan", lambda *a, **k: calls.append(1) or real(*a, **k))
    model = ir_runner.load(model_path)
    data = feeds(1010, seed=5)
    for array in ird.run(model, data, chunk=100).values():
        array.compute(scheduler="threads")
    assert len(calls) == 2  # blocks of 100 rows and the last one of 10, across two computes and threads


def test_gather_along_the_batch_axis_is_refused_before_any_work(tmp_path):
    model = ir_runner.load(select_gather_model(tmp_path, gather_axis=0))
    with pytest.raises(BatchError) as caught:
        ird.run(model, feeds(40), chunk=10)
    message = str(caught.value)
    assert "layer 'pick' (Gather-8, id" in message and "gathers along the batch axis (axis 0)" in message
    assert caught.value.exit_code == 5


def test_an_operation_without_a_batch_rule_is_refused(model_path, monkeypatch):
    model = ir_runner.load(model_path)
    convert = model.inference.layers[next(i for i, layer in model.graph.layers.items() if layer.name == "half")].op
    assert convert.type == "Convert"
    monkeypatch.setattr(convert, "batch", None)
    with pytest.raises(BatchError, match=r"layer 'half' \(Convert-1.*declares no batch rule"):
        ird.run(model, feeds(20), chunk=10)


def test_a_shared_input_that_lines_up_with_the_rows_is_refused(tmp_path):
    b = IRBuilder()
    x = b.parameter("x", "f32", "?,4")
    other = b.parameter("other", "f32", "6,4")
    cond = b.const("cond", np.array([True, False, True, True]))
    b.result(b.layer("Select", "opset1", [cond, x, other], name="mix", out_specs=[("f32", "6,4")]))
    model = ir_runner.load(b.write(tmp_path))
    data = {"x": np.ones((6, 4), np.float32), "other": np.zeros((6, 4), np.float32)}
    with pytest.raises(BatchError, match=r"layer 'mix'.*input 2 has no batch axis, but its dim 0"):
        ird.run(model, data, batch_axis={"x": 0}, chunk=6)  # one block: its shapes fit, its rows would not


def test_feeds_that_do_not_fit(model_path, tmp_path):
    model = ir_runner.load(model_path)
    data = feeds(30)
    with pytest.raises(InputError, match="takes f32, it is fed float64"):
        ird.run(model, {**data, "then": data["then"].astype(np.float64)})
    with pytest.raises(InputError, match="different numbers of rows"):
        ird.run(model, data, batch_axis={"cond": 0, "then": 0, "else": 0})
    with pytest.raises(InputError, match="no data for input"):
        ird.run(model, {"cond": data["cond"]})
    static = ir_runner.load(select_gather_model(tmp_path, rows="4"))
    with pytest.raises(InputError, match=r"input 'cond' takes \[4,8\], a block of 3 rows"):
        ird.run(static, feeds(12), chunk=3)
    assert ird.run(static, feeds(12))["selected"].chunks[0] == (4, 4, 4)  # the static batch dim by default


# -- a real cluster --------------------------------------------------------------------------------------

WORKER_LIMIT = 128 << 20


@pytest.fixture
def fast_tmp(tmp_path):
    """A scratch folder in memory (/dev/shm) when there is one, for the large Zarr arrays."""
    import shutil
    import tempfile

    if not os.access("/dev/shm", os.W_OK):
        yield tmp_path
        return
    folder = tempfile.mkdtemp(prefix="ir-run-test-", dir="/dev/shm")
    try:
        yield __import__("pathlib").Path(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_local_cluster_over_data_four_times_a_workers_memory(fast_tmp):
    """2 worker processes of 128 MiB each (spilling and pausing off: only the nanny's kill at 95% remains)
    run over a 544 MiB Zarr array, writing Zarr; the result equals Model.run block by block, and no worker
    was restarted."""
    tmp_path = fast_tmp
    import dask
    import zarr
    from distributed import Client, LocalCluster

    columns, block = 4096, 1024
    rows = (WORKER_LIMIT * 17 // 4) // columns  # 4.25x one worker's limit, in u8
    b = IRBuilder()
    x = b.parameter("x", "u8", f"?,{columns}")
    mask = b.parameter("mask", "boolean", f"{columns}")
    fill = b.const("fill", np.array([[7]], dtype=np.uint8))
    sel = b.layer("Select", "opset1", [mask, x, fill], out_specs=[("u8", f"?,{columns}")])
    picked = np.arange(0, columns, 97, dtype=np.int64)
    axis = b.const("axis", np.array(1, dtype=np.int64))
    gather = b.layer("Gather", "opset8", [sel, b.const("idx", picked), axis], out_specs=[("u8", f"?,{picked.size}")])
    b.result(b.convert(gather, "f32"))
    path = b.write(tmp_path)

    source = zarr.create_array(tmp_path / "x.zarr", shape=(rows, columns), chunks=(block, columns), dtype="u1",
                               compressors=None)
    base = np.random.default_rng(6).integers(0, 256, (16 * block, columns), dtype=np.uint8)
    for lo in range(0, rows, block):  # chunk by chunk (zarr writes whole chunks fastest), each one unique
        chunk = base[lo % base.shape[0]:][:min(block, rows - lo)].copy()
        chunk[0, :4] = np.frombuffer(np.uint32(lo).tobytes(), np.uint8)
        source[lo:lo + chunk.shape[0]] = chunk
    assert source.nbytes >= 4 * WORKER_LIMIT
    mask_value = np.random.default_rng(7).random(columns) > 0.3

    memory = {"distributed.worker.memory.target": False, "distributed.worker.memory.spill": False,
              "distributed.worker.memory.pause": False}
    with dask.config.set(memory), LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                               memory_limit=WORKER_LIMIT, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        pids = client.run(os.getpid)
        (output,) = ird.run(path, {"x": da.from_zarr(str(tmp_path / "x.zarr")), "mask": mask_value}).values()
        da.to_zarr(output, str(tmp_path / "out.zarr"))
        assert client.run(os.getpid) == pids and len(cluster.workers) == 2  # same two processes throughout
        loaded = client.run(lambda: [len(model._plans) for model in ird._loaded_models.values()])
        assert sorted(loaded.values()) == [[1], [1]]  # each worker loaded the model once, planned one block shape

    model = ir_runner.load(path)
    result = zarr.open_array(tmp_path / "out.zarr", mode="r")
    assert result.shape == (rows, picked.size)
    for lo in range(0, rows, 8 * block):
        expected = next(iter(model.run({"x": source[lo:lo + 8 * block], "mask": mask_value}).values()))
        assert same_bits(result[lo:lo + 8 * block], expected), lo
