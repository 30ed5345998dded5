"""Independent reads through anvil-parser2 (a third-party Anvil reader), for cross-checks.

anvil-parser2 0.10.6 reads a section whose palette has a single entry (vanilla omits
``data`` then) as all air; for that case only we take the entry from anvil's own palette
parser (``Chunk.get_palette``), so every block still comes from anvil's code, not ours.
"""

from __future__ import annotations

from pathlib import Path

import anvil

AIRS = {"minecraft:air", "minecraft:cave_air", "minecraft:void_air"}


def block_text(b) -> str:
    name = f"{b.namespace}:{b.id}"
    if name in AIRS:
        return "minecraft:air"
    props = {str(k): str(getattr(v, "value", v)) for k, v in (b.properties or {}).items()}
    if not props:
        return name
    return name + "[" + ",".join(f"{k}={v}" for k, v in sorted(props.items())) + "]"


def open_region(path: Path):
    return anvil.Region.from_file(str(path))


def chunk(region, cx: int, cz: int):
    return anvil.Chunk.from_region(region, cx, cz)


def _single(ch, sy: int):
    sec = ch.get_section(sy)
    if sec is None or "block_states" not in sec:
        return None
    if "data" in sec["block_states"]:
        return None
    pal = ch.get_palette(sec)
    return block_text(pal[0]) if pal else "minecraft:air"


def get(ch, x: int, y: int, z: int) -> str:
    """Block at world y and chunk-local x/z."""
    single = _single(ch, y >> 4)
    if single is not None:
        return single
    return block_text(ch.get_block(x & 15, y, z & 15))


def section_blocks(ch, sy: int) -> list[str]:
    """4096 block texts of a section in YZX order."""
    single = _single(ch, sy)
    if single is not None:
        return [single] * 4096
    return [block_text(b) for b in ch.stream_blocks(section=sy)]


def matches(ours: str, theirs: str) -> bool:
    """Same block and every property anvil reports equal (our canonical form may add
    registry defaults for properties an older version did not store)."""
    on, _, op = ours.partition("[")
    tn, _, tp = theirs.partition("[")
    if on != tn:
        return False
    opd = dict(kv.split("=", 1) for kv in op.rstrip("]").split(",") if kv)
    tpd = dict(kv.split("=", 1) for kv in tp.rstrip("]").split(",") if kv)
    return all(opd.get(k) == v for k, v in tpd.items())
