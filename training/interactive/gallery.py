"""The gallery of the scenarios: one frame of each at the same step, tiled into one PNG.

``python -m crowdsteer.training.interactive.gallery --out docs/scenarios.png`` regenerates the
README's picture. Each tile is ``crowdsteer render --overlays --overlay-body pedestrian --frame
STEP`` of one scenario: the scene's demo crowd, its learners driven by the scene's best scripted
baseline, and the overlays of one pedestrian that steers with a look-ahead (what steered it at
that step: its pushes, their sums, its look-ahead segments and crossings). Tiles of a row are
padded to the tallest with the frame's outside colour.
"""

from __future__ import annotations

import argparse
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
    from .demo import run_clip

    clip = run_clip(
        scenario,
        None,
        seed,
        "rgb_array",
        episodes=1,
        max_steps=max(step, 1),
        end_when_done=False,
        overlays=OVERLAYS,
        overlay_body="pedestrian",
        size=size,
    )
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


def main(argv: Sequence[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(
        prog="python -m crowdsteer.training.interactive.gallery", description=__doc__
    )
    parser.add_argument("--out", default="out/scenarios.png", help="the PNG written")
    parser.add_argument("--size", type=int, default=560, help="width of each tile in pixels")
    parser.add_argument("--columns", type=int, default=2, help="tiles per row")
    parser.add_argument("--step", type=int, default=STEP, help="the step drawn")
    args = parser.parse_args(argv)
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    import imageio.v2 as imageio

    from crowdsteer.envs.render import Style

    frames = [tile(s, args.size, args.step) for s in SCENARIOS]
    picture = tiled(frames, args.columns, Style().outside)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    imageio.imwrite(out, picture)
    print(
        f"wrote {len(frames)} scenarios at step {args.step} to {out} ({picture.shape[1]} x "
        f"{picture.shape[0]} px)"
    )
    return out


if __name__ == "__main__":
    main()
