"""A plan the player sees before it is built (issue 32 item 2), end to end: `mcb up`, `mcb chat` as
the player with the chat loop and the scripted ACP agent, which prepares a tower and leaves it
(build_prepare only). The bridge reads the plan's entries from the journal (PlanEntries) and hands
them to the world host (chat_preview). On paper-mock the real plugin sends them to the player
MockPaperHost has online as client-side blocks: what that client shows is read from the host's
client-view file (HarnessPlayer), the world itself from blocks_get. `apply` builds the plan and
clears the preview; `reject` drops it, clears the preview and writes nothing. On the other hosts
(no players) the plan is offered the same way without a preview."""

from __future__ import annotations

import fcntl
import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

from contract.hosts import MOCK_PLAYER
from e2e.test_chat_e2e import SCRIPTED
from harness import ROOT
from mcb_bridge.chat.projects import ProjectRegistry
from mcb_common.files import atomic_write

# the scripted 3x5x3 hollow stone-brick tower (42 blocks) at X Y Z, corners; in a project of the player's own
# inside the pre-generated chunks (the default project's area) and the mock player's view distance (it stands at
# 0.5 65 0.5)
X, Y, Z = -50, 64, -50
PROJECT = "preview-e2e"
AREA = {"min": {"x": -60, "y": -64, "z": -60}, "max": {"x": -40, "y": 319, "z": -40}}
CORNERS = [X, Y, Z, X + 2, Y + 4, Z + 2, X, Y + 4, Z + 2]


class Chat:
    """`mcb chat --player P` kept open: a line in, then wait for an answer line."""

    def __init__(self, stack, player: str):
        self.stack = stack
        env = dict(stack.env)
        env["MCB_ACP_COMMAND"] = sys.executable
        env["MCB_ACP_ARGS"] = json.dumps([str(SCRIPTED)])
        if stack.world.external:
            env["MCB_AUTOMATION_TOKEN"] = stack.world.token("automation")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcb_cli.main", "chat", "--player", player, "--wait", "60"],
            env=env,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def say(self, text: str, until: str, timeout: float = 120) -> str:
        """Send `text`, return the first new line that starts with `until`."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                break
            self.seen.append(line)
            if line.startswith(until):
                return line
        stderr = self.close()[-4000:]
        chat = self.stack.runtime / "chat"
        tails = [
            f"--- {p.name}\n" + p.read_text(errors="replace")[-3000:]
            for p in (chat / "agent-home" / "mcp-server.log", *sorted((chat / "logs").glob("agent-*.log")))
            if p.exists()
        ]
        raise AssertionError(
            f"no line starting {until!r} after {text!r}; the player saw:\n"
            + "\n".join(self.seen)
            + "\n--- stderr\n"
            + stderr
            + "\n"
            + "\n".join(tails)
        )

    def close(self) -> str:
        if self.proc.poll() is None and self.proc.stdin is not None:
            self.proc.stdin.close()
            try:
                self.proc.wait(90)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.proc.stderr.read() if self.proc.stderr is not None else ""


def _world(stack) -> list[str]:
    res = stack.world_rpc("blocks_get", {"xyz": CORNERS})
    return [res["palette"][i] for i in res["state"]]


def _client_view(stack) -> list[str] | None:
    """The fake blocks MockPaperHost's player sees ("x y z state"), or None on hosts without players."""
    handle = stack.world.handle
    path: Path | None = getattr(handle, "extra", {}).get("client_view") if handle is not None else None
    if path is None:
        return None
    return json.loads(path.read_text())["fake"] if path.exists() else []


def _wait_view(stack, want, timeout: float = 10) -> list[str] | None:
    deadline = time.monotonic() + timeout
    view = _client_view(stack)
    while view is not None and not want(view) and time.monotonic() < deadline:
        time.sleep(0.1)
        view = _client_view(stack)
    return view


def test_a_prepared_plan_is_previewed_then_applied_or_rejected(stack) -> None:
    # only a project's owner builds in it: the player (on paper-mock the one online) gets a project of its own,
    # written into config.json as an admin would (the journal re-reads it; `project create` would refuse the
    # overlap with the default project, and the world has no chunks outside it)
    registry = ProjectRegistry(stack.runtime / "config.json", stack.runtime / "chat")
    if registry.get(PROJECT) is None:
        with open(stack.runtime / "config.json.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            doc = json.loads((stack.runtime / "config.json").read_text())
            doc["projects"].append(
                {"project_id": PROJECT, "name": PROJECT, "owner_player_id": MOCK_PLAYER, "area": AREA}
            )
            atomic_write(stack.runtime / "config.json", json.dumps(doc, indent=2) + "\n")
    registry.use(MOCK_PLAYER, PROJECT)
    chat = Chat(stack, MOCK_PLAYER)
    try:
        # 1. prepared and left: the player sees it (on Paper), the world does not change
        offer = chat.say(f"plan tower at {X} {Y} {Z}", "plan pl")
        assert "42 blocks to change, not built yet" in offer and "/ai apply builds it" in offer, offer
        plan_id = offer.split()[1].rstrip(":")
        assert all(s.startswith("minecraft:air") for s in _world(stack)), "nothing is written"
        view = _wait_view(stack, lambda v: len(v) == 42)
        assert (view is not None) == (stack.host == "paper-mock"), "a client to look at on paper-mock only"
        if view is not None:
            assert "You see it in game now; only you do" in offer, offer
            assert len(view) == 42 and all(v.endswith("minecraft:stone_bricks") for v in view), view
            assert f"{X} {Y} {Z} minecraft:stone_bricks" in view
            # /ai preview hides it and shows it again
            assert chat.say("preview", f"plan {plan_id} hidden").startswith(f"plan {plan_id} hidden")
            assert _wait_view(stack, lambda v: not v) == []
            chat.say("preview", f"showing plan {plan_id} (42 blocks")
            assert len(_wait_view(stack, lambda v: len(v) == 42) or []) == 42
        else:
            assert "cannot show it in game" in offer, offer

        # 2. rejected: the preview is cleared and nothing was written
        chat.say("reject", f"plan {plan_id} dropped; nothing was written")
        assert _wait_view(stack, lambda v: not v) in ([], None)
        assert all(s.startswith("minecraft:air") for s in _world(stack))
        chat.say("apply", "no plan of yours is waiting")

        # 3. prepared again and applied: built, and the view is the real world again
        offer = chat.say(f"plan tower at {X} {Y} {Z}", "plan pl")
        plan_id = offer.split()[1].rstrip(":")
        assert len(_wait_view(stack, lambda v: len(v) == 42) or [None] * 42) == 42
        chat.say("apply", f"applying plan {plan_id} as op_")
        chat.say("", "done: 42 blocks placed")
        assert all(s == "minecraft:stone_bricks" for s in _world(stack)), _world(stack)
        assert _wait_view(stack, lambda v: not v) in ([], None), "the preview is cleared once applied"
        chat.say("preview", "no plan of yours is waiting")
        chat.say("undo", "undone op_")  # leave the shared world as it was
        assert all(s.startswith("minecraft:air") for s in _world(stack))
    finally:
        chat.close()
