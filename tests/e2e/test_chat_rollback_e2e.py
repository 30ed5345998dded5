"""`/ai rollback` end to end (issue 32 item 4): `mcb up`, then `mcb chat` as the project owner with the
chat loop. A scripted griefer breaks and places blocks among another player's edits (the host's
automation_set_blocks with a player's name: observed events as Paper reports them); the owner asks
`rollback Griefer2 ...` in chat: the bridge asks the real journal's RollbackPrepare and tells the player
what it would restore and the later change by Alice it leaves (named); the plan becomes the player's
pending plan (docs/chat.md, *Previews*) — the world is untouched until `/ai apply` (the player's consent to
replacing the griefer's blocks), after which exactly the griefer's changes are undone."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time

from e2e.test_chat_e2e import SCRIPTED
from harness import ROOT

WALL = [(30, 64, 30), (31, 64, 30), (32, 64, 30), (33, 64, 30), (34, 64, 30), (35, 64, 30)]
WATCHED = [*WALL, (30, 65, 31), (31, 65, 31), (32, 66, 31), (33, 65, 30), (34, 65, 30)]


def _set(stack, blocks, player_id: str, name: str) -> None:
    stack.world_rpc(
        "automation_set_blocks",
        {
            "actor": "player",
            "playerId": player_id,
            "playerName": name,
            "blocks": [{"x": x, "y": y, "z": z, "state": s} for x, y, z, s in blocks],
        },
        principal="automation",
    )


def _states(stack) -> dict[tuple[int, int, int], str]:
    res = stack.world_rpc("blocks_get", {"xyz": [c for p in WATCHED for c in p]})
    return {p: res["palette"][i] for p, i in zip(WATCHED, res["state"], strict=True)}


def _reader(proc: subprocess.Popen) -> queue.Queue:
    """The lines the player is shown (``mcb chat``'s stdout), as they come; None at the end."""
    lines: queue.Queue = queue.Queue()

    def pump() -> None:
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def _read_until(lines: queue.Queue, want, seen: list[str], timeout: float = 120) -> str:
    """Lines the player is shown, until one for which ``want`` holds (returned)."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            break
        if line is None:
            break
        seen.append(line)
        if want(line):
            return line
    raise AssertionError("not shown in time; the player saw:\n" + "\n".join(seen))


def test_rollback_from_chat_restores_exactly_the_griefers_blocks_after_confirmation(stack) -> None:
    alice = ("uuid-alice", "Alice")
    _set(
        stack,
        [(x, y, z, "minecraft:stone_bricks") for x, y, z in WALL]
        + [(30, 65, 31, "minecraft:oak_planks"), (31, 65, 31, "minecraft:oak_planks")],
        *alice,
    )
    time.sleep(0.05)
    grief = ("uuid-g2", "Griefer2")
    _set(
        stack,
        [
            (30, 64, 30, "minecraft:air"),
            (31, 64, 30, "minecraft:air"),
            (30, 65, 31, "minecraft:air"),
            (33, 65, 30, "minecraft:tnt"),
            (34, 65, 30, "minecraft:tnt"),
        ],
        *grief,
    )
    _set(stack, [(32, 66, 31, "minecraft:glass")], *alice)  # Alice, meanwhile
    _set(stack, [(32, 64, 30, "minecraft:air")], *grief)
    _set(stack, [(32, 64, 30, "minecraft:cobblestone")], *alice)  # Alice repairs one: hers now
    before = _states(stack)

    env = dict(stack.env)
    env["MCB_ACP_COMMAND"] = sys.executable
    env["MCB_ACP_ARGS"] = json.dumps([str(SCRIPTED)])
    if stack.world.external:
        env["MCB_AUTOMATION_TOKEN"] = stack.world.token("automation")
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcb_cli.main", "chat", "--wait", "120"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,
        text=True,
        bufsize=1,
    )
    seen: list[str] = []
    lines = _reader(proc)
    try:
        proc.stdin.write("rollback griefer2 since 1h 28 63 28 37 68 33\n")
        proc.stdin.flush()
        offer = _read_until(lines, lambda line: "/ai apply agrees to that" in line or "rror" in line, seen)
        assert (
            "rollback of player griefer2 since 1h ago in x 28..37, y 63..68, z 28..33: 5 block(s) to restore" in seen
        ), seen
        assert "1 block(s) changed since by others stay as they are: Alice at 32 64 30" in seen, seen
        assert offer.startswith("plan pl_") and ": 5 blocks to change, not built yet." in offer, offer
        assert offer.endswith("It replaces 2 block(s) placed by players: /ai apply agrees to that."), offer
        assert _states(stack) == before, "the offer wrote nothing"
        proc.stdin.write("apply\n")
        proc.stdin.flush()
        done = _read_until(
            lines, lambda line: line.startswith(("done:", "stopped")) or "rror" in line or "replace" in line, seen
        )
        assert done == "done: 5 blocks placed", seen
        proc.stdin.close()
        proc.wait(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, proc.stderr.read()[-3000:]
    after = _states(stack)
    assert [after[p] for p in WALL] == ["minecraft:stone_bricks"] * 2 + ["minecraft:cobblestone"] + [
        "minecraft:stone_bricks"
    ] * 3  # the wall is back; Alice's repair stays
    assert after[(30, 65, 31)] == "minecraft:oak_planks"  # Alice's planks are back
    assert after[(33, 65, 30)] == after[(34, 65, 30)] == "minecraft:air"  # the tnt is gone
    for p in [(31, 65, 31), (32, 66, 31), (32, 64, 30)]:  # nothing else changed
        assert after[p] == before[p], p
