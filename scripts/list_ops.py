"""Write docs/operations.md: every operation version ir-run implements, from the registry's declarations.

    python scripts/list_ops.py            # rewrite docs/operations.md
    python scripts/list_ops.py --check    # exit 1 when docs/operations.md is out of date (the tests run this)
"""

from __future__ import annotations

import sys
from pathlib import Path

from ir_runner.ops.registry import supported_ops

DOC = Path(__file__).resolve().parent.parent / "docs" / "operations.md"


def render() -> str:
    ops = supported_ops()
    families: dict[str, list] = {}
    for op in ops:
        families.setdefault(op.origin or "", []).append(op)
    lines = [
        "# Supported operations",
        "",
        "Generated from the operations' declarations by `python scripts/list_ops.py`; do not edit by hand.",
        f"ir-run implements {len({op.type for op in ops})} operation types in {len(ops)} versions.",
        "**exact**: bit for bit against OpenVINO's reference; **bounded**: within the bound stated in the",
        "kernel's docstring and in [semantics.md](semantics.md).",
        "",
    ]
    for origin in sorted(families):
        module = origin.rpartition("ir_runner.ops.")[2].rstrip(")") or origin
        lines += [f"## `ir_runner/ops/{module.replace('.', '/')}.py`", "", "| operation | opsets | inputs | results |",
                  "|---|---|---|---|"]
        for op in families[origin]:
            inputs = ", ".join(op.input_names[:6]) + (", ..." if len(op.input_names) > 6 else "")
            lines.append(f"| {op.label} | {op.opsets} | {inputs or '-'} | {'exact' if op.exact else 'bounded'} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not DOC.exists() or DOC.read_text() != text:
            print(f"{DOC} is out of date: run python scripts/list_ops.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text)
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
