"""``crowdsteer demo`` and ``crowdsteer render``: watch scripted crowds, live or as a video.

The demo drives every learner of one world with a scripted baseline, among scripted pedestrians
and flock units, and shows it in an interactive window when a display exists; headless, it writes
a GIF (or an MP4 with the ``video`` extra) and a PNG of step 20 next to it. An episode ends when
every learner has arrived or collided (or at its time limit) and the next one starts at once, so
the clip shows learners walking for nearly all of its frames.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from crowdsteer.envs.batch import make_batch
from crowdsteer.envs.core.config import CrowdConfig

from ..evaluation.evaluate import resolve_policy
from ..support.preflight import UsageError, has_display, output_file, window_error

DEMO_SNAPSHOT_STEP = 20
"""The step written as the demo's PNG: everyone is still walking and meeting mid-scene."""

VIDEO_SUFFIXES = (".gif", ".mp4")
FRAME_SUFFIXES = (".png",)
VIDEO_FPS = 10

DEMO_CONFIG = {
    "circle_crossing": {"n_learners": 3, "n_pedestrians": 6, "n_flock": 6},
    "square_crossing": {"n_learners": 3, "n_pedestrians": 8, "n_flock": 6},
    "corridor": {"n_learners": 2, "n_pedestrians": 8},
    "crossing_flows": {"n_learners": 3, "n_pedestrians": 8, "n_flock": 4},
    "obstacle_field": {"n_learners": 3, "n_pedestrians": 5},
    "bottleneck": {"n_learners": 2, "n_pedestrians": 6},
    "path_course": {"n_learners": 2, "n_pedestrians": 4, "n_flock": 4},
}
"""Crowd sizes of the demo per scenario (``CrowdConfig`` keywords)."""


def demo_config(scenario: str, max_steps: int, **overrides: Any) -> CrowdConfig:
    """The demo's config of ``scenario``: its ``DEMO_CONFIG`` counts, then ``overrides``."""
    kwargs = {**DEMO_CONFIG.get(scenario, {}), **overrides}
    return CrowdConfig.from_kwargs(scenario=scenario, max_steps=max_steps, **kwargs)


def write_video(frames: list[np.ndarray], out: Path, fps: int = VIDEO_FPS) -> Path:
    """Write ``frames`` to ``out`` (``.gif``, or ``.mp4`` with imageio-ffmpeg); returns ``out``."""
    import imageio.v2 as imageio

    if out.suffix.lower() not in VIDEO_SUFFIXES:
        raise UsageError(f"argument --out: use one of {', '.join(VIDEO_SUFFIXES)}, got {out}")
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix.lower() == ".mp4":
        imageio.mimwrite(out, frames, fps=fps, macro_block_size=1)
    else:
        imageio.mimwrite(out, frames, duration=1000 / fps, loop=0)
    return out


@dataclass
class Clip:
    """What ``run_clip`` drew: ``frames`` (rgb_array mode), how many of them show a learner still
    walking, and the episodes begun."""

    frames: list[np.ndarray] = field(default_factory=list)
    drawn: int = 0
    with_learner: int = 0
    episodes: int = 0


def run_clip(
    scenario: str,
    policy: str,
    seed: int,
    mode: str,
    *,
    frames: int | None = None,
    episodes: int | None = None,
    max_steps: int = 200,
    end_when_done: bool = True,
    overlays: bool = False,
    **config_overrides: Any,
) -> Clip:
    """Roll out episodes in one world and draw every step in ``mode`` ("human" or "rgb_array").

    An episode ends when every learner has left it (``end_when_done``) or at ``max_steps``; the
    next begins from the world's seeded generator. Stops after ``frames`` frames or ``episodes``
    episodes (at least one must be given), or when the window is closed. With ``overlays`` the
    debug overlays follow the first learner still walking.
    """
    if frames is None and episodes is None:
        raise ValueError("run_clip needs frames or episodes")
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    from crowdsteer.envs.api.rendering import RenderHandle
    from crowdsteer.envs.render import (
        OverlayOptions,
        OverlaySettings,
        Viewer,
        learner_trace_to_world,
    )

    config = demo_config(scenario, max_steps, **config_overrides)
    watched = overlays or mode == "human"
    batch = make_batch(config, 1, trace=watched)
    pol = resolve_policy(policy, config)
    handle = RenderHandle(batch, None, driver=policy)
    settings = OverlaySettings.from_config(config)
    viewer = Viewer(
        config.render_size,
        config.render_size,
        config.render_fps,
        mode,
        overlay_options=OverlayOptions.all() if overlays else OverlayOptions(),
        flock_view=config.flock_view,
        flock_view_radius=settings.view_radius,
        overlay_settings=settings,
        title=f"crowdsteer demo: {scenario}, learners driven by {policy}",
    )
    # What the overlays draw: the crowd's vectors recorded by the step, and the learners' from
    # their baseline when it acted (a trained model has none: only what it asked for is drawn).
    shown = batch.sim.buffers.trace.copy()
    traced = watched and hasattr(pol, "trace")
    clip = Clip()
    batch.seed([seed])
    s, sim = batch.state, batch.sim
    sl = sim.learner_slice
    n_learners = batch.num_learners
    try:
        while episodes is None or clip.episodes < episodes:
            batch.reset()
            viewer.reset_trails()
            clip.episodes += 1
            while True:
                walking = np.flatnonzero(s.active[0, sl])
                info = {
                    "scenario": scenario,
                    "policy": policy,
                    "episode": clip.episodes,
                    "step": int(s.step_count[0]),
                    "arrived": int(s.reached[0, sl].sum()),
                    "collisions": int(s.collided[0, sl].sum()),
                }
                if overlays and walking.size:
                    viewer.overlay_body = int(walking[0])
                    info["overlays"] = f"learner {int(walking[0])}"
                shown[:, n_learners:] = sim.buffers.trace[:, n_learners:]
                if not traced:
                    shown[:, :n_learners] = sim.buffers.trace[:, :n_learners]
                frame = viewer.draw(
                    s, 0, sim.bounds[0], info, inspect=lambda i: handle.inspect(0, i), trace=shown
                )
                clip.drawn += 1
                clip.with_learner += int(walking.size > 0)
                if frame is not None:
                    clip.frames.append(frame)
                if viewer.window_closed or (frames is not None and clip.drawn >= frames):
                    return clip
                if sim.truncated()[0] or (end_when_done and batch.world_done()[0]):
                    break
                obs = batch.obs.reshape(-1, batch.layout.dim)
                if traced:
                    rows = np.zeros((len(obs),) + shown.shape[2:])
                    actions = pol.act(obs, trace=rows)
                    shown[0, :n_learners] = learner_trace_to_world(batch, 0, rows)
                else:
                    actions = pol.act(obs)
                batch.step(np.asarray(actions, np.float64).reshape(1, n_learners, 2))
        return clip
    finally:
        viewer.close()


def _episodes(n: int) -> str:
    return f"{n} episode" + ("" if n == 1 else "s")


def run_demo(
    scenario: str = "circle_crossing",
    policy: str = "right_of_way",
    steps: int = 120,
    out: str = "crowdsteer_demo.gif",
    seed: int = 0,
    window: str = "auto",
) -> int:
    """Show ``steps`` steps of the demo in a window, or write them to ``out`` when there is no
    display (and the PNG of step ``DEMO_SNAPSHOT_STEP`` beside it)."""
    live = window == "yes" or (window == "auto" and has_display())
    if window == "yes" and not has_display():
        raise UsageError(
            "argument --window: 'yes' needs a display, and none is set (DISPLAY, WAYLAND_DISPLAY); "
            "use --window no to write a GIF"
        )
    if live:
        from crowdsteer.envs.render._pygame import pygame

        try:
            clip = run_clip(scenario, policy, seed, "human", frames=steps)
            print(f"demo: {scenario} with {policy} learners, {clip.drawn} steps shown in a window")
            return 0
        except pygame.error as err:
            if window == "yes":
                raise window_error(err, "use --window no to write a GIF") from err
            print(f"demo: could not open a window ({err}); writing {out} instead", file=sys.stderr)
    path = output_file(out, VIDEO_SUFFIXES)
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    clip = run_clip(scenario, policy, seed, "rgb_array", frames=steps)
    path = write_video(clip.frames, path)
    png = path.with_suffix(".png")
    import imageio.v2 as imageio

    imageio.imwrite(png, clip.frames[min(DEMO_SNAPSHOT_STEP, len(clip.frames) - 1)])
    share = clip.with_learner / max(clip.drawn, 1)
    print(
        f"demo: {scenario}, learners driven by {policy}: {len(clip.frames)} frames "
        f"({_episodes(clip.episodes)}, learners walking in {share:.0%}) -> {path}, {png}"
    )
    return 0


def render_cli(args) -> int:
    """``crowdsteer render``: episodes of a policy to a GIF or MP4, or one frame to a PNG.

    With ``--out NAME.png`` the frame of step ``--frame`` of the first episode is written (the
    crowd keeps moving after the learners finish), which is the quickest way to look at a scenario
    with its overlays.
    """
    png = Path(args.out).suffix.lower() in FRAME_SUFFIXES
    out = output_file(args.out, VIDEO_SUFFIXES + FRAME_SUFFIXES)
    if png and args.frame > args.steps:
        raise UsageError(
            f"argument --frame: must be at most --steps ({args.steps}), got {args.frame}"
        )
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    if png:
        clip = run_clip(
            args.scenario,
            args.policy,
            args.seed,
            "rgb_array",
            episodes=1,
            max_steps=max(args.frame, 1),  # frame 0 is the start: one step draws it
            end_when_done=False,
            overlays=args.overlays,
        )
        import imageio.v2 as imageio

        out.parent.mkdir(parents=True, exist_ok=True)
        imageio.imwrite(out, clip.frames[args.frame])
        print(f"wrote step {args.frame} to {out}")
        return 0
    clip = run_clip(
        args.scenario,
        args.policy,
        args.seed,
        "rgb_array",
        episodes=args.episodes,
        max_steps=args.steps,
        overlays=args.overlays,
    )
    path = write_video(clip.frames, out)
    share = clip.with_learner / max(clip.drawn, 1)
    print(
        f"wrote {len(clip.frames)} frames of {_episodes(clip.episodes)} to {path} "
        f"(learners walking in {share:.0%} of them)"
    )
    return 0
