"""Run inside bench/.venv-amulet: write a box of stone with amulet-core (set + save, no
safety checks) and print the timings as JSON. Usage: amulet_write.py WORLD x0 y0 z0 x1 y1 z1
"""

import json
import sys
import time

import amulet
from amulet.api.block import Block

world_path = sys.argv[1]
x0, y0, z0, x1, y1, z1 = (int(v) for v in sys.argv[2:8])
t0 = time.perf_counter()
level = amulet.load_level(world_path)
t1 = time.perf_counter()
stone = Block("minecraft", "stone")
version = level.level_wrapper.max_world_version
n = 0
for y in range(y0, y1 + 1):
    for z in range(z0, z1 + 1):
        for x in range(x0, x1 + 1):
            level.set_version_block(x, y, z, "minecraft:overworld", version, stone)
            n += 1
t2 = time.perf_counter()
level.save()
t3 = time.perf_counter()
level.close()
print(
    json.dumps(
        {
            "blocks": n,
            "open_s": t1 - t0,
            "set_s": t2 - t1,
            "save_s": t3 - t2,
            "set_save_s": t3 - t1,
            "version": str(version),
        }
    )
)
