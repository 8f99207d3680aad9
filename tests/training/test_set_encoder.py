"""The set encoder over the neighbours (``crowdsteer.training.rl.set_encoder``): a set function of
the present neighbours whatever their number, order or padding, usable by SB3 and saved with it."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
gym = pytest.importorskip("gymnasium")

from crowdsteer.envs.core.layout import NEIGHBOUR_DIM, OWN_DIM  # noqa: E402
from crowdsteer.training.rl.run_args import EXTRACTORS  # noqa: E402
from crowdsteer.training.rl.set_encoder import (  # noqa: E402
    POOLINGS,
    NeighbourSetExtractor,
    extractor_policy_kwargs,
    set_encoder_policy_kwargs,
)

REST = 4 * 1 + 5 * 1 + 3 * (1 + 1)  # one obstacle, one wall, one waypoint


def space(k: int) -> gym.spaces.Box:
    dim = OWN_DIM + NEIGHBOUR_DIM * k + REST
    return gym.spaces.Box(-np.inf, np.inf, (dim,), np.float32)


def encoder(k: int, pooling: str, seed: int = 0) -> NeighbourSetExtractor:
    torch.manual_seed(seed)
    return NeighbourSetExtractor(
        space(k), neighbours=k, obstacles=1, walls=1, waypoints=1, pooling=pooling
    )


def observations(rng: np.random.Generator, b: int, k: int, present: int) -> np.ndarray:
    """``b`` random observations with ``present`` of ``k`` neighbour slots filled (the first)."""
    own = rng.normal(size=(b, OWN_DIM))
    nb = np.zeros((b, k, NEIGHBOUR_DIM))
    nb[:, :present, :5] = rng.normal(size=(b, present, 5))
    nb[:, :present, 4] = 0.3
    nb[:, :present, 6] = 1.0  # a pedestrian
    nb[:, :present, 8] = 1.0
    rest = rng.normal(size=(b, REST))
    return np.concatenate([own, nb.reshape(b, -1), rest], 1).astype(np.float32)


def features(enc: NeighbourSetExtractor, obs: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return enc(torch.as_tensor(obs)).numpy()


def test_choices_agree():
    """Every pooling of the set encoder is a choice; ``flat`` and ``scan`` are the others."""
    assert ("flat", *POOLINGS, "scan") == EXTRACTORS


@pytest.mark.parametrize("pooling", POOLINGS)
def test_shape_and_own_state_passed_on(pooling):
    rng = np.random.default_rng(0)
    enc = encoder(6, pooling)
    obs = observations(rng, 7, 6, 4)
    out = features(enc, obs)
    assert out.shape == (7, enc.features_dim) == (7, OWN_DIM + 64 + REST)
    assert np.array_equal(out[:, :OWN_DIM], obs[:, :OWN_DIM])
    assert np.array_equal(out[:, -REST:], obs[:, -REST:])
    assert np.isfinite(out).all()


@pytest.mark.parametrize("pooling", POOLINGS)
def test_order_of_neighbours_does_not_matter(pooling):
    rng = np.random.default_rng(1)
    k = 6
    enc = encoder(k, pooling)
    obs = observations(rng, 16, k, 5)
    nb = obs[:, OWN_DIM : OWN_DIM + NEIGHBOUR_DIM * k].reshape(16, k, NEIGHBOUR_DIM)
    shuffled = obs.copy()
    order = rng.permutation(k)
    shuffled[:, OWN_DIM : OWN_DIM + NEIGHBOUR_DIM * k] = nb[:, order].reshape(16, -1)
    np.testing.assert_allclose(features(enc, obs), features(enc, shuffled), atol=1e-5)
    # and moving one neighbour does change the summary
    moved = obs.copy()
    moved[:, OWN_DIM] += 1.0
    assert not np.allclose(features(enc, obs), features(enc, moved), atol=1e-4)


@pytest.mark.parametrize("pooling", POOLINGS)
def test_any_number_of_slots_with_the_same_weights(pooling):
    """A module built for 10 slots, given the weights of one built for 4, reads 4 neighbours
    padded with 6 absent slots (whatever their stale contents) exactly as the first reads them."""
    rng = np.random.default_rng(2)
    small, large = encoder(4, pooling, seed=0), encoder(10, pooling, seed=1)
    large.load_state_dict(small.state_dict())
    obs4 = observations(rng, 9, 4, 3)
    own, nb, rest = obs4[:, :OWN_DIM], obs4[:, OWN_DIM:-REST], obs4[:, -REST:]
    padding = rng.normal(size=(9, 6, NEIGHBOUR_DIM)).astype(np.float32)
    padding[..., 8] = 0.0  # absent: the present flag is what counts
    obs10 = np.concatenate([own, nb, padding.reshape(9, -1), rest], 1)
    np.testing.assert_allclose(features(small, obs4), features(large, obs10), atol=1e-5)


@pytest.mark.parametrize("pooling", POOLINGS)
def test_no_neighbours_gives_a_zero_summary(pooling):
    rng = np.random.default_rng(3)
    enc = encoder(5, pooling)
    out = features(enc, observations(rng, 4, 5, 0))
    assert np.isfinite(out).all()
    assert np.array_equal(out[:, OWN_DIM:-REST], np.zeros((4, 64), np.float32))
    assert np.array_equal(enc.last_weights.numpy(), np.zeros((4, 5), np.float32))


@pytest.mark.parametrize("pooling", POOLINGS)
def test_weights_cover_the_present_neighbours(pooling):
    rng = np.random.default_rng(4)
    enc = encoder(6, pooling)
    features(enc, observations(rng, 8, 6, 3))
    w = enc.last_weights.numpy()
    assert w.shape == (8, 6)
    np.testing.assert_allclose(w.sum(1), 1.0, atol=1e-5)
    assert (w[:, 3:] == 0).all()
    assert (w >= 0).all()


def test_learns_a_set_function():
    """Fitted to the smallest surface gap among the present neighbours (the quantity a
    collision depends on), the attention encoder beats the best constant by far."""
    rng = np.random.default_rng(5)
    k = 6
    torch.manual_seed(0)
    enc = encoder(k, "attention")
    head = torch.nn.Linear(enc.features_dim, 1)
    params = list(enc.parameters()) + list(head.parameters())
    opt = torch.optim.Adam(params, lr=3e-3)

    def batch(n):
        obs = np.concatenate(
            [observations(rng, n // 2, k, rng.integers(1, k + 1)) for _ in range(2)]
        )
        nb = obs[:, OWN_DIM : OWN_DIM + NEIGHBOUR_DIM * k].reshape(len(obs), k, NEIGHBOUR_DIM)
        gap = np.hypot(nb[..., 0], nb[..., 1]) - obs[:, None, 3] - nb[..., 4]
        gap = np.where(nb[..., 8] > 0.5, gap, np.inf).min(1)
        return torch.as_tensor(obs), torch.as_tensor(gap[:, None], dtype=torch.float32)

    for _ in range(300):
        x, y = batch(256)
        loss = torch.nn.functional.mse_loss(head(enc(x)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    x, y = batch(2048)
    with torch.no_grad():
        mse = torch.nn.functional.mse_loss(head(enc(x)), y).item()
    assert mse < 0.15 * y.var().item()


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="pooling"):
        NeighbourSetExtractor(
            space(3), neighbours=3, obstacles=1, walls=1, waypoints=1, pooling="x"
        )
    with pytest.raises(ValueError, match="does not match the layout"):
        NeighbourSetExtractor(space(3), neighbours=4, obstacles=1, walls=1, waypoints=1)
    with pytest.raises(ValueError, match="embed"):
        NeighbourSetExtractor(space(3), neighbours=3, obstacles=1, walls=1, waypoints=1, embed=[])
    with pytest.raises(ValueError, match="neighbours"):
        NeighbourSetExtractor(space(0), neighbours=0, obstacles=1, walls=1, waypoints=1)
    with pytest.raises(TypeError, match="depth"):  # not a field of SetEncoderShape
        NeighbourSetExtractor(space(3), neighbours=3, obstacles=1, walls=1, waypoints=1, depth=2)


def test_training_options():
    cfg = {"obs_neighbours": 10, "obs_obstacles": 4, "obs_walls": 2, "obs_waypoints": 2}
    assert extractor_policy_kwargs("flat", cfg, [], norm_obs=True) == {}
    kw = extractor_policy_kwargs("mean", cfg, ["embed=[32, 16]"], norm_obs=False)
    assert kw["features_extractor_class"] is NeighbourSetExtractor
    assert kw["features_extractor_kwargs"] == {
        "neighbours": 10,
        "obstacles": 4,
        "walls": 2,
        "waypoints": 2,
        "pooling": "mean",
        "embed": [32, 16],
    }
    with pytest.raises(ValueError, match="--no-norm-obs"):
        extractor_policy_kwargs("attention", cfg, [], norm_obs=True)
    with pytest.raises(ValueError, match="KEY=VALUE"):
        extractor_policy_kwargs("attention", cfg, ["depth=3"], norm_obs=False)
    with pytest.raises(ValueError, match="extractor"):
        extractor_policy_kwargs("transformer", cfg, [], norm_obs=False)
    full = set_encoder_policy_kwargs(10, 4, 2, 2, net_arch=[32])
    assert full["net_arch"] == {"pi": [32], "vf": [32]}
    assert full["share_features_extractor"] is True


# ------------------------------------------------------------------ with the training scripts

SMALL_RUN = [
    "--preset",
    "crowdnav",
    "--num-worlds",
    "2",
    "--eval-episodes",
    "2",
    "--eval-every",
    "10000",
    "--no-progress-bar",
    "--threads",
    "1",
    "--no-norm-obs",
]


@pytest.mark.parametrize("algo", ["ppo", "sac"])
def test_trained_with_the_scripts_and_loaded_back(tmp_path, algo):
    """``crowdsteer train --extractor attention`` trains, saves and reloads through
    ``load_policy``, which acts exactly as the trained model on raw observations."""
    pytest.importorskip("stable_baselines3")
    from crowdsteer.baselines.policies import load_policy
    from crowdsteer.envs.api.sb3 import make_sb3_vec_env
    from crowdsteer.training.cli import main as cli_main

    extra = ["--n-steps", "32", "--batch-size", "32", "--n-epochs", "1"]
    if algo == "sac":
        extra = ["--learning-starts", "50", "--batch-size", "32", "--buffer-size", "1000"]
    argv = [*SMALL_RUN, *extra, "--extractor", "attention", "--extractor-options"]
    argv += ["embed=[16,16]", "contribution=[8]", "attention=[8]", "--total-steps", "128"]
    argv += ["--out", str(tmp_path), "--name", algo]
    assert cli_main(["train", "--algo", algo, *argv]) == 0
    policy = load_policy(str(tmp_path / algo / "model.zip"))
    assert policy.obs_rms is None  # raw observations
    nets = [m for m in policy.model.policy.modules() if isinstance(m, NeighbourSetExtractor)]
    assert nets and nets[0].pooling == "attention" and nets[0].neighbours == 10
    env = make_sb3_vec_env(num_worlds=3, preset="crowdnav")
    env.seed(5)
    obs = env.reset()
    action = policy.act(obs)
    assert action.shape == (3, 2) and np.isfinite(action).all()
    expected = np.clip(policy.model.predict(obs, deterministic=True)[0], -1, 1)
    np.testing.assert_array_equal(action, expected)


def test_scripts_refuse_a_set_encoder_on_normalised_observations(tmp_path, capsys):
    pytest.importorskip("stable_baselines3")
    from crowdsteer.training.cli import main as cli_main

    argv = [a for a in SMALL_RUN if a != "--no-norm-obs"] + ["--extractor", "mean"]
    assert cli_main(["train", "--algo", "ppo", *argv, "--out", str(tmp_path)]) != 0
    assert "--no-norm-obs" in capsys.readouterr().err
