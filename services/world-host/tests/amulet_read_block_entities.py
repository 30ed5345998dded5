"""Run with bench/.venv-amulet's python: open a world save with amulet-core (an independent
implementation) and print, for each [x, y, z] of argv[2] (JSON), the block's name and its
block entity (namespaced id and the NBT amulet read, as SNBT text)."""

import json
import sys

import amulet

level = amulet.load_level(sys.argv[1])
out = []
for x, y, z in json.loads(sys.argv[2]):
    block, entity = level.get_version_block(x, y, z, "minecraft:overworld", ("java", (1, 21, 0)))
    out.append(
        {
            "block": block.namespaced_name if hasattr(block, "namespaced_name") else str(block),
            "entity": entity.namespaced_name if entity is not None else None,
            "nbt": entity.nbt.to_snbt() if entity is not None else "",
        }
    )
level.close()
print(json.dumps(out))
