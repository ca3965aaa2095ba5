"""Text rendering of a validation report: one row per port, declared next to inferred."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .model import ValidationReport


def format_validation(report: ValidationReport) -> str:
    """A per-layer table of declared vs inferred specs, mismatches marked, then every error."""
    rows = [("layer", "type", "port", "declared", "inferred", "")]
    for info in report.layers:
        for check in info.checks:
            rows.append(
                (
                    f"{info.layer.name} (id {info.layer.id})",
                    info.ref.type_version,
                    f"{check.direction} {check.port.position}",
                    check.declared,
                    check.inferred,
                    "ok" if check.ok else "MISMATCH",
                )
            )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    if report.errors:
        lines.append("")
        lines.append(f"{len(report.errors)} problem(s) in {report.source}:")
        lines.extend(f"- {error}" for error in report.errors)
    else:
        lines.append(f"\n{report.source}: all ports agree with inference")
    return "\n".join(lines)
