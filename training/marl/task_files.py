"""The task family's configuration files (``conf/task/crowdsteer/<task>.yaml``) read as
``CrowdConfig`` keyword arguments, without BenchMARL: the studies that train shared PPO and score
policies on a task need its settings, not BenchMARL."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from . import CONFIG_DIR


def task_kwargs(task: str, fields: Collection[str] | None = None) -> dict[str, Any]:
    """``CrowdConfig`` keyword arguments of a task's file, its ``options`` merged in. ``fields``:
    the top-level keys a task may have (``tasks.TaskConfig``'s); another raises ``ValueError``."""
    import yaml  # the train extra's (BenchMARL's Hydra brings it too)

    path = CONFIG_DIR / "task" / "crowdsteer" / f"{task}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in path.parent.glob("*.yaml"))
        raise ValueError(f"task={task!r} is not a crowdsteer task; choose one of {known}")
    cfg = yaml.safe_load(path.read_text())
    cfg.pop("defaults", None)
    options = dict(cfg.pop("options", None) or {})
    unknown = sorted(set(cfg) - set(fields)) if fields is not None else []
    if unknown:
        raise ValueError(f"task {task!r} has fields {unknown} that are not TaskConfig's")
    return {**cfg, **options}
