"""The hostile corpus (tests/hostile): every case ends in its one clean outcome, through the API and the CLI.

A failing case means one of: an exception that is not an IRError, a crash, a hang, leaked file
contents, a message that does not name the problem, or the wrong class / exit code.
The CLI runs in real subprocesses (3 GiB address space, 10 s) for the security-relevant cases, the
isolated ones and one case per category; in-process through click for the rest.
``IR_RUN_HOSTILE_SUBPROCESS=all`` sends every case through real subprocesses.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import tracemalloc
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import ir_runner
from tests.hostile import CASES, Case, Materialized, fold_bomb, materialize
from tests.hostile.base import FEEDS, base_model
from tests.hostile.procs import Ran, in_process_cli, subprocess_run

SUBPROCESS_CATEGORIES = {"dtd", "files", "ignored", "openvino_crashers"}
ALL_IN_SUBPROCESSES = os.environ.get("IR_RUN_HOSTILE_SUBPROCESS") == "all"
FIRST_OF_CATEGORY = {case.category: case.name for case in reversed(CASES)}
CLI_CASES = [case for case in CASES if case.cli]
VALIDATE_CASES = [c for c in CLI_CASES if c.stage == "load" and c.error is not ir_runner.ResourceLimitError]


def _ids(case: Case) -> str:
    return case.name


def _in_subprocess(case: Case) -> bool:
    return (ALL_IN_SUBPROCESSES or case.isolated or case.category in SUBPROCESS_CATEGORIES
            or FIRST_OF_CATEGORY[case.category] == case.name)


@dataclass
class Corpus:
    directory: Path
    secret: str
    files: dict[str, Materialized]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Corpus:
    directory = tmp_path_factory.mktemp("hostile")
    marker = f"IRRUN-SECRET-{uuid.uuid4().hex}"
    secret = directory / "secret.txt"
    secret.write_text(marker + "\n")
    files = {case.name: materialize(case, directory / case.name, secret) for case in CASES}
    return Corpus(directory, marker, files)


def _run_args(done: Materialized, output: Path | None = None) -> list[str]:
    args = [str(done.model)]
    if done.inputs is not None:
        args += ["--input", str(done.inputs)]
    if output is not None:
        args += ["--output", str(output)]
    return args


def _output_path(done: Materialized) -> Path:
    return done.model.parent / "result.npz"


@pytest.fixture(scope="module")
def subprocess_results(corpus: Corpus) -> dict[tuple[str, str], Ran]:
    """Every subprocess this module needs, started four at a time."""
    jobs: dict[tuple[str, str], tuple[list[str], str]] = {}
    for case in CASES:
        done = corpus.files[case.name]
        if case.isolated:
            runner_args = [str(done.model)] + (["--inputs", str(done.inputs)] if done.inputs else [])
            if case.memory_limit is not None:
                runner_args += ["--memory-limit", str(case.memory_limit)]
            jobs[("api", case.name)] = (runner_args, "tests.hostile.runner")
        if case.cli and _in_subprocess(case):
            jobs[("run", case.name)] = (_run_args(done, _output_path(done)), "ir_runner")
            if case in VALIDATE_CASES and case.isolated:
                jobs[("validate", case.name)] = (["validate", str(done.model)], "ir_runner")
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        futures = {key: pool.submit(subprocess_run, args, module=module) for key, (args, module) in jobs.items()}
        return {key: future.result() for key, future in futures.items()}


def _check_error(case: Case, error: ir_runner.IRError, stage: str, secret: str) -> None:
    message = str(error)
    if case.error is None:
        pytest.fail(f"expected success, got {type(error).__name__} at {stage}: {message}")
    assert secret not in message, "the XXE target's contents leaked into the message"
    assert stage == case.stage, f"expected a failure at {case.stage}, got one at {stage}: {message}"
    assert isinstance(error, case.error), f"expected {case.error.__name__}, got {type(error).__name__}: {message}"
    assert error.exit_code == case.exit_code
    assert re.search(case.match, message, re.S), f"message does not match {case.match!r}:\n{message}"


def _check_outputs(case: Case, outputs: dict[str, np.ndarray]) -> None:
    for name, want in (case.expected or {}).items():
        got = outputs[name]
        assert (got.dtype, got.shape) == (want.dtype, want.shape), name
        assert got.tobytes() == want.tobytes(), name


@pytest.mark.parametrize("case", [c for c in CASES if not c.isolated], ids=_ids)
def test_api(case: Case, corpus: Corpus):
    """load() (and run() for cases with feeds) ends in exactly the case's outcome."""
    done = corpus.files[case.name]
    try:
        model = ir_runner.load(done.model, **case.load_kwargs())
    except ir_runner.IRError as error:
        _check_error(case, error, "load", corpus.secret)
        return
    if case.feeds is None:
        assert case.error is None, f"expected {case.error.__name__} at {case.stage}, but the model loaded"
        return
    try:
        outputs = model.run(case.feeds)
    except ir_runner.IRError as error:
        _check_error(case, error, "run", corpus.secret)
        return
    assert case.error is None, f"expected {case.error.__name__} at {case.stage}, but it ran"
    _check_outputs(case, outputs)


@pytest.mark.parametrize("case", [c for c in CASES if c.isolated], ids=_ids)
def test_api_isolated(case: Case, corpus: Corpus, subprocess_results):
    """Cases that could exhaust memory or block: the API in a subprocess with limits."""
    ran = subprocess_results[("api", case.name)]
    assert not ran.timed_out, f"hung: no answer within {ran.seconds:.0f} s"
    assert ran.code >= 0, f"killed by signal {-ran.code}"
    assert ran.code == 0 and "Traceback" not in ran.stderr, ran.stderr[-3000:]
    assert corpus.secret not in ran.text
    outcome = json.loads(ran.stdout.strip().splitlines()[-1])
    if case.error is None:
        assert outcome["error"] is None, outcome
        return
    assert outcome["error"] is not None, f"expected {case.error.__name__}, but it succeeded"
    error_class = getattr(ir_runner, outcome["error"])
    assert issubclass(error_class, case.error), outcome
    assert outcome["stage"] == case.stage and outcome["exit_code"] == case.exit_code, outcome
    assert re.search(case.match, outcome["message"], re.S), outcome["message"]


def _check_cli(case: Case, ran: Ran, secret: str, *, error_text: str) -> None:
    assert not ran.timed_out, f"hung: no answer within {ran.seconds:.0f} s"
    assert ran.code >= 0, f"killed by signal {-ran.code}"
    assert "Traceback" not in ran.text, ran.text[-3000:]
    assert secret not in ran.text, "the XXE target's contents leaked into the output"
    assert ran.code == case.exit_code, f"exit code {ran.code}, expected {case.exit_code}:\n{ran.text[-2000:]}"
    if case.error is not None:
        assert re.search(case.match, error_text, re.S), f"output does not match {case.match!r}:\n{error_text}"


@pytest.mark.parametrize("case", CLI_CASES, ids=_ids)
def test_cli_run(case: Case, corpus: Corpus, subprocess_results):
    """``ir-run MODEL [--input FEEDS] --output OUT``: exit code, one message, no traceback, no leak, no output
    file unless it succeeded (and then the right values)."""
    done = corpus.files[case.name]
    output = _output_path(done)
    ran = subprocess_results.get(("run", case.name)) or in_process_cli(_run_args(done, output))
    _check_cli(case, ran, corpus.secret, error_text=ran.stderr)
    expected_files = {done.model.with_suffix(".xml").name, done.model.with_suffix(".bin").name, output.name}
    if done.inputs is not None:
        expected_files.add(done.inputs.name)
    leftovers = sorted(p.name for p in output.parent.iterdir() if p.name not in expected_files)
    assert not leftovers, f"files left behind: {leftovers}"
    if case.error is not None or case.feeds is None:
        assert not output.exists(), "a failed run wrote its output file"
    elif case.expected:
        with np.load(output) as stored:
            _check_outputs(case, dict(stored))


@pytest.mark.parametrize("case", VALIDATE_CASES, ids=_ids)
def test_cli_validate(case: Case, corpus: Corpus, subprocess_results):
    """``ir-run validate MODEL`` reports the same problem with the same exit code."""
    done = corpus.files[case.name]
    ran = subprocess_results.get(("validate", case.name)) or in_process_cli(["validate", str(done.model)])
    _check_cli(case, ran, corpus.secret, error_text=ran.text)


def test_corpus_covers_the_issue():
    """The corpus keeps every category of hostile input (DTD, syntax, files, dims, types, OpenVINO crashers,
    resources...), and every error case names what to look for."""
    categories = {case.category for case in CASES}
    assert {"dtd", "syntax", "files", "const", "dims", "graph", "types", "attributes", "select", "gather",
            "openvino_crashers", "resource"} <= categories
    assert len(CASES) >= 100
    assert all(case.match for case in CASES if case.error is not None)
    names = {case.name for case in CASES}
    assert {"xxe_attribute", "billion_laughs", "bin_passed_as_model", "bin_missing", "cycle", "two_producers",
            "constant_type_axis", "gather1_non_constant_axis", "zero_sized_data_gather", "terabyte_select"} <= names


def test_fold_bomb_is_refused_before_allocating():
    """An axis computed from Consts through a 9 MB [3000, 3000] Select, under a 1 MiB ceiling: refused (the axis
    is not a Const behind Converts, or the fold is above the limit) without allocating the Select (numpy
    reports its allocations to tracemalloc)."""
    xml, weights = fold_bomb(3000)
    tracemalloc.start()
    try:
        with pytest.raises((ir_runner.InferenceError, ir_runner.ResourceLimitError)):
            ir_runner.load(xml, weights, memory_limit=1 << 20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, f"loading allocated {peak / 2**20:.1f} MiB before refusing"


def test_memory_limit_is_configurable():
    """The ceiling refuses a model above it, names both sizes, and lets the same model load when raised."""
    xml, weights = base_model()
    with pytest.raises(ir_runner.ResourceLimitError, match=r"94 bytes.*64 bytes"):
        ir_runner.load(xml, weights, memory_limit=64)
    model = ir_runner.load(xml, weights, memory_limit=94)
    assert model.run(FEEDS)["out"].shape == (2, 2)
    assert ir_runner.load(xml, weights, memory_limit=None).run(FEEDS)["out"].shape == (2, 2)


def test_bombs_neither_hang_nor_exhaust_memory(subprocess_results):
    """Entity-expansion bombs are refused before any expansion: each subprocess, limited to 3 GiB of
    address space, answers within the hang guard and exits cleanly."""
    for name in ("billion_laughs", "quadratic_blowup", "billion_laughs_utf16le", "quadratic_blowup_utf16le"):
        ran = subprocess_results[("api", name)]
        assert not ran.timed_out, f"{name} hung"
        assert ran.code == 0, ran.stderr[-2000:]


# --- the CLI's output file ----------------------------------------------------------------------------


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    xml, weights = base_model()
    (tmp_path / "model.xml").write_bytes(xml)
    (tmp_path / "model.bin").write_bytes(weights)
    np.savez(tmp_path / "feeds.npz", **FEEDS)
    return tmp_path


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file()}


@pytest.mark.parametrize("target", ["feeds.npz", "model.xml", "model.bin"])
def test_cli_never_overwrites_an_input(model_dir: Path, target: str):
    """``--output`` naming one of the run's own input files is refused before anything is written."""
    before = _snapshot(model_dir)
    ran = in_process_cli([str(model_dir / "model.xml"), "--input", str(model_dir / "feeds.npz"),
                          "--output", str(model_dir / target)])
    assert "Traceback" not in ran.text, ran.text[-3000:]
    assert ran.code not in (0, 70), f"exit {ran.code}: {ran.text[-2000:]}"
    assert target in ran.stderr, ran.stderr
    assert _snapshot(model_dir) == before, "an input file was overwritten (or a file was left behind)"


def test_cli_failed_run_keeps_the_existing_output(model_dir: Path):
    """A run that fails (bad input) leaves an existing output file exactly as it was."""
    output = model_dir / "out.npz"
    output.write_bytes(b"previous results")
    np.savez(model_dir / "bad.npz", **{**FEEDS, "then": np.zeros((3, 2), np.float32)})
    before = _snapshot(model_dir)
    ran = in_process_cli([str(model_dir / "model.xml"), "--input", str(model_dir / "bad.npz"),
                          "--output", str(output)])
    assert ran.code == 4 and "Traceback" not in ran.text, ran.text[-2000:]
    assert _snapshot(model_dir) == before


def test_cli_output_into_a_missing_folder(model_dir: Path):
    """An output path whose folder does not exist: one clear message naming it, no traceback."""
    output = model_dir / "no" / "such" / "out.npz"
    ran = in_process_cli([str(model_dir / "model.xml"), "--input", str(model_dir / "feeds.npz"),
                          "--output", str(output)])
    assert "Traceback" not in ran.text, ran.text[-3000:]
    assert ran.code not in (0, 70), ran.text
    assert "no/such" in ran.stderr, ran.stderr


def test_cli_interrupted_write_leaves_no_half_file(model_dir: Path):
    """Writing fails half-way (file size limit: EFBIG): no partial output, no temporary file, the old output
    intact, a clean message."""
    output = model_dir / "out.npz"
    output.write_bytes(b"previous results")
    big = {"cond": np.ones((2, 3), bool), "then": np.ones((2, 3), np.float32), "else": np.ones((2, 3), np.float32)}
    np.savez(model_dir / "feeds.npz", **big)
    before = _snapshot(model_dir)
    ran = subprocess_run([str(model_dir / "model.xml"), "--input", str(model_dir / "feeds.npz"), "--output",
                          str(output)], file_size=200)
    assert "Traceback" not in ran.text, ran.text[-3000:]
    assert ran.code not in (0, 70), ran.text
    assert _snapshot(model_dir) == before, "a partial or temporary file was left, or the old output changed"


def test_cli_success_writes_the_complete_output(model_dir: Path):
    output = model_dir / "out.npz"
    ran = subprocess_run([str(model_dir / "model.xml"), "--input", str(model_dir / "feeds.npz"), "--output",
                          str(output)])
    assert ran.code == 0, ran.text
    with np.load(output) as stored:
        assert stored["out"].tobytes() == np.array([[2, 0], [-5, -3]], np.float32).tobytes()
    assert sorted(p.name for p in model_dir.iterdir()) == ["feeds.npz", "model.bin", "model.xml", "out.npz"]
