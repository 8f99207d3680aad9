"""Checks a command makes before any work starts: optional extras, output paths, a display.

Each raises :class:`UsageError` naming the argument or the extra, reported by the command line in
one line (exit status 2).
"""

from __future__ import annotations

import errno
import importlib.util
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

EXTRAS = {
    "matplotlib": ("train", "matplotlib"),
    "stable_baselines3": ("train", "Stable-Baselines3"),
    "torch": ("train", "torch"),
    "imageio_ffmpeg": ("video", "imageio-ffmpeg"),
    "moviepy": ("video", "moviepy"),
    "minari": ("dataset", "Minari"),
    "h5py": ("dataset", "h5py"),
    "shapely": ("realism", "shapely"),
    "pedpy": ("realism", "PedPy"),
    "torchrl": ("marl", "TorchRL"),
    "benchmarl": ("marl", "BenchMARL"),
}
"""Optional module -> (the extra that installs it, its display name)."""


class UsageError(ValueError):
    """A mistake in the command line or a missing requirement: reported in one line, exit 2."""


def check_int(flag: str, value: object, low: int) -> None:
    """Refuse ``value`` for the option ``flag`` unless it is an int (not a bool) >= ``low``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise UsageError(f"argument {flag}: must be an int >= {low}, got {value!r}")


def has_module(name: str) -> bool:
    """Whether ``name`` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


TORCH = "torch==2.13.0"
"""The torch the project is tested with; installed first, its CPU build (without it, an extra
that needs torch makes pip fetch the default CUDA build, several GB)."""

TORCH_CPU = f"pip install {TORCH} --index-url https://download.pytorch.org/whl/cpu"

NEEDS_TORCH = ("train", "rllib", "marl")
"""The extras that install torch."""


def install_hint(module: str) -> str:
    """How to install the extra of an optional module (see :func:`extras_hint`)."""
    return extras_hint([EXTRAS[module][0]])


def extras_hint(extras: Sequence[str]) -> str:
    """The command that installs ``extras`` into this install: ``pip install -e '.[train]'``
    from the checkout an editable install came from (its path), else the package's name; torch
    first, its CPU build, when an extra needs it."""
    names = ",".join(sorted(set(extras)))
    source = _checkout()
    target = f"-e '{source}[{names}]'" if source else f"'crowdsteer[{names}]'"
    command = f"pip install {target}"
    if any(extra in NEEDS_TORCH for extra in extras):
        return f"install {TORCH} first ({TORCH_CPU}), then {command}"
    return command


def _checkout() -> str | None:
    """The folder an editable install of crowdsteer points at ('.' when it is the working
    directory), or None for an install from an index or a wheel."""
    import json
    from importlib import metadata
    from urllib.parse import unquote, urlparse

    # the installed distribution's record (a source folder's own crowdsteer.egg-info has none)
    records = (d.read_text("direct_url.json") for d in metadata.distributions(name="crowdsteer"))
    try:
        info = json.loads(next((r for r in records if r), None) or "{}")
    except ValueError:
        return None
    if not info.get("dir_info", {}).get("editable"):
        return None
    path = Path(unquote(urlparse(info.get("url", "")).path))
    if not path.is_dir():
        return None
    return "." if path.resolve() == Path.cwd().resolve() else str(path)


def require(modules: Sequence[str], what: str) -> None:
    """Raise :class:`UsageError` when one of ``modules`` is missing, naming its extra."""
    missing = [m for m in modules if not has_module(m)]
    if missing:
        names = ", ".join(EXTRAS[m][1] for m in missing)
        extras = sorted({EXTRAS[m][0] for m in missing})
        raise UsageError(
            f"{what} needs {names}, which the base install leaves out: {extras_hint(extras)}"
        )


def output_file(path: str, suffixes: Sequence[str], arg: str = "--out") -> Path:
    """Check an output file before any work: a known suffix, what that format needs installed,
    and a writable folder (created if missing). Returns the path."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in suffixes:
        raise UsageError(
            f"argument {arg}: {path!r} has an unsupported format; use one of " + ", ".join(suffixes)
        )
    if suffix == ".mp4" and not has_module("imageio_ffmpeg"):
        raise UsageError(
            f"argument {arg}: writing .mp4 needs imageio-ffmpeg: {install_hint('imageio_ffmpeg')} "
            "(or write a .gif)"
        )
    if p.is_dir():
        raise UsageError(f"argument {arg}: {path!r} is a folder, not a file")
    writable_folder(p.parent, arg)
    if p.exists() and not os.access(p, os.W_OK):
        raise UsageError(f"argument {arg}: cannot overwrite {path!r} (permission denied)")
    return p


def _check_name_lengths(path: Path, arg: str) -> None:
    """``UsageError`` for a path with a name longer than file systems take (255 bytes)."""
    long = [part for part in path.parts if len(os.fsencode(part)) > 255]
    if long:
        raise UsageError(
            f"argument {arg}: cannot write into {str(path)!r} (a name in the path is longer "
            f"than the file system allows: {len(os.fsencode(long[0]))} bytes, at most 255 bytes)"
        )


def output_folder(path: str, arg: str = "--out") -> Path:
    """Check an output folder before any work: not a file, and creatable or writable."""
    p = Path(path)
    _check_name_lengths(p, arg)
    if p.exists() and not p.is_dir():
        raise UsageError(f"argument {arg}: {path!r} is a file, not a folder")
    return writable_folder(p, arg)


def writable_folder(folder: Path, arg: str = "--out") -> Path:
    """Make sure ``folder`` exists (created now if needed) and takes a new file; a clear error
    naming ``arg`` otherwise."""
    folder = Path(folder) if str(folder) else Path(".")
    _check_name_lengths(folder, arg)
    if folder.is_symlink() and not folder.exists():
        raise UsageError(
            f"argument {arg}: {str(folder)!r} is a link to {os.readlink(folder)!r}, which does "
            "not exist"
        )
    for above in folder.parents:  # a file where a folder of the path should be
        if above.exists() and not above.is_dir():
            raise UsageError(
                f"argument {arg}: cannot write into {str(folder)!r}: {str(above)!r} is a file, "
                "not a folder"
            )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as err:
        if err.errno == errno.ENAMETOOLONG:
            reason = "a name in the path is longer than the file system allows (255 bytes)"
        else:
            reason = err.strerror or type(err).__name__
        raise UsageError(f"argument {arg}: cannot write into {str(folder)!r} ({reason})") from None
    return folder


def window_error(err: Exception, fallback: str) -> UsageError:
    """A one-line error for a window that pygame could not open (``fallback``: what to do)."""
    return UsageError(f"could not open a window ({err}); {fallback}")


def has_display() -> bool:
    """True when a window can be opened (an X or Wayland display, not the dummy driver)."""
    if os.environ.get("SDL_VIDEODRIVER") in ("dummy", "offscreen"):
        return False
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
