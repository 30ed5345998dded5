"""The simulator as the game (issue 28 Deliver 2 and 4): power per circuit (consumers served one after
the other, as CircuitManager.Sim200msLast), pipe flow (a building with a conduit port runs only when a
pipe joins it to a working source or a sink), ports that turn with the building, the rooms the
duplicants are in with their temperature, and what plant, mop, sweep and harvest do. The SPOM
blueprint runs with its wires and pipes and makes oxygen."""

from __future__ import annotations

from typing import Any

import pytest
from oni_agent import analysis
from oni_agent.blueprints import apply_step, plan, world_view
from oni_agent.client import ModClient

from .test_utilities import step as _step

SPOM_TECHS = ["PowerRegulation", "ImprovedOxygen", "AdvancedPowerRegulation", "GasPiping", "LiquidPiping"]
SPOM_AT = (10, 10)  # rock with a solid floor row under it (seed 1)


def _working(c: ModClient) -> dict[str, bool]:
    return {
        b["id"]: b["isOperational"]
        for b in c.state_all("buildings")
        if not b["underConstruction"] and b["id"] not in ("Wire", "GasConduit", "LiquidConduit")
    }


def _outcome(c: ModClient, aid: int) -> dict[str, Any]:
    return {o["id"]: o for o in c.state_all("actions")}[aid]


def _build_spom(url: str, c: ModClient, skip: str | None = None) -> list[str]:
    """The SPOM blueprint's steps (`oni blueprint apply`), or its actions without the utilities of a kind."""
    phases = []
    for _ in range(20):
        if skip is None:
            r = apply_step(c, "spom", *SPOM_AT)
        else:
            p = plan("spom", *SPOM_AT, world_view(c, "spom", *SPOM_AT))
            assert p["ok"], p
            digs = [a for a in p["actions"] if a["action"] == "dig"]
            todo = digs or [
                a
                for a in p["actions"]
                if a["action"] != "dig" and not (a["action"] == "utility" and a["body"]["kind"] == skip)
            ]
            for a in todo:
                c.action(a["action"], a["body"])
            r = {"phase": "digging" if digs else "done"}
        phases.append(r["phase"])
        assert r["phase"] != "refused", r
        if r["phase"] == "done":
            break
        _step(url, 60)
    _step(url, 60)  # constructions finish (30 ticks each, built together)
    return phases


def test_spom_makes_oxygen_with_its_wires_and_pipes(manual_sim) -> None:
    """Issue 28's measure: the SPOM blueprint applied step by step on the simulator, with its wires, its
    gas pipe (pump -> hydrogen generator) and its liquid pipe (pump -> electrolyzer): every building
    works, one circuit carries the load, and the colony's oxygen rises."""
    url = f"http://127.0.0.1:{manual_sim.port}"
    c = ModClient(url)
    manual_sim.colony.completed += SPOM_TECHS
    phases = _build_spom(url, c)
    assert phases[-1] == "done" and "building" in phases, phases
    _step(url, 10)
    before = c.state("game")
    _step(url, 300)
    after = c.state("game")
    w = _working(c)
    assert all(
        w[b] for b in ("Electrolyzer", "GasPump", "LiquidPump", "HydrogenGenerator", "ManualGenerator", "Battery")
    ), w
    (circuit,) = after["power"]["circuits"]
    assert (circuit["generators"], circuit["consumers"], circuit["batteries"], circuit["unpowered"]) == (2, 3, 1, 0)
    assert circuit["generatedW"] == 1200 and circuit["usedW"] == 600 <= circuit["maxSafeW"]
    made = c.state("reports")[-1]["oxygenKg"]["produced"]
    assert after["oxygen"]["breathableKg"] > before["oxygen"]["breathableKg"] and made > 0
    print(
        f"SPOM on the simulator at {SPOM_AT}: phases {phases}; working {w}; circuit {circuit}; oxygen "
        f"{before['oxygen']['breathableKg']:.1f} -> {after['oxygen']['breathableKg']:.1f} kg in 300 s "
        f"({made:.1f} kg made this cycle)"
    )


@pytest.mark.parametrize(
    "skip,dead,running,watts",
    [
        # the gas pump has no pipe to a taker, the generator none from a source; the rest runs on 400 W
        ("gas", ("HydrogenGenerator", "GasPump"), ("LiquidPump", "Electrolyzer"), 400),
        # no water reaches the electrolyzer: no hydrogen, the generator starves too; nothing takes the pump's water
        ("liquid", ("Electrolyzer", "LiquidPump", "HydrogenGenerator"), (), 400),
    ],
)
def test_a_missing_pipe_stops_what_it_joins(
    manual_sim, skip: str, dead: tuple[str, ...], running: tuple[str, ...], watts: float
) -> None:
    url = f"http://127.0.0.1:{manual_sim.port}"
    c = ModClient(url)
    manual_sim.colony.completed += SPOM_TECHS
    _build_spom(url, c, skip=skip)
    _step(url, 120)
    w = _working(c)
    assert not any(w[b] for b in dead) and all(w[b] for b in running), w
    assert c.state("game")["power"]["circuits"][0]["generatedW"] == watts
    if skip == "liquid":
        assert c.state("reports")[-1]["oxygenKg"]["produced"] == 0


def test_consumers_are_served_until_the_circuit_runs_out(manual_sim) -> None:
    """400 W for four 120 W diffusers: three run, the fourth is unpowered (and the analysis says so)."""
    url = f"http://127.0.0.1:{manual_sim.port}"
    c = ModClient(url)
    c.action("build", {"buildingId": "ManualGenerator", "x": 24, "y": 24})
    for x in (26, 27, 28, 29):
        c.action("build", {"buildingId": "MineralDeoxidizer", "x": x, "y": 24})
    c.action("utility", {"kind": "wire", "path": [[x, 24] for x in range(24, 30)]})
    c.action("build", {"buildingId": "ResearchCenter", "x": 36, "y": 24})  # no wire on its port (36, 24)
    _step(url, 60)
    power = c.state("game")["power"]
    (circuit,) = power["circuits"]
    assert (circuit["consumers"], circuit["unpowered"], circuit["usedW"], circuit["neededW"]) == (4, 1, 360, 480)
    assert power["unconnected"] == {"generators": 0, "consumers": 1, "batteries": 0}
    found = {f["metric"]: f for f in analysis.analyze(analysis.fetch_view(c))["findings"]}
    assert found["unpowered_consumers"]["level"] == "warning" and found["unpowered_consumers"]["value"] == 1
    assert found["unconnected_consumers"]["level"] == "warning"


def test_a_flipped_building_has_its_port_where_the_game_puts_it(manual_sim) -> None:
    """A thermo regulator mirrored (FlipH) has its power input at its left cell (AirConditionerConfig:
    PowerInputOffset (1, 0), turned by Rotatable.GetRotatedCellOffset): a wire on the unflipped port
    leaves it unconnected."""
    url = f"http://127.0.0.1:{manual_sim.port}"
    c = ModClient(url)
    manual_sim.colony.completed += ["HVAC", "TemperatureModulation", "GasPiping", "Combustion", "PowerRegulation"]
    c.action("build", {"buildingId": "AirConditioner", "x": 24, "y": 24, "flip": True})
    c.action("utility", {"kind": "wire", "path": [[25, 24], [26, 24]]})
    _step(url, 40)
    assert c.state("game")["power"]["unconnected"]["consumers"] == 1
    c.action("utility", {"kind": "wire", "path": [[24, 24], [25, 24]]})
    _step(url, 40)
    power = c.state("game")["power"]
    assert power["unconnected"]["consumers"] == 0 and power["circuits"][0]["consumers"] == 1


def test_the_room_the_duplicants_are_in_has_its_temperature(manual_sim) -> None:
    """The starting cavity (16 x 6 cells, and the liquid cell (29, 23) in its floor: a liquid is no wall,
    RoomProber.CavityFloodFiller) is a room (at most 128 cells); the heat of its working buildings
    warms it; dug out past 128 cells it is no room any more."""
    url = f"http://127.0.0.1:{manual_sim.port}"
    c = ModClient(url)
    (room,) = c.state("game")["temperature"]["rooms"]
    assert (room["x"], room["y"], room["width"], room["height"], room["cells"]) == (24, 23, 16, 7, 97)
    assert room["temperature"] == 24.0 and room["duplicants"] == 3
    c.action("build", {"buildingId": "ManualGenerator", "x": 24, "y": 24})
    c.action("build", {"buildingId": "Battery", "x": 26, "y": 24})
    c.action("utility", {"kind": "wire", "path": [[24, 24], [25, 24], [26, 24]]})
    _step(url, 600)
    (room,) = c.state("game")["temperature"]["rooms"]
    assert room["temperature"] > 24.3, room  # a manual generator (1 kDTU/s in the simulator) in 97 cells
    c.action("dig", {"x": 24, "y": 30, "width": 16, "height": 3})  # 48 more cells: 145 > 128
    _step(url, 600)
    assert c.state("game")["temperature"]["rooms"] == []


def test_sweep_takes_the_debris_of_a_dig(manual_sim) -> None:
    url = f"http://127.0.0.1:{manual_sim.port}"
    c = ModClient(url)
    col = manual_sim.colony
    aid = c.action("sweep", {"x": 24, "y": 24, "width": 4})["actionId"]
    _step(url, 1)
    assert _outcome(c, aid)["reason"].startswith("nothing_there")
    c.action("dig", {"x": 40, "y": 24, "width": 2, "height": 1})
    _step(url, 30)
    assert col.debris == {(40, 24): 50.0, (41, 24): 50.0}
    aid = c.action("sweep", {"x": 40, "y": 24, "width": 2})["actionId"]
    _step(url, 30)
    assert _outcome(c, aid)["state"] == "applied" and col.debris == {}


def test_mop_takes_a_puddle_on_a_floor_only(manual_sim) -> None:
    """MopTool: a liquid cell with a solid cell under it (and at most 150 kg); the liquid is bottled."""
    url = f"http://127.0.0.1:{manual_sim.port}"
    c = ModClient(url)
    col = manual_sim.colony
    col.cells[24][25] = "~"  # on the floor row (y 23 is rock)
    col.cells[26][27] = "~"  # in the air: nothing solid under it
    water = col.resources["Water"]
    aid = c.action("mop", {"x": 27, "y": 26})["actionId"]
    _step(url, 1)
    assert _outcome(c, aid)["reason"].startswith("nothing_there")
    aid = c.action("mop", {"x": 24, "y": 24, "width": 4, "height": 3, "priority": 9})["actionId"]
    _step(url, 10)
    assert _outcome(c, aid)["state"] == "applied"
    assert col.cells[24][25] == "." and col.cells[26][27] == "~" and col.resources["Water"] > water


def test_plant_a_seed_and_harvest_it(manual_sim) -> None:
    """A planter box takes a seed from stock (PlantablePlot.CreateOrder: a duplicant fetches it), the
    crop grows and is harvested when ripe (harvest when ready, the game's default); food comes from
    planted plots only."""
    url = f"http://127.0.0.1:{manual_sim.port}"
    c = ModClient(url)
    col = manual_sim.colony
    col.completed.append("FarmingTech")
    c.action("build", {"buildingId": "PlanterBox", "x": 24, "y": 24})
    _step(url, 40)
    assert not _working(c)["PlanterBox"]  # nothing planted: nothing grows
    bad = c.action("plant", {"x": 24, "y": 24, "seed": "GoldSeed"})["actionId"]
    none = c.action("plant", {"x": 25, "y": 24, "seed": "MushroomSeed"})["actionId"]
    ok = c.action("plant", {"x": 24, "y": 24, "seed": "BasicSingleHarvestPlantSeed"})["actionId"]
    again = c.action("plant", {"x": 24, "y": 24, "seed": "BasicSingleHarvestPlantSeed"})["actionId"]
    _step(url, 10)
    assert _outcome(c, bad)["reason"].startswith("unknown_seed")
    assert _outcome(c, none)["reason"].startswith("nothing_there")
    assert _outcome(c, ok)["state"] == "applied" and _outcome(c, again)["reason"].startswith("occupied")
    assert col.resources["BasicSingleHarvestPlantSeed"] == 3.0
    assert _working(c)["PlanterBox"]
    aid = c.action("harvest", {"x": 24, "y": 24})["actionId"]
    _step(url, 1800)
    assert _outcome(c, aid)["state"] == "applied"
    assert sum(r["kcal"]["produced"] for r in c.state_all("reports")) >= 600.0


def test_analysis_reads_circuits_and_rooms() -> None:
    """An overloaded circuit (W used above its wires' safe W) is critical, a hot occupied room too."""
    game = {
        "power": {
            "produced": 2000,
            "consumed": 1500,
            "stored": 0,
            "capacity": 0,
            "circuits": [
                {
                    "id": 3,
                    "generatedW": 2000,
                    "usedW": 1500,
                    "neededW": 1500,
                    "storedJ": 0,
                    "capacityJ": 0,
                    "maxSafeW": 1000,
                    "generators": 2,
                    "consumers": 5,
                    "batteries": 0,
                    "unpowered": 0,
                }
            ],
            "unconnected": {"generators": 0, "consumers": 0, "batteries": 0},
        },
        "temperature": {
            "average": 26,
            "max": 27,
            "rooms": [
                {
                    "room": "Bedroom",
                    "x": 3,
                    "y": 4,
                    "width": 8,
                    "height": 3,
                    "cells": 24,
                    "temperature": 41.5,
                    "duplicants": 2,
                }
            ],
        },
    }
    found = {f["metric"]: f for f in analysis.analyze({"game": game})["findings"]}
    assert found["circuit_load"]["level"] == "critical" and found["circuit_load"]["value"] == 1.5
    assert found["room_temperature_c"]["level"] == "critical" and "Bedroom" in found["room_temperature_c"]["message"]
    dead = {
        **game["power"],
        "circuits": [{**game["power"]["circuits"][0], "generatedW": 0, "usedW": 0, "unpowered": 5}],
    }
    found = {f["metric"]: f for f in analysis.analyze({"game": {"power": dead}})["findings"]}
    assert found["unpowered_consumers"]["level"] == "critical"


def test_the_farm_blueprint_plants_its_tiles(manual_sim) -> None:
    """`farm`: dug, built, then a seed ordered into each farm tile once (phase planting); the 4
    mealwood seeds in stock go into 4 tiles, the other orders wait for seeds; planted tiles grow."""
    url = f"http://127.0.0.1:{manual_sim.port}"
    c = ModClient(url)
    manual_sim.colony.completed += ["FarmingTech", "FineDining"]
    phases = []
    for _ in range(20):
        r = apply_step(c, "farm", 6, 30)
        phases.append(r["phase"])
        assert r["phase"] != "refused", r
        if r["phase"] == "done":
            break
        _step(url, 60)
    assert phases[0] == "digging" and "building" in phases and phases.count("planting") == 1, phases
    plants = [o for o in c.state_all("actions") if o["action"] == "plant"]
    assert len(plants) == 6 and all(o["state"] == "applied" for o in plants)
    tiles = [b for b in c.state_all("buildings") if b["id"] == "FarmTile"]
    assert (
        sum(b["isOperational"] for b in tiles) == 4 and manual_sim.colony.resources["BasicSingleHarvestPlantSeed"] == 0
    )


def test_a_wall_of_tiles_splits_the_room(manual_sim) -> None:
    """Built tiles are walls (RoomProber: a solid cell): a column of them cuts the starting cavity in two,
    and the duplicants' room is the part the printing pod stands in."""
    url = f"http://127.0.0.1:{manual_sim.port}"
    c = ModClient(url)
    for y in range(24, 30):
        c.action("build", {"buildingId": "Tile", "x": 28, "y": y})
    _step(url, 60)
    (room,) = c.state("game")["temperature"]["rooms"]
    assert (room["x"], room["width"], room["cells"]) == (29, 11, 67), room  # x 29..39, 6 rows and the puddle (29, 23)


def test_a_turned_building_is_listed_and_taken_down_by_its_turned_cells(manual_sim) -> None:
    url = f"http://127.0.0.1:{manual_sim.port}"
    c = ModClient(url)
    c.action("build", {"buildingId": "Door", "x": 24, "y": 24, "rotation": 90})
    _step(url, 40)
    (door,) = [b for b in c.state_all("buildings") if b["id"] == "Door"]
    assert (door["x"], door["y"], door["width"], door["height"]) == (24, 24, 2, 1)
    c.action("deconstruct", {"x": 25, "y": 24})  # its second cell, which the unturned door would not cover
    _step(url, 1)
    assert not [b for b in c.state_all("buildings") if b["id"] == "Door"]
