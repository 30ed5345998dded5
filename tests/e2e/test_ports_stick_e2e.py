"""Every service takes its port from one place, ``MCB_<NAME>_PORT`` else the runtime's
config.json ``ports`` (issue 31 item 1): `mcb up` on other ports, stopped, then a plain `mcb up`
in a new shell (no port variable at all) starts every service — the embedded world host included
— on the saved ports, and `mcb status` finds them. Before, the world host fell back to 8765 while
the runner waited on the saved port: "world-host did not become healthy within 60s"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
from e2e.conftest import PORT_NAMES, start_stack
from harness import ROOT


def test_a_plain_mcb_up_after_a_run_on_other_ports_uses_the_saved_ports(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    first = start_stack(runtime)  # every MCB_*_PORT set to a free port
    try:
        saved = first.config()["ports"]
        assert {n: saved[n] for n in PORT_NAMES} == first.ports
    finally:
        assert first.stop() in (0, 130), first.log()
    first.log_path.rename(runtime / "mcb-up.first.log")  # start_stack waits for READY in this file

    again = start_stack(runtime, saved_ports=True)  # no MCB_*_PORT in its environment
    try:
        assert not any(k.endswith("_PORT") and k.startswith("MCB_") for k in again.env)
        assert again.ports == first.ports
        assert again.world_rpc("world_info", {})["worldUuid"]  # the host answers on the saved port
        host_log = (runtime / "logs" / "world-host.log").read_text(errors="replace")
        assert (
            f"world host on http://127.0.0.1:{first.ports['world_host']} " in host_log.split("world host stopped")[-1]
        ), host_log
        for name in ("bridge", "dashboard", "planner_health", "journal_health", "camera_health"):
            r = httpx.get(f"http://127.0.0.1:{first.ports[name]}/health", timeout=5)
            assert r.status_code == 200, (name, r.text)
        env = {k: v for k, v in os.environ.items() if not k.startswith("MCB_")}
        env["MCB_RUNTIME_DIR"] = str(runtime)
        status = subprocess.run(
            [sys.executable, "-m", "mcb_cli.main", "status"],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert status.returncode == 0, status.stdout + status.stderr
        assert f"127.0.0.1:{first.ports['world_host']}" in status.stdout, status.stdout
        assert again.config()["ports"] == saved  # the second run saved the same ports again
    finally:
        assert again.stop() in (0, 130), again.log()
