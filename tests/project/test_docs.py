"""Docs that run as written: every console example of README.md and docs/ prints what it shows, from the
root of a copy of the repository; the files they need are committed and remade by a script that needs no
tests/; every link in the Markdown points inside the repository (or to the web)."""

import ast
import re
import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import ROOT
from tests.project.docs_examples import DOCUMENTS, check, examples

WITH_EXAMPLES = [document for document in DOCUMENTS if examples(document)]


def test_the_readme_and_the_cli_guide_have_console_examples():
    assert {"README.md", "docs/cli.md"} <= set(WITH_EXAMPLES)
    assert sum(len(examples(document)) for document in WITH_EXAMPLES) >= 40


@pytest.mark.parametrize("document", WITH_EXAMPLES)
def test_every_console_example_prints_what_the_document_shows(document):
    problems = check(document)
    assert not problems, "\n\n".join(problems)


def test_the_example_files_are_what_the_documented_script_makes(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_examples.py"), str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    made = sorted(p.name for p in tmp_path.iterdir())
    shipped = sorted(p.name for p in (ROOT / "examples").iterdir() if p.name in made)
    assert made == shipped == sorted(["cond.npy", "then.npy", "else.npy", "ref.npz", "idx64.npy", "idxf.npy",
                                      "picker.xml", "picker.bin", "edited.xml", "edited.bin"])
    for name in made:
        if name.endswith(".npz"):  # a zip archive: its members' times differ, its arrays must not
            with np.load(tmp_path / name) as new, np.load(ROOT / "examples" / name) as old:
                assert {k: new[k].tobytes() for k in new} == {k: old[k].tobytes() for k in old}
        else:
            assert (tmp_path / name).read_bytes() == (ROOT / "examples" / name).read_bytes(), name


def test_nothing_documented_imports_tests():
    tree = ast.parse((ROOT / "scripts" / "make_examples.py").read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {(node.module or "").split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "tests" not in imported
    for document in DOCUMENTS:
        text = (ROOT / document).read_text(encoding="utf-8")
        assert not re.search(r"^\s*(from|import) tests\b", text, re.M), document


def test_links_stay_inside_the_repository():
    for document in DOCUMENTS:
        text = (ROOT / document).read_text(encoding="utf-8")
        assert "/work/" not in text, document
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if target.startswith(("http://", "https://", "#")):
                continue
            assert not target.startswith(("/", "file:", "~")), (document, target)
            path = (ROOT / document).parent / target.split("#")[0]
            assert path.resolve().is_relative_to(ROOT) and path.exists(), (document, target)
