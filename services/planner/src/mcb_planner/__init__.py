"""mcb_planner: stateless compilation of recipes into write sets.

The core (``recipe``, ``shapes``, ``compile``) imports no transport; ``servicer`` and
``__main__`` are the gRPC boundary. See README.md.
"""

# Part of every recipe hash: bump it whenever normalisation or a rasterisation rule changes,
# so that an old plan hash can never be mistaken for a new write set.
PLANNER_VERSION = "0.3.0"
