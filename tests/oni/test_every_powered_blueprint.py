"""Issue 28 deliver 4: every powered blueprint includes its wires and pipes and works on the
simulator — applied step by step (`oni blueprint apply`) with every tech researched, each of its
buildings that uses or makes power is built and operational; the same for the tech-free starters
(blueprints.STARTERS) that auto-repair builds (the simulator runs a building only
on a powered circuit and with its conduit ports connected)."""

from __future__ import annotations

import pytest
from oni_agent.blueprints import BLUEPRINTS, STARTERS, apply_step, layout
from oni_agent.catalog import BUILDINGS, TECHS
from oni_agent.client import ModClient

from tests.oni.test_sim_pipes_rooms_orders import SPOM_AT, _step

POWERED = sorted(
    n for n, bp in {**BLUEPRINTS, **STARTERS}.items() if any(BUILDINGS[b["id"]].power for b in bp["build"])
)


def test_the_powered_blueprints_are_known() -> None:
    assert {"spom", "power", "cooling", "oxygen", "kitchen", "generator"} <= set(POWERED), POWERED


@pytest.mark.parametrize("name", POWERED)
def test_every_powered_blueprint_runs_on_the_simulator(manual_sim, name: str) -> None:
    url = f"http://127.0.0.1:{manual_sim.port}"
    c = ModClient(url)
    manual_sim.colony.completed += [t for t in TECHS if t not in manual_sim.colony.completed]
    phases = []
    for _ in range(30):
        r = apply_step(c, name, *SPOM_AT)
        phases.append(r["phase"])
        assert r["phase"] != "refused", r
        if r["phase"] == "done":
            break
        _step(url, 60)
    assert phases[-1] == "done", phases
    _step(url, 120)
    powered = {b["id"] for b in layout(name)["build"] if BUILDINGS[b["id"]].power}
    got = [b for b in c.state_all("buildings") if b["id"] in powered]
    assert {b["id"] for b in got} == powered, got
    idle = [(b["id"], b["x"], b["y"], b.get("status")) for b in got if b["underConstruction"] or not b["isOperational"]]
    power = c.state("game")["power"]
    print(f"{name}: phases {phases}; power {power}")
    assert not idle, idle
    # its generators cover its consumers (not a battery draining slowly), and no one is left unwired
    assert power["circuits"] and all(
        i["generatedW"] >= i["neededW"] and i["unpowered"] == 0 for i in power["circuits"]
    ), power
    assert not any(power["unconnected"].values()), power
