"""Seed 004's utility scripts end to end against the simulator as a real process (`oni-sim`,
--tick 0: only POST /sim/step moves the game; GET /sim/queue shows what is queued):
`oni setup`, `oni auto-analyze` (trends), `oni auto-repair` (dry run, --apply, idempotent)."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from harness import free_port
from oni_agent.cli import main
from oni_agent.client import ModClient

from .conftest import wait_health


@pytest.fixture()
def sim_proc() -> Iterator[str]:
    with oni_sim("0") as url:
        yield url


@contextlib.contextmanager
def oni_sim(tick: str) -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "oni_sim", "--port", "0", "--tick", tick],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert "listening on" in line, proc.stderr.read()
        url = line.split("listening on ")[1].strip()
        wait_health(url)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=5)


def post(url: str, path: str, body: dict[str, Any]) -> Any:
    req = urllib.request.Request(url + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.loads(r.read())


def step(url: str, ticks: int) -> None:
    post(url, "/sim/step", {"ticks": ticks})


def pending(url: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(url + "/sim/queue", timeout=5) as r:
        return json.loads(r.read())["pending"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    try:
        return rc, json.loads(out.out), out.err
    except ValueError:
        return rc, out.out, out.err


def test_setup_writes_config_checks_health_and_refuses_bad_values(sim_proc, tmp_path, capsys) -> None:
    cfg = tmp_path / "config.json"
    dead = free_port()  # nothing listens there
    rc, out, _ = run(capsys, "--json", "--config", str(cfg), "setup", "--port", str(dead), "--timeout", "2")
    assert rc == 3 and out["written"] == "created" and out["health"]["ok"] is False
    assert out["health"]["error"] == "unreachable" and any("modPort" in n for n in out["next"])
    assert json.loads(cfg.read_text()) == {"modHost": "127.0.0.1", "modPort": dead, "timeout": 2}
    rc, out, _ = run(capsys, "--json", "--config", str(cfg), "setup", "--no-check")  # idempotent
    assert (rc, out["written"], out["settings"]["modPort"]) == (0, "unchanged", dead)

    port = int(sim_proc.rsplit(":", 1)[1])
    rc, out, _ = run(capsys, "--config", str(cfg), "setup", "--port", str(port))
    assert rc == 0 and "updated" in out and "oni-sim answers" in out and "oni status" in out
    rc, out, _ = run(capsys, "--json", "--config", str(cfg), "status")  # the toolchain uses it
    assert rc == 0 and out["game"]["worldName"] == "Terra"

    before = cfg.read_text()
    for args, field in (
        (["--port", "70000"], "modPort"),
        (["--host", "0.0.0.0"], "modHost"),
        (["--timeout", "0"], "timeout"),
    ):
        rc, _, err = run(capsys, "--json", "--config", str(cfg), "setup", *args)
        payload = json.loads(err[err.index(' ({"error"') + 2 :].strip()[:-1])
        assert rc == 4 and payload["error"] == "invalid_config" and payload["field"] == field, err
    assert cfg.read_text() == before  # nothing written on a bad value
    cfg.write_text("{not json")
    rc, _, err = run(capsys, "--config", str(cfg), "setup")
    assert rc == 4 and "invalid_config" in err and "--fresh" in err
    assert run(capsys, "--config", str(cfg), "setup", "--fresh", "--port", str(port))[0] == 0


def test_auto_analyze_reports_trends_as_cycles_advance(sim_proc, tmp_path) -> None:
    report = tmp_path / "report.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "oni_agent.cli",
            "--url",
            sim_proc,
            "--json",
            "auto_analyze",
            "--count",
            "2",
            "--interval",
            "1.5",
            "--report",
            str(report),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    first = json.loads(proc.stdout.readline())
    step(sim_proc, 700)  # a cycle and more, between the two samples
    rest, err = proc.communicate(timeout=30)
    second, summary = (json.loads(x) for x in rest.splitlines())
    assert (first["n"], first["cycle"], first["trends"]) == (1, 0, [])
    assert set(first["areas"]) >= {"oxygen", "food", "power", "temperature", "water"}
    assert second["cycle"] == 1
    o2 = next(t for t in second["trends"] if t["metric"] == "oxygen_kg_per_dupe")
    assert o2["direction"] == "falling" and o2["worse"] and o2["per_cycle"] == pytest.approx(-70, abs=0.5)
    assert o2["cycles_to_critical"] == pytest.approx((130 - 5) / 70, abs=0.1)
    assert summary["kind"] == "summary" and summary["samples"] == 2 and summary["worst"] != "ok"
    assert proc.returncode == {"warning": 5, "critical": 1}[summary["worst"]], err
    assert [json.loads(x)["kind"] for x in report.read_text().splitlines()] == ["sample", "sample", "summary"]

    # until stopped: SIGTERM ends it with the summary
    proc = subprocess.Popen(
        [sys.executable, "-m", "oni_agent.cli", "--url", sim_proc, "--json", "auto-analyze", "--interval", "0.1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    proc.stdout.readline()
    proc.stdout.readline()
    proc.send_signal(signal.SIGTERM)
    rest, _ = proc.communicate(timeout=10)
    assert json.loads(rest.splitlines()[-1])["kind"] == "summary" and proc.returncode in (1, 5)


def test_auto_repair_dry_run_apply_and_no_second_time(sim_proc, tmp_path, capsys) -> None:
    state = tmp_path / "repair.json"
    c = ModClient(sim_proc)
    base = ["--json", "--url", sim_proc, "auto-repair", "--state", str(state)]
    o2 = lambda: next(r["amount"] for r in c.state("resources") if r["tag"] == "Oxygen")  # noqa: E731
    o2_start = o2()
    step(sim_proc, 60)
    assert o2() < o2_start  # no oxygen source: falling
    rc, out, _ = run(capsys, *base)
    keys = {r["key"]: r for r in out["remedies"]}
    assert rc == 0 and out["mode"] == "dry_run" and out["sent"] == []
    assert keys["oxygen"]["blueprint"] == "oxygen" and keys["food"]["blueprint"] == "kitchen"  # no research yet
    # in the open cavity: no digs; three buildings and the wire through their power ports
    assert [a["action"] for a in keys["oxygen"]["actions"]] == ["build"] * 3 + ["utility"]
    # the kitchen starter (musher 2 x 3 as in the game, no ration box: that needs FarmingTech) fits there too
    assert [a["action"] for a in keys["food"]["actions"]] == ["build"] * 3 + ["utility"]
    assert keys["research:PowerRegulation"]["actions"] == [
        {"action": "research", "body": {"techId": "PowerRegulation"}}
    ]
    assert pending(sim_proc) == [] and not state.exists()  # a dry run queues nothing

    rc, out, _ = run(capsys, *base, "--apply", "--max-actions", "2")
    assert rc == 0 and len(out["sent"]) == 2  # the cap
    rc, out, _ = run(capsys, *base, "--apply")
    assert rc == 0 and len(out["sent"]) == 7
    assert [p["action"] for p in pending(sim_proc)] == (["build"] * 3 + ["utility"]) * 2 + ["research"]
    rc, out, _ = run(capsys, *base, "--apply")  # again before the game moved: nothing twice
    assert out["sent"] == [] and len(pending(sim_proc)) == 9

    step(sim_proc, 200)
    step(sim_proc, 100)  # built, powered
    o2_built = o2()
    step(sim_proc, 100)
    assert o2() > o2_built  # the diffuser works: oxygen rises now
    working = {b["id"] for b in c.state_all("buildings") if b["isOperational"]}
    assert {"MineralDeoxidizer", "MicrobeMusher", "ManualGenerator"} <= working

    rc, out, _ = run(capsys, *base, "--apply")
    assert out["sent"] == [] and pending(sim_proc) == []
    status = {r["key"]: r["status"] for r in out["remedies"]}
    assert status["oxygen"] == "done" and status["food"] == "done"
    assert all(r["kind"] != "blueprint" or r.get("origin") for r in out["remedies"])


def test_auto_repair_bad_input(sim_proc, tmp_path, capsys) -> None:
    state = tmp_path / "repair.json"
    rc, _, err = run(capsys, "--url", sim_proc, "auto-repair", "--state", str(state), "--max-actions", "0")
    assert rc == 2 and "invalid_request" in err
    state.write_text("{oops")
    rc, _, err = run(capsys, "--url", sim_proc, "auto-repair", "--state", str(state))
    assert rc == 4 and "invalid_state" in err
    assert run(capsys, "--url", sim_proc, "auto-repair", "--state", str(state), "--reset")[0] == 0


def test_auto_repair_wait_steps_until_the_remedies_stand(tmp_path, capsys) -> None:
    with oni_sim("0.002") as url:  # the game runs by itself, 500 ticks a second at most
        argv = [
            "--json",
            "--url",
            url,
            "auto-repair",
            "--state",
            str(tmp_path / "s.json"),
            "--apply",
            "--wait",
            "30",
            "--poll",
            "0.05",
            "--max-actions",
            "20",
        ]
        rc, out, _ = run(capsys, *argv)
        status = {r["key"]: r["status"] for r in out["remedies"]}
        assert rc == 0 and status["oxygen"] == "done" and status["food"] == "done", out["remedies"]
        # how many actions it takes depends on how far the free-running game got meanwhile (research done
        # or not picks the starter or the full layout; a slow machine may see power fall too): never one
        # action twice, never more than the cap
        sent = [(s["action"], json.dumps(s["body"], sort_keys=True)) for s in out["sent"]]
        assert 0 < len(sent) <= 20 and len(set(sent)) == len(sent), out["sent"]
        rc, out, _ = run(capsys, *argv)
        assert out["sent"] == []
