"""In-game chat end to end, on each world host: `mcb up`, then `mcb chat` (a terminal player)
running the chat loop with a REAL ACP agent process — tests/scripted_acp_agent.py, scripted,
no model — which calls our MCP tools over a real stdio MCP connection (`mcb mcp` with the agent
token). Path: chat line -> world host -> chat_poll -> bridge -> ACP -> MCP -> journal -> world.
Asserted on the world itself (blocks_get) and on what the player was shown (the outbox).
On java-core the loop polls the Java test host with the admin token kept beside the stack's
`--world-host-token-file`, and the terminal player speaks through the host's own automation token.
"""

from __future__ import annotations

import json
import subprocess
import sys

from harness import ROOT

SCRIPTED = ROOT / "tests" / "scripted_acp_agent.py"


def _chat(
    stack, lines: list[str], timeout: float = 180, agent_args: tuple[str, ...] = ()
) -> subprocess.CompletedProcess:
    env = dict(stack.env)
    env["MCB_ACP_COMMAND"] = sys.executable
    env["MCB_ACP_ARGS"] = json.dumps([str(SCRIPTED), *agent_args])
    env["OPENAI_API_KEY"] = "inherited-must-not-reach-the-agent"
    if stack.world.external:  # the test host's automation principal (a Paper server has none)
        env["MCB_AUTOMATION_TOKEN"] = stack.world.token("automation")
    return subprocess.run(
        [sys.executable, "-m", "mcb_cli.main", "chat", "--wait", "120"],
        input="\n".join(lines) + "\n",
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _why(stack, r: subprocess.CompletedProcess) -> str:
    """What a failed chat assertion shows: the player's lines, the tails of the chat agent's MCP server
    log, the agent's own stderr and the bridge's log, and the chat process's stderr (where a failed
    turn's traceback is)."""
    tails = []
    chat = stack.runtime / "chat"
    for path in (
        chat / "agent-home" / "mcp-server.log",
        *sorted((chat / "logs").glob("agent-*.log")),
        stack.runtime / "logs" / "bridge.log",
    ):
        if path.exists():
            tails.append(f"--- {path.name}\n" + path.read_text(errors="replace")[-4000:])
    return "\n".join([r.stdout, *tails, "--- mcb chat stderr\n" + r.stderr[-6000:]])


def test_chat_builds_a_tower_through_acp_and_mcp(stack) -> None:
    r = _chat(stack, ["build a tower at 20 64 20"])
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout.splitlines()
    assert "inspecting the area..." in out, r.stdout
    assert "planned 42 blocks" in out, r.stdout  # a hollow 3x5x3 box: 45 - 3 inside
    assert any(line.startswith("done: 42 blocks placed") for line in out), r.stdout
    assert out[-1] == "tower applied: 42 blocks", r.stdout
    assert not any("secret thoughts" in line or "plan_hash" in line for line in out)

    corners = [20, 64, 20, 22, 68, 22, 20, 68, 22]
    inside = [21, 66, 21]
    res = stack.world_rpc("blocks_get", {"xyz": corners + inside})
    states = [res["palette"][i] for i in res["state"]]
    assert states[:3] == ["minecraft:stone_bricks"] * 3, states
    assert states[3].startswith("minecraft:air"), states

    # block history names the player's request beside the operation it started (issue 32 item 3)
    hist = subprocess.run(
        [sys.executable, "-m", "mcb_cli.main", "history", "20,64,20,22,68,22", "--json"],
        env=dict(stack.env) | {"MCB_RUNTIME_DIR": str(stack.runtime)},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert hist.returncode == 0, hist.stderr
    ours = [json.loads(x) for x in hist.stdout.splitlines() if x.strip()]
    assert len(ours) == 42 and {(e["source"], e.get("prompt")) for e in ours} == {
        ("ours", "build a tower at 20 64 20")
    }, ours[:3]

    runtime = stack.runtime
    env = json.loads((runtime / "chat" / "agent-home" / "env.json").read_text())
    assert stack.token("admin") not in json.dumps(env) and stack.world.token("admin") not in json.dumps(env)
    assert stack.world.token("automation") not in json.dumps(env)
    assert "OPENAI_API_KEY" not in env
    session = next((runtime / "chat" / "sessions").rglob("session.json"))
    assert oct(session.stat().st_mode & 0o777) == "0o600"
    rec = json.loads(session.read_text())
    assert rec["unfinished"] is None and len(rec["operations"]) == 1

    # a crash mid-turn leaves `unfinished`; the next turn checks its operations in the journal
    rec["unfinished"] = {"message_id": "m-old", "task": "build a tower at 20 64 20", "started_ms": 1}
    session.write_text(json.dumps(rec))
    r = _chat(stack, ["hello"])
    assert r.returncode == 0, r.stderr[-3000:]
    assert any(
        "was interrupted" in line and f"{rec['operations'][0]} (applied, 42 written)" in line
        for line in r.stdout.splitlines()
    ), r.stdout
    assert r.stdout.splitlines()[-1] == "echo: hello", r.stdout


def test_an_agent_not_logged_in_gets_one_line_that_says_how(stack) -> None:
    """Issue 31 item 3: an agent that answers "Authentication required" gives the player one line
    naming `mcb login` and the key variable, in game (the outbox `mcb chat` prints) and in the
    terminal's log — never a traceback; the next request starts a new agent."""
    r = _chat(stack, ["hello", "hello again"], agent_args=("--auth-required",))
    assert r.returncode == 0, _why(stack, r)
    said = [line for line in r.stdout.splitlines() if "not logged in" in line]
    assert len(said) == 2, _why(stack, r)  # one line per request, nothing else about it
    assert all("`mcb login`" in line and "MCB_OPENAI_API_KEY" in line for line in said), said
    assert "Traceback" not in r.stderr and "RequestError" not in r.stdout + r.stderr, r.stderr[-3000:]
    logged = [line for line in r.stderr.splitlines() if "not logged in" in line]
    assert len(logged) == 2 and all("`mcb login`" in line for line in logged), r.stderr[-3000:]
    assert "Authentication required" not in r.stdout


def test_doctor_reports_the_running_stack(stack) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "mcb_cli.main", "doctor"],
        env=stack.env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    doc = json.loads(r.stdout)
    assert doc["world_host"]["health"]["status"] == "ok"
    assert doc["redis"]["ok"] is True
    assert doc["config"]["admin_token"] == "present"
    assert doc["pinned"]["agent-client-protocol"] == "0.12.1"
    assert doc["not_isolated"]
    for principal in ("admin", "agent", "automation"):
        assert stack.token(principal) not in r.stdout
    for principal in ("admin", "service", "automation"):
        assert stack.world.token(principal) not in r.stdout


def test_stop_cancels_and_leaves_writes_paused(stack) -> None:
    r = _chat(stack, ["slow job", "stop"], timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout.splitlines()
    assert any(line.startswith("stopped; writes stay paused") for line in out), r.stdout
    # the slow request itself ends too: cancelled while queued, or its running ACP turn stopped
    assert sum(1 for line in out if line.startswith("stopped") or line == "cancelled by /ai stop") >= 2, r.stdout
    assert stack.world_rpc("world_info", {})["paused"] is True
    # the owner's next request resumes writes
    r2 = _chat(stack, ["hello again"], timeout=120)
    assert r2.returncode == 0, r2.stderr[-3000:]
    assert r2.stdout.splitlines()[-1] == "echo: hello again", r2.stdout
    assert stack.world_rpc("world_info", {})["paused"] is False
