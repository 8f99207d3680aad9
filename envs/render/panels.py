"""The text of a frame: the heads-up line, the legend, a selected body's panel, labels beside the
bodies, the scale bar, the key card or the caller's card, and a short message (the toast).

Text uses ``pygame.font`` (:class:`.text.Fonts`), started on first use and sized to the frame;
without it the frame is drawn without text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from crowdsteer.envs.core.state import LEARNER

from . import primitives as pr
from . import text as tx
from ._pygame import pygame
from .bodyinfo import body_rows, drawn_bodies
from .camera import Camera
from .controls import ViewControls, bindings
from .framer import Rect
from .legend import render_legend
from .style import Style
from .worldview import WorldView

SCALE_BARS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0)  # m
SCALE_BAR_SHARE = 0.22
"""The scale bar is the longest of ``SCALE_BARS`` that takes at most this share of the scene's
width on screen."""

Card = tuple[str, list[tuple[str, str]]]
"""A centred card: its title and its ``(key, text)`` rows."""

__all__ = ["SCALE_BARS", "SCALE_BAR_SHARE", "Card", "Panels", "format_info"]


def format_info(info: Mapping[str, Any] | None, step: int) -> str:
    """One heads-up line: ``step N`` then every scalar entry of ``info`` as ``key value``.

    Floats get three significant digits, booleans ``yes``/``no``; arrays of up to four numbers are
    listed; anything else is left out.
    """
    parts = []
    info = {} if info is None else info
    if "step" not in info:
        parts.append(f"step {int(step)}")
    for key, value in info.items():
        v = value
        if isinstance(v, np.ndarray) and v.ndim == 0 or isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, bool):
            text = "yes" if v else "no"
        elif isinstance(v, int):
            text = str(v)
        elif isinstance(v, float):
            text = f"{v:.3g}"
        elif isinstance(v, str):
            text = v
        elif isinstance(v, np.ndarray | list | tuple) and 0 < np.size(v) <= 4:
            arr = np.asarray(v)
            if arr.dtype.kind not in "biuf":
                continue
            text = "[" + ", ".join(f"{x:.3g}" for x in arr.reshape(-1).tolist()) + "]"
        else:
            continue
        parts.append(f"{key} {text}")
    return "   ".join(parts)


class Panels:
    """Draws the text of frames ``width`` px wide in ``style``; keeps the fonts, the legends and
    the labels it has set (a clip shows a few of them many times)."""

    def __init__(self, width: int, height: int, style: Style) -> None:
        self.width = int(width)
        self.style = style
        self.fonts = tx.Fonts(width, height, style)
        self._legends: dict[tuple[str, ...], pygame.Surface] = {}
        self._labels: dict[int, Any] = {}
        self.top = 0  # px kept for the heads-up line (only grows: the view stays put)

    def hud_text(
        self, info: Mapping[str, Any] | None, step: int, controls: ViewControls | None
    ) -> str:
        """The heads-up line of ``info``; with an interactive window's ``controls``, its pause
        and speed."""
        text = format_info(info, step)
        if controls is not None:
            if controls.paused:
                text += "   PAUSED (Space: resume, N: one step)"
            if controls.speed != 1.0:
                text += f"   speed x{controls.speed:g}"
        return text

    def hud_lines(self, text: str) -> list[str]:
        """``text`` broken into the lines that fit the frame's width."""
        return tx.hud_lines(self.fonts.main, text, self.width)

    def hud_height(self, lines: int) -> int:
        return tx.hud_height(self.fonts, lines)

    def legend(self, keys: tuple[str, ...]) -> pygame.Surface:
        """The legend panel of ``keys``."""
        legend = self._legends.get(keys)
        if legend is None:
            legend = render_legend(keys, self.fonts.small, self.width - 8, self.style)
            self._legends[keys] = legend
        return legend

    def body_panel(
        self, view: WorldView, body: int, extra: Mapping[str, Any] | None
    ) -> pygame.Surface:
        """The selected body's panel: what it is and does, and the caller's ``extra`` rows."""
        title, rows = body_rows(view, body, extra)
        return tx.rows_box(
            self.fonts.small, rows, self.style, title=title, max_width=max(self.width * 2 // 5, 200)
        )

    def draw_hud(self, surf: pygame.Surface, lines: list[str]) -> None:
        tx.draw_hud(surf, self.fonts.main, lines, self.style)

    def draw_labels(
        self, surf: pygame.Surface, camera: Camera, view: WorldView, marked: Mapping[int, str]
    ) -> None:
        """Every learner drawn is labelled, arrived and collided ones too: with its index next to
        it and to its goal when there are several, ``learner`` when it is the only one; a marked
        body (``marked``) with its own label in a ring around it instead."""
        learners = np.flatnonzero(drawn_bodies(view) & (view.kind == LEARNER))
        small = self.fonts.small
        if small is None:
            return
        st = self.style
        self._draw_marked(surf, camera, view, marked)
        learners = learners[~np.isin(learners, list(marked))]
        if learners.size == 0:
            return
        if np.count_nonzero(view.kind == LEARNER) == 1:
            (x, y) = camera.world_to_screen(view.pos[learners[0]]).tolist()
            r = max(float(camera.length(view.radius[learners[0]])), st.min_body_px)
            img = small.render("learner", True, st.learner_edge)
            surf.blit(img, (x + int(0.7 * r) + 1, y - int(0.7 * r) - img.get_height()))
            return
        pos = camera.world_to_screen(view.pos[learners]).tolist()
        rpx = np.maximum(camera.length(view.radius[learners]), st.min_body_px).tolist()
        goal = camera.world_to_screen(view.goal[learners]).tolist()
        active = view.active[learners].tolist()
        g = st.goal_px
        rows = zip(learners.tolist(), pos, rpx, goal, active, strict=True)
        for i, (x, y), r, (gx, gy), a in rows:
            img = self._labels.get(i)
            if img is None:
                img = small.render(str(i), True, st.learner_edge)
                self._labels[i] = img
            surf.blit(img, (x + int(0.7 * r) + 1, y - int(0.7 * r) - img.get_height()))
            if a:
                surf.blit(img, (gx + 2 * g + 3, gy - 3 * g - 1))

    def _draw_marked(
        self, surf: pygame.Surface, camera: Camera, view: WorldView, marked: Mapping[int, str]
    ) -> None:
        shown = drawn_bodies(view)
        for i, label in marked.items():
            if not (0 <= i < view.pos.shape[0] and shown[i]):
                continue
            (x, y) = camera.world_to_screen(view.pos[i]).tolist()
            r = int(max(float(camera.length(view.radius[i])), self.style.min_body_px)) + 5
            pr.ring(surf, self.style.selection, x, y, r, 3)
            img = self.fonts.main.render(label, True, self.style.selection)
            surf.blit(img, (x - img.get_width() // 2, y - r - img.get_height() - 1))

    def draw_scale_bar(
        self, surf: pygame.Surface, camera: Camera, world_rect: Rect, insets: tuple[int, int]
    ) -> None:
        """A bar of a round number of metres at the bottom right of the scene, labelled;
        ``insets``: ``(right, bottom)`` px kept for the panel and the legend."""
        font = self.fonts.small
        right, bottom = insets
        (x0, _), (x1, y1) = camera.world_to_screen(
            np.array([[world_rect[0], world_rect[3]], [world_rect[2], world_rect[1]]])
        ).tolist()
        room = SCALE_BAR_SHARE * max(x1 - x0, 1)
        metres = max((m for m in SCALE_BARS if m * camera.scale <= room), default=None)
        if metres is None or font is None:
            return
        length = int(round(metres * camera.scale))
        label = font.render(f"{metres:g} m", True, self.style.scale_bar)
        height = surf.get_height()
        xe = min(x1, self.width - right - 4)
        xs = xe - length
        y = height - bottom - max(self.style.margin // 2, 4) - 2
        col = self.style.scale_bar
        pygame.draw.line(surf, col, (xs, y), (xe, y), 3)
        pygame.draw.line(surf, col, (xs, y - 4), (xs, y + 3), 2)
        pygame.draw.line(surf, col, (xe, y - 4), (xe, y + 3), 2)
        surf.blit(label, (xs - label.get_width() - 6, y - label.get_height() // 2))

    def draw_cards(
        self, surf: pygame.Surface, controls: ViewControls, card: Card | None, toast: str | None
    ) -> None:
        """The key card (while ``controls.show_help``) or the caller's ``card``, centred, and the
        ``toast`` message at the top left, below the heads-up line (``top`` px)."""
        st, fonts = self.style, self.fonts
        width, height = surf.get_size()
        shown = None
        if controls.show_help:
            rows = [(b.label, b.description) for b in bindings(controls.play)]
            font = fonts.main if len(rows) * fonts.line_height() < height - 40 else fonts.small
            shown = tx.help_card(font, rows, st, "keys (H closes)")
        elif card is not None:
            shown = tx.help_card(fonts.main, card[1], st, card[0])
        if shown is not None:
            x = (width - shown.get_width()) // 2
            surf.blit(shown, (x, max((height - shown.get_height()) // 2, 0)))
        if toast is not None:
            box = tx.rows_box(fonts.small, [], st, title=toast, max_width=width - 8)
            surf.blit(box, (4, self.top + 4))
