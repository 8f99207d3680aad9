"""``crowdsteer play``: a person walks learner 0 through a scenario, among the crowd.

The other learners are driven by a baseline or a trained model, the pedestrians and flock units
by their steering, exactly as in training. The person steers with the arrow keys or WASD (screen
directions, Shift walks slowly) or by holding the right mouse button (walk toward the cursor);
every key of the interactive window works as well (pause, single step, speed, zoom, select). The
clock runs in real time (one step every ``dt`` seconds, times the chosen speed). When the episode
ends its metrics are shown on the window and printed: the learner's outcome, time to goal, path
efficiency, minimum separation and discomfort, beside the other learners'.

The person's wish becomes an ordinary action (``human_action``): a goal-frame velocity for a
holonomic learner, speed and turn rate for a unicycle, so the episode is one the environment
could have produced with a policy.

The game starts paused, with the person's learner ringed and labelled "you" and a card of the
keys, so nobody loses an episode while finding the window; Space starts it. An episode left
before its end (R, or Q) is scored as far as it went and marked abandoned. With ``episodes`` the
game ends after that many, without waiting for a key (``xvfb-run crowdsteer play --episodes 1``
finishes).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from crowdsteer.envs import make_batch
from crowdsteer.envs.core.batch import CrowdBatch
from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.core.sensing import goal_frame_angle

from ..evaluation.evaluate import resolve_policy
from ..evaluation.metrics import EpisodeRecord, learner_metrics
from .demo import demo_config

PLAYER = 0
"""The learner the person drives."""
FRAME_S = 1.0 / 60.0
"""The window is redrawn this often between steps."""


def human_action(
    direction: np.ndarray,
    fraction: float,
    pos: np.ndarray,
    goal: np.ndarray,
    heading: float,
    config: CrowdConfig,
) -> np.ndarray:
    """The action ``(2,)`` in [-1, 1] that walks a learner at ``pos`` (heading ``heading``) in the
    world ``direction (2,)`` (unit, or zero to stop) at ``fraction`` of its preferred speed.

    Holonomic: the wished velocity expressed in the learner's goal frame (the frame of its
    actions). Unicycle: forward speed ``fraction`` and a turn toward the direction, as fast as the
    turn rate allows.
    """
    d = np.asarray(direction, dtype=np.float64).reshape(2)
    f = float(np.clip(fraction, 0.0, 1.0))
    if config.kinematics == "unicycle":
        if not np.any(d):
            return np.array([-1.0, 0.0])
        turn = math.atan2(d[1], d[0]) - float(heading)
        turn = (turn + math.pi) % (2.0 * math.pi) - math.pi
        per_step = max(float(config.max_turn_rate) * float(config.dt), 1e-9)
        return np.array([2.0 * f - 1.0, float(np.clip(turn / per_step, -1.0, 1.0))])
    unit = np.array([math.cos(heading), math.sin(heading)])
    theta = float(goal_frame_angle(np.asarray(pos), np.asarray(goal), unit))
    c, s = math.cos(theta), math.sin(theta)
    v = f * d
    return np.clip(np.array([c * v[0] + s * v[1], -s * v[0] + c * v[1]]), -1.0, 1.0)


class EpisodeRecorder:
    """Records world 0 of a batch step by step into an :class:`EpisodeRecord`, with the
    conventions of ``crowdsteer.training.evaluation.evaluate`` (row ``t`` is the state after
    step ``t``; a learner's row is valid when it took that step)."""

    def __init__(self, batch: CrowdBatch) -> None:
        self.batch = batch
        s = batch.state
        self.pos = [s.pos[0].copy()]
        self.vel = [s.vel[0].copy()]
        self.valid = [s.active[0].copy()]
        self.start = s.pos[0].copy()
        self.goal = s.goal[0].copy()
        self.radius = s.radius[0].copy()
        n = s.pos.shape[1]
        self.reached = np.full(n, -1, np.int64)
        self.collided = np.full(n, -1, np.int64)
        self.is_learner = np.zeros(n, bool)
        self.is_learner[: batch.num_learners] = s.active[0, : batch.num_learners]

    def after_step(self, alive_before: np.ndarray) -> None:
        """Record the state after a step; ``alive_before (L,)``: learners alive before it."""
        s, sim = self.batch.state, self.batch.sim
        t = len(self.pos)
        self.pos.append(s.pos[0].copy())
        self.vel.append(s.vel[0].copy())
        valid = s.active[0].copy()
        valid[: self.batch.num_learners] = alive_before
        self.valid.append(valid)
        self.reached[sim.buffers.arrived_now[0] & (self.reached < 0)] = t
        self.collided[sim.buffers.collided_now[0] & (self.collided < 0)] = t

    def record(self) -> EpisodeRecord:
        c = self.batch.config
        return EpisodeRecord(
            pos=np.stack(self.pos),
            vel=np.stack(self.vel),
            radius=self.radius,
            is_learner=self.is_learner,
            start=self.start,
            goal=self.goal,
            reached_step=self.reached,
            collision_step=self.collided,
            active=np.stack(self.valid),
            dt=c.dt,
            max_steps=c.max_steps,
            personal_space=c.discomfort_distance,
        )


@dataclass
class PlayResult:
    """One played episode: its ``learner_metrics`` (learners in body order; yours is first), its
    steps, and whether it was left before its end (scored as far as it went)."""

    metrics: dict[str, np.ndarray]
    steps: int
    abandoned: bool = False

    def outcome(self) -> str:
        """Yours: arrived, collided, timed out, or abandoned (left walking)."""
        m = self.metrics
        if m["success"][0]:
            return "arrived"
        if m["collision"][0]:
            return "collided"
        return "abandoned" if self.abandoned else "timed out"

    def summary_rows(self, others: str) -> list[tuple[str, str]]:
        """Rows for the end card and the terminal: your outcome and figures, then the others'."""
        m = self.metrics
        rows = [("you", self.outcome())]

        def num(key: str, unit: str = "", digits: int = 2) -> str:
            v = float(m[key][0])
            return "-" if not math.isfinite(v) else f"{v:.{digits}f}{unit}"

        rows += [
            ("time to goal", num("time_to_goal", " s")),
            ("path length", num("path_length", " m")),
            ("path efficiency", num("path_efficiency")),
            ("min separation", num("min_separation", " m")),
            ("discomfort", num("discomfort_rate")),
        ]
        n_other = len(m["success"]) - 1
        if n_other > 0:
            rows.append(
                (
                    f"others ({others})",
                    f"{int(np.sum(m['success'][1:]))}/{n_other} arrived, "
                    f"{int(np.sum(m['collision'][1:]))} collided",
                )
            )
        return rows


def play_config(
    scenario: str | None,
    max_steps: int | None = None,
    preset: str | None = None,
    **overrides: Any,
) -> CrowdConfig:
    """The config of a game: the demo's crowd for ``scenario`` (``demo.declared_demo``), or the
    preset's, ``overrides`` on top; ``max_steps`` None keeps the environment's episode length."""
    steps = CrowdConfig().max_steps if max_steps is None else max_steps
    return demo_config(scenario, steps, preset, **overrides)


START_CARD = (
    "Space starts the episode",
    [
        ("you", "the ringed learner 0, walking to flag 0"),
        ("walk", "arrows or WASD (Shift: slowly), or hold the right mouse button"),
        ("pause", "Space; H lists every key"),
        ("quit", "Q"),
    ],
)
"""The card the game opens with (paused)."""


def _outcome_now(batch: CrowdBatch) -> str:
    s = batch.state
    if s.reached[0, PLAYER]:
        return "arrived"
    if s.collided[0, PLAYER]:
        return "collided"
    return "walking" if batch.alive[0, PLAYER] else "done"


@dataclass(frozen=True)
class PlaySettings:
    """One game of ``run_play``: learner 0 walked by the person in ``scenario`` (None: the
    preset's, else the demo's default scene), the other learners driven by ``others`` (a
    baseline or a model), from world seed ``seed``.

    ``episodes``: the game ends after that many (None: when the window closes); ``max_steps``:
    the episode length (None: the environment's); ``realtime=False`` steps as fast as frames are
    drawn (for tests and recordings); ``speed`` starts the clock faster or slower;
    ``start_paused``: open paused on :data:`START_CARD` until Space; ``wait_at_end``: after an
    episode, show its metrics on a card until R (next episode) or Q (quit), after the last one
    until any key; otherwise go on at once. ``preset``: the configuration preset whose crowd it
    plays; ``config``: ``CrowdConfig`` keywords on top (``play_config``)."""

    scenario: str | None = None
    others: str = "right_of_way"
    seed: int = 0
    episodes: int | None = None
    max_steps: int | None = None
    realtime: bool = True
    speed: float = 1.0
    wait_at_end: bool = True
    start_paused: bool = True
    preset: str | None = None
    config: Mapping[str, Any] = field(default_factory=dict)


def run_play(
    game: PlaySettings,
    on_step: Callable[[CrowdBatch], None] | None = None,
    on_frame: Callable[[Any], None] | None = None,
) -> list[PlayResult]:
    """Play episodes of ``game`` in a window until it is closed (or its ``episodes`` are done);
    returns each episode's metrics, an episode left before its end included (``abandoned``).
    ``on_step`` is called after every step (with the batch), ``on_frame`` after every frame shown
    (with the viewer).
    """
    others, episodes, realtime = game.others, game.episodes, game.realtime
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    from crowdsteer.envs.api.rendering import RenderHandle
    from crowdsteer.envs.render import OverlaySettings, Viewer, ViewerSettings
    from crowdsteer.envs.render.controls import SPEEDS

    config = play_config(game.scenario, game.max_steps, game.preset, **game.config)
    scene = config.scenario if isinstance(config.scenario, str) else "explicit"
    batch = make_batch(config, 1, trace=True)
    n_l = batch.num_learners
    policy = resolve_policy(others, config) if n_l > 1 else None
    handle = RenderHandle(batch, None, driver=others)
    viewer = Viewer(
        config.render_size,
        config.render_size,
        config.render_fps,
        "human",
        settings=ViewerSettings(
            play=True,
            overlay_settings=OverlaySettings.from_config(config),
            title=f"crowdsteer play: {scene} (you are learner 0)",
            fit_height=True,
            marked={PLAYER: "you"},
        ),
    )
    c = viewer.controls
    c.speed_index = int(np.argmin([abs(s - game.speed) for s in SPEEDS]))
    c.selected = PLAYER
    c.paused = bool(game.start_paused)
    viewer.card = START_CARD if game.start_paused else None

    def inspect(i: int) -> dict[str, Any]:
        rows = dict(handle.inspect(0, i))
        if i == PLAYER:
            rows["driven by"] = "you (arrows / WASD, right mouse button)"
        return rows

    s, sim = batch.state, batch.sim
    results: list[PlayResult] = []
    batch.seed([game.seed])
    actions = np.zeros((1, n_l, 2))
    try:
        while episodes is None or len(results) < episodes:
            batch.reset()
            viewer.reset_trails()
            if viewer.card is not START_CARD:
                viewer.card = None
            recorder = EpisodeRecorder(batch)
            c.restart_requested = False
            next_step = time.monotonic()
            while not viewer.window_closed:
                if viewer.card is START_CARD and not c.paused:
                    viewer.card = None
                info = {
                    "play": scene,
                    "episode": len(results) + 1,
                    "step": int(s.step_count[0]),
                    "you": _outcome_now(batch),
                    "arrived": int(s.reached[0, :n_l].sum()),
                    "collisions": int(s.collided[0, :n_l].sum()),
                }
                viewer.show(
                    s, 0, sim.state.bounds[0], info, inspect=inspect, trace=sim.buffers.trace
                )
                if on_frame is not None:
                    on_frame(viewer)
                if viewer.window_closed or c.restart_requested:
                    break
                if sim.truncated()[0] or batch.world_done()[0]:
                    break
                now = time.monotonic()
                due = not c.paused and (not realtime or now >= next_step)
                if not (due or c.take_step()):
                    time.sleep(min(FRAME_S, max(next_step - now, 0.0)) if not c.paused else FRAME_S)
                    continue
                direction, fraction = c.walk_wish(viewer.camera, s.pos[0, PLAYER])
                if policy is not None:
                    actions[0] = np.asarray(
                        policy.act(batch.obs.reshape(-1, batch.layout.dim)), np.float64
                    ).reshape(n_l, 2)
                actions[0, PLAYER] = human_action(
                    direction,
                    fraction,
                    s.pos[0, PLAYER],
                    s.goal[0, PLAYER],
                    float(s.heading_angle()[0, PLAYER]),
                    config,
                )
                alive_before = batch.alive[0].copy()
                batch.step(actions)
                recorder.after_step(alive_before)
                if on_step is not None:
                    on_step(batch)
                next_step = max(next_step + config.dt / c.speed, now - config.dt)
            ended = bool(sim.truncated()[0] or batch.world_done()[0])
            steps = int(s.step_count[0])
            if ended or steps > 0:  # an episode left before its end is scored as far as it went
                result = PlayResult(learner_metrics(recorder.record()), steps, not ended)
                results.append(result)
                rows = result.summary_rows(others)
                left = ", abandoned" if result.abandoned else ""
                print(
                    f"episode {len(results)} ({result.steps} steps{left}): "
                    + "; ".join(f"{k} {v}" for k, v in rows)
                )
            if viewer.window_closed or not ended:
                if viewer.window_closed:
                    break
                continue  # R: the next episode at once
            last = episodes is not None and len(results) >= episodes
            if game.wait_at_end:
                # the last episode's card stays until any key, the others' until R or Q
                ask = "any key closes" if last else "R next episode, Q quit"
                viewer.card = (f"episode {len(results)} over: {ask}", rows)
                c.restart_requested = False
                pressed = c.keys_pressed
                while not viewer.window_closed and not c.restart_requested:
                    if last and c.keys_pressed > pressed:
                        break
                    viewer.show(
                        s, 0, sim.state.bounds[0], info, inspect=inspect, trace=sim.buffers.trace
                    )
                    if on_frame is not None:
                        on_frame(viewer)
                    time.sleep(FRAME_S)
        return results
    finally:
        viewer.close()


def play_cli(args) -> int:
    """``crowdsteer play``: check that a window can open, then play."""
    from ..support.preflight import UsageError, has_display, window_error

    if not has_display():
        raise UsageError(
            "crowdsteer play needs a display (DISPLAY or WAYLAND_DISPLAY is not set); "
            "on a headless machine try: xvfb-run crowdsteer play"
        )
    overrides: dict[str, Any] = {"kinematics": args.kinematics}
    if args.n_learners is not None:
        overrides["n_learners"] = args.n_learners
    if args.n_pedestrians is not None:
        overrides["n_pedestrians"] = args.n_pedestrians
    if getattr(args, "n_flock", None) is not None:
        overrides["n_flock"] = args.n_flock
    from crowdsteer.envs.render._pygame import pygame

    try:
        game = PlaySettings(
            args.scenario,
            args.others,
            args.seed,
            episodes=args.episodes,
            max_steps=args.steps,
            speed=args.speed,
            preset=args.preset,
            config=overrides,
        )
        results = run_play(game)
    except pygame.error as err:
        raise window_error(err, "crowdsteer play needs a display") from err
    won = sum(r.outcome() == "arrived" for r in results)
    left = sum(r.abandoned for r in results)
    print(f"play: {len(results)} episodes scored ({left} abandoned), you arrived in {won}")
    return 0
