"""The steering trace's layout, declared once: the vectors a body's steering records each step.

A body's trace is ``(TRACE_ROWS + 2 C, 2)`` rows of 2-D vectors in the frame of its ``Body`` (C:
its neighbour rows). The behaviours write it (``registry``), the step keeps it per body
(``StepBuffers.trace``), and the overlays draw it; the colours are the articles' pictures'.
Rows past ``TRACE_ROWS`` hold each neighbour's weighted push, plain (red) then adjusted (blue);
zero rows are pushes of no one.
"""

from __future__ import annotations

from ..kernels.jit import njit

TRACE_TARGET = 0  # unit direction to the target
TRACE_YELLOW = 1  # sum of the plain weighted pushes
TRACE_BLUE = 2  # sum of the adjusted pushes (side choice)
TRACE_GREEN = 3  # the yellow sum turned to the chosen side (side choice)
TRACE_FORCE = 4  # a behaviour's own force: detection box, social force, ORCA's preferred velocity
TRACE_FINAL = 5  # the desired velocity (m/s): what the body asked the physics for
TRACE_ROWS = 6


def trace_rows(capacity: int) -> int:
    """Rows of one body's trace for ``capacity`` neighbour rows."""
    return TRACE_ROWS + 2 * capacity


@njit(cache=True, inline="always")
def plain_push_row(k):
    """The row of neighbour ``k``'s weighted plain push."""
    return TRACE_ROWS + 2 * k


@njit(cache=True, inline="always")
def record(trace, row, x, y):
    """Write ``(x, y)`` into ``trace[row]`` when the trace has that row (none: not recorded)."""
    if trace.shape[0] > row:
        trace[row, 0] = x
        trace[row, 1] = y
