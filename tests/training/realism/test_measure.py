"""The measurements on synthetic trajectories whose density, speed and flow are known."""

from __future__ import annotations

import math

import numpy as np
import pytest

from crowdsteer.training.realism.measure import (
    Area,
    classical_density,
    classical_speed,
    flow_rate,
    jammed_fraction,
    lane_order,
    line_crossings,
    never_crossed,
    overlap_depths,
    specific_flow,
    voronoi_density_speed,
    walking_speed,
)
from crowdsteer.training.realism.reference import (
    speed_rms_error,
    weidmann_specific_flow,
    weidmann_speed,
)


def lattice_walk(spacing, length, width, speed, frames, dt, offset=0.013):
    """Walkers on a square lattice of ``spacing`` filling a periodic ``length`` x ``width`` strip,
    all walking +x at ``speed``: positions (T, N, 2) wrapped into the strip, velocities, times."""
    xs = -length / 2 + spacing * (np.arange(round(length / spacing)) + 0.5) + offset
    ys = -width / 2 + spacing * (np.arange(round(width / spacing)) + 0.5) + offset
    base = np.array([(x, y) for x in xs for y in ys])
    times = np.arange(frames) * dt
    pos = np.repeat(base[None], frames, axis=0)
    pos[..., 0] = (pos[..., 0] + speed * times[:, None] + length / 2) % length - length / 2
    vel = np.zeros_like(pos)
    vel[..., 0] = speed
    return pos, vel, times


def test_square_lattice_density_speed_and_flow_are_exact():
    a, v, length, width = 0.5, 0.8, 8.0, 3.0
    pos, vel, times = lattice_walk(a, length, width, v, frames=40, dt=0.1)
    domain = Area(-length / 2, -width / 2, length / 2, width / 2)
    area = Area(-2.0, -width / 2, 2.0, width / 2)
    speed = walking_speed(vel)
    rho_v, v_v = voronoi_density_speed(pos, speed, area, domain, period=length, resolution=0.02)
    np.testing.assert_allclose(rho_v, 1 / a**2, rtol=0.02)
    np.testing.assert_allclose(v_v, v, rtol=1e-12)
    rho_c = classical_density(pos, area)
    assert abs(rho_c.mean() - 1 / a**2) < 0.05 * (1 / a**2)
    np.testing.assert_allclose(classical_speed(pos, speed, area), v)
    np.testing.assert_allclose(specific_flow(rho_v, v_v), v / a**2, rtol=0.02)
    # through a line across the corridor: (walkers per metre of corridor) x speed
    pos, _, times = lattice_walk(a, length, width, v, frames=400, dt=0.1)
    crossings = line_crossings(pos, times, 0.0, period=length)
    expected = len(pos[0]) / length * v
    assert len(crossings) / times[-1] == pytest.approx(expected, rel=0.03)
    assert flow_rate(crossings) == pytest.approx(expected, rel=0.03)


def test_voronoi_density_over_the_whole_domain_counts_every_walker_once():
    rng = np.random.default_rng(3)
    domain = Area(0.0, 0.0, 5.0, 2.0)
    pos = rng.uniform((0, 0), (5, 2), (6, 17, 2))
    speed = rng.uniform(0.5, 1.5, (6, 17))
    rho, v = voronoi_density_speed(pos, speed, domain, domain, resolution=0.05)
    np.testing.assert_allclose(rho, 17 / domain.size, rtol=1e-9)
    # the Voronoi speed is the speeds weighted by the cells' shares of the area
    assert np.all((v > 0.5) & (v < 1.5))


def test_voronoi_density_sees_across_the_seam():
    # two walkers either side of the seam of a 4 m strip: each owns half of it
    pos = np.array([[[-1.9, 0.5], [1.9, 0.5]]])
    domain = Area(-2.0, 0.0, 2.0, 1.0)
    area = Area(-2.0, 0.0, -1.0, 1.0)
    rho, _ = voronoi_density_speed(pos, np.ones((1, 2)), area, domain, period=4.0, resolution=0.01)
    assert rho[0] == pytest.approx(2 / 4.0, rel=1e-3)
    flat, _ = voronoi_density_speed(pos, np.ones((1, 2)), area, domain, resolution=0.01)
    assert flat[0] == pytest.approx(2 / 4.0, rel=1e-3)  # by symmetry, the same here


def test_classical_density_counts_only_present_walkers_inside():
    pos = np.array([[[0.5, 0.5], [1.5, 0.5], [0.2, 0.9]]])
    present = np.array([[True, True, False]])
    assert classical_density(pos, Area(0, 0, 1, 1), present)[0] == 1.0
    assert np.isnan(classical_speed(pos, np.ones((1, 3)), Area(5, 5, 6, 6))[0])


def test_walking_speed_projects_on_the_direction():
    vel = np.array([[[1.0, 0.5], [-1.2, 0.0]]])
    direction = np.array([[1.0, 0.0], [-1.0, 0.0]])
    np.testing.assert_allclose(walking_speed(vel, direction), [[1.0, 1.2]])
    np.testing.assert_allclose(walking_speed(vel), [[np.hypot(1, 0.5), 1.2]])


def test_line_crossings_interpolate_and_do_not_count_a_step_back_twice():
    x = np.array([-1.0, -0.5, 0.5, -0.2, 0.4, 1.0])  # crosses, steps back, crosses again
    pos = np.stack([x, np.zeros_like(x)], axis=-1)[:, None, :]
    times = np.arange(6.0)
    crossed = line_crossings(pos, times, 0.0)
    np.testing.assert_allclose(crossed, [1.5])
    assert line_crossings(pos, times, 0.0, y_range=(1.0, 2.0)).size == 0


def test_flow_rate():
    assert flow_rate(np.arange(11) * 0.5) == pytest.approx(2.0)
    assert flow_rate(np.array([0.0, 0.1, 1.0, 2.0, 3.0, 3.05]), skip=1) == pytest.approx(3 / 2.9)
    assert np.isnan(flow_rate(np.array([1.0])))


def test_weidmann_relation():
    assert weidmann_speed(5.4) == 0.0 and weidmann_speed(6.0) == 0.0
    assert weidmann_speed(1e-6) == pytest.approx(1.34, rel=1e-6)
    expected = 1.34 * (1 - np.exp(-1.913 * (1 / 2.0 - 1 / 5.4)))
    assert weidmann_speed(2.0) == pytest.approx(expected)
    rho = np.linspace(0.1, 5.3, 50)
    assert np.all(np.diff(weidmann_speed(rho)) < 0)
    flow = weidmann_specific_flow(rho)
    assert 1.1 < flow.max() < 1.3  # the capacity of Weidmann's stream, near 1.75 /m^2
    with pytest.raises(ValueError, match="density"):
        weidmann_speed(-1.0)


def test_speed_rms_error():
    rho = np.array([0.2, 1.0, 2.0, 4.5])
    exact = weidmann_speed(rho)
    assert speed_rms_error(rho, exact) == 0.0
    off = exact + np.array([5.0, 0.1, -0.1, 5.0])  # points outside 0.5-4 /m^2 do not count
    assert speed_rms_error(rho, off) == pytest.approx(0.1)
    assert np.isnan(speed_rms_error(np.array([0.1]), np.array([1.0])))


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="Area"):
        Area(1.0, 0.0, 0.0, 1.0)
    with pytest.raises(ValueError, match=r"\(T, N, 2\)"):
        classical_density(np.zeros((3, 2)), Area(0, 0, 1, 1))
    with pytest.raises(ValueError, match="resolution"):
        voronoi_density_speed(
            np.zeros((1, 1, 2)),
            np.zeros((1, 1)),
            Area(0, 0, 1, 1),
            Area(0, 0, 1, 1),
            resolution=0.0,
        )


def test_never_crossed_counts_the_walkers_left_behind():
    """Three walkers: one through the door line, one through and back, one that stays behind;
    a fourth never present is not counted."""
    t = np.linspace(0.0, 1.0, 11)
    pos = np.zeros((11, 4, 2))
    pos[:, 0, 0] = -1.0 + 2.0 * t
    pos[:, 1, 0] = 0.5 - np.abs(t - 0.5) * 2.0  # beyond at the middle, behind at both ends
    pos[:, 2, 0] = -0.5
    present = np.ones((11, 4), bool)
    present[:, 3] = False
    assert never_crossed(pos, 0.0, present).tolist() == [False, False, True, False]


def test_overlap_depths_of_the_pairs_that_touch_across_the_seam():
    pos = np.array([[[-5.9, 0.0], [5.85, 0.0], [0.0, 0.0]]])  # 0.25 m apart through the seam
    depth = overlap_depths(pos, np.full(3, 0.2), period=12.0)
    assert depth == pytest.approx([0.15])
    assert overlap_depths(pos, np.full(3, 0.2)).size == 0  # not periodic: far apart


def test_lane_order_tells_lanes_from_a_mixture():
    """Two lanes walking apart score 1; alternating walkers in one line score 1/9 inside (one
    walker its way, two against) and 0 at the ends; walkers across the seam of a periodic
    corridor are neighbours at the nearest image."""
    x = np.arange(8) * 0.5
    lanes = np.concatenate([np.column_stack([x, np.zeros(8)]), np.column_stack([x, np.ones(8)])])
    assert lane_order(lanes, np.repeat([1.0, -1.0], 8)) == 1.0
    alternating = np.column_stack([x, np.zeros(8)])
    phi = lane_order(alternating, np.tile([1.0, -1.0], 4), reach=0.6)
    assert phi == pytest.approx(6 / 9 / 8)
    seam = np.array([[0.1, 0.0], [9.9, 0.0]])
    assert math.isnan(lane_order(seam, np.array([1.0, -1.0]), reach=1.0))
    assert lane_order(seam, np.array([1.0, -1.0]), reach=1.0, period=10.0) == 0.0
    assert lane_order(seam, np.array([1.0, 1.0]), reach=1.0, period=10.0) == 1.0


def test_jammed_fraction_counts_the_slow_walkers_per_frame():
    speed = np.array([[0.0, 0.05, 1.0, -0.3], [1.2, 1.1, 0.2, 0.09]])
    assert jammed_fraction(speed).tolist() == [0.75, 0.25]


def test_bottleneck_references_by_width():
    from crowdsteer.training.realism.reference import bottleneck_points, reference_specific_flow

    points = bottleneck_points()
    assert set(points["source"]) == {"Seyfried et al. 2009", "Zhang et al. 2011 (exits)"}
    np.testing.assert_allclose(points["specific_flow"], points["flow"] / points["width"], 1e-3)
    assert reference_specific_flow(1.0) == (1.9, 0.15, "Seyfried 2009")
    value, tolerance, source = reference_specific_flow(1.6)  # two exits of 1.6 m: their mean
    sel = points["width"] == 1.6
    assert value == pytest.approx(points["specific_flow"][sel].mean()) and tolerance == 0.2
    assert reference_specific_flow(2.5) is None and source == "Zhang 2011"


def test_speed_scatter_needs_five_points_near_the_density():
    from crowdsteer.training.realism.reference import speed_scatter

    points = {"density": np.array([1.0, 1.1, 1.2, 0.9, 1.05, 3.0]), "speed": np.arange(6.0)}
    low, high, n = speed_scatter(points, 1.0, quantiles=(0.0, 1.0))
    assert (low, high, n) == (0.0, 4.0, 5)
    assert math.isnan(speed_scatter(points, 3.0)[0])
