"""Hydra plugin that brings the crowdsteer tasks to BenchMARL's own command line.

Installed (not editable), this package is ``hydra_plugins.crowdsteer_marl``, which Hydra scans
for plugins at start-up: ``python -m benchmarl.run algorithm=mappo task=crowdsteer/corridor``
then finds the task files (``conf/task/crowdsteer``) on its search path and the tasks in
BenchMARL's registry. ``python -m crowdsteer.training.marl.run`` registers the same plugin by
hand, which also serves editable installs (whose packages Hydra's scan does not list).
"""

from __future__ import annotations

from hydra.core.config_search_path import ConfigSearchPath
from hydra.plugins.search_path_plugin import SearchPathPlugin


class CrowdsteerSearchPathPlugin(SearchPathPlugin):
    """Adds crowdsteer's task files to Hydra's search path and its tasks to BenchMARL's registry
    (for Hydra applications in an environment without BenchMARL it adds nothing)."""

    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        try:
            from crowdsteer.training.marl import CONFIG_DIR
            from crowdsteer.training.marl.tasks import register
        except ImportError:  # crowdsteer's marl extra not installed: nothing to offer
            return
        register()
        if all(e.path != str(CONFIG_DIR) for e in search_path.get_path()):
            search_path.append(provider="crowdsteer", path=f"file://{CONFIG_DIR}")
