"""The Java host across restarts: kill -9 at random moments, clean stops, what "applied" promises.

The Java test host models the game's save: blocks reach its world file only at a save (here every
1 s, and at a clean stop), so a kill -9 rolls the world back to the last save, as a crashed Paper
server does. The host's data folder keeps the pause flag, the idempotency records and the event
tail. What must hold (paper-plugin/README.md, *Restarts*):

- a batch answered ``applied`` either still has all its blocks, or is reported (world_info
  ``lastRestart``) and its replay writes the lost ones again: 0 lost;
- a replay never writes a block twice (0 duplicated) and never overwrites a block someone else
  changed after the restart (0 clobbered: compare-and-set);
- the saved world is a prefix of the applied batches (batches are atomic; saves fall between them);
- the pause flag survives; cursors survive a clean stop and answer ``resyncRequired`` after a crash.
"""

from __future__ import annotations

import random
import threading
import time

import httpx
from contract.hosts import java_core
from contract.test_world_protocol import AIR, GLASS, STONE, Client, apply

SAVE_SECONDS = "1"
ROUNDS = 2


def positions(round_: int, i: int) -> list[tuple[int, int, int]]:
    """Four blocks per batch, unique over the whole test."""
    return [(-32 + i % 64, 70 + 10 * round_ + i // 64, -32 + 5 * k) for k in range(4)]


def entries_of(round_: int, i: int) -> list[tuple[int, int, int, str, str]]:
    return [(x, y, z, AIR, STONE if (i + k) % 2 else GLASS) for k, (x, y, z) in enumerate(positions(round_, i))]


def states(c: Client, pos: list[tuple[int, int, int]]) -> list[str]:
    res = c.ok("blocks_get", {"xyz": [n for p in pos for n in p]})
    return [res["palette"][i] for i in res["state"]]


class Writer(threading.Thread):
    """Applies batches one after another until the host goes away; remembers every answer."""

    def __init__(self, c: Client, epoch: int, round_: int):
        super().__init__(daemon=True)
        self.c, self.epoch, self.round = c, epoch, round_
        self.answered: list[tuple[str, list, dict]] = []  # (batch id, entries, result) in apply order
        self.in_flight: tuple[str, list] | None = None

    def run(self) -> None:
        for i in range(10_000):
            bid = f"r{self.round}-b{i}"
            entries = entries_of(self.round, i)
            self.in_flight = (bid, entries)
            try:
                r = apply(self.c, bid, entries, self.epoch)
            except httpx.HTTPError:
                return  # killed: the answer of this batch is unknown
            body = r.json()
            if not body.get("ok"):
                return  # the host went away mid-answer (unavailable) — unknown as well
            self.answered.append((bid, entries, body["result"]))
            self.in_flight = None


def all_events(c: Client, cursor: str) -> list[dict]:
    out: list[dict] = []
    while True:
        page = c.ok("events_since", {"cursor": cursor, "limit": 100})
        assert page["resyncRequired"] is False, page
        out += page["events"]
        cursor = page["nextCursor"]
        if page["complete"]:
            return out


def replay_all(c: Client, epoch: int, batches: list[tuple[str, list]], seed: int) -> int:
    """Replay earlier batches (as a journal re-verifying after a crash would): every one ends complete.
    Returns how many blocks the replays wrote again."""
    rewritten = 0
    for bid, entries in batches:
        again = apply(c, bid, entries, epoch).json()["result"]
        assert again["status"] == "applied" and again["replayed"] is True, (seed, again)
        rewritten += again["rewrittenAfterRestart"]
        assert states(c, [e[:3] for e in entries]) == [d for *_, d in entries], (seed, bid)
    return rewritten


def test_kill9_at_random_moments_loses_duplicates_and_clobbers_nothing(tmp_path, monkeypatch):
    rng = random.Random()
    seed = rng.randrange(1 << 30)
    rng.seed(seed)
    monkeypatch.setenv("MCB_HOST_SAVE_SECONDS", SAVE_SECONDS)  # inherited by every start of the host
    h = java_core(tmp_path, True)
    try:
        c = Client(h)
        auto = Client(h, "automation")
        info = c.ok("world_info")
        assert "durable_state" in info["capabilities"]
        assert info["lastRestart"]["previousStop"] == "none"
        epoch = info["epoch"]
        lost_seen = 0
        done: list[tuple[str, list]] = []  # every batch of earlier rounds, complete
        round_ = 0
        # a kill that loses nothing is possible (it fell right after a save): then one more round, twice at most
        while round_ < ROUNDS or (lost_seen == 0 and round_ < ROUNDS + 2):
            instance = c.ok("world_info")["hostInstance"]
            w = Writer(c, epoch, round_)
            w.start()
            time.sleep(rng.uniform(0.4, 2.2))  # the fault's timing, not a synchronisation
            h.restart(True)  # kill -9 mid-apply, then start again (the world rolls back to its last save)
            w.join(30)
            assert not w.is_alive()
            assert w.answered, f"seed {seed}: no batch answered before the kill"
            info = c.ok("world_info")
            lr = info["lastRestart"]
            assert lr["previousStop"] == "unclean" and lr["eventsContinue"] is False, (seed, lr)
            assert info["hostInstance"] != instance, "a crash starts a new event-log identity"
            cursor = c.ok("events_since", {"cursor": ""})["nextCursor"]

            # what survived: whole batches, and a prefix of the apply order
            present = []
            for bid, entries, res in w.answered:
                assert res["status"] == "applied" and res["written"] == 4, res
                got = states(c, [e[:3] for e in entries])
                want = [d for *_, d in entries]
                assert got in (want, [AIR] * 4), (seed, bid, got)  # never half a batch
                present.append(got == want)
            assert present == sorted(present, reverse=True), (seed, present)  # saved = a prefix
            n_lost = present.count(False)
            lost_seen += n_lost
            if w.in_flight is not None:
                got = states(c, [e[:3] for e in w.in_flight[1]])
                assert got in ([d for *_, d in w.in_flight[1]], [AIR] * 4), (seed, got)
                assert got == [AIR] * 4 or not n_lost, "the in-flight batch came after the lost ones"
            # the host reports what the crash rolled back (the in-flight batch only if its record was written)
            # on top of earlier rounds' replays that had not been saved yet
            assert lr["lostWrites"] >= 4 * n_lost, (seed, lr, present)
            assert lr["doubtfulBatches"] >= n_lost, (seed, lr)
            lost_ops = {"op-" + bid for (bid, _, _), p in zip(w.answered, present, strict=True) if not p}
            assert lost_ops <= set(lr["affectedOperationIds"]), (seed, lr)
            if n_lost:
                reason = c.ok("events_since", {"cursor": f"{instance}:0"})["reason"]
                assert "rolled back" in reason and f"{lr['lostWrites']} of {lr['unsavedWrites']}" in reason, reason

            # someone builds on a lost block after the restart: its replay must not clobber it
            clobber = None
            for (bid, entries, _), p in zip(w.answered, present, strict=True):
                if not p:
                    clobber = bid
                    x, y, z = entries[0][:3]
                    auto.ok(
                        "automation_set_blocks",
                        {
                            "actor": "player",
                            "playerId": "alice",
                            "blocks": [{"x": x, "y": y, "z": z, "state": "minecraft:dirt"}],
                        },
                    )
                    break

            # replay every batch id: the original answers, lost blocks written again, nothing twice
            rewritten = 0
            for (bid, entries, res), p in zip(w.answered, present, strict=True):
                again = apply(c, bid, entries, epoch).json()["result"]
                if bid == clobber:
                    assert again["status"] == "conflict", again
                    assert again["problems"][0]["current"] == "minecraft:dirt"
                    assert states(c, [e[:3] for e in entries]) == ["minecraft:dirt", AIR, AIR, AIR]
                    continue
                assert again["status"] == "applied" and again["replayed"] is True, (seed, again)
                for k in ("written", "already", "alreadyPositions", "batchId"):
                    assert again[k] == res[k], (seed, k, again, res)
                assert again["rewrittenAfterRestart"] == (0 if p else 4), (seed, bid, again)
                rewritten += again["rewrittenAfterRestart"]
                assert states(c, [e[:3] for e in entries]) == [d for *_, d in entries]
            settled = [(bid, entries) for bid, entries, _ in w.answered if bid != clobber]
            if w.in_flight is not None:
                # its answer never came: whatever the crash left, the replay completes it
                bid, entries = w.in_flight
                again = apply(c, bid, entries, epoch).json()["result"]
                assert again["status"] == "applied" and again["written"] + again["already"] == 4, (seed, again)
                rewritten += again["rewrittenAfterRestart"] if again["replayed"] else again["written"]
                settled.append((bid, entries))
            rewritten += replay_all(c, epoch, done, seed)
            ours_pos = [(e["x"], e["y"], e["z"]) for e in all_events(c, cursor) if e["source"] == "ours"]
            assert len(ours_pos) == len(set(ours_pos)) == rewritten, (seed, len(ours_pos), rewritten)
            done += settled
            round_ += 1

        # the pause flag is on disk before `pause` answers: a kill right after keeps it
        c.ok("pause", {"reason": "owner said stop"})
        h.restart(True)
        info = c.ok("world_info")
        assert info["paused"] is True, seed
        c.err(
            "batch_apply",
            {
                "batchId": "while-paused",
                "worldEpoch": epoch,
                "entries": [{"x": 0, "y": 200, "z": 0, "expected": AIR, "desired": STONE}],
            },
            423,
            "paused",
        )
        c.ok("resume", {"reason": "go on"})
        replay_all(c, epoch, done, seed)  # what the last replays wrote may have been lost again

        # a clean stop saves the world and keeps cursors, revisions and records
        page_cursor = c.ok("events_since", {"cursor": ""})["nextCursor"]
        auto.ok(
            "automation_set_blocks",
            {"actor": "player", "playerId": "bob", "blocks": [{"x": 1, "y": 250, "z": 1, "state": "minecraft:glass"}]},
        )
        r = apply(c, "clean-1", [(2, 250, 2, AIR, STONE)], epoch).json()["result"]
        assert r["status"] == "applied"
        instance = c.ok("world_info")["hostInstance"]
        h.restart(False)
        info = c.ok("world_info")
        lr = info["lastRestart"]
        assert lr["previousStop"] == "clean" and lr["eventsContinue"] is True, lr
        assert lr["doubtfulBatches"] == 0 and lr["lostWrites"] == 0, lr
        assert info["hostInstance"] == instance
        page = c.ok("events_since", {"cursor": page_cursor, "limit": 100})
        assert page["resyncRequired"] is False
        assert [(e["source"], e["x"]) for e in page["events"]] == [("player", 1), ("ours", 2)]
        assert states(c, [(1, 250, 1), (2, 250, 2)]) == [GLASS, STONE]
        replay = apply(c, "clean-1", [(2, 250, 2, AIR, STONE)], epoch).json()["result"]
        assert replay["replayed"] is True and replay["rewrittenAfterRestart"] == 0
        for bid, entries in done:
            assert states(c, [e[:3] for e in entries]) == [d for *_, d in entries], (seed, bid)
        assert lost_seen > 0, f"seed {seed}: no kill fell after a batch that was not saved yet"
    finally:
        h.stop()
