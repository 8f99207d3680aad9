"""Does anything pass through walls or obstacles? (``crowdsteer bench-penetration``)

Steps every scenario that has walls or obstacles with every pedestrian behaviour and flock units,
learners taking random actions and not leaving on collision, in two groups: the scenes with
obstacles and walls at the usual speed (``SCENARIOS``), and the two enclosed measurement scenes at
the largest speed and time step the configuration accepts (``FASTEST_SCENARIOS`` with
``fastest_regime``: preferred speed and dt at their upper bounds, pedestrians' speeds spread to
just under twice that, so the longest steps are nearly 20 m; the periodic corridor's seam and the
bottleneck's doorway are where long steps could slip through). Over every body-step of an active
body it counts:

- wall crossings: the centre's path over the step properly crosses a wall segment and no path the
  body could have taken round one of the wall's ends fits in its step (``v_max * dt``; a
  holonomic body slides along a surface within a step; flock units and unicycles do not slide,
  so every crossing of theirs counts);
- inside an obstacle: the centre ends the step inside an obstacle's disc;
- overlapping an obstacle or a wall: the body's disc ends the step overlapping one;
- flock units out of bounds: a flock unit's centre ends the step outside the scene's bounds;
- left the enclosure: in ``periodic_corridor`` a centre beyond a wall line, in
  ``bottleneck_flow`` a centre that entered or left the waiting room other than through the
  doorway (no path through the doorway's free width fits in the step).

Periodic worlds are read unwrapped: a body carried across the seam is compared with where it
was, not with its image. The physics sweeps every move against the walls and obstacles, so every
count must be zero; ``chord_crossings`` (every crossing of a wall by the straight chord of a
step, slides round a wall's end included) shows how often bodies pressed past wall ends. With
``--contact-iterations`` bodies also push each other (``envs.core.body_contact``), each push swept
against the walls like the move; a push comes on top of a body's own step, so a body may end
farther than its own step reaches. A chord crossing whose way round the wall's end, or a room
exit whose way through the doorway, is longer than the body's own step but within its whole
displacement then counts as ``pushed_round_end`` (zero without contact), not as a crossing or an
exit. A chord straight through a wall, far from its ends, is longer round the end than across, so
it still counts as a crossing.

    crowdsteer bench-penetration                 # 30 M body-steps in each group
    crowdsteer bench-penetration --body-steps 1e6
    crowdsteer bench-penetration --contact-iterations 20   # with bodies pushing each other
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass

import numpy as np

from crowdsteer.envs import CrowdConfig, make_batch
from crowdsteer.envs.core.config import RANGES
from crowdsteer.envs.core.state import FLOCK, UNICYCLE
from crowdsteer.envs.scenarios import scenario_source

from ..support.options import arg
from ..support.preflight import UsageError, check_int

SCENARIOS = ("corridor", "bottleneck", "obstacle_field", "path_course", "symmetric_obstacles")
FASTEST_SCENARIOS = ("periodic_corridor", "bottleneck_flow")
BEHAVIOURS = (
    "goal_seek",
    "cardioid",
    "side_choice",
    "right_of_way",
    "social_force",
    "orca",
    "detection_box",
)
COUNTS = (
    "body_steps",
    "flock_body_steps",
    "chord_crossings",
    "pushed_round_end",
    "wall_crossings",
    "inside_obstacle",
    "overlapping_static",
    "flock_out_of_bounds",
    "left_enclosure",
)
VIOLATIONS = COUNTS[4:]
"""The counts that must be zero."""


def fastest_regime() -> dict[str, float]:
    """The largest preferred speed and time step the configuration accepts, pedestrians' speeds
    spread to just under twice the preferred speed (``v_pref_sd`` stays below ``v_pref / 2``) and
    the acceleration that reaches them within a step."""
    v_pref, dt = RANGES["v_pref"][1], RANGES["dt"][1]
    return {
        "v_pref": v_pref,
        "v_pref_sd": 0.49 * v_pref,
        "dt": dt,
        "max_accel": RANGES["max_accel"][1],
    }


@dataclass
class Args:
    """Count wall crossings, bodies inside obstacles and bodies leaving their enclosure over every
    scenario and behaviour."""

    body_steps: float = arg(
        30e6, "body-steps of each group (usual speed; fastest step), shared among its runs"
    )
    worlds: int = arg(64, "worlds stepped together in each run")
    pedestrians: int = arg(12, "scripted pedestrians per world")
    flock: int = arg(6, "flock units per world (scenes at the usual speed)")
    seed: int = arg(0, "seed of the first world")
    contact_iterations: int = arg(0, "body contact sweeps per step (0: bodies may overlap)")
    json: bool = arg(False, "print one JSON object")

    def __post_init__(self) -> None:
        b = self.body_steps
        if (
            isinstance(b, bool)
            or not isinstance(b, (int, float))
            or not (math.isfinite(b) and b >= 1)
        ):
            raise UsageError(f"argument --body-steps: must be a finite number >= 1, got {b!r}")
        for flag, value, low in (
            ("--worlds", self.worlds, 1),
            ("--pedestrians", self.pedestrians, 0),
            ("--flock", self.flock, 0),
            ("--seed", self.seed, 0),
            ("--contact-iterations", self.contact_iterations, 0),
        ):
            check_int(flag, value, low)


def _cross(ax, ay, bx, by, px, py):
    return (bx - ax) * (py - ay) - (by - ay) * (px - ax)


def _tangent(d2: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Length of the tangent from a point at squared distance ``d2`` to a circle of radius ``r``
    (0 inside it): the shortest way to the circle's far side starts along it."""
    return np.sqrt(np.maximum(d2 - r * r, 0.0))


def unwrapped(state, before: np.ndarray, start_before: np.ndarray | None) -> np.ndarray:
    """Positions after the step in the frame of ``before``: a body a periodic world moved across
    its seam is shifted back by the same multiple of the period its start was shifted by."""
    p1 = state.pos
    if start_before is None:
        return p1
    shift = state.start[..., 0] - start_before[..., 0]
    if not shift.any():
        return p1
    out = p1.copy()
    out[..., 0] -= shift
    return out


def enclosure_exits(
    scenario: str, state, p0: np.ndarray, p1: np.ndarray, reach: np.ndarray
) -> np.ndarray:
    """``(B, N)`` bool: active bodies that ended the step outside the enclosure of ``scenario``
    in a way no move within ``reach`` explains (all False for other scenarios)."""
    s = state
    if scenario == "periodic_corridor":
        half_width = np.abs(s.walls[:, 0, 0, 1])[:, None]  # walls along x at +-width / 2
        return s.active & (np.abs(p1[..., 1]) >= half_width)
    if scenario == "bottleneck_flow":
        # walls: the doorway's two halves, the room's two sides, its back (``bottleneck_flow``)
        half_door = s.walls[:, 1, 0, 1][:, None]
        half_room = s.walls[:, 3, 0, 1][:, None]
        back = s.walls[:, 4, 0, 0][:, None]

        def in_room(p):
            return (p[..., 0] > back) & (p[..., 0] < 0.0) & (np.abs(p[..., 1]) < half_room)

        inside0 = in_room(p0)
        moved = inside0 != in_room(p1)
        # the shortest way between the room and outside passes the doorway's free width
        # |y| <= door/2 - r at x = 0 (``_through_doorway``)
        inner = np.where(inside0[..., None], p0, p1)
        outer = np.where(inside0[..., None], p1, p0)
        free = np.maximum(half_door - s.radius, 0.0)
        way = _through_doorway(inner, outer, free, half_room + s.radius)
        return s.active & moved & (way > reach * (1.0 + 1e-9) + 1e-9)
    return np.zeros(s.active.shape, bool)


def _through_doorway(
    inner: np.ndarray, outer: np.ndarray, free: np.ndarray, corner: np.ndarray
) -> np.ndarray:
    """A lower bound on the length of any way from ``inner`` (in the room, x < 0) to ``outer``
    (outside it) through the doorway at x = 0, whose centre line is free for ``|y| <= free``.
    Beyond the doorway (x >= 0) the way runs straight from the doorway; to a point outside the
    room but behind the doorway's wall (x < 0) it must also round the room's outer corner, at
    ``|y| >= corner`` on x = 0."""
    x0, y0 = inner[..., 0], inner[..., 1]
    x1, y1 = outer[..., 0], outer[..., 1]
    # straight on: the way crosses x = 0 where the line does, or at the doorway's nearer edge
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(x1 != x0, -x0 / (x1 - x0), 0.0)
    y_door = np.clip(y0 + t * (y1 - y0), -free, free)
    straight = np.hypot(x0, y0 - y_door) + np.hypot(x1, y1 - y_door)
    # round a corner: leave by the doorway's edge on that side, along the wall, round the corner
    rounds = [
        np.hypot(x0, y0 - side * free) + (corner - free) + np.hypot(x1, y1 - side * corner)
        for side in (1.0, -1.0)
    ]
    return np.where(x1 >= 0.0, straight, np.minimum(*rounds))


def count_violations(
    state,
    before: np.ndarray,
    dt: float | None = None,
    start_before: np.ndarray | None = None,
    scenario: str | None = None,
    pushed: bool = False,
) -> dict[str, int]:
    """Violations of one step: ``before (B, N, 2)`` the positions before it, ``state`` after.

    ``dt``: the step's length (s), to tell a holonomic body's slide round a wall's end within its
    reach from a crossing (None: every chord crossing counts); ``start_before``: the starts
    before the step (periodic worlds, to unwrap the seam); ``scenario``: its enclosure is checked
    (``enclosure_exits``); ``pushed``: bodies push each other (contact on), so a body's way round
    a wall's end may be as long as its whole displacement (``pushed_round_end``)."""
    s = state
    act = s.active
    p0, p1 = before, unwrapped(s, before, start_before)
    out = {"body_steps": int(act.sum())}
    # wall crossings: segment p0 p1 properly crosses segment a b
    a = s.walls[:, :, 0][:, None]  # (B, 1, W, 2)
    b = s.walls[:, :, 1][:, None]
    q0 = p0[:, :, None]  # (B, N, 1, 2)
    q1 = p1[:, :, None]
    d0 = _cross(a[..., 0], a[..., 1], b[..., 0], b[..., 1], q0[..., 0], q0[..., 1])
    d1 = _cross(a[..., 0], a[..., 1], b[..., 0], b[..., 1], q1[..., 0], q1[..., 1])
    e0 = _cross(q0[..., 0], q0[..., 1], q1[..., 0], q1[..., 1], a[..., 0], a[..., 1])
    e1 = _cross(q0[..., 0], q0[..., 1], q1[..., 0], q1[..., 1], b[..., 0], b[..., 1])
    crossing = (d0 * d1 < 0) & (e0 * e1 < 0) & s.wall_active[:, None] & act[..., None]
    out["chord_crossings"] = int(crossing.sum())
    reach = np.zeros(act.shape) if dt is None else s.v_max * dt
    # with contact a body's way may be as long as its whole displacement (its step and pushes)
    moved = np.linalg.norm(p1 - p0, axis=-1) if pushed else None
    out["pushed_round_end"] = 0
    if crossing.any() and dt is not None:
        # round an end E: at least the tangents from p0 and p1 to the disc of radius r about E
        r = s.radius[..., None]
        around = np.minimum(
            _tangent(((q0 - a) ** 2).sum(-1), r) + _tangent(((q1 - a) ** 2).sum(-1), r),
            _tangent(((q0 - b) ** 2).sum(-1), r) + _tangent(((q1 - b) ** 2).sum(-1), r),
        )
        slides = ((s.kind != FLOCK) & (s.kinematics != UNICYCLE))[..., None]
        explained = slides & (around <= reach[..., None] * (1.0 + 1e-9) + 1e-9)
        crossing &= ~explained
        if pushed:
            round_end = crossing & (around <= moved[..., None] * (1.0 + 1e-9) + 1e-9)
            out["pushed_round_end"] += int(round_end.sum())
            crossing &= ~round_end
    out["wall_crossings"] = int(crossing.sum())
    # obstacles: centre inside the disc, or the body's disc overlapping it
    d = np.linalg.norm(p1[:, :, None] - s.obstacle_pos[:, None], axis=-1)
    on = s.obstacle_active[:, None] & act[..., None]
    out["inside_obstacle"] = int((on & (d < s.obstacle_radius[:, None])).sum())
    overlap = on & (d < s.obstacle_radius[:, None] + s.radius[..., None])
    # walls: the body's disc overlapping the segment
    ab = b - a
    t = np.clip(
        np.einsum("bnwk,bnwk->bnw", q1 - a, np.broadcast_to(ab, q1.shape[:2] + ab.shape[2:]))
        / np.maximum((ab**2).sum(-1), 1e-300),
        0.0,
        1.0,
    )
    closest = a + t[..., None] * ab
    dw = np.linalg.norm(q1 - closest, axis=-1)
    wall_overlap = s.wall_active[:, None] & act[..., None] & (dw < s.radius[..., None])
    out["overlapping_static"] = int(overlap.any(-1).sum() + wall_overlap.any(-1).sum())
    flock = act & (s.kind == FLOCK)
    x0, y0, x1, y1 = (s.bounds[:, k][:, None] for k in range(4))
    pos = s.pos
    outside = (pos[..., 0] < x0) | (pos[..., 0] > x1) | (pos[..., 1] < y0) | (pos[..., 1] > y1)
    out["flock_out_of_bounds"] = int((flock & outside).sum())
    out["flock_body_steps"] = int(flock.sum())
    exits = enclosure_exits(scenario, s, p0, p1, reach) if scenario else np.zeros(act.shape, bool)
    if pushed and exits.any():
        round_door = exits & ~enclosure_exits(scenario, s, p0, p1, np.maximum(reach, moved))
        out["pushed_round_end"] += int(round_door.sum())
        exits &= ~round_door
    out["left_enclosure"] = int(exits.sum())
    return out


def run_config(scenario: str, behaviour: str, args: Args, fastest: bool) -> CrowdConfig:
    """The configuration of one run: the usual speeds with flock units, or the fastest regime
    (walkers only: the enclosed scenes hold no flock)."""
    regime = fastest_regime() if fastest else {}
    return CrowdConfig.from_kwargs(
        scenario=scenario,
        n_learners=2,
        n_pedestrians=args.pedestrians,
        n_flock=0 if fastest else args.flock,
        pedestrian_behaviour=behaviour,
        collision_ends=False,
        max_steps=400,
        contact_iterations=args.contact_iterations,
        **regime,
    )


def run(scenario: str, behaviour: str, body_steps: float, args: Args, fastest: bool = False):
    """Totals of one scenario and behaviour over at least ``body_steps`` body-steps."""
    config = run_config(scenario, behaviour, args, fastest)
    batch = make_batch(config, args.worlds)
    batch.seed(args.seed)
    batch.reset()
    rng = np.random.default_rng(args.seed)
    periodic = scenario_source(config).probe.period_x is not None
    totals = dict.fromkeys(COUNTS, 0)
    while totals["body_steps"] < body_steps:
        before = batch.state.pos.copy()
        start_before = batch.state.start.copy() if periodic else None
        batch.step(rng.uniform(-1, 1, (args.worlds, batch.num_learners, 2)))
        found = count_violations(
            batch.state, before, config.dt, start_before, scenario, config.contact_iterations > 0
        )
        for k, v in found.items():
            totals[k] += v
        done = batch.world_done()
        if done.any():
            batch.reset(done)
    return totals


def report(args: Args) -> int:
    """Run every scenario and behaviour of both groups for ``args.body_steps`` body-steps each and
    print the violations found (``json``: one JSON object). Returns 0 when every violation count
    is zero, 1 otherwise."""
    rows, start = [], time.perf_counter()
    for fastest, scenarios in ((False, SCENARIOS), (True, FASTEST_SCENARIOS)):
        share = args.body_steps / (len(scenarios) * len(BEHAVIOURS))
        for scenario in scenarios:
            for behaviour in BEHAVIOURS:
                totals = run(scenario, behaviour, share, args, fastest)
                regime = "fastest" if fastest else "usual"
                rows.append(
                    {"scenario": scenario, "behaviour": behaviour, "regime": regime, **totals}
                )
    groups = {
        regime: {k: sum(r[k] for r in rows if r["regime"] == regime) for k in COUNTS}
        for regime in ("usual", "fastest")
    }
    total = {k: sum(g[k] for g in groups.values()) for k in COUNTS}
    failed = any(total[k] for k in VIOLATIONS)
    if args.json:
        print(
            json.dumps(
                {"rows": rows, "groups": groups, "total": total, "regime": fastest_regime()},
                indent=1,
            )
        )
        return int(failed)
    fast = ", ".join(f"{k}={v:g}" for k, v in fastest_regime().items())
    print(f"usual: the scenarios' defaults; fastest: {fast}")
    head = f"{'scenario':<20} {'behaviour':<14} {'regime':<8} "
    print(head + " ".join(f"{k:>19}" for k in COUNTS))
    for r in rows:
        line = f"{r['scenario']:<20} {r['behaviour']:<14} {r['regime']:<8} "
        print(line + " ".join(f"{r[k]:>19,}" for k in COUNTS))
    for regime, g in groups.items():
        print(f"{'total ' + regime:<44} " + " ".join(f"{g[k]:>19,}" for k in COUNTS))
    print(f"{'total':<44} " + " ".join(f"{total[k]:>19,}" for k in COUNTS))
    print(f"{time.perf_counter() - start:.0f} s")
    return int(failed)
