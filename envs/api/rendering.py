"""The adapters' access to the renderer: created on the first ``render()`` call only."""

from __future__ import annotations

import numpy as np

from ..core.engine import CrowdBatch


class RenderHandle:
    """Lazily builds a viewer for one world of a batch and draws it on request."""

    def __init__(self, batch: CrowdBatch, render_mode: str | None, world: int = 0):
        self.batch = batch
        self.render_mode = render_mode
        self.world = world
        self.viewer = None

    def render(self, world: int | None = None) -> np.ndarray | None:
        if self.render_mode is None:
            return None
        if self.viewer is None:
            from ..render import Viewer

            c = self.batch.config
            self.viewer = Viewer(c.render_size, c.render_size, c.render_fps, self.render_mode)
        b = self.world if world is None else world
        sim = self.batch.sim
        s = sim.state
        sl = sim.learner_slice
        info = {
            "step": int(s.step_count[b]),
            "arrived": int(s.reached[b, sl].sum()),
            "collisions": int(s.collided[b, sl].sum()),
        }
        return self.viewer.draw(s, world=b, bounds=sim.bounds[b], info=info)

    def close(self) -> None:
        if self.viewer is not None:
            self.viewer.close()
            self.viewer = None
