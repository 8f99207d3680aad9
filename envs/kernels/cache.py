"""Where numba keeps the compiled kernels: beside the sources, else the user's cache, else a
temporary directory (a read-only install with a read-only home would otherwise fail to import:
every kernel is compiled with ``cache=True``, and numba refuses a cache it cannot write). The
install's precompiled kernels, read before this cache, are in :mod:`.jit`."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

_DONE = False


def _writable(folder: Path) -> bool:
    """Whether a file can be created in ``folder`` (created if missing)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def choose_cache_dir(
    package_dir: Path, user_dir: Path, writable: Callable[[Path], bool] = _writable
) -> Path | None:
    """None when numba's own choices work (the ``__pycache__`` beside the sources, or the
    user-wide cache); otherwise a writable folder under the temporary directory."""
    if writable(package_dir / "__pycache__") or writable(user_dir):
        return None
    return Path(tempfile.gettempdir()) / "crowdsteer-numba-cache"


def ensure_writable_cache() -> None:
    """Point numba at a writable cache before any kernel is defined, saying so once."""
    global _DONE
    if _DONE:
        return
    _DONE = True
    if os.environ.get("NUMBA_CACHE_DIR") or os.environ.get("NUMBA_DISABLE_JIT") == "1":
        return
    from numba.core import config
    from numba.misc.appdirs import AppDirs

    user_dir = Path(AppDirs(appname="numba", appauthor=False).user_cache_dir)
    folder = choose_cache_dir(Path(__file__).resolve().parent, user_dir)
    if folder is None:
        return
    folder.mkdir(parents=True, exist_ok=True)
    config.CACHE_DIR = str(folder)
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    print(
        f"crowdsteer: the install and the home cache are read-only; compiled kernels are cached "
        f"in {folder}",
        file=sys.stderr,
    )
