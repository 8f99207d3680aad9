"""Watching and driving the environment: the demo, rendered clips and ``play``."""
