"""Block-entity NBT as Minecraft Java 1.21.11 saves it, to and from the shared data model
(``mcb_common.blockentity``: items / text / patterns / profile).

A chunk's ``block_entities`` list holds one compound per block entity: ``id``
(``minecraft:<block entity id>``), ``x``/``y``/``z`` (ints), ``keepPacked`` (byte 0) and the
kind's own keys, the way the game's ``saveAdditional`` writes them (docs/world-format.md,
*Block entities*):

- containers: ``Items`` — always present, ``[]`` when empty — of ``{Slot: byte, id: string,
  count: int}`` (1.20.5+ item stacks; ``components`` absent for plain items). Furnaces, smokers and
  blast furnaces add ``cooking_time_spent``, ``cooking_total_time``, ``lit_time_remaining``,
  ``lit_total_time`` (shorts, 1.21.4+ names) and ``RecipesUsed: {}``; campfires
  ``CookingTimes``/``CookingTotalTimes`` (int arrays of 4); brewing stands ``BrewTime`` (short),
  ``Fuel`` (byte); hoppers ``TransferCooldown`` (int, −1 when idle).
- signs and hanging signs: ``front_text``/``back_text`` = ``{messages: [4 text components],
  color, has_glowing_text: byte}`` and ``is_waxed: byte``. Since 1.21.5 a text component is
  stored as NBT, not as a JSON string: a plain line is a string tag (``"Hello"``, not
  ``'{"text":"Hello"}'`` or ``'"Hello"'``).
- banners: ``patterns`` = ``[{pattern: "minecraft:stripe_top", color: "red"}]``, left out when
  empty.
- player heads: ``profile`` = ``{name: "Notch"}`` (a partial profile the game resolves).
- everything else supported (beds, bells, …): the common keys only.

``data_of`` reads a compound back into the model, or marks it ``{"unsupported": "<keys>"}``
when it holds anything the model cannot carry (a loot table, a custom name, item components,
styled sign text, a lectern's book …): such a block compares unequal to every state we could
write, and the host refuses to overwrite it.
"""

from __future__ import annotations

from typing import Any

from mcb_common import nbt
from mcb_common.blockentity import CONTAINERS, LINES, SUPPORTED

FURNACES = ("furnace", "smoker", "blast_furnace")
CAMPFIRES = ("campfire", "soul_campfire")
COMMON = frozenset({"id", "x", "y", "z", "keepPacked", "components"})
# keys the game writes with default values for a kind whose content the model ignores
_DEFAULT_KEYS: dict[str, frozenset[str]] = {
    "furnace": frozenset({"cooking_time_spent", "cooking_total_time", "lit_time_remaining", "lit_total_time",
                          "RecipesUsed", "BurnTime", "CookTime", "CookTimeTotal"}),
    "campfire": frozenset({"CookingTimes", "CookingTotalTimes"}),
    "brewing_stand": frozenset({"BrewTime", "Fuel"}),
    "hopper": frozenset({"TransferCooldown"}),
    "comparator": frozenset({"OutputSignal"}),
    "sculk_sensor": frozenset({"last_vibration_frequency", "listener"}),
    "calibrated_sculk_sensor": frozenset({"last_vibration_frequency", "listener"}),
    "sculk_shrieker": frozenset({"warning_level", "listener"}),
    "sculk_catalyst": frozenset({"cursors"}),
    "beehive": frozenset({"bees", "flower_pos"}),
    "jukebox": frozenset({"ticks_since_song_started"}),
    "decorated_pot": frozenset({"sherds"}),
    "chiseled_bookshelf": frozenset({"Items", "last_interacted_slot"}),
    "crafter": frozenset({"Items", "disabled_slots", "triggered", "crafting_ticks_remaining"}),
    "shelf": frozenset({"Items", "align_items_to_bottom"}),
    "beacon": frozenset({"Levels"}),
    "lectern": frozenset({"Page"}),
}
for _k in ("smoker", "blast_furnace"):
    _DEFAULT_KEYS[_k] = _DEFAULT_KEYS["furnace"]
_DEFAULT_KEYS["soul_campfire"] = _DEFAULT_KEYS["campfire"]


def _empty(v: Any) -> bool:
    return hasattr(v, "__len__") and not isinstance(v, str) and len(v) == 0


def to_nbt(be_id: str, x: int, y: int, z: int, data: dict[str, Any] | None) -> nbt.Compound:
    """The block entity compound the game would save for this block and data."""
    data = data or {}
    tag = nbt.Compound(id=nbt.String(f"minecraft:{be_id}"), x=nbt.Int(x), y=nbt.Int(y), z=nbt.Int(z),
                       keepPacked=nbt.Byte(0))
    if be_id in CONTAINERS:
        tag["Items"] = nbt.List(nbt.COMPOUND, [
            nbt.Compound(Slot=nbt.Byte(it["slot"]), id=nbt.String(it["id"]), count=nbt.Int(it["count"]))
            for it in data.get("items", ())])
        if be_id in FURNACES:
            for k in ("cooking_time_spent", "cooking_total_time", "lit_time_remaining", "lit_total_time"):
                tag[k] = nbt.Short(0)
            tag["RecipesUsed"] = nbt.Compound()
        elif be_id in CAMPFIRES:
            tag["CookingTimes"] = nbt.IntArray([0] * 4)
            tag["CookingTotalTimes"] = nbt.IntArray([0] * 4)
        elif be_id == "brewing_stand":
            tag["BrewTime"] = nbt.Short(0)
            tag["Fuel"] = nbt.Byte(0)
        elif be_id == "hopper":
            tag["TransferCooldown"] = nbt.Int(-1)
    elif SUPPORTED.get(be_id) == "text":
        text = data.get("text", {})
        for side in ("front", "back"):
            s = text.get(side) or {}
            lines = list(s.get("lines") or [""] * LINES)
            tag[f"{side}_text"] = nbt.Compound(
                messages=nbt.List(nbt.STRING, [nbt.String(m) for m in lines]),
                color=nbt.String(s.get("color", "black")),
                has_glowing_text=nbt.Byte(1 if s.get("glowing") else 0))
        tag["is_waxed"] = nbt.Byte(1 if text.get("waxed") else 0)
    elif be_id == "banner":
        if data.get("patterns"):
            tag["patterns"] = nbt.List(nbt.COMPOUND, [
                nbt.Compound(pattern=nbt.String(p["pattern"]), color=nbt.String(p["color"]))
                for p in data["patterns"]])
    elif be_id == "skull":
        if data.get("profile"):
            tag["profile"] = nbt.Compound(name=nbt.String(data["profile"]))
    return tag


def data_of(tag: dict[str, Any]) -> dict[str, Any] | None:
    """The model's data for a stored block entity (None = empty), or ``{"unsupported": keys}``."""
    be_id = str(tag.get("id", "")).removeprefix("minecraft:")
    key = SUPPORTED.get(be_id, "?") if be_id in SUPPORTED else "?"
    if key == "?":
        return {"unsupported": f"block entity {be_id}"}
    known = set(COMMON) | _DEFAULT_KEYS.get(be_id, frozenset())
    bad = []
    out: dict[str, Any] = {}
    if tag.get("components"):
        bad.append("components")
    if key == "items":
        known.add("Items")
        items = []
        for it in tag.get("Items") or ():
            if not isinstance(it, dict) or set(it) != {"Slot", "id", "count"}:
                bad.append("Items")
                break
            items.append({"count": int(it["count"]), "id": str(it["id"]), "slot": int(it["Slot"])})
        if items:
            out["items"] = sorted(items, key=lambda i: i["slot"])
    elif key == "text":
        known |= {"front_text", "back_text", "is_waxed"}
        text: dict[str, Any] = {}
        for side in ("front", "back"):
            s = tag.get(f"{side}_text")
            if s is None:
                continue
            msgs = list(s.get("messages") or [])
            if set(s) - {"messages", "color", "has_glowing_text"} or len(msgs) != LINES or not all(
                    isinstance(m, str) for m in msgs):
                bad.append(f"{side}_text")
                continue
            color = str(s.get("color", "black"))
            glowing = bool(int(s.get("has_glowing_text", 0)))
            if any(msgs) or color != "black" or glowing:
                text[side] = {"lines": [str(m) for m in msgs]}
                if color != "black":
                    text[side]["color"] = color
                if glowing:
                    text[side]["glowing"] = True
        if int(tag.get("is_waxed", 0)):
            text["waxed"] = True
        if text:
            out["text"] = text
    elif key == "patterns":
        known.add("patterns")
        pats = []
        for p in tag.get("patterns") or ():
            if not isinstance(p, dict) or set(p) != {"pattern", "color"} or not isinstance(p["pattern"], str):
                bad.append("patterns")
                break
            pats.append({"color": str(p["color"]), "pattern": str(p["pattern"])})
        if pats:
            out["patterns"] = pats
    elif key == "profile":
        known.add("profile")
        prof = tag.get("profile")
        if prof is not None:
            if isinstance(prof, dict) and set(prof) == {"name"}:
                out["profile"] = str(prof["name"])
            else:
                bad.append("profile")
    for k, v in tag.items():
        if k not in known and not _empty(v):
            bad.append(k)
    if key is None:  # kinds whose content the model ignores: default-valued keys only
        for k in ("Items", "bees"):
            if k in tag and not _empty(tag[k]):
                bad.append(k)
    if bad:
        return {"unsupported": ",".join(sorted(set(bad)))}
    return out or None
