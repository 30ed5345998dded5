"""Run with bench/.venv-amulet's python: read a .schem with amulet-core (an independent
implementation) and print {size, min, blocks: {"x,y,z": state}} as JSON (local coordinates)."""

import json
import sys

import amulet

level = amulet.load_level(sys.argv[1])
b = level.bounds("main")
(x0, y0, z0), (x1, y1, z1) = (list(map(int, b.min)), list(map(int, b.max)))
out = {"size": [x1 - x0, y1 - y0, z1 - z0], "min": [x0, y0, z0], "blocks": {}}
for y in range(y0, y1):
    for z in range(z0, z1):
        for x in range(x0, x1):
            blk, _ = level.get_version_block(x, y, z, "main", ("java", (1, 20, 4)))
            out["blocks"][f"{x - x0},{y - y0},{z - z0}"] = blk.blockstate
level.close()
print(json.dumps(out))
