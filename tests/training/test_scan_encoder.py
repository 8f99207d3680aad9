"""The lidar scan encoder (``crowdsteer.training.rl.scan_encoder``): its shapes, that it reads the
own state and the scans and nothing else, its circular padding, and the path from a run's
options to a saved model that ``crowdsteer evaluate`` plays with its sensors."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

import gymnasium as gym  # noqa: E402
import torch  # noqa: E402

from crowdsteer.envs.core.config import CrowdConfig  # noqa: E402
from crowdsteer.envs.core.sensors import observation_layout  # noqa: E402
from crowdsteer.training.rl.runs import effective_config  # noqa: E402
from crowdsteer.training.rl.scan_encoder import (  # noqa: E402
    ScanExtractor,
    scan_encoder_policy_kwargs,
    scan_layout,
)

LIDAR = {"lidar_beams": 64, "lidar_frames": 3, "lidar_range": 5.0}


def _extractor(**options) -> tuple[ScanExtractor, dict]:
    config = CrowdConfig.from_kwargs(preset="crowdnav", **LIDAR)
    layout = observation_layout(config)
    space = gym.spaces.Box(-np.inf, np.inf, (layout.dim,), np.float32)
    kwargs = {**scan_layout(effective_config({"preset": "crowdnav", **LIDAR})), **options}
    return ScanExtractor(space, **kwargs), layout.slices()


def _observations(slices: dict, b: int = 5, seed: int = 0) -> torch.Tensor:
    rng = np.random.default_rng(seed)
    dim = max(sl.stop for sl in slices.values())
    obs = rng.normal(size=(b, dim))
    lidar = slices["lidar"]
    obs[:, lidar] = rng.uniform(0.0, 5.0, size=(b, lidar.stop - lidar.start))
    return torch.as_tensor(obs, dtype=torch.float32)


def test_layout_is_the_environments_lidar_block():
    _, slices = _extractor()
    got = scan_layout(effective_config({"preset": "crowdnav", **LIDAR}))
    assert got["scan_start"] == slices["lidar"].start == 133
    assert (got["frames"], got["beams"], got["scan_range"]) == (3, 64, 5.0)
    assert got["full_circle"] is True
    narrow = scan_layout(effective_config({"preset": "crowdnav", **LIDAR, "lidar_fov": 180.0}))
    assert narrow["full_circle"] is False
    with pytest.raises(ValueError, match="lidar_beams"):
        scan_layout(effective_config({"preset": "crowdnav"}))


def test_shapes():
    ex, slices = _extractor(channels=[8, 16], kernels=[5, 3], strides=[2, 2], hidden=24)
    obs = _observations(slices, b=7)
    assert ex.scans(obs).shape == (7, 3, 64)
    assert ex.conv_shape == (16, 16)
    assert ex.encode_scan(ex.scans(obs)).shape == (7, 16, 16)
    assert ex(obs).shape == (7, 8 + 24) and ex.features_dim == 32
    # the own state passes through as it is
    assert torch.equal(ex(obs)[:, :8], obs[:, :8])
    odd, _ = _extractor(channels=[4], kernels=[3], strides=[3])
    assert odd.conv_shape == (4, 22)  # 64 beams, stride 3: ceil(64 / 3)
    assert odd(obs).shape == (7, 8 + 128)


def test_reads_no_human_state_nor_any_other_block():
    """Perturb every entry outside the own state and the lidar block (the humans' exact states
    first of all): the features do not move; perturb a beam: they do."""
    ex, slices = _extractor()
    obs = _observations(slices)
    before = ex(obs)
    other = obs.clone()
    for name in ("neighbours", "obstacles", "walls", "waypoints"):
        sl = slices[name]
        other[:, sl] = torch.randn_like(other[:, sl]) * 100.0
    assert torch.equal(ex(other), before)
    beam = obs.clone()
    beam[:, slices["lidar"].start + 10] = 0.1
    assert not torch.allclose(ex(beam), before)


def test_convolutions_wrap_around_the_full_circle():
    """Over 360 degrees the scan is a ring: turning it by the convolutions' total stride (4
    beams) turns their output by one cell exactly, at the ends as well, which zero padding would
    break. A narrower field of view pads with zeros."""
    ex, slices = _extractor(channels=[8, 8], kernels=[5, 3], strides=[2, 2])
    near = ex.scans(_observations(slices))
    out = ex.encode_scan(near)
    turned = ex.encode_scan(torch.roll(near, 4, dims=-1))
    assert torch.allclose(turned, torch.roll(out, 1, dims=-1), atol=1e-6)
    assert all(c.padding_mode == "circular" for c in ex.conv if isinstance(c, torch.nn.Conv1d))
    config = CrowdConfig.from_kwargs(preset="crowdnav", **LIDAR, lidar_fov=180.0)
    space = gym.spaces.Box(-np.inf, np.inf, (observation_layout(config).dim,), np.float32)
    narrow = ScanExtractor(space, **scan_layout(config.as_dict()))
    assert all(c.padding_mode == "zeros" for c in narrow.conv if isinstance(c, torch.nn.Conv1d))


def test_bad_arguments_are_refused():
    space = gym.spaces.Box(-1.0, 1.0, (100,), np.float32)
    with pytest.raises(ValueError, match="no lidar block"):
        ScanExtractor(space, scan_start=50, frames=2, beams=64, scan_range=5.0)
    with pytest.raises(ValueError, match="odd"):
        ScanExtractor(space, scan_start=8, frames=1, beams=64, scan_range=5.0, kernels=[4, 3])
    with pytest.raises(ValueError, match="one entry per convolution"):
        ScanExtractor(space, scan_start=8, frames=1, beams=64, scan_range=5.0, channels=[8])
    eff = effective_config({"preset": "crowdnav", **LIDAR})
    with pytest.raises(ValueError, match="no-norm-obs"):
        scan_encoder_policy_kwargs(eff, norm_obs=True)
    with pytest.raises(ValueError, match="KEY=VALUE"):
        scan_encoder_policy_kwargs(eff, ["embed=[64]"])
    got = scan_encoder_policy_kwargs(eff, ["hidden=32", "channels=[4,4]"])
    assert got["features_extractor_kwargs"]["hidden"] == 32
    assert got["features_extractor_class"] is ScanExtractor


def test_a_trained_model_is_evaluated_with_its_lidar(tmp_path):
    """A few hundred steps of the lidar recipe: the run records its sensors, the model loads
    without unpickling, and ``evaluate`` (and the validation) builds its observation from the
    run's sensors on ``preset="crowdnav"``."""
    from crowdsteer.baselines.policies import load_policy, trained_sensors
    from crowdsteer.training.evaluation.evaluate import evaluate
    from crowdsteer.training.rl import crowdnav_recipe

    run = crowdnav_recipe.train(
        0,
        str(tmp_path),
        "lidar",
        recipe="lidar",
        total_steps=256,
        num_worlds=2,
        n_steps=64,
        batch_size=64,
        bc_steps=64,
        bc_epochs=1,
        eval_episodes=2,
        eval_every=10_000,
        checkpoint_every=10_000,
    )
    assert json.loads((run / "cpu.json").read_text())["cpu_s"] > 0
    sensors = trained_sensors(run / "model.zip")
    assert sensors["lidar_beams"] == 64 and sensors["lidar_frames"] == 3
    assert trained_sensors("orca") == {} and trained_sensors("crowdnav") == {}
    policy = load_policy(str(run / "model.zip"), trusted=False)
    assert isinstance(policy.model.policy.features_extractor, ScanExtractor)
    result = evaluate(str(run / "model.zip"), preset="crowdnav", episodes=2, seed=0)
    assert result["episodes"] == 2
    rows = crowdnav_recipe.validate([run], episodes=2)
    assert rows[0]["episodes"] == 2
