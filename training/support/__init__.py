"""What the commands and scripts share: option fields of the scripts' ``Args`` dataclasses and the
checks a command makes before any work starts (optional extras, output paths, a display)."""
