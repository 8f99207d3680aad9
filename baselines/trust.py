"""Which files crowdsteer unpickles: none, unless the user says they trust them.

A pickle can run any code when it is read. A Stable-Baselines3 ``.zip`` keeps pickles in the
``:serialized:`` entries of its ``data`` JSON (spaces, schedules, classes), and SB3's
``VecNormalize.save`` writes one whole pickle. crowdsteer reads neither by default:

- a model's weights load through ``torch.load(weights_only=True)`` (SB3 does so for every
  ``.pth`` entry), and every ``:serialized:`` entry is replaced, through SB3's
  ``custom_objects``, by an object rebuilt here from the JSON beside it (``safe_custom_objects``):
  spaces from their shape and bounds, schedules from their constant, classes from an allow-list;
- normalisation statistics are read from ``vecnormalize.json`` (``normalisation``), which
  ``crowdsteer train`` writes.

A legacy pickle (``vecnormalize.pkl``, an entry this module cannot rebuild) is refused with
``UntrustedFileError`` naming the file and the switch that reads it anyway: ``--trust-pickles``
on the command line, ``trusted=True`` in Python. With it, the file is unpickled after the risk
is printed once (``warn_once``).
"""

from __future__ import annotations

import ast
import os
import re
import sys
from typing import Any

import numpy as np

from crowdsteer.envs.core.checks import ConfigError

TRUST_ENV = "CROWDSTEER_TRUST_PICKLES"
"""Set to ``1`` (``--trust-pickles`` sets it) to unpickle files in this process and its workers."""

FLAG = "--trust-pickles"
"""The command-line switch that lets crowdsteer unpickle files."""

RISK = (
    "crowdsteer: unpickling files you said you trust (--trust-pickles / trusted=True); a pickle "
    "can run any code on this machine, so load only files from sources you trust"
)


class UntrustedFileError(ConfigError):
    """A file crowdsteer would have to unpickle, which the user has not said they trust."""


_warned = False


def trust_pickles() -> None:
    """Let this process, and the workers it starts, unpickle the files it loads."""
    os.environ[TRUST_ENV] = "1"


def trusted(explicit: bool | None = None) -> bool:
    """Whether pickles may be read: ``explicit`` when given, else the process-wide switch."""
    if explicit is not None:
        if not isinstance(explicit, bool):
            raise ConfigError(f"trusted={explicit!r} must be True or False")
        return explicit
    return os.environ.get(TRUST_ENV, "") == "1"


def warn_once() -> None:
    """Print the risk of unpickling to stderr, once per process."""
    global _warned
    if not _warned:
        _warned = True
        print(RISK, file=sys.stderr, flush=True)


def refuse(path: Any, what: str) -> UntrustedFileError:
    """The error for a file holding a pickle that was not trusted: names the file and the flag."""
    return UntrustedFileError(
        f"{str(path)!r} {what}, and reading a pickle can run any code; crowdsteer does not "
        f"unpickle files by default. If you trust this file, load it with {FLAG} (command line) "
        "or trusted=True (Python)"
    )


# --------------------------------------------------------------------------- SB3 zips
_CLASS = re.compile(r"^<class '([A-Za-z_][\w.]*)'>$")
_FUNC_OWNER = re.compile(r"^<function ([A-Za-z_]\w*)\.__init__ at ")
_CONSTANT = re.compile(r"^ConstantSchedule\(val=([-+0-9.eE]+|inf|nan)\)$")


ALLOWED_CLASSES = frozenset(
    {
        "gymnasium.spaces.box.Box",
        "crowdsteer.training.rl.set_encoder.NeighbourSetExtractor",
        "crowdsteer.training.rl.scan_encoder.ScanExtractor",
        "stable_baselines3.common.torch_layers.FlattenExtractor",
        "stable_baselines3.common.torch_layers.NatureCNN",
        "stable_baselines3.common.torch_layers.CombinedExtractor",
        "stable_baselines3.common.policies.ActorCriticPolicy",
        "stable_baselines3.sac.policies.SACPolicy",
        "stable_baselines3.common.buffers.RolloutBuffer",
        "stable_baselines3.common.buffers.ReplayBuffer",
        "torch.nn.modules.activation.Tanh",
        "torch.nn.modules.activation.ReLU",
        "torch.nn.modules.activation.ELU",
        "torch.nn.modules.activation.LeakyReLU",
        "torch.nn.modules.activation.SiLU",
        "torch.nn.modules.activation.GELU",
        "torch.nn.modules.activation.Sigmoid",
        "torch.optim.adam.Adam",
        "torch.optim.adamw.AdamW",
        "torch.optim.sgd.SGD",
        "torch.optim.rmsprop.RMSprop",
    }
)
"""The classes a model file may name (by dotted path) for the safe loader to rebuild it: the
spaces, policies, buffers, feature extractors, activations and optimisers crowdsteer and SB3
train with. A class named in a file is imported only when it is listed here."""


def _resolve(dotted: str) -> Any:
    """The class at ``dotted``, a name of ``ALLOWED_CLASSES``."""
    import importlib

    if dotted not in ALLOWED_CLASSES:
        raise KeyError(dotted)
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _floats(text: Any, shape: tuple[int, ...]) -> np.ndarray | None:
    """The array numpy printed as ``text`` (``str`` of an array), or None when it was cut."""
    if not isinstance(text, str) or "..." in text:
        return None
    body = text.replace("[", " ").replace("]", " ").split()
    try:
        values = np.array([float(v) for v in body], dtype=np.float64)
    except ValueError:
        return None
    if values.size != int(np.prod(shape)):
        return None
    return values.reshape(shape)


def _box(entry: dict, key: str, shown: str) -> Any:
    """A ``gymnasium.spaces.Box`` from the JSON SB3 writes beside a pickled Box."""
    kind = entry.get(":type:", "")
    if kind != "<class 'gymnasium.spaces.box.Box'>":
        raise _unknown(shown, key, f"a {kind or 'space of unknown type'}")
    try:
        shape = tuple(int(n) for n in ast.literal_eval(str(entry.get("_shape"))))
        dtype = np.dtype(str(entry.get("dtype", "float32")))
    except (ValueError, SyntaxError, TypeError) as err:
        raise _unknown(shown, key, "a Box whose shape or dtype cannot be read") from err
    low, high = _floats(entry.get("low"), shape), _floats(entry.get("high"), shape)
    # bounds numpy cut when printing do not change a policy's actions on observations
    low = np.full(shape, -np.inf) if low is None else low
    high = np.full(shape, np.inf) if high is None else high
    box = _resolve("gymnasium.spaces.box.Box")
    return box(low=low.astype(dtype), high=high.astype(dtype), shape=shape, dtype=dtype)


def _schedule(entry: dict, key: str, shown: str) -> Any:
    """A schedule: its constant when the JSON gives one, else a constant 0 (only training, never
    acting, reads a schedule; ``crowdsteer train --resume`` passes its run's own)."""
    from stable_baselines3.common.utils import ConstantSchedule, FloatSchedule

    match = _CONSTANT.match(str(entry.get("value_schedule", "")))
    value = float(match.group(1)) if match else 0.0
    return FloatSchedule(ConstantSchedule(value))


def _policy_class(entry: dict, key: str, shown: str, algorithm: str) -> Any:
    owner = _FUNC_OWNER.match(str(entry.get("__init__", "")))
    name = owner.group(1) if owner else None
    module = entry.get("__module__")
    ppo = module == "stable_baselines3.common.policies" and name in (None, "ActorCriticPolicy")
    sac = module == "stable_baselines3.sac.policies" and name in (None, "SACPolicy")
    if algorithm == "PPO" and ppo:
        return _resolve("stable_baselines3.common.policies.ActorCriticPolicy")
    if algorithm == "SAC" and sac:
        return _resolve("stable_baselines3.sac.policies.SACPolicy")
    raise _unknown(shown, key, f"the policy class {module}.{name or '?'}")


def _buffer_class(entry: dict, key: str, shown: str) -> Any:
    if entry.get("__module__") != "stable_baselines3.common.buffers":
        raise _unknown(shown, key, f"a buffer class from {entry.get('__module__')!r}")
    name = "RolloutBuffer" if key.startswith("rollout") else "ReplayBuffer"
    return _resolve(f"stable_baselines3.common.buffers.{name}")


def _plain_dict(entry: dict, key: str, shown: str) -> dict[str, Any]:
    """A dict whose values SB3 wrote as JSON, or as ``<class '...'>`` of an allowed class."""
    if entry.get(":type:") != "<class 'dict'>":
        raise _unknown(shown, key, f"a {entry.get(':type:', 'value of unknown type')}")
    out: dict[str, Any] = {}
    for name, value in entry.items():
        if name in (":type:", ":serialized:"):
            continue
        match = _CLASS.match(value) if isinstance(value, str) else None
        if match:
            if match.group(1) not in ALLOWED_CLASSES:
                raise _unknown(shown, f"{key}[{name!r}]", f"the class {match.group(1)}")
            value = _resolve(match.group(1))
        elif isinstance(value, str) and value.startswith("<"):
            raise _unknown(shown, f"{key}[{name!r}]", f"the object {value[:60]}")
        out[name] = value
    return out


def _train_freq(entry: dict, key: str, shown: str) -> Any:
    """SAC's ``train_freq`` (its JSON keeps no value): one step, the only setting crowdsteer's
    SAC trains with; ``crowdsteer train --resume`` passes its run's own."""
    from stable_baselines3.common.type_aliases import TrainFreq, TrainFrequencyUnit

    if entry.get(":type:") != "<class 'stable_baselines3.common.type_aliases.TrainFreq'>":
        raise _unknown(shown, key, f"a {entry.get(':type:')}")
    return TrainFreq(1, TrainFrequencyUnit.STEP)


def _unknown(shown: str, key: str, what: str) -> UntrustedFileError:
    return refuse(shown, f"keeps {what} as a pickle in its data entry {key!r}")


_PICKLED_MODULES = (
    "numpy.",
    "gymnasium.",
    "stable_baselines3.",
    "torch.",
    "crowdsteer.",
    "cloudpickle.",
    "copyreg.",
    "collections.",
    "functools.",
    "abc.",
    "enum.",
    "typing.",
    "math.",
    "_codecs.encode",
)
"""What the pickles of a genuine model zip refer to (Stable-Baselines3 pickles its spaces,
schedules and classes with cloudpickle)."""

_PICKLED_BUILTINS = frozenset(
    ("object", "type", "tuple", "list", "dict", "set", "frozenset", "slice", "range", "float",
     "int", "complex", "bool", "bytes", "bytearray", "str", "getattr")
)  # fmt: skip


_STRINGS = frozenset(
    ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "SHORT_BINSTRING", "BINSTRING",
     "STRING")
)  # fmt: skip


def pickled_globals(data: bytes) -> set[str]:
    """The ``module.name`` globals a pickle would look up, read from its opcodes without
    running it (``pickletools.genops``); ``?`` for one whose name is built at run time."""
    import pickletools

    found: set[str] = set()
    pushed: list[Any] = []  # the strings pushed so far (None for anything else)
    memo: dict[int, Any] = {}
    for op, arg, _ in pickletools.genops(data):
        name = op.name
        if name in _STRINGS:
            pushed.append(arg)
        elif name in ("BINGET", "LONG_BINGET", "GET"):
            pushed.append(memo.get(int(arg)))
        elif name == "MEMOIZE":
            memo[len(memo)] = pushed[-1] if pushed else None
        elif name in ("BINPUT", "LONG_BINPUT", "PUT"):
            memo[int(arg)] = pushed[-1] if pushed else None
        elif name in ("GLOBAL", "INST"):
            found.add(str(arg).replace(" ", "."))
            pushed.append(None)
        elif name == "STACK_GLOBAL":
            module, attr = (pushed[-2], pushed[-1]) if len(pushed) >= 2 else (None, None)
            ok = isinstance(module, str) and isinstance(attr, str)
            found.add(f"{module}.{attr}" if ok else "?")
            pushed.append(None)
        else:
            pushed.append(None)
    return found


def _foreign(entry: dict) -> list[str]:
    """The globals of an entry's pickle that no genuine model zip refers to."""
    import base64
    import binascii

    try:  # genops raises ValueError on a damaged pickle
        found = pickled_globals(base64.b64decode(str(entry[":serialized:"])))
    except (binascii.Error, ValueError) as err:
        return [f"a damaged pickle ({err})"]
    foreign = []
    for name in sorted(found - {"?"}):
        module, _, attr = name.rpartition(".")
        if module == "builtins" and attr in _PICKLED_BUILTINS:
            continue
        if not name.startswith(_PICKLED_MODULES):
            foreign.append(name)
    return foreign


def safe_custom_objects(data: dict[str, Any], algorithm: str, shown: str) -> dict[str, Any]:
    """SB3 ``custom_objects`` replacing every ``:serialized:`` entry of a model's ``data`` JSON
    with an object rebuilt from the JSON, so that ``load`` unpickles nothing.
    ``UntrustedFileError`` (naming the file and the entry) for an entry that cannot be rebuilt,
    or whose pickle refers to anything a genuine model's does not (``pickled_globals`` reads its
    opcodes without running it): such a file was made to run code when unpickled."""
    objects: dict[str, Any] = {}
    for key, entry in data.items():
        if not (isinstance(entry, dict) and ":serialized:" in entry):
            continue
        foreign = _foreign(entry)
        if foreign:  # read, never run: a pickle no saved model writes
            raise refuse(
                shown,
                f"keeps in its data entry {key!r} a pickle that would call {', '.join(foreign)}, "
                "which no saved model does",
            )
        if key in ("observation_space", "action_space"):
            objects[key] = _box(entry, key, shown)
        elif key in ("learning_rate", "lr_schedule", "clip_range", "clip_range_vf"):
            objects[key] = _schedule(entry, key, shown)
        elif key == "policy_class":
            objects[key] = _policy_class(entry, key, shown, algorithm)
        elif key in ("rollout_buffer_class", "replay_buffer_class"):
            objects[key] = _buffer_class(entry, key, shown)
        elif key in ("policy_kwargs", "rollout_buffer_kwargs", "replay_buffer_kwargs"):
            objects[key] = _plain_dict(entry, key, shown)
        elif key == "train_freq":
            objects[key] = _train_freq(entry, key, shown)
        else:
            raise _unknown(shown, key, f"a {entry.get(':type:', 'value of unknown type')}")
    return objects
