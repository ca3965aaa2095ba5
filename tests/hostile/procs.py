"""Running ir-run in a real subprocess (with time and memory limits) or in this process, with one result type."""

from __future__ import annotations

import io
import os
import resource
import subprocess
import sys
import time
import traceback
from collections.abc import Sequence
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 30.0  # a hang guard, not a timing claim: generous for 4 subprocesses on a busy 2-core machine
ADDRESS_SPACE = 3 << 30


@dataclass(frozen=True)
class Ran:
    """What one ir-run invocation did: exit code (negative: killed by that signal), output, duration."""

    code: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False

    @property
    def text(self) -> str:
        return self.stdout + self.stderr


def _limits(file_size: int | None) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    resource.setrlimit(resource.RLIMIT_CPU, (int(TIMEOUT) + 5, int(TIMEOUT) + 5))
    if file_size is not None:
        import signal

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writing past the limit fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))


def subprocess_run(args: Sequence[str], *, module: str = "ir_runner", file_size: int | None = None) -> Ran:
    """``python -m MODULE ARGS`` from the repository root, limited to 3 GiB of address space and 10 s."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    start = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", module, *args], capture_output=True, timeout=TIMEOUT, cwd=ROOT, env=env,
            preexec_fn=lambda: _limits(file_size),
        )
    except subprocess.TimeoutExpired as expired:
        stderr = (expired.stderr or b"").decode(errors="replace")
        return Ran(-9, "", stderr + f"\n[killed: no answer within {TIMEOUT:.0f} s]", TIMEOUT, timed_out=True)
    return Ran(proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace"),
               time.monotonic() - start)


def in_process_cli(args: Sequence[str]) -> Ran:
    """The ``ir-run`` entry point called in this process; an escaping exception is reported as a traceback."""
    from ir_runner.cli import main

    out, err, saved_argv = io.StringIO(), io.StringIO(), sys.argv
    code = 0
    start = time.monotonic()
    sys.argv = ["ir-run", *args]
    try:
        with redirect_stdout(out), redirect_stderr(err):
            main()
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
    except Exception:  # noqa: BLE001  (what a user would see as a traceback)
        err.write(traceback.format_exc())
        code = 1
    finally:
        sys.argv = saved_argv
    return Ran(code, out.getvalue(), err.getvalue(), time.monotonic() - start)
