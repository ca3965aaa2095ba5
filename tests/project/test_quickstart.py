"""The quick start works as pasted, also on a Python that is externally managed (PEP 668), and CI runs its
second command and nothing else."""

import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.project.quickstart import quickstart_commands

VENV_FIRST = "python3 -m venv .venv && . .venv/bin/activate && "


def test_two_commands_each_make_and_activate_a_venv_before_pip():
    commands = quickstart_commands()
    assert len(commands) == 2
    for command in commands:
        assert command.startswith(VENV_FIRST), command
        assert "pip install" in command


def test_ci_runs_exactly_the_second_command():
    printed = subprocess.run([str(ROOT / ".ci" / "run"), "--print"], capture_output=True, text=True, check=True)
    assert printed.stdout.rstrip("\n") == quickstart_commands()[1]
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install" not in script and "venv" not in script.split("\n", 3)[3]


def _externally_managed_python() -> Path | None:
    """A python3 that refuses a bare `pip install` (its stdlib holds EXTERNALLY-MANAGED), or None."""
    for candidate in ("/usr/bin/python3", shutil.which("python3")):
        if not candidate or not Path(candidate).exists():
            continue
        stdlib = subprocess.run([candidate, "-c", "import sysconfig; print(sysconfig.get_path('stdlib'))"],
                                capture_output=True, text=True)
        if stdlib.returncode == 0 and (Path(stdlib.stdout.strip()) / "EXTERNALLY-MANAGED").exists():
            return Path(candidate)
    return None


def _copy_checkout(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, files):
        source = ROOT / os.fsdecode(name)
        if source.is_file():
            (dest / os.fsdecode(name)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / os.fsdecode(name))


def test_first_command_works_as_pasted_on_an_externally_managed_python(tmp_path: Path):
    python = _externally_managed_python()
    if python is None or sysconfig.get_path("stdlib") is None:
        pytest.skip("no externally managed (PEP 668) python3 on this machine")
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    checkout = tmp_path / "clone"
    _copy_checkout(checkout)
    shims = tmp_path / "bin"
    shims.mkdir()
    (shims / "python3").symlink_to(python)
    env = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = os.pathsep.join([str(shims), "/usr/bin", "/bin"])
    done = subprocess.run(["bash", "-c", quickstart_commands()[0]], cwd=checkout, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "out: f32[2,2]" in done.stdout
