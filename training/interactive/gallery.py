"""The gallery of the scenarios: one frame of each at the same step, tiled into one PNG.

``crowdsteer gallery --out docs/scenarios.png`` regenerates the README's picture. Each tile is
``crowdsteer render --style debug --overlays --overlay-body pedestrian --frame STEP`` of one
scenario (its heads-up line names it): the scene's demo crowd, its learners driven by the scene's
best scripted baseline, and the overlays of one pedestrian that steers with a look-ahead (what
steered it at that step: its pushes, their sums, its look-ahead segments and crossings). Tiles
of a row are padded to the tallest with the frame's outside colour.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

SCENARIOS = (
    "circle_crossing",
    "square_crossing",
    "corridor",
    "crossing_flows",
    "obstacle_field",
    "bottleneck",
    "path_course",
)
"""The scenarios of the gallery, in reading order."""

STEP = 15
OVERLAYS = ("steering_vectors", "detection_boxes", "lookahead", "view_cones")
PAD = 6  # px between tiles


def tile(scenario: str, size: int, step: int = STEP, seed: int = 0) -> np.ndarray:
    """The frame ``(H, size, 3)`` of ``scenario`` at ``step`` (see the module's docstring)."""
    from .demo import ClipSettings, run_clip

    shown = ClipSettings(
        scenario,
        seed=seed,
        episodes=1,
        max_steps=max(step, 1),
        end_when_done=False,
        overlays=OVERLAYS,
        overlay_body="pedestrian",
        size=size,
    )
    clip = run_clip(shown)
    return clip.frames[step]


def tiled(frames: Sequence[np.ndarray], columns: int, fill: Sequence[int]) -> np.ndarray:
    """``frames`` of one width in rows of ``columns``, each row as tall as its tallest frame,
    ``PAD`` pixels apart, on ``fill``."""
    width = frames[0].shape[1]
    rows = [frames[i : i + columns] for i in range(0, len(frames), columns)]
    heights = [max(f.shape[0] for f in row) for row in rows]
    out = np.empty(
        (sum(heights) + PAD * (len(rows) + 1), columns * width + PAD * (columns + 1), 3), np.uint8
    )
    out[:] = np.asarray(fill, np.uint8)
    y = PAD
    for row, h in zip(rows, heights, strict=True):
        x = PAD
        for f in row:
            out[y : y + f.shape[0], x : x + width] = f
            x += width + PAD
        y += h + PAD
    return out


def write_gallery(
    out: str | Path = "out/scenarios.png", size: int = 560, columns: int = 2, step: int = STEP
) -> Path:
    """Draw every scenario of :data:`SCENARIOS` at ``step``, ``size`` pixels wide each, tile
    them ``columns`` to a row and write the PNG ``out``; returns its path."""
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    import imageio.v2 as imageio

    from crowdsteer.envs.render import Style

    from ..support.progress import ProgressLines

    progress = ProgressLines("gallery", len(SCENARIOS), "scenarios")
    progress.start(f"drawing {len(SCENARIOS)} scenarios at step {step}")
    frames = []
    for scenario in SCENARIOS:
        frames.append(tile(scenario, size, step))
        progress.update(len(frames))
    picture = tiled(frames, columns, Style().outside)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    imageio.imwrite(path, picture)
    print(
        f"wrote {len(frames)} scenarios at step {step} to {path} "
        f"({picture.shape[1]} x {picture.shape[0]} px)"
    )
    return path
