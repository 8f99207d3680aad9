"""Behaviour-cloning warm start: pre-train an SB3 policy's actor on a scripted baseline's actions.

``collect_demonstrations`` steps the training ``VecNormalize`` env with the baseline's actions
(``make_policy(name, config=...).act(raw_obs)``; a mix of baselines, ``"a,b"`` or a list, drives
the env's slots in turn, or one name per slot), which also warms up the observation and reward
statistics; ``pretrain_actor`` then fits the deterministic action of the policy (PPO: the mean of
the Gaussian, ``action_net`` on the actor features; SAC: ``tanh`` of the actor's mean) to the
baseline's actions with a mean-squared error, on observations normalised with the final
statistics, exactly as the policy will see them during RL. ``dagger_rounds`` more rounds follow
DAgger (Ross, Gordon and Bagnell 2011): the clone drives, the baseline labels the states it
reaches, and the fit goes on over every sample so far; a plain clone drifts into states its
teacher never showed it (``docs/marl.md`` measures how far).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from stable_baselines3.common.vec_env import VecNormalize

from crowdsteer.baselines.policies import make_policy


def teacher_names(policy_name: str | Sequence[str], num_envs: int) -> list[str]:
    """The baseline driving each of the ``num_envs`` slots: one name (``"a"``), a mix
    (``"a,b"`` or a list) taking the slots in turn, or exactly one name per slot."""
    names = policy_name.split(",") if isinstance(policy_name, str) else list(policy_name)
    names = [n.strip() for n in names if n.strip()]
    if not names:
        raise ValueError(f"bc_from={policy_name!r} names no baseline")
    return [names[k % len(names)] for k in range(num_envs)]


def collect_demonstrations(
    env: VecNormalize,
    policy_name: str | Sequence[str],
    steps: int,
    driver: Callable[[np.ndarray], np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Raw observations ``(S, obs_dim)`` and the baselines' actions ``(S, 2)``, ``S ~ steps``
    (rounded up to whole vector steps), from the env's current episodes; ``policy_name``: one
    baseline or a mix (``teacher_names``). The baselines read the env's ``config`` (its
    observation layout, time step and steering parameters). ``driver`` (actions of raw
    observations) steps the env instead of the baselines, which still label every sample."""
    base = env.venv if isinstance(env, VecNormalize) else env
    slots = np.array(teacher_names(policy_name, env.num_envs))
    teachers = {n: make_policy(n, config=base.config) for n in dict.fromkeys(slots.tolist())}
    groups = {n: np.flatnonzero(slots == n) for n in teachers}

    def teacher_act(raw: np.ndarray) -> np.ndarray:
        out = np.empty((raw.shape[0], 2), np.float32)
        for n, idx in groups.items():
            out[idx] = teachers[n].act(raw[idx])
        return out

    def original(obs: np.ndarray) -> np.ndarray:
        return env.get_original_obs() if isinstance(env, VecNormalize) else obs

    raw = original(env.reset())
    observations, actions = [], []
    for _ in range(max(1, -(-steps // env.num_envs))):
        act = teacher_act(raw)
        observations.append(raw.copy())
        actions.append(act)
        raw = original(env.step(act if driver is None else driver(raw))[0])
    return np.concatenate(observations).astype(np.float32), np.concatenate(actions)


def _deterministic_action(model: Any, obs: torch.Tensor) -> torch.Tensor:
    """The policy's action before exploration noise, as a differentiable tensor."""
    if hasattr(model, "actor") and model.actor is not None:  # SAC / TD3: squashed mean
        return model.actor(obs, deterministic=True)
    policy = model.policy  # PPO / A2C: Gaussian mean
    features = policy.extract_features(obs, policy.pi_features_extractor)
    latent_pi = policy.mlp_extractor.forward_actor(features)
    return policy.action_net(latent_pi)


def pretrain_actor(
    model: Any,
    obs: np.ndarray,
    actions: np.ndarray,
    epochs: int = 20,
    batch_size: int = 256,
    learning_rate: float = 1e-3,
    seed: int = 0,
) -> list[float]:
    """Fit the model's deterministic action to ``actions`` on (normalised) ``obs``; returns the
    mean loss of each epoch."""
    target_t = torch.as_tensor(np.clip(actions, -1.0, 1.0), dtype=torch.float32)
    obs_t = torch.as_tensor(obs, dtype=torch.float32)
    if getattr(model, "actor", None) is not None:
        params = list(model.actor.parameters())
    else:
        actor_parts = (
            "features_extractor",
            "pi_features_extractor",
            "mlp_extractor.policy_net",
            "action_net",
        )
        params = [p for n, p in model.policy.named_parameters() if n.startswith(actor_parts)]
    optimiser = torch.optim.Adam(params, lr=learning_rate)
    gen = torch.Generator().manual_seed(seed)
    history = []
    model.policy.set_training_mode(True)
    for _ in range(epochs):
        order = torch.randperm(len(obs_t), generator=gen)
        total, count = 0.0, 0
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            pred = _deterministic_action(model, obs_t[idx])
            loss = torch.nn.functional.mse_loss(pred, target_t[idx])
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimiser.step()
            total += loss.item() * len(idx)
            count += len(idx)
        history.append(total / max(count, 1))
    model.policy.set_training_mode(False)
    return history


def behaviour_clone(
    model: Any,
    env: VecNormalize,
    policy_name: str | Sequence[str],
    steps: int = 20_000,
    epochs: int = 20,
    batch_size: int = 256,
    learning_rate: float = 1e-3,
    dagger_rounds: int = 0,
) -> dict[str, Any]:
    """Collect ``steps`` of ``policy_name`` (a baseline or a mix, see ``teacher_names``) on
    ``env`` and pre-train ``model``'s actor on them; then ``dagger_rounds`` rounds of ``steps``
    more with the clone driving (its deterministic action), each followed by a fit over all."""

    def normalised(raw: np.ndarray) -> np.ndarray:
        return env.normalize_obs(raw) if isinstance(env, VecNormalize) else raw

    def clone(raw: np.ndarray) -> np.ndarray:
        return model.predict(normalised(raw), deterministic=True)[0]

    raws, labels, losses, rounds = [], [], [], []
    for r in range(dagger_rounds + 1):  # round 0: the baselines drive
        raw, actions = collect_demonstrations(env, policy_name, steps, clone if r else None)
        raws.append(raw)
        labels.append(actions)
        obs, targets = normalised(np.concatenate(raws)), np.concatenate(labels)
        round_losses = pretrain_actor(model, obs, targets, epochs, batch_size, learning_rate, r)
        losses += round_losses
        rounds.append({"samples": len(raw), "final_loss": round_losses[-1]})
    model._last_obs = None  # the next learn() resets the env
    return {
        "policy": policy_name,
        "samples": sum(len(raw) for raw in raws),
        "losses": losses,
        "final_loss": losses[-1] if losses else float("nan"),
        "rounds": rounds,
    }
