"""Every shape ir-run prints as a flag to paste is quoted: zsh reads an unquoted ``x=[2,4]`` as a glob and
stops with "no matches found"."""

import re
import shlex
import shutil
import subprocess

import pytest

from tests.cli.clikit import DYNAMIC, invoke

FLAG = re.compile(r"--(?:data-shape|shape|range|value) ('[^']*'|[^\s:,]+)")


def _printed_flags(text: str) -> list[str]:
    return [match.group(0) for match in FLAG.finditer(text)]


def _messages() -> list[str]:
    return [
        invoke(DYNAMIC, "--fill", "random").stderr,                                   # the --data-shape hint
        invoke("gen-inputs", DYNAMIC, "-o", "x.npz", "--data-shape", "cond=[11,4]").stderr,  # echo of a bad one
        invoke(DYNAMIC, "--fill", "random", "--shape", "cond=[3,5]", "--shape", "then=[3,5]").stderr,
        invoke(DYNAMIC, "--fill", "random", "--data-shape", "cond=[2,4]", "--data-shape", "then=[2,4]",
               "--data-shape", "indices=[1,2]", "--range", "indices=[0.5,2]").stderr,
    ]


def test_every_printed_shape_flag_is_quoted_for_the_shell():
    flags = [flag for text in _messages() for flag in _printed_flags(text)]
    assert len(flags) >= 6, flags
    for flag in flags:
        option, value = flag.split(" ", 1)
        assert value.startswith("'") and value.endswith("'"), flag
        assert shlex.split(flag)[1] == value[1:-1]


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_the_data_shape_hint_pastes_into_zsh(tmp_path):
    hint = invoke(DYNAMIC, "--fill", "random").stderr.split("hint: add ", 1)[1].split(" (or", 1)[0]
    done = subprocess.run(["zsh", "-c", f"print -rl -- {hint}"], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0 and "no matches found" not in done.stderr, done.stderr
    assert done.stdout.split() == ["--data-shape", "cond=[1,4]", "--data-shape", "then=[1,4]", "--data-shape",
                                   "indices=[1,1]"]
