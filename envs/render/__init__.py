"""pygame rendering of crowdsteer worlds (imported only when rendering is asked for).

:class:`Viewer` draws one world of a :class:`~crowdsteer.envs.core.state.WorldState` to a window
(``"human"``, interactive: pause, step, zoom, select; keys in :data:`KEY_BINDINGS`) or to
``(H, W, 3) uint8`` frames (``"rgb_array"``, headless with
``SDL_VIDEODRIVER=dummy``); :class:`ViewerSettings` holds what it shows; :class:`Camera` maps
world metres (y up) to pixels (y down); :class:`OverlayOptions` and :class:`OverlayData` switch
and feed the debug overlays. Rendering only reads the state.
"""

from .camera import Camera, Framing, bounds_from_points
from .controls import KEY_BINDINGS, ViewControls
from .overlays import (
    FLOCK_VIEW_HALF_ANGLES,
    FLOCK_VIEW_RADIUS_FACTORS,
    OverlayData,
    OverlayOptions,
    OverlaySettings,
    body_vectors,
    learner_trace_to_world,
    overlay_data_from_state,
)
from .style import Style
from .viewer import CRAFT_OUTLINE, RENDER_MODES, Viewer, format_info
from .viewer_settings import ViewerSettings

__all__ = [
    "CRAFT_OUTLINE",
    "FLOCK_VIEW_HALF_ANGLES",
    "FLOCK_VIEW_RADIUS_FACTORS",
    "KEY_BINDINGS",
    "RENDER_MODES",
    "Camera",
    "Framing",
    "OverlayData",
    "OverlayOptions",
    "OverlaySettings",
    "Style",
    "ViewControls",
    "Viewer",
    "ViewerSettings",
    "body_vectors",
    "bounds_from_points",
    "format_info",
    "learner_trace_to_world",
    "overlay_data_from_state",
]
