"""Colours and sizes of the viewer's drawing (RGB tuples, pixels).

Body colours follow a common qualitative palette (blue learners, orange pedestrians, purple flock
units); the steering overlays use the colours of the source pictures (Gast, Point A to Point B
parts 2-4): plain pushes red, adjusted pushes blue, their plain sum yellow, the turned sum green,
the final direction black; look-ahead segments black, dashed for the desired path.
"""

from __future__ import annotations

from dataclasses import dataclass

Colour = tuple[int, int, int]


@dataclass(frozen=True)
class Style:
    """Every colour and size the viewer draws with. Override fields with ``Style(field=...)``."""

    # Scene
    outside: Colour = (228, 231, 235)  # surface beyond the scenario bounds
    background: Colour = (250, 250, 247)  # inside the scenario bounds
    grid: Colour = (232, 234, 236)
    border: Colour = (170, 174, 180)
    obstacle: Colour = (160, 164, 172)
    obstacle_edge: Colour = (105, 110, 120)
    wall: Colour = (72, 76, 86)
    path: Colour = (176, 180, 200)
    waypoint: Colour = (140, 146, 170)
    target: Colour = (200, 30, 120)
    # Bodies, indexed by kind (learner, pedestrian, flock)
    learner: Colour = (31, 119, 180)
    pedestrian: Colour = (255, 127, 14)
    flock: Colour = (148, 103, 189)
    learner_edge: Colour = (16, 68, 110)
    pedestrian_edge: Colour = (170, 78, 0)
    flock_edge: Colour = (84, 52, 120)
    heading: Colour = (255, 255, 255)
    reached: Colour = (44, 160, 44)
    collided: Colour = (214, 39, 40)
    finished_tint: float = 0.6  # a learner that left its episode: its colour this far to white
    selection: Colour = (25, 25, 25)
    # Heads-up text
    text: Colour = (40, 44, 52)
    panel: Colour = (255, 255, 255)
    panel_alpha: int = 200
    # Overlays
    plain_push: Colour = (220, 30, 30)  # red
    adjusted_push: Colour = (30, 80, 235)  # blue
    yellow_sum: Colour = (236, 184, 0)  # yellow (darkened to read on a light background)
    green_sum: Colour = (0, 160, 60)  # green
    final_dir: Colour = (15, 15, 15)  # black
    detection_box: Colour = (90, 95, 105)
    detection_hit: Colour = (230, 90, 0)
    view_cone: Colour = (148, 103, 189)
    view_cone_alpha: int = 14  # a faint fill: the outline says where the view ends
    personal_space: Colour = (31, 119, 180)
    personal_space_hit: Colour = (214, 39, 40)
    personal_space_alpha: int = 45
    lookahead: Colour = (20, 20, 20)
    crossing: Colour = (214, 39, 40)
    lidar_beam: Colour = (255, 170, 60)
    lidar_hit: Colour = (200, 30, 30)
    scale_bar: Colour = (40, 44, 52)
    # Sizes (pixels)
    margin: int = 20
    font_size: int | None = None  # None: sized to the window (font_size_for)
    trail_width: int = 2
    vector_width: int = 2
    min_body_px: float = 2.5  # smallest drawn body radius
    min_craft_px: float = 9.0  # smallest drawn craft length
    goal_px: int = 5  # half size of goal crosses

    def kind_colours(self) -> tuple[Colour, Colour, Colour]:
        return (self.learner, self.pedestrian, self.flock)

    def kind_edges(self) -> tuple[Colour, Colour, Colour]:
        return (self.learner_edge, self.pedestrian_edge, self.flock_edge)


def font_size_for(width: int, height: int) -> int:
    """Text size in pixels for a ``width x height`` frame: 1/42 of its longer side, 13 to 28
    (a wide frame of a corridor reads like a square one of the same width)."""
    return int(min(max(round(max(width, height) / 42), 13), 28))


def tint(colour: Colour, amount: float, towards: Colour = (255, 255, 255)) -> Colour:
    """``colour`` moved ``amount`` (0..1) of the way to ``towards`` (white by default)."""
    a = min(max(float(amount), 0.0), 1.0)
    return tuple(int(round(c + (t - c) * a)) for c, t in zip(colour, towards, strict=True))
