"""Files written whole or not at all, and the finished units a killed run resumes from.

Every result file the commands write goes through ``replacing``: the content is written to a
hidden temporary file in the same folder (same file system), flushed to disk, then renamed over
the target (``os.replace``, atomic on POSIX and Windows). A run killed at any moment leaves the
old file or the new one, never a part of one; a half-written temporary file is hidden (``.``
prefix) and has ``.partial`` in its name, so that no later command takes it for a result.

``UnitStore`` keeps the finished units of a long run (a benchmark's scenario-policy pairs, a
realism crowd) in a hidden ``.partial`` folder of its output, each unit written whole, beside
the settings they were computed with: ``--resume`` skips the units already there when the
settings are the same, and refuses to mix settings. A run that completes removes the folder.
Units hold JSON and numpy arrays only (read without pickle): nothing in them runs when loaded.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .preflight import UsageError

PARTIAL_DIR = ".partial"
"""The folder, inside a run's output, holding its finished units until the run completes."""


def partial_name(path: Path) -> Path:
    """A hidden temporary name beside ``path``, keeping its suffix (some writers choose the
    format from it): ``.NAME.partial-XXXXXXXX.SUFFIX``."""
    return path.with_name(f".{path.stem}.partial-{secrets.token_hex(4)}{path.suffix}")


@contextlib.contextmanager
def replacing(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` to write; on success it is flushed to disk and
    renamed over ``path``, on any error removed (``path`` keeps what it held)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = partial_name(target)
    try:
        yield tmp
        if tmp.is_file():
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to ``path`` whole or not at all; returns the path."""
    with replacing(path) as tmp:
        tmp.write_text(text)
    return Path(path)


def write_json(path: str | os.PathLike, data: Any) -> Path:
    """``data`` as indented JSON (``str`` for what JSON lacks), whole or not at all."""
    return write_text(path, json.dumps(data, indent=1, default=str))


def save_figure(fig: Any, path: str | os.PathLike, **kwargs: Any) -> Path:
    """``fig.savefig`` to ``path`` whole or not at all (the format from ``path``'s suffix)."""
    target = Path(path)
    with replacing(target) as tmp:
        fig.savefig(tmp, format=target.suffix.lstrip(".") or None, **kwargs)
    return target


def remove_partials(folder: str | os.PathLike) -> None:
    """Remove the temporary files a killed writer left in ``folder`` (not below it)."""
    for junk in Path(folder).glob(".*.partial-*"):
        if junk.is_file():
            with contextlib.suppress(OSError):
                junk.unlink()


class UnitStore:
    """The finished units of one run, in ``out/.partial``, valid for ``settings`` only.

    ``resume``: keep the units a killed run with the same settings left (a run with other
    settings is refused by naming the folder); without it the folder starts empty."""

    def __init__(self, out: str | os.PathLike, settings: Mapping[str, Any], resume: bool):
        from .lock import hold

        hold(out)  # before anything in the folder is read or removed
        self.folder = Path(out) / PARTIAL_DIR
        self.settings = json.loads(json.dumps(settings, default=str))
        remove_partials(out)
        remove_partials(self.folder)
        stamp = self.folder / "settings.json"
        if resume and stamp.is_file():
            try:
                saved = json.loads(stamp.read_text())
            except (OSError, ValueError) as err:
                raise UsageError(
                    f"--resume: {str(stamp)!r} is damaged ({err}); run again without --resume "
                    "to start over"
                ) from err
            if saved != self.settings:
                raise UsageError(
                    f"--resume: {self.folder} holds units of a run with other settings "
                    f"({str(stamp)!r}); run again with the same options, or without --resume "
                    "to start over"
                )
        else:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder.mkdir(parents=True, exist_ok=True)
            write_json(stamp, self.settings)

    def _paths(self, key: str) -> tuple[Path, Path]:
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", key)
        name = f"{name}.{abs(_stable_hash(key)):016x}"
        return self.folder / f"{name}.json", self.folder / f"{name}.npz"

    def load(
        self, key: str, needs: tuple[str, ...] = ()
    ) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
        """The ``(record, arrays)`` saved for ``key``, or None when it was not finished;
        ``needs``: entries of which the record must hold one. ``UsageError`` naming the unit's
        file when it is damaged."""
        meta, arrays = self._paths(key)
        if not meta.is_file():
            return None
        try:
            record = json.loads(meta.read_text())
            if not isinstance(record, dict) or record.get("key") != key:
                raise ValueError(f"it is not the unit {key!r}")
            data: dict[str, np.ndarray] = {}
            if record.get("has_arrays"):
                with np.load(arrays, allow_pickle=False) as z:
                    data = {k: z[k] for k in z.files}
            unit = record["record"]
            if not isinstance(unit, dict) or (needs and not any(k in unit for k in needs)):
                raise ValueError(f"its record holds none of {', '.join(needs) or 'the entries'}")
            return unit, data
        except (OSError, ValueError, KeyError, TypeError, EOFError) as err:
            why = f"no entry {err}" if isinstance(err, KeyError) else f"{err}"
            raise UsageError(
                f"--resume: the finished unit {str(meta)!r} is damaged ({why}); delete it to "
                "run that unit again, or run without --resume to start over"
            ) from err

    def save(
        self, key: str, record: Mapping[str, Any], arrays: Mapping[str, np.ndarray] | None = None
    ) -> None:
        """Keep unit ``key``: ``record`` (JSON) and ``arrays``; the arrays first, so that a unit
        whose JSON exists is whole."""
        meta, path = self._paths(key)
        if arrays:
            with replacing(path) as tmp, open(tmp, "wb") as f:
                np.savez(f, **{k: np.asarray(v) for k, v in arrays.items()})
        write_json(meta, {"key": key, "has_arrays": bool(arrays), "record": dict(record)})

    def finish(self) -> None:
        """The run completed: its units are no longer needed."""
        shutil.rmtree(self.folder, ignore_errors=True)


def _stable_hash(text: str) -> int:
    """A hash of ``text`` that is the same in every process (``hash`` of a str is salted)."""
    import hashlib

    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
