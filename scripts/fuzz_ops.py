"""Campaigns of the differential fuzzer of operations (tests/helpers/fuzz_ops.py says what a case is and how
it is checked): every (operation, seed) runs in a worker process, so that a reference crashing the process
only skips that case.

    python -m scripts.fuzz_ops                   # every op, 40 seeds each
    nice -n 10 python -m scripts.fuzz_ops --seeds 500 --jobs 2
    python -m scripts.fuzz_ops --ops TopK,Pad --seeds 200 --first 1000
    python -m scripts.fuzz_ops --ops TopK --seed 1234 --show     # one case: the graph, feeds and the failure

The summary lists per op: cases, passed, failed, skipped, and one reproducer line (``--ops OP --seed N``)
per failure. ``tests/ops/test_fuzz_ops.py`` runs a fixed slice of it.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

from tests.helpers.fuzz_ops import GENERATORS, run_case  # noqa: E402


def worker(names: list[str], seeds: range) -> None:
    """Runs cases, printing one JSON line when each starts and ends (the parent sees a crash between them)."""
    import warnings

    warnings.simplefilter("ignore")
    np.seterr(all="ignore")
    with tempfile.TemporaryDirectory() as tmp:
        for seed in seeds:
            for name in names:
                print(json.dumps({"start": name, "seed": seed}), flush=True)
                status, detail = run_case(name, seed, Path(tmp))
                print(json.dumps({"op": name, "seed": seed, "status": status, "detail": detail}), flush=True)


def run_chunk(ops: list[str], seeds: range, results: dict, lock: threading.Lock) -> list:
    """Runs ``ops`` x ``seeds`` in one worker process, adding to ``results``; after a crash, the chunks still to
    run (the crashed case is skipped)."""
    cmd = [sys.executable, __file__, "--worker", ",".join(ops), "--first", str(seeds.start), "--seeds", str(len(seeds))]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    last = None
    for line in proc.stdout:
        record = json.loads(line)
        if "start" in record:
            last = record
            continue
        with lock:
            results[record["op"]].append((record["seed"], record["status"], record["detail"]))
        last = None
    proc.wait()
    if last is None:
        return []
    with lock:
        results[last["start"]].append((last["seed"], "skip", f"reference crashed the process ({proc.returncode})"))
    rest, seed = ops[ops.index(last["start"]) + 1:], last["seed"]
    return ([(rest, range(seed, seed + 1))] if rest else []) + \
        ([(ops, range(seed + 1, seeds.stop))] if seed + 1 < seeds.stop else [])


def campaign(names: list[str], seeds: range, jobs: int) -> dict:
    """Runs every (op, seed) in ``jobs`` worker processes at once (one reader thread each, so that no worker
    waits on a full pipe), restarted after a crash; returns per op the results."""
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    results: dict[str, list] = {n: [] for n in names}
    lock = threading.Lock()
    with ThreadPoolExecutor(jobs) as pool:
        running = {pool.submit(run_chunk, chunk, seeds, results, lock)
                   for chunk in (names[i::jobs] for i in range(jobs)) if chunk}
        while running:
            done, running = wait(running, return_when=FIRST_COMPLETED)
            running |= {pool.submit(run_chunk, ops, rest, results, lock) for f in done for ops, rest in f.result()}
    return results


def summary(results: dict) -> int:
    failures = 0
    print(f"{'op':26} {'cases':>6} {'passed':>6} {'failed':>6} {'skipped':>7} {'cpu wrong':>9}")
    for name, rows in results.items():
        counts = {s: sum(1 for r in rows if r[1] == s) for s in ("pass", "fail", "skip", "oracle")}
        print(f"{name:26} {len(rows):6} {counts['pass']:6} {counts['fail']:6} {counts['skip']:7} {counts['oracle']:9}")
        failures += counts["fail"]
    for name, rows in results.items():
        for seed, status, detail in rows:
            if status in ("fail", "oracle"):
                print(f"{'FAIL' if status == 'fail' else 'CPU WRONG'} --ops {name} --seed {seed}: {detail}")
    total = sum(len(r) for r in results.values())
    print(f"{total} cases, {failures} failed")
    return failures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", help="comma-separated generator names (default: all)")
    parser.add_argument("--seeds", type=int, default=40, help="seeds per op")
    parser.add_argument("--first", type=int, default=0, help="first seed")
    parser.add_argument("--seed", type=int, help="run this one seed in this process, showing the case")
    parser.add_argument("--show", action="store_true", help="print the IR and feeds of --seed")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--skips", action="store_true", help="also list why cases were skipped")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker.split(","), range(args.first, args.first + args.seeds))
        return 0
    names = args.ops.split(",") if args.ops else list(GENERATORS)
    unknown = [n for n in names if n not in GENERATORS]
    if unknown:
        parser.error(f"unknown ops {unknown}; known: {', '.join(GENERATORS)}")
    if args.seed is not None:
        with tempfile.TemporaryDirectory() as tmp:
            for name in names:
                print(name, args.seed, *run_case(name, args.seed, Path(tmp), show=args.show))
        return 0
    results = campaign(names, range(args.first, args.first + args.seeds), args.jobs)
    if args.skips:
        reasons: dict = {}
        for name, rows in results.items():
            for _, status, detail in rows:
                if status == "skip":
                    key = (name, re.sub(r"'[^']*'|\(\[[^)]*\)", "…", detail)[:90])  # (node names, shapes)
                    reasons[key] = reasons.get(key, 0) + 1
        for (name, why), count in sorted(reasons.items()):
            print(f"skip {name:24} {count:5}  {why}")
    return 1 if summary(results) else 0


if __name__ == "__main__":
    sys.exit(main())
