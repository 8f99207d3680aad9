"""Cardioid anti-gravity that picks a side (Gast, Point A to Point B parts 2 and 3).

Part 2: each push ("red") is also rotated toward the perpendicular of the path when the obstacle
is nearly straight ahead, giving the "adjusted" push ("blue"), so a single obstacle dead ahead
is walked around rather than braked against.

Part 3: two obstacles exactly symmetric about the path cancel each other's sideways pushes, red
or blue alike, and the body stalls between them. The plain pushes are therefore also summed
("yellow") and, when that sum is the larger one, the sum itself is turned to one side and scaled
down like a single obstacle ("green", A). The final direction is
``target_dir + A + igFac * B`` with B the sum of the blue pushes and igFac a quarter ellipse that
drops B when ``A + B`` points straight back (or straight ahead).

Limit of the method, kept as published: close to a symmetric pair both sums point almost
straight back, igFac then drops B and A is only ``(|yellow| - |B|) / (|B| + 1)`` long. A pair of
discs that overlap by a good part of their radius is gone around on the configured side (0.3 m
discs 0.4-0.5 m apart, for a 0.3 m body); a pair that barely touches, or leaves a gap narrower
than the body, is not: the body heads into the gap between them.

Side convention. The article turns a vector lying at an angle delta from the target direction
by ``-theta * sign(delta)`` with the standard rotation formulas, and an exact tie (delta = +pi,
what ``atan2`` gives for a sum pointing straight back along the +x path) therefore turns it
clockwise in the formulas' own frame. The article draws on a canvas with y pointing down, where
that is a turn to the walker's right: "we choose to go to the right". In our y-up world the same
formulas would turn it to the left. ``side = +1`` (default) reproduces the article's picture:
on a tie the body swerves to its right and the obstacles pass on its left. ``side = -1``
swerves left. Away from ties the turn direction is geometric (away from the nearer mass of
obstacles) and mirror-symmetric, so ``side`` only decides the exactly symmetric cases, which
``tie_angle`` widens from bitwise equality to a small band so that rounding in the sums cannot
flip the choice.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..kernels.bundle import Range, bundle, typed_params
from ..kernels.geometry import EPS, normalize, rotate
from ..kernels.jit import njit
from .cardioid import CARDIOID_RANGES, _check_batch, _n_valid, cardioid_push
from .senses import Body, Senses, body_at, senses_at, senses_of, work_senses


@bundle
class SideChoiceParams(NamedTuple):
    """Parameters of :func:`side_choice`."""

    personal_space: float = 3.0  # "mass * mass * 3" (part 3)
    power: float = 3.0  # cardioid exponent
    side: float = 1.0  # +1: swerve right on a tie (the article's choice), -1: swerve left
    tie_angle: float = 1e-6  # rad; a vector within this of straight back counts as a tie


SIDE_CHOICE_RANGES = {
    **CARDIOID_RANGES,
    "side": Range(-1.0, 1.0, "+1: swerve right on a tie, -1: swerve left", choices=(-1.0, 1.0)),
    "tie_angle": Range(0.0, 1.0, "rad from straight back counted as a tie"),
}
"""Allowed values of ``SideChoiceParams``' fields."""
# The side-choice family's debug values, for the overlays (right of way extends both rows).
# Per body (``dbg``): each a column, pairs as (x, y) in consecutive columns.
DBG_TARGET = 0  # (2) unit direction to the target
DBG_PLAIN_SUM = 2  # (2) yellow: sum of the plain weighted pushes
DBG_ADJUSTED_SUM = 4  # (2) blue: sum of the adjusted pushes
DBG_TURNED = 6  # (2) green: the plain sum turned to the chosen side
DBG_IG_FAC = 8  # igFac, the weight of the blue sum
DBG_FINAL = 9  # (2) the unit desired direction
N_SUM_DEBUG = 11
# Per neighbour (``dbg_nb``, a row each):
DBG_NB_PLAIN = 0  # (2) red: the weighted plain push
DBG_NB_ADJUSTED = 2  # (2) blue: the weighted adjusted push
DBG_NB_WEIGHT = 4  # the cardioid weight
N_NB_DEBUG = 5


class SideChoiceDebug(NamedTuple):
    """Every intermediate vector of :func:`side_choice` for one body (for overlays).

    Arrays over the ``n`` valid neighbours: ``plain (n, 2)`` weighted red pushes ``v * r``,
    ``adjusted (n, 2)`` weighted blue pushes ``av * r``, ``weight (n,)`` cardioid weights ``r``.
    Then ``target_dir (2,)``, ``yellow (2,)`` sum of red, ``blue (2,)`` sum of blue (B),
    ``green (2,)`` turned-and-scaled yellow (A), ``ig_fac`` and ``final (2,)`` unit direction.
    """

    plain: np.ndarray
    adjusted: np.ndarray
    weight: np.ndarray
    target_dir: np.ndarray
    yellow: np.ndarray
    blue: np.ndarray
    green: np.ndarray
    ig_fac: float
    final: np.ndarray


@njit(cache=True)
def _turn_sign(cross: float, back: float, side: float, tie_angle: float) -> float:
    """Sign used by the article's ``-theta * sign(delta)`` turns, ties decided by ``side``.

    ``delta`` is the signed angle from the target direction to the vector; ``sign(delta)`` is the
    sign of the cross product ``cross``, and ``back = pi - |delta|``. ``sign(delta) = +1`` turns the
    vector clockwise (y-up), so a vector pointing back is turned to the body's left; a tie
    (``back <= tie_angle``) turns it to the configured side.
    """
    if back <= tie_angle:
        return -1.0 if side >= 0.0 else 1.0
    if cross > 0.0:
        return 1.0
    if cross < 0.0:
        return -1.0
    return 0.0


@njit(cache=True)
def _quarter_ellipse(a: float, b: float) -> float:
    """``sqrt(1 - ((2 delta - pi) / pi)^2)`` for ``delta = a`` in ``[0, pi]`` and ``b = pi - a``.

    Written as ``sqrt(4 a b) / pi``, which is the same value but stays accurate near 0 and pi,
    where the article's form loses digits under its square root.
    """
    q = 4.0 * a * b
    if q <= 0.0:
        return 0.0
    return min(math.sqrt(q) / math.pi, 1.0)


@njit(cache=True)
def adjusted_push(
    vx: float,
    vy: float,
    r: float,
    dirx: float,
    diry: float,
    side: float,
    tie_angle: float,
) -> tuple[float, float]:
    """The part-2 "blue" vector: push ``v`` rotated toward the path's perpendicular.

    ``delta`` is the angle from the target direction to the push. When ``|delta| >= pi/2`` the
    inverted quarter ellipse ``r2 = 1 - sqrt(1 - ((2|delta| - pi)/pi)^2)`` grows from 0 (push
    sideways) to 1 (push straight back); the rotation is ``theta = pi * r * r2 / 2`` away from the
    obstacle's side, so an obstacle dead ahead with full cardioid weight gets a sideways push.
    """
    cross = dirx * vy - diry * vx
    dot = dirx * vx + diry * vy
    if dot >= 0.0 or r == 0.0:
        # |delta| <= pi/2 (r2 = 0) or no cardioid weight: no rotation. Also covers v = 0.
        return vx, vy
    # |delta| and pi - |delta|, each from its own atan2 so both are accurate.
    ad = math.atan2(abs(cross), dot)
    back = math.atan2(abs(cross), -dot)
    r2 = 0.0
    if back <= 0.5 * math.pi:
        r2 = 1.0 - _quarter_ellipse(ad, back)
    theta = math.pi * r * r2 * 0.5
    return rotate(vx, vy, -theta * _turn_sign(cross, back, side, tie_angle))


@njit(cache=True, inline="always")
def combine_sums(
    dirx: float,
    diry: float,
    agx: float,
    agy: float,
    adjx: float,
    adjy: float,
    side: float,
    tie_angle: float,
) -> tuple[float, float, float, float, float]:
    """Part 3's choice between the yellow sum ``ag`` and the blue sum ``adj`` (B).

    Returns ``(fx, fy, ax, ay, ig_fac)``: the unit final direction, the green vector A and igFac.
    """
    magold = math.sqrt(agx * agx + agy * agy)
    magnew = math.sqrt(adjx * adjx + adjy * adjy)
    newx = 0.0
    newy = 0.0
    # Only when yellow is the larger (and non-zero: the article divides by it unguarded).
    if magold > EPS and magold >= magnew:
        keep = (1.0 - magnew / magold) * (1.0 / (magnew + 1.0))
        new_theta = -keep * (0.5 * math.pi)
        cross = dirx * agy - diry * agx
        dot = dirx * agx + diry * agy
        ad = math.atan2(abs(cross), dot)  # |delta| from the target direction to yellow
        back = math.atan2(abs(cross), -dot)  # pi - |delta|
        axxx = 0.0
        if ad > 0.5 * math.pi:
            # Linear 0..1 over 90..180 degrees, squared, signed. In the post this line sits inside
            # a broken comment ("/square and give it a sign ... /"); it is code: without it the
            # ratio is unsigned and the turn would not follow the side of the yellow vector.
            axxx = (ad - 0.5 * math.pi) / (0.5 * math.pi)
            axxx = axxx * axxx * _turn_sign(cross, back, side, tie_angle)
        newx, newy = rotate(agx, agy, new_theta * axxx)
        f = keep * abs(axxx)
        newx *= f
        newy *= f
    cx = newx + adjx
    cy = newy + adjy
    ig_fac = 0.0
    if cx * cx + cy * cy > EPS * EPS:
        # Angle between A + B and the target direction, in [0, pi], and its supplement.
        cross = abs(dirx * cy - diry * cx)
        dot = dirx * cx + diry * cy
        ig_fac = _quarter_ellipse(math.atan2(cross, dot), math.atan2(cross, -dot))
    fx, fy = normalize(dirx + newx + ig_fac * adjx, diry + newy + ig_fac * adjy)
    return fx, fy, newx, newy, ig_fac


@njit(cache=True, inline="always")
def write_sums(dbg, plain, adjusted, turned, ig_fac, final):
    """The per-body sums of the side-choice family into its debug row ``dbg: (S,)``: the yellow
    ``plain``, blue ``adjusted`` and green ``turned`` sums and the ``final`` direction, each an
    ``(x, y)`` pair, and igFac."""
    dbg[DBG_PLAIN_SUM] = plain[0]
    dbg[DBG_PLAIN_SUM + 1] = plain[1]
    dbg[DBG_ADJUSTED_SUM] = adjusted[0]
    dbg[DBG_ADJUSTED_SUM + 1] = adjusted[1]
    dbg[DBG_TURNED] = turned[0]
    dbg[DBG_TURNED + 1] = turned[1]
    dbg[DBG_IG_FAC] = ig_fac
    dbg[DBG_FINAL] = final[0]
    dbg[DBG_FINAL + 1] = final[1]


@njit(cache=True)
def side_choice_one(me: Body, sense: Senses, params: SideChoiceParams) -> tuple[float, float]:
    """Unit desired direction of ``me: Body`` from ``(me.px, me.py)`` toward ``(me.tx, me.ty)``.

    The obstacles are the first ``me.n`` rows of ``sense: Senses`` (``pos (C, 2)``,
    ``radius (C,)``). When ``sense.dbg`` is not empty, the intermediate vectors are written to
    ``sense.dbg_nb: (C, N_NB_DEBUG)`` and ``sense.dbg: (N_SUM_DEBUG,)`` (``DBG_*``). Returns
    ``(0, 0)`` on the target.
    """
    dbg_nb, dbg = sense.dbg_nb, sense.dbg
    want = dbg.shape[0] > 0
    dirx, diry = normalize(me.tx - me.px, me.ty - me.py)
    if want:
        dbg_nb[:, :] = 0.0
        dbg[:] = 0.0
        dbg[DBG_TARGET] = dirx
        dbg[DBG_TARGET + 1] = diry
    if dirx == 0.0 and diry == 0.0:
        return 0.0, 0.0
    agx = 0.0
    agy = 0.0
    adjx = 0.0
    adjy = 0.0
    for k in range(_n_valid(me.n, sense.pos.shape[0])):
        vx, vy, _, r = cardioid_push(me, sense, k, dirx, diry, params.personal_space, params.power)
        avx, avy = adjusted_push(vx, vy, r, dirx, diry, params.side, params.tie_angle)
        agx += vx * r
        agy += vy * r
        adjx += avx * r
        adjy += avy * r
        if want:
            dbg_nb[k, DBG_NB_PLAIN] = vx * r
            dbg_nb[k, DBG_NB_PLAIN + 1] = vy * r
            dbg_nb[k, DBG_NB_ADJUSTED] = avx * r
            dbg_nb[k, DBG_NB_ADJUSTED + 1] = avy * r
            dbg_nb[k, DBG_NB_WEIGHT] = r
    fx, fy, gx, gy, ig = combine_sums(
        dirx, diry, agx, agy, adjx, adjy, params.side, params.tie_angle
    )
    if want:
        write_sums(dbg, (agx, agy), (adjx, adjy), (gx, gy), ig, (fx, fy))
    return fx, fy


@njit(cache=True, allocates=True)
def _side_choice_batch(bodies, rows, params):
    n = bodies.pos.shape[0]
    out = np.zeros((n, 2))
    work = work_senses(0)  # no debug rows: the kernel skips them
    for a in range(n):
        me = body_at(bodies, a, rows.n[a], rows.n[a])
        out[a, 0], out[a, 1] = side_choice_one(me, senses_at(rows, a, work), params)
    return out


def side_choice(
    pos: np.ndarray,
    target: np.ndarray,
    radius: np.ndarray | float,
    nb_pos: np.ndarray,
    nb_radius: np.ndarray,
    n_nb: np.ndarray,
    params: SideChoiceParams | None = None,
) -> np.ndarray:
    """Unit desired directions ``(A, 2)`` with side choice.

    ``pos, target: (A, 2)``, ``radius: (A,)``, ``nb_pos: (A, K, 2)``, ``nb_radius: (A, K)``,
    ``n_nb: (A,)`` valid rows per body. ``(0, 0)`` for a body on its target.
    """
    bodies, rows = _check_batch(pos, target, radius, nb_pos, nb_radius, n_nb)
    return _side_choice_batch(bodies, rows, typed_params(SideChoiceParams, params))


def side_choice_debug(
    pos: np.ndarray,
    target: np.ndarray,
    radius: float,
    nb_pos: np.ndarray,
    nb_radius: np.ndarray,
    n_nb: int | None = None,
    params: SideChoiceParams | None = None,
) -> SideChoiceDebug:
    """All intermediate vectors of :func:`side_choice` for one body.

    ``pos, target: (2,)``, ``nb_pos: (K, 2)``, ``nb_radius: (K,)``, ``n_nb`` defaults to ``K``.
    """
    pos = np.asarray(pos, np.float64)
    target = np.asarray(target, np.float64)
    nb_pos = np.ascontiguousarray(nb_pos, dtype=np.float64).reshape(-1, 2)
    nb_radius = np.ascontiguousarray(nb_radius, dtype=np.float64).reshape(-1)
    k = nb_pos.shape[0]
    n = k if n_nb is None else max(0, min(int(n_nb), k))
    dbg_nb = np.zeros((k, N_NB_DEBUG))
    dbg = np.zeros(N_SUM_DEBUG)
    me = Body(
        px=float(pos[0]),
        py=float(pos[1]),
        tx=float(target[0]),
        ty=float(target[1]),
        radius=float(radius),
        n=n,
        n_bodies=n,
    )
    sense = senses_of(nb_pos, nb_radius, dbg_nb=dbg_nb, dbg=dbg)
    side_choice_one(me, sense, typed_params(SideChoiceParams, params))
    return SideChoiceDebug(
        plain=dbg_nb[:n, DBG_NB_PLAIN : DBG_NB_PLAIN + 2].copy(),
        adjusted=dbg_nb[:n, DBG_NB_ADJUSTED : DBG_NB_ADJUSTED + 2].copy(),
        weight=dbg_nb[:n, DBG_NB_WEIGHT].copy(),
        target_dir=dbg[DBG_TARGET : DBG_TARGET + 2].copy(),
        yellow=dbg[DBG_PLAIN_SUM : DBG_PLAIN_SUM + 2].copy(),
        blue=dbg[DBG_ADJUSTED_SUM : DBG_ADJUSTED_SUM + 2].copy(),
        green=dbg[DBG_TURNED : DBG_TURNED + 2].copy(),
        ig_fac=float(dbg[DBG_IG_FAC]),
        final=dbg[DBG_FINAL : DBG_FINAL + 2].copy(),
    )
