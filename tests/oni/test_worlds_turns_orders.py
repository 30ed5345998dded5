"""worldId, turned buildings and the plant/mop/sweep/harvest orders (issue 28 Deliver 2 and 4), over
real HTTP against the simulator AND the Mono-compiled mod core (the same rules on both; answers
checked against oni-mod/contract/openapi.json); what each order does, on the simulator."""

from __future__ import annotations

from typing import Any

import pytest
from oni_agent.catalog import BUILDINGS, footprint, port_cell

from .conftest import schema_validator
from .test_conformance import call, check_error

RESPONSES = {a: schema_validator(a.capitalize() + "Response") for a in ("plant", "mop", "sweep", "harvest")}


def test_every_world_answers_for_itself(mod_url: str) -> None:
    """GET /api/state/*?worldId= reads that world (Spaced Out: an asteroid or a rocket interior; its own
    size and map), the active one without it; an id the colony has not is 400 unknown_world."""
    game = call(mod_url, "GET", "/api/state/game")[1]
    worlds = game["worlds"]
    assert [w["id"] for w in worlds if w["active"]] == [game["worldId"]]
    for w in worlds:
        status, g, _ = call(mod_url, "GET", f"/api/state/game?worldId={w['id']}")
        assert (
            status == 200
            and g["worldId"] == w["id"]
            and (g["worldWidth"], g["worldHeight"]) == (w["width"], w["height"])
        )
        m = call(mod_url, "GET", f"/api/state/map?worldId={w['id']}&x=0&y=0&width={min(64, w['width'])}&height=1")
        assert m[0] == 200 and len(m[1]["rows"][0]) == min(64, w["width"])
        assert call(mod_url, "GET", f"/api/state/buildings?worldId={w['id']}")[0] == 200
    missing = max(w["id"] for w in worlds) + 1
    check_error(call(mod_url, "GET", f"/api/state/game?worldId={missing}"), 400, "unknown_world", "worldId")
    check_error(call(mod_url, "GET", "/api/state/buildings?worldId=x"), 400, "invalid_request", "worldId")
    assert call(mod_url, "GET", f"/api/state/actions?worldId={missing}")[0] == 200  # the mod's record: no world
    check_error(
        call(mod_url, "POST", "/api/action/dig", {"x": 1, "y": 1, "width": 1, "height": 1, "worldId": missing}),
        400,
        "unknown_world",
        "worldId",
    )
    check_error(
        call(mod_url, "POST", "/api/action/research", {"techId": "FarmingTech", "worldId": "0"}),
        400,
        "invalid_request",
        "worldId",
    )
    ok = call(mod_url, "POST", "/api/action/dig", {"x": 1, "y": 1, "width": 1, "height": 1, "worldId": game["worldId"]})
    assert ok[0] == 200 and ok[1]["worldId"] == game["worldId"], ok


def test_a_small_world_bounds_its_own_calls(mono_url: str) -> None:
    """The test host has a second world (16 x 12): its map and its orders are bounded by its own size,
    and a build there lands in it, not in the active world."""
    w1 = next(w for w in call(mono_url, "GET", "/api/state/game")[1]["worlds"] if not w["active"])
    check_error(
        call(mono_url, "GET", f"/api/state/map?worldId={w1['id']}&x=0&y=0&width={w1['width'] + 1}&height=1"),
        400,
        "invalid_request",
        "x",
    )
    check_error(
        call(
            mono_url,
            "POST",
            "/api/action/dig",
            {"x": w1["width"], "y": 1, "width": 1, "height": 1, "worldId": w1["id"]},
        ),
        400,
        "invalid_request",
        "x",
    )
    aid = call(mono_url, "POST", "/api/action/build", {"buildingId": "Bed", "x": 2, "y": 1, "worldId": w1["id"]})[1][
        "actionId"
    ]
    deadline = __import__("time").monotonic() + 5
    while __import__("time").monotonic() < deadline:
        out = {o["id"]: o for o in call(mono_url, "GET", "/api/state/actions?limit=1000")[1]}[aid]
        if out["state"] != "queued":
            break
    assert out["state"] == "applied", out
    there = call(mono_url, "GET", f"/api/state/buildings?worldId={w1['id']}")[1]
    assert [(b["id"], b["x"], b["y"]) for b in there] == [("Bed", 2, 1)]
    assert ("Bed", 2, 1) not in {(b["id"], b["x"], b["y"]) for b in call(mono_url, "GET", "/api/state/buildings")[1]}


def test_turns_are_the_ones_the_game_allows(mod_url: str) -> None:
    """rotation / flip map to the game's Orientation and only where the building's PermittedRotations
    allows it (Door R90, FlushToilet FlipH, Tile none); the catalog says which."""
    by_id = {e["id"]: e for e in call(mod_url, "GET", "/api/state/catalog?limit=1000")[1]}
    assert (by_id["Door"]["rotations"], by_id["FlushToilet"]["rotations"]) == ("R90", "FlipH")
    status, out, _ = call(
        mod_url, "POST", "/api/action/build", {"buildingId": "Door", "x": 24, "y": 26, "rotation": 90}
    )
    assert status == 200 and out["orientation"] == "R90", out
    status, out, _ = call(
        mod_url, "POST", "/api/action/build", {"buildingId": "FlushToilet", "x": 26, "y": 26, "flip": True}
    )
    assert status == 200 and out["orientation"] == "FlipH", out
    assert (
        "orientation"
        not in call(mod_url, "POST", "/api/action/build", {"buildingId": "Bed", "x": 26, "y": 28, "rotation": 0})[1]
    )
    check_error(
        call(mod_url, "POST", "/api/action/build", {"buildingId": "Tile", "x": 24, "y": 26, "rotation": 90}),
        400,
        "invalid_request",
        "rotation",
    )
    check_error(
        call(mod_url, "POST", "/api/action/build", {"buildingId": "Door", "x": 24, "y": 26, "flip": True}),
        400,
        "invalid_request",
        "flip",
    )
    check_error(
        call(
            mod_url,
            "POST",
            "/api/action/build",
            {"buildingId": "FlushToilet", "x": 24, "y": 26, "flip": True, "rotation": 180},
        ),
        400,
        "invalid_request",
        "rotation",
    )
    check_error(
        call(mod_url, "POST", "/api/action/build", {"buildingId": "Door", "x": 24, "y": 26, "flip": 1}),
        400,
        "invalid_request",
        "flip",
    )


@pytest.mark.parametrize(
    "action,body,field",
    [
        ("plant", {"x": 24, "y": 24}, "seed"),
        ("plant", {"x": 24, "y": 24, "seed": ""}, "seed"),
        ("plant", {"x": 24, "y": 24, "seed": "MushroomSeed", "priority": 10}, "priority"),
        ("plant", {"x": 9999, "y": 24, "seed": "MushroomSeed"}, "x"),
        ("mop", {"y": 24}, "x"),
        ("mop", {"x": 24, "y": 24, "width": 0}, "width"),
        ("sweep", {"x": 24, "y": 24, "height": 129}, "height"),
        ("sweep", {"x": 24, "y": 24, "colour": "red"}, "colour"),
        ("harvest", {"x": 24, "y": 24, "priority": "high"}, "priority"),
    ],
)
def test_orders_refuse_bad_input(mod_url: str, action: str, body: dict[str, Any], field: str) -> None:
    check_error(call(mod_url, "POST", f"/api/action/{action}", body), 400, "invalid_request", field)


@pytest.mark.parametrize(
    "action,body",
    [
        ("plant", {"x": 24, "y": 24, "seed": "BasicSingleHarvestPlantSeed", "priority": 7}),
        ("mop", {"x": 24, "y": 24, "width": 4, "height": 2}),
        ("sweep", {"x": 24, "y": 24, "width": 3}),
        ("harvest", {"x": 24, "y": 24, "priority": 2}),
    ],
)
def test_orders_are_queued_with_an_outcome(mod_url: str, action: str, body: dict[str, Any]) -> None:
    """Each order answers <order>_queued with an id; the game's answer (here: nothing to mop, sweep,
    harvest or plant in an empty cavity) is its outcome in /api/state/actions."""
    status, out, _ = call(mod_url, "POST", f"/api/action/{action}", body)
    assert status == 200 and out["result"] == f"{action}_queued", out
    RESPONSES[action].validate(out)
    if "priority" in body:
        assert out["priority"] == body["priority"]
    deadline = __import__("time").monotonic() + 5
    while __import__("time").monotonic() < deadline:
        o = {o["id"]: o for o in call(mod_url, "GET", "/api/state/actions?limit=1000")[1]}[out["actionId"]]
        if o["state"] != "queued":
            break
    assert o["state"] == "refused" and o["reason"].startswith("nothing_there"), o


# ---- the ports turn as the game turns them (BuildingDef.MarkArea + Rotatable.GetRotatedCellOffset) ----


def test_ports_and_cells_turn_about_the_anchor() -> None:
    # WaterPurifier 4 x 3: anchor 1 from the left; liquid in at (-1, 2), out at (2, 2) from the anchor
    assert port_cell("WaterPurifier", 0, 0, BUILDINGS["WaterPurifier"].conduit_in[1:]) == (0, 2)
    assert port_cell("WaterPurifier", 0, 0, BUILDINGS["WaterPurifier"].conduit_out[1:]) == (3, 2)
    # FlipH: offsets x -> -x; the footprint now spans -2..1 from the anchor, so from its bottom-left cell
    # the input is at 1 - (-2) = 3 and the output at -2 - (-2) = 0
    assert port_cell("WaterPurifier", 0, 0, BUILDINGS["WaterPurifier"].conduit_in[1:], "FlipH") == (3, 2)
    assert port_cell("WaterPurifier", 0, 0, BUILDINGS["WaterPurifier"].conduit_out[1:], "FlipH") == (0, 2)
    # R90: (x, y) -> (y, -x): a 1 x 2 door lies on its side, 2 x 1
    assert sorted(footprint("Door", 5, 5, "R90")) == [(5, 5), (6, 5)]
    # AirConditioner 2 x 2, power in at (1, 0): flipped, it is the left cell
    assert port_cell("AirConditioner", 10, 3, BUILDINGS["AirConditioner"].port, "FlipH") == (10, 3)
    assert port_cell("AirConditioner", 10, 3, BUILDINGS["AirConditioner"].port) == (11, 3)
