"""Argument types and checks of the ``crowdsteer`` command line, run before any work starts.

Each type raises ``argparse.ArgumentTypeError`` with a message that says what is allowed, so the
parser reports ``argument --NAME: ...`` on one line. Checks that need several arguments, or the
machine (a display, an installed extra), raise :class:`UsageError` naming the argument.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

EXTRAS = {
    "matplotlib": ("train", "matplotlib"),
    "stable_baselines3": ("train", "Stable-Baselines3"),
    "torch": ("train", "torch"),
    "imageio_ffmpeg": ("video", "imageio-ffmpeg"),
    "moviepy": ("video", "moviepy"),
}
"""Optional module -> (the extra that installs it, its display name)."""


class UsageError(ValueError):
    """A mistake in the command line or a missing requirement: reported in one line, exit 2."""


def has_module(name: str) -> bool:
    """Whether ``name`` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def install_hint(module: str) -> str:
    """``pip install 'crowdsteer[EXTRA]'`` for an optional module."""
    extra, _ = EXTRAS[module]
    return f"pip install 'crowdsteer[{extra}]'"


def require(modules: Sequence[str], what: str) -> None:
    """Raise :class:`UsageError` when one of ``modules`` is missing, naming its extra."""
    missing = [m for m in modules if not has_module(m)]
    if missing:
        names = ", ".join(EXTRAS[m][1] for m in missing)
        extras = sorted({EXTRAS[m][0] for m in missing})
        raise UsageError(
            f"{what} needs {names}, which the base install leaves out: "
            f"pip install 'crowdsteer[{','.join(extras)}]'"
        )


def int_at_least(low: int) -> Callable[[str], int]:
    """Argument type: an integer ``>= low`` (``2e6`` style accepted when it is whole)."""

    def parse(text: str) -> int:
        try:
            value = float(text) if any(c in text for c in ".eE") else int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}, got {text!r}") from None
        if isinstance(value, float) and (not value.is_integer() or abs(value) > 2**62):
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}, got {text!r}")
        value = int(value)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}, got {text!r}")
        return value

    parse.__name__ = f"int>={low}"
    return parse


def one_of(names: Sequence[str], what: str) -> Callable[[str], str]:
    """Argument type: one of ``names`` (listed in the error)."""
    allowed = tuple(names)

    def parse(text: str) -> str:
        if text not in allowed:
            raise argparse.ArgumentTypeError(
                f"unknown {what} {text!r}; choose one of: {', '.join(allowed)}"
            )
        return text

    parse.__name__ = what
    return parse


def policy_names() -> tuple[str, ...]:
    from crowdsteer.baselines.policies import list_policies

    return tuple(list_policies())


def scenario_choices() -> tuple[str, ...]:
    from crowdsteer.envs.scenarios import scenario_names

    return tuple(scenario_names())


def model_path(text: str) -> str:
    """Argument type: an existing Stable-Baselines3 ``.zip`` (needs the ``train`` extra) or an
    RLlib checkpoint directory (needs the ``rllib`` extra when it is loaded)."""
    from crowdsteer.baselines.rllib_policy import is_rllib_checkpoint

    p = Path(text)
    if p.is_dir() and is_rllib_checkpoint(p):
        return text
    if p.suffix != ".zip":
        raise argparse.ArgumentTypeError(f"must be a saved model ending in .zip, got {text!r}")
    if not p.is_file():
        raise argparse.ArgumentTypeError(f"model file {text!r} does not exist")
    if not has_module("stable_baselines3"):
        raise argparse.ArgumentTypeError(
            f"loading a model needs Stable-Baselines3: {install_hint('stable_baselines3')}"
        )
    return text


def policy(text: str) -> str:
    """Argument type: a baseline name, a shipped model's short name (``crowdnav``), the path of a
    saved model (``.zip``) or of an RLlib checkpoint directory."""
    from crowdsteer.baselines.policies import SHIPPED_MODELS

    names = policy_names()
    if text in names or text in SHIPPED_MODELS:
        return text
    if text.endswith(".zip") or os.path.sep in text:
        return model_path(text)
    if Path(text).is_dir():
        return model_path(text)
    raise argparse.ArgumentTypeError(
        f"unknown policy {text!r}; choose a baseline ({', '.join(names)}), a shipped model "
        f"({', '.join(SHIPPED_MODELS)}), a model .zip or an RLlib checkpoint directory"
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


def output_folder(path: str, arg: str = "--out") -> Path:
    """Check an output folder before any work: not a file, and creatable or writable."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"argument {arg}: {path!r} is a file, not a folder")
    return writable_folder(p, arg)


def writable_folder(folder: Path, arg: str = "--out") -> Path:
    """Make sure ``folder`` exists (created now if needed) and takes a new file; a clear error
    naming ``arg`` otherwise."""
    folder = Path(folder) if str(folder) else Path(".")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as err:
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
