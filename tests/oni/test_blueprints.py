"""Blueprint data invariants and planning golden tests (against the simulator's seed-1 map, over
HTTP, no ticks). ONI_UPDATE_GOLDEN=1 rewrites tests/oni/golden/plans.json (review the diff)."""

from __future__ import annotations

import json
import os
import pathlib

import pytest
from oni_agent.blueprints import BLUEPRINTS, bounds, plan, world_view
from oni_agent.catalog import BUILDINGS, TECHS, footprint
from oni_agent.client import ModClient

GOLDEN = pathlib.Path(__file__).with_name("golden") / "plans.json"

CASES = {f"{name}@6,30": (name, 6, 30) for name in BLUEPRINTS}
CASES.update(
    {
        "bedroom@28,24 (occupied by the printing pod)": ("bedroom", 28, 24),
        "toilets@60,10 (outside the map)": ("toilets", 60, 10),
        "farm@0,5 (neutronium border in the dig area)": ("farm", 0, 5),
        "toilets@36,24 (half in the open cavity)": ("toilets", 36, 24),
        "cooling@34,24 (open cavity east of the pod, research missing)": ("cooling", 34, 24),
    }
)


@pytest.mark.parametrize("name", sorted(BLUEPRINTS))
def test_blueprint_data(name: str) -> None:
    """On an empty world of solid rock every blueprint plans cleanly: footprints inside the dig
    areas, no overlaps, a floor under every building, known ids and techs."""
    bp = BLUEPRINTS[name]
    x, y, w, h = bounds(bp)
    world = {
        "width": 100,
        "height": 100,
        "completed": list(TECHS),
        "buildings": [],
        "map": {"x": 0, "y": 0, "width": 100, "height": 100, "rows": ["#" * 100] * 100},
    }
    p = plan(name, 50, 50, world)
    assert p["ok"], p["problems"]
    dug = {(50 + dx + i, 50 + dy + j) for dx, dy, dw, dh in bp["dig"] for i in range(dw) for j in range(dh)}
    for b in bp["build"]:
        assert b["id"] in BUILDINGS
        assert set(footprint(b["id"], 50 + b["x"], 50 + b["y"])) <= dug, b
    assert [a["action"] for a in p["actions"]] == (
        ["dig"] * len(bp["dig"])
        + ["build"] * len(bp["build"])
        + ["utility"] * len(bp.get("utilities", []))
        + ["plant"] * len(bp.get("plant", []))
    )
    plots = {(b["x"], b["y"]) for b in bp["build"] if BUILDINGS[b["id"]].plot}
    assert all((pl["x"], pl["y"]) in plots for pl in bp.get("plant", [])), "a seed outside a plot"
    for u in bp.get("utilities", []):  # wires lie inside the room
        assert {(50 + x, 50 + y) for x, y in u["path"]} <= dug, u


def test_planner_checks_the_map_and_research(manual_sim) -> None:
    client = ModClient(f"http://127.0.0.1:{manual_sim.port}")
    got = {case: plan(n, x, y, world_view(client, n, x, y)) for case, (n, x, y) in CASES.items()}
    if os.environ.get("ONI_UPDATE_GOLDEN"):
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    want = json.loads(GOLDEN.read_text())
    assert got == want
    kinds = {case: sorted({p["kind"] for p in r["problems"]}) for case, r in got.items()}
    assert "occupied" in kinds["bedroom@28,24 (occupied by the printing pod)"]  # and a liquid cell as floor
    assert kinds["toilets@60,10 (outside the map)"] == ["outside_map"]
    assert "undiggable" in kinds["farm@0,5 (neutronium border in the dig area)"]
    assert kinds["cooling@34,24 (open cavity east of the pod, research missing)"] == ["needs_research"]
    assert kinds["bedroom@6,30"] == [] and got["bedroom@6,30"]["ok"]


def test_planner_refuses_a_floor_of_liquid_or_gas() -> None:
    rows = ["#" * 20] * 5 + ["." * 20] * 15  # y 0..4 rock, above open: origin (2,10) floats
    world = {
        "width": 20,
        "height": 20,
        "completed": [],
        "buildings": [],
        "map": {"x": 0, "y": 0, "width": 20, "height": 20, "rows": rows},
    }
    p = plan("bedroom", 2, 10, world)
    assert {x["kind"] for x in p["problems"]} == {"no_floor"}
    assert [a["action"] for a in p["actions"]] == ["build"] * 5  # nothing solid to dig
    assert plan("bedroom", 2, 5, world)["ok"]  # standing on row 4


# Checked against the game's decompile (build U56-674504): <Id>Config.cs for the footprint,
# Database/Techs.cs for the tech whose list names the building (oni_agent.catalog's module doc).
GAME = {
    "MicrobeMusher": ((2, 3), None),
    "RanchStation": ((2, 3), "Ranching"),
    "Headquarters": ((4, 4), None),
    "FarmTile": ((1, 1), "FineDining"),
    "AlgaeHabitat": ((1, 2), "FarmingTech"),
    "PlanterBox": ((1, 1), "FarmingTech"),
    "RationBox": ((2, 2), "FarmingTech"),
    "WaterPurifier": ((4, 3), "Distillation"),
    "HydrogenGenerator": ((4, 3), "AdvancedPowerRegulation"),
    "LuxuryBed": ((4, 2), "Luxury"),
    "AirConditioner": ((2, 2), "HVAC"),
    "SpaceHeater": ((2, 2), "TemperatureModulation"),
    "Electrolyzer": ((2, 2), "ImprovedOxygen"),
    "Generator": ((3, 3), "Combustion"),
    "GasVent": ((1, 1), "GasPiping"),
}


@pytest.mark.parametrize("building_id", sorted(GAME))
def test_catalog_sizes_and_techs_are_the_games(building_id: str) -> None:
    (w, h), tech = GAME[building_id]
    b = BUILDINGS[building_id]
    assert ((b.width, b.height), b.tech) == ((w, h), tech)
    assert tech is None or tech in TECHS


def test_planner_plans_against_the_live_catalog() -> None:
    """With the game's catalog (/api/state/catalog) the planner takes sizes, techs and availability
    from it, not from the local copy: a game where a Cot is 3 wide and needs a tech, and the Door is
    deprecated."""
    world = {
        "width": 100,
        "height": 100,
        "completed": [],
        "buildings": [],
        "map": {"x": 0, "y": 0, "width": 100, "height": 100, "rows": ["#" * 100] * 100},
        "catalog": {
            "Bed": {"id": "Bed", "width": 3, "height": 2, "tech": "Dreams", "available": True},
            "Door": {"id": "Door", "width": 1, "height": 2, "tech": None, "available": False},
        },
    }
    kinds = sorted({(p["kind"], p.get("techId", "")) for p in plan("bedroom", 50, 50, world)["problems"]})
    assert ("needs_research", "Dreams") in kinds and ("unavailable", "") in kinds and ("overlap", "") in kinds
    assert plan("bedroom", 50, 50, {**world, "catalog": {}})["ok"]  # the local copy: fine
