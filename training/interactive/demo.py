"""``crowdsteer demo`` and ``crowdsteer render``: watch scripted crowds, live or as a video.

The demo drives every learner of one world with the scene's best scripted baseline (declared
with its registration, chosen on validation seeds), among scripted pedestrians (and flock units
in the scenes that have them), with the overlays of the first learner still walking: what steers
it. It shows them in an interactive window when a display exists, episode after episode until Q;
headless, it writes a GIF (or an MP4 with the ``video`` extra) and a PNG of step 20 next to it.
An episode ends when every learner has arrived or collided (or at its time limit) and the next
one starts at once, so the clip shows learners walking for nearly all of its frames. Frames are
``size`` pixels wide, as tall as the scene's aspect needs, with one view for the whole clip.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from crowdsteer.envs import make_batch
from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.scenarios import SCENARIOS
from crowdsteer.envs.scenarios.base import DemoSetup

from ..evaluation.evaluate import resolve_policy
from ..support.preflight import UsageError, has_display, output_file, window_error
from ..support.progress import ProgressLines

DEMO_SNAPSHOT_STEP = 20
"""The step written as the demo's PNG: everyone is still walking and meeting mid-scene."""

VIDEO_SUFFIXES = (".gif", ".mp4")
FRAME_SUFFIXES = (".png", ".svg")
VECTOR_SUFFIXES = (".svg",)
"""Frames written as vector drawings (``envs.render.svg``: the clean style, no overlays)."""
VIDEO_FPS = 10


def declared_demo(scene: Any) -> DemoSetup:
    """The ``DemoSetup`` that ``scene``'s registration declares (``register(..., demo=...)``):
    its crowd sizes, and the scripted baseline whose learners arrive most often in its demo crowd
    (success over 60 episodes of validation seeds 1000-1059; ``crowdnav_circle`` and
    ``crowdnav_arena``: the CrowdNav and CrowdNav++ tests' best scripted rows). A scene that
    declares none: the configuration's counts, driven by cardioid."""
    entry = SCENARIOS.get(scene) if isinstance(scene, str) else None
    return DemoSetup() if entry is None else entry.demo


DEFAULT_SCENARIO = "circle_crossing"


def scene_of(scenario: str | None, preset: str | None) -> str:
    """The scenario shown: ``scenario``, else the preset's, else :data:`DEFAULT_SCENARIO`."""
    if scenario is not None:
        return scenario
    if preset is not None:
        from crowdsteer.envs.core.config import PRESETS

        if preset in PRESETS and preset != "default":
            return PRESETS[preset].scenario
    return DEFAULT_SCENARIO


def demo_policy(scenario: str | None, preset: str | None = None) -> str:
    """The demo's default driver of the learners in that scene (``declared_demo``)."""
    return declared_demo(scene_of(scenario, preset)).policy


def demo_config(
    scenario: str | None, max_steps: int, preset: str | None = None, **overrides: Any
) -> CrowdConfig:
    """The demo's config of ``scenario``: with a preset, the preset's crowd; otherwise the
    scenario's declared counts (``declared_demo``); then ``overrides``."""
    scene = scene_of(scenario, preset)
    if preset is not None:
        from ..evaluation.evaluate import make_config

        return make_config(scenario, preset=preset, max_steps=max_steps, **overrides)
    kwargs = {**declared_demo(scene).counts, **overrides}
    return CrowdConfig.from_kwargs(scenario=scene, max_steps=max_steps, **kwargs)


def write_video(
    frames: list[np.ndarray],
    out: Path,
    fps: int = VIDEO_FPS,
    label: str | None = None,
) -> Path:
    """Write ``frames`` to ``out`` (``.gif``, or ``.mp4`` with imageio-ffmpeg); returns ``out``.
    ``label``: the command writing it, which then prints its progress (None: silent)."""
    import imageio.v2 as imageio

    if out.suffix.lower() not in VIDEO_SUFFIXES:
        raise UsageError(f"argument --out: use one of {', '.join(VIDEO_SUFFIXES)}, got {out}")
    out.parent.mkdir(parents=True, exist_ok=True)
    progress = None if label is None else ProgressLines(label, len(frames), "frames written")
    if progress is not None:
        progress.start(f"writing {len(frames)} frames to {out}")
    if out.suffix.lower() == ".mp4":
        with imageio.get_writer(out, mode="I", fps=fps, macro_block_size=1) as writer:
            for k, frame in enumerate(frames):
                writer.append_data(frame)
                if progress is not None:
                    progress.update(k + 1)
        return out
    # A GIF's frames are paletted: each frame gets its own palette by the fast octree method,
    # without dithering (flat colours and antialiased text stay clean), about 2.4 times quicker
    # than Pillow's default median cut that ``imageio.mimwrite`` uses; then the file is written.
    from PIL import Image

    paletted = []
    for k, frame in enumerate(frames):
        image = Image.fromarray(np.ascontiguousarray(frame[..., :3]))
        paletted.append(
            image.quantize(256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
        )
        if progress is not None:
            progress.update(k + 1)
    paletted[0].save(out, save_all=True, append_images=paletted[1:], duration=1000 / fps, loop=0)
    return out


@dataclass
class Clip:
    """What ``run_clip`` drew: ``frames`` (rgb_array mode), how many of them show a learner still
    walking, the episodes begun, and the learners of the episodes that ended and how many of them
    arrived."""

    frames: list[np.ndarray] = field(default_factory=list)
    drawn: int = 0
    with_learner: int = 0
    episodes: int = 0
    finished: int = 0  # learners of the episodes that ended within the clip
    arrived: int = 0  # of them, those that arrived
    svg: str | None = None  # the SVG of step ``svg_step`` (``run_clip``), when asked for


OVERLAY_BODIES = ("learner", "pedestrian")
OverlayChoice = tuple[str, ...]
"""Names of ``OverlayOptions`` fields to switch on."""


@dataclass(frozen=True)
class ClipSettings:
    """What one clip of ``run_clip`` shows, and for how long.

    ``scenario`` (None: the preset's, else :data:`DEFAULT_SCENARIO`) with ``policy`` driving the
    learners (None: the scene's declared demo policy), from world seed ``seed``, drawn in
    ``mode`` ("human": a window, or "rgb_array": frames). It stops after ``frames`` frames or
    ``episodes`` episodes, or when the window is closed (in a window, with neither, it runs until
    Q). An episode ends when every learner has left it (``end_when_done``) or at ``max_steps``.
    ``overlays``: True for every debug overlay (or the names of those wanted), drawn for one
    body: the first learner still walking (``overlay_body="learner"``; the look-ahead and
    detection box of the baseline that drives it too), or the first pedestrian that steers with
    a look-ahead or a detection box (``"pedestrian"``). Frames are ``size`` pixels wide (None:
    the config's render size), as tall as the scene's aspect needs. ``preset``: the
    configuration preset whose crowd it shows. ``hud``: the heads-up line (scenario, policy,
    episode, step, counts) on every frame; without it, the clean style for papers.
    ``svg_step``: the frame of that step of the first episode is also kept as an SVG document
    (``Clip.svg``). ``config``: ``CrowdConfig`` keywords over the demo's (``demo_config``)."""

    scenario: str | None = None
    policy: str | None = None
    seed: int = 0
    mode: str = "rgb_array"
    frames: int | None = None
    episodes: int | None = None
    max_steps: int = 200
    end_when_done: bool = True
    overlays: bool | OverlayChoice = False
    overlay_body: str = "learner"
    size: int | None = None
    preset: str | None = None
    hud: bool = True
    svg_step: int | None = None
    config: Mapping[str, Any] = field(default_factory=dict)


def run_clip(settings: ClipSettings, progress: ProgressLines | None = None) -> Clip:
    """Roll out episodes in one world and draw every step as ``settings`` ask (``ClipSettings``);
    each episode begins from the world's seeded generator. ``progress``: told what is drawn once
    the crowd and its kernels are ready, then of each frame (its total: ``settings.frames``,
    else ``settings.episodes``).
    """
    scenario, policy, mode = settings.scenario, settings.policy, settings.mode
    frames, episodes, overlay_body = settings.frames, settings.episodes, settings.overlay_body
    svg_step = settings.svg_step
    if frames is None and episodes is None and mode != "human":
        raise ValueError("run_clip needs frames or episodes")
    if overlay_body not in OVERLAY_BODIES:
        raise ValueError(f"overlay_body must be one of {OVERLAY_BODIES}, got {overlay_body!r}")
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    from crowdsteer.envs.api.rendering import RenderHandle
    from crowdsteer.envs.render import (
        OverlayOptions,
        OverlaySettings,
        Viewer,
        ViewerSettings,
        learner_trace_to_world,
    )

    config = demo_config(scenario, settings.max_steps, settings.preset, **settings.config)
    scene = config.scenario if isinstance(config.scenario, str) else "explicit"
    policy = demo_policy(scenario, settings.preset) if policy is None else policy
    options = _overlay_options(OverlayOptions, settings.overlays)
    watched = options.any() or mode == "human"
    batch = make_batch(config, 1, trace=watched)
    pol = resolve_policy(policy, config, announce=None if progress is None else progress.label)
    handle = RenderHandle(batch, None, driver=policy)
    overlay_settings = OverlaySettings.from_config(config, learner_policy=policy)
    width = int(settings.size or config.render_size)
    viewer = Viewer(
        width,
        width,
        config.render_fps,
        mode,
        settings=ViewerSettings(
            overlay_options=options,
            overlay_settings=overlay_settings,
            title=f"crowdsteer demo: {scene}, learners driven by {policy}",
            fit_height=True,
            show_hud=settings.hud,
        ),
    )
    # What the overlays draw: the crowd's vectors recorded by the step, and the learners' from
    # their baseline when it acted (a trained model has none: only what it asked for is drawn).
    shown = batch.sim.buffers.trace.copy()
    traced = watched and hasattr(pol, "trace")
    clip = Clip()
    if progress is not None:
        count = f"{frames} frames" if frames is not None else _episodes(int(episodes or 0))
        progress.total = int(frames if frames is not None else episodes or 0)
        progress.unit = "frames" if frames is not None else "episodes"
        progress.start(f"drawing {count} of {scene}, learners driven by {policy}")
    batch.seed([settings.seed])
    s, sim = batch.state, batch.sim
    sl = slice(0, sim.num_learners)
    n_learners = batch.num_learners
    try:
        while episodes is None or clip.episodes < episodes:
            batch.reset()
            viewer.reset_trails()
            clip.episodes += 1
            followed = _followed_pedestrian(s, sim) if overlay_body == "pedestrian" else None
            while True:
                walking = np.flatnonzero(s.active[0, sl])
                info = {
                    "scenario": scene,
                    "policy": policy,
                    "episode": clip.episodes,
                    "step": int(s.step_count[0]),
                    "arrived": int(s.reached[0, sl].sum()),
                    "collisions": int(s.collided[0, sl].sum()),
                }
                if options.any():
                    body = followed if followed is not None else walking[:1]
                    if np.size(body):
                        viewer.settings.overlay_body = int(np.ravel(body)[0])
                        info["overlays"] = _describe_body(
                            s, viewer.settings.overlay_body, n_learners
                        )
                    else:
                        viewer.settings.overlay_body = -1  # nobody left to follow: no overlay
                shown[:, n_learners:] = sim.buffers.trace[:, n_learners:]
                if not traced:
                    shown[:, :n_learners] = sim.buffers.trace[:, :n_learners]
                frame = viewer.draw(
                    s,
                    0,
                    sim.state.bounds[0],
                    info,
                    inspect=lambda i: handle.inspect(0, i),
                    trace=shown,
                )
                if svg_step is not None and clip.episodes == 1 and s.step_count[0] == svg_step:
                    from crowdsteer.envs.render.svg import svg_frame

                    clip.svg = svg_frame(s, 0, sim.state.bounds[0], width, viewer.settings.style)
                clip.drawn += 1
                clip.with_learner += int(walking.size > 0)
                if progress is not None:
                    progress.update(clip.drawn if frames is not None else clip.episodes - 1)
                if frame is not None:
                    clip.frames.append(frame)
                if viewer.window_closed or (frames is not None and clip.drawn >= frames):
                    return clip
                if sim.truncated()[0] or (settings.end_when_done and batch.world_done()[0]):
                    clip.arrived += int(s.reached[0, sl].sum())
                    clip.finished += n_learners
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


def _overlay_options(options_type: Any, overlays: bool | OverlayChoice) -> Any:
    if overlays is True:
        return options_type.all()
    if not overlays:
        return options_type()
    return options_type(**{name: True for name in overlays})


def _followed_pedestrian(state: Any, sim: Any) -> int | None:
    """The first active pedestrian of world 0 that steers with a look-ahead or a detection box
    (whose geometry the overlays draw), else the first active pedestrian, else None."""
    from crowdsteer.envs.core.state import PEDESTRIAN
    from crowdsteer.envs.render.overlays import LEARNER_GEOMETRY

    peds = np.flatnonzero(state.active[0] & (state.kind[0] == PEDESTRIAN))
    if peds.size == 0:
        return None
    geometry = np.isin(state.behaviour[0, peds], tuple(LEARNER_GEOMETRY.values()))
    return int(peds[geometry][0] if geometry.any() else peds[0])


def _describe_body(state: Any, body: int, n_learners: int) -> str:
    return f"learner {body}" if body < n_learners else f"pedestrian {body}"


def _episodes(n: int) -> str:
    return f"{n} episode" + ("" if n == 1 else "s")


DEMO_OVERLAYS = ("steering_vectors", "detection_boxes", "lookahead", "view_cones")
"""What the demo draws for the learner it follows: what steers it (personal space rings, drawn
for every body, are left to ``render --overlays``)."""


def run_demo(
    scenario: str | None = None,
    policy: str | None = None,
    steps: int = 120,
    out: str = "out/crowdsteer_demo.gif",
    seed: int = 0,
    window: str = "auto",
    preset: str | None = None,
    size: int = 640,
) -> int:
    """Show the demo in a window until it is closed, or write ``steps`` steps of it to ``out``
    when there is no display (and the PNG of step ``DEMO_SNAPSHOT_STEP`` beside it)."""
    live = window == "yes" or (window == "auto" and has_display())
    if window == "yes" and not has_display():
        raise UsageError(
            "argument --window: 'yes' needs a display, and none is set (DISPLAY, WAYLAND_DISPLAY); "
            "use --window no to write a GIF"
        )
    policy = demo_policy(scenario, preset) if policy is None else policy
    scene = scene_of(scenario, preset)
    shown = ClipSettings(scenario, policy, seed, overlays=DEMO_OVERLAYS, size=size, preset=preset)
    if live:
        from crowdsteer.envs.render._pygame import pygame

        try:
            clip = run_clip(replace(shown, mode="human"))
            print(
                f"demo: {scene} with {policy} learners, {clip.drawn} steps shown in a window; "
                f"{_arrivals(clip)}"
            )
            return 0
        except pygame.error as err:
            if window == "yes":
                raise window_error(err, "use --window no to write a GIF") from err
            print(f"demo: could not open a window ({err}); writing {out} instead", file=sys.stderr)
    path = output_file(out, VIDEO_SUFFIXES)
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    progress = ProgressLines("demo", steps, "frames")
    clip = run_clip(replace(shown, frames=steps), progress)
    path = write_video(clip.frames, path, label="demo")
    png = path.with_suffix(".png")
    import imageio.v2 as imageio

    imageio.imwrite(png, clip.frames[min(DEMO_SNAPSHOT_STEP, len(clip.frames) - 1)])
    share = clip.with_learner / max(clip.drawn, 1)
    print(
        f"demo: {scene}, learners driven by {policy}: {len(clip.frames)} frames "
        f"({_episodes(clip.episodes)}, learners walking in {share:.0%}; {_arrivals(clip)}) "
        f"-> {path}, {png}"
    )
    return 0


def _arrivals(clip: Clip) -> str:
    if clip.finished == 0:
        return "no episode finished"
    return f"{clip.arrived} of {clip.finished} learners arrived in the episodes that ended"


def render_cli(args) -> int:
    """``crowdsteer render``: episodes of a policy to a GIF or MP4, or one frame to a PNG or SVG.

    With ``--out NAME.png`` (or ``.svg``, a vector drawing) the frame of step ``--frame`` of the
    first episode is written (the crowd keeps moving after the learners finish), which is the
    quickest way to look at a scenario with its overlays. ``--style paper`` (the default) leaves
    the heads-up line out; ``debug`` draws it.
    """
    suffix = Path(args.out).suffix.lower()
    png = suffix in FRAME_SUFFIXES
    out = output_file(args.out, VIDEO_SUFFIXES + FRAME_SUFFIXES)
    if png and args.frame > args.steps:
        raise UsageError(
            f"argument --frame: must be at most --steps ({args.steps}), got {args.frame}"
        )
    vector = suffix in VECTOR_SUFFIXES
    if vector and args.overlays:
        raise UsageError(
            f"argument --overlays: drawn on .png, .gif and .mp4 frames only, not on {suffix}"
        )
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    common = ClipSettings(
        args.scenario,
        args.policy,
        args.seed,
        overlays=args.overlays,
        overlay_body=args.overlay_body,
        size=args.size,
        preset=args.preset,
        hud=getattr(args, "style", "paper") == "debug",
    )
    progress = ProgressLines("render", 0, "frames")
    if png:
        shown = replace(
            common,
            episodes=1,
            max_steps=max(args.frame, 1),  # frame 0 is the start: one step draws it
            end_when_done=False,
            svg_step=args.frame if vector else None,
        )
        clip = run_clip(shown, progress)
        import imageio.v2 as imageio

        out.parent.mkdir(parents=True, exist_ok=True)
        if vector:
            out.write_text(clip.svg, encoding="utf-8")
        else:
            imageio.imwrite(out, clip.frames[args.frame])
        print(f"wrote step {args.frame} to {out}")
        return 0
    clip = run_clip(replace(common, episodes=args.episodes, max_steps=args.steps), progress)
    path = write_video(clip.frames, out, label="render")
    share = clip.with_learner / max(clip.drawn, 1)
    print(
        f"wrote {len(clip.frames)} frames of {_episodes(clip.episodes)} to {path} "
        f"(learners walking in {share:.0%} of them)"
    )
    return 0
