"""auto_repair (seed 004's utility script, `oni auto-repair`): the analysis' findings mapped to
concrete remedies, planned against the current map, queued only when asked.

Remedies, by area (worst level not ok):

  oxygen       blueprint ``spom`` once every tech it needs is researched, else the starter ``oxygen``
               (diffuser + manual generator + battery) and research towards those techs
  food         ``farm`` (farm tiles: FineDining; ration box: FarmingTech), else the starter
               ``kitchen`` (microbe musher) and research
  power        ``power`` (Combustion), else the starter ``generator`` and research
  temperature  ``cooling`` (HVAC), else research towards it

The techs a blueprint needs are those of its buildings (``blueprints.required_techs``, from the
catalog, which follows the game's Database/Techs.cs).
  water, alerts  advice only (a water source or an alert needs a person's judgement)

A blueprint remedy's origin is the nearest place to the printing pod that joins the open space
the pod stands in and where the planner (``blueprints.plan``) finds no problem and no liquid,
clear of the other remedies, the buildings and their floor rows. Research is set only when nothing is being researched, one tech (the first missing prerequisite) per run.

Idempotency: a state file records each remedy (its finding's area, blueprint, origin) and every
action sent for it; an action is never sent twice, and an area that was remedied once is not
remedied again (the report says so; ``--reset`` forgets). A remedy in progress goes on in later
runs phase by phase, as ``oni blueprint apply`` does (digs, then the builds once dug).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import blueprints
from .auto_analyze import area_levels
from .catalog import TECHS, UTILITIES

# area -> (blueprint, starter used until the blueprint's techs are researched)
BLUEPRINT_REMEDIES: dict[str, tuple[str, str | None]] = {
    "oxygen": ("spom", "oxygen"),
    "food": ("farm", "kitchen"),
    "temperature": ("cooling", None),
    "power": ("power", "generator"),
}
ADVICE = {
    "water": "find a water source (geysers: oni status) or build a WaterPurifier for polluted water",
    "alerts": "read the game's alerts and act on them",
}
ORDER = ("oxygen", "food", "temperature", "power", "water", "alerts")


def load_state(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {"remedies": {}}
    data = json.loads(path.read_text(encoding="utf-8"))
    data.setdefault("remedies", {})
    return data


def save_state(path: Path, state: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(state, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)


def read_world(client: Any) -> dict[str, Any]:
    """The whole map (in 64 x 64 tiles), the buildings and the research."""
    game = client.state("game")
    w, h = int(game.get("worldWidth") or game["worldSize"]), int(game.get("worldHeight") or game["worldSize"])
    rows = [""] * h
    for y0 in range(0, h, 64):
        for x0 in range(0, w, 64):
            m = client.map(x0, y0, min(64, w - x0), min(64, h - y0))
            for j, row in enumerate(m["rows"]):
                rows[y0 + j] += row
    research = client.state("research")
    return {
        "width": w,
        "height": h,
        "cycle": game.get("cycle"),
        "map": {"x": 0, "y": 0, "width": w, "height": h, "rows": rows},
        "buildings": client.state_all("buildings"),
        "completed": research.get("completed") or [],
        "research_current": research.get("current"),
    }


def next_tech(tech: str, completed: list[str]) -> str:
    """The first tech still to research on the way to ``tech`` (its prerequisites first)."""
    for pre in TECHS[tech][2]:
        if pre not in completed:
            return next_tech(pre, completed)
    return tech


def _rect(name: str, ox: int, oy: int) -> tuple[int, int, int, int]:
    x, y, w, h = blueprints.bounds(blueprints.layout(name))
    return ox + x, oy + y, w, h


def _overlaps(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def reachable(world: dict[str, Any], start: tuple[int, int]) -> set[tuple[int, int]]:
    """The open cells ('.') connected to ``start`` by edges (where duplicants can walk or climb)."""
    rows, seen, todo = world["map"]["rows"], set(), [start]
    while todo:
        x, y = todo.pop()
        if (x, y) in seen or not (0 <= y < len(rows) and 0 <= x < len(rows[y])) or rows[y][x] != ".":
            continue
        seen.add((x, y))
        todo += [(x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)]
    return seen


def _joins(name: str, ox: int, oy: int, walk: set[tuple[int, int]]) -> bool:
    """Whether the room (its dig areas) contains or borders, left, right or above, a reachable cell."""
    for x, y, w, h in blueprints.layout(name)["dig"]:
        x0, y0 = ox + x, oy + y
        for i in range(-1, w + 1):
            for j in range(0, h + 1):
                if (x0 + i, y0 + j) in walk:
                    return True
    return False


def find_origin(name: str, world: dict[str, Any], reserved: list[tuple[int, int, int, int]]) -> dict[str, Any] | None:
    """The plan at the origin nearest the printing pod that joins the open space the pod stands
    in, with no problem, no liquid warning and no overlap with ``reserved`` rectangles nor with a
    building or the floor row under it (a dig there would undermine it); None when nowhere fits."""
    reserved = reserved + [
        (b["x"], b["y"] - 1, int(b.get("width") or 1), int(b.get("height") or 1) + 1)
        for b in world["buildings"]
        if b["id"] not in UTILITIES.values()
    ]
    hq = next((b for b in world["buildings"] if b["id"] == "Headquarters"), None)
    cx, cy = (hq["x"], hq["y"]) if hq else (world["width"] // 2, world["height"] // 2)
    walk = reachable(world, (cx, cy))
    cells = sorted(
        ((x, y) for y in range(world["height"]) for x in range(world["width"])),
        key=lambda c: (abs(c[0] - cx) + abs(c[1] - cy), c[1], c[0]),
    )
    for x, y in cells:
        if any(_overlaps(_rect(name, x, y), r) for r in reserved) or (walk and not _joins(name, x, y, walk)):
            continue
        p = blueprints.plan(name, x, y, world)
        if p["ok"] and not p["warnings"]:
            return p
    return None


def _key(action: dict[str, Any]) -> str:
    return json.dumps([action["action"], action["body"]], sort_keys=True)


def progress(entry: dict[str, Any], world: dict[str, Any]) -> tuple[str, list[dict[str, Any]], list[Any]]:
    """(status, actions to send now, problems) of a blueprint remedy: re-planned at its origin;
    digs while rock remains, then the builds; never an action already sent."""
    p = blueprints.plan(entry["blueprint"], entry["origin"][0], entry["origin"][1], world)
    if not p["ok"]:
        return "blocked", [], p["problems"]
    digs = [a for a in p["actions"] if a["action"] == "dig"]
    todo = digs or [a for a in p["actions"] if a["action"] in ("build", "utility")]
    sent = set(entry.get("sent") or [])
    fresh = [a for a in todo if _key(a) not in sent]
    if todo:
        return ("digging" if digs else "building"), fresh, []
    ox, oy = entry["origin"]
    mine = {(b["id"], ox + b["x"], oy + b["y"]) for b in blueprints.layout(entry["blueprint"])["build"]}
    standing = [b for b in world["buildings"] if (b["id"], b["x"], b["y"]) in mine]
    if not all(not b.get("underConstruction") for b in standing):
        return "building", [], []
    plants = [a for a in p["actions"] if a["action"] == "plant" and _key(a) not in sent]
    return ("planting", plants, []) if plants else ("done", [], [])


def plan_repairs(rep: dict[str, Any], world: dict[str, Any], state: dict[str, Any]) -> list[dict[str, Any]]:
    """The remedies for the report's findings against the world, given what earlier runs did."""
    levels = area_levels(rep)
    worst = {
        a: next((f for f in rep["findings"] if f["area"] == a and f["level"] == lvl), None)
        for a, lvl in levels.items()
        if lvl != "ok"
    }
    done_state = state["remedies"]
    reserved = [_rect(e["blueprint"], *e["origin"]) for e in done_state.values() if e.get("blueprint")]
    out: list[dict[str, Any]] = []
    wanted_techs: list[tuple[str, str]] = []
    for area in ORDER:
        f = worst.get(area)
        entry = done_state.get(area)
        if f is None and not (entry and entry.get("blueprint")):
            continue
        r: dict[str, Any] = {
            "key": area,
            "area": area,
            "level": levels.get(area, "ok"),
            "finding": f["message"] if f else "ok now",
        }
        if entry:  # remedied before: go on with it, never start a second one for the same finding
            r.update(kind="blueprint", blueprint=entry["blueprint"], origin=entry["origin"])
            r["status"], r["actions"], r["problems"] = progress(entry, world)
            if r["status"] == "done" and f:
                r["note"] = (
                    f"remedied at cycle {entry.get('cycle')}; the finding persists - not repeating it (--reset forgets)"
                )
            out.append(r)
            continue
        if area in ADVICE:
            out.append({**r, "kind": "advice", "status": "manual", "actions": [], "advice": ADVICE[area]})
            continue
        best, starter = BLUEPRINT_REMEDIES[area]
        missing = [t for t in blueprints.required_techs(blueprints.layout(best)) if t not in world["completed"]]
        tech = missing[0] if missing else None
        name = starter if missing else best
        if tech:
            wanted_techs.append((tech, area))
        if name is None:
            out.append(
                {
                    **r,
                    "kind": "research",
                    "status": "needs_research",
                    "actions": [],
                    "advice": f"research {tech} first (then {best})",
                }
            )
            continue
        p = find_origin(name, world, reserved)
        if p is None:
            out.append(
                {
                    **r,
                    "kind": "blueprint",
                    "blueprint": name,
                    "status": "no_place",
                    "actions": [],
                    "problems": [{"kind": "no_place", "message": f"no place on the map fits {name}"}],
                }
            )
            continue
        origin = [p["origin"]["x"], p["origin"]["y"]]
        reserved.append(_rect(name, *origin))
        entry = {"blueprint": name, "origin": origin}
        status, actions, problems = progress(entry, world)
        out.append(
            {
                **r,
                "kind": "blueprint",
                "blueprint": name,
                "origin": origin,
                "status": "new",
                "actions": actions,
                "problems": problems,
            }
        )
    if wanted_techs and not world.get("research_current"):
        goal, area = wanted_techs[0]
        tech = next_tech(goal, world["completed"])
        key = f"research:{tech}"
        if key not in done_state:
            out.append(
                {
                    "key": key,
                    "area": "research",
                    "level": levels[area],
                    "kind": "research",
                    "status": "new",
                    "finding": f"{goal} unlocks the {BLUEPRINT_REMEDIES[area][0]} blueprint for {area}",
                    "actions": [{"action": "research", "body": {"techId": tech}}],
                }
            )
    return out


def apply(
    client: Any, remedies: list[dict[str, Any]], state: dict[str, Any], cycle: Any, budget: int, save: Any
) -> list[dict[str, Any]]:
    """Send the remedies' actions, at most ``budget``, recording each in ``state`` (``save(state)``
    after every one) before the next; returns what the mod answered."""
    sent: list[dict[str, Any]] = []
    for r in remedies:
        for a in r["actions"]:
            if len(sent) >= budget:
                return sent
            entry = state["remedies"].setdefault(r["key"], {"cycle": cycle, "sent": []})
            if r["kind"] == "blueprint":
                entry.update(blueprint=r["blueprint"], origin=r["origin"])
            answer = client.action(a["action"], a["body"])
            entry["sent"].append(_key(a))
            save(state)
            sent.append({"remedy": r["key"], **a, "answer": answer})
    return sent


def remedy_text(r: dict[str, Any]) -> str:
    head = f"{r['key']:<12} [{r['level']}] {r['finding']}"
    if r["kind"] == "blueprint":
        what = f"{r['blueprint']} at ({r['origin'][0]},{r['origin'][1]})" if r.get("origin") else r["blueprint"]
        head += f"\n    -> {what}: {r['status']}"
    elif r["kind"] == "research" and r["actions"]:
        head += f"\n    -> research {r['actions'][0]['body']['techId']}"
    else:
        head += f"\n    -> {r.get('advice', '')} ({r['status']})"
    lines = [head] + [f"       {a['action']} {json.dumps(a['body'])}" for a in r["actions"]]
    lines += [f"       problem: {p['message']}" for p in r.get("problems") or []]
    if r.get("note"):
        lines.append(f"       {r['note']}")
    return "\n".join(lines)
