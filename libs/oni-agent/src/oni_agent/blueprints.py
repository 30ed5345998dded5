"""Blueprints as data, and the planner that checks one against the current map before queueing.

A blueprint (seed 004 §5.2): coordinates relative to an origin (the bottom-left cell of the room,
y up), pre-dig areas, and a build order that implies the dependencies (power before consumers).
Its floor is the row under the origin (y = -1), which must stay solid.

``plan(bp, ox, oy, world)`` is a pure function of the world's view (map rectangle, buildings,
research) and returns problems (blocking), warnings and the ordered actions. ``apply_step`` is
stateless: each call re-plans against the current map and does the next phase (queue the digs
while cells are still solid; then queue the builds not yet placed; then report done).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .catalog import BUILDINGS, UTILITIES
from .client import ModError

BLUEPRINTS: dict[str, dict[str, Any]] = {
    "spom": {
        "description": "Self-powering oxygen module: electrolyzer fed by a liquid pump, gas pump to the hydrogen "
        "generator, battery, a manual generator to start it",
        "dig": [[0, 0, 13, 4]],
        "build": [
            {"id": "Battery", "x": 8, "y": 0},
            {"id": "HydrogenGenerator", "x": 4, "y": 0},
            {"id": "ManualGenerator", "x": 9, "y": 0},
            {"id": "Electrolyzer", "x": 0, "y": 0},
            {"id": "GasPump", "x": 2, "y": 0},
            {"id": "LiquidPump", "x": 11, "y": 0},
        ],
        # one circuit through every power port (catalog ``port``): electrolyzer (1,0), gas pump (2,1),
        # generator (6,0), battery (8,0), manual generator (9,0), liquid pump (11,1); the gas pump's
        # output (3,1) to the generator's gas input (4,0); the liquid pump's output (12,1) to the
        # electrolyzer's water input (0,0) (catalog ``conduit_in``/``conduit_out``, the game's offsets)
        "utilities": [
            {"kind": "wire", "path": [[x, 0] for x in range(1, 12)] + [[11, 1]]},
            {"kind": "wire", "path": [[2, 0], [2, 1]]},
            {"kind": "gas", "path": [[3, 1], [4, 1], [4, 0]]},
            {"kind": "liquid", "path": [[12, 1], [12, 2], *[[x, 2] for x in range(11, -1, -1)], [0, 1], [0, 0]]},
        ],
    },
    "toilets": {
        "description": "Two outhouses and a wash basin behind a door",
        "dig": [[0, 0, 7, 3]],
        "build": [
            {"id": "Outhouse", "x": 0, "y": 0},
            {"id": "Outhouse", "x": 2, "y": 0},
            {"id": "WashBasin", "x": 4, "y": 0},
            {"id": "Door", "x": 6, "y": 0},
        ],
    },
    "ranch": {
        "description": "A small critter ranch: grooming station, feeder, drop-off",
        "dig": [[0, 0, 10, 4]],
        "build": [
            {"id": "RanchStation", "x": 0, "y": 0},
            {"id": "CreatureFeeder", "x": 3, "y": 0},
            {"id": "CreatureDeliveryPoint", "x": 4, "y": 0},
            {"id": "Door", "x": 9, "y": 0},
        ],
    },
    "farm": {
        "description": "Six farm tiles with room to grow, planted with mealwood, and a ration box",
        "dig": [[0, 0, 8, 3]],
        "build": [{"id": "FarmTile", "x": i, "y": 0} for i in range(6)] + [{"id": "RationBox", "x": 6, "y": 0}],
        # once the tiles stand, a seed ordered into each (POST /api/action/plant: PlantablePlot.CreateOrder;
        # a duplicant brings it from stock, the order waits while there is none)
        "plant": [{"x": i, "y": 0, "seed": "BasicSingleHarvestPlantSeed"} for i in range(6)],
    },
    "cooling": {
        "description": "A thermo regulator fed by a gas pump, its cooled gas out of a gas vent, powered by a "
        "coal generator with a battery",
        "dig": [[0, 0, 9, 3]],
        "build": [
            {"id": "Generator", "x": 0, "y": 0},
            {"id": "Battery", "x": 3, "y": 0},
            {"id": "GasPump", "x": 4, "y": 0},
            {"id": "AirConditioner", "x": 6, "y": 0},
            {"id": "GasVent", "x": 8, "y": 0},
        ],
        # the coal generator's 600 W covers the regulator's and the pump's 240 W each (the game's
        # GeneratorWattageRating / EnergyConsumptionWhenActive); one circuit through every power port
        # (catalog ``port``): generator (1,0), battery (3,0), gas pump (4,1), regulator (7,0); the gas
        # pump's output (5,1) to the regulator's gas input (6,1), the regulator's output (7,0) to the
        # gas vent's input (8,0) (catalog ``conduit_in``/``conduit_out``, the game's offsets)
        "utilities": [
            {"kind": "wire", "path": [[x, 0] for x in range(1, 8)]},
            {"kind": "wire", "path": [[4, 0], [4, 1]]},
            {"kind": "gas", "path": [[5, 1], [6, 1]]},
            {"kind": "gas", "path": [[7, 0], [8, 0]]},
        ],
    },
    "bedroom": {
        "description": "Four cots and a door",
        "dig": [[0, 0, 9, 3]],
        "build": [
            {"id": "Bed", "x": 0, "y": 0},
            {"id": "Bed", "x": 2, "y": 0},
            {"id": "Bed", "x": 4, "y": 0},
            {"id": "Bed", "x": 6, "y": 0},
            {"id": "Door", "x": 8, "y": 0},
        ],
    },
    "power": {
        "description": "Manual generator and two batteries, then a coal generator",
        "dig": [[0, 0, 8, 4]],
        "build": [
            {"id": "ManualGenerator", "x": 0, "y": 0},
            {"id": "Battery", "x": 2, "y": 0},
            {"id": "Battery", "x": 3, "y": 0},
            {"id": "Generator", "x": 4, "y": 0},
        ],
        "utilities": [
            {"kind": "wire", "path": [[0, 0], [1, 0], [2, 0], [3, 0], [4, 0], [5, 0]]}
        ],  # ports (0,0), (2,0), (3,0), coal generator (5,0)
    },
}

# Tech-free layouts auto-repair builds while the better blueprint's research is missing (not in
# `oni blueprint list`; the planner plans them like the others).
STARTERS: dict[str, dict[str, Any]] = {
    "oxygen": {
        "description": "An oxygen diffuser (algae) with a manual generator and a battery",
        "dig": [[0, 0, 5, 3]],
        "build": [
            {"id": "ManualGenerator", "x": 0, "y": 0},
            {"id": "Battery", "x": 2, "y": 0},
            {"id": "MineralDeoxidizer", "x": 3, "y": 0},
        ],
        "utilities": [{"kind": "wire", "path": [[0, 0], [1, 0], [2, 0], [3, 0]]}],
    },
    "kitchen": {
        # no ration box: it needs FarmingTech in the game (Database/Techs.cs), and a starter needs none
        "description": "A microbe musher with a manual generator and a battery",
        "dig": [[0, 0, 5, 3]],
        "build": [
            {"id": "ManualGenerator", "x": 0, "y": 0},
            {"id": "Battery", "x": 2, "y": 0},
            {"id": "MicrobeMusher", "x": 3, "y": 0},
        ],
        "utilities": [{"kind": "wire", "path": [[0, 0], [1, 0], [2, 0], [3, 0]]}],
    },
    "generator": {
        "description": "A manual generator and two batteries",
        "dig": [[0, 0, 4, 3]],
        "build": [
            {"id": "ManualGenerator", "x": 0, "y": 0},
            {"id": "Battery", "x": 2, "y": 0},
            {"id": "Battery", "x": 3, "y": 0},
        ],
        "utilities": [{"kind": "wire", "path": [[0, 0], [1, 0], [2, 0], [3, 0]]}],
    },
}


def layout(name: str) -> dict[str, Any]:
    """A blueprint or a starter layout by name (KeyError when neither)."""
    return BLUEPRINTS[name] if name in BLUEPRINTS else STARTERS[name]


def required_techs(bp: dict[str, Any], live: dict[str, dict[str, Any]] | None = None) -> list[str]:
    """The techs of a blueprint's buildings and utilities: from the live catalog (the game's,
    /api/state/catalog) where it has the building, else from oni_agent.catalog."""
    out: list[str] = []
    for b in bp["build"] + [{"id": UTILITIES[u["kind"]]} for u in bp.get("utilities", [])]:
        e = (live or {}).get(b["id"])
        t = e.get("tech") if e else BUILDINGS[b["id"]].tech if b["id"] in BUILDINGS else None
        if t and t not in out:
            out.append(t)
    return out


def _size(bid: str, live: dict[str, dict[str, Any]]) -> tuple[int, int]:
    e = live.get(bid)
    if e:
        return int(e["width"]), int(e["height"])
    return BUILDINGS[bid].width, BUILDINGS[bid].height


def bounds(bp: dict[str, Any]) -> tuple[int, int, int, int]:
    """The rectangle (x, y, w, h) relative to the origin that covers the digs, the buildings and
    the floor row under them."""
    xs, ys = [], []
    for x, y, w, h in bp["dig"]:
        xs += [x, x + w - 1]
        ys += [y, y + h - 1]
    for b in bp["build"]:
        d = BUILDINGS.get(b["id"])
        w, h = (d.width, d.height) if d else (1, 1)
        xs += [b["x"], b["x"] + w - 1]
        ys += [b["y"], b["y"] + h - 1]
    x0, y0 = min(xs), min(ys) - 1
    return x0, y0, max(xs) - x0 + 1, max(ys) - y0 + 1


def plan(name: str, ox: int, oy: int, world: dict[str, Any]) -> dict[str, Any]:
    """world: {"width", "height", "map": {x, y, width, height, rows}, "buildings": [...],
    "completed": [tech ids], "catalog"?: {id: /api/state/catalog entry}} — the map rectangle must
    cover ``bounds`` moved to the origin. With a catalog (the game's), sizes, techs and availability
    come from it; without, from oni_agent.catalog."""
    bp = layout(name)
    live: dict[str, dict[str, Any]] = world.get("catalog") or {}
    problems: list[dict[str, Any]] = []
    warnings: list[dict[str, Any]] = []
    m = world.get("map")

    def cell(x: int, y: int) -> str:
        if not (0 <= x < world["width"] and 0 <= y < world["height"]):
            return "outside"
        if m is None or not (m["x"] <= x < m["x"] + m["width"] and m["y"] <= y < m["y"] + m["height"]):
            return "?"
        return m["rows"][y - m["y"]][x - m["x"]]

    bx, by, bw, bh = bounds(bp)
    if ox + bx < 0 or oy + by < 0 or ox + bx + bw > world["width"] or oy + by + bh > world["height"]:
        problems.append(
            {
                "kind": "outside_map",
                "message": f"{name} at ({ox},{oy}) needs cells "
                f"{ox + bx}..{ox + bx + bw - 1} x {oy + by}..{oy + by + bh - 1}; the map is "
                f"{world['width']} x {world['height']}",
            }
        )
        return {
            "blueprint": name,
            "origin": {"x": ox, "y": oy},
            "ok": False,
            "problems": problems,
            "warnings": warnings,
            "actions": [],
        }

    taken: dict[tuple[int, int], str] = {}
    laid: dict[str, set[tuple[int, int]]] = {bid: set() for bid in UTILITIES.values()}
    for b in world.get("buildings") or []:
        if b["id"] in laid:  # a utility: its own layer, shares cells with buildings
            laid[b["id"]].add((b["x"], b["y"]))
            continue
        w, h = int(b.get("width") or 1), int(b.get("height") or 1)
        for i in range(w):
            for j in range(h):
                taken[(b["x"] + i, b["y"] + j)] = b["id"]

    dug: set[tuple[int, int]] = set()
    actions: list[dict[str, Any]] = []
    for x, y, w, h in bp["dig"]:
        cells = [(ox + x + i, oy + y + j) for j in range(h) for i in range(w)]
        dug.update(cells)
        hard = [c for c in cells if cell(*c) == "N"]
        if hard:
            problems.append(
                {
                    "kind": "undiggable",
                    "message": f"{len(hard)} cell(s) of neutronium in the dig area, e.g. {list(hard[0])}",
                    "cells": [list(c) for c in hard[:5]],
                }
            )
        wet = [c for c in cells if cell(*c) == "~"]
        if wet:
            warnings.append(
                {
                    "kind": "liquid",
                    "message": f"{len(wet)} liquid cell(s) in the dig area will flow into the room",
                    "cells": [list(c) for c in wet[:5]],
                }
            )
        if any(cell(*c) == "#" for c in cells):
            actions.append({"action": "dig", "body": {"x": ox + x, "y": oy + y, "width": w, "height": h}})

    planned: set[tuple[int, int]] = set()
    placed_here = {(b["id"], b["x"], b["y"]) for b in world.get("buildings") or []}
    for b in bp["build"]:
        bid, x, y = b["id"], ox + b["x"], oy + b["y"]
        if bid not in BUILDINGS and bid not in live:
            problems.append({"kind": "unknown_building", "message": f"unknown building id {bid}"})
            continue
        if live and bid in live and not live[bid].get("available", True):
            problems.append({"kind": "unavailable", "message": f"{bid} is deprecated or debug-only in this game"})
        bw, bh = _size(bid, live)
        if b.get("rotation") in (90, 270):  # a quarter turn lays the footprint on its side
            bw, bh = bh, bw
        cells = [(x + i, y + j) for j in range(bh) for i in range(bw)]
        if (bid, x, y) in placed_here:
            planned.update(cells)
            continue  # already there (a previous apply): nothing to queue
        clash = sorted({taken[c] for c in cells if c in taken})
        if clash:
            problems.append({"kind": "occupied", "message": f"{bid} at ({x},{y}) overlaps {', '.join(clash)}"})
        solid = [c for c in cells if cell(*c) in "#N" and c not in dug]
        if solid:
            problems.append(
                {
                    "kind": "solid",
                    "message": f"{bid} at ({x},{y}) sits in solid cells outside the dig areas, e.g. {list(solid[0])}",
                }
            )
        overlap = [c for c in cells if c in planned]
        if overlap:
            problems.append(
                {"kind": "overlap", "message": f"{bid} at ({x},{y}) overlaps an earlier building of the blueprint"}
            )
        if BUILDINGS[bid].floor if bid in BUILDINGS else True:
            under = [(cx, y - 1) for cx in range(x, x + bw)]
            bad = [c for c in under if not ((cell(*c) in "#N" and c not in dug) or c in planned or c in taken)]
            if bad:
                problems.append(
                    {"kind": "no_floor", "message": f"{bid} at ({x},{y}) has no floor under {list(bad[0])}"}
                )
        planned.update(cells)
        body: dict[str, Any] = {"buildingId": bid, "x": x, "y": y}
        if b.get("rotation") is not None:
            body["rotation"] = b["rotation"]
        if b.get("flip"):
            body["flip"] = True
        actions.append({"action": "build", "body": body})

    for u in bp.get("utilities", []):
        path = [(ox + x, oy + y) for x, y in u["path"]]
        solid = [c for c in path if cell(*c) in "#N" and c not in dug]
        if solid:
            problems.append(
                {
                    "kind": "solid",
                    "message": f"{u['kind']} path at {list(path[0])} runs through "
                    f"solid cells outside the dig areas, e.g. {list(solid[0])}",
                }
            )
        if all(c in laid[UTILITIES[u["kind"]]] for c in path):
            continue  # already laid (a previous apply): the game's tool would add nothing
        actions.append({"action": "utility", "body": {"kind": u["kind"], "path": [list(c) for c in path]}})

    for pl in bp.get("plant", []):
        actions.append({"action": "plant", "body": {"x": ox + pl["x"], "y": oy + pl["y"], "seed": pl["seed"]}})

    done = set(world.get("completed") or [])
    for t in required_techs(bp, live):
        if t not in done:
            problems.append(
                {"kind": "needs_research", "message": f"research {t} first (oni research {t})", "techId": t}
            )
    return {
        "blueprint": name,
        "origin": {"x": ox, "y": oy},
        "ok": not problems,
        "problems": problems,
        "warnings": warnings,
        "actions": actions,
    }


def world_view(client: Any, name: str, ox: int, oy: int) -> dict[str, Any]:
    """What plan() needs, read from the mod (a ModClient)."""
    game = client.state("game")
    width, height = int(game.get("worldWidth") or game["worldSize"]), int(game.get("worldHeight") or game["worldSize"])
    bx, by, bw, bh = bounds(layout(name))
    x0, y0 = max(0, ox + bx), max(0, oy + by)
    x1, y1 = min(width, ox + bx + bw), min(height, oy + by + bh)
    m = client.map(x0, y0, x1 - x0, y1 - y0) if x1 > x0 and y1 > y0 else None
    return {
        "width": width,
        "height": height,
        "map": m,
        "buildings": client.state_all("buildings"),
        "completed": client.state("research").get("completed") or [],
        "catalog": live_catalog(client),
    }


def live_catalog(client: Any) -> dict[str, dict[str, Any]]:
    """The game's building catalog by id (/api/state/catalog); empty from a mod that predates it."""
    try:
        return {e["id"]: e for e in client.state_all("catalog")}
    except ModError as e:
        if e.error == "not_found":
            return {}
        raise


def _standing(client: Any, name: str, ox: int, oy: int) -> bool:
    """Every building of the layout stands, built, at its place."""
    want = {(b["id"], ox + b["x"], oy + b["y"]) for b in layout(name)["build"]}
    built = {(b["id"], b["x"], b["y"]) for b in client.state_all("buildings") if not b.get("underConstruction")}
    return want <= built


def apply_step(
    client: Any, name: str, ox: int, oy: int, progress: Callable[[int, int, str], None] | None = None
) -> dict[str, Any]:
    """One stateless step of applying a blueprint: re-plan; refuse on problems; queue the digs while
    any dig cell is solid (phase "digging"); else queue the builds not yet placed (phase
    "building"); when every building stands, phase "done"."""
    p = plan(name, ox, oy, world_view(client, name, ox, oy))
    out: dict[str, Any] = {"blueprint": name, "origin": p["origin"], "warnings": p["warnings"]}
    if not p["ok"]:
        return {**out, "phase": "refused", "problems": p["problems"]}
    digs = [a for a in p["actions"] if a["action"] == "dig"]
    todo = digs or [a for a in p["actions"] if a["action"] in ("build", "utility")]
    phase = "digging" if digs else "building" if todo else "done"
    if phase == "done" and any(a["action"] == "plant" for a in p["actions"]):
        if _standing(client, name, ox, oy):
            # the plots stand: order each seed once (an order the mod has queued or applied is not repeated)
            asked = {
                (o["body"].get("x"), o["body"].get("y"))
                for o in client.state_all("actions")
                if o.get("action") == "plant" and o.get("state") in ("queued", "applied")
            }
            todo = [a for a in p["actions"] if a["action"] == "plant" and (a["body"]["x"], a["body"]["y"]) not in asked]
            phase = "planting" if todo else "done"
        else:
            phase = "building"
    queued = []
    for i, a in enumerate(todo):
        queued.append(client.action(a["action"], a["body"]))
        if progress:
            progress(i + 1, len(todo), f"{a['action']} {a['body']}")
    nxt = {
        "digging": "call again once the duplicants have dug (the map shows '.'); builds are queued then",
        "building": "call again later: it reports done when every building stands",
        "planting": "seeds ordered into the plots (duplicants bring them from stock): call again to confirm",
        "done": "nothing left to do",
    }[phase]
    return {**out, "phase": phase, "queued": queued, "next": nxt}
