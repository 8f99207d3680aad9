"""Measurements of the simulator itself: speed, memory, rendering and non-penetration."""
