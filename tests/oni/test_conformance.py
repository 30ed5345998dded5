"""The seed-004 API conformance suite, over real HTTP, against the simulator AND the Mono-compiled
mod core (test host with a fake game). Every answer is checked against oni-mod/contract/openapi.json."""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from .conftest import CONTRACT, schema_validator

STATE_SCHEMAS = {
    "game": ("Game", False),
    "resources": ("Resource", True),
    "duplicants": ("Duplicant", True),
    "buildings": ("Building", True),
    "research": ("Research", False),
    "geysers": ("Geyser", True),
    "alert": ("Alert", True),
    "critters": ("Critter", True),
    "catalog": ("CatalogEntry", True),
    "actions": ("ActionOutcome", True),
    "schedules": ("Schedule", True),
    "reports": ("DailyReport", True),
}
ERROR = schema_validator("Error")


def call(url: str, method: str, path: str, body: Any = None, raw: bytes | None = None) -> tuple[int, Any, dict]:
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    # a JSON body says so (both servers refuse a POST without Content-Type: application/json)
    headers = {"Content-Type": "application/json"} if data is not None else {}
    req = urllib.request.Request(url + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.loads(r.read()), {k.lower(): v for k, v in r.headers.items()}
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read()), {k.lower(): v for k, v in e.headers.items()}


def check_error(res: tuple[int, Any, dict], want_status: int, want_error: str, field: str | None = None) -> None:
    status, payload = res[0], res[1]
    assert (status, payload.get("error")) == (want_status, want_error), payload
    ERROR.validate(payload)
    assert payload["details"]
    if field:
        assert payload.get("field") == field, payload


def world(url: str) -> tuple[int, int]:
    game = call(url, "GET", "/api/state/game")[1]
    return game["worldWidth"], game["worldHeight"]


def test_catalog_is_the_games_buildings(mod_url: str) -> None:
    """/api/state/catalog lists every building id the mod accepts, with its footprint (the mod: from
    the game's BuildingDefs; the simulator: its corrected copy)."""
    catalog = call(mod_url, "GET", "/api/state/catalog?limit=1000")[1]
    by_id = {e["id"]: e for e in catalog}
    assert len(by_id) == len(catalog) > 0
    assert (by_id["Headquarters"]["width"], by_id["Headquarters"]["height"]) == (4, 4)
    assert (by_id["MicrobeMusher"]["width"], by_id["MicrobeMusher"]["height"]) == (2, 3)
    assert all(e["researched"] for e in catalog if e["tech"] is None)


def test_contract_lists_every_seed_endpoint() -> None:
    paths = set(CONTRACT["paths"])
    assert {"/health"} | {f"/api/state/{s}" for s in STATE_SCHEMAS} <= paths
    assert {
        f"/api/action/{a}" for a in ("dig", "build", "deconstruct", "prioritize", "research", "schedule", "wardrobe")
    } <= paths
    assert CONTRACT["servers"][0]["url"] == "http://127.0.0.1:23876"


def test_health(mod_url: str) -> None:
    status, body, _ = call(mod_url, "GET", "/health")
    assert status == 200 and body["status"] == "ok"
    schema_validator("Health").validate(body)


@pytest.mark.parametrize("what", sorted(STATE_SCHEMAS))
def test_state_shapes(mod_url: str, what: str) -> None:
    name, is_list = STATE_SCHEMAS[what]
    status, body, headers = call(mod_url, "GET", f"/api/state/{what}")
    assert status == 200
    schema_validator(name, is_list).validate(body)
    if is_list:
        assert int(headers["x-total-count"]) == len(body)


def test_seed_fields(mod_url: str) -> None:
    game = call(mod_url, "GET", "/api/state/game")[1]
    assert {"cycle", "duplicantCount", "worldName", "worldSize"} <= set(game)
    dupes = call(mod_url, "GET", "/api/state/duplicants")[1]
    assert len(dupes) == game["duplicantCount"] > 0
    assert set(dupes[0]) == {"name", "stress", "calories", "stamina", "oxygen", "diseases", "skillLevels"}
    assert any(r["tag"] == "Oxygen" for r in call(mod_url, "GET", "/api/state/resources")[1])


def test_pagination(mod_url: str) -> None:
    full = call(mod_url, "GET", "/api/state/resources")[1]
    assert len(full) > 2
    status, page, headers = call(mod_url, "GET", "/api/state/resources?offset=1&limit=1")
    assert status == 200 and page == full[1:2]
    assert headers["x-next-offset"] == "2" and headers["x-total-count"] == str(len(full))
    last = call(mod_url, "GET", f"/api/state/resources?offset={len(full) - 1}&limit=5")
    assert last[1] == full[-1:] and "x-next-offset" not in last[2]
    assert call(mod_url, "GET", "/api/state/resources?offset=999")[1] == []
    for q, field in (("limit=0", "limit"), ("limit=1001", "limit"), ("offset=-1", "offset"), ("limit=abc", "limit")):
        check_error(call(mod_url, "GET", f"/api/state/resources?{q}"), 400, "invalid_request", field)


def test_map_extension(mod_url: str) -> None:
    w, h = world(mod_url)
    status, m, _ = call(mod_url, "GET", "/api/state/map?x=0&y=0&width=8&height=4")
    assert status == 200
    schema_validator("Map").validate(m)
    assert len(m["rows"]) == 4 and all(len(r) == 8 for r in m["rows"]) and m["rows"][0][0] == "N"
    check_error(call(mod_url, "GET", f"/api/state/map?x={w - 2}&y=0&width=8&height=4"), 400, "invalid_request", "x")
    check_error(call(mod_url, "GET", "/api/state/map?x=0&y=0&width=65&height=4"), 400, "invalid_request", "width")
    check_error(call(mod_url, "GET", "/api/state/map?x=0&y=0&width=4"), 400, "invalid_request", "height")


def test_unknown_paths_and_methods(mod_url: str) -> None:
    check_error(call(mod_url, "GET", "/api/state/nope"), 404, "not_found")
    check_error(call(mod_url, "GET", "/nope"), 404, "not_found")
    check_error(call(mod_url, "POST", "/api/action/fly", {}), 404, "not_found")
    check_error(call(mod_url, "POST", "/api/state/game", {}), 405, "invalid_request")
    check_error(call(mod_url, "GET", "/api/action/dig"), 405, "invalid_request")


VALID = {
    "dig": ({"x": 10, "y": 5, "width": 8, "height": 6}, "DigResponse"),
    "build": ({"buildingId": "ManualGenerator", "x": 10, "y": 5, "rotation": None}, "BuildResponse"),
    "deconstruct": ({"x": 10, "y": 5}, "DeconstructResponse"),
    "prioritize": ({"x": 10, "y": 5, "width": 2, "height": 2, "priority": 7}, "PrioritizeResponse"),
    "research": ({"techId": "FarmingTech"}, "ResearchResponse"),
    "utility": ({"kind": "wire", "path": [[10, 5], [11, 5], [11, 6]]}, "UtilityResponse"),
    "speed": ({"speed": 2}, "SpeedResponse"),
    "cancel": ({"x": 10, "y": 5, "width": 2, "height": 2}, "CancelResponse"),
}


@pytest.mark.parametrize("action", sorted(VALID))
def test_actions_answer_queued(mod_url: str, action: str) -> None:
    body, schema = VALID[action]
    status, out, _ = call(mod_url, "POST", f"/api/action/{action}", body)
    assert status == 200 and out["result"] == f"{action}_queued", out
    schema_validator(schema).validate(out)
    for k, v in body.items():
        if k not in ("rotation", "path"):
            assert out[k] == v


def test_seed_examples_verbatim(mod_url: str) -> None:
    """The seed's answers, plus the extension actionId (the outcome's key in /api/state/actions)."""
    dig = call(mod_url, "POST", "/api/action/dig", {"x": 10, "y": 5, "width": 8, "height": 6})[1]
    assert isinstance(dig.pop("actionId"), int)
    assert dig == {"result": "dig_queued", "x": 10, "y": 5, "width": 8, "height": 6}
    build = call(
        mod_url, "POST", "/api/action/build", {"buildingId": "Electrolyzer", "x": 10, "y": 5, "rotation": None}
    )[1]
    assert build.pop("actionId") > 0
    assert build == {"result": "build_queued", "buildingId": "Electrolyzer", "x": 10, "y": 5}


def test_duplicant_actions(mod_url: str) -> None:
    name = call(mod_url, "GET", "/api/state/duplicants")[1][0]["name"]
    status, out, _ = call(
        mod_url, "POST", "/api/action/schedule", {"duplicant": name, "blocks": ["work"] * 20 + ["sleep"] * 4}
    )
    assert status == 200 and out.pop("actionId") > 0 and out == {"result": "schedule_queued", "duplicant": name}
    # the game cannot dress a duplicant (suits are put on at a suit dock): validated, then not_implemented
    check_error(
        call(mod_url, "POST", "/api/action/wardrobe", {"duplicant": name, "item": "AtmoSuit"}), 501, "not_implemented"
    )
    check_error(
        call(mod_url, "POST", "/api/action/wardrobe", {"duplicant": "Nobody", "item": "None"}),
        400,
        "invalid_request",
        "duplicant",
    )
    check_error(
        call(mod_url, "POST", "/api/action/wardrobe", {"duplicant": name, "item": "Hat"}),
        400,
        "invalid_request",
        "item",
    )
    check_error(
        call(mod_url, "POST", "/api/action/schedule", {"duplicant": name, "blocks": ["work"] * 23}),
        400,
        "invalid_request",
        "blocks",
    )
    check_error(
        call(mod_url, "POST", "/api/action/schedule", {"duplicant": name, "blocks": ["party"] * 24}),
        400,
        "invalid_request",
        "blocks",
    )


BAD = [
    ("dig", {"x": "10", "y": 5, "width": 8, "height": 6}, "invalid_request", "x"),
    ("dig", {"x": 1.5, "y": 5, "width": 8, "height": 6}, "invalid_request", "x"),
    ("dig", {"x": 1.0, "y": 5, "width": 8, "height": 6}, "invalid_request", "x"),
    ("dig", {"x": True, "y": 5, "width": 8, "height": 6}, "invalid_request", "x"),
    ("dig", {"x": -1, "y": 5, "width": 8, "height": 6}, "invalid_request", "x"),
    ("dig", {"x": 1, "y": 5, "width": 0, "height": 6}, "invalid_request", "width"),
    ("dig", {"x": 1, "y": 5, "width": 129, "height": 6}, "invalid_request", "width"),
    ("dig", {"x": 1, "y": 5, "width": 8}, "invalid_request", "height"),
    ("dig", {"x": 1, "y": 5, "width": 8, "height": 6, "z": 1}, "invalid_request", "z"),
    ("dig", {"x": "W-4", "y": 5, "width": 8, "height": 6}, "invalid_request", "x"),  # out of the map
    ("dig", {"x": 1, "y": "H-1", "width": 1, "height": 2}, "invalid_request", "y"),  # out of the map
    ("build", {"buildingId": "NoSuchBuilding", "x": 10, "y": 5}, "unknown_building", None),
    ("build", {"buildingId": "", "x": 10, "y": 5}, "invalid_request", "buildingId"),
    ("build", {"buildingId": 7, "x": 10, "y": 5}, "invalid_request", "buildingId"),
    ("build", {"x": 10, "y": 5}, "invalid_request", "buildingId"),
    ("build", {"buildingId": "Tile", "x": "W", "y": 5}, "invalid_request", "x"),
    ("build", {"buildingId": "Tile", "x": 10, "y": 5, "rotation": 45}, "invalid_request", "rotation"),
    ("build", {"buildingId": "Tile", "x": 10, "y": 5, "rotation": "90"}, "invalid_request", "rotation"),
    ("research", {"techId": "Teleportation"}, "unknown_tech", None),
    ("research", {"techId": None}, "invalid_request", "techId"),
    ("prioritize", {"x": 1, "y": 1, "priority": 10}, "invalid_request", "priority"),
    ("prioritize", {"x": 1, "y": 1}, "invalid_request", "priority"),
    ("deconstruct", {"x": 1, "y": 1, "width": "2"}, "invalid_request", "width"),
    ("dig", {"x": 1, "y": 5, "width": 1, "height": 1, "priority": 0}, "invalid_request", "priority"),
    ("build", {"buildingId": "Tile", "x": 10, "y": 5, "priority": 10}, "invalid_request", "priority"),
    ("deconstruct", {"x": 1, "y": 1, "priority": "high"}, "invalid_request", "priority"),
    ("utility", {"kind": "wire", "path": [[1, 1]], "priority": 5.5}, "invalid_request", "priority"),
    ("cancel", {"x": 1, "y": 1, "width": 0}, "invalid_request", "width"),
    ("cancel", {"y": 1}, "invalid_request", "x"),
    ("speed", {}, "invalid_request", "paused"),
    ("speed", {"paused": "yes"}, "invalid_request", "paused"),
    ("speed", {"paused": 1}, "invalid_request", "paused"),
    ("speed", {"speed": 4}, "invalid_request", "speed"),
    ("speed", {"speed": 0}, "invalid_request", "speed"),
    ("speed", {"speed": 2.0}, "invalid_request", "speed"),
    ("speed", {"paused": True, "fast": True}, "invalid_request", "fast"),
    ("utility", {"kind": "steam", "path": [[1, 1]]}, "invalid_request", "kind"),
    ("utility", {"path": [[1, 1]]}, "invalid_request", "kind"),
    ("utility", {"kind": "wire"}, "invalid_request", "path"),
    ("utility", {"kind": "wire", "path": []}, "invalid_request", "path"),
    ("utility", {"kind": "wire", "path": [[1, 1], [3, 1]]}, "invalid_request", "path"),  # not neighbours
    ("utility", {"kind": "wire", "path": [[1, 1], [2, 2]]}, "invalid_request", "path"),  # diagonal
    ("utility", {"kind": "wire", "path": [[1, 1], [2, 1], [1, 1]]}, "invalid_request", "path"),  # twice
    ("utility", {"kind": "wire", "path": [[1, 1.0]]}, "invalid_request", "path"),
    ("utility", {"kind": "wire", "path": [[1, 1, 1]]}, "invalid_request", "path"),
    ("utility", {"kind": "wire", "path": [["W", 1]]}, "invalid_request", "path"),  # out of the map
]


@pytest.mark.parametrize("action,body,error,field", BAD)
def test_bad_input(mod_url: str, action: str, body: dict, error: str, field: str | None) -> None:
    w, h = world(mod_url)

    def fill(v: Any) -> Any:
        return (
            [fill(x) for x in v]
            if isinstance(v, list)
            else w - 4
            if v == "W-4"
            else w
            if v == "W"
            else h - 1
            if v == "H-1"
            else v
        )

    body = {k: fill(v) for k, v in body.items()}
    res = call(mod_url, "POST", f"/api/action/{action}", body)
    check_error(res, 400, error, field)
    out = res[1]
    if error == "unknown_building":
        assert out["buildingId"] == "NoSuchBuilding"
    if error == "unknown_tech":
        assert out["techId"] == "Teleportation"


@pytest.mark.parametrize("raw", [b"", b"{", b"[1,2]", b'"text"', b'{"x": 01}', b"\xff\xfe"])
def test_unparseable_bodies(mod_url: str, raw: bytes) -> None:
    check_error(call(mod_url, "POST", "/api/action/dig", raw=raw), 400, "invalid_request")


def test_body_too_large(mod_url: str) -> None:
    raw = json.dumps({"x": 1, "y": 1, "width": 1, "height": 1, "pad": "a" * 70_000}).encode()
    check_error(call(mod_url, "POST", "/api/action/dig", raw=raw), 413, "invalid_request")


def test_a_body_that_never_comes_is_dropped(mod_url: str) -> None:
    """A client that announces a body and sends none holds its connection only for the receive
    timeout (5 s), not a request thread forever."""
    host, port = mod_url.split("//", 1)[1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=15) as s:
        s.sendall(
            b"POST /api/action/dig HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 50\r\n\r\n{"
        )
        started = time.monotonic()
        while s.recv(4096):  # whatever it answers, it closes the connection
            pass
        assert time.monotonic() - started < 10


def _until(check: Any, seconds: float = 5) -> Any:
    end = time.monotonic() + seconds
    while True:
        got = check()
        if got or time.monotonic() > end:
            return got
        time.sleep(0.02)


def test_every_order_takes_a_priority(mod_url: str) -> None:
    """dig, build, deconstruct and utility take a priority 1..9 (5 when absent, the game's default)
    and echo it when given; the seed's answers are unchanged without one."""
    for action, body in (
        ("dig", {"x": 10, "y": 5, "width": 1, "height": 1}),
        ("build", {"buildingId": "Tile", "x": 10, "y": 5}),
        ("deconstruct", {"x": 10, "y": 5}),
        ("utility", {"kind": "wire", "path": [[10, 5]]}),
    ):
        status, out, _ = call(mod_url, "POST", f"/api/action/{action}", {**body, "priority": 8})
        assert status == 200 and out["priority"] == 8, out
        assert "priority" not in call(mod_url, "POST", f"/api/action/{action}", body)[1]


def test_named_schedules(mod_url: str) -> None:
    """Schedules are shared by name, as in the game: a new named schedule, a duplicant moved onto it,
    and blocks set through that duplicant change the schedule for everyone on it."""

    def schedules() -> dict[str, dict]:
        return {x["name"]: x for x in call(mod_url, "GET", "/api/state/schedules")[1]}

    name = call(
        mod_url, "POST", "/api/action/schedule", {"schedule": "Night Shift", "blocks": ["sleep"] * 12 + ["work"] * 12}
    )
    assert name[0] == 200 and name[1]["schedule"] == "Night Shift"
    assert _until(lambda: "Night Shift" in schedules())
    dupe = call(mod_url, "GET", "/api/state/duplicants")[1][0]["name"]
    out = call(mod_url, "POST", "/api/action/schedule", {"duplicant": dupe, "schedule": "Night Shift"})[1]
    assert out["result"] == "schedule_queued" and out["duplicant"] == dupe
    assert _until(lambda: dupe in schedules()["Night Shift"]["duplicants"])
    assert all(dupe not in x["duplicants"] for n, x in schedules().items() if n != "Night Shift")
    call(mod_url, "POST", "/api/action/schedule", {"duplicant": dupe, "blocks": ["bathtime"] + ["work"] * 23})
    assert _until(lambda: schedules()["Night Shift"]["blocks"][0] == "bathtime")
    aid = call(mod_url, "POST", "/api/action/schedule", {"duplicant": dupe, "schedule": "Nowhere"})[1]["actionId"]
    out = _until(
        lambda: (
            (o := {o["id"]: o for o in call(mod_url, "GET", "/api/state/actions?limit=1000")[1]}[aid])["state"]
            != "queued"
            and o
        )
    )
    assert out["state"] == "refused" and out["reason"].startswith("unknown_schedule")
    for body in ({"duplicant": dupe}, {"schedule": "X"}, {"duplicant": dupe, "schedule": "X", "blocks": ["work"] * 24}):
        check_error(call(mod_url, "POST", "/api/action/schedule", body), 400, "invalid_request")


def test_pause_and_speed(mod_url: str) -> None:
    """The clock controls: paused and speed show in /game once the game thread applied them, and the
    game thread still applies actions while paused (Game.Update runs every frame)."""
    call(mod_url, "POST", "/api/action/speed", {"paused": True, "speed": 3})
    assert _until(lambda: (g := call(mod_url, "GET", "/api/state/game")[1])["paused"] and g["speed"] == 3)
    aid = call(mod_url, "POST", "/api/action/speed", {"paused": False, "speed": 1})[1]["actionId"]
    assert _until(lambda: not (g := call(mod_url, "GET", "/api/state/game")[1])["paused"] and g["speed"] == 1)
    assert {o["id"]: o for o in call(mod_url, "GET", "/api/state/actions?limit=1000")[1]}[aid]["state"] == "applied"


def test_action_outcomes(mod_url: str) -> None:
    """Every queued action has an id; /api/state/actions says what became of it: applied, or refused
    with the game's reason."""
    x, y = _open_cell(mod_url)
    ok = call(mod_url, "POST", "/api/action/build", {"buildingId": "Tile", "x": x, "y": y})[1]["actionId"]
    bad = call(mod_url, "POST", "/api/action/build", {"buildingId": "Tile", "x": 2, "y": 2})[1]["actionId"]  # rock
    assert bad > ok
    end = time.monotonic() + 5
    while True:
        status, outcomes, headers = call(mod_url, "GET", "/api/state/actions?limit=1000")
        by_id = {o["id"]: o for o in outcomes}
        if by_id[ok]["state"] != "queued" and by_id[bad]["state"] != "queued" or time.monotonic() > end:
            break
        time.sleep(0.02)
    assert status == 200 and int(headers["x-total-count"]) == len(outcomes)
    schema_validator("ActionOutcome", True).validate(outcomes)
    assert [o["id"] for o in outcomes] == sorted(o["id"] for o in outcomes)
    assert by_id[ok]["state"] == "applied" and by_id[ok]["action"] == "build" and "reason" not in by_id[ok]
    assert by_id[ok]["body"] == {"buildingId": "Tile", "x": x, "y": y}
    assert by_id[bad]["state"] == "refused" and by_id[bad]["reason"].startswith("invalid_location"), by_id[bad]


def _open_cell(url: str) -> tuple[int, int]:
    w, h = world(url)
    rows = call(url, "GET", f"/api/state/map?x=0&y=0&width={min(w, 64)}&height={min(h, 64)}")[1]["rows"]
    taken = set()
    for b in call(url, "GET", "/api/state/buildings")[1]:
        taken |= {(b["x"] + i, b["y"] + j) for i in range(b.get("width", 1)) for j in range(b.get("height", 1))}
    for y in range(len(rows) - 2, 0, -1):
        for x in range(1, len(rows[y]) - 1):
            if rows[y][x] == "." and (x, y) not in taken:
                return x, y
    raise AssertionError("no open cell")


def test_actions_run_on_the_game_thread(mod_url: str) -> None:
    x, y = _open_cell(mod_url)
    assert call(mod_url, "POST", "/api/action/build", {"buildingId": "Tile", "x": x, "y": y})[0] == 200
    end = time.monotonic() + 5
    while time.monotonic() < end:
        if any(
            b["id"] == "Tile" and (b["x"], b["y"]) == (x, y) for b in call(mod_url, "GET", "/api/state/buildings")[1]
        ):
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the queued build never reached the game")
    alerts = call(mod_url, "GET", "/api/state/alert")[1]
    assert not [a for a in alerts if a["type"] == "wrong_thread"], alerts


def test_parallel_reads_while_acting(mod_url: str) -> None:
    def one(i: int) -> int:
        if i % 4 == 0:
            return call(mod_url, "POST", "/api/action/prioritize", {"x": 1, "y": 1, "priority": 5})[0]
        return call(mod_url, "GET", "/api/state/buildings")[0]

    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(one, range(40))) == {200}


def test_loopback_only(mod_url: str) -> None:
    port = int(mod_url.rsplit(":", 1)[1])
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # no packet is sent: only picks the outward interface
            addr = s.getsockname()[0]
    except OSError:
        pytest.skip("no non-loopback interface to try")
    if addr.startswith("127."):
        pytest.skip("no non-loopback interface to try")
    with socket.socket() as s:
        s.settimeout(1)
        assert s.connect_ex((addr, port)) != 0, f"the server answers on {addr}: it must bind 127.0.0.1 only"
