"""Issue 33 item 2: every HTTP entry point refuses an over-size body before reading it.

The real stack (components.py: Redis, embedded world host, planner, journal, bridge; plus the
camera worker, the ops dashboard and the ONI simulator) as processes. Per service, over a raw
loopback socket:

- a request declaring a 200 MB ``Content-Length`` gets 413 ``budget_exceeded`` (JSON) from its
  headers alone, while the test pushes 64 MiB of body at it;
- a ``Transfer-Encoding: chunked`` body is cut off just past the service's limit: 413 while the
  test pushes the limit plus 64 MiB;

and the service's resident memory grows by less than twice its limit plus 16 MiB over both (the
body is not read into memory). ``mcb_rpc.bodylimit.BodyLimit`` is the one middleware behind all
of them; the ONI simulator (a stdlib server mirroring the ONI mod) never reads a body over its
limit and answers its own 413.
"""

from __future__ import annotations

import time

import pytest
from e2e.components import start_components
from hardening.bodies import DECLARED, MIB, push, rss
from harness import PY, free_port, start_process


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bodylimits")
    comp = start_components(tmp / "rt")
    oni_port = free_port()
    try:
        comp.start("camera-worker")
        comp.start("dashboard")
        comp.procs["oni-sim"] = start_process(
            "oni-sim",
            [PY, "-m", "oni_sim", "--port", str(oni_port), "--tick", "0"],
            comp.runtime / "logs",
            health_url=f"http://127.0.0.1:{oni_port}/health",
            timeout=30,
        )
        yield comp, {"dashboard": comp.ports["dashboard"], "oni-sim": oni_port}
    finally:
        comp.stop_all()


def check(comp, name: str, port: int, path: str, limit: int, code: str = "budget_exceeded", headers: str = "") -> None:
    pid = comp.procs[name].popen.pid
    before = rss(pid)
    base = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n{headers}"
    status, body, _ = push(port, base + f"Content-Length: {DECLARED}\r\n\r\n", False, 64 * MIB)
    assert status == 413, (name, "declared", status, body)
    assert isinstance(body, dict) and body["error"]["code"] == code, (name, body)
    status, body, took = push(port, base + "Transfer-Encoding: chunked\r\n\r\n", True, limit + 64 * MIB)
    assert status == 413, (name, "chunked", status, body)
    assert isinstance(body, dict) and body["error"]["code"] == code, (name, body)
    time.sleep(0.5)
    grew = rss(pid) - before
    assert grew < 2 * limit + 16 * MIB, f"{name}: resident memory grew by {grew / MIB:.1f} MiB"
    assert comp.procs[name].alive()


def test_world_host(stack):
    from mcb_world_host.server import MAX_BODY

    comp, _ = stack
    check(comp, "world-host", comp.ports["world_host"], "/v1/rpc", MAX_BODY)


def test_bridge(stack):
    from mcb_bridge.server import MAX_BODY_BYTES

    comp, _ = stack
    token = (comp.runtime / "secrets" / "agent.token").read_text().strip()
    check(
        comp,
        "bridge",
        comp.ports["bridge"],
        "/mcp",
        MAX_BODY_BYTES,
        headers=f"Authorization: Bearer {token}\r\nAccept: application/json, text/event-stream\r\n",
    )


@pytest.mark.parametrize("name", ["planner", "journal", "camera-worker"])
def test_health_endpoints_of_the_grpc_services(stack, name):
    from mcb_rpc.bodylimit import HEALTH_MAX_BODY

    comp, _ = stack
    port = comp.ports[
        {"planner": "planner_health", "journal": "journal_health", "camera-worker": "camera_health"}[name]
    ]
    check(comp, name, port, "/health", HEALTH_MAX_BODY)


def test_dashboard(stack):
    from mcb_dashboard.app import MAX_FORM_BYTES

    comp, ports = stack
    port = ports["dashboard"]
    check(comp, "dashboard", port, "/login", MAX_FORM_BYTES, headers=f"Origin: http://127.0.0.1:{port}\r\n")


def test_oni_sim_never_reads_an_over_size_body(stack):
    """The simulator mirrors the ONI mod's API and its error shape (``{"error": code, "details"}``):
    a declared length over its limit is answered 413 unread; a chunked body is never read at all
    (it has no length, so the request counts as bodiless and is refused as such)."""
    from oni_sim.api import MAX_BODY

    comp, ports = stack
    port = ports["oni-sim"]
    pid = comp.procs["oni-sim"].popen.pid
    before = rss(pid)
    head = f"POST /api/action/dig HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
    status, body, _ = push(port, head + f"Content-Length: {DECLARED}\r\n\r\n", False, 64 * MIB)
    assert status == 413 and isinstance(body, dict) and body["error"] == "invalid_request", body
    status, body, _ = push(port, head + "Transfer-Encoding: chunked\r\n\r\n", True, MAX_BODY + 64 * MIB)
    assert status == 400 and isinstance(body, dict) and body["error"] == "invalid_request", body
    time.sleep(0.5)
    grew = rss(pid) - before
    assert grew < 2 * MAX_BODY + 16 * MIB, f"oni-sim: resident memory grew by {grew / MIB:.1f} MiB"
