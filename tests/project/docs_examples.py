"""The console examples of README.md and docs/*.md: each ```console block holds ``$ command`` lines, each
followed by the output it printed (stdout, then stderr); the paragraph after a block may say
``Exit code N.``. They are run in document order, from the root of a copy of the repository, and compared
with what they print, allowing for timings (bench, --trace) and for the repository's absolute path (shown as
/path/to/ir-run).

``python -m tests.project.docs_examples [--update]`` runs them all and reports the differences; with
``--update`` it writes the actual outputs into the documents instead (a developer's tool).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))]
SHOWN_ROOT = "/path/to/ir-run"
_BLOCK = re.compile(r"^```console\n(.*?)^```\n", re.S | re.M)
_EXIT = re.compile(r"\A\s*Exit code (\d+)")
_DECIMAL = re.compile(r"\d+\.\d+")


@dataclass
class Example:
    document: str
    command: str
    expected: str
    exit_code: int | None
    span: tuple[int, int]  # where ``expected`` sits in the document's text


def examples(document: str) -> list[Example]:
    text = (ROOT / document).read_text(encoding="utf-8")
    found = []
    for block in _BLOCK.finditer(text):
        exit_code = _EXIT.match(text, block.end())
        body_start = block.start(1)
        commands = list(re.finditer(r"^\$ (.*)\n", block.group(1), re.M))
        for index, command in enumerate(commands):
            start = body_start + command.end()
            end = body_start + (commands[index + 1].start() if index + 1 < len(commands) else len(block.group(1)))
            last = index + 1 == len(commands)
            found.append(Example(document, command.group(1), text[start:end],
                                 int(exit_code.group(1)) if exit_code and last else None, (start, end)))
    return found


def copy_checkout(dest: Path) -> None:
    """The repository's files (not .git, .venv, caches or build output) copied to ``dest``."""
    for path in ROOT.rglob("*"):
        relative = path.relative_to(ROOT)
        first = relative.parts[0]
        skipped = (first.startswith(".") and first != ".ci") or first in ("build", "dist") or first.endswith(
            ".egg-info") or "__pycache__" in relative.parts
        if path.is_file() and not skipped:
            (dest / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest / relative)


def run(example: Example, where: Path) -> tuple[str, int]:
    """What the example's command prints (stdout, then stderr) in ``where``, and its exit status."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("IR_RUN_", "_IR_RUN"))}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    done = subprocess.run(["bash", "-c", example.command], cwd=where, env=env, capture_output=True, text=True,
                          timeout=120)
    output = (done.stdout + done.stderr).replace(str(where), SHOWN_ROOT)
    return output, done.returncode


def normalise(example: Example, output: str) -> str:
    """Trailing blanks dropped; for timed commands every decimal number and the runs of blanks, and for bench
    the order of the lines too (its per-layer table is sorted by time)."""
    lines = [line.rstrip() for line in output.rstrip("\n").split("\n")]
    if re.search(r"\bbench\b|--trace", example.command):
        lines = [re.sub(r" +", " ", _DECIMAL.sub("<t>", line)) for line in lines]
    if re.search(r"\bbench\b", example.command):
        lines.sort()
    return "\n".join(lines)


def check(document: str, update: bool = False) -> list[str]:
    """Run every example of ``document`` in a fresh copy of the repository; the differences found (or, with
    ``update``, write the actual outputs into the document)."""
    problems = []
    found = examples(document)
    if not found:
        return problems
    with tempfile.TemporaryDirectory(prefix="ir_run_docs_") as folder:
        where = Path(folder) / "ir-run"
        copy_checkout(where)
        text = (ROOT / document).read_text(encoding="utf-8")
        replacements = []
        for example in found:
            output, status = run(example, where)
            if normalise(example, output) != normalise(example, example.expected):
                problems.append(f"{document}: $ {example.command}\n--- documented\n{example.expected.rstrip()}\n"
                                f"--- printed\n{output.rstrip()}")
                replacements.append((example.span, output if output.endswith("\n") or not output else output + "\n"))
            is_pipeline = "|" in example.command
            if example.exit_code is not None and not is_pipeline and status != example.exit_code:
                problems.append(f"{document}: $ {example.command}\nexit code {status}, documented {example.exit_code}")
        if update and replacements:
            for (start, end), new in sorted(replacements, reverse=True):
                text = text[:start] + new + text[end:]
            (ROOT / document).write_text(text, encoding="utf-8")
    return problems


def main(argv: list[str]) -> int:
    update = "--update" in argv
    problems = [problem for document in DOCUMENTS for problem in check(document, update)]
    print("\n\n".join(problems) if problems else "every console example prints what the documents show")
    return 1 if problems and not update else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
