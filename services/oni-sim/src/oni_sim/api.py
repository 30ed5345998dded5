"""The seed-004 API over the colony model: routing, validation, answers (transport-free).

``handle(colony, method, path, query, body) -> (status, payload, headers)``. The rules are the
contract's (oni-mod/contract/openapi.json) and the same as the mod core's (oni-mod/core/Api.cs):
checks run in the order JSON -> object -> unknown fields -> each field's type and range ->
inside the map -> known building/tech/duplicant; the first failure answers
``{"error": type, "details": ..., "field"?: ...}``. Actions are only queued here.
"""

from __future__ import annotations

import json
from typing import Any

from oni_agent.catalog import BUILDINGS, PERMITTED, TECHS, orientation

from .model import CYCLE_TICKS, WORLD_ID, Colony

MAX_BODY = 64 * 1024
MAP_MAX = 64
SCHEDULE_BLOCKS = ("work", "sleep", "downtime", "bathtime")
SUITS = ("None", "AtmoSuit", "JetSuit", "LeadSuit", "OxygenMask")
UTILITY_KINDS = ("wire", "gas", "liquid", "logic")
PATH_MAX = 256


class ApiError(Exception):
    def __init__(self, status: int, error: str, details: str, **extra: Any) -> None:
        super().__init__(details)
        self.status, self.payload = status, {"error": error, "details": details, **extra}


def _bad(details: str, field: str | None = None) -> ApiError:
    return ApiError(400, "invalid_request", details, **({"field": field} if field else {}))


def _int(body: dict[str, Any], name: str, lo: int, hi: int, default: int | None = None) -> int:
    if name not in body or body[name] is None and default is not None:
        if default is None:
            raise _bad(f"missing field {name}", name)
        return default
    v = body[name]
    if not isinstance(v, int) or isinstance(v, bool):
        raise _bad(f"{name} must be an integer", name)
    if not lo <= v <= hi:
        raise _bad(f"{name} must be between {lo} and {hi}", name)
    return v


def _str(body: dict[str, Any], name: str, hi: int = 64) -> str:
    v = body.get(name)
    if name not in body:
        raise _bad(f"missing field {name}", name)
    if not isinstance(v, str) or not 1 <= len(v) <= hi:
        raise _bad(f"{name} must be a string of 1 to {hi} characters", name)
    return v


MAX_DEPTH = 32  # as the mod core's reader (oni-mod/core/Json.cs, Json.MaxDepth)


def _finite(token: str) -> float:
    v = float(token)
    if v in (float("inf"), float("-inf")):  # 1e400: out of double's range, as the mod core refuses it
        raise ValueError(f"number out of range: {token}")
    return v


def _no_constant(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")  # Python's json reads NaN/Infinity; JSON has neither


def parse_json(raw: bytes) -> Any:
    """The body as JSON, or ValueError: not UTF-8, not JSON, a number beyond double's range, NaN or
    Infinity, or nested deeper than MAX_DEPTH (the same documents the mod core refuses)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8") from None
    # bounded before parsing: the C parser recurses once per level (2,000 levels dropped the connection)
    if _nesting(text) > MAX_DEPTH:
        raise ValueError("nested too deeply")
    try:
        return json.loads(text, parse_float=_finite, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _nesting(text: str) -> int:
    """The deepest bracket nesting outside strings."""
    depth = deepest = 0
    in_str = esc = False
    for ch in text:
        if in_str:
            esc, in_str = (False, True) if esc else (ch == "\\", ch != '"')
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _object(raw: bytes, allowed: tuple[str, ...], c: Colony | None = None) -> dict[str, Any]:
    if len(raw) > MAX_BODY:
        raise ApiError(413, "invalid_request", f"request body over {MAX_BODY} bytes")
    try:
        body = parse_json(raw)
    except ValueError:
        raise _bad("request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise _bad("request body must be a JSON object")
    extra = sorted(set(body) - set(allowed))
    if extra:
        raise _bad(f"unknown field {extra[0]}", extra[0])
    if c is not None:
        _world(c, body, False)  # the world first: the map checks are its own
    return body


def _in_map(c: Colony, x: int, y: int, w: int = 1, h: int = 1) -> None:
    for name, v, extent, limit in (("x", x, w, c.width), ("y", y, h, c.height)):
        if v + extent > limit:
            raise _bad(f"{name} is outside the map ({c.width} x {c.height} cells)", name)


def _area(c: Colony, b: dict[str, Any], required_size: bool) -> tuple[int, int, int, int]:
    x, y = _int(b, "x", 0, 4095), _int(b, "y", 0, 4095)
    w = _int(b, "width", 1, 128, None if required_size else 1)
    h = _int(b, "height", 1, 128, None if required_size else 1)
    _in_map(c, x, y, w, h)
    return x, y, w, h


def _path(c: Colony, b: dict[str, Any]) -> list[list[int]]:
    """1 to PATH_MAX cells [x, y] inside the map, each a neighbour (left, right, up, down) of the one
    before, none twice (the cells the game's utility tool drags through)."""
    path = b.get("path")
    if "path" not in b:
        raise _bad("missing field path", "path")
    shape = f"path must be 1 to {PATH_MAX} cells [x, y], each next to the one before, none twice"
    if not isinstance(path, list) or not 1 <= len(path) <= PATH_MAX:
        raise _bad(shape, "path")
    out: list[list[int]] = []
    for p in path:
        if (
            not isinstance(p, list)
            or len(p) != 2
            or any(not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= 4095 for v in p)
        ):
            raise _bad(shape, "path")
        if out and abs(p[0] - out[-1][0]) + abs(p[1] - out[-1][1]) != 1 or p in out:
            raise _bad(shape, "path")
        out.append(p)
    for x, y in out:
        if x >= c.width or y >= c.height:
            raise _bad(f"path is outside the map ({c.width} x {c.height} cells)", "path")
    return out


def _with_priority(out: dict[str, Any], body: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    """An order's answer; with the priority when the request gave one (5, the game's default, else)."""
    return {**out, "priority": args["priority"]} if "priority" in body else out


def _duplicant(c: Colony, b: dict[str, Any]) -> str:
    name = _str(b, "duplicant")
    if name not in {d.name for d in c.dupes}:
        raise _bad(f"no duplicant named {name}", "duplicant")
    return name


def _page(query: dict[str, str], items: list[Any]) -> tuple[list[Any], dict[str, str]]:
    def num(name: str, lo: int, hi: int, default: int) -> int:
        raw = query.get(name)
        if raw is None:
            return default
        if not raw.isdigit() or not lo <= int(raw) <= hi:
            raise _bad(f"{name} must be an integer between {lo} and {hi}", name)
        return int(raw)

    offset, limit = num("offset", 0, 10**9, 0), num("limit", 1, 1000, 500)
    page = items[offset : offset + limit]
    headers = {"X-Total-Count": str(len(items))}
    if offset + limit < len(items):
        headers["X-Next-Offset"] = str(offset + limit)
    return page, headers


def _world(c: Colony, where: dict[str, Any], query: bool) -> int:
    """The world a call is about: ``worldId`` (query parameter or body field), the active one when
    absent. The simulator has one world (WORLD_ID); the game one per asteroid or rocket interior."""
    if "worldId" not in where:
        return WORLD_ID
    v = where["worldId"]
    if query:
        v = int(v) if isinstance(v, str) and v.isdigit() and len(v) < 6 else v
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= 65535:
        raise _bad("worldId must be an integer between 0 and 65535", "worldId")
    if v != WORLD_ID:
        raise ApiError(400, "unknown_world", f"no world with id {v} (worlds: {WORLD_ID})", field="worldId")
    return v


def _state(c: Colony, what: str, query: dict[str, str]) -> Any:
    if what != "actions":  # the mod's own record, not a world's (as the mod core: no worldId there)
        _world(c, query, True)
    if what == "game":
        return {
            "cycle": c.tick_count // CYCLE_TICKS,
            "duplicantCount": len(c.dupes),
            "worldName": c.name,
            "worldSize": c.width,
            "worldWidth": c.width,
            "worldHeight": c.height,
            "paused": c.paused,
            "speed": c.speed,
            "worldId": WORLD_ID,
            "worlds": [{"id": WORLD_ID, "name": c.name, "width": c.width, "height": c.height, "active": True}],
            "power": {
                "produced": c.produced_w,
                "consumed": c.consumed_w,
                "stored": c.stored_j,
                "capacity": sum(BUILDINGS[b.id].battery for b in c.buildings if b.built),
                "circuits": [dict(i) for i in c.circuit_stats],
                "unconnected": dict(c.unconnected),
            },
            "temperature": {
                "average": round(c.temperature, 2),
                "max": round(c.temperature + 3.0, 2),
                "rooms": c.rooms(),
            },
            # the game's meanings (the glue reads them so): breathable gas over the open cells,
            # food in kcal; the simulator's air is one pool spread over its open cells
            "oxygen": {
                "breathableKg": round(c.resources["Oxygen"], 3),
                "breathableCells": sum(row.count(".") for row in c.cells),
            },
            "food": {"kcal": round(c.resources["Food"], 3)},
        }
    if what == "resources":
        return [
            {"name": t, "tag": t, "amount": round(v, 3), "unit": "kcal" if t == "Food" else "kg"}
            for t, v in sorted(c.resources.items())
        ]
    if what == "duplicants":
        return [
            {
                "name": d.name,
                "stress": round(d.stress, 2),
                "calories": round(d.calories, 1),
                "stamina": round(d.stamina, 2),
                "oxygen": round(d.oxygen, 2),
                "diseases": d.diseases,
                "skillLevels": d.skillLevels,
            }
            for d in c.dupes
        ]
    if what == "buildings":
        return [
            {
                "name": BUILDINGS[b.id].name,
                "id": b.id,
                "x": b.x,
                "y": b.y,
                "isOperational": b.operational,
                "width": b.size()[0],
                "height": b.size()[1],
                "underConstruction": not b.built,
            }
            for b in c.buildings
        ]
    if what == "research":
        cost = TECHS[c.research_current][1] if c.research_current else 1
        return {
            "current": c.research_current,
            "progress": round(min(1.0, c.research_points / cost), 4),
            "completed": list(c.completed),
            "available": c.available_techs(),
        }
    if what == "geysers":
        return [dict(g) for g in c.geysers]
    if what == "alert":
        return [dict(a) for a in c.alerts]
    if what == "critters":
        return [dict(a) for a in c.critters]
    if what == "actions":
        return [dict(o) for o in c.outcomes.values()]
    if what == "reports":
        return [
            {**{k: (dict(v) if isinstance(v, dict) else v) for k, v in rep.items()}, "current": i == len(c.reports) - 1}
            for i, rep in enumerate(c.reports)
        ]
    if what == "schedules":
        return [
            {"name": n, "blocks": list(bl), "duplicants": [d.name for d in c.dupes if d.schedule == n]}
            for n, bl in c.schedules.items()
        ]
    if what == "catalog":  # the simulator's catalog (oni_agent.catalog): no materials modelled
        return [
            {
                "id": b.id,
                "name": b.name,
                "width": b.width,
                "height": b.height,
                "materials": [],
                "tech": b.tech,
                "available": True,
                "powerW": b.power,
                "ports": _ports(b),
                "rotations": b.rotations,
                "researched": b.tech is None or b.tech in c.completed,
            }
            for b in BUILDINGS.values()
        ]
    if what == "map":
        q = _query_ints(query, ("x", "y", "width", "height"))
        x, y = _int(q, "x", 0, 4095), _int(q, "y", 0, 4095)
        w, h = _int(q, "width", 1, MAP_MAX), _int(q, "height", 1, MAP_MAX)
        _in_map(c, x, y, w, h)
        return {
            "x": x,
            "y": y,
            "width": w,
            "height": h,
            "rows": ["".join(c.cells[yy][x : x + w]) for yy in range(y, y + h)],
        }
    raise ApiError(404, "not_found", f"no endpoint /api/state/{what}")


def _ports(b: Any) -> dict[str, Any]:
    """The catalog's ports as the glue sends them: cells from the bottom-left cell, unrotated."""
    out: dict[str, Any] = {}
    if b.port is not None:
        out["powerOut" if b.power > 0 or b.battery else "powerIn"] = {"x": b.port[0], "y": b.port[1]}
    for name, p in (("conduitIn", b.conduit_in), ("conduitOut", b.conduit_out)):
        if p:
            out[name] = {"x": p[1], "y": p[2], "type": p[0].capitalize()}
    return out


def _query_ints(query: dict[str, str], names: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n in names:
        if n in query:
            v = query[n]
            out[n] = int(v) if v.lstrip("-").isdigit() else v
    return out


AREA_ORDERS = ("mop", "sweep", "harvest")


def _action(c: Colony, what: str, raw: bytes) -> dict[str, Any]:
    if what == "dig":
        b = _object(raw, ("x", "y", "width", "height", "priority", "worldId"), c)
        x, y, w, h = _area(c, b, True)
        args: dict[str, Any] = {"x": x, "y": y, "width": w, "height": h, "priority": _int(b, "priority", 1, 9, 5)}
        out = {"result": "dig_queued", **_with_priority({"x": x, "y": y, "width": w, "height": h}, b, args)}
    elif what == "build":
        b = _object(raw, ("buildingId", "x", "y", "rotation", "flip", "priority", "worldId"), c)
        bid = _str(b, "buildingId")
        x, y = _int(b, "x", 0, 4095), _int(b, "y", 0, 4095)
        rot = b.get("rotation")
        if rot is not None and (not isinstance(rot, int) or isinstance(rot, bool) or rot not in (0, 90, 180, 270)):
            raise _bad("rotation must be null, 0, 90, 180 or 270", "rotation")
        flip = b.get("flip", False)
        if not isinstance(flip, bool):
            raise _bad("flip must be true or false", "flip")
        priority = _int(b, "priority", 1, 9, 5)
        _in_map(c, x, y)
        if bid not in BUILDINGS:
            raise ApiError(400, "unknown_building", f"no building with id {bid}", buildingId=bid)
        o = orientation(bid, rot, flip)
        if o is None:  # BuildingDef.PermittedRotations: the build tool offers no other orientation
            allowed = ", ".join(PERMITTED[BUILDINGS[bid].rotations])
            raise _bad(
                f"{bid} cannot be turned so: the game allows {allowed} "
                "(rotation 90 = R90, 180, 270; flip = the mirror it allows)",
                "rotation" if rot else "flip",
            )
        args = {"buildingId": bid, "x": x, "y": y, "rotation": rot, "priority": priority, "orientation": o}
        out = {"result": "build_queued", **_with_priority({"buildingId": bid, "x": x, "y": y}, b, args)}
        if o != "Neutral":
            out["orientation"] = o
    elif what == "cancel":
        b = _object(raw, ("x", "y", "width", "height", "worldId"), c)
        x, y, w, h = _area(c, b, False)
        args = {"x": x, "y": y, "width": w, "height": h}
        out = {"result": "cancel_queued", **args}
    elif what in ("deconstruct", "prioritize", *AREA_ORDERS):
        b = _object(raw, ("x", "y", "width", "height", "priority", "worldId"), c)
        x, y, w, h = _area(c, b, False)
        args = {"x": x, "y": y, "width": w, "height": h}
        if what == "prioritize":
            args["priority"] = _int(b, "priority", 1, 9)
            out = {"result": f"{what}_queued", **args}
        else:
            args["priority"] = _int(b, "priority", 1, 9, 5)
            out = {"result": f"{what}_queued", **_with_priority({"x": x, "y": y, "width": w, "height": h}, b, args)}
    elif what == "plant":
        b = _object(raw, ("x", "y", "seed", "priority", "worldId"), c)
        x, y = _int(b, "x", 0, 4095), _int(b, "y", 0, 4095)
        seed = _str(b, "seed")
        args = {"x": x, "y": y, "seed": seed, "priority": _int(b, "priority", 1, 9, 5)}
        _in_map(c, x, y)
        out = {"result": "plant_queued", **_with_priority({"x": x, "y": y, "seed": seed}, b, args)}
    elif what == "research":
        b = _object(raw, ("techId", "worldId"), c)
        tech = _str(b, "techId")
        if tech not in TECHS:
            raise ApiError(400, "unknown_tech", f"no tech with id {tech}", techId=tech)
        args, out = {"techId": tech}, {"result": "research_queued", "techId": tech}
    elif what == "speed":
        b = _object(raw, ("paused", "speed", "worldId"), c)
        if "paused" not in b and "speed" not in b:
            raise _bad("give paused, speed or both", "paused")
        args = {}
        if "paused" in b:
            if not isinstance(b["paused"], bool):
                raise _bad("paused must be true or false", "paused")
            args["paused"] = b["paused"]
        if "speed" in b:
            args["speed"] = _int(b, "speed", 1, 3)
        out = {"result": "speed_queued", **args}
    elif what == "utility":
        b = _object(raw, ("kind", "path", "priority", "worldId"), c)
        kind = b.get("kind")
        if "kind" not in b:
            raise _bad("missing field kind", "kind")
        if kind not in UTILITY_KINDS:
            raise _bad(f"kind must be one of {', '.join(UTILITY_KINDS)}", "kind")
        path = _path(c, b)
        args = {"kind": kind, "path": path, "priority": _int(b, "priority", 1, 9, 5)}
        out = {"result": "utility_queued", **_with_priority({"kind": kind, "cells": len(path)}, b, args)}
    elif what == "schedule":
        b = _object(raw, ("duplicant", "schedule", "blocks", "worldId"), c)
        if sum(k in b for k in ("duplicant", "schedule", "blocks")) != 2:
            raise _bad("give blocks with duplicant or schedule, or duplicant with schedule (to assign it)", "blocks")
        args, out = {}, {"result": "schedule_queued"}
        if "duplicant" in b:
            args["duplicant"] = out["duplicant"] = _duplicant(c, b)
        if "schedule" in b:
            args["schedule"] = out["schedule"] = _str(b, "schedule")
        if "blocks" in b:
            blocks = b["blocks"]
            if not isinstance(blocks, list) or len(blocks) != 24 or any(v not in SCHEDULE_BLOCKS for v in blocks):
                raise _bad("blocks must be 24 of work, sleep, downtime, bathtime", "blocks")
            args["blocks"] = blocks
    elif what == "wardrobe":
        b = _object(raw, ("duplicant", "item", "worldId"), c)
        _duplicant(c, b)
        item = b.get("item")
        if item not in SUITS:
            raise _bad(f"item must be one of {', '.join(SUITS)}", "item")
        # the game has no call that dresses a duplicant: suits are put on at a suit dock; nothing is queued
        raise ApiError(
            501, "not_implemented", "wardrobe is not implemented: in the game a duplicant puts a suit on at a suit dock"
        )
    else:
        raise ApiError(404, "not_found", f"no endpoint /api/action/{what}")
    if "worldId" in b:
        out["worldId"] = b["worldId"]
    aid = c.enqueue(what, args, b)
    if aid is None:
        raise ApiError(503, "queue_full", "the action queue is full; retry when the game has caught up")
    return {**out, "actionId": aid}


STATE = (
    "game",
    "resources",
    "duplicants",
    "buildings",
    "research",
    "geysers",
    "alert",
    "critters",
    "map",
    "actions",
    "catalog",
    "schedules",
    "reports",
)
LISTS = (
    "resources",
    "duplicants",
    "buildings",
    "geysers",
    "alert",
    "critters",
    "actions",
    "catalog",
    "schedules",
    "reports",
)
ACTIONS = (
    "dig",
    "build",
    "deconstruct",
    "prioritize",
    "research",
    "schedule",
    "wardrobe",
    "utility",
    "speed",
    "cancel",
    "plant",
    "mop",
    "sweep",
    "harvest",
)


def handle(
    c: Colony, method: str, path: str, query: dict[str, str], body: bytes, service: str = "oni-sim"
) -> tuple[int, Any, dict[str, str]]:
    try:
        if path == "/health":
            _method(method, "GET")
            return 200, {"status": "ok", "service": service}, {}
        if path.startswith("/api/state/") and path[11:] in STATE:
            _method(method, "GET")
            what = path[11:]
            with c.lock:  # a consistent copy; the lock is only held while copying
                data = _state(c, what, query)
            if what in LISTS:
                data, headers = _page(query, data)
                return 200, data, headers
            return 200, data, {}
        if path.startswith("/api/action/") and path[12:] in ACTIONS:
            _method(method, "POST")
            return 200, _action(c, path[12:], body), {}
        raise ApiError(404, "not_found", f"no endpoint {path}")
    except ApiError as e:
        return e.status, e.payload, {}


def _method(got: str, want: str) -> None:
    if got != want:
        raise ApiError(405, "invalid_request", f"use {want} for this endpoint")
