"""Shell completion in real bash and zsh sessions (tmux): the default command's model path, no space after
``NAME=`` or a folder, files after ``NAME=``. Skipped where the shell or tmux is missing; the protocol tests
at the end run everywhere."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.shells import Session, available
from tests.conftest import ROOT

MODEL = "ir-run models/select_gather.xml"
CASES = [
    ("ir-run mod", "ir-run models/"),                                     # the default command's model path
    ("ir-run models/select_g", "ir-run models/select_gather.xml "),
    ("ir-run vali", "ir-run validate "),
    (f"{MODEL} --input c", f"{MODEL} --input cond="),                       # no space after NAME=
    (f"{MODEL} --input cond=exa", f"{MODEL} --input cond=examples/"),      # files after NAME=
    (f"{MODEL} --input cond=examples/co", f"{MODEL} --input cond=examples/cond.npy "),
    (f"{MODEL} --input cond=r", f"{MODEL} --input cond=random "),
    (f"{MODEL} --data-shape t", f"{MODEL} --data-shape then="),
]


@pytest.fixture(scope="module", params=["bash", "zsh"])
def session(request, tmp_path_factory):
    if not available(request.param):
        pytest.skip(f"{request.param} or tmux is not installed")
    shell = Session(request.param, ROOT, tmp_path_factory.mktemp("home"))
    yield shell
    shell.close()


@pytest.mark.parametrize("typed, completed", CASES, ids=[typed for typed, _ in CASES])
def test_tab_completes_in_a_real_shell(session, typed, completed):
    assert session.complete(typed) == completed


def _bash_protocol(line: str, cwd: Path = ROOT) -> list[str]:
    env = {**os.environ, "_IR_RUN_COMPLETE": "bash_complete", "COMP_LINE": line, "COMP_POINT": str(len(line)),
           "COMP_WORDS": line, "COMP_CWORD": str(len(line.split()) - (0 if line.endswith(" ") else 1)),
           "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "ir_runner"], env=env, cwd=cwd, capture_output=True, text=True)
    return done.stdout.splitlines()


def test_the_default_commands_model_path_is_offered():
    replies = _bash_protocol("ir-run models/select_ga")
    assert "plain,models/select_gather.xml" in replies
    assert not any(reply.endswith((".bin", ".npz")) for reply in replies)
    assert "plain,models/" in _bash_protocol("ir-run mo")


def test_bash_gets_the_part_after_its_last_word_break():
    """bash replaces only the text after the '=': the reply holds the file, not NAME= again."""
    assert _bash_protocol(f"{MODEL} --input cond=examples/co") == ["plain,examples/cond.npy"]
    assert "plain,random" in _bash_protocol(f"{MODEL} --input cond=")


def test_the_scripts_keep_names_and_folders_open(tmp_path: Path):
    for shell, marker in (("bash", "compopt -o nospace"), ("zsh", "compadd -U -S ''")):
        script = subprocess.run([sys.executable, "-m", "ir_runner", "completion", shell], capture_output=True,
                                text=True, check=True).stdout
        assert marker in script


@pytest.mark.parametrize("command", ["validate", "inspect", "run", "bench", "crosscheck", ""])
def test_a_model_argument_offers_xml_files_first_then_folders_sorted(tmp_path: Path, command: str):
    for name in ("b.xml", "a.bin", "a.xml", "c.npz", "Z.XML", "notes.txt"):
        (tmp_path / name).write_text("")
    (tmp_path / "sub").mkdir()
    (tmp_path / "m.xml").mkdir()  # a folder, even with that name
    replies = _bash_protocol(f"ir-run {command} ".replace("  ", " "), tmp_path)
    models = [reply for reply in replies if not reply.startswith("plain,-")]
    assert models[-5:] == ["plain,Z.XML", "plain,a.xml", "plain,b.xml", "plain,m.xml/", "plain,sub/"], replies


def test_an_input_already_bound_is_not_offered_again():
    assert _bash_protocol(f"{MODEL} --input ")[:3] == ["plain,cond=", "plain,then=", "plain,else="]
    assert _bash_protocol(f"{MODEL} --input cond=random --input ")[:2] == ["plain,then=", "plain,else="]
    assert _bash_protocol(f"{MODEL} --value 'then=[[1,2,3],[4,5,6]]' -i cond=zeros -i ")[:1] == ["plain,else="]
    assert _bash_protocol(f"{MODEL} --shape then=2,3 --shape ") == ["plain,cond=", "plain,else="]
    assert _bash_protocol(f"{MODEL} --shape then=2,3 --data-shape ") == ["plain,cond=", "plain,then=", "plain,else="]
