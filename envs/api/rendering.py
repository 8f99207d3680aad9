"""The adapters' access to the renderer: viewers are created on the first ``render()`` call only."""

from __future__ import annotations

import numpy as np

from ..core.batch import CrowdBatch


class RenderHandle:
    """Lazily builds one viewer per rendered world of a batch and draws it on request.

    Each world gets its own viewer so that its trails follow that world only. In ``"human"`` mode
    only ``world`` (the displayed one) is drawn to the window. The config's ``render_overlays``
    and ``render_body`` choose the debug overlays.
    """

    def __init__(self, batch: CrowdBatch, render_mode: str | None, world: int = 0):
        self.batch = batch
        self.render_mode = render_mode
        self.world = world
        self.viewers: dict[int, object] = {}

    def _viewer(self, b: int):
        viewer = self.viewers.get(b)
        if viewer is None:
            from ..render import OverlayOptions, Viewer

            c = self.batch.config
            overlays = OverlayOptions(**{name: True for name in c.render_overlays})
            viewer = Viewer(c.render_size, c.render_size, c.render_fps, self.render_mode,
                            overlay_options=overlays, overlay_body=c.render_body)  # fmt: skip
            self.viewers[b] = viewer
        return viewer

    def render(self, world: int | None = None) -> np.ndarray | None:
        """Frame ``(H, W, 3) uint8`` of one world (rgb_array), or None (human mode, no mode)."""
        if self.render_mode is None:
            return None
        b = self.world if world is None else int(world)
        sim = self.batch.sim
        s = sim.state
        sl = sim.learner_slice
        info = {
            "step": int(s.step_count[b]),
            "arrived": int(s.reached[b, sl].sum()),
            "collisions": int(s.collided[b, sl].sum()),
        }
        viewer = self._viewer(b)
        data = None
        if viewer.overlay_options.any():
            from ..render import OverlaySettings, overlay_data_from_state

            data = overlay_data_from_state(
                s, b, viewer.overlay_options, viewer.overlay_body, trace=sim.buffers.trace,
                settings=OverlaySettings.from_config(self.batch.config),
            )  # fmt: skip
        return viewer.draw(s, world=b, bounds=sim.bounds[b], info=info, overlays=data)

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
