"""The evaluation table's title names the pedestrians' behaviours as the scene draws them."""

from crowdsteer.training.evaluation.evaluate import describe_pedestrians, make_config


def _scene(policies):
    agents = [{"start": (0, 0), "goal": (10, 0), "role": "learner"}]
    agents += [
        {"start": (4, 2.0 * i - 3), "goal": (4, 3 - 2.0 * i), "role": "pedestrian", "policy": p}
        for i, p in enumerate(policies)
    ]
    return {"agents": agents}


def test_one_behaviour_is_the_configured_one():
    assert describe_pedestrians(make_config("corridor", n_pedestrians=5)) == "5 right_of_way"
    cfg = make_config("corridor", n_pedestrians=3, pedestrian_behaviour="orca")
    assert describe_pedestrians(cfg) == "3 orca"


def test_a_scene_that_sets_behaviours_is_described_as_drawn():
    cfg = make_config(_scene(["social_force", "orca", "social_force"]))
    assert describe_pedestrians(cfg) == "2 social_force + 1 orca"
