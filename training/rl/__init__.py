"""Reinforcement learning on crowdsteer: the Stable-Baselines3 scripts (``ppo``, ``sac``), behaviour
cloning, RLlib, learning curves, and the models shipped with the package (``models/``).

Nothing here imports torch at package import; each script does when it is imported.
"""
