"""Placement: every configuration the constructor accepts places its bodies on every reset.

The scenario generators are called directly (no stepping). The largest accepted counts are found
from the constructor's own check; at those counts rejection sampling stalls, so these tests also
exercise the lattice fallback. ``MAX_ROUNDS`` is lowered where a test draws many worlds: the
fallback's guarantee does not depend on how many rejection rounds come first, and the lowered
rounds keep the test fast.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.scenarios import (
    SCENARIOS,
    BodyDefaults,
    Counts,
    ScenarioError,
    make_params,
    placement,
    sampling,
    scenario_names,
)
from crowdsteer.envs.scenarios.base import check_scenario
from crowdsteer.envs.scenarios.placement import (
    Box,
    FixedSet,
    Group,
    Lattice,
    PairPlan,
    _overlapping,
    close_pairs,
    draw_pairs,
    overlapping_pairs_dense,
)
from crowdsteer.envs.scenarios.sampling import AxisBoxes, points, uniform_rows

BODY = BodyDefaults()


def _accepted(name: str, counts: Counts, params=None, body: BodyDefaults = BODY) -> bool:
    try:
        check_scenario(name, params or make_params(name, {}), counts, body)
    except ScenarioError:
        return False
    return True


def _largest(name: str, make_counts, params=None, body: BodyDefaults = BODY, hi: int = 4096):
    """Largest n with ``make_counts(n)`` accepted (the check is monotone in the counts)."""
    lo = 0
    if not _accepted(name, make_counts(0), params, body):
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _accepted(name, make_counts(mid), params, body):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _assert_no_overlap(spec, counts: Counts) -> None:
    """No two bodies start overlapping, no two walkers' goals overlap, no walker starts or ends
    overlapping an obstacle, no body starts overlapping one; everything finite."""
    assert np.isfinite(spec.start).all() and np.isfinite(spec.goal).all()
    walkers = counts.learners + counts.pedestrians
    r = spec.radius
    for pts, rr in ((spec.start, r), (spec.goal[:walkers], r[:walkers])):
        d = np.linalg.norm(pts[:, None] - pts[None], axis=-1)
        np.fill_diagonal(d, np.inf)
        gap = d - (rr[:, None] + rr[None])
        assert gap.min(initial=np.inf) >= -1e-9, float(gap.min())
    if len(spec.obstacle_pos):
        for pts, rr in ((spec.start, r), (spec.goal[:walkers], r[:walkers])):
            d = np.linalg.norm(pts[:, None] - spec.obstacle_pos[None], axis=-1)
            assert (d >= spec.obstacle_radius[None] + rr[:, None] - 1e-9).all()


def _learners(name: str) -> int:
    """The learners placed beside the largest crowds (declared with the scenario)."""
    return SCENARIOS[name].test_learners


# the scenarios declared without flock units (their check refuses any, naming n_flock)
WALKERS_ONLY = {name for name, entry in SCENARIOS.items() if not entry.flock}

CAP = 400  # search limit: two_walkers has no room limit of its own (pairs get cells of their own)


def _max_configs():
    """(scenario, counts, params) at the largest accepted counts: walkers alone, flock units
    beside the default walkers, both at half the largest walker count; a crowded obstacle field.
    """
    out = []
    for name in scenario_names():
        lr = _learners(name)
        n_ped = _largest(name, lambda n, lr=lr: Counts(lr, n, 0), hi=CAP)
        if name in WALKERS_ONLY:
            out.append((name, Counts(lr, n_ped, 0), None))
            continue
        n_flock = _largest(name, lambda n, lr=lr: Counts(lr, 4, n), hi=CAP)
        half = n_ped // 2
        n_both = _largest(name, lambda n, lr=lr, h=half: Counts(lr, h, n), hi=CAP)
        out += [
            (name, Counts(lr, n_ped, 0), None),
            (name, Counts(lr, 4, n_flock), None),
            (name, Counts(lr, half, n_both), None),
        ]
    dense = make_params("obstacle_field", {"n_obstacles": 12, "width": 14.0})
    n_ped = _largest("obstacle_field", lambda n: Counts(1, n, 0), dense)
    out.append(("obstacle_field", Counts(1, n_ped, 0), dense))
    return out


MAX_CONFIGS = _max_configs()


def test_largest_counts_are_far_beyond_the_defaults():
    walkers = {n: c.pedestrians for n, c, p in MAX_CONFIGS if p is None and c.flock == 0}
    flock = {n: c.flock for n, c, p in MAX_CONFIGS if p is None and c.pedestrians == 4}
    assert walkers["circle_crossing"] >= 30
    assert walkers["square_crossing"] >= 100
    assert walkers["corridor"] >= 20
    assert walkers["obstacle_field"] >= 30
    assert walkers["bottleneck"] >= 30
    assert walkers["periodic_corridor"] >= 100  # 12 m x 4 m up to its jam
    assert walkers["bottleneck_flow"] >= 200  # the waiting room grows with the crowd
    for name in WALKERS_ONLY:
        with pytest.raises(ScenarioError, match="n_flock"):
            check_scenario(name, make_params(name, {}), Counts(0, 4, 1), BODY)
    both = {n: c for n, c, p in MAX_CONFIGS if p is None and c.flock and c.pedestrians != 4}
    for name in sorted(set(scenario_names()) - WALKERS_ONLY):
        assert flock[name] >= 40, name
        assert both[name].flock >= 10, name  # flock units beside a dense crowd


@pytest.mark.parametrize(
    "name, counts, params", MAX_CONFIGS, ids=[f"{n}-{c}" for n, c, _ in MAX_CONFIGS]
)
def test_every_reset_succeeds_at_the_largest_accepted_counts(name, counts, params, monkeypatch):
    """1,000 seeds at the largest walker counts (250 at the largest flock counts): every draw
    succeeds without overlap. One rejection round runs before the lattice fallback (the full
    200 rounds are tested below)."""
    monkeypatch.setattr(placement, "MAX_ROUNDS", 1)
    params = params or make_params(name, {})
    generate = SCENARIOS[name].generate
    # 1,000 seeds where the walkers are densest; fewer beside hundreds of flock units (slower)
    for seed in range(1000 if counts.flock == 0 else 250):
        spec = generate(np.random.default_rng(seed), counts, BODY, params)
        if seed % 100 == 0:
            _assert_no_overlap(spec, counts)
    # one more flock unit, or walker, than the largest accepted count is refused, naming it
    if counts.flock:
        more, what = Counts(counts.learners, counts.pedestrians, counts.flock + 1), "n_flock"
    else:
        more, what = Counts(counts.learners, counts.pedestrians + 1, 0), "n_pedestrians"
    if more.flock <= CAP and (counts.flock or counts.pedestrians < CAP):
        with pytest.raises(ScenarioError, match=what):
            check_scenario(name, params, more, BODY)


@pytest.mark.parametrize("name", scenario_names())
def test_dense_draws_are_deterministic_with_the_full_rejection_rounds(name):
    learners = _learners(name)
    n_ped = _largest(name, lambda n: Counts(learners, n, 0), hi=CAP)
    counts = Counts(learners, n_ped, 0)
    params = make_params(name, {})
    a = [SCENARIOS[name].generate(np.random.default_rng(s), counts, BODY, params) for s in (0, 1)]
    b = [SCENARIOS[name].generate(np.random.default_rng(s), counts, BODY, params) for s in (0, 1)]
    for x, y in zip(a, b, strict=True):
        assert np.array_equal(x.start, y.start) and np.array_equal(x.goal, y.goal)
        _assert_no_overlap(x, counts)
    assert not np.array_equal(a[0].start, a[1].start)


@st.composite
def _scenario_requests(draw):
    name = draw(st.sampled_from(scenario_names()))
    params = {}
    for key, (lo, hi) in SCENARIOS[name].test_sizes.items():
        if draw(st.booleans()):
            v = draw(st.integers(lo, hi) if isinstance(lo, int) else st.floats(lo, hi))
            params[key] = v
    counts = Counts(
        draw(st.integers(0, 6)),
        draw(st.integers(0, 80)),
        draw(st.integers(0, 40)),
    )
    radius = draw(st.sampled_from([0.1, 0.3, 0.5]))
    return name, params, counts, BodyDefaults(radius=radius, flock_radius=radius * 0.7)


@settings(max_examples=150, deadline=None)
@given(_scenario_requests(), st.integers(0, 2**32 - 1))
def test_any_accepted_request_is_placed_without_overlap(request_, seed):
    """Random sizes, counts and radii: the check accepts or refuses naming a count or a size;
    an accepted request is placed without overlap, whichever way (rejection or lattice)."""
    name, overrides, counts, body = request_
    try:
        params = make_params(name, overrides)
        check_scenario(name, params, counts, body)
    except ScenarioError as err:
        sizes = SCENARIOS[name].test_sizes
        assert any(k in str(err) for k in (*sizes, "n_", "radius", "size", "width")), err
        event("refused")
        return
    event(f"placed {counts.total} bodies" if counts.total < 20 else "placed 20+ bodies")
    generate = SCENARIOS[name].generate
    full = placement.MAX_ROUNDS
    for rounds in (full, 0):  # as drawn, and straight to the lattice
        placement.MAX_ROUNDS = rounds
        try:
            spec = generate(np.random.default_rng(seed), counts, body, params)
        finally:
            placement.MAX_ROUNDS = full
        _assert_no_overlap(spec, counts)


@pytest.mark.parametrize("start_noise", [0.0, 0.2])
def test_crowdnav_arena_on_a_narrow_ring_refuses_what_its_starts_and_goals_cannot_share(
    start_noise,
):
    """Starts (and the goals at their antipodes) on a ring with little or no shift bar arcs of
    it: 31 humans of 0.1 m do not fit on a 6 m ring with 0.25 m of gap and are refused by
    count; the most the check accepts are placed, on every seed tried."""
    params = make_params("crowdnav_arena", {"circle_radius": 6.0, "start_noise": start_noise})
    body = BodyDefaults(radius=0.1)
    with pytest.raises(ScenarioError, match="n_pedestrians"):
        check_scenario("crowdnav_arena", params, Counts(0, 31, 0), body)
    most = _largest("crowdnav_arena", lambda n: Counts(0, n, 0), params, body, hi=30)
    assert most >= 10
    for seed in range(5):
        spec = SCENARIOS["crowdnav_arena"].generate(
            np.random.default_rng(seed), Counts(0, most, 0), body, params
        )
        _assert_no_overlap(spec, Counts(0, most, 0))


def test_config_refuses_what_cannot_be_placed_naming_the_count():
    with pytest.raises(ValueError, match="n_pedestrians"):
        CrowdConfig.from_kwargs(scenario="corridor", n_pedestrians=200)
    with pytest.raises(ValueError, match="n_flock"):
        CrowdConfig.from_kwargs(scenario="bottleneck", n_flock=500)
    with pytest.raises(ValueError, match="n_obstacles"):
        CrowdConfig.from_kwargs(scenario="obstacle_field", scenario_params={"n_obstacles": 1000})
    with pytest.raises(ValueError, match="n_pedestrians=100000.*<= 10000"):
        CrowdConfig.from_kwargs(n_pedestrians=100_000)
    with pytest.raises(ValueError, match="at most 10000"):
        CrowdConfig.from_kwargs(n_pedestrians=9000, n_flock=2000)


def test_placement_memory_is_linear_in_the_count():
    """Huge counts are refused by the check before anything is allocated; the overlap search
    itself holds O(n) memory: 20,000 spread points take well under a megabyte of pairs."""
    import tracemalloc

    rng = np.random.default_rng(0)
    pts = rng.uniform(0, 400, (20_000, 2))
    r = np.full(len(pts), 0.35)
    tracemalloc.start()
    close_pairs(pts, r, pts, r)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 40 * len(pts) * 8 * 4  # a few dozen words per point, never n^2


def test_close_pairs_matches_all_pairs():
    rng = np.random.default_rng(1)
    a = rng.uniform(-5, 5, (300, 2))
    b = rng.uniform(-5, 5, (200, 2))
    ra, rb = rng.uniform(0.05, 0.4, 300), rng.uniform(0.05, 0.4, 200)
    i, j = close_pairs(a, ra, b, rb)
    d = np.linalg.norm(a[:, None] - b[None], axis=-1)
    want = set(zip(*np.nonzero(d < ra[:, None] + rb[None]), strict=True))
    assert set(zip(i.tolist(), j.tolist(), strict=True)) == want and len(i) == len(want)
    for pts in (a, rng.uniform(-30, 30, (1000, 2))):  # all pairs, then the grid
        r = np.full(len(pts), 0.3)
        i, j = close_pairs(pts, r, pts, r, same=True)
        d = np.linalg.norm(pts[:, None] - pts[None], axis=-1)
        np.fill_diagonal(d, np.inf)
        want = set(zip(*np.nonzero(d < 0.6), strict=True))
        assert set(zip(i.tolist(), j.tolist(), strict=True)) == want and len(i) == len(want)


def test_lattice_sites_in_a_box_are_spaced_and_counted():
    lattice = Lattice.for_clearance(0.35, origin=(0.0, 0.0))
    box = Box(-1.0, -2.0, 3.0, 1.0)
    i0, i1, j0, j1 = lattice.index_range(box)
    ii, jj = np.meshgrid(np.arange(i0, i1 + 1), np.arange(j0, j1 + 1))
    sites = lattice.sites(box, ii.ravel(), jj.ravel())
    assert len(sites) == lattice.count(box) == 6 * 4  # x: -0.7 .. 2.8, y: -1.4 .. 0.7
    d = np.linalg.norm(sites[:, None] - sites[None], axis=-1)
    np.fill_diagonal(d, np.inf)
    assert d.min() >= 0.7
    assert (sites >= [box.x0, box.y0]).all() and (sites <= [box.x1, box.y1]).all()


def test_an_explicit_crowd_on_one_point_is_refused_naming_the_first_pair():
    """10,000 bodies on one point: the overlap check names the first pair it finds."""
    agents = [{"start": (0.0, 0.0), "goal": (5.0, 0.0), "role": "learner"}]
    agents += [{"start": (3.0, 3.0), "goal": (3.0, -3.0)} for _ in range(9999)]
    with pytest.raises(ValueError, match=r"agents\[1\] and agents\[\d+\] start overlapping"):
        CrowdConfig.from_kwargs(scenario={"agents": agents})


@st.composite
def _plans_with_fixed_points(draw):
    """A random plan (groups of boxes, some close or overlapping) and fixed points anywhere in
    their declared regions, clustered or spread."""
    c = draw(st.floats(0.1, 0.6))
    lattice = Lattice.for_clearance(c, origin=(draw(st.floats(-1, 1)), draw(st.floats(-1, 1))))

    def box():
        x0, y0 = draw(st.floats(-6, 6)), draw(st.floats(-6, 6))
        return Box(x0, y0, x0 + draw(st.floats(0.0, 6.0)), y0 + draw(st.floats(0.0, 6.0)))

    groups, start = [], 0
    with_goals = draw(st.booleans())  # goal boxes for every group, or goal = start for all
    for _ in range(draw(st.integers(1, 3))):
        k = draw(st.integers(0, 30))
        goal = box() if with_goals else None
        groups.append(Group(np.arange(start, start + k), box(), goal))
        start += k
    fixed, points, clearance = [], [], []
    for _ in range(draw(st.integers(0, 3))):
        region = box()
        n, fc = draw(st.integers(0, 12)), draw(st.floats(0.0, 1.0))
        fixed.append(FixedSet(n, fc + c, region))
        cluster = draw(st.booleans())
        for _ in range(n):
            if cluster:  # all on one point of the region: the densest blocking
                p = (region.x0, region.y0)
            else:
                p = (draw(st.floats(region.x0, region.x1)), draw(st.floats(region.y0, region.y1)))
            points.append(p)
            clearance.append(fc)
    plan = PairPlan(lattice, tuple(groups), "bodies", "", tuple(fixed))
    return plan, c, np.array(points, float).reshape(-1, 2), np.array(clearance, float)


@settings(max_examples=300, deadline=None)
@given(request_=_plans_with_fixed_points(), seed=st.integers(0, 2**32 - 1))
def test_a_plan_that_passes_its_check_is_always_placed(request_, seed):
    """The capacity proof itself: whenever ``PairPlan.check`` passes, the lattice placement
    succeeds for fixed points anywhere in their declared regions, without any overlap."""
    plan, c, fixed, fixed_c = request_
    try:
        plan.check("test")
    except ScenarioError:
        event("refused")
        return
    event("placed")
    clearance = np.full(plan.size, c)
    starts, goals = plan.lattice_place(np.random.default_rng(seed), clearance, fixed, fixed_c)
    for pts in (starts, goals):
        d = np.linalg.norm(pts[:, None] - pts[None], axis=-1)
        np.fill_diagonal(d, np.inf)
        assert (d >= 2 * c).all()
        if len(fixed):
            df = np.linalg.norm(pts[:, None] - fixed[None], axis=-1)
            assert (df >= fixed_c[None] + c).all()
    for g in plan.groups:
        for pts, b in ((starts[g.members], g.start), (goals[g.members], g.goal or g.start)):
            assert ((pts >= [b.x0, b.y0]) & (pts <= [b.x1, b.y1])).all()


@pytest.mark.parametrize("same", [False, True])
def test_close_pairs_of_few_points_are_numpys_table_in_its_order(same):
    """Below ``_DENSE_PAIRS`` pairs the compiled loop gives exactly the pairs, in the order,
    of numpy's table of every pair (what the scenarios' draws were written against)."""
    rng = np.random.default_rng(2)
    for n, m in ((1, 1), (7, 7), (40, 60), (64, 64)):
        a = rng.uniform(-3, 3, (n, 2))
        b = a if same else rng.uniform(-3, 3, (m, 2))
        ra = rng.uniform(0.1, 0.6, len(a))
        rb = ra if same else rng.uniform(0.1, 0.6, len(b))
        dx = a[:, None, 0] - b[None, :, 0]
        dy = a[:, None, 1] - b[None, :, 1]
        hit = np.sqrt(dx * dx + dy * dy) < ra[:, None] + rb[None, :]
        if same:
            np.fill_diagonal(hit, False)
        want_i, want_j = np.nonzero(hit)
        i, j = close_pairs(a, ra, b, rb, same=same)
        assert i.dtype == j.dtype == np.int64
        assert np.array_equal(i, want_i) and np.array_equal(j, want_j)


def test_dense_overlap_marks_are_the_pairwise_searchs():
    """``draw_pairs``' compiled check marks exactly the bodies the pair search marks: starts and
    goals, any subset moved, with fixed points, at touching distances too."""
    rng = np.random.default_rng(3)
    for n, f in ((1, 0), (5, 0), (12, 3), (30, 8)):
        for _ in range(20):
            starts = rng.uniform(-2, 2, (n, 2))
            goals = rng.uniform(-2, 2, (n, 2))
            if n > 1:  # two bodies exactly touching: the comparison is strict
                goals[1] = goals[0] + [0.5, 0.0]
            clearance = np.full(n, 0.25) if n < 12 else rng.uniform(0.1, 0.4, n)
            fixed, fixed_c = rng.uniform(-2, 2, (f, 2)), rng.uniform(0.1, 0.5, f)
            moved = np.flatnonzero(rng.random(n) < 0.5) if n > 5 else np.arange(n)
            want = _overlapping(starts, clearance, moved, fixed, fixed_c)
            want |= _overlapping(goals, clearance, moved, fixed, fixed_c)
            bad = np.ones(n, bool)  # stale marks are cleared
            marked = overlapping_pairs_dense(starts, goals, clearance, moved, fixed, fixed_c, bad)
            assert np.array_equal(bad, want) and marked == want.sum()


@pytest.mark.parametrize("by_hand", [True, False])
def test_uniform_rows_draw_what_uniform_calls_draw(monkeypatch, by_hand):
    """``uniform_rows`` gives the numbers of one ``g.uniform(low, high, k)`` call per row, bit for
    bit, and leaves the generator where those calls leave it: made from ``g.random`` (where
    this machine's numpy allows) or by the calls themselves."""
    assert sampling.UNIFORM_FROM_RANDOM  # numpy's uniform is low + (high - low) * random
    monkeypatch.setattr(sampling, "UNIFORM_FROM_RANDOM", by_hand)
    rng = np.random.default_rng(11)
    for k in (0, 1, 7, 40):
        low = rng.uniform(-20.0, 20.0, 5)
        bounds = np.stack([low, low + rng.uniform(0.0, 9.0, 5)], axis=1)
        bounds[2] = bounds[1]  # repeated rows, as samplers draw starts and goals alike
        seed = int(rng.integers(1 << 31))
        calls = np.random.default_rng(seed)
        want = np.array([calls.uniform(lo, hi, k) for lo, hi in bounds])
        rows = np.random.default_rng(seed)
        got = uniform_rows(rows, bounds, k)
        assert got.shape == (5, k) and np.array_equal(got, want)
        assert rows.random() == calls.random()


def test_points_are_stacked_coordinates():
    x, y = np.array([0.5, -1.0, 3.0]), np.array([2.0, 0.0, -4.5])
    got = points(x, y)
    assert got.dtype == np.float64 and got.flags.c_contiguous
    assert np.array_equal(got, np.stack([x, y], axis=1))


@pytest.mark.parametrize("variant", ["mirrored", "offset", "crossing"])
@pytest.mark.parametrize("fixed_count", [0, 4])
def test_axis_boxes_compiled_rejection_draws_what_the_loop_draws(monkeypatch, variant, fixed_count):
    """An ``AxisBoxes`` rejection run compiled gives ``draw_pairs``' Python loop's starts and
    goals bit for bit, stalls (None) where it stalls, and leaves the generator where it does:
    crowded boxes, many rounds, with and without fixed points."""
    rng = np.random.default_rng(5)
    for n in (1, 6, 14):
        sign = np.where(rng.random(n) < 0.5, -1.0, 1.0)
        bounds = np.array([(0.5, 3.0), (-1.5, 1.5), (0.5, 3.0), (-1.5, 1.5)])
        if variant == "offset":
            sample = AxisBoxes.offset(bounds, 4.0 * sign, -4.0 * sign)
        elif variant == "mirrored":
            sample = AxisBoxes.mirrored(bounds, sign, -sign)
        else:
            bounds[3] = bounds[2]  # the lateral pairs share their bounds
            sample = AxisBoxes.mirrored(bounds, -np.ones(n), np.ones(n), sign > 0, True)
        clearance = np.full(n, 0.35)
        fixed = rng.uniform(-4.0, 4.0, (fixed_count, 2))
        fixed_c = np.full(fixed_count, 0.3)
        for rounds in (3, 200):
            seed = int(rng.integers(1 << 31))
            runs = []
            for compiled in (True, False):
                monkeypatch.setattr(sampling, "UNIFORM_FROM_RANDOM", compiled)
                g = np.random.default_rng(seed)
                runs.append((draw_pairs(g, sample, n, clearance, fixed, fixed_c, rounds), g))
            (got, g_compiled), (want, g_loop) = runs
            assert (got is None) == (want is None)
            if want is not None:
                assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
            assert g_compiled.random() == g_loop.random()
