"""The Hydra search-path plugin that brings the crowdsteer tasks to BenchMARL's command line.

``python -m crowdsteer.training.marl.run`` registers it by hand (which also serves editable
installs, whose packages Hydra's scan does not list); installed, the package
``hydra_plugins.crowdsteer_marl`` (``hydra_plugin/``) exposes it to Hydra's scan.
"""

from __future__ import annotations

from hydra.core.config_search_path import ConfigSearchPath
from hydra.plugins.search_path_plugin import SearchPathPlugin


class CrowdsteerSearchPathPlugin(SearchPathPlugin):
    """Adds crowdsteer's task files to Hydra's search path and its tasks to BenchMARL's registry
    (for Hydra applications in an environment without BenchMARL it adds nothing)."""

    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        try:
            from . import CONFIG_DIR
            from .tasks import register
        except ImportError:  # crowdsteer's marl extra not installed: nothing to offer
            return
        register()
        if all(e.path != str(CONFIG_DIR) for e in search_path.get_path()):
            search_path.append(provider="crowdsteer", path=f"file://{CONFIG_DIR}")
