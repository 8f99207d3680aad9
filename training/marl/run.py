"""BenchMARL's command line with the crowdsteer tasks: ``python -m crowdsteer.training.marl.run
algorithm=mappo task=crowdsteer/corridor seed=0 ...`` runs an experiment from ``benchmarl.run``'s
Hydra configuration (its overrides and outputs unchanged) after registering the Hydra plugin that
adds the ``crowdsteer/...`` tasks. Installed non-editable, ``python -m benchmarl.run`` finds the
plugin by itself; this entry point serves every install.

One key is its own: ``+warm_start.teacher=NAME`` (and ``+warm_start.samples=...``, ``epochs``,
``batch_size``, ``learning_rate``, ``num_worlds``, ``dagger_rounds``: ``warm_start.WarmStart``'s
fields) clones the baseline ``NAME`` into the actor before the first collection
(``warm_start.BehaviourCloning``)."""

from __future__ import annotations

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.core.plugins import Plugins
from omegaconf import DictConfig, OmegaConf

from .search_path import CrowdsteerSearchPathPlugin


@hydra.main(version_base=None, config_path="pkg://benchmarl.conf", config_name="config")
def experiment_main(cfg: DictConfig) -> None:
    """One BenchMARL experiment from the Hydra configuration, with a warm start when asked."""
    from benchmarl.hydra_config import load_experiment_from_hydra

    from .warm_start import warm_start_callbacks

    choices = HydraConfig.get().runtime.choices
    print(f"\nAlgorithm: {choices.algorithm}, Task: {choices.task}\n")
    print(OmegaConf.to_yaml(cfg))
    warm = cfg.get("warm_start")
    callbacks = warm_start_callbacks(OmegaConf.to_container(warm) if warm is not None else None)
    experiment = load_experiment_from_hydra(cfg, task_name=choices.task, callbacks=callbacks)
    experiment.run()


def main() -> None:
    """Run one BenchMARL experiment from the command line's Hydra overrides."""
    Plugins.instance().register(CrowdsteerSearchPathPlugin)
    experiment_main()


if __name__ == "__main__":
    main()
