"""BenchMARL's command line with the crowdsteer tasks: ``python -m crowdsteer.training.marl.run
algorithm=mappo task=crowdsteer/corridor seed=0 ...`` runs ``benchmarl.run`` (its Hydra
configuration, overrides and outputs unchanged) after registering the Hydra plugin that adds the
``crowdsteer/...`` tasks. Installed non-editable, ``python -m benchmarl.run`` finds the plugin by
itself; this entry point serves every install."""

from __future__ import annotations

from hydra.core.plugins import Plugins

from .search_path import CrowdsteerSearchPathPlugin


def main() -> None:
    """Run one BenchMARL experiment from the command line's Hydra overrides."""
    Plugins.instance().register(CrowdsteerSearchPathPlugin)
    from benchmarl.run import hydra_experiment

    hydra_experiment()


if __name__ == "__main__":
    main()
