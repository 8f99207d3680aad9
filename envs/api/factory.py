"""Building a ``CrowdBatch`` from a configuration: the one place that wires the core to the
scenarios and to the baselines it steers by (shaping, residual and potential references), which
the core does not import. The adapters beside it build their batches here;
``crowdsteer.envs.make_batch`` is this function. A scenario's own reward terms and observation
blocks (``crowdsteer.envs.extend``) arrive through the configuration's scenario hooks, so that
the factory imports nothing from the package root above it."""

from __future__ import annotations

from typing import Any

from ..core.batch import CrowdBatch
from ..core.config import SCENARIO_HOOKS, CrowdConfig
from ..core.priors import GOAL_DISTANCE, References
from ..core.sensors import sensor_extension
from ..scenarios import scenario_source


def make_batch(
    config: CrowdConfig,
    num_worlds: int = 1,
    parallel: bool | str = "auto",
    trace: bool | None = None,
) -> CrowdBatch:
    """B = ``num_worlds`` worlds of ``config``. ``parallel`` steps them on numba's thread count
    of threads (True), on one (False), or on several only when the batch is large enough to gain
    from them (``"auto"``: ``core.simulator.threaded``); ``trace`` records every body's steering
    vectors for the overlays (None: when they can be shown, in a window or with the config's
    steering-vector overlay)."""
    if trace is None:
        trace = config.render_mode == "human" or "steering_vectors" in config.render_overlays
    from crowdsteer.baselines.policies import make_policy

    def baseline(name: str | None) -> Any:
        return None if name is None else make_policy(name, config=config)

    shaping = baseline(config.shaping_reference) if config.shaping_weight > 0 else None
    residual = baseline(config.residual_reference) if config.action_mode == "residual" else None
    potential = config.potential if config.potential != GOAL_DISTANCE else None
    # a scenario's terms and blocks are registered through crowdsteer.envs.extend, which sets
    # the hook when it is imported (without it no scenario can have any)
    extension_for = SCENARIO_HOOKS.extension_for
    extension = extension_for(config) if extension_for is not None else None
    return CrowdBatch(
        config,
        scenario_source(config),
        num_worlds,
        parallel=parallel,
        trace=trace,
        references=References(shaping, residual, baseline(potential)),
        # the sensors' blocks, around the scenario's own reward terms and observation blocks
        extension=sensor_extension(config, extension),
    )
