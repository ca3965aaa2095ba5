"""A fast process start: ``ir-run MODEL --input NPZ`` imports only what that path needs.

Each check runs a fresh interpreter (this one has imported everything already) and looks at
``sys.modules`` after the command has printed its result. No timings: only which modules were imported.
"""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest

from ir_runner.types import ELEMENT_TYPES, _et, element_type_of
from tests.cli.clikit import SELECT_GATHER

_RUN = """
import sys
from ir_runner.cli import main
sys.argv = ["ir-run", *sys.argv[1:]]
try:
    main()
except SystemExit as done:
    assert not done.code, done.code
print("MODULES " + " ".join(sorted(sys.modules)))
"""

# Imported only by the commands, options or file formats that need them, never by a plain run.
NOT_ON_RUN_PATH = [
    "concurrent.futures",  # parallel.py: the thread pool, for large inputs only
    "logging",  # comes with concurrent.futures
    "hashlib",  # --save-run / replay
    "difflib",  # "did you mean" in error messages
    "json",  # --json, .json files, --value, --range, --save-run
    "glob",  # shell completion of file names
    "click.shell_completion",
    "ir_runner.report",  # validate / inspect
    "ir_runner.cli.generate",  # random / zeros / ones inputs
    "ir_runner.cli.bench",
    "ir_runner.cli.crosscheck",
    "ir_runner.divergence",  # crosscheck
    "ir_runner.cli.precision",
    "ir_runner.headroom",  # precision
    "ir_runner.sensitivity",  # precision --compression
    "ir_runner.device",
    "openvino",  # optional: only crosscheck imports it
    *(f"ir_runner.cli.cmd_{name}" for name in ("bench", "compare", "completion", "crosscheck", "gen_inputs",
                                               "inspect", "precision", "replay", "validate")),
    "ml_dtypes",
    "regex",  # the patterns of tokenizer IRs
    "dataclasses",  # creating a dataclass costs ~0.5-1 ms at import: the run path uses slots records
]


def _modules_after(*args: object) -> tuple[set[str], str]:
    done = subprocess.run([sys.executable, "-c", _RUN, *map(str, args)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    output, _, modules = done.stdout.rpartition("MODULES ")
    return set(modules.split()), output


@pytest.fixture(scope="module")
def run_path() -> set[str]:
    modules, output = _modules_after(SELECT_GATHER, "--input", SELECT_GATHER.with_suffix(".inputs.npz"))
    assert "out: f32[2,2]" in output and "[60. 40.]" in output
    return modules


def test_the_run_path_loads_only_the_run_command(run_path):
    assert {"ir_runner.cli.cmd_run", "ir_runner.cli.run", "ir_runner.cli.inputs", "numpy", "lxml.etree"} <= run_path


@pytest.mark.parametrize("module", NOT_ON_RUN_PATH)
def test_a_plain_run_does_not_import(run_path, module):
    assert module not in run_path


def test_other_paths_import_what_they_need():
    modules, output = _modules_after(SELECT_GATHER, "--fill", "random", "--json")
    assert output.lstrip().startswith("{")
    assert {"ir_runner.cli.generate", "json"} <= modules
    assert "ir_runner.cli.cmd_bench" not in modules
    modules, output = _modules_after("--help")
    assert "gen-inputs" in output
    assert {f"ir_runner.cli.cmd_{name}" for name in ("run", "bench", "gen_inputs", "validate")} <= modules
    assert "numpy" not in modules
    modules, output = _modules_after("crosscheck", "--help")
    assert "--precision" in output and "openvino" not in modules and "numpy" not in modules


_NAMED_TUPLES = """
import sys, typing
created = []
original = typing.NamedTupleMeta.__new__
def recording(cls, name, bases, namespace, **kwargs):
    if namespace.get("__module__", "").startswith("ir_runner"):
        created.append(name)
    return original(cls, name, bases, namespace, **kwargs)
typing.NamedTupleMeta.__new__ = recording
from ir_runner.cli import main
sys.argv = ["ir-run", *sys.argv[1:]]
try:
    main()
except SystemExit as done:
    assert not done.code, done.code
print("NAMEDTUPLES " + " ".join(sorted(created)))
"""


def test_the_run_path_creates_named_tuples_only_for_the_public_value_types():
    """A ``typing.NamedTuple`` compiles each string annotation at import (~0.2 ms a class): records are
    ``__slots__`` classes (``ir_runner.ir.records.Record``); only value types users compare stay tuples."""
    args = [SELECT_GATHER, "--input", SELECT_GATHER.with_suffix(".inputs.npz")]
    done = subprocess.run([sys.executable, "-c", _NAMED_TUPLES, *map(str, args)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    created = done.stdout.rpartition("NAMEDTUPLES ")[2].split()
    assert set(created) == {"Dim", "LayerRef", "TensorInfo", "TensorSpec"}


_TYPES = """
import sys
import numpy as np
from ir_runner.types import ELEMENT_TYPES, element_type_of
assert element_type_of(np.float32).name == "f32" and ELEMENT_TYPES["i4"].bits == 4
assert "ml_dtypes" not in sys.modules
bf16 = ELEMENT_TYPES["bf16"].dtype
assert "ml_dtypes" in sys.modules
import ml_dtypes
assert bf16 == np.dtype(ml_dtypes.bfloat16) and element_type_of(bf16).name == "bf16"
print("ok")
"""


def test_ml_dtypes_is_imported_on_first_use_of_its_types():
    done = subprocess.run([sys.executable, "-c", _TYPES], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_a_deferred_dtype_behaves_like_a_field():
    import ml_dtypes

    et = _et("bf16", "BF16", "ml_dtypes.bfloat16", 16, "float")
    assert "dtype" not in vars(et)
    copy = pickle.loads(pickle.dumps(et))  # before the dtype is resolved
    assert et.dtype == copy.dtype == np.dtype(ml_dtypes.bfloat16)
    assert "dtype=dtype(bfloat16)" in repr(et) and et == ELEMENT_TYPES["bf16"]
    with pytest.raises(AttributeError):
        _ = et.size
    for name, dtype in [("f8e4m3", ml_dtypes.float8_e4m3fn), ("f8e5m2", ml_dtypes.float8_e5m2),
                        ("i4", ml_dtypes.int4), ("u4", ml_dtypes.uint4), ("bf16", ml_dtypes.bfloat16)]:
        assert ELEMENT_TYPES[name].dtype == np.dtype(dtype) and element_type_of(dtype) is ELEMENT_TYPES[name]


@pytest.mark.parametrize(("typed", "meant"), [("ru", "run"), ("gen_inputs", "gen-inputs"), ("valdate", "validate")])
def test_a_mistyped_command_is_still_matched_against_every_command(typed, meant):
    """Commands are loaded on use, so click alone would suggest only from those loaded so far (none in a
    fresh process, hence a subprocess here)."""
    done = subprocess.run([sys.executable, "-m", "ir_runner", typed], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert f"No such command '{typed}'. Did you mean '{meant}'?" in done.stderr


def test_a_json_usage_error_does_not_import_numpy():
    script = ("import sys, atexit\n"
              "atexit.register(lambda: print('NUMPY', 'numpy' in sys.modules))\n"
              "from ir_runner.cli import main\n"
              "sys.argv = ['ir-run', '--json', 'nosuchcommand']\n"
              "main()\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and '"type": "UsageError"' in done.stdout
    assert "NUMPY False" in done.stdout
