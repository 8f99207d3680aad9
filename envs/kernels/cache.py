"""Where numba keeps the compiled kernels: beside the sources, else the user's cache, else a
folder of this user's own under the temporary directory.

Every kernel is compiled with ``cache=True``, and numba refuses to define a kernel when it can
write none of its cache locations (``RuntimeError: cannot cache function ...``): a read-only
install with a read-only home would fail to import. The fallback folder is per user
(``crowdsteer-numba-cache-<uid>``, mode 700): on a shared machine the temporary directory is
shared, and a folder another user made first is neither writable nor safe to load from (numba's
cache files are pickles, so whoever can write them can run code in every process that loads
them). An existing folder is used only when this user owns it and nobody else can write to it;
otherwise a fresh private folder is made for this process. ``NUMBA_CACHE_DIR`` is honoured when
numba can use it or one of its own locations; when it cannot, the fallback applies, said once.
The install's precompiled kernels, read before this cache, are in :mod:`.jit`.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

_DONE = False

FOLDER_PREFIX = "crowdsteer-numba-cache-"


def _writable(folder: Path) -> bool:
    """Whether a file can be created in ``folder`` (created if missing)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def user_tag() -> str:
    """This user's part of the fallback folder's name: the numeric uid where there is one."""
    getuid = getattr(os, "getuid", None)
    if getuid is not None:
        return str(getuid())
    name = os.environ.get("USERNAME") or os.environ.get("USER") or "user"
    return "".join(c if c.isalnum() else "_" for c in name)


def private_folder_ok(folder: Path) -> bool:
    """Whether ``folder`` is a real folder (not a link) that this user owns and nobody else can
    write to: only then may numba load the compiled code it holds."""
    try:
        info = folder.lstat()
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode):
        return False
    getuid = getattr(os, "getuid", None)
    if getuid is not None and info.st_uid != getuid():
        return False
    if os.name == "posix" and info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return False
    return os.access(folder, os.W_OK | os.X_OK)


def user_temp_cache(temp_root: Path | None = None) -> Path:
    """This user's kernel cache under ``temp_root`` (the temporary directory by default):
    ``crowdsteer-numba-cache-<uid>``, made with mode 700 when missing. When that name is taken by
    something this user cannot safely use (another user's folder, a link, a file), a fresh
    private folder with the same prefix is made instead (kernels then compile again in every
    process). Raises ``OSError`` when nothing can be made under ``temp_root``."""
    root = Path(tempfile.gettempdir() if temp_root is None else temp_root)
    folder = root / f"{FOLDER_PREFIX}{user_tag()}"
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError:
        return Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX, dir=root))
    if private_folder_ok(folder):
        return folder
    return Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX, dir=root))


def choose_cache_dir(
    package_dir: Path,
    user_dir: Path,
    writable: Callable[[Path], bool] = _writable,
    requested: Path | None = None,
    temp_cache: Callable[[], Path] = user_temp_cache,
) -> Path | None:
    """None when numba's own choices work (``requested``, the folder ``NUMBA_CACHE_DIR`` names,
    then the ``__pycache__`` beside the sources, then the user-wide cache); otherwise this
    user's private folder under the temporary directory (``temp_cache``)."""
    if requested is not None and writable(requested):
        return None
    if writable(package_dir / "__pycache__") or writable(user_dir):
        return None
    return temp_cache()


def ensure_writable_cache() -> None:
    """Point numba at a writable cache before any kernel is defined, saying so once."""
    global _DONE
    if _DONE:
        return
    _DONE = True
    if os.environ.get("NUMBA_DISABLE_JIT") == "1":
        return
    from numba.core import config
    from numba.misc.appdirs import AppDirs

    requested = os.environ.get("NUMBA_CACHE_DIR") or None
    user_dir = Path(AppDirs(appname="numba", appauthor=False).user_cache_dir)
    try:
        folder = choose_cache_dir(
            Path(__file__).resolve().parent,
            user_dir,
            requested=None if requested is None else Path(requested),
        )
    except OSError as exc:
        raise ImportError(
            "crowdsteer: numba can write none of its kernel caches (beside the sources, "
            f"{user_dir}, {tempfile.gettempdir()}): {exc}; set NUMBA_CACHE_DIR to a folder this "
            "user can write"
        ) from exc
    if folder is None:
        return
    config.CACHE_DIR = str(folder)
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    why = (
        f"NUMBA_CACHE_DIR={requested} is not writable, nor are the install and the home cache"
        if requested
        else "the install and the home cache are read-only"
    )
    print(f"crowdsteer: {why}; compiled kernels are cached in {folder}", file=sys.stderr)
