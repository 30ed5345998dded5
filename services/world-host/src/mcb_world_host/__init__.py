"""mcb_world_host: the embedded world host, sole writer of a real Minecraft Java world save.

Modules: region (Anvil files), chunk (1.18+ chunk NBT), level (level.dat), world (a save:
reads, atomic batch writes), hoststate (durable state: batch log, pause), events (observed block events),
host (the world protocol's methods), server (HTTP), __main__ (process entry point).
"""

__version__ = "0.1.0"
