"""``ir-run replay``: re-run a run recorded with ``--save-run`` (same model, inputs, seed and options) and check
the files' hashes; the run itself is the ``run`` command's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from ..errors import InputError
from .cmd_run import run as run_cmd
from .files import file_sha256
from .run import REPLAY_PARAMETERS, RUN_SCHEMA

_REPLAY_HINT = ("replay reads the JSON file that --save-run writes: record a run with"
                " `ir-run MODEL.xml --input ... --save-run run.json`, then `ir-run replay run.json`")


def replay_command(path: str) -> None:
    """Re-run a run recorded with ``--save-run``: same model, inputs, seed and options; check the hashes."""
    from .files import read_json

    try:
        record = read_json(path)
    except InputError as error:
        if not Path(path).is_file():
            raise
        raise InputError(f"{error.detail}, so it is not a run record", hint=_REPLAY_HINT) from None
    problem = _record_problem(record)
    if problem:
        raise InputError(f"'{path}' is not a run saved by ir-run --save-run (schema {RUN_SCHEMA}): {problem}",
                         hint=_REPLAY_HINT)
    for key in ("xml", "weights"):
        entry = record["model"].get(key)
        if entry and Path(entry["path"]).is_file() and file_sha256(entry["path"]) != entry["sha256"]:
            raise InputError(f"'{entry['path']}' changed since the run was recorded (sha256 differs)",
                             hint="replay needs the exact files of the recording")
    args, ctx = record["args"], click.get_current_context()
    # first parsed without callbacks, so that no option acts (--help, --json) before the args are checked
    probe = run_cmd.make_context("run", list(args), parent=ctx, resilient_parsing=True)
    refused = [p.name for p in run_cmd.get_params(probe) if p.name not in REPLAY_PARAMETERS
               and probe.get_parameter_source(p.name) == ParameterSource.COMMANDLINE]
    if refused or args[0] != record["model"]["xml"]["path"]:
        what = f"options ir-run never records ({', '.join(refused)})" if refused else "another model than its own"
        raise InputError(f"'{path}' is not a run saved by ir-run --save-run: its args name {what}",
                         hint="replay refuses records that would write files or run something else")
    try:
        sub = run_cmd.make_context("run", list(args), parent=ctx)
    except click.ClickException as exc:
        raise InputError(f"'{path}' is not a run saved by ir-run --save-run: its args: {exc.format_message()}") \
            from None
    sub.meta["ir_run.replay"] = record
    with sub:
        run_cmd.invoke(sub)



def _record_problem(record: Any) -> str | None:
    """What is wrong with the shape of a run record (None when it has every field replay reads)."""
    if not isinstance(record, dict) or record.get("schema") != RUN_SCHEMA:
        return "it has another schema"
    model = record.get("model")
    if not isinstance(model, dict) or not _hashed(model.get("xml")) or not (
        model.get("weights") is None or _hashed(model["weights"])
    ):
        return "its 'model' lacks the xml (and weights) path and sha256"
    for key in ("inputs", "outputs"):
        entries = record.get(key)
        if not isinstance(entries, list) or not all(_hashed(e, "name") for e in entries):
            return f"its '{key}' is not a list of name and sha256"
    args = record.get("args")
    if not isinstance(args, list) or not args or not all(isinstance(a, str) for a in args):
        return "its 'args' is not a list of strings"
    return None


def _hashed(entry: Any, key: str = "path") -> bool:
    return isinstance(entry, dict) and isinstance(entry.get(key), str) and isinstance(entry.get("sha256"), str)
