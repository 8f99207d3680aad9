"""The penetration benchmark: its options are checked before it runs, its counter sees what it
counts (crossings, bodies out of their enclosure) and tells slides round a wall's end from
crossings, and the enclosed scenes stay shut at the fastest accepted step."""

from __future__ import annotations

import numpy as np
import pytest

from crowdsteer.envs import make_batch
from crowdsteer.envs.scenarios import periodic_corridor
from crowdsteer.training.cli import main
from crowdsteer.training.perf import bench_penetration as bp
from crowdsteer.training.support.preflight import UsageError


@pytest.mark.parametrize(
    ("field", "value", "flag"),
    [
        ("body_steps", 0.0, "--body-steps"),
        ("body_steps", -1.0, "--body-steps"),
        ("body_steps", float("nan"), "--body-steps"),
        ("body_steps", float("inf"), "--body-steps"),
        ("worlds", 0, "--worlds"),
        ("pedestrians", -1, "--pedestrians"),
        ("seed", -3, "--seed"),
    ],
)
def test_options_are_refused_by_flag_before_anything_runs(field, value, flag):
    with pytest.raises(UsageError, match=flag):
        bp.Args(**{field: value})


@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_the_command_reports_a_bad_body_step_count_in_one_line(value, capsys):
    assert main(["bench-penetration", "--body-steps", value]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--body-steps" in err and "Traceback" not in err


def _fastest_run(scenario: str, behaviour: str, body_steps: float) -> dict:
    return bp.run(scenario, behaviour, body_steps, bp.Args(worlds=8, pedestrians=10), True)


@pytest.mark.parametrize("scenario", bp.FASTEST_SCENARIOS)
def test_the_enclosed_scenes_stay_shut_at_the_fastest_step(scenario):
    totals = _fastest_run(scenario, "social_force", 60_000)
    assert totals["body_steps"] >= 60_000
    assert all(totals[k] == 0 for k in bp.VIOLATIONS), totals


def test_the_counter_finds_the_seam_leak_of_walls_that_stop_short(monkeypatch):
    """Positive control: with walls running 2 m past the seam, as before they covered every step,
    long steps leave the corridor and the counter says so."""
    monkeypatch.setattr(periodic_corridor, "wall_overhang", lambda body: 2.0)
    totals = _fastest_run("periodic_corridor", "goal_seek", 20_000)
    assert totals["left_enclosure"] > 0 and totals["overlapping_static"] > 0


def _bottleneck_state(fastest: bool):
    config = bp.run_config("bottleneck_flow", "goal_seek", bp.Args(pedestrians=4, flock=0), fastest)
    batch = make_batch(config, 1)
    batch.seed(0)
    batch.reset()
    return config, batch.state


def test_leaving_the_room_through_its_side_counts_and_through_the_doorway_does_not():
    config, s = _bottleneck_state(fastest=False)  # the learners move 0.25 m a step
    half_room = s.walls[0, 3, 0, 1]
    before = s.pos.copy()
    before[0, 0] = (-0.5, half_room - 0.35)
    s.pos[0, 0] = (-0.5, half_room + 0.35)  # through the side wall
    before[0, 1] = (-0.1, 0.0)
    s.pos[0, 1] = (0.1, 0.0)  # through the doorway
    counts = bp.count_violations(s, before, config.dt, scenario="bottleneck_flow")
    assert counts["left_enclosure"] == 1
    assert counts["chord_crossings"] == 1 and counts["wall_crossings"] == 1


def test_a_slide_round_the_doorway_within_a_step_is_no_crossing():
    config, s = _bottleneck_state(fastest=True)  # the learners move 10 m a step
    half_door = s.walls[0, 1, 0, 1]
    before = s.pos.copy()
    before[0, 0] = (-0.5, half_door + 0.5)
    s.pos[0, 0] = (0.5, half_door + 0.5)  # the chord cuts the doorway's edge
    counts = bp.count_violations(s, before, config.dt, scenario="bottleneck_flow")
    assert counts["chord_crossings"] == 1
    assert counts["wall_crossings"] == 0 and counts["left_enclosure"] == 0
    strict = bp.count_violations(s, before, None, scenario="bottleneck_flow")
    assert strict["wall_crossings"] == 1  # without dt every chord crossing counts


def test_a_way_out_longer_than_a_step_counts_even_at_the_fastest_step():
    config, s = _bottleneck_state(fastest=True)
    back = s.walls[0, 4, 0, 0]
    before = s.pos.copy()
    before[0, 0] = (back + 0.4, 0.0)
    s.pos[0, 0] = (back - 10.0, 0.0)  # through the back wall: 10.4 m, round the room is longer
    counts = bp.count_violations(s, before, config.dt, scenario="bottleneck_flow")
    assert counts["left_enclosure"] == 1


def test_periodic_positions_are_read_unwrapped():
    config = bp.run_config("periodic_corridor", "goal_seek", bp.Args(pedestrians=4), True)
    batch = make_batch(config, 1)
    batch.seed(0)
    batch.reset()
    s = batch.state
    before, start_before = s.pos.copy(), s.start.copy()
    half_length = 6.0  # the default period of 12 m
    before[0, 0] = (half_length - 0.1, 0.0)
    s.pos[0, 0] = (-half_length + 0.1, 0.0)  # wrapped across the seam: 0.2 m, not 11.8 m
    s.start[0, 0, 0] -= 2 * half_length
    counts = bp.count_violations(s, before, config.dt, start_before, "periodic_corridor")
    assert all(counts[k] == 0 for k in bp.VIOLATIONS)
    assert np.allclose(bp.unwrapped(s, before, start_before)[0, 0], (half_length + 0.1, 0.0))
    s.pos[0, 1, 1] = 3.0  # beyond the wall at y = 2
    counts = bp.count_violations(s, before, config.dt, start_before, "periodic_corridor")
    assert counts["left_enclosure"] == 1


def test_with_contact_a_push_round_the_doorway_is_told_from_a_crossing():
    """With bodies pushing each other a body may end farther than its own step reaches: a chord
    cutting the doorway's edge within the whole displacement is a push round the wall's end; a
    chord straight through the wall's middle is a crossing either way."""
    config, s = _bottleneck_state(fastest=False)  # the learners move 0.25 m a step
    half_door = s.walls[0, 1, 0, 1]
    half_room = s.walls[0, 3, 0, 1]
    before = s.pos.copy()
    before[0, 0] = (-0.4, half_door + 0.2)
    s.pos[0, 0] = (0.4, half_door + 0.2)  # 0.8 m across the doorway's edge
    middle = (half_door + half_room) / 2
    before[0, 1] = (-0.4, middle)
    s.pos[0, 1] = (0.4, middle)  # 0.8 m through the wall, far from its ends
    alone = bp.count_violations(s, before, config.dt, scenario="bottleneck_flow")
    assert alone["wall_crossings"] == 2 and alone["pushed_round_end"] == 0
    pushed = bp.count_violations(s, before, config.dt, scenario="bottleneck_flow", pushed=True)
    assert pushed["pushed_round_end"] == 1 and pushed["wall_crossings"] == 1
