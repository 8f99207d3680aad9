"""Hydra plugin that brings the crowdsteer tasks to BenchMARL's own command line.

Installed (not editable), this package is ``hydra_plugins.crowdsteer_marl``, which Hydra scans
for plugins at start-up: ``python -m benchmarl.run algorithm=mappo task=crowdsteer/corridor``
then finds the task files (``conf/task/crowdsteer``) on its search path and the tasks in
BenchMARL's registry. The plugin itself lives in ``crowdsteer.training.marl.search_path``, which
``python -m crowdsteer.training.marl.run`` registers by hand; this package only shows it to
Hydra's scan, and nothing in ``crowdsteer`` imports this package.
"""

from __future__ import annotations

from crowdsteer.training.marl.search_path import CrowdsteerSearchPathPlugin

__all__ = ["CrowdsteerSearchPathPlugin"]
