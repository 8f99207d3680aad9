"""What a :class:`~.viewer.Viewer` shows and how its window behaves, in one settings object."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .overlays import FLOCK_VIEW_HALF_ANGLES, OverlayOptions, OverlaySettings
from .style import Style

__all__ = ["ViewerSettings"]


@dataclass
class ViewerSettings:
    """The viewer's choices beyond the frame's size, rate and mode.

    ``overlay_options`` selects the debug overlays (the viewer's controls hold this object and
    the window's keys toggle it in place; ``draw`` may override it per call); when an overlay is
    on and ``draw`` gets no :class:`OverlayData`, it is computed for ``overlay_body`` (a body
    index or several, -1: none) with ``overlay_settings``, the configuration's parameters of the
    overlays' geometry (``OverlaySettings.from_config``; its ``flock_view`` must be one of
    ``FLOCK_VIEW_HALF_ANGLES``). ``style``: colours and sizes.
    ``show_hud``/``show_legend``: the heads-up line and the legend. ``title``: the window's caption.
    ``interactive`` (None: in human mode) lets the person at the window control it (keys in
    :data:`.controls.KEY_BINDINGS`); ``play`` gives the movement keys to ``crowdsteer play``.
    Screenshots go to ``screenshot_dir``. ``fit_height``: the first frame sets the height so that
    the scene (the bounds given to ``draw``) fills the width, with room for the text; later frames
    keep it. ``marked``: labels drawn beside bodies, with a ring (``{0: "you"}`` in
    ``crowdsteer play``).
    """

    overlay_options: OverlayOptions = field(default_factory=OverlayOptions)
    overlay_body: int | Sequence[int] = 0
    overlay_settings: OverlaySettings = field(default_factory=OverlaySettings)
    style: Style = field(default_factory=Style)
    show_hud: bool = True
    show_legend: bool = True
    title: str = "crowdsteer"
    interactive: bool | None = None
    play: bool = False
    screenshot_dir: str | Path = "."
    fit_height: bool = False
    marked: Mapping[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        view = self.overlay_settings.flock_view
        if view not in FLOCK_VIEW_HALF_ANGLES:
            raise ValueError(
                "overlay_settings.flock_view must be one of "
                f"{tuple(FLOCK_VIEW_HALF_ANGLES)}, got {view!r}"
            )
