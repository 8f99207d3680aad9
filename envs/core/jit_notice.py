"""A one-line notice on stderr while compiled kernels are being built on first use.

numba compiles the simulation's kernels the first time they are needed and caches them next to
the sources, so a fresh install or checkout waits about half a minute once, and later processes
load the cache in a fraction of a second. Without a word that first wait looks like a hang:
:func:`compile_notice` prints one line when a compilation takes longer than ``NOTICE_AFTER_S``,
once per process. Nothing is printed when the cache is warm.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

NOTICE_AFTER_S = 1.0
"""A compilation still running after this many seconds gets the notice."""

MESSAGE = (
    "crowdsteer: compiling the simulation kernels for first use; this takes about 30 s once "
    "(later runs load them from numba's cache; `crowdsteer compile` builds them all ahead of "
    "time, once per install)"
)

_state = {"shown": False}
_lock = threading.Lock()


def _show(stream: TextIO | None) -> None:
    with _lock:
        if _state["shown"]:
            return
        _state["shown"] = True
    out = sys.stderr if stream is None else stream
    print(MESSAGE, file=out, flush=True)


@contextmanager
def compile_notice(delay: float | None = None, stream: TextIO | None = None) -> Iterator[None]:
    """Print :data:`MESSAGE` to ``stream`` (stderr) if the body runs longer than ``delay`` s
    (default :data:`NOTICE_AFTER_S`); at most once per process."""
    if _state["shown"]:
        yield
        return
    wait = NOTICE_AFTER_S if delay is None else float(delay)
    timer = threading.Timer(wait, _show, args=(stream,))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def notice_shown() -> bool:
    """Whether the notice has been printed in this process."""
    return _state["shown"]
