"""TorchRL environment over the batched crowd: B worlds, all their learners, one compiled step.

``CrowdTorchEnv`` is a TorchRL ``EnvBase`` with ``batch_size = (B,)`` that wraps a ``CrowdBatch``
directly: a step hands the ``(B, L, 2)`` action tensor to the batch's compiled step and wraps its
``(B, L, ...)`` arrays as tensors; nothing loops over worlds or learners in Python. Its own
``step_and_maybe_reset`` (what TorchRL's collectors call) returns what TorchRL's generic path
returns, without its key-by-key merge of a partial reset.

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

from collections.abc import Mapping
from typing import Any, NamedTuple

import numba
import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase
from torchrl.data import Bounded, Categorical, Composite, Unbounded
from torchrl.envs import EnvBase

from crowdsteer.envs import make_batch
from crowdsteer.envs.api.contract import check_count, check_seed
from crowdsteer.envs.core.checks import ConfigError
from crowdsteer.envs.core.config import CrowdConfig
from crowdsteer.envs.core.simulator import compiled_entry
from crowdsteer.envs.kernels.bundle import bundle

GROUP = "agents"
"""The one agent group of the crowd's learners (TorchRL's ``ALL_IN_ONE_GROUP`` name)."""

_ACTION = (GROUP, "action")
"""The key of the learners' actions."""


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


@bundle
class LearnerFlags(NamedTuple):
    """The learners' flags after a step or a reset: ``(B, L)`` bool each."""

    terminated: np.ndarray
    truncated: np.ndarray
    reached: np.ndarray  # arrived in this step
    collided: np.ndarray  # collided in this step


@bundle
class BodyRows(NamedTuple):
    """What the global state holds of the bodies: every body's ``pos, vel: (B, N, 2)`` and
    ``active: (B, N)``, and the learners' ``goal: (B, L, 2)``."""

    pos: np.ndarray
    vel: np.ndarray
    active: np.ndarray
    goal: np.ndarray


@numba.njit(cache=True, nogil=True)
def fill_entries(
    learners: LearnerFlags,
    bodies: BodyRows,
    step_count: np.ndarray,
    max_steps: int,
    obs: np.ndarray,
    reward: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The tensordict's entries in five new arrays, in one pass over the worlds.

    Takes the ``learners``' flags (``LearnerFlags``, ``(B, L)`` each), the ``bodies``' rows of
    the global state (``BodyRows``), the worlds' ``step_count: (B,)`` (out of time from
    ``max_steps`` on), ``obs: (B, L, dim)`` and ``reward: (B, L)``. Returns the learners' flags
    ``(5, B, L, 1)`` (terminated, truncated, done, reached, collided), the worlds' ``(3, B, 1)``
    (terminated: every learner finished before the time limit; truncated: out of time; done),
    ``global_state``'s ``(B, S)``, and float32 copies of ``obs`` and of ``reward`` as
    ``(B, L, 1)``. Few arrays, since handing each one back to Python costs about as much as
    filling it."""
    terminated, truncated, reached, collided = learners
    pos, vel, active, goal = bodies
    b, n_l = terminated.shape
    n = pos.shape[1]
    flags = np.empty((5, b, n_l, 1), np.bool_)
    world = np.empty((3, b, 1), np.bool_)
    state = np.empty((b, 5 * n + 2 * n_l + 1), np.float32)
    obs_copy = obs.copy()
    reward_copy = np.empty((b, n_l, 1), np.float32)
    for w in range(b):
        every = True
        for i in range(n_l):
            t, u = terminated[w, i], truncated[w, i]
            flags[0, w, i, 0], flags[1, w, i, 0], flags[2, w, i, 0] = t, u, t or u
            flags[3, w, i, 0], flags[4, w, i, 0] = reached[w, i], collided[w, i]
            reward_copy[w, i, 0] = reward[w, i]
            every = every and t
            state[w, 5 * n + 2 * i] = goal[w, i, 0]
            state[w, 5 * n + 2 * i + 1] = goal[w, i, 1]
        late = step_count[w] >= max_steps
        world[0, w, 0], world[1, w, 0], world[2, w, 0] = every and not late, late, every or late
        for j in range(n):
            state[w, 2 * j] = pos[w, j, 0]
            state[w, 2 * j + 1] = pos[w, j, 1]
            state[w, 2 * n + 2 * j] = vel[w, j, 0]
            state[w, 2 * n + 2 * j + 1] = vel[w, j, 1]
            state[w, 4 * n + j] = active[w, j]
        state[w, -1] = (max_steps - step_count[w]) / max_steps
    return flags, world, state, obs_copy, reward_copy


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
            if not isinstance(config_kwargs.get("scenario", ""), Mapping):  # not explicit
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
        self._state_size = global_state_size(self.num_bodies, n_l)
        self._make_specs()
        specs = (self.full_observation_spec, self.full_done_spec, self.full_reward_spec)
        self._env_keys = {_as_tuple(k) for spec in specs for k in spec.keys(True, True)}
        """The entries the env writes; the fast step carries the others to the next root."""
        self._sizes = {(): self.batch_size, (GROUP,): torch.Size((b, n_l))}
        self._sizes[GROUP, "info"] = self._sizes[(GROUP,)]
        """The batch size of every nested level of the env's tensordicts."""
        self._fill = None
        self._layout: tuple | None = None
        """The last walked root's layout: its levels' keys and batch sizes, its carried keys (as
        level, name, key) and the batch sizes of its levels (see ``_carried``)."""
        self._fill_args: dict[bool, tuple | None] = {False: None, True: None}
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
                "state": Unbounded(shape=(b, self._state_size), dtype=torch.float32),
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
        self._reset_worlds(self._worlds_to_reset(tensordict))
        return self._reset_output()

    def _reset_worlds(self, worlds: np.ndarray | None) -> None:
        """Start new episodes in the ``worlds: (B,)`` flagged (every world if None)."""
        if not self._seeded:
            self.batch.seed(None)
            self._seeded = True
        if worlds is None:
            self.batch.reset()
            self._terminated[:] = ~self.batch.alive
        elif worlds.any():
            self.batch.reset(worlds)
            self._terminated[worlds] = ~self.batch.alive[worlds]

    def _reset_output(self) -> TensorDict:
        """Every world's entries after a (partial) reset: no learner truncated, no reward."""
        group, world, _ = self._entries(reset=True)
        return _assemble(group, world, self._sizes)

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
        self._advance(tensordict)
        group, world, _ = self._entries(reset=False)
        return _assemble(group, world, self._sizes)

    def _advance(self, tensordict: TensorDictBase, actions: torch.Tensor | None = None) -> None:
        """Step the batch with the tensordict's actions (``actions``, when already read)."""
        if actions is None:
            actions = tensordict.get(_ACTION)
        a = actions.detach().numpy() if actions.requires_grad else actions.numpy()
        self.batch.advance(a)
        # in place without rebinding the attribute, which nn.Module's __setattr__ makes costly
        np.logical_or(self._terminated, self.batch.learners.terminated, out=self._terminated)

    def step_and_maybe_reset(
        self, tensordict: TensorDictBase
    ) -> tuple[TensorDictBase, TensorDictBase]:
        """TorchRL's ``step_and_maybe_reset`` (what its collectors call) in one pass: the step,
        the next root, and the partial reset of the worlds whose episode ended.

        The result is the generic ``EnvBase`` path's (``step``, ``step_mdp``, ``maybe_reset``),
        tensor for tensor (tested), without its bookkeeping: the env's entries of the next root
        are the step's, or the reset's when a world ended (they hold every world: a partial
        reset leaves the others as they were), instead of TorchRL's merge key by key under a
        mask. Entries the env does not write (the action, a policy's outputs) are carried to the
        next root, zeroed in the reset worlds of a partial reset and kept in a full one, as
        TorchRL's merge does. Input the fast path does not cover (partial steps, a preset
        ``"next"``, type checks, a subclass, entries that are not tensors) takes the generic
        path."""
        found = self._carried(tensordict)
        if found is None:
            return super().step_and_maybe_reset(tensordict)
        carried, sizes = found  # (the batch sizes are checked there, as EnvBase.step does)
        self._advance(tensordict, next((v for k, v in carried if k == _ACTION), None))
        group, world, ended = self._entries(reset=False)
        # A new key in a tensordict of the env's own batch size: set without tensordict's checks.
        tensordict._set_str(
            "next", _assemble(group, world, self._sizes), inplace=False, validated=True
        )
        if ended.any():
            self._reset_worlds(ended)
            group, world, _ = self._entries(reset=True)
            if not ended.all():
                carried = [(key, _zero_rows(value, ended)) for key, value in carried]
        else:
            group = {k: v for k, v in group.items() if k != "reward"}
        return tensordict, _assemble(group, world, sizes, carried)

    def _carried(
        self, tensordict: TensorDictBase
    ) -> tuple[list[tuple[tuple, torch.Tensor]], dict[tuple, torch.Size]] | None:
        """The (key, tensor) entries of ``tensordict`` the env does not write, with the batch
        size of every nested level (the env's and those the entries add), or None where the fast
        step does not apply (see ``step_and_maybe_reset``).

        A root laid out as the last one walked (the same keys at its three levels, the same batch
        sizes, every level a ``TensorDict``: what a collector hands back step after step) reuses
        that walk's list of carried keys instead of walking again."""
        if type(self) is not CrowdTorchEnv or self.run_type_checks:
            return None
        nodes = _levels(tensordict)
        if nodes is not None and self._layout is not None and self._layout[0] == nodes[1]:
            _, carried_keys, sizes = self._layout
            carried = [(key, nodes[0][i]._tensordict[name]) for i, name, key in carried_keys]
            if all(type(value) is torch.Tensor for _, value in carried):
                return carried, sizes
        found = self._walk(tensordict)
        if found is not None and nodes is not None:
            levels = {(): 0, (GROUP,): 1, (GROUP, "info"): 2}
            carried_keys = [(levels.get(key[:-1]), key[-1], key) for key, _ in found[0]]
            if len(found[1]) == len(levels) and all(i is not None for i, _, _ in carried_keys):
                self._layout = (nodes[1], carried_keys, found[1])
        return found

    def _walk(
        self, tensordict: TensorDictBase
    ) -> tuple[list[tuple[tuple, torch.Tensor]], dict[tuple, torch.Size]] | None:
        """``_carried`` by a walk over every level of ``tensordict``."""
        carried: list[tuple[tuple, torch.Tensor]] = []
        sizes = dict(self._sizes)
        nodes = [((), tensordict)]
        while nodes:
            prefix, node = nodes.pop()
            if node.batch_size != sizes.setdefault(prefix, node.batch_size):
                return None
            # a TensorDict's own dict of entries: what its items() yields, without the checks
            for name, value in (node._tensordict if type(node) is TensorDict else node).items():
                key = (*prefix, name)
                if isinstance(value, TensorDictBase):
                    nodes.append((key, value))
                elif not isinstance(value, torch.Tensor) or key[0] in ("next", "_step"):
                    return None
                elif key not in self._env_keys:
                    carried.append((key, value))
        return carried, sizes

    def _events(self) -> tuple[np.ndarray, np.ndarray]:
        """(B, L) arrivals and collisions of the last step (False right after a reset)."""
        n_l = self.num_learners
        return (
            self.batch.sim.buffers.arrived_now[:, :n_l],
            self.batch.sim.buffers.collided_now[:, :n_l],
        )

    def _entries(self, reset: bool) -> tuple[dict, dict, np.ndarray]:
        """The step's entries (or, after a ``reset``, the reset's: no reward, no learner
        truncated) as nested dicts of tensors: the group's and the world's, made by one compiled
        call into arrays of their own, and the ``(B,)`` worlds whose episode is over."""
        args = self._fill_args[reset]
        if args is None:  # the batch's buffers, written in place by every step and reset
            s, lb = self.batch.state, self.batch.learners
            truncated = np.zeros_like(self._terminated) if reset else lb.truncated
            reached, collided = self._events()
            args = self._fill_args[reset] = (
                LearnerFlags(self._terminated, truncated, reached, collided),
                BodyRows(s.pos, s.vel, s.active, s.goal[:, : self.num_learners]),
                s.step_count,
                np.int64(self.batch.config.max_steps),
                lb.obs,
                lb.reward,
            )
        if self._fill is None:
            self._fill = compiled_entry(fill_entries, *args)
        flags, world, state, obs, rewards = self._fill(*args)
        tensor = torch.from_numpy  # on numpy's views: cheaper than torch's unbind
        group = {
            "observation": tensor(obs),
            "terminated": tensor(flags[0]),
            "truncated": tensor(flags[1]),
            "done": tensor(flags[2]),
            "info": {"reached_goal": tensor(flags[3]), "collision": tensor(flags[4])},
        }
        if not reset:
            group["reward"] = tensor(rewards)
        worlds = {
            "state": tensor(state),
            "terminated": tensor(world[0]),
            "truncated": tensor(world[1]),
            "done": tensor(world[2]),
        }
        return group, worlds, world[2].reshape(self.num_worlds)


def _levels(root: TensorDictBase) -> tuple[tuple, tuple] | None:
    """The root, group and info levels of ``root`` with their keys and batch sizes, or None
    when one of them is missing or not a plain ``TensorDict``."""
    if type(root) is not TensorDict:
        return None
    group = root._tensordict.get(GROUP)
    if type(group) is not TensorDict:
        return None
    info = group._tensordict.get("info")
    if type(info) is not TensorDict:
        return None
    levels = (root, group, info)
    return levels, tuple((tuple(n._tensordict), n.batch_size) for n in levels)


def _zero_rows(value: torch.Tensor, rows: np.ndarray) -> torch.Tensor:
    """A copy of ``value`` with the rows (leading dimension) flagged in ``rows: (B,)`` set to
    zero (through numpy, where this costs a third of torch's masked fill)."""
    if value.requires_grad or value.dtype not in _NUMPY_DTYPES:
        return value.masked_fill(torch.from_numpy(rows).reshape(-1, *(1,) * (value.ndim - 1)), 0)
    out = value.numpy().copy()
    out[rows] = 0
    return torch.from_numpy(out)


_NUMPY_DTYPES = {torch.float32, torch.float64, torch.int64, torch.int32, torch.bool, torch.uint8}
"""Tensor dtypes that numpy holds as they are."""


def _assemble(
    group: dict,
    world: dict,
    sizes: dict[tuple, torch.Size],
    carried: list[tuple[tuple, torch.Tensor]] = (),
) -> TensorDict:
    """The root tensordict of the group's and the world's entries, with the ``carried``
    entries added at their keys; ``sizes`` gives the batch size of every nested level. The dicts
    given are left as they are (the step's and the next root's share them)."""
    tree = {**world, GROUP: group}
    for key, value in carried:
        node = tree
        for name in key[:-1]:
            child = dict(node.get(name, {}))  # a copy of each level written into
            node[name] = child
            node = child
        node[key[-1]] = value
    return _build(tree, (), sizes)


def _build(entries: dict, prefix: tuple, sizes: dict[tuple, torch.Size]) -> TensorDict:
    """The tensordict of nested dicts of tensors ``entries`` at level ``prefix``."""
    nested = {
        n: _build(v, (*prefix, n), sizes) if type(v) is dict else v for n, v in entries.items()
    }
    return _tensordict(nested, sizes[prefix])


def _as_tuple(key: str | tuple) -> tuple:
    return key if isinstance(key, tuple) else (key,)


def _tensordict(entries: dict, batch_size: torch.Size) -> TensorDict:
    """A CPU tensordict of ``entries`` built without checking them: every tensor made above has
    the batch's leading shape by construction, and the checks of ``TensorDict(...)`` cost more
    than the rest of a small world's step (tensordict's own constructor for trusted data)."""
    td = TensorDict._new_unsafe(entries, batch_size=batch_size, device=None, nested=False)
    td._device = _CPU  # (set after: the constructor's device handling costs twice the rest)
    return td


_CPU = torch.device("cpu")
