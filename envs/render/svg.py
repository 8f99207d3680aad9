"""One frame of a world as an SVG document: vector output for papers, written as text (no pygame
surface is drawn).

The picture is the viewer's clean style (no heads-up line): the scene's bounds and metre grid,
obstacles, walls, waypoint paths, goals, bodies (learner and pedestrian discs with a heading line,
flock units as Bourg & Seemann's craft), learners that arrived or collided (faded, marked), every
learner labelled, a scale bar and a legend of exactly the marks drawn. It uses the viewer's
:class:`.camera.Camera` and :class:`.style.Style`, so it matches a PNG of the same step; the
debug overlays are raster-only. It reads the state and changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from xml.sax.saxutils import escape

import numpy as np

from crowdsteer.envs.core.state import FLOCK, LEARNER, PEDESTRIAN, WorldState

from .bodyinfo import drawn_bodies
from .camera import Camera
from .panels import SCALE_BAR_SHARE, SCALE_BARS
from .primitives import CRAFT_POLY
from .scene import GRID_STEPS
from .style import Colour, Style, font_size_for, tint
from .worldview import world_view

LEGEND_LABELS = {
    "learner": "learner",
    "pedestrian": "pedestrian",
    "flock": "flock unit",
    "learner_goal": "learner goal",
    "pedestrian_goal": "pedestrian goal",
    "arrived": "learner arrived",
    "collided": "learner collided",
    "obstacle": "obstacle",
    "wall": "wall",
    "path": "path",
}
"""The SVG's legend entries, in display order (the raster legend's labels)."""

CHAR_EM = 0.6
"""Width of a label's character in font sizes, to lay the legend out (DejaVu Sans averages
about 0.55; a little more keeps entries apart)."""


def _rgb(c: Colour) -> str:
    return f"rgb({c[0]},{c[1]},{c[2]})"


def _f(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


def svg_frame(
    state: WorldState,
    world: int = 0,
    bounds: Sequence[float] | np.ndarray | None = None,
    width: int = 800,
    style: Style | None = None,
) -> str:
    """World ``world`` of ``state`` as an SVG document ``width`` px wide and as tall as the scene.

    ``bounds``: ``(xmin, ymin, xmax, ymax)`` of the scene (None: the world's own). Returns the
    document's text.
    """
    st = Style() if style is None else style
    view = world_view(state, world)
    if bounds is None:
        bounds = state.bounds[world]
    b = np.asarray(bounds, np.float64).reshape(-1)
    xmin, xmax = min(b[0], b[2]), max(b[0], b[2])
    ymin, ymax = min(b[1], b[3]), max(b[1], b[3])
    shown = drawn_bodies(view)
    font = st.font_size or font_size_for(width, width)
    keys = _legend_keys(view, shown)
    legend, legend_h = _legend(keys, st, font, width)
    m = st.margin
    span_x, span_y = max(xmax - xmin, 1e-6), max(ymax - ymin, 1e-6)
    height = int(round(2 * m + (width - 2 * m) * span_y / span_x + legend_h))
    cam = Camera((xmin, ymin, xmax, ymax), width, height, m, insets=(0, 0, 0, legend_h))
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Arial, sans-serif" '
        f'font-size="{font}">',
        f'<rect width="{width}" height="{height}" fill="{_rgb(st.outside)}"/>',
    ]
    (x0, y0), (x1, y1) = cam.world_to_screen_f(np.array([[xmin, ymax], [xmax, ymin]])).tolist()
    out.append(
        f'<rect x="{_f(x0)}" y="{_f(y0)}" width="{_f(x1 - x0)}" height="{_f(y1 - y0)}" '
        f'fill="{_rgb(st.background)}" stroke="{_rgb(st.border)}"/>'
    )
    step = next((g for g in GRID_STEPS if g * cam.scale >= 12.0), GRID_STEPS[-1])
    grid = [f'<g stroke="{_rgb(st.grid)}" stroke-width="1">']
    for x in np.arange(np.ceil(xmin / step) * step, xmax + 1e-9, step):
        sx = cam.world_to_screen_f(np.array([x, ymin]))[0]
        grid.append(f'<line x1="{_f(sx)}" y1="{_f(y0)}" x2="{_f(sx)}" y2="{_f(y1)}"/>')
    for y in np.arange(np.ceil(ymin / step) * step, ymax + 1e-9, step):
        sy = cam.world_to_screen_f(np.array([xmin, y]))[1]
        grid.append(f'<line x1="{_f(x0)}" y1="{_f(sy)}" x2="{_f(x1)}" y2="{_f(sy)}"/>')
    out += grid + ["</g>"]
    out += _scene(view, cam, st, shown)
    out += _labels(view, cam, st, shown, font)
    out += _scale_bar(cam, st, (x0, x1), height - legend_h, font)
    out.append(f'<g transform="translate(0,{height - legend_h})">{legend}</g>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _scene(view, cam: Camera, st: Style, shown: np.ndarray) -> list[str]:
    out: list[str] = []
    act = view.obstacle_active
    for (x, y), r in zip(
        cam.world_to_screen_f(view.obstacle_pos[act]).tolist(),
        cam.length(view.obstacle_radius[act]).tolist(),
        strict=True,
    ):
        out.append(_circle(x, y, r, st.obstacle, st.obstacle_edge))
    w = max(3.0, float(cam.length(0.1)))
    for (ax, ay), (bx, by) in cam.world_to_screen_f(view.walls[view.wall_active]).tolist():
        out.append(
            f'<line x1="{_f(ax)}" y1="{_f(ay)}" x2="{_f(bx)}" y2="{_f(by)}" '
            f'stroke="{_rgb(st.wall)}" stroke-width="{_f(w)}" stroke-linecap="round"/>'
        )
    for i in np.flatnonzero(view.active & (view.path_len >= 2)).tolist():
        pts = cam.world_to_screen_f(view.path[i, : view.path_len[i]])
        text = " ".join(f"{_f(x)},{_f(y)}" for x, y in pts.tolist())
        out.append(
            f'<polyline points="{text}" fill="none" stroke="{_rgb(st.path)}" stroke-width="2"/>'
        )
    g = st.goal_px
    for i in np.flatnonzero(view.active & (view.kind == LEARNER)).tolist():
        x, y = cam.world_to_screen_f(view.goal[i]).tolist()
        out.append(
            f'<path d="M{_f(x)},{_f(y)} v{-3 * g} l{2 * g},{g} l{-2 * g},{g}" '
            f'fill="{_rgb(st.learner)}" stroke="{_rgb(st.learner_edge)}" stroke-width="1.5"/>'
        )
    ped_goal = tint(st.pedestrian, 0.2, (0, 0, 0))
    for i in np.flatnonzero(view.active & (view.kind == PEDESTRIAN)).tolist():
        x, y = cam.world_to_screen_f(view.goal[i]).tolist()
        out.append(_cross(x, y, g, ped_goal))
    for i in np.flatnonzero(shown).tolist():
        x, y = cam.world_to_screen_f(view.pos[i]).tolist()
        r = max(float(cam.length(view.radius[i])), st.min_body_px)
        h = float(view.heading[i])
        if not view.active[i]:  # a learner that left its episode, faded and marked
            hit = bool(view.collided[i] and not view.reached[i])
            mark = st.collided if hit else st.reached
            out.append(
                _circle(
                    x,
                    y,
                    r,
                    tint(st.learner, st.finished_tint),
                    tint(st.learner_edge, st.finished_tint),
                )
            )
            out.append(_circle(x, y, r + 3, None, mark, 2))
            if hit:
                k = max(0.75 * r, 3.0)
                out.append(_cross(x, y, k, mark))
        elif view.kind[i] == FLOCK:
            rr = max(r, st.min_craft_px / 2.0)
            c, s = np.cos(h), np.sin(h)
            pts = [
                (x + rr * (f * c - lft * s), y - rr * (f * s + lft * c)) for f, lft in CRAFT_POLY
            ]
            text = " ".join(f"{_f(px)},{_f(py)}" for px, py in pts)
            out.append(
                f'<polygon points="{text}" fill="{_rgb(st.flock)}" stroke="{_rgb(st.flock_edge)}"/>'
            )
        else:
            fill, edge = (
                (st.learner, st.learner_edge)
                if view.kind[i] == LEARNER
                else (st.pedestrian, st.pedestrian_edge)
            )
            out.append(_circle(x, y, r, fill, edge))
            if r >= 5:
                tx, ty = x + (r - 1) * np.cos(h), y - (r - 1) * np.sin(h)
                out.append(
                    f'<line x1="{_f(x)}" y1="{_f(y)}" x2="{_f(tx)}" y2="{_f(ty)}" '
                    f'stroke="{_rgb(st.heading)}" stroke-width="2"/>'
                )
    return out


def _cross(x: float, y: float, k: float, colour: Colour) -> str:
    """An x of half size ``k`` centred on ``(x, y)``."""
    d = f"M{_f(x - k)},{_f(y - k)} l{_f(2 * k)},{_f(2 * k)} M{_f(x - k)},{_f(y + k)} "
    return f'<path d="{d}l{_f(2 * k)},{_f(-2 * k)}" stroke="{_rgb(colour)}" stroke-width="2"/>'


def _line(x1: float, y1: float, x2: float, y2: float, colour: Colour, width: float) -> str:
    ends = f'x1="{_f(x1)}" y1="{_f(y1)}" x2="{_f(x2)}" y2="{_f(y2)}"'
    return f'<line {ends} stroke="{_rgb(colour)}" stroke-width="{_f(width)}"/>'


def _circle(
    x: float, y: float, r: float, fill: Colour | None, edge: Colour, width: float = 1.5
) -> str:
    f = "none" if fill is None else _rgb(fill)
    centre = f'cx="{_f(x)}" cy="{_f(y)}" r="{_f(r)}"'
    return f'<circle {centre} fill="{f}" stroke="{_rgb(edge)}" stroke-width="{_f(width)}"/>'


def _labels(view, cam: Camera, st: Style, shown: np.ndarray, font: int) -> list[str]:
    """Every learner drawn: its index beside it and its goal, or ``learner`` when it is the only
    one."""
    learners = np.flatnonzero(shown & (view.kind == LEARNER)).tolist()
    alone = np.count_nonzero(view.kind == LEARNER) == 1
    out = []
    small = max(font - 2, 9)
    for i in learners:
        x, y = cam.world_to_screen_f(view.pos[i]).tolist()
        r = max(float(cam.length(view.radius[i])), st.min_body_px)
        text = "learner" if alone else str(i)
        spots = [(x + 0.7 * r + 1, y - 0.7 * r - 1)]
        if view.active[i] and not alone:  # its goal's flag too
            gx, gy = cam.world_to_screen_f(view.goal[i]).tolist()
            spots.append((gx + 2 * st.goal_px + 3, gy - 2 * st.goal_px))
        for tx, ty in spots:
            out.append(
                f'<text x="{_f(tx)}" y="{_f(ty)}" font-size="{small}" '
                f'fill="{_rgb(st.learner_edge)}">{text}</text>'
            )
    return out


def _scale_bar(
    cam: Camera, st: Style, xs: tuple[float, float], bottom: int, font: int
) -> list[str]:
    x0, x1 = xs
    room = SCALE_BAR_SHARE * max(x1 - x0, 1)
    metres = max((m for m in SCALE_BARS if m * cam.scale <= room), default=None)
    if metres is None:
        return []
    length = metres * cam.scale
    y = bottom - max(st.margin // 2, 4) - 2
    c = _rgb(st.scale_bar)
    xe = x1
    xs_ = xe - length
    return [
        f'<path d="M{_f(xs_)},{_f(y)} H{_f(xe)} M{_f(xs_)},{_f(y - 4)} v7 '
        f'M{_f(xe)},{_f(y - 4)} v7" stroke="{c}" stroke-width="2.5" fill="none"/>',
        f'<text x="{_f(xs_ - 6)}" y="{_f(y)}" text-anchor="end" dominant-baseline="middle" '
        f'font-size="{max(font - 2, 9)}" fill="{c}">{metres:g} m</text>',
    ]


def _legend_keys(view, shown: np.ndarray) -> list[str]:
    drawn = set()
    kinds = {LEARNER: "learner", PEDESTRIAN: "pedestrian", FLOCK: "flock"}
    for k, key in kinds.items():
        if np.any(view.active & (view.kind == k)):
            drawn.add(key)
    if np.any(view.active & (view.kind == LEARNER)):
        drawn.add("learner_goal")
    if np.any(view.active & (view.kind == PEDESTRIAN)):
        drawn.add("pedestrian_goal")
    gone = shown & ~view.active
    if np.any(gone & view.reached):
        drawn.add("arrived")
    if np.any(gone & view.collided & ~view.reached):
        drawn.add("collided")
    if np.any(view.obstacle_active):
        drawn.add("obstacle")
    if np.any(view.wall_active):
        drawn.add("wall")
    if np.any(view.active & (view.path_len >= 2)):
        drawn.add("path")
    return [k for k in LEGEND_LABELS if k in drawn]


def _legend(keys: list[str], st: Style, font: int, width: int) -> tuple[str, int]:
    """The legend's SVG group (origin at its top left) and its height in px."""
    if not keys:
        return "", 0
    s = int(font * 1.4)
    gap, pad = max(s // 2, 6), 6
    rows: list[list[tuple[str, float]]] = [[]]
    x = pad
    for key in keys:
        w = s + 4 + CHAR_EM * font * len(LEGEND_LABELS[key])
        if rows[-1] and x + w > width - pad:
            rows.append([])
            x = pad
        rows[-1].append((key, x))
        x += w + gap
    out = []
    for r, row in enumerate(rows):
        y = pad + r * s + s / 2
        for key, x in row:
            out.append(_icon(key, x + s / 2, y, s, st))
            out.append(
                f'<text x="{_f(x + s + 4)}" y="{_f(y)}" dominant-baseline="middle" '
                f'fill="{_rgb(st.text)}">{escape(LEGEND_LABELS[key])}</text>'
            )
    return "".join(out), 2 * pad + len(rows) * s


def _icon(key: str, x: float, y: float, s: int, st: Style) -> str:
    r = max(s / 2 - 2, 3)
    if key in ("learner", "pedestrian"):
        fill = st.learner if key == "learner" else st.pedestrian
        edge = st.learner_edge if key == "learner" else st.pedestrian_edge
        return _circle(x, y, r, fill, edge)
    if key == "flock":
        pts = " ".join(f"{_f(x + r * (f - 0.25))},{_f(y - r * lft)}" for f, lft in CRAFT_POLY)
        return f'<polygon points="{pts}" fill="{_rgb(st.flock)}" stroke="{_rgb(st.flock_edge)}"/>'
    if key == "learner_goal":
        g = max(s // 4, 2)
        return (
            f'<path d="M{_f(x - g / 2)},{_f(y + 1.5 * g)} v{-3 * g} l{2 * g},{g} l{-2 * g},{g}" '
            f'fill="{_rgb(st.learner)}" stroke="{_rgb(st.learner_edge)}"/>'
        )
    if key == "pedestrian_goal":
        g = max(s // 3, 3)
        return _cross(x, y, g, tint(st.pedestrian, 0.2, (0, 0, 0)))
    if key in ("arrived", "collided"):
        mark = st.reached if key == "arrived" else st.collided
        rr = max(s / 2 - 4, 3)
        text = _circle(
            x, y, rr, tint(st.learner, st.finished_tint), tint(st.learner_edge, st.finished_tint)
        )
        text += _circle(x, y, rr + 3, None, mark, 2)
        if key == "collided":
            k = max(0.75 * rr, 3)
            text += _cross(x, y, k, mark)
        return text
    if key == "obstacle":
        return _circle(x, y, r, st.obstacle, st.obstacle_edge)
    if key == "wall":
        return _line(x - s / 2, y, x + s / 2, y, st.wall, 4)
    # path
    return _line(x - s / 2, y + 3, x + s / 2, y - 3, st.path, 2)
