"""``crowdsteer demo`` and ``crowdsteer render``: watch scripted crowds, live or as a video.

The demo drives every learner of one world with a scripted baseline, among scripted pedestrians
and flock units, and shows it in a window when a display exists; headless, it writes a GIF (or an
MP4 when the name ends in ``.mp4`` and ``imageio-ffmpeg`` is installed) and a PNG of step 20 next
to it.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from crowdsteer.baselines import load_policy, make_policy
from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.core.engine import CrowdBatch

DEMO_SNAPSHOT_STEP = 20
"""The step written as the demo's PNG: everyone is still walking and meeting mid-scene."""

DEMO_CONFIG = {
    "circle_crossing": {"n_learners": 3, "n_pedestrians": 6, "n_flock": 6},
    "square_crossing": {"n_learners": 3, "n_pedestrians": 8, "n_flock": 6},
    "corridor": {"n_learners": 2, "n_pedestrians": 8},
    "crossing_flows": {"n_learners": 3, "n_pedestrians": 8, "n_flock": 4},
    "obstacle_field": {"n_learners": 3, "n_pedestrians": 5},
    "bottleneck": {"n_learners": 2, "n_pedestrians": 6},
    "path_course": {"n_learners": 2, "n_pedestrians": 4, "n_flock": 4},
}


def has_display() -> bool:
    """True when a window can be opened (an X or Wayland display, not the dummy driver)."""
    if os.environ.get("SDL_VIDEODRIVER") in ("dummy", "offscreen"):
        return False
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _policy(name: str, config: CrowdConfig):
    if name.endswith(".zip") or os.path.sep in name:
        return load_policy(name, config=config)
    return make_policy(name, config=config)


def _write_video(frames: list[np.ndarray], out: Path, fps: int) -> Path:
    import imageio.v2 as imageio

    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix == ".mp4":
        try:
            imageio.mimwrite(out, frames, fps=fps, macro_block_size=1)
            return out
        except Exception:  # noqa: BLE001  (no ffmpeg plugin: fall back to GIF)
            out = out.with_suffix(".gif")
    imageio.mimwrite(out, frames, duration=1000 / fps, loop=0)
    return out


def run_episodes(
    scenario: str,
    policy: str,
    steps: int,
    seed: int,
    mode: str,
    episodes: int = 1,
    overlays: bool = False,
    **config_overrides,
) -> list[np.ndarray]:
    """Roll out ``episodes`` episodes (at most ``steps`` steps each) in one world, drawing every
    step in ``mode`` ("human" or "rgb_array"); returns the rgb frames (empty in human mode)."""
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    from crowdsteer.envs.render import OverlayOptions, Viewer, overlay_data_from_state

    kwargs = {**DEMO_CONFIG.get(scenario, {}), **config_overrides}
    config = CrowdConfig.from_kwargs(scenario=scenario, max_steps=steps, **kwargs)
    batch = CrowdBatch(config, 1)
    pol = _policy(policy, config)
    viewer = Viewer(config.render_size, config.render_size, config.render_fps, mode)
    options = OverlayOptions(
        steering_vectors=overlays,
        detection_boxes=overlays,
        view_cones=overlays,
        personal_space=overlays,
        lookahead=overlays,
    )
    frames: list[np.ndarray] = []
    batch.seed([seed])
    for _ in range(episodes):
        batch.reset()
        viewer.reset_trails()
        while True:
            s, sl = batch.state, batch.sim.learner_slice
            info = {
                "scenario": scenario,
                "policy": policy,
                "step": int(s.step_count[0]),
                "arrived": int(s.reached[0, sl].sum()),
                "collisions": int(s.collided[0, sl].sum()),
            }
            data = overlay_data_from_state(s, 0, options) if overlays else None
            frame = viewer.draw(s, 0, batch.sim.bounds[0], info, data, options)
            if frame is not None:
                frames.append(frame)
            if mode == "human" and viewer.window_closed:
                break
            if batch.sim.truncated()[0] or (episodes > 1 and batch.world_done()[0]):
                break  # a single-episode demo keeps the crowd moving until the time limit
            actions = pol.act(batch.obs.reshape(-1, batch.layout.dim))
            batch.step(np.asarray(actions, np.float64).reshape(1, batch.num_learners, 2))
    viewer.close()
    return frames


def run_demo(
    scenario: str = "circle_crossing",
    policy: str = "right_of_way",
    steps: int = 120,
    out: str = "crowdsteer_demo.gif",
    seed: int = 0,
    window: str = "auto",
) -> int:
    """Show the demo in a window, or write it to ``out`` when there is no display."""
    live = window == "yes" or (window == "auto" and has_display())
    if live:
        run_episodes(scenario, policy, steps, seed, "human")
        print(f"demo: {scenario} with {policy} learners shown in a window")
        return 0
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    frames = run_episodes(scenario, policy, steps, seed, "rgb_array")
    path = _write_video(frames, Path(out), fps=10)
    png = path.with_suffix(".png")
    import imageio.v2 as imageio

    imageio.imwrite(png, frames[min(DEMO_SNAPSHOT_STEP, len(frames) - 1)])
    print(f"demo: {scenario}, learners driven by {policy}: {len(frames)} frames -> {path}, {png}")
    return 0


def render_cli(args) -> int:
    """``crowdsteer render``: episodes of a policy to an MP4 or GIF, or one frame to a PNG.

    With ``--out NAME.png`` the frame of step ``--frame`` of the first episode is written, which
    is the quickest way to look at a scenario with its overlays.
    """
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    out = Path(args.out)
    png = out.suffix == ".png"
    frames = run_episodes(
        args.scenario,
        args.policy,
        steps=args.frame + 1 if png else args.steps,
        seed=args.seed,
        mode="rgb_array",
        episodes=1 if png else args.episodes,
        overlays=args.overlays,
    )
    if png:
        import imageio.v2 as imageio

        out.parent.mkdir(parents=True, exist_ok=True)
        imageio.imwrite(out, frames[min(args.frame, len(frames) - 1)])
        print(f"wrote frame {min(args.frame, len(frames) - 1)} to {out}")
        return 0
    path = _write_video(frames, out, fps=10)
    print(f"wrote {len(frames)} frames to {path}")
    return 0
