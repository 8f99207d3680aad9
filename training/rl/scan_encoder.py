"""A lidar scan encoder, as a Stable-Baselines3 features extractor.

With ``lidar_beams > 0`` the flat observation holds, after the package's blocks, the lidar block
``(frames, beams)``: the range (m) of each beam, the latest scan first
(``crowdsteer.envs.core.sensors``). ``ScanExtractor`` reads the learner's own state and that
block, and nothing else:

1. the scans become nearness, ``n = 1 - range / lidar_range`` in ``[0, 1]`` (0: the beam met
   nothing), so that free space is a zero input;
2. a stack of 1-D convolutions runs over the beams with the frames as channels (the motion of a
   body between frames is what tells its velocity; the scan holds no velocities). Over a full
   circle the beams wrap: beam ``n - 1`` neighbours beam ``0`` (both point backwards), so the
   convolutions pad circularly and a body behind the learner is seen whole, not cut at the
   scan's ends; over a narrower field of view they pad with zeros (nothing seen);
3. a linear layer and a ReLU give the scan's code ``z``;
4. the features are ``[s, z]``: the own state ``s`` (goal distance, velocity, radius,
   preferred speed, heading, time left; ``crowdsteer.envs.core.layout.OWN``) and the code. The
   policy and value heads of SB3 (``net_arch``) read them.

Every other block is left unread, the neighbours' exact states in particular (the observation
still carries them, for a scripted teacher of a behaviour-cloning warm start): the forward pass
slices ``[0, OWN_DIM)`` and the lidar block out of the observation and computes from those
alone, so a policy on this extractor acts from its own state and its scans. It reads raw
observations; train it without ``VecNormalize``'s observation normalisation
(``--no-norm-obs``).

    from crowdsteer.training.rl.scan_encoder import scan_encoder_policy_kwargs
    PPO("MlpPolicy", env, policy_kwargs=scan_encoder_policy_kwargs(effective_config))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from crowdsteer.envs.core.layout import OWN_DIM

SCAN_OPTIONS = ("channels", "kernels", "strides", "hidden")
"""The ``ScanExtractor`` arguments that ``--extractor-options`` may set."""


def _sizes(name: str, values: Sequence[int]) -> list[int]:
    out = [int(v) for v in values]
    if not out or any(v < 1 for v in out):
        raise ValueError(f"{name}={list(values)!r} must be a non-empty list of ints >= 1")
    return out


@dataclass(frozen=True)
class ScanShape:
    """The lidar block a ``ScanExtractor`` reads and the sizes of its networks.

    ``scan_start``: offset of the lidar block in the observation, whose ``frames * beams``
    entries are ``(frames, beams)`` in row-major order; ``scan_range``: the lidar's range (m);
    ``full_circle``: whether the beams cover 360 degrees (circular padding, else zeros);
    ``channels``, ``kernels``, ``strides``: one convolution per entry (output channels, odd
    kernel width, stride; each pads ``kernel // 2`` on both sides, so a stride of 1 keeps the
    beam count and a stride of ``s`` divides it by ``s``, rounded up); ``hidden``: the size of
    the scan's code."""

    scan_start: int
    frames: int
    beams: int
    scan_range: float
    full_circle: bool = True
    channels: Sequence[int] = (32, 32)
    kernels: Sequence[int] = (5, 3)
    strides: Sequence[int] = (2, 2)
    hidden: int = 128


class ScanExtractor(BaseFeaturesExtractor):
    """Features ``(B, OWN_DIM + hidden)`` of flat observations ``(B, dim)``: the own state and
    a convolutional code of the lidar scans (module docstring).

    ``layout``: the keywords of a ``ScanShape`` (SB3 builds an extractor from the
    ``features_extractor_kwargs`` of a run or a saved model, as keywords).
    """

    def __init__(self, observation_space: gym.spaces.Box, **layout: Any):
        block = ScanShape(**layout)
        scan_start, frames, beams = block.scan_start, block.frames, block.beams
        scan_range, full_circle, hidden = block.scan_range, block.full_circle, block.hidden
        channels, kernels, strides = block.channels, block.kernels, block.strides
        channels = _sizes("channels", channels)
        kernels = _sizes("kernels", kernels)
        strides = _sizes("strides", strides)
        if not len(channels) == len(kernels) == len(strides):
            raise ValueError(
                f"channels={channels}, kernels={kernels} and strides={strides} must have one "
                "entry per convolution each"
            )
        if any(k % 2 == 0 for k in kernels):
            raise ValueError(f"kernels={kernels} must be odd (a beam's window centred on it)")
        for key, value in (("scan_start", scan_start), ("frames", frames), ("beams", beams)):
            if not (isinstance(value, int) and value >= (0 if key == "scan_start" else 1)):
                raise ValueError(f"{key}={value!r} must be an int >= {int(key != 'scan_start')}")
        if scan_start < OWN_DIM:
            raise ValueError(f"scan_start={scan_start} lies within the own state (< {OWN_DIM})")
        if not scan_range > 0:
            raise ValueError(f"scan_range={scan_range!r} must be > 0")
        if int(hidden) < 1:
            raise ValueError(f"hidden={hidden!r} must be >= 1")
        shape = tuple(getattr(observation_space, "shape", None) or ())
        end = scan_start + frames * beams
        if len(shape) != 1 or shape[0] < end:
            raise ValueError(
                f"observation shape {shape} holds no lidar block of {frames} x {beams} at "
                f"offset {scan_start}"
            )
        super().__init__(observation_space, OWN_DIM + int(hidden))
        self.scan_start, self.frames, self.beams = scan_start, frames, beams
        self.scan_range = float(scan_range)
        self.full_circle = bool(full_circle)
        layers: list[nn.Module] = []
        size, length = frames, beams
        for c, k, s in zip(channels, kernels, strides, strict=True):
            pad_mode = "circular" if self.full_circle else "zeros"
            layers += [nn.Conv1d(size, c, k, stride=s, padding=k // 2, padding_mode=pad_mode)]
            layers += [nn.ReLU()]
            size, length = c, (length - 1) // s + 1  # (L + 2 (k // 2) - k) // s + 1, k odd
        self.conv = nn.Sequential(*layers)
        self.code = nn.Sequential(nn.Linear(size * length, int(hidden)), nn.ReLU())
        self.conv_shape = (size, length)

    def scans(self, observations: torch.Tensor) -> torch.Tensor:
        """The lidar block of observations ``(B, dim)`` as nearness ``(B, frames, beams)``."""
        end = self.scan_start + self.frames * self.beams
        ranges = observations[:, self.scan_start : end].reshape(-1, self.frames, self.beams)
        return 1.0 - ranges / self.scan_range

    def encode_scan(self, nearness: torch.Tensor) -> torch.Tensor:
        """The convolutions' output ``(B, *conv_shape)`` of nearness ``(B, frames, beams)``."""
        return self.conv(nearness)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        own = observations[:, :OWN_DIM]
        z = self.code(self.encode_scan(self.scans(observations)).flatten(1))
        return torch.cat([own, z], -1)


def scan_layout(effective_config: dict[str, Any]) -> dict[str, Any]:
    """The lidar block of the observation of an ``effective_config`` (``runs.effective_config``)
    as ``ScanExtractor`` arguments: ``scan_start``, ``frames``, ``beams``, ``scan_range`` and
    ``full_circle``. ``ValueError`` if the configuration has no lidar."""
    from crowdsteer.envs.core.config import CrowdConfig
    from crowdsteer.envs.core.sensors import observation_layout

    if int(effective_config.get("lidar_beams") or 0) < 1:
        raise ValueError("the scan encoder reads the lidar: set lidar_beams > 0 (--env)")
    config = CrowdConfig.from_kwargs(**effective_config)
    block = observation_layout(config).slices()["lidar"]
    return {
        "scan_start": int(block.start),
        "frames": int(config.lidar_frames),
        "beams": int(config.lidar_beams),
        "scan_range": float(config.lidar_range),
        "full_circle": bool(config.lidar_fov >= 360.0),
    }


def scan_encoder_policy_kwargs(
    effective_config: dict[str, Any], options: Sequence[str] = (), norm_obs: bool = False
) -> dict[str, Any]:
    """The SB3 ``policy_kwargs`` entries of a ``ScanExtractor`` for the observation of
    ``effective_config`` (``--extractor scan``); ``options``: more of its arguments as
    ``KEY=VALUE`` strings (Python literals, KEY one of ``SCAN_OPTIONS``). ``norm_obs``: whether
    the run normalises observations per entry, which the encoder cannot read (it needs ranges
    in metres)."""
    from ..support.options import literal_value

    if norm_obs:
        raise ValueError(
            "extractor='scan' reads raw observations (ranges in metres): train it with "
            "--no-norm-obs"
        )
    kwargs: dict[str, Any] = scan_layout(effective_config)
    for item in options:
        key, sep, value = str(item).partition("=")
        if not sep or key.strip() not in SCAN_OPTIONS:
            raise ValueError(
                f"extractor option {item!r} must be KEY=VALUE with KEY one of "
                f"{', '.join(SCAN_OPTIONS)}"
            )
        kwargs[key.strip()] = literal_value(value.strip())
    return {"features_extractor_class": ScanExtractor, "features_extractor_kwargs": kwargs}
