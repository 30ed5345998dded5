"""Block-entity NBT as Minecraft Java 1.21.11 saves it, to and from the shared data model
(``mcb_common.blockentity``: items / text / patterns / profile). The embedded world host writes
and reads chunks with it; schematics (``mcb_common.schematic``) write and read their
``BlockEntities`` with it, older files first upgraded by ``upgrade`` (see there).

A chunk's ``block_entities`` list holds one compound per block entity: ``id``
(``minecraft:<block entity id>``), ``x``/``y``/``z`` (ints), ``keepPacked`` (byte 0) and the
kind's own keys, the way the game's ``saveAdditional`` writes them (docs/world-format.md,
*Block entities*):

- containers: ``Items`` — always present, ``[]`` when empty — of ``{Slot: byte, id: string,
  count: int, components?}`` (1.20.5+ item stacks; ``components`` absent for plain items, else
  ``minecraft:custom_name`` a string tag and ``minecraft:lore`` a list of string tags — 1.21.5+
  stores a plain text component as a string). Furnaces, smokers and
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

import json
from typing import Any

from . import nbt
from .blockentity import CONTAINERS, ITEM_COMPONENTS, LINES, SUPPORTED

FURNACES = ("furnace", "smoker", "blast_furnace")
CAMPFIRES = ("campfire", "soul_campfire")
COMMON = frozenset({"id", "x", "y", "z", "keepPacked", "components"})
# keys the game writes with default values for a kind whose content the model ignores
_DEFAULT_KEYS: dict[str, frozenset[str]] = {
    "furnace": frozenset(
        {
            "cooking_time_spent",
            "cooking_total_time",
            "lit_time_remaining",
            "lit_total_time",
            "RecipesUsed",
            "BurnTime",
            "CookTime",
            "CookTimeTotal",
        }
    ),
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
    tag = nbt.Compound(
        id=nbt.String(f"minecraft:{be_id}"), x=nbt.Int(x), y=nbt.Int(y), z=nbt.Int(z), keepPacked=nbt.Byte(0)
    )
    if be_id in CONTAINERS:
        tag["Items"] = nbt.List(nbt.COMPOUND, [_item_nbt(it) for it in data.get("items", ())])
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
                has_glowing_text=nbt.Byte(1 if s.get("glowing") else 0),
            )
        tag["is_waxed"] = nbt.Byte(1 if text.get("waxed") else 0)
    elif be_id == "banner":
        if data.get("patterns"):
            tag["patterns"] = nbt.List(
                nbt.COMPOUND,
                [
                    nbt.Compound(pattern=nbt.String(p["pattern"]), color=nbt.String(p["color"]))
                    for p in data["patterns"]
                ],
            )
    elif be_id == "skull":
        if data.get("profile"):
            tag["profile"] = nbt.Compound(name=nbt.String(data["profile"]))
    return tag


def _item_nbt(it: dict[str, Any]) -> nbt.Compound:
    tag = nbt.Compound(Slot=nbt.Byte(it["slot"]), id=nbt.String(it["id"]), count=nbt.Int(it["count"]))
    comps = it.get("components")
    if comps:
        c = nbt.Compound()
        if "minecraft:custom_name" in comps:
            c["minecraft:custom_name"] = nbt.String(comps["minecraft:custom_name"])
        if "minecraft:lore" in comps:
            c["minecraft:lore"] = nbt.List(nbt.STRING, [nbt.String(line) for line in comps["minecraft:lore"]])
        tag["components"] = c
    return tag


def _item_of(it: Any) -> dict[str, Any] | None:
    """A stored item stack in the model, or None when it holds what the model cannot carry."""
    if not isinstance(it, dict) or not {"Slot", "id", "count"} <= set(it) <= {"Slot", "id", "count", "components"}:
        return None
    out: dict[str, Any] = {"count": int(it["count"]), "id": str(it["id"]), "slot": int(it["Slot"])}
    comps = it.get("components")
    if comps:
        if not isinstance(comps, dict) or not set(comps) <= set(ITEM_COMPONENTS):
            return None
        c: dict[str, Any] = {}
        name = comps.get("minecraft:custom_name")
        if name is not None:
            if not isinstance(name, str):
                return None
            c["minecraft:custom_name"] = str(name)
        lore = comps.get("minecraft:lore")
        if lore is not None:
            if not isinstance(lore, list) or not all(isinstance(x, str) for x in lore):
                return None
            if lore:
                c["minecraft:lore"] = [str(x) for x in lore]
        if c:
            out["components"] = c
    return out


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
            item = _item_of(it)
            if item is None:
                bad.append("Items")
                break
            items.append(item)
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
            if (
                set(s) - {"messages", "color", "has_glowing_text"}
                or len(msgs) != LINES
                or not all(isinstance(m, str) for m in msgs)
            ):
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


# ---- older files (schematics saved by earlier game versions) ------------------------------------
# Data versions where the stored form changed (the game's DataFixer rules for these, not copied:
# the rules below are the few renames the model's kinds went through).
DV_1_20 = 3463  # signs: Text1..4 / Color / GlowingText -> front_text / back_text / is_waxed
DV_1_20_5 = 3837  # items: Count (byte) + tag -> count (int) + components; banners: Patterns -> patterns;
#                  skulls: SkullOwner -> profile
DV_1_21_5 = 4325  # text components stored as NBT, not as JSON strings
LEGACY_BANNER = {
    "b": "base",
    "bs": "stripe_bottom",
    "ts": "stripe_top",
    "ls": "stripe_left",
    "rs": "stripe_right",
    "cs": "stripe_center",
    "ms": "stripe_middle",
    "drs": "stripe_downright",
    "dls": "stripe_downleft",
    "ss": "small_stripes",
    "cr": "cross",
    "sc": "straight_cross",
    "ld": "diagonal_left",
    "rud": "diagonal_right",
    "lud": "diagonal_up_left",
    "rd": "diagonal_up_right",
    "vh": "half_vertical",
    "vhr": "half_vertical_right",
    "hh": "half_horizontal",
    "hhb": "half_horizontal_bottom",
    "bl": "square_bottom_left",
    "br": "square_bottom_right",
    "tl": "square_top_left",
    "tr": "square_top_right",
    "bt": "triangle_bottom",
    "tt": "triangle_top",
    "bts": "triangles_bottom",
    "tts": "triangles_top",
    "mc": "circle",
    "mr": "rhombus",
    "bo": "border",
    "cbo": "curly_border",
    "bri": "bricks",
    "gra": "gradient",
    "gru": "gradient_up",
    "cre": "creeper",
    "sku": "skull",
    "flo": "flower",
    "moj": "mojang",
    "glb": "globe",
    "pig": "piglin",
}
_DYES = (
    "white",
    "orange",
    "magenta",
    "light_blue",
    "yellow",
    "lime",
    "pink",
    "gray",
    "light_gray",
    "cyan",
    "purple",
    "blue",
    "brown",
    "green",
    "red",
    "black",
)  # the dye colours' numeric ids 0..15
_NOT_PLAIN = object()


def plain_text(v: Any, json_text: bool) -> Any:
    """A text component → its plain text, or ``_NOT_PLAIN`` when it is styled (colour, bold,
    translations, click events …: the model carries plain text only). ``json_text``: the
    component is a JSON string (before 1.21.5), else NBT (a string, or a compound)."""
    if isinstance(v, str) and json_text:
        if v == "":
            return ""
        try:
            v = json.loads(v)
        except ValueError:
            return v  # a few writers store bare text
        json_text = False
    if isinstance(v, str):
        return v
    if (
        isinstance(v, dict)
        and set(v) <= {"text", "type"}
        and isinstance(v.get("text", ""), str)
        and v.get("type", "text") == "text"
    ):
        return str(v.get("text", ""))
    if isinstance(v, dict) and set(v) == {"text", "extra"} and v["text"] == "" and isinstance(v["extra"], list):
        parts = [plain_text(x, json_text) for x in v["extra"]]
        return _NOT_PLAIN if any(p is _NOT_PLAIN for p in parts) else "".join(parts)
    return _NOT_PLAIN


def _upgrade_item(it: Any, data_version: int) -> tuple[Any, list[str]]:
    if not isinstance(it, dict):
        return it, []
    it = dict(it)
    bad: list[str] = []
    if "Count" in it and "count" not in it:
        it["count"] = int(it.pop("Count"))
    json_text = data_version < DV_1_21_5
    comps: dict[str, Any] = {}
    legacy = it.pop("tag", None)
    if legacy:
        legacy = dict(legacy)
        display = dict(legacy.pop("display", None) or {})
        if "Name" in display:
            comps["minecraft:custom_name"] = display.pop("Name")
        if "Lore" in display:
            comps["minecraft:lore"] = display.pop("Lore")
        bad += [f"tag.display.{k}" for k in display] + [f"tag.{k}" for k in legacy]
    elif isinstance(it.get("components"), dict):
        comps = dict(it["components"])
    out: dict[str, Any] = {}
    for k, v in comps.items():
        if k == "minecraft:custom_name":
            t = plain_text(v, json_text)
            if t is _NOT_PLAIN:
                bad.append(f"{k} (styled text)")
            else:
                out[k] = t
        elif k == "minecraft:lore" and isinstance(v, list):
            lines = [plain_text(x, json_text) for x in v]
            if any(t is _NOT_PLAIN for t in lines):
                bad.append(f"{k} (styled text)")
            elif lines:
                out[k] = lines
        else:
            bad.append(k)
    if out:
        it["components"] = out
    else:
        it.pop("components", None)
    return it, [f"item {it.get('id', '?')}: {b}" for b in bad]


def upgrade(be_id: str, tag: dict[str, Any], data_version: int) -> tuple[dict[str, Any], list[str]]:
    """A block entity compound of a file saved with ``data_version`` → the 1.21.11 form the model
    reads (``data_of``), plus what could not be carried (item tags beyond name and lore, styled
    text …: the caller refuses those). Only the renames of the kinds the model carries; the
    default-valued timers of older furnaces (``BurnTime``, ``CookTime``) are known and ignored."""
    t = dict(tag)
    problems: list[str] = []
    if isinstance(t.get("Items"), list):
        items = []
        for it in t["Items"]:
            up, bad = _upgrade_item(it, data_version)
            items.append(up)
            problems += bad
        t["Items"] = items
    if SUPPORTED.get(be_id) == "text":
        json_text = data_version < DV_1_21_5
        if any(f"Text{i}" in t for i in range(1, 5)):
            msgs = [t.pop(f"Text{i}", "") for i in range(1, 5)]
            t["front_text"] = {
                "messages": msgs,
                "color": t.pop("Color", "black"),
                "has_glowing_text": int(t.pop("GlowingText", 0)),
            }
            json_text = True
        for side in ("front_text", "back_text"):
            s = t.get(side)
            if not isinstance(s, dict):
                continue
            s = dict(s)
            filtered = s.pop("filtered_messages", None)
            msgs = [plain_text(m, json_text) for m in s.get("messages") or []]
            if any(m is _NOT_PLAIN for m in msgs):
                problems.append(f"{side} (styled text)")
                continue
            if filtered is not None and [plain_text(m, json_text) for m in filtered] != msgs:
                problems.append(f"{side}.filtered_messages")
            s["messages"] = msgs
            t[side] = s
    if be_id == "banner" and "Patterns" in t:
        pats = []
        for p in t.pop("Patterns") or ():
            code, color = p.get("Pattern"), p.get("Color")
            name = LEGACY_BANNER.get(str(code))
            if name is None or not isinstance(color, int) or not 0 <= color < 16:
                problems.append(f"Patterns ({code!r}, {color!r})")
                continue
            pats.append({"pattern": f"minecraft:{name}", "color": _DYES[color]})
        if pats:
            t["patterns"] = pats
    if be_id == "skull":
        owner = t.pop("SkullOwner", None)
        if owner is not None:
            t["profile"] = {"name": owner} if isinstance(owner, str) else owner
        prof = t.get("profile")
        if isinstance(prof, str):
            t["profile"] = {"name": prof}
        elif isinstance(prof, dict):
            name = prof.get("name", prof.get("Name"))
            if isinstance(name, str) and name:
                # the game resolves the skin from the name; an id/textures of the original are not kept
                t["profile"] = {"name": name}
            else:
                problems.append("profile without a player name (textures only)")
                t.pop("profile")
    return t, problems


SCHEMATIC_SKIP = frozenset({"id", "Id", "x", "y", "z", "Pos", "keepPacked"})


def schematic_data(be_id: str, data: dict[str, Any] | None) -> nbt.Compound:
    """The ``Data`` of a Sponge block entity: what the game saves, without position and id."""
    tag = to_nbt(be_id, 0, 0, 0, data)
    return nbt.Compound((k, v) for k, v in tag.items() if k not in SCHEMATIC_SKIP)
