"""Campaigns of the structure-aware mutation fuzzer over real IRs (tests/helpers/fuzz_ir.py says what the
mutants are and what counts as a finding): mutants run by a worker process, killed past its time box, its
address space capped. Mutant ``i`` of campaign ``--seed s`` is the same on every run, so a finding is
reproduced by its index alone.

    nice -n 10 python -m scripts.fuzz_ir --seconds 600 --seed 1 --out fuzz-findings
    python -m scripts.fuzz_ir --seed 1 --index 1234 --show     # one mutant, in this process, with its traceback

``tests/test_fuzz.py`` runs a short seeded slice in the suite.
"""

from __future__ import annotations

import argparse
import json
import select
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.fuzz_ir import (  # noqa: E402
    KNOWN,
    Outcome,
    exercise,
    load_seeds,
    make_mutant,
    write_reproducer,
)

WORKER_ADDRESS_SPACE = 3 << 30  # a worker past this is a memory blow-up


# --- the campaign: mutants run by a worker process (killed past its time box, its address space capped) -----------

def _worker(campaign: int, seconds: float) -> None:
    """Read mutant indices on stdin, answer one JSON outcome per line."""
    import resource

    seeds = load_seeds()  # (first: building the nested Loops imports openvino, which reserves much address space)
    resource.setrlimit(resource.RLIMIT_AS, (WORKER_ADDRESS_SPACE, WORKER_ADDRESS_SPACE))
    for line in sys.stdin:
        index = int(line)
        outcome = exercise(make_mutant(seeds, campaign, index), seconds)
        print(json.dumps(outcome.__dict__), flush=True)


class Worker:
    def __init__(self, campaign: int, seconds: float) -> None:
        self.args = [sys.executable, __file__, "--worker", "--seed", str(campaign), "--box", str(seconds)]
        self.process = subprocess.Popen(self.args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        stderr=subprocess.DEVNULL)

    def ask(self, index: int, seconds: float) -> Outcome:
        try:
            self.process.stdin.write(f"{index}\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            return self._dead("the worker was gone")
        ready, _, _ = select.select([self.process.stdout], [], [], seconds)
        if not ready:
            self.stop()
            return Outcome("hang", f"no answer within {seconds:.0f} s (worker killed)", "?")
        line = self.process.stdout.readline()
        if not line:
            return self._dead(f"the worker died (exit {self.process.wait()})")
        return Outcome(**json.loads(line))

    def _dead(self, why: str) -> Outcome:
        self.stop()
        return Outcome("crash", why, "?")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def campaign_run(campaign: int, seconds: float, box: float, out: Path | None, first: int = 0) -> dict:
    """Mutants ``first, first+1, ...`` until ``seconds`` have passed; the findings' reproducers go to ``out``."""
    seeds = load_seeds()
    worker = Worker(campaign, box)
    counts: dict[str, int] = {}
    findings: dict[str, list[int]] = {}
    started, index = time.monotonic(), first
    try:
        while time.monotonic() - started < seconds:
            if worker.process.poll() is not None:
                worker = Worker(campaign, box)
            outcome = worker.ask(index, box + 30)  # (the first answer also waits for the worker's start)
            kind = "known" if outcome.known else outcome.kind
            counts[kind] = counts.get(kind, 0) + 1
            if outcome.finding:
                if outcome.kind in ("hang", "crash"):
                    worker = Worker(campaign, box)
                first_of_kind = outcome.signature not in findings
                findings.setdefault(outcome.signature, []).append(index)
                if out is not None and first_of_kind:
                    write_reproducer(out, campaign, index, make_mutant(seeds, campaign, index), outcome)
                if first_of_kind:
                    print(f"[{index}] {outcome.signature}\n    {outcome.detail[:300]}", flush=True)
            index += 1
    finally:
        worker.stop()
    return {"campaign": campaign, "mutants": index - first, "outcomes": counts,
            "findings": {signature: indices[:5] for signature, indices in findings.items()},
            "seconds": round(time.monotonic() - started, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60, help="how long to run the campaign")
    parser.add_argument("--seed", type=int, default=0, help="the campaign: mutant i is the same on every run")
    parser.add_argument("--first", type=int, default=0, help="the first mutant index")
    parser.add_argument("--box", type=float, default=10, help="seconds one mutant may take")
    parser.add_argument("--out", type=Path, help="a folder for the findings' reproducers")
    parser.add_argument("--index", type=int, help="run this one mutant in this process")
    parser.add_argument("--show", action="store_true", help="with --index: print the mutant and its traceback")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker(args.seed, args.box)
        return 0
    if args.index is not None:
        mutant = make_mutant(load_seeds(), args.seed, args.index)
        outcome = exercise(mutant, args.box)
        known = f" (known: {next(v for k, v in KNOWN.items() if outcome.signature.startswith(k))})" if (
            outcome.known) else ""
        print(f"seed model {mutant.seed}; mutations: {mutant.steps}\n{outcome.kind}{known}: {outcome.detail}")
        if args.show and outcome.trace:
            print(outcome.trace)
        if args.out is not None and outcome.finding:
            print(write_reproducer(args.out, args.seed, args.index, mutant, outcome))
        return 1 if outcome.finding else 0
    summary = campaign_run(args.seed, args.seconds, args.box, args.out, args.first)
    print(json.dumps(summary, indent=1))
    return 1 if summary["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())
