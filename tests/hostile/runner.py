"""Run one model through the Python API and print the outcome as one JSON line.

``python -m tests.hostile.runner MODEL [--inputs NPZ] [--memory-limit BYTES] [--strict]``: the hostile
tests start it in a subprocess with time and memory limits for the cases that could exhaust memory or
block if the library regressed. An exception that is not an IRError escapes with its traceback.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

import ir_runner


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("model")
    parser.add_argument("--inputs")
    parser.add_argument("--memory-limit", type=int)
    parser.add_argument("--strict", action="store_true")
    args = parser.parse_args(argv)
    kwargs: dict = {"strict": args.strict}
    if args.memory_limit is not None:
        kwargs["memory_limit"] = args.memory_limit
    outcome: dict = {"stage": "load", "error": None, "exit_code": 0, "message": ""}
    try:
        model = ir_runner.load(args.model, **kwargs)
        if args.inputs:
            outcome["stage"] = "run"
            with np.load(args.inputs) as stored:
                model.run(dict(stored))
    except ir_runner.IRError as error:
        outcome.update(error=type(error).__name__, exit_code=error.exit_code, message=str(error))
    print(json.dumps(outcome))


if __name__ == "__main__":
    main()
