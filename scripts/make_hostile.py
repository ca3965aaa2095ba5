"""Write the hostile corpus (tests/hostile) to a folder, with a manifest; optionally run it through the CLI.

    python -m scripts.make_hostile OUT            # OUT/<case>/<case>.xml|.bin|.inputs.npz + OUT/manifest.json
    python -m scripts.make_hostile OUT --check    # also run every case: ir-run in a subprocess (3 GiB, 10 s)

The manifest lists, per case: category, model path, inputs path, expected error class, exit code, the regex
its message must match, and whether it needs load options the CLI does not have (``cli: false``).
``OUT/secret.txt`` is the file the XXE cases point at; its marker must never appear in any output.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import uuid
from pathlib import Path

from tests.hostile import CASES, Case, Materialized, materialize  # noqa: E402
from tests.hostile.procs import subprocess_run  # noqa: E402


def write_corpus(out: Path) -> tuple[str, list[Materialized]]:
    """Materialize every case under ``out`` and write ``manifest.json``; return the secret marker and cases."""
    out.mkdir(parents=True, exist_ok=True)
    marker = f"IRRUN-SECRET-{uuid.uuid4().hex}"
    secret = out / "secret.txt"
    secret.write_text(marker + "\n")
    done = [materialize(case, out / case.name, secret) for case in CASES]
    manifest = [
        {
            "name": d.case.name,
            "category": d.case.category,
            "model": str(d.model.relative_to(out)),
            "inputs": str(d.inputs.relative_to(out)) if d.inputs else None,
            "error": d.case.error.__name__ if d.case.error else None,
            "exit_code": d.case.exit_code,
            "stage": d.case.stage,
            "match": d.case.match,
            "memory_limit": d.case.memory_limit,
            "strict": d.case.strict,
            "cli": d.case.cli,
            "notes": d.case.notes,
        }
        for d in done
    ]
    (out / "manifest.json").write_text(json.dumps({"secret_marker": marker, "cases": manifest}, indent=1))
    return marker, done


def check(case: Case, done: Materialized, marker: str) -> str | None:
    """Run one case through ``python -m ir_runner``; the problem found, or None."""
    args = [str(done.model)] + (["--input", str(done.inputs)] if done.inputs else [])
    ran = subprocess_run(args)
    problems = []
    if ran.timed_out:
        problems.append("hung")
    elif ran.code < 0:
        problems.append(f"killed by signal {-ran.code}")
    if "Traceback" in ran.text:
        problems.append("traceback")
    if marker in ran.text:
        problems.append("leaked the secret")
    if ran.code != case.exit_code:
        problems.append(f"exit {ran.code}, expected {case.exit_code}")
    if case.error is not None and not re.search(case.match, ran.stderr, re.S):
        problems.append(f"message does not match {case.match!r}")
    return "; ".join(problems) + f"\n    {ran.stderr.strip()[:300]}" if problems else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--check", action="store_true", help="run every case through the CLI and report")
    args = parser.parse_args()
    marker, done = write_corpus(args.out)
    print(f"{len(done)} cases written to {args.out}")
    if not args.check:
        return
    failures = 0
    for item in done:
        if not item.case.cli:
            continue
        problem = check(item.case, item, marker)
        failures += problem is not None
        print(f"{'FAIL' if problem else 'ok  '} {item.case.category:18} {item.case.name}" +
              (f": {problem}" if problem else ""))
    print(f"{failures} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
