"""Multi-agent learning on the crowd with TorchRL and BenchMARL (the ``marl`` extra).

``torchrl_env.CrowdTorchEnv`` is a TorchRL ``EnvBase`` over B worlds and all their learners, one
compiled batch step per ``step``; ``tasks`` declares the BenchMARL task family ``crowdsteer/...``
(its configuration files are in ``conf/task/crowdsteer``), registered with BenchMARL by
``tasks.register()`` and, for BenchMARL's own command line, by the Hydra plugin in
``search_path`` (shown to Hydra's scan by ``hydra_plugin``). Importing this package imports
neither torch nor BenchMARL.
"""

from pathlib import Path

CONFIG_DIR = Path(__file__).resolve().parent / "conf"
"""The Hydra configuration folder of the family: ``task/crowdsteer/<task>.yaml`` and
``experiment/crowdsteer_cpu.yaml``."""

TASKS = ("circle_crossing", "corridor", "crossing_flows", "bottleneck", "crowdnav_multi_robot")
"""The task family's tasks (``conf/task/crowdsteer/<task>.yaml``)."""

PRIOR_NAMES = ("residual", "warm_start", "dagger", "none")
"""The priors of the BenchMARL priors study (``priors_benchmarl.PRIORS``; ``crowdsteer
marl-benchmarl-priors --prior``)."""

SHAPING_VARIANTS = ("direct", "cosine", "potential", "residual")
"""The shared-PPO variants of the shaping study, PPO alone first (``shaping_study.VARIANTS``;
``crowdsteer marl-shaping --variants``)."""

STUDY_ALGORITHMS = ("mappo", "ippo", "masac", "ippo_dagger")
"""The BenchMARL rows the MARL study can train and score (``study.ALGORITHMS``; ``crowdsteer
marl-study --algorithms``)."""
