"""A one-line notice on stderr when numba starts compiling one of crowdsteer's kernels.

numba compiles a kernel the first time a process needs it and caches the machine code, so a
fresh install or checkout spends up to about a minute of CPU time in its first step, and later
processes load the cache in a fraction of a second. Without a word that first wait looks like a
hang. The notice is driven by numba itself: numba fires its ``numba:compile`` event exactly when
it compiles (never when it loads a kernel from a cache, ``crowdsteer compile``'s precompiled
folder included), and :class:`CompileNotice` listens to it, printing one line at the first
compilation of a crowdsteer kernel in the process. Nothing is printed when nothing compiles,
however long the step takes. ``crowdsteer compile`` reports its own progress instead.
"""

from __future__ import annotations

import sys
import threading
from typing import TextIO

from numba.core import event

from crowdsteer.envs.kernels.jit import building

EVENT = "numba:compile"
"""numba's event for the compilation of one function (cache misses only)."""

PACKAGE = "crowdsteer."
"""Kernels of these modules get the notice (other numba users' compilations do not)."""

MESSAGE = (
    "crowdsteer: numba is compiling the kernels this configuration needs, once for this machine "
    "(later processes load them from numba's cache; `crowdsteer compile --all` builds every "
    "kernel ahead of time, once per install)"
)


def _kernel_name(data: dict | None) -> str | None:
    """``module.function`` of the dispatcher an event is about, or None."""
    dispatcher = (data or {}).get("dispatcher")
    func = getattr(dispatcher, "py_func", None)
    if func is None:
        return None
    return f"{func.__module__}.{func.__name__}"


class CompileNotice(event.Listener):
    """Prints :data:`MESSAGE` to ``stream`` (stderr when None) at the first ``numba:compile``
    event of a kernel under :data:`PACKAGE`, once."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream
        self.shown = False
        self._lock = threading.Lock()

    def on_start(self, ev: event.Event) -> None:
        if self.shown or building():  # ``crowdsteer compile`` shows its progress instead
            return
        name = _kernel_name(ev.data)
        if name is None or not name.startswith(PACKAGE):
            return
        with self._lock:
            if self.shown:
                return
            self.shown = True
        print(MESSAGE, file=sys.stderr if self.stream is None else self.stream, flush=True)

    def on_end(self, ev: event.Event) -> None:
        pass


_NOTICE = CompileNotice()
event.register(EVENT, _NOTICE)


def notice_shown() -> bool:
    """Whether the notice has been printed in this process."""
    return _NOTICE.shown
