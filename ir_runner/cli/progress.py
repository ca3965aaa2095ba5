"""Progress of a chunked run on stderr, with rows per second: Dask's own progress bars (the local
schedulers' callback, distributed's text bar) drawn with the rows done next to the tasks done.

The rows are estimated from the share of tasks finished (every block has the same tasks); the last line,
at 100%, is exact.
"""

from __future__ import annotations

import contextlib
import sys

from dask.diagnostics import ProgressBar
from dask.utils import format_time


def rows_line(fraction: float, elapsed: float, rows: int, width: int = 40) -> str:
    """``[####    ] |  50% | 500/1,000 rows | 1.2s | 416 rows/s``."""
    done = int(rows * fraction)
    rate = f"{done / elapsed:,.0f} rows/s" if elapsed > 0 else "- rows/s"
    return (f"\r[{'#' * int(width * fraction):<{width}}] | {int(100 * fraction):3d}% | {done:,}/{rows:,} rows"
            f" | {format_time(elapsed)} | {rate}")


class RowsProgressBar(ProgressBar):
    """dask.diagnostics.ProgressBar (threads, processes, sync schedulers) showing rows and rows/s."""

    def __init__(self, rows: int, **kwargs) -> None:
        super().__init__(**kwargs)
        self._rows = rows

    def _draw_bar(self, frac: float, elapsed: float) -> None:
        with contextlib.suppress(ValueError):
            self._file.write(rows_line(frac, elapsed, self._rows, self._width))
            self._file.flush()


def rows_text_bar(futures, client, rows: int) -> None:
    """Show the progress of ``futures`` on ``client``'s cluster until they are done: distributed's
    TextProgressBar, on stderr, with rows and rows/s (distributed is imported only for a cluster)."""
    from distributed.diagnostics.progressbar import TextProgressBar

    class RowsTextProgressBar(TextProgressBar):
        def _draw_bar(self, remaining: int, all: int, **kwargs) -> None:
            fraction = (1 - remaining / all) if all else 1.0
            with contextlib.suppress(ValueError):
                sys.stderr.write(rows_line(fraction, self.elapsed, rows, self.width))
                sys.stderr.flush()

        def _draw_stop(self, **kwargs) -> None:
            sys.stderr.write("\n")
            sys.stderr.flush()

    RowsTextProgressBar(futures, scheduler=client.scheduler.address, complete=True)
