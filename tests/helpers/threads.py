"""Run test code in several threads released together, failing on any thread's exception or a hang."""

from __future__ import annotations

import threading
from collections.abc import Callable


def in_threads(work: Callable[[int], object], count: int = 8) -> list:
    """Call ``work(i)`` in ``count`` threads released together; re-raise the first failure."""
    barrier = threading.Barrier(count)
    results: list = [None] * count
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = work(i)
        except BaseException as exc:  # noqa: BLE001  (reported in the main thread)
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a thread hung"
    if errors:
        raise errors[0]
    return results
