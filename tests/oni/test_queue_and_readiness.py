"""Behaviour the conformance suite cannot reach on a running game: /health without a loaded
colony (state and actions answer not_ready), and the bounded action queue (queue_full)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from .conftest import mono_host, schema_validator

ERROR = schema_validator("Error")
QUEUE_MAX = 256


def call(url: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    req = urllib.request.Request(
        url + path,
        data=json.dumps(body).encode() if body is not None else None,
        method=method,
        headers={"Content-Type": "application/json"} if body is not None else {},
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_mod_core_health_without_a_game(mono_host_exe) -> None:
    with mono_host(mono_host_exe, "--no-game") as url:
        assert call(url, "GET", "/health") == (200, {"status": "ok", "service": "oni-agent-mod (test host)"})
        for method, path, body in (
            ("GET", "/api/state/game", None),
            ("GET", "/api/state/buildings", None),
            ("POST", "/api/action/research", {"techId": "FarmingTech"}),
            ("POST", "/api/action/dig", {"x": 1, "y": 1, "width": 1, "height": 1}),
        ):
            status, out = call(url, method, path, body)
            assert (status, out["error"]) == (503, "not_ready"), (path, out)
            ERROR.validate(out)
        assert call(url, "GET", "/api/state/actions") == (200, [])  # the core's own record: no game needed


def _fill(url: str) -> None:
    for i in range(QUEUE_MAX):
        status, out = call(url, "POST", "/api/action/research", {"techId": "FarmingTech"})
        assert status == 200, (i, out)
    status, out = call(url, "POST", "/api/action/research", {"techId": "FarmingTech"})
    assert (status, out["error"]) == (503, "queue_full")
    ERROR.validate(out)


def test_mod_core_queue_is_bounded(mono_host_exe) -> None:
    with mono_host(mono_host_exe, "--tick-ms", "600000") as url:  # one tick, then the game stalls
        _fill(url)
        assert call(url, "GET", "/api/state/game")[0] == 200  # reads still answer


def test_simulator_queue_is_bounded_and_drains(manual_sim) -> None:
    url = f"http://127.0.0.1:{manual_sim.port}"
    _fill(url)
    assert {o["state"] for o in call(url, "GET", "/api/state/actions?limit=1000")[1]} == {"queued"}
    assert call(url, "POST", "/sim/step", {"ticks": 1})[0] == 200
    outcomes = call(url, "GET", "/api/state/actions?limit=1000")[1]
    assert len(outcomes) == QUEUE_MAX and {o["state"] for o in outcomes} == {"applied"}  # selected again: no harm
    assert call(url, "POST", "/api/action/research", {"techId": "FarmingTech"})[0] == 200


@pytest.mark.parametrize("ticks", [-1, "3", 100_001])
def test_simulator_step_refuses_bad_ticks(manual_sim, ticks) -> None:
    status, out = call(f"http://127.0.0.1:{manual_sim.port}", "POST", "/sim/step", {"ticks": ticks})
    assert (status, out["error"]) == (400, "invalid_request")


def test_simulator_outcomes_follow_the_game(manual_sim) -> None:
    """As the glue in the game: a build whose tech is not researched is refused (the build menu's
    check, before the placement); a tech with missing prerequisites is taken and its prerequisites
    researched first (Research.SetActiveResearch queues them)."""
    url = f"http://127.0.0.1:{manual_sim.port}"
    game = call(url, "GET", "/api/state/game")[1]
    x, y = game["worldWidth"] // 2 - 6, game["worldHeight"] // 2  # in the starting cavity, clear of the pod
    build = call(url, "POST", "/api/action/build", {"buildingId": "Electrolyzer", "x": x, "y": y})[1]["actionId"]
    research = call(url, "POST", "/api/action/research", {"techId": "Combustion"})[1]["actionId"]
    assert call(url, "POST", "/sim/step", {"ticks": 1})[0] == 200
    by_id = {o["id"]: o for o in call(url, "GET", "/api/state/actions")[1]}
    assert (
        by_id[build]["state"] == "refused" and by_id[build]["reason"] == "not_researched: research ImprovedOxygen first"
    )
    assert by_id[research]["state"] == "applied"
    assert call(url, "GET", "/api/state/research")[1]["current"] == "PowerRegulation"  # the prerequisite first


def test_simulator_pause_stops_time_not_actions(manual_sim) -> None:
    url = f"http://127.0.0.1:{manual_sim.port}"
    call(url, "POST", "/api/action/speed", {"paused": True})
    tick = call(url, "POST", "/sim/step", {"ticks": 1})[1]["tick"]
    assert call(url, "POST", "/sim/step", {"ticks": 50})[1]["tick"] == tick  # no time passes
    aid = call(url, "POST", "/api/action/research", {"techId": "FarmingTech"})[1]["actionId"]
    call(url, "POST", "/sim/step", {"ticks": 1})
    assert {o["id"]: o for o in call(url, "GET", "/api/state/actions")[1]}[aid]["state"] == "applied"
    call(url, "POST", "/api/action/speed", {"paused": False})
    assert call(url, "POST", "/sim/step", {"ticks": 5})[1]["tick"] > tick


def test_simulator_daily_reports(manual_sim) -> None:
    """As the game's end-of-day report: per cycle, oxygen, kcal and energy made and used; the newest
    is the cycle in progress."""
    url = f"http://127.0.0.1:{manual_sim.port}"
    call(url, "POST", "/sim/step", {"ticks": 601})
    reports = call(url, "GET", "/api/state/reports")[1]
    assert [(r["cycle"], r["current"]) for r in reports] == [(0, False), (1, True)]
    assert reports[0]["oxygenKg"]["consumed"] > 0  # breathed; nothing makes oxygen yet
    assert reports[0]["oxygenKg"]["produced"] == 0


def test_simulator_cancel_takes_back_orders_not_done(manual_sim) -> None:
    """As the game's cancel tool: digs not dug and constructions not finished in the area go away;
    finished buildings stay; nothing to cancel is refused nothing_there."""
    url = f"http://127.0.0.1:{manual_sim.port}"
    call(url, "POST", "/api/action/dig", {"x": 2, "y": 2, "width": 3, "height": 3})
    call(url, "POST", "/api/action/build", {"buildingId": "Tile", "x": 24, "y": 24})
    call(url, "POST", "/sim/step", {"ticks": 1})
    first = call(url, "POST", "/api/action/cancel", {"x": 2, "y": 2, "width": 3, "height": 3})[1]["actionId"]
    second = call(url, "POST", "/api/action/cancel", {"x": 24, "y": 24})[1]["actionId"]
    third = call(url, "POST", "/api/action/cancel", {"x": 24, "y": 24})[1]["actionId"]
    call(url, "POST", "/sim/step", {"ticks": 200})
    by_id = {o["id"]: o for o in call(url, "GET", "/api/state/actions")[1]}
    assert by_id[first]["state"] == by_id[second]["state"] == "applied"
    assert by_id[third]["reason"].startswith("nothing_there")
    assert call(url, "GET", "/api/state/map?x=2&y=2&width=3&height=3")[1]["rows"] == ["###"] * 3  # not dug
    assert not [b for b in call(url, "GET", "/api/state/buildings")[1] if b["id"] == "Tile"]
