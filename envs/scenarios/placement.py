"""No-overlap placement of starts and goals: rejection sampling with a lattice fallback.

Scenarios draw their bodies' (start, goal) pairs by rejection: a body whose start or goal overlaps
an earlier body's (or a fixed point: an obstacle, a body of another group) is redrawn, for at most
``MAX_ROUNDS`` rounds. Overlaps are found on a uniform grid of cells, so memory is O(n). When
rejection stalls (a dense request), the bodies go to distinct sites of a square lattice whose
spacing is one body's clearance diameter, drawn at random from the same generator, so the episode
is still a function of the seed. The lattice also gives the capacity the constructor checks
(``PairPlan.check``): a request that fits the lattice is always placed, so resets never fail
after construction.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from crowdsteer.envs.kernels.jit import njit

from . import sampling
from .errors import ScenarioError
from .sampling import AxisBoxes, draw_axis_boxes, overlapping_pairs_dense, points, uniform_rows

MAX_ROUNDS = 200
"""Rejection rounds before the lattice fallback."""

_PAIR_BUDGET = 1 << 20  # candidate pairs examined at once by ``close_pairs``
_DENSE_PAIRS = 4096  # below this many pairs ``close_pairs`` compares all of them directly
_COMPILED_PAIRS = 1 << 16  # up to this many pairs an ``AxisBoxes`` rejection runs compiled

Sampler = Callable[[np.random.Generator, np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Box:
    """The axis-aligned rectangle ``[x0, x1] x [y0, y1]`` (empty when reversed)."""

    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def empty(self) -> bool:
        return not (self.x0 <= self.x1 and self.y0 <= self.y1)

    def intersect(self, other: Box) -> Box:
        return Box(
            max(self.x0, other.x0),
            max(self.y0, other.y0),
            min(self.x1, other.x1),
            min(self.y1, other.y1),
        )

    def grow(self, d: float) -> Box:
        return Box(self.x0 - d, self.y0 - d, self.x1 + d, self.y1 + d)

    def gap(self, other: Box) -> float:
        """Separation along the farther-apart axis (<= 0 when the boxes overlap on both axes):
        any point of one box is at least this far from any point of the other."""
        return max(other.x0 - self.x1, self.x0 - other.x1, other.y0 - self.y1, self.y0 - other.y1)

    def size_text(self) -> str:
        return f"{self.x1 - self.x0:.3g} x {self.y1 - self.y0:.3g} m"


# ----------------------------------------------------------------------- overlap search


def close_pairs(
    a: np.ndarray,
    ra: np.ndarray,
    b: np.ndarray,
    rb: np.ndarray,
    first_only: bool = False,
    same: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs ``(i, j)`` with ``|a[i] - b[j]| < ra[i] + rb[j]``.

    a: (n, 2), ra: (n,), b: (m, 2), rb: (m,). Points are binned in a uniform grid of cell
    ``max(ra) + max(rb)``; only the 3 x 3 cells around each point of ``a`` are compared, a bounded
    number of candidates at a time, so memory stays O(n + m) for well spread points (a few
    points are compared all against all). The distance
    is ``sqrt(dx * dx + dy * dy)``, bit for bit ``np.linalg.norm`` of the difference.
    ``first_only``: stop at the first chunk that holds a pair. ``same``: ``a`` and ``b`` are the
    same points, and a point is not paired with itself.
    """
    none = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    if len(a) == 0 or len(b) == 0:
        return none
    if len(a) * len(b) <= _DENSE_PAIRS:  # few points: every pair, no grid
        return _close_pairs_dense(
            np.ascontiguousarray(a, np.float64),
            np.ascontiguousarray(ra, np.float64),
            np.ascontiguousarray(b, np.float64),
            np.ascontiguousarray(rb, np.float64),
            same,
        )
    cell = float(np.max(ra)) + float(np.max(rb))
    if not cell > 0:
        return none
    both = np.concatenate([a, b])
    lo = both.min(axis=0)
    ia = np.floor((a - lo) / cell).astype(np.int64)
    ib = np.floor((b - lo) / cell).astype(np.int64)
    stride = int(max(ia[:, 1].max(), ib[:, 1].max())) + 3
    ka = ia[:, 0] * stride + ia[:, 1]
    kb = ib[:, 0] * stride + ib[:, 1]
    order = np.argsort(kb, kind="stable")
    sorted_kb = kb[order]
    # the 3 cells (x + dx, y - 1 .. y + 1) of one column are consecutive keys: one range each
    rows = ka[:, None] + np.array([-stride, 0, stride], np.int64)[None, :]  # (n, 3)
    first = np.searchsorted(sorted_kb, rows - 1, "left")
    counts = np.searchsorted(sorted_kb, rows + 1, "right") - first
    per_point = counts.sum(axis=1)
    out_i, out_j = [], []
    start = 0
    while start < len(a):
        # as many points of ``a`` as keep the candidate pairs within the budget (at least one)
        stop = start + max(1, int(np.searchsorted(np.cumsum(per_point[start:]), _PAIR_BUDGET)))
        c = counts[start:stop].ravel()
        total = int(c.sum())
        if total:
            owner = np.repeat(np.arange(start, stop).repeat(3), c)
            base = np.repeat(first[start:stop].ravel(), c)
            within = np.arange(total) - np.repeat(np.cumsum(c) - c, c)
            j = order[base + within]
            if same:
                keep = owner != j
                owner, j = owner[keep], j[keep]
            dx = a[owner, 0] - b[j, 0]
            dy = a[owner, 1] - b[j, 1]
            hit = np.sqrt(dx * dx + dy * dy) < ra[owner] + rb[j]
            if hit.any():
                out_i.append(owner[hit])
                out_j.append(j[hit])
                if first_only:
                    break
        start = stop
    if not out_i:
        return none
    return np.concatenate(out_i), np.concatenate(out_j)


@njit(cache=True, allocates=True)
def _close_pairs_dense(a, ra, b, rb, same):
    """``close_pairs`` comparing every pair, in row-major order (that of ``np.nonzero`` over the
    ``(n, m)`` table of pairs); a compiled loop, as a reset draws and checks a few dozen points
    several times, where numpy's calls on such small arrays cost more than the arithmetic."""
    out_i = np.empty(a.shape[0] * b.shape[0], np.int64)
    out_j = np.empty(a.shape[0] * b.shape[0], np.int64)
    k = 0
    for i in range(a.shape[0]):
        for j in range(b.shape[0]):
            if same and i == j:
                continue
            dx = a[i, 0] - b[j, 0]
            dy = a[i, 1] - b[j, 1]
            if math.sqrt(dx * dx + dy * dy) < ra[i] + rb[j]:
                out_i[k] = i
                out_j[k] = j
                k += 1
    return out_i[:k].copy(), out_j[:k].copy()


def _overlapping(
    pts: np.ndarray,
    clearance: np.ndarray,
    moved: np.ndarray,
    fixed: np.ndarray,
    fixed_c: np.ndarray,
) -> np.ndarray:
    """Bodies that overlap an earlier body or a fixed point: (n,) bool.

    Only pairs involving a ``moved`` body (indices) are examined; the others were clear before
    and have not moved, so the result equals the full check ``any(j < i overlaps i)``.
    """
    bad = np.zeros(len(pts), bool)
    i, j = close_pairs(pts[moved], clearance[moved], pts, clearance)
    i = moved[i]
    keep = i != j
    bad[np.maximum(i[keep], j[keep])] = True
    if len(fixed):
        k, _ = close_pairs(pts[moved], clearance[moved], fixed, fixed_c)
        bad[moved[k]] = True
    return bad


def draw_pairs(
    rng: np.random.Generator,
    sample: Sampler,
    n: int,
    clearance: np.ndarray,
    fixed_points: np.ndarray | None = None,
    fixed_clearance: np.ndarray | None = None,
    max_rounds: int | None = None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Draw ``n`` (start, goal) pairs whose starts and whose goals do not overlap, or None.

    ``sample(rng, idx) -> (starts (k, 2), goals (k, 2))`` draws pairs for the body indices
    ``idx``; ``clearance: (n,)`` is each body's radius plus margin: two starts (or goals) overlap
    when nearer than the sum of their clearances. Starts and goals also keep clear of
    ``fixed_points: (f, 2)`` with ``fixed_clearance: (f,)``. Every body that overlaps an earlier
    one is redrawn, all at once, for at most ``max_rounds`` rounds (default ``MAX_ROUNDS``);
    None if some still overlap. With an ``AxisBoxes`` sampler the rounds run in one compiled call
    (``sampling.draw_axis_boxes``), with the same draws.
    """
    if n == 0:
        return np.zeros((0, 2)), np.zeros((0, 2))
    clearance = np.ascontiguousarray(clearance, np.float64)
    fixed = np.zeros((0, 2)) if fixed_points is None else np.asarray(fixed_points, float)
    fixed_c = np.zeros(0) if fixed_clearance is None else np.asarray(fixed_clearance, float)
    fixed, fixed_c = np.ascontiguousarray(fixed), np.ascontiguousarray(fixed_c)
    rounds = MAX_ROUNDS if max_rounds is None else max_rounds
    compiled = type(sample) is AxisBoxes and sampling.UNIFORM_FROM_RANDOM
    if compiled and n * (n + len(fixed)) <= _COMPILED_PAIRS:
        # the same rounds and draws as the loop below, in one compiled call
        starts, goals = np.empty((n, 2)), np.empty((n, 2))
        placed = draw_axis_boxes(rng, sample, clearance, fixed, fixed_c, rounds, starts, goals)
        return (starts, goals) if placed else None
    starts, goals = (np.ascontiguousarray(x, np.float64) for x in sample(rng, np.arange(n)))
    moved = np.arange(n)
    bad = np.zeros(n, bool)
    for _ in range(rounds):
        if len(moved) * (n + len(fixed)) <= _DENSE_PAIRS:
            marked = overlapping_pairs_dense(starts, goals, clearance, moved, fixed, fixed_c, bad)
        else:
            bad = _overlapping(starts, clearance, moved, fixed, fixed_c)
            bad |= _overlapping(goals, clearance, moved, fixed, fixed_c)
            marked = bad.any()
        if not marked:
            return starts, goals
        moved = bad.nonzero()[0]
        starts[moved], goals[moved] = sample(rng, moved)
    return None


# ----------------------------------------------------------------------------- lattice


@dataclass(frozen=True)
class Lattice:
    """Sites ``origin + spacing * (i, j)``: any two distinct sites are ``spacing`` apart."""

    spacing: float
    origin: tuple[float, float] = (0.0, 0.0)

    @classmethod
    def for_clearance(cls, clearance: float, origin: tuple[float, float] = (0.0, 0.0)) -> Lattice:
        """Sites far enough apart for bodies of ``clearance`` (a hair more than 2 x clearance,
        so that rounding never brings two sites closer than the sum of clearances)."""
        return cls(2.0 * clearance * (1.0 + 1e-9) + 1e-9, origin)

    def index_range(self, box: Box) -> tuple[int, int, int, int]:
        """Inclusive index ranges ``(i0, i1, j0, j1)`` of the sites inside ``box``."""
        if box.empty:
            return 0, -1, 0, -1
        s, (ox, oy) = self.spacing, self.origin
        return (
            math.ceil((box.x0 - ox) / s),
            math.floor((box.x1 - ox) / s),
            math.ceil((box.y0 - oy) / s),
            math.floor((box.y1 - oy) / s),
        )

    def count(self, box: Box) -> int:
        """Number of sites inside ``box``."""
        i0, i1, j0, j1 = self.index_range(box)
        return max(i1 - i0 + 1, 0) * max(j1 - j0 + 1, 0)

    def sites(self, box: Box, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Coordinates (k, 2) of sites ``(i, j)``, clipped into ``box`` against rounding."""
        s, (ox, oy) = self.spacing, self.origin
        x = np.clip(ox + s * np.asarray(i, float), box.x0, box.x1)
        y = np.clip(oy + s * np.asarray(j, float), box.y0, box.y1)
        return points(x, y)

    def disc_sites(self, rho: float) -> int:
        """Upper bound on the number of sites within distance ``rho`` of any point."""
        per_axis = math.floor(2.0 * rho / self.spacing) + 1
        return per_axis * per_axis


@dataclass(frozen=True)
class FixedSet:
    """``count`` fixed points that block lattice sites within ``rho`` of them; their centres lie
    in ``region``, a box or a tuple of boxes (None: anywhere). Used to bound how many sites of a
    box they can block, whichever way they were drawn."""

    count: int
    rho: float
    region: Box | tuple[Box, ...] | None = None

    def blocked_bound(self, lattice: Lattice, box: Box) -> int:
        bound = self.count * lattice.disc_sites(self.rho)
        if self.region is not None:
            regions = (self.region,) if isinstance(self.region, Box) else self.region
            near = sum(lattice.count(box.intersect(r.grow(self.rho))) for r in regions)
            bound = min(bound, near)
        return bound


def _blocked_indices(
    lattice: Lattice, box: Box, points: np.ndarray, rho: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Site indices ``(i, j)`` inside ``box`` within ``rho[k]`` of some ``points[k]``."""
    i0, i1, j0, j1 = lattice.index_range(box)
    if len(points) == 0 or i1 < i0 or j1 < j0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    s, (ox, oy) = lattice.spacing, lattice.origin
    lo_i = np.maximum(np.ceil((points[:, 0] - rho - ox) / s), i0).astype(np.int64)
    hi_i = np.minimum(np.floor((points[:, 0] + rho - ox) / s), i1).astype(np.int64)
    lo_j = np.maximum(np.ceil((points[:, 1] - rho - oy) / s), j0).astype(np.int64)
    hi_j = np.minimum(np.floor((points[:, 1] + rho - oy) / s), j1).astype(np.int64)
    ni = np.maximum(hi_i - lo_i + 1, 0)
    nj = np.maximum(hi_j - lo_j + 1, 0)
    cells = ni * nj
    total = int(cells.sum())
    if total == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    owner = np.repeat(np.arange(len(points)), cells)
    k = np.arange(total) - np.repeat(np.cumsum(cells) - cells, cells)
    i = lo_i[owner] + k // nj[owner]
    j = lo_j[owner] + k % nj[owner]
    xy = lattice.sites(box, i, j)
    dx = xy[:, 0] - points[owner, 0]
    dy = xy[:, 1] - points[owner, 1]
    near = np.sqrt(dx * dx + dy * dy) < rho[owner]
    return i[near], j[near]


def lattice_sites(
    rng: np.random.Generator,
    lattice: Lattice,
    box: Box,
    n: int,
    taken: np.ndarray,
    fixed_points: np.ndarray,
    fixed_rho: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` distinct random sites in ``box``: points (n, 2) and their indices (n, 2).

    Sites in ``taken: (t, 2)`` (indices used by other groups) and sites within ``fixed_rho`` of
    ``fixed_points`` are skipped. Draws ``n`` plus the number of unavailable sites without
    replacement, so at least ``n`` are free when the box has room (``PairPlan.check``).
    """
    i0, i1, j0, j1 = lattice.index_range(box)
    ny = max(j1 - j0 + 1, 0)
    total = max(i1 - i0 + 1, 0) * ny
    bi, bj = _blocked_indices(lattice, box, fixed_points, fixed_rho)
    inside = (taken[:, 0] >= i0) & (taken[:, 0] <= i1) & (taken[:, 1] >= j0) & (taken[:, 1] <= j1)
    ui = np.concatenate([bi, taken[inside, 0]])
    uj = np.concatenate([bj, taken[inside, 1]])
    unavailable = np.unique((ui - i0) * ny + (uj - j0))
    if n == 0:
        return np.zeros((0, 2)), np.zeros((0, 2), np.int64)
    if total - len(unavailable) < n:
        raise ScenarioError(
            f"internal: {n} bodies do not fit the {total - len(unavailable)} free lattice sites of "
            f"a {box.size_text()} area; the configuration check should have refused this"
        )
    drawn = rng.choice(total, min(total, n + len(unavailable)), replace=False)
    flat = drawn[~np.isin(drawn, unavailable)][:n]
    i = i0 + flat // ny
    j = j0 + flat % ny
    return lattice.sites(box, i, j), np.stack([i, j], axis=1)


# ------------------------------------------------------------------------------- plans


@dataclass(frozen=True)
class Group:
    """Bodies that start in one box and end in another (``goal=None``: goal = start)."""

    members: np.ndarray  # (k,) int: indices among the plan's bodies
    start: Box
    goal: Box | None = None
    label: str = ""


@dataclass(frozen=True)
class PairPlan:
    """Where a scenario's bodies of one kind may start and end, and the lattice that guarantees
    room for them.

    ``what`` names the bodies ("learners and pedestrians"); ``advice`` says which count or size
    to change when they do not fit. ``fixed`` bounds the fixed points they must keep clear of.
    Groups whose boxes come within one spacing of each other share ``lattice`` (and its sites are
    counted once); a group far from all others gets a lattice aligned with its own box.
    """

    lattice: Lattice
    groups: tuple[Group, ...]
    what: str
    advice: str
    fixed: tuple[FixedSet, ...] = ()

    def __post_init__(self) -> None:
        if len({g.goal is None for g in self.groups}) > 1:
            raise ValueError("a plan's groups all have goal boxes, or none has (goal = start)")

    @property
    def size(self) -> int:
        return sum(len(g.members) for g in self.groups)

    def _lattice_for(self, g_idx: int, end: str) -> tuple[Lattice, bool]:
        """The lattice of group ``g_idx``'s ``end`` box, and whether it is the box's own: a box
        at least one spacing from every other group's box gets a lattice aligned with its
        corner (the most sites it can hold); boxes closer than that share the plan's lattice, so
        that their sites never come closer than one spacing."""
        box = _end_box(self.groups[g_idx], end)
        for h_idx, h in enumerate(self.groups):
            if (
                h_idx != g_idx
                and len(h.members)
                and box.gap(_end_box(h, end)) < self.lattice.spacing
            ):
                return self.lattice, False
        return Lattice(self.lattice.spacing, (box.x0, box.y0)), True

    def check(self, scenario: str) -> None:
        """Raise ``ScenarioError`` unless every group fits its boxes in the worst case."""
        for g_idx, g in enumerate(self.groups):
            n = len(g.members)
            if n == 0:
                continue
            for end in ("start", "goal"):
                box = getattr(g, end)
                if box is None:
                    continue
                lattice, own = self._lattice_for(g_idx, end)
                room = lattice.count(box)
                for h in self.groups[:g_idx] if not own else ():
                    shared = lattice.count(box.intersect(_end_box(h, end)))
                    room -= min(len(h.members), shared)
                room -= sum(f.blocked_bound(lattice, box) for f in self.fixed)
                if n > room:
                    where = f" ({g.label})" if g.label else ""
                    spot = "area" if g.goal is None else f"{end} area"
                    raise ScenarioError(
                        f"scenario={scenario!r} cannot guarantee room for {n} {self.what}"
                        f"{where}: its {spot} of {box.size_text()} holds at most "
                        f"{max(room, 0)} bodies spaced {self.lattice.spacing:.3g} m apart; "
                        f"{self.advice}"
                    )

    def place(
        self,
        rng: np.random.Generator,
        sample: Sampler,
        clearance: np.ndarray,
        fixed_points: np.ndarray | None = None,
        fixed_clearance: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Starts and goals (n, 2) of the plan's bodies: rejection sampling with ``sample``,
        then, if it stalls, distinct lattice sites of each group's boxes (``lattice_place``)."""
        n = self.size
        drawn = draw_pairs(rng, sample, n, clearance, fixed_points, fixed_clearance)
        if drawn is not None:
            return drawn
        return self.lattice_place(rng, clearance, fixed_points, fixed_clearance)

    def lattice_place(
        self,
        rng: np.random.Generator,
        clearance: np.ndarray,
        fixed_points: np.ndarray | None = None,
        fixed_clearance: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Every body on a distinct random lattice site of its group's boxes, clear of the fixed
        points (their clearance plus the largest body clearance)."""
        n = self.size
        fixed = np.zeros((0, 2)) if fixed_points is None else np.asarray(fixed_points, float)
        fixed_c = np.zeros(0) if fixed_clearance is None else np.asarray(fixed_clearance, float)
        rho = fixed_c + (float(np.max(clearance)) if n else 0.0)
        starts, goals = np.zeros((n, 2)), np.zeros((n, 2))
        taken_s = np.zeros((0, 2), np.int64)
        taken_g = np.zeros((0, 2), np.int64)
        none = np.zeros((0, 2), np.int64)
        for g_idx, g in enumerate(self.groups):
            k = len(g.members)
            lattice, own = self._lattice_for(g_idx, "start")
            pts, keys = lattice_sites(
                rng, lattice, g.start, k, none if own else taken_s, fixed, rho
            )
            starts[g.members] = pts
            if not own:  # sites of the shared lattice that later groups must skip
                taken_s = np.concatenate([taken_s, keys])
            if g.goal is None:
                goals[g.members] = pts
                if not own:
                    taken_g = np.concatenate([taken_g, keys])
                continue
            lattice, own = self._lattice_for(g_idx, "goal")
            pts, keys = lattice_sites(rng, lattice, g.goal, k, none if own else taken_g, fixed, rho)
            goals[g.members] = pts
            if not own:
                taken_g = np.concatenate([taken_g, keys])
        return starts, goals


def _end_box(g: Group, end: str) -> Box:
    """Where group ``g``'s starts (``end="start"``) or goals lie (a goal-less group's goals are
    its starts)."""
    return g.goal if end == "goal" and g.goal is not None else g.start


def uniform_in(box: Box) -> Sampler:
    """A sampler of points uniform in ``box`` with goal = start (flock units)."""

    bounds = np.array([(box.x0, box.x1), (box.y0, box.y1)])

    def sample(g: np.random.Generator, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p = points(*uniform_rows(g, bounds, len(idx)))
        return p, p.copy()

    return sample
