"""A set encoder over the observed neighbours, as a Stable-Baselines3 features extractor.

The flat observation holds K neighbour slots, nearest first, absent ones zero with a zero present
flag (``crowdsteer.envs.core.layout``). An MLP over that vector gives every slot its own weights:
what it learns about the nearest body does not carry over to the second nearest, and a slot that
training never filled (a sixth neighbour in a five-human crowd) means nothing to it.
``NeighbourSetExtractor`` treats the neighbours as a set instead (Zaheer et al., "Deep Sets",
NeurIPS 2017; Chen et al., "Crowd-Robot Interaction", ICRA 2019, SARL):

1. every present neighbour ``i`` is read together with the learner's own state ``s`` (SARL's
   joint state), with its centre distance and surface gap added (SARL's ``d_a`` and
   ``r + r_i``): ``x_i = [s, w_i, |p_i|, |p_i| - r - r_i]``;
2. one MLP embeds each, ``e_i = phi(x_i)``, and a second gives its contribution ``h_i = psi(e_i)``;
3. the contributions are pooled over the present neighbours, ``c = sum_i a_i h_i``: with
   ``pooling="attention"`` (SARL) ``a_i`` is the softmax over the neighbours of
   ``alpha([e_i, mean_j e_j])``; with ``"mean"`` or ``"max"`` (deep sets) the plain mean or the
   element-wise maximum;
4. the features are ``[s, c, rest]``: the own state, the crowd's summary and the rest of the
   observation (obstacles, walls, waypoints) as it is. The policy and value heads of SB3
   (``net_arch``) read them.

The weights do not depend on K: the same module reads 5 or 50 neighbour slots, in any order,
and absent slots change nothing (``load_state_dict`` of a module built for another K works).
It reads raw observations (metres, m/s; the present flag must be 0 or 1), so train it without
``VecNormalize``'s per-entry observation normalisation (``--no-norm-obs``), which would give every
slot its own statistics. A learner without present neighbours gets a zero summary.

    from crowdsteer.training.rl.set_encoder import set_encoder_policy_kwargs
    PPO("MlpPolicy", env, policy_kwargs=set_encoder_policy_kwargs(neighbours=10, obstacles=4,
        walls=2, waypoints=2, pooling="attention", net_arch=[128, 128]))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from crowdsteer.envs.core.layout import (
    NB_PRESENT,
    NB_RADIUS,
    NB_X,
    NB_Y,
    NEIGHBOUR_DIM,
    OBSTACLE_DIM,
    OWN_DIM,
    OWN_RADIUS,
    WALL_DIM,
    WAYPOINT_DIM,
)

from .run_args import EXTRACTORS

POOLINGS = ("attention", "mean", "max")
"""How ``NeighbourSetExtractor`` pools the neighbours: SARL's attention, or a deep set's mean or
maximum."""

DERIVED_DIM = 2
"""Entries computed per neighbour: centre distance and surface gap."""


def _mlp(sizes: Sequence[int]) -> nn.Sequential:
    """Linear layers of ``sizes[0] -> sizes[1] -> ...``, each followed by a ReLU."""
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers)


def _check_sizes(name: str, sizes: Sequence[int]) -> list[int]:
    out = [int(s) for s in sizes]
    if not out or any(s < 1 for s in out):
        raise ValueError(f"{name}={list(sizes)!r} must be a non-empty list of layer sizes >= 1")
    return out


@dataclass(frozen=True)
class SetEncoderShape:
    """The observation a ``NeighbourSetExtractor`` reads and the sizes of its networks.

    ``neighbours``, ``obstacles``, ``walls``, ``waypoints``: the observation's K, O, W, P (its
    ``dim`` must be ``8 + 9 K + 4 O + 5 W + 3 (P + 1)``); ``pooling``: one of ``POOLINGS``;
    ``embed``: hidden sizes of ``phi`` (its last one is the embedding's); ``contribution``:
    sizes of ``psi`` after the embedding (its last one is the summary's); ``attention``: hidden
    sizes of the attention score's MLP (a linear layer to one score follows)."""

    neighbours: int
    obstacles: int = 0
    walls: int = 0
    waypoints: int = 0
    pooling: str = "attention"
    embed: Sequence[int] = (64, 64)
    contribution: Sequence[int] = (64,)
    attention: Sequence[int] = (64,)


class NeighbourSetExtractor(BaseFeaturesExtractor):
    """Features ``(B, features_dim)`` of flat observations ``(B, dim)``: the own state, a pooled
    summary of the present neighbours and the rest of the observation (module docstring).

    ``shape``: the keywords of a ``SetEncoderShape`` (SB3 builds an extractor from the
    ``features_extractor_kwargs`` of a run or a saved model, as keywords). After a forward
    pass, ``last_weights: (B, K)`` holds each neighbour's pooling weight (attention: the softmax,
    0 for absent slots; mean: 1 / count; max: the share of the summary's entries it supplied).
    """

    def __init__(self, observation_space: gym.spaces.Box, **shape: Any):
        layout = SetEncoderShape(**shape)
        neighbours, obstacles, walls = layout.neighbours, layout.obstacles, layout.walls
        waypoints, pooling = layout.waypoints, layout.pooling
        if pooling not in POOLINGS:
            raise ValueError(f"pooling={pooling!r} must be one of {POOLINGS}")
        counts = {"neighbours": neighbours, "obstacles": obstacles, "walls": walls}
        counts["waypoints"] = waypoints
        for key, value in counts.items():
            if not (isinstance(value, int) and value >= 0):
                raise ValueError(f"{key}={value!r} must be an int >= 0")
        if neighbours < 1:
            raise ValueError(f"neighbours={neighbours} must be >= 1: a set encoder needs a set")
        rest = OBSTACLE_DIM * obstacles + WALL_DIM * walls + WAYPOINT_DIM * (waypoints + 1)
        dim = OWN_DIM + NEIGHBOUR_DIM * neighbours + rest
        shape_in = tuple(getattr(observation_space, "shape", None) or ())
        if shape_in != (dim,):
            raise ValueError(
                f"observation shape {shape_in} does not match the layout: neighbours={neighbours}, "
                f"obstacles={obstacles}, walls={walls}, waypoints={waypoints} give ({dim},)"
            )
        embed = _check_sizes("embed", layout.embed)
        contribution = _check_sizes("contribution", layout.contribution)
        attention = _check_sizes("attention", layout.attention)
        super().__init__(observation_space, OWN_DIM + contribution[-1] + rest)
        self.neighbours = neighbours
        self.pooling = pooling
        self.embed = _mlp([OWN_DIM + NEIGHBOUR_DIM + DERIVED_DIM, *embed])
        self.contribution = _mlp([embed[-1], *contribution])
        self.score = None
        if pooling == "attention":
            self.score = nn.Sequential(
                _mlp([2 * embed[-1], *attention]), nn.Linear(attention[-1], 1)
            )
        self.last_weights: torch.Tensor | None = None

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        b, k = observations.shape[0], self.neighbours
        own = observations[:, :OWN_DIM]
        end = OWN_DIM + NEIGHBOUR_DIM * k
        nb = observations[:, OWN_DIM:end].reshape(b, k, NEIGHBOUR_DIM)
        rest = observations[:, end:]
        mask = nb[:, :, NB_PRESENT] > 0.5  # (B, K)
        # slots after the last one present in any row weigh exactly 0 in every pooling: leave
        # them out of the computation (a crowd of 5 in 10 slots costs half)
        used = int(torch.nonzero(mask.any(0)).max().item()) + 1 if bool(mask.any()) else 1
        nb, mask = nb[:, :used], mask[:, :used]
        maskf = mask.to(observations.dtype).unsqueeze(-1)  # (B, K, 1)

        # SARL's joint state of each neighbour: own state, its entries, distance and gap
        distance = torch.sqrt(nb[:, :, NB_X] ** 2 + nb[:, :, NB_Y] ** 2 + 1e-12)
        gap = distance - own[:, None, OWN_RADIUS] - nb[:, :, NB_RADIUS]
        joint = torch.cat(
            [own[:, None, :].expand(b, used, OWN_DIM), nb, distance[..., None], gap[..., None]],
            -1,
        )
        e = self.embed(joint)  # (B, K, E)
        h = self.contribution(e)  # (B, K, C)
        count = maskf.sum(1).clamp(min=1.0)  # (B, 1)

        if self.pooling == "attention":
            mean_e = (e * maskf).sum(1) / count  # (B, E): the crowd's mean embedding
            scores = self.score(torch.cat([e, mean_e[:, None, :].expand_as(e)], -1))[..., 0]
            # absent slots get weight 0; a row without neighbours gets all zeros, not NaN
            scores = scores.masked_fill(~mask, -1e9)
            weights = torch.softmax(scores, dim=1) * mask.to(scores.dtype)
            summary = (weights.unsqueeze(-1) * h).sum(1)
        elif self.pooling == "mean":
            weights = maskf[..., 0] / count
            summary = (h * maskf).sum(1) / count
        else:  # max: absent slots never win; a row without neighbours gets zeros
            filled = h.masked_fill(~mask.unsqueeze(-1), float("-inf"))
            summary, winner = filled.max(1)
            anyone = mask.any(1, keepdim=True)
            summary = torch.where(anyone, summary, torch.zeros_like(summary))
            won = nn.functional.one_hot(winner, used).to(h.dtype)  # (B, C, used)
            weights = won.mean(1) * anyone.to(h.dtype)
        full = torch.zeros(b, k, dtype=weights.dtype, device=weights.device)
        full[:, :used] = weights.detach()
        self.last_weights = full
        return torch.cat([own, summary, rest], -1)


def set_encoder_policy_kwargs(
    neighbours: int,
    obstacles: int = 0,
    walls: int = 0,
    waypoints: int = 0,
    pooling: str = "attention",
    net_arch: Sequence[int] = (128, 128),
    **extractor: Any,
) -> dict[str, Any]:
    """SB3 ``policy_kwargs`` of a ``NeighbourSetExtractor`` shared by the policy and value heads
    (``net_arch``: the hidden sizes of each head); ``extractor``: more ``SetEncoderShape`` fields
    (``embed``, ``contribution``, ``attention``)."""
    return {
        "features_extractor_class": NeighbourSetExtractor,
        "features_extractor_kwargs": {
            "neighbours": int(neighbours),
            "obstacles": int(obstacles),
            "walls": int(walls),
            "waypoints": int(waypoints),
            "pooling": pooling,
            **extractor,
        },
        "share_features_extractor": True,
        "net_arch": {"pi": list(net_arch), "vf": list(net_arch)},
    }


def layout_counts(effective_config: dict[str, Any]) -> dict[str, int]:
    """The K, O, W, P of the observation of an ``effective_config`` (``runs.effective_config``)."""
    return {
        "neighbours": int(effective_config["obs_neighbours"]),
        "obstacles": int(effective_config["obs_obstacles"]),
        "walls": int(effective_config["obs_walls"]),
        "waypoints": int(effective_config["obs_waypoints"]),
    }


def extractor_policy_kwargs(
    extractor: str,
    effective_config: dict[str, Any],
    options: Sequence[str] = (),
    norm_obs: bool = False,
) -> dict[str, Any]:
    """The SB3 ``policy_kwargs`` entries of the training scripts' ``--extractor`` choice (one of
    ``EXTRACTORS``; ``flat``: none) for the observation of ``effective_config``; ``options``:
    more ``SetEncoderShape`` fields as ``KEY=VALUE`` strings (Python literals).
    ``norm_obs``: whether the run normalises observations per entry, which a set encoder
    cannot read."""
    from ..support.options import literal_value

    if extractor not in EXTRACTORS:
        raise ValueError(f"extractor={extractor!r} must be one of {EXTRACTORS}")
    if extractor == "flat":
        if options:
            raise ValueError(f"extractor_options={list(options)!r} need a set encoder extractor")
        return {}
    if norm_obs:
        raise ValueError(
            f"extractor={extractor!r} reads raw observations (the present flags, metres, m/s): "
            "train it with --no-norm-obs"
        )
    kwargs: dict[str, Any] = {**layout_counts(effective_config), "pooling": extractor}
    for item in options:
        key, sep, value = str(item).partition("=")
        if not sep or key.strip() not in ("embed", "contribution", "attention"):
            raise ValueError(
                f"extractor option {item!r} must be KEY=VALUE with KEY embed, contribution or "
                "attention"
            )
        kwargs[key.strip()] = literal_value(value.strip())
    return {"features_extractor_class": NeighbourSetExtractor, "features_extractor_kwargs": kwargs}
