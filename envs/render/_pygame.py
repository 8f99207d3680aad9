"""pygame, imported once for the renderer without its start-up banner (no module is started)."""

import os

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pygame  # noqa: E402
import pygame.gfxdraw  # noqa: E402, F401  (makes pygame.gfxdraw available)

__all__ = ["pygame"]
