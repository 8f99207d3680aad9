"""Text on the frame: fonts sized to the window, the heads-up line, boxes of rows, the help card.

Text is set in DejaVu Sans, regular weight (``fonts/DejaVuSans.ttf``, shipped with the package:
Latin-1 and a few symbols, under its own licence in ``fonts/LICENSE``), so that every frame reads
the same on every machine and every glyph is drawn (pygame's default font is a bold face whose
hinting drops the dot of an i at small sizes). Fonts come from ``pygame.font`` (started on first
use); where it is missing, :class:`Fonts` reports none and the viewer draws no text. Every box is
a translucent panel so the scene stays visible behind it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._pygame import pygame
from .style import Colour, Style, font_size_for

PAD = 6  # px inside a panel
FONT_FILE = Path(__file__).resolve().parent / "fonts" / "DejaVuSans.ttf"
"""The regular-weight face every text of the frame is set in."""


class Fonts:
    """The viewer's two fonts: ``main`` (heads-up line, panels) and ``small`` (legend, labels).

    Sizes follow the frame (``font_size_for``) unless ``style.font_size`` fixes the main one; the
    small font is 80 % of it. Both are None when pygame has no font support.
    """

    def __init__(self, width: int, height: int, style: Style) -> None:
        self.size = style.font_size or font_size_for(width, height)
        self.small_size = max(int(round(0.8 * self.size)), 10)
        self._loaded = False
        self.main: Any = None
        self.small: Any = None

    def load(self) -> bool:
        """Load the fonts once; False when text cannot be drawn."""
        if not self._loaded:
            self._loaded = True
            try:
                if not pygame.font.get_init():
                    pygame.font.init()
                face = str(FONT_FILE) if FONT_FILE.is_file() else None
                self.main = pygame.font.Font(face, self.size)
                self.small = pygame.font.Font(face, self.small_size)
            except (ImportError, NotImplementedError, OSError, RuntimeError, pygame.error):
                self.main = self.small = None
        return self.main is not None

    def line_height(self, small: bool = False) -> int:
        font = self.small if small else self.main
        return int(font.get_linesize()) if font is not None else 0


def fit_text(font: Any, text: str, room: int) -> str:
    """``text`` cut with an ellipsis so that it is at most ``room`` pixels wide."""
    if font.size(text)[0] <= room:
        return text
    while text and font.size(text + "...")[0] > room:
        text = text[:-1]
    return text + "..."


def wrap_text(font: Any, text: str, room: int) -> list[str]:
    """``text`` broken at spaces into lines at most ``room`` pixels wide (a word longer than a
    line is cut with an ellipsis)."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and font.size(lines[-1] + " " + word)[0] <= room:
            lines[-1] += " " + word
        else:
            lines.append(fit_text(font, word, room))
    return lines or [""]


def panel(size: tuple[int, int], style: Style, alpha: int | None = None) -> pygame.Surface:
    """A translucent box of ``size`` pixels in the style's panel colour."""
    box = pygame.Surface((max(size[0], 1), max(size[1], 1)), pygame.SRCALPHA)
    box.fill((*style.panel, style.panel_alpha if alpha is None else alpha))
    return box


HUD_SEPARATOR = "   "
HUD_MAX_LINES = 2


def hud_lines(font: Any, text: str, width: int) -> list[str]:
    """The heads-up text broken at its ``HUD_SEPARATOR``s into at most ``HUD_MAX_LINES`` lines
    that fit a frame ``width`` pixels wide (the last one cut with an ellipsis if needed)."""
    if font is None or not text:
        return []
    room = width - 4 * PAD
    lines: list[str] = []
    for part in text.split(HUD_SEPARATOR):
        if lines and font.size(lines[-1] + HUD_SEPARATOR + part)[0] <= room:
            lines[-1] += HUD_SEPARATOR + part
        else:
            lines.append(part)
    if len(lines) > HUD_MAX_LINES:
        lines = lines[: HUD_MAX_LINES - 1] + [HUD_SEPARATOR.join(lines[HUD_MAX_LINES - 1 :])]
    return [fit_text(font, line, room) for line in lines]


def hud_height(fonts: Fonts, lines: int) -> int:
    """Pixels that ``lines`` heads-up lines take at the top (what the camera keeps clear)."""
    if fonts.main is None or lines == 0:
        return 0
    return lines * fonts.line_height() + PAD + 4


def draw_hud(surface: pygame.Surface, font: Any, lines: Sequence[str], style: Style) -> None:
    """The heads-up lines in a panel at the top left."""
    if font is None or not lines:
        return
    imgs = [font.render(line, True, style.text) for line in lines]
    lh = font.get_linesize()
    box = panel((max(i.get_width() for i in imgs) + 2 * PAD, lh * len(imgs) + PAD), style)
    surface.blit(box, (4, 4))
    for k, img in enumerate(imgs):
        surface.blit(img, (4 + PAD, 4 + PAD // 2 + 1 + k * lh))


def rows_box(
    font: Any,
    rows: Sequence[tuple[str, str]],
    style: Style,
    title: str | None = None,
    max_width: int | None = None,
    colour: Colour | None = None,
    alpha: int | None = None,
) -> pygame.Surface:
    """A box of two-column rows (name, value) under an optional title line, at most
    ``max_width`` pixels wide (a long value wraps onto more lines, under its own column)."""
    lines: list[tuple[Any, Any]] = []
    text_colour = style.text if colour is None else colour
    name_w = max((font.size(n)[0] for n, _ in rows), default=0)
    gap = font.size("  ")[0]
    room = None if max_width is None else max_width - 2 * PAD - name_w - gap
    for name, value in rows:
        parts = [value] if room is None else wrap_text(font, value, max(room, 20))
        for k, v in enumerate(parts):
            label = font.render(name if k == 0 else "", True, tint_text(style))
            lines.append((label, font.render(v, True, text_colour)))
    head = None
    if title:
        t = title if max_width is None else fit_text(font, title, max_width - 2 * PAD)
        head = font.render(t, True, text_colour)
    lh = font.get_linesize()
    width = max(
        [name_w + gap + max((v.get_width() for _, v in lines), default=0)]
        + ([head.get_width()] if head is not None else [])
    )
    height = lh * (len(lines) + (1 if head is not None else 0))
    box = panel((width + 2 * PAD, height + 2 * PAD), style, alpha)
    y = PAD
    if head is not None:
        box.blit(head, (PAD, y))
        y += lh
    for n, v in lines:
        box.blit(n, (PAD, y))
        box.blit(v, (PAD + name_w + gap, y))
        y += lh
    return box


def tint_text(style: Style) -> Colour:
    """The muted colour of row names (the text colour, lightened)."""
    return tuple(int(c + (255 - c) * 0.35) for c in style.text)


def help_card(
    font: Any, rows: Sequence[tuple[str, str]], style: Style, title: str
) -> pygame.Surface:
    """The key card: one row per binding (keys, what they do) under ``title``, on a nearly
    opaque panel (it is read, not looked through)."""
    return rows_box(font, rows, style, title=title, alpha=240)
