"""Building a ``CrowdBatch`` from a configuration: the one place that wires the core to the
scenarios and to the shaping reference, which the core does not import."""

from __future__ import annotations

from .core.batch import CrowdBatch
from .core.config import CrowdConfig
from .scenarios import scenario_source


def make_batch(
    config: CrowdConfig, num_worlds: int = 1, parallel: bool = False, trace: bool | None = None
) -> CrowdBatch:
    """B = ``num_worlds`` worlds of ``config``; ``parallel`` steps them on several threads,
    ``trace`` records every body's steering vectors for the overlays (None: when they can be
    shown, in a window or with the config's steering-vector overlay)."""
    if trace is None:
        trace = config.render_mode == "human" or "steering_vectors" in config.render_overlays
    reference = None
    if config.shaping_reference is not None and config.shaping_weight > 0:
        from crowdsteer.baselines.policies import make_policy

        reference = make_policy(config.shaping_reference, config=config)
    return CrowdBatch(
        config, scenario_source(config), num_worlds, parallel=parallel, reference=reference,
        trace=trace,
    )  # fmt: skip
