"""Progress of a chunked run on a terminal's stderr, with rows per second: Dask's own progress bars (the
local schedulers' callback, distributed's text bar) drawn with the rows done next to the tasks done.

The rows are estimated from the share of tasks finished (every block has the same tasks). The last line,
at 100%, is drawn by the caller from the time it measured itself (:meth:`RowLine.finish`), so the bar and
the run's summary show one rows/s. A run that stops (an error, Ctrl-C) ends the bar's line first, so the
message that follows starts on a line of its own.
"""

from __future__ import annotations

import contextlib
from typing import TextIO

from dask.diagnostics import ProgressBar
from dask.utils import format_time


def rows_line(fraction: float, elapsed: float, rows: int, width: int = 40) -> str:
    """``[####    ] |  50% | 500/1,000 rows | 1.2s | 416 rows/s``."""
    done = int(rows * fraction)
    rate = f"{done / elapsed:,.0f} rows/s" if elapsed > 0 else "- rows/s"
    return (f"\r[{'#' * int(width * fraction):<{width}}] | {int(100 * fraction):3d}% | {done:,}/{rows:,} rows"
            f" | {format_time(elapsed)} | {rate}")


class RowLine:
    """The one line a bar draws on ``stream``: whether it is open (drawn and not yet ended)."""

    def __init__(self, stream: TextIO, rows: int, width: int = 40) -> None:
        self.stream, self.rows, self.width = stream, rows, width
        self.open = False

    def draw(self, fraction: float, elapsed: float) -> None:
        with contextlib.suppress(ValueError):
            self.stream.write(rows_line(fraction, elapsed, self.rows, self.width))
            self.stream.flush()
            self.open = True

    def end(self) -> None:
        """End the line if it is open (before an error or interruption message)."""
        if self.open:
            with contextlib.suppress(ValueError):
                self.stream.write("\n")
                self.stream.flush()
            self.open = False

    def finish(self, seconds: float) -> None:
        """The last line: 100% in ``seconds`` (the run's own measure), ended."""
        self.draw(1.0, seconds)
        self.end()


class RowsProgressBar(ProgressBar):
    """dask.diagnostics.ProgressBar (threads, processes, sync schedulers) showing rows and rows/s; it leaves
    its line open at the end for :meth:`RowLine.finish`."""

    def __init__(self, line: RowLine, **kwargs) -> None:
        super().__init__(out=line.stream, width=line.width, **kwargs)
        self.line = line

    def _draw_bar(self, frac: float, elapsed: float) -> None:
        self.line.draw(frac, elapsed)

    def _finish(self, dsk, state, errored: bool) -> None:
        self._running = False
        self._timer.join()
        if errored:
            self.line.end()


def rows_text_bar(futures, client, line: RowLine) -> None:
    """Show the progress of ``futures`` on ``client``'s cluster until they are done: distributed's
    TextProgressBar with rows and rows/s (distributed is imported only for a cluster); the line is left
    open at 100% for :meth:`RowLine.finish`."""
    from distributed.diagnostics.progressbar import TextProgressBar

    class RowsTextProgressBar(TextProgressBar):
        def _draw_bar(self, remaining: int, all: int, **kwargs) -> None:
            if remaining:
                line.draw(1 - remaining / all, self.elapsed)

        def _draw_stop(self, **kwargs) -> None:
            pass

    RowsTextProgressBar(futures, scheduler=client.scheduler.address, complete=True)
