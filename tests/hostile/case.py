"""One hostile-corpus case, how it is written to disk, and how its outcome is checked.

A case is a model (.xml bytes, .bin bytes or a special file), how it is handed to ir-run, and the
outcome it must have: ``error`` is the IRError subclass that must end it (None: it must load and,
given ``feeds``, run), ``match`` a regex its message must contain (it names the problem and the layer).
``@SECRET_URL@`` in the XML is replaced by the ``file://`` URL of a file whose unique content must
never appear in any output.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import ir_runner

SECRET_PLACEHOLDER = b"@SECRET_URL@"
SIZE = r"\d+(\.\d+)? (bytes|KiB|MiB|GiB|TiB|PiB)"


@dataclass(frozen=True)
class Case:
    """A model and the one outcome ir-run must give it."""

    name: str
    category: str
    xml: bytes
    bin: bytes | None = b""
    error: type[ir_runner.IRError] | None = None
    match: str = ""
    stage: str = "load"  # 'load': load() must fail; 'run': load() succeeds, run(feeds) fails
    feeds: dict[str, np.ndarray] | None = None
    expected: dict[str, np.ndarray] | None = None
    memory_limit: int | None = None  # None: the library's default
    strict: bool = False
    xml_kind: str = "file"  # 'file', 'missing', 'bin' (the .bin is passed as the model), 'dev_zero', 'fifo'
    bin_kind: str = "file"  # 'file', 'directory', 'fifo' (``bin=None``: no .bin at all)
    isolated: bool = False  # could exhaust memory or block if the library regressed: API check in a subprocess
    cli: bool = True  # expressible through the stable CLI (no memory_limit / strict option)
    notes: str = ""

    @property
    def exit_code(self) -> int:
        return 0 if self.error is None else self.error.exit_code

    def load_kwargs(self) -> dict:
        kwargs: dict = {"strict": self.strict}
        if self.memory_limit is not None:
            kwargs["memory_limit"] = self.memory_limit
        return kwargs


@dataclass
class Materialized:
    """Where a case was written: the path to give ir-run, and the feeds file (if any)."""

    case: Case
    model: Path
    inputs: Path | None = None
    extra: list[Path] = field(default_factory=list)


def materialize(case: Case, directory: Path, secret: Path) -> Materialized:
    """Write the case's files into ``directory`` (``secret`` is the file the XXE cases point at)."""
    directory.mkdir(parents=True, exist_ok=True)
    xml_path, bin_path = directory / f"{case.name}.xml", directory / f"{case.name}.bin"
    if case.xml_kind != "missing":
        xml = case.xml.replace(SECRET_PLACEHOLDER, secret.resolve().as_uri().encode())
        if case.xml_kind == "dev_zero":
            xml_path.symlink_to("/dev/zero")
        elif case.xml_kind == "fifo":
            os.mkfifo(xml_path)
        else:
            xml_path.write_bytes(xml)
    if case.bin is not None:
        if case.bin_kind == "directory":
            bin_path.mkdir()
        elif case.bin_kind == "fifo":
            os.mkfifo(bin_path)
        else:
            bin_path.write_bytes(case.bin)
    done = Materialized(case, bin_path if case.xml_kind == "bin" else xml_path)
    if case.feeds is not None:
        done.inputs = directory / f"{case.name}.inputs.npz"
        np.savez(done.inputs, **case.feeds)
    return done
