"""TorchRL environment over the batched crowd: B worlds, all their learners, one compiled step.

``CrowdTorchEnv`` is a TorchRL ``EnvBase`` with ``batch_size = (B,)`` that wraps a ``CrowdBatch``
directly: a step hands the ``(B, L, 2)`` action tensor to the batch's compiled step and wraps its
``(B, L, ...)`` arrays as tensors; nothing loops over worlds or learners in Python.

Keys follow TorchRL's multi-agent conventions, with every learner in one group ``"agents"``
(``MarlGroupMapType.ALL_IN_ONE_GROUP``; ``group_map = {"agents": ["learner_0", ...]}``):

- ``("agents", "observation")``: ``(B, L, dim)`` float32, the flat observation of
  ``CrowdNavEnv`` (bounds from the observation layout);
- ``("agents", "action")``: ``(B, L, 2)`` float32 in [-1, 1];
- ``("agents", "reward")``: ``(B, L, 1)`` float32;
- ``("agents", "done" | "terminated" | "truncated")``: ``(B, L, 1)`` bool. A learner that arrives,
  or collides while ``collision_ends``, is terminated in that step and stays terminated (it has
  left its world: zero reward, its terminal observation) until its world resets; ``truncated``
  marks the learners still walking when the world's clock runs out;
- ``("agents", "info", "reached_goal" | "collision")``: ``(B, L, 1)`` bool, this step's arrival
  and collision events;
- ``"state"``: ``(B, S)`` float32, the global state for centralised critics (``global_state``);
- ``"done" | "terminated" | "truncated"``: ``(B, 1)`` bool, the world's episode: done when no
  learner is left or the clock runs out (then truncated).

Partial resets: ``reset`` with a root ``"_reset"`` of shape ``(B, 1)`` starts new episodes in
those worlds only (``CrowdBatch.reset(mask)``); the other worlds keep their state, observations
and flags. A learner cannot start a new episode alone: ``("agents", "_reset")`` (which TorchRL
writes for the learners that finished) resets nothing until its world is done. ``set_seed(s)``
seeds world ``b`` with ``s + b`` for the episodes that follow, as the Gymnasium vector env does,
so world ``b`` replays the episodes of ``crowd_v0.parallel_env`` reset with seed ``s + b``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase
from torchrl.data import Bounded, Categorical, Composite, Unbounded
from torchrl.envs import EnvBase

from crowdsteer.envs.api.contract import check_count, check_seed
from crowdsteer.envs.batch import make_batch
from crowdsteer.envs.core.checks import ConfigError
from crowdsteer.envs.core.config import CrowdConfig

GROUP = "agents"
"""The one agent group of the crowd's learners (TorchRL's ``ALL_IN_ONE_GROUP`` name)."""


def global_state_size(num_bodies: int, num_learners: int) -> int:
    """Length of ``global_state``: position, velocity and presence of every body, goal of
    every learner, and the fraction of the episode's time left."""
    return 5 * num_bodies + 2 * num_learners + 1


def global_state(batch: Any, out: np.ndarray) -> np.ndarray:
    """The global state of every world written into ``out: (B, S)`` float32 and returned.

    Per world, in this order: every body's position (``2 N``, world frame, metres), velocity
    (``2 N``, m/s) and presence (``N``, 1 for an active body: a pedestrian drawn this episode, a
    learner still walking), every learner's goal (``2 L``), and the fraction of the time limit
    left (1): what ``crowd_v0``'s ``state()`` holds, with presence flags instead of zeroed rows,
    plus what a centralised critic needs to value the learners' episodes."""
    s, n_l = batch.state, batch.num_learners
    b, n = s.active.shape
    out[:, : 2 * n] = s.pos.reshape(b, 2 * n)
    out[:, 2 * n : 4 * n] = s.vel.reshape(b, 2 * n)
    out[:, 4 * n : 5 * n] = s.active
    out[:, 5 * n : 5 * n + 2 * n_l] = s.goal[:, :n_l].reshape(b, 2 * n_l)
    max_steps = batch.config.max_steps
    out[:, -1] = (max_steps - s.step_count) / max_steps
    return out


class CrowdTorchEnv(EnvBase):
    """B worlds x L learners of a crowd configuration as one batched multi-agent TorchRL env.

    ``num_worlds``: B. ``config``: a ``CrowdConfig``, or None to build one from ``preset`` and
    ``config_kwargs`` (``CrowdConfig`` keyword arguments; 3 learners per world unless
    ``n_learners`` is given, as ``crowd_v0.parallel_env``). ``seed``: the first world's seed
    (world ``b`` gets ``seed + b``), or None for random seeds. Only the flat observation is
    supported (``dict_obs=False``); the environment lives on the CPU.
    """

    def __init__(
        self,
        num_worlds: int = 1,
        config: CrowdConfig | None = None,
        *,
        seed: int | None = None,
        device: Any = "cpu",
        preset: str | None = None,
        **config_kwargs: Any,
    ):
        num_worlds = check_count("num_worlds", num_worlds)
        if torch.device(device).type != "cpu":
            raise ConfigError(f"device={device!r} is invalid: the crowd steps on the CPU ('cpu')")
        if config is None:
            if isinstance(config_kwargs.get("scenario", ""), str):
                config_kwargs.setdefault("n_learners", 3)
            config = CrowdConfig.from_kwargs(preset=preset, **config_kwargs)
        elif preset is not None or config_kwargs:
            raise ConfigError("give either config or preset and keyword options, not both")
        if config.dict_obs:
            raise ConfigError("dict_obs=True is not supported by the TorchRL env; use flat obs")
        super().__init__(device="cpu", batch_size=torch.Size([num_worlds]))
        self.config = config
        self.batch = make_batch(config, num_worlds)
        self.num_worlds = num_worlds
        self.num_learners = self.batch.num_learners
        self.num_bodies = self.batch.state.pos.shape[1]
        self.agent_names = [f"learner_{i}" for i in range(self.num_learners)]
        self.group_map = {GROUP: list(self.agent_names)}
        b, n_l = num_worlds, self.num_learners
        self._terminated = np.zeros((b, n_l), bool)
        """(B, L) learners that have finished their episode (arrived, or collided and left)."""
        self._state = np.zeros((b, global_state_size(self.num_bodies, n_l)), np.float32)
        self._make_specs()
        self._seeded = False
        if seed is not None:
            self.set_seed(seed)

    # ------------------------------------------------------------------ specs
    def _make_specs(self) -> None:
        b, n_l, dim = self.num_worlds, self.num_learners, self.batch.layout.dim
        agents = (b, n_l)
        low = torch.as_tensor(self.batch.obs_low).expand(b, n_l, dim).clone()
        high = torch.as_tensor(self.batch.obs_high).expand(b, n_l, dim).clone()

        def flag(shape: tuple) -> Categorical:
            return Categorical(2, shape=(*shape, 1), dtype=torch.bool)

        self.full_observation_spec = Composite(
            {
                GROUP: Composite(
                    {
                        "observation": Bounded(low, high, shape=(*agents, dim)),
                        "info": Composite(
                            {"reached_goal": flag(agents), "collision": flag(agents)},
                            shape=agents,
                        ),
                    },
                    shape=agents,
                ),
                "state": Unbounded(shape=self._state.shape, dtype=torch.float32),
            },
            shape=(b,),
        )
        self.full_action_spec = Composite(
            {GROUP: Composite({"action": Bounded(-1.0, 1.0, shape=(*agents, 2))}, shape=agents)},
            shape=(b,),
        )
        self.full_reward_spec = Composite(
            {GROUP: Composite({"reward": Unbounded(shape=(*agents, 1))}, shape=agents)},
            shape=(b,),
        )
        flags = ("done", "terminated", "truncated")
        self.full_done_spec = Composite(
            {
                **{k: flag((b,)) for k in flags},
                GROUP: Composite({k: flag(agents) for k in flags}, shape=agents),
            },
            shape=(b,),
        )

    # ------------------------------------------------------------------ seeding
    def _set_seed(self, seed: int | None) -> None:
        """World ``b`` draws its next episodes from seed ``seed + b`` (random seeds if None)."""
        seed = check_seed(seed)
        self.batch.seed(None if seed is None else [seed + k for k in range(self.num_worlds)])
        self._seeded = True

    # ------------------------------------------------------------------ reset / step
    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDictBase:
        worlds = self._worlds_to_reset(tensordict)
        if not self._seeded:
            self.batch.seed(None)
            self._seeded = True
        if worlds is None:
            self.batch.reset()
            self._terminated[:] = ~self.batch.alive
        elif worlds.any():
            self.batch.reset(worlds)
            self._terminated[worlds] = ~self.batch.alive[worlds]
        truncated = np.zeros_like(self._terminated)
        return self._output(truncated, self._world_flags(truncated), self._events(), reward=None)

    def _worlds_to_reset(self, tensordict: TensorDictBase | None) -> np.ndarray | None:
        """(B,) worlds a reset call starts anew, or None for every world: the root ``"_reset"``;
        without one, the worlds whose every learner is flagged in ``("agents", "_reset")``; with
        neither, all."""
        if tensordict is None:
            return None
        root = tensordict.get("_reset", None)
        if root is not None:
            return root.reshape(self.num_worlds).numpy().copy()
        nested = tensordict.get((GROUP, "_reset"), None)
        if nested is not None:
            return nested.reshape(self.num_worlds, self.num_learners).numpy().all(axis=1)
        return None

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        actions = tensordict.get((GROUP, "action"))
        a = actions.detach().numpy() if actions.requires_grad else actions.numpy()
        self.batch.advance(a)
        lb = self.batch.learners
        self._terminated |= lb.terminated
        return self._output(
            lb.truncated, self._world_flags(lb.truncated), self._events(), reward=lb.reward
        )

    def _world_flags(self, truncated: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(B,) world terminated (every learner finished before the time limit) and truncated
        (the clock ran out)."""
        out_of_time = self.batch.sim.truncated()
        return self._terminated.all(axis=1) & ~out_of_time, out_of_time

    def _events(self) -> tuple[np.ndarray, np.ndarray]:
        """(B, L) arrivals and collisions of the last step (False right after a reset)."""
        n_l = self.num_learners
        return (
            self.batch.sim.buffers.arrived_now[:, :n_l],
            self.batch.sim.buffers.collided_now[:, :n_l],
        )

    def _output(
        self,
        truncated: np.ndarray,
        world: tuple[np.ndarray, np.ndarray],
        events: tuple[np.ndarray, np.ndarray],
        reward: np.ndarray | None,
    ) -> TensorDict:
        """The step's (or reset's) tensordict: the learners' flags and events copied in one
        block, every other array copied once, each into a tensor."""
        b, n_l = self.num_worlds, self.num_learners
        flags = torch.from_numpy(np.stack((self._terminated, truncated, *events), axis=-1))
        term, trunc = flags[..., 0:1], flags[..., 1:2]
        group = {
            "observation": torch.from_numpy(self.batch.obs.copy()),
            "terminated": term,
            "truncated": trunc,
            "done": term | trunc,
            "info": _tensordict(
                {"reached_goal": flags[..., 2:3], "collision": flags[..., 3:4]}, (b, n_l)
            ),
        }
        if reward is not None:
            group["reward"] = torch.from_numpy(reward.astype(np.float32)).unsqueeze(-1)
        world_flags = torch.from_numpy(np.stack(world, axis=-1))
        world_term, world_trunc = world_flags[:, 0:1], world_flags[:, 1:2]
        return _tensordict(
            {
                GROUP: _tensordict(group, (b, n_l)),
                "state": torch.from_numpy(global_state(self.batch, self._state).copy()),
                "terminated": world_term,
                "truncated": world_trunc,
                "done": world_term | world_trunc,
            },
            (b,),
        )


def _tensordict(entries: dict, batch_size: tuple) -> TensorDict:
    """A CPU tensordict of ``entries`` built without checking them: every tensor made above has
    the batch's leading shape by construction, and the checks of ``TensorDict(...)`` cost more
    than the rest of a small world's step (tensordict's own constructor for trusted data)."""
    return TensorDict._new_unsafe(entries, batch_size=torch.Size(batch_size), device=_CPU)


_CPU = torch.device("cpu")
