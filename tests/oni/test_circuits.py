"""Wires and circuits on the simulator (issue 28 Deliver 4): a building that uses or makes power
works only with a built wire on its power port (the catalog's port, from the game's
Power{Input,Output}Offset), and a consumer only when its circuit covers its demand; a blueprint
applied with its wires runs."""

from __future__ import annotations

import json
import time
import urllib.request
from typing import Any

from oni_agent.blueprints import apply_step
from oni_agent.client import ModClient


def _post(url: str, path: str, body: dict[str, Any]) -> Any:
    req = urllib.request.Request(url + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.loads(r.read())


def _working(c: ModClient) -> dict[tuple[str, int, int], bool]:
    return {
        (b["id"], b["x"], b["y"]): b["isOperational"] for b in c.state_all("buildings") if not b["underConstruction"]
    }


def test_a_consumer_runs_only_on_a_powered_circuit(manual_sim) -> None:
    url = f"http://127.0.0.1:{manual_sim.port}"
    c = ModClient(url)
    # in the starting cavity (x 24..39, y 24..29), left of the printing pod (x 30..33)
    for bid, x in (("ManualGenerator", 24), ("Battery", 26), ("MineralDeoxidizer", 27)):
        c.action("build", {"buildingId": bid, "x": x, "y": 24})
    _post(url, "/sim/step", {"ticks": 60})
    w = _working(c)
    assert w[("MineralDeoxidizer", 27, 24)] is False and w[("ManualGenerator", 24, 24)] is False  # no wire
    assert c.state("game")["power"]["produced"] == 0

    # a wire that misses the diffuser's port (27, 24): still dead
    c.action("utility", {"kind": "wire", "path": [[24, 24], [25, 24], [26, 24]]})
    _post(url, "/sim/step", {"ticks": 60})
    w = _working(c)
    assert w[("ManualGenerator", 24, 24)] and w[("Battery", 26, 24)] and not w[("MineralDeoxidizer", 27, 24)]

    # two wires side by side are not one circuit unless a path joins them
    c.action("utility", {"kind": "wire", "path": [[27, 24]]})
    _post(url, "/sim/step", {"ticks": 60})
    assert not _working(c)[("MineralDeoxidizer", 27, 24)]

    c.action("utility", {"kind": "wire", "path": [[26, 24], [27, 24]]})
    _post(url, "/sim/step", {"ticks": 60})
    assert _working(c)[("MineralDeoxidizer", 27, 24)]
    power = c.state("game")["power"]
    assert power["produced"] == 400 and power["consumed"] == 120 and power["stored"] > 0
    wires = [b for b in c.state_all("buildings") if b["id"] == "Wire"]
    assert sorted((b["x"], b["y"]) for b in wires) == [(24, 24), (25, 24), (26, 24), (27, 24)]  # one per cell


def test_a_wire_cannot_run_through_rock(manual_sim) -> None:
    url = f"http://127.0.0.1:{manual_sim.port}"
    c = ModClient(url)
    aid = c.action("utility", {"kind": "wire", "path": [[24, 23], [24, 24]]})["actionId"]  # (24, 23): the floor
    _post(url, "/sim/step", {"ticks": 1})
    out = {o["id"]: o for o in c.state("actions")}[aid]
    assert out["state"] == "refused" and out["reason"].startswith("invalid_location")
    aid = c.action("utility", {"kind": "gas", "path": [[24, 24]]})["actionId"]
    _post(url, "/sim/step", {"ticks": 1})
    assert {o["id"]: o for o in c.state("actions")}[aid]["reason"] == "not_researched: research GasPiping first"


def test_a_blueprint_applied_with_its_wires_runs(sim) -> None:
    """The measure of issue 28: the oxygen starter applied step by step (`oni blueprint apply`'s
    steps) on the ticking simulator: built, wired, powered, and oxygen rises."""
    url = f"http://127.0.0.1:{sim.port}"
    c = ModClient(url)
    phases = []
    end = time.monotonic() + 30
    while time.monotonic() < end:
        r = apply_step(c, "oxygen", 24, 24)
        phases.append(r["phase"])
        assert r["phase"] != "refused", r
        if r["phase"] == "done":
            break
        time.sleep(0.2)
    assert phases[-1] == "done", phases
    assert "building" in phases
    end = time.monotonic() + 10
    while not _working(c).get(("MineralDeoxidizer", 27, 24)) and time.monotonic() < end:
        time.sleep(0.1)
    w = _working(c)
    assert w[("ManualGenerator", 24, 24)] and w[("Battery", 26, 24)] and w[("MineralDeoxidizer", 27, 24)]
    o2 = c.state("game")["oxygen"]["breathableKg"]
    time.sleep(1.0)
    assert c.state("game")["oxygen"]["breathableKg"] > o2  # 0.5 kg/tick made, 0.3 breathed
    power = c.state("game")["power"]
    print(f"oxygen starter on the simulator: phases {phases}; power {power}")
