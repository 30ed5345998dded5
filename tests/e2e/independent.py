"""Read a block from a world save with an independent third-party reader (anvil-parser2).

Used to prove the save is a real Minecraft Java save, not just something our code reads.
Returns the state in our canonical spelling only for comparison: properties sorted.
"""

from __future__ import annotations

from pathlib import Path

import anvil  # anvil-parser2


def block_at(world: Path, x: int, y: int, z: int) -> str:
    cx, cz = x >> 4, z >> 4
    region = anvil.Region.from_file(str(world / "region" / f"r.{cx >> 5}.{cz >> 5}.mca"))
    chunk = anvil.Chunk.from_region(region, cx, cz)
    b = chunk.get_block(x & 15, y, z & 15)
    props = {k: str(getattr(v, "value", v)) for k, v in (b.properties or {}).items()}
    name = f"{b.namespace}:{b.id}"
    if not props:
        return name
    return name + "[" + ",".join(f"{k}={v}" for k, v in sorted(props.items())) + "]"
