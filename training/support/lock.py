"""One writer per output folder: a lock file naming the process that writes there.

A command that writes an output folder (``train``'s run folder, ``benchmark``, ``realism`` and
``study``'s ``--out``) first creates ``FOLDER/.crowdsteer.lock`` with ``O_CREAT | O_EXCL`` (atomic
on POSIX and on NFSv3 and later), holding the owner's PID, host name and command. A second
writer finds it and stops with ``UsageError`` naming the folder and the owner, before it reads or
deletes anything there. A lock whose owner is gone (same host, no process with that PID: a run
killed with ``kill -9``) is taken over. A lock from another host is never taken over: its owner
cannot be checked from here (delete the file when that run is known to be over).

Locks are released when the command ends (``release_all``, called by the command line after
each command and at interpreter exit); a process may take a lock it already holds again.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import socket
import sys
import time
from pathlib import Path

from .preflight import UsageError

LOCK_FILE = ".crowdsteer.lock"
"""The lock's file name inside the folder it guards."""

_held: dict[Path, int] = {}
"""Folders whose lock this process holds -> how many times it took it."""


def _owner() -> dict[str, object]:
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": " ".join(["crowdsteer", *sys.argv[1:]])[:300],
        "since": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def _alive(pid: int) -> bool:
    """Whether a process with ``pid`` exists on this host."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def _read(path: Path) -> dict[str, object] | None:
    """The owner recorded in ``path``; None when the file is gone or unreadable (a writer
    killed between creating and filling it)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _create(path: Path) -> bool:
    """Create the lock ``path`` holding this process; False when it exists."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as f:
        f.write(json.dumps(_owner()))
    return True


def hold(folder: str | os.PathLike, flag: str = "--out") -> Path:
    """Take the lock of ``folder`` (made if missing) for this process; returns the lock file.

    ``UsageError`` naming the folder (``flag``: the option that chose it) and the owner's PID
    and host when another live process holds it."""
    folder = Path(folder)
    key = folder.resolve()
    if key in _held:
        _held[key] += 1
        return key / LOCK_FILE
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_FILE
    for _ in range(3):  # a stale lock is removed, then created again as ours
        if _create(path):
            _held[key] = 1
            return key / LOCK_FILE
        owner = _read(path)
        if owner is None:
            # created but not yet filled, or emptied: give a live writer a moment to fill it
            time.sleep(0.2)
            owner = _read(path)
        here = socket.gethostname()
        pid = owner.get("pid") if owner else None
        host = owner.get("host") if owner else None
        if isinstance(pid, int) and pid == os.getpid() and host == here:
            _held[key] = 1  # left by this very process (released without the registry)
            return key / LOCK_FILE
        stale = owner is None or (host == here and isinstance(pid, int) and not _alive(pid))
        if not stale:
            raise UsageError(
                f"argument {flag}: {str(folder)!r} is being written by another crowdsteer "
                f"process (PID {pid} on {host}, {owner.get('command', '?')!s}, since "
                f"{owner.get('since', '?')}); wait for it to end or choose another folder "
                f"(if that process is known to be gone, delete {str(path)!r})"
            )
        with contextlib.suppress(FileNotFoundError):
            if _read(path) == owner:  # not replaced meanwhile by a third process
                path.unlink()
                print(
                    f"crowdsteer: took over the lock of {str(folder)!r} left by PID {pid} on "
                    f"{host}, which is no longer running",
                    file=sys.stderr,
                )
    raise UsageError(f"argument {flag}: could not lock {str(folder)!r}; try again")


def release(folder: str | os.PathLike) -> None:
    """Give back one hold of ``folder``'s lock; the file goes with the last."""
    key = Path(folder).resolve()
    if key not in _held:
        return
    _held[key] -= 1
    if _held[key] > 0:
        return
    del _held[key]
    path = key / LOCK_FILE
    owner = _read(path)
    if owner is not None and owner.get("pid") == os.getpid():
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def release_all() -> None:
    """Release every lock this process holds."""
    for key in list(_held):
        _held[key] = 1
        release(key)


def held() -> list[Path]:
    """The folders whose lock this process holds."""
    return sorted(_held)


atexit.register(release_all)
