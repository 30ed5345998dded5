"""Run with bench/.venv-amulet's python: read a .schem with amulet-core (an independent
implementation) and print its block entities as JSON: [{pos, id, nbt}] with ``id`` amulet's
universal name and ``nbt`` the text of the tag amulet holds (for substring checks)."""

import json
import sys

import amulet

level = amulet.load_level(sys.argv[1])
out = []
for cx, cz in level.all_chunk_coords("main"):
    for be in level.get_chunk(cx, cz, "main").block_entities:
        out.append({"pos": [be.x, be.y, be.z], "id": f"{be.namespace}:{be.base_name}", "nbt": str(be.nbt)})
level.close()
print(json.dumps(out))
