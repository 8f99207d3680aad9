"""The adapters' access to the renderer: viewers are created on the first ``render()`` call only."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..core.batch import CrowdBatch


class RenderHandle:
    """Lazily builds one viewer per rendered world of a batch and draws it on request.

    Each world gets its own viewer so that its trails follow that world only. Frames are
    ``render_size`` pixels wide and as tall as the scene's aspect needs (a corridor's frame is
    wide), set by the first world drawn and kept by every world and step. In ``"human"`` mode
    only ``world`` (the displayed one) is drawn, to an interactive window (pause, step, zoom,
    select a body; H lists the keys). The config's ``render_overlays`` and ``render_body`` choose
    the debug overlays. ``driver`` names what drives the learners, for the selection panel.
    """

    def __init__(
        self,
        batch: CrowdBatch,
        render_mode: str | None,
        world: int = 0,
        driver: str = "the agent's actions",
    ):
        self.batch = batch
        self.render_mode = render_mode
        self.world = world
        self.driver = driver
        self.viewers: dict[int, object] = {}

    def _viewer(self, b: int):
        viewer = self.viewers.get(b)
        if viewer is None:
            from ..render import OverlayOptions, OverlaySettings, Viewer, ViewerSettings

            c = self.batch.config
            overlays = OverlayOptions(**{name: True for name in c.render_overlays})
            settings = OverlaySettings.from_config(c)
            first = next(iter(self.viewers.values()), None)
            viewer = Viewer(
                c.render_size,
                c.render_size if first is None else first.height,
                c.render_fps,
                self.render_mode,
                settings=ViewerSettings(
                    overlay_options=overlays,
                    overlay_body=c.render_body,
                    overlay_settings=settings,
                    fit_height=first is None,
                ),
            )
            self.viewers[b] = viewer
        return viewer

    def inspect(self, b: int, body: int) -> Mapping[str, Any]:
        """Rows of the selection panel only the environment knows: what drives a learner and its
        reward terms of the last step."""
        if body >= self.batch.num_learners:
            return {}
        rows: dict[str, Any] = {"driven by": self.driver}
        terms = self.batch.all_terms()  # the package's terms, then the scenario's own
        for t, key in enumerate(self.batch.term_names):
            rows[key.replace("_", " ", 1)] = float(terms[b, body, t])
        return rows

    def render(self, world: int | None = None) -> np.ndarray | None:
        """Frame ``(H, W, 3) uint8`` of one world (rgb_array), or None (human mode, no mode)."""
        if self.render_mode is None:
            return None
        b = self.world if world is None else int(world)
        sim = self.batch.sim
        s = sim.state
        sl = slice(0, sim.num_learners)
        info = {
            "step": int(s.step_count[b]),
            "arrived": int(s.reached[b, sl].sum()),
            "collisions": int(s.collided[b, sl].sum()),
        }
        return self._viewer(b).draw(
            s,
            world=b,
            bounds=sim.state.bounds[b],
            info=info,
            inspect=lambda i: self.inspect(b, i),
            trace=sim.buffers.trace,
        )

    def render_all(self) -> tuple[np.ndarray | None, ...]:
        """One frame per world (rgb_array); in human mode the displayed world is drawn."""
        if self.render_mode == "human":
            self.render()
            return tuple(None for _ in range(self.batch.num_worlds))
        return tuple(self.render(b) for b in range(self.batch.num_worlds))

    def close(self) -> None:
        for viewer in self.viewers.values():
            viewer.close()
        self.viewers.clear()
