"""Progress of a long command as whole lines on stderr: what is happening and how much is left.

A command that works for more than a few seconds without a window says so: a first line when the
work starts (what it is and how much of it there is), then a line every ``every_s`` seconds with
the count done, the share and the time left at the rate so far, and a last line when it ends.
Whole lines, unlike a bar redrawn in place, read the same in a terminal, a CI log and a file.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

EVERY_S = 5.0
"""Seconds between two progress lines (the first and the last are always written)."""


class ProgressLines:
    """Lines ``label: what`` then ``label: done/total unit (share), about N s left``.

    ``total``: how many ``unit`` the work has. ``clock`` (seconds, monotonic) and ``stream``
    (default: ``sys.stderr`` when the first line is written) can be replaced, for tests.
    """

    def __init__(
        self,
        label: str,
        total: int,
        unit: str,
        *,
        every_s: float = EVERY_S,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if total < 0:
            raise ValueError(f"total must be >= 0, got {total}")
        self.label = label
        self.total = int(total)
        self.unit = unit
        self.every_s = float(every_s)
        self.stream = stream
        self.clock = clock
        self.done = 0
        self._start: float | None = None
        self._last = 0.0

    def _write(self, text: str) -> None:
        stream = sys.stderr if self.stream is None else self.stream
        print(f"{self.label}: {text}", file=stream, flush=True)

    def start(self, what: str) -> None:
        """The first line: what the work is (its size is the caller's to say)."""
        self._start = self._last = self.clock()
        self._write(what)

    def update(self, done: int) -> None:
        """``done`` units finished so far; writes a line when ``every_s`` has passed."""
        now = self.clock()
        if self._start is None:
            self._start = self._last = now
        self.done = int(done)
        if now - self._last >= self.every_s and self.done < self.total:
            self._last = now
            self._write(self.status(now))

    def status(self, now: float | None = None) -> str:
        """``done/total unit (share)``, and the time left at the rate so far once known."""
        now = self.clock() if now is None else now
        share = self.done / self.total if self.total else 1.0
        text = f"{self.done}/{self.total} {self.unit} ({share:.0%})"
        elapsed = now - (self._start if self._start is not None else now)
        if 0 < self.done < self.total and elapsed > 0:
            left = elapsed * (self.total - self.done) / self.done
            text += f", about {left:.0f} s left"
        return text

    def note(self, text: str) -> None:
        """A line about a stage of the work that is not counted (writing the file, ...)."""
        self._last = self.clock()
        self._write(text)
