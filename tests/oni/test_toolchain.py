"""The oni-agent toolchain end to end against the simulator over HTTP: config.json, the `oni` CLI
(status, analyze, build, dig, research, blueprint, watch), exit codes, and the analysis rules."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import pytest
from oni_agent import analysis
from oni_agent.cli import main
from oni_agent.client import ModClient, ModError
from oni_agent.config import ConfigError, OniConfig, load


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.fixture()
def url(sim) -> str:
    return f"http://127.0.0.1:{sim.port}"


def test_config_json_as_the_seed_defines_it(tmp_path, monkeypatch) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"modHost": "127.0.0.1", "modPort": 24000, "timeout": 3}))
    assert load(cfg) == OniConfig("127.0.0.1", 24000, 3.0)
    assert load(cfg).base_url == "http://127.0.0.1:24000"
    monkeypatch.setenv("ONI_AGENT_CONFIG", str(cfg))
    assert load().modPort == 24000
    monkeypatch.delenv("ONI_AGENT_CONFIG")
    monkeypatch.chdir(tmp_path / "..")
    assert load() == OniConfig()  # defaults: 127.0.0.1:23876, 10 s
    for bad in ({"modHost": "0.0.0.0"}, {"modPort": "23876"}, {"modPort": 70000}, {"timeout": 0}, {"port": 1}, []):
        with pytest.raises(ConfigError):
            OniConfig.from_dict(bad)


def test_cli_config_errors_and_unreachable(tmp_path, capsys) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"modHost": "0.0.0.0"}))
    rc, _, err = run(capsys, "--config", str(cfg), "status")
    assert rc == 4 and "loopback" in err
    cfg.write_text(json.dumps({"modPort": 9, "timeout": 1}))  # nothing listens on port 9
    rc, _, err = run(capsys, "--config", str(cfg), "status")
    assert rc == 3 and "unreachable" in err


def test_cli_status_analyze_and_actions(url, capsys) -> None:
    rc, out, _ = run(capsys, "--url", url, "--json", "status")
    data = json.loads(out)
    assert rc == 0 and data["game"]["worldName"] == "Terra" and len(data["duplicants"]) == 3
    rc, out, _ = run(capsys, "--url", url, "--json", "analyze")
    rep = json.loads(out)
    assert rc == 0 and {f["area"] for f in rep["findings"]} >= {"oxygen", "food", "power", "temperature", "water"}
    assert run(capsys, "--url", url, "dig", "10", "5", "8", "6")[:2] == (0, "dig_queued: 8x6 at (10,5)\n")
    assert run(capsys, "--url", url, "research", "FarmingTech")[:2] == (0, "research_queued: FarmingTech\n")
    rc, out, _ = run(capsys, "--url", url, "build", "Tile", "30", "28")
    assert (rc, out) == (0, "build_queued: Tile at (30,28)\n")


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["build", "NoSuchBuilding", "1", "1"], "unknown_building"),
        (["research", "Teleportation"], "unknown_tech"),
        (["dig", "60", "1", "8", "2"], "outside the map"),
        (["build", "Tile", "1", "4000"], "outside the map"),
    ],
)
def test_cli_bad_input_gets_the_mods_error(url, capsys, argv, needle) -> None:
    rc, _, err = run(capsys, "--url", url, *argv)
    assert rc == 2 and needle in err


def test_blueprint_apply_until_done(url, capsys) -> None:
    rc, out, _ = run(capsys, "--url", url, "blueprint", "plan", "toilets", "6", "30")
    assert rc == 0 and "dig" in out
    rc, out, _ = run(capsys, "--url", url, "blueprint", "apply", "toilets", "6", "30", "--wait", "20", "--poll", "0.05")
    assert (
        rc == 0
        and "toilets: digging" in out
        and "toilets: building" in out
        and out.rstrip().endswith("toilets: done - nothing left to do")
    )
    placed = {(b["id"], b["x"], b["y"]) for b in ModClient(url).state_all("buildings")}
    assert {("Outhouse", 6, 30), ("Outhouse", 8, 30), ("WashBasin", 10, 30), ("Door", 12, 30)} <= placed
    rc, out, _ = run(capsys, "--url", url, "blueprint", "apply", "spom", "20", "36")
    assert rc == 1 and "research ImprovedOxygen first" in out
    assert run(capsys, "blueprint", "show", "nope")[0] == 2


def test_watch_reports_refused_actions_and_changes(url, capsys) -> None:
    c = ModClient(url)
    aid = c.action("build", {"buildingId": "Bed", "x": 2, "y": 2})["actionId"]  # in solid rock: the game refuses it
    end = time.monotonic() + 5
    while c.state("actions")[-1]["state"] == "queued" and time.monotonic() < end:
        time.sleep(0.02)
    rc, out, _ = run(capsys, "--url", url, "--json", "watch", "--count", "2", "--interval", "0")
    events = [json.loads(line) for line in out.splitlines()]
    refused = [e for e in events if e["kind"] == "refused"]
    assert rc == 0 and len(refused) == 1 and refused[0]["id"] == aid  # reported once, not twice
    assert refused[0]["reason"].startswith("invalid_location")
    assert all(e["kind"] in ("alert", "change", "refused") for e in events)


def test_console_script(url) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "oni_agent.cli", "--url", url, "blueprint", "list"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 0 and "spom" in out.stdout and "bedroom" in out.stdout


def view(**kw: Any) -> dict[str, Any]:
    base = {
        "game": {
            "cycle": 3,
            "power": {"produced": 400, "consumed": 120, "stored": 5000, "capacity": 10000},
            "temperature": {"average": 24, "max": 30},
        },
        "resources": [
            {"tag": "Oxygen", "amount": 300},
            {"tag": "Food", "amount": 9000},
            {"tag": "Water", "amount": 5000},
        ],
        "duplicants": [{"name": "A", "oxygen": 100, "calories": 900_000}] * 3,
        "buildings": [
            {"id": "MineralDeoxidizer", "isOperational": True},
            {"id": "Battery", "isOperational": True},
            {"id": "Electrolyzer", "isOperational": True},
        ],
        "alert": [],
    }
    base.update(kw)
    return base


def levels(rep: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in rep["findings"]:
        if analysis.LEVELS.index(f["level"]) >= analysis.LEVELS.index(out.get(f["area"], "ok")):
            out[f["area"]] = f["level"]
    return out


def test_analysis_thresholds() -> None:
    assert analysis.analyze(view())["status"] == "ok"
    assert (
        levels(
            analysis.analyze(
                view(
                    resources=[
                        {"tag": "Oxygen", "amount": 12},
                        {"tag": "Food", "amount": 9000},
                        {"tag": "Water", "amount": 5000},
                    ]
                )
            )
        )["oxygen"]
        == "critical"
    )
    low_food = analysis.analyze(
        view(
            resources=[
                {"tag": "Oxygen", "amount": 300},
                {"tag": "Food", "amount": 6000},
                {"tag": "Water", "amount": 5000},
            ]
        )
    )
    f = next(x for x in low_food["findings"] if x["metric"] == "food_cycles")
    assert (f["level"], f["threshold"], f["value"]) == ("warning", 3.0, 2.0) and "MicrobeMusher" in f["recommendation"]
    deficit = analysis.analyze(
        view(
            game={
                "power": {"produced": 0, "consumed": 240, "stored": 1000, "capacity": 10000},
                "temperature": {"average": 40, "max": 30},
            }
        )
    )
    assert levels(deficit)["power"] == "critical" and levels(deficit)["temperature"] == "critical"
    dry = analysis.analyze(
        view(
            resources=[
                {"tag": "Oxygen", "amount": 300},
                {"tag": "Food", "amount": 9000},
                {"tag": "Water", "amount": 900},
            ]
        )
    )
    assert levels(dry)["water"] == "warning"  # 900 kg / 600 kg per cycle (one electrolyzer) = 1.5 cycles
    assert (
        levels(analysis.analyze(view(alert=[{"type": "x", "message": "y", "severity": "bad"}])))["alerts"] == "critical"
    )


def test_state_all_stops_at_a_next_offset_that_does_not_advance() -> None:
    class Stuck(ModClient):
        def request(self, method, path, body=None, query=None):  # noqa: ANN001, ANN202
            return [{"id": "x"}], {"X-Next-Offset": str(query["offset"])}

    with pytest.raises(ModError) as err:
        Stuck("http://127.0.0.1:1").state_all("buildings")
    assert err.value.error == "invalid_response" and "does not advance" in err.value.details
