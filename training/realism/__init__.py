"""How closely the simulated crowd moves like people: measurements against published data.

``measure`` holds the measurement methods on trajectories (classical and Voronoi density, speed,
flow through a line), ``reference`` the published relations (Weidmann's fundamental diagram, the
bottleneck experiments' specific flow), ``experiments`` the periodic-corridor and bottleneck runs
of the simulated crowd, and ``report`` runs everything for every pedestrian behaviour and writes
the plots and the table (``run_realism``).
"""
