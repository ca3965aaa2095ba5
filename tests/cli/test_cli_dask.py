"""``ir-run MODEL --input NAME=data.zarr --output out.zarr``: the chunked run on Dask, as a real process."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import ir_runner
from tests.helpers.bits import same_bits
from tests.helpers.dask_models import feeds, select_gather_model
from tests.helpers.irbuild import IRBuilder

zarr = pytest.importorskip("zarr")


def _on_a_terminal(*args: object) -> tuple[int, str, str]:
    """``ir-run *args`` with stderr on a pseudo-terminal: exit code, stdout, what the terminal showed."""
    import pty

    leader, follower = pty.openpty()
    environment = {k: v for k, v in os.environ.items() if k != "IR_RUN_DEBUG"}
    with subprocess.Popen([sys.executable, "-m", "ir_runner", *map(str, args)], stdout=subprocess.PIPE,
                          stderr=follower, text=True, env=environment) as process:
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # (the terminal closes with the process)
                break
            if not chunk:
                break
            shown += chunk
        out = process.stdout.read()
        code = process.wait(timeout=120)
    os.close(leader)
    return code, out, shown.decode()


def _ir_run(*args: object, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "IR_RUN_DEBUG"}
    environment.update(env or {})
    return subprocess.run([sys.executable, "-m", "ir_runner", *map(str, args)], capture_output=True, text=True,
                          env=environment, timeout=120)


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    """The Select -> Gather -> Convert model, ``then`` as Zarr (chunks of 64 rows), ``cond`` and the shared
    ``else`` as .npy, and the outputs of Model.run on the whole data."""
    folder = tmp_path_factory.mktemp("cli-dask")
    path = select_gather_model(folder)
    data = feeds(1001, seed=11)
    zarr.create_array(folder / "then.zarr", data=data["then"], chunks=(64, 8))
    np.save(folder / "cond.npy", data["cond"])
    np.save(folder / "else.npy", data["else"])
    args = [path, "--input", f"cond={folder / 'cond.npy'}", "--input", f"then={folder / 'then.zarr'}",
            "--input", f"else={folder / 'else.npy'}"]
    return folder, args, ir_runner.load(path).run(data)


def _check(store, expected) -> None:
    group = zarr.open_group(store, mode="r")
    assert sorted(group.array_keys()) == sorted(expected)
    for name, value in expected.items():
        assert same_bits(group[name][...], value), name


def test_zarr_in_zarr_out(case):
    folder, args, expected = case
    out = folder / "out.zarr"
    done = _ir_run(*args, "--output", out, "--chunk", "200")
    assert done.returncode == 0, done.stderr
    _check(out, expected)
    assert "rows/s" not in done.stderr and "%" not in done.stderr  # stderr is not a terminal: no bar
    assert "selected: f32[1001,8] -> " in done.stdout and "wrote outputs to" in done.stdout
    assert [p.name for p in folder.iterdir() if p.name.startswith(".out.zarr")] == []  # no temporary left
    again = _ir_run(*args, "--output", out, "--scheduler", "processes", "-q")  # replaces the finished store
    assert again.returncode == 0, again.stderr
    _check(out, expected)


def test_a_failing_block_leaves_nothing_under_the_final_name(tmp_path):
    """--strict: an index out of range in the last block fails the run after others were written."""
    b = IRBuilder()
    table = b.parameter("table", "f32", "5,3")
    indices = b.parameter("indices", "i64", "?,2")
    axis = b.const("axis", np.array(0, dtype=np.int64))
    b.result(b.layer("Gather", "opset8", [table, indices, axis], out_specs=[("f32", "?,2,3")]))
    path = b.write(tmp_path)
    np.save(tmp_path / "table.npy", np.arange(15, dtype=np.float32).reshape(5, 3))
    values = np.zeros((100, 2), dtype=np.int64)
    values[-1, 1] = 9
    zarr.create_array(tmp_path / "indices.zarr", data=values, chunks=(10, 2))
    out = tmp_path / "out.zarr"
    done = _ir_run(path, "--strict", "--input", f"table={tmp_path / 'table.npy'}",
                   "--input", f"indices={tmp_path / 'indices.zarr'}", "--output", out, "--chunk", "10",
                   "--scheduler", "processes")  # the error comes back from a worker process
    assert done.returncode == 4, done.stderr
    assert "index 9" in done.stderr and "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["indices.zarr", "model.bin", "model.xml", "table.npy"]


def test_a_graph_that_mixes_rows_is_refused(tmp_path):
    path = select_gather_model(tmp_path, gather_axis=0)
    data = feeds(30)
    for name, value in data.items():
        np.save(tmp_path / f"{name}.npy", value)
    done = _ir_run(path, *(f"--input={name}={tmp_path / name}.npy" for name in data), "--output",
                   tmp_path / "out.zarr")
    assert done.returncode == 5
    assert "layer 'pick' (Gather-8" in done.stderr and "gathers along the batch axis" in done.stderr
    assert not (tmp_path / "out.zarr").exists()


def test_usage_errors(case):
    folder, args, _ = case
    done = _ir_run(*args, "--output", folder / "out.npz", "--chunk", "10")
    assert done.returncode == 2 and "give --output OUT.zarr" in done.stderr
    done = _ir_run(*args, "--output", folder / "o.zarr", "--trace")
    assert done.returncode == 2 and "--trace cannot be used in a chunked run" in done.stderr
    done = _ir_run(*args, "--output", folder / "o.zarr", "--cast", "unsafe")
    assert done.returncode == 2 and "--cast cannot be used in a chunked run" in done.stderr
    done = _ir_run(*args, "--output", folder / "o.zarr", "--scheduler", "thread")  # a typo, not an address
    assert done.returncode == 2 and "'thread' is not one of threads, processes, sync" in done.stderr
    assert "Traceback" not in done.stderr and not (folder / "o.zarr").exists()


def test_without_dask_the_extra_is_named(case, tmp_path):
    """A ``dask`` package that fails to import stands for a missing extra."""
    (tmp_path / "dask").mkdir()
    (tmp_path / "dask" / "__init__.py").write_text("raise ImportError('no dask here')\n")
    folder, args, _ = case
    done = _ir_run(*args, "--output", folder / "o.zarr", env={"PYTHONPATH": f"{tmp_path}{os.pathsep}{os.getcwd()}"})
    assert done.returncode == 5, done.stderr
    assert "pip install 'ir-run[dask]'" in done.stderr and "Traceback" not in done.stderr


def test_import_ir_runner_does_not_import_dask():
    code = "import sys, ir_runner; ir_runner.load; print(any(m.split('.')[0] in ('dask', 'distributed', 'zarr')" \
           " for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


@pytest.mark.parametrize("scheduler", ["threads", "cluster"])
def test_the_bar_on_a_terminal_ends_with_the_summary_s_rows_per_second(case, scheduler):
    """On the threads scheduler and a running cluster given by address (outputs checked too)."""
    folder, args, expected = case
    out = folder / f"tty-{scheduler}.zarr"
    if scheduler == "cluster":
        from distributed import LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
            code, stdout, shown = _on_a_terminal(*args, "--output", out, "--chunk", "300", "--scheduler",
                                                 cluster.scheduler_address)
    else:
        code, stdout, shown = _on_a_terminal(*args, "--output", out, "--chunk", "200")
    assert code == 0, shown
    _check(out, expected)
    last = shown.replace("\r\n", "\n").split("\r")[-1]
    assert last.startswith("[########################################] | 100% | 1,001/1,001 rows"), shown
    bar_rate = last.split(" | ")[-1].strip()
    summary_rate = stdout.split(", ")[-1].rstrip(")\n")
    assert bar_rate == summary_rate and bar_rate.endswith(" rows/s"), (last, stdout)


def test_an_interruption_ends_the_bar_s_line_first(monkeypatch):
    """Ctrl-C during the computation: the bar's line is ended, so "interrupted" starts a line of its own."""
    import io

    import dask.array as da

    from ir_runner.cli import scale

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    def interrupt(block):
        if block.size:  # (not the empty meta block dask tries first)
            raise KeyboardInterrupt
        return block

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(scale, "settings", lambda: type("Settings", (), {"quiet": False})())
    work = da.zeros(4, chunks=1).map_blocks(interrupt, dtype=float, meta=np.empty(0))
    with pytest.raises(KeyboardInterrupt):
        scale._compute([work], "sync", 4)
    shown = terminal.getvalue()
    assert "rows" in shown and shown.endswith("\n")

    def drawn_then_interrupted(writes, scheduler, line):  # (a cluster's bar: no callback of Dask's ends it)
        line.draw(0.5, 1.0)
        raise KeyboardInterrupt

    monkeypatch.setattr(scale, "_run_writes", drawn_then_interrupted)
    terminal.truncate(0)
    terminal.seek(0)
    with pytest.raises(KeyboardInterrupt):
        scale._compute([work], "tcp://nowhere:1", 4)
    assert terminal.getvalue().endswith("2/4 rows | 1.00 s | 2 rows/s\n")
