"""Conformance: in-game chat for the AI bridge (chat_poll, chat_reply), player_context, and the
test-only automation_chat / automation_chat_outbox — the same behaviour on every host."""

from __future__ import annotations

import time

import httpx
from contract.test_world_protocol import AIR, STONE, Client, apply

POS = {"x": 10.5, "y": 64.0, "z": -3.25, "yaw": 90.0, "pitch": 12.5, "world": "world"}
TARGET = {"x": 10, "y": 63, "z": -2, "state": "minecraft:grass_block[snowy=false]"}


def say(host, player: str, text: str, **extra) -> str:
    return Client(host, "automation").ok("automation_chat", {"playerId": player, "text": text, **extra})["messageId"]


def poll(host, client_id: str, max_messages: int = 0) -> dict:
    params = {"clientId": client_id}
    if max_messages:
        params["maxMessages"] = max_messages
    return Client(host, "admin").ok("chat_poll", params)


def reply(host, client_id: str, mid: str, player: str, text: str = "", done: bool = False, error: str = ""):
    return Client(host, "admin").call(
        "chat_reply", {"id": mid, "playerId": player, "text": text, "done": done, "error": error, "clientId": client_id}
    )


def outbox(host, player: str) -> list[str]:
    return Client(host, "automation").ok("automation_chat_outbox", {"playerId": player})["lines"]


def paused(host) -> bool:
    return httpx.get(f"{host.base_url}/health", timeout=10).json()["paused"]


def test_poll_is_fifo_with_context_and_types(world_host):
    ids = [
        say(world_host, "alice", "build a tower here", position=POS, targetBlock=TARGET),
        say(world_host, "bob", "add windows"),
        say(world_host, "alice", "and a roof"),
    ]
    assert len(set(ids)) == 3
    first = poll(world_host, "bridge-1", max_messages=2)
    assert first["tookOver"] is False
    got = first["messages"]
    assert [m["id"] for m in got] == ids[:2]
    a = got[0]
    assert a["playerId"] == "alice" and a["text"] == "build a tower here" and a["type"] == "prompt"
    assert a["projectId"] == "default" and int(a["atMillis"]) > 0
    assert a["position"] == POS and a["targetBlock"] == TARGET
    assert "position" not in got[1] and "targetBlock" not in got[1]  # unknown: unset
    # leased messages are not handed out again; the rest follow in order
    rest = poll(world_host, "bridge-1")
    assert [m["id"] for m in rest["messages"]] == ids[2:] and rest["tookOver"] is False
    # the player's context sticks with later messages from the same player
    assert rest["messages"][0]["position"] == POS
    assert poll(world_host, "bridge-1")["messages"] == []


def test_cancel_pauses_writes_at_once_without_a_bridge(world_host):
    c = Client(world_host)
    epoch = c.ok("world_info")["epoch"]
    assert paused(world_host) is False
    mid = say(world_host, "alice", "  /AI Stop ")
    assert paused(world_host) is True  # nobody polled: the host paused by itself
    e = c.err(
        "batch_apply",
        {
            "batchId": "chat-c1",
            "worldEpoch": epoch,
            "entries": [{"x": 11, "y": 64, "z": 11, "expected": AIR, "desired": STONE}],
        },
        423,
        "paused",
    )
    assert e["retryable"] is True
    say(world_host, "bob", "stop")
    msgs = poll(world_host, "bridge-1")["messages"]
    assert [(m["id"], m["type"], m["text"]) for m in msgs][0] == (mid, "cancel", "/AI Stop")
    assert msgs[1]["type"] == "cancel"
    # resume is an explicit act (the bridge does it for the owner's next request, or /ai resume)
    c.ok("resume")
    assert apply(c, "chat-c1", [(11, 64, 11, AIR, STONE)], epoch).json()["result"]["status"] == "applied"
    # "stop" inside a sentence is a prompt
    say(world_host, "alice", "stop the tower at y=80")
    assert poll(world_host, "bridge-1")["messages"][0]["type"] == "prompt"
    assert paused(world_host) is False


# One rule on every host (ChatCommands.java / mcb_common.chatcommands): a line is a command only
# when it is exactly one; "stop" is a cancel (the host pauses), other commands are "command".
TYPED = [
    ("stop", "cancel"),
    (" /AI Cancel ", "cancel"),
    ("resume", "command"),
    ("/ai status", "command"),
    ("project create Castle_2", "command"),
    ("project use castle", "command"),
    ("area set 24", "command"),
    ("area set ~-5 60 ~ 10 ~12 -3", "command"),
    ("undo", "command"),
    ("undo op_0123abcd", "command"),
    ("protect pt_ab12 off", "command"),
    ("camera save front-door", "command"),
    ("preview", "command"),
    ("/ai Apply", "command"),
    ("reject", "command"),
    ("apply the wall", "prompt"),
    ("protect pt_ab12 off", "command"),
    ("camera save front-door", "command"),
    ("who", "command"),
    ("/ai WHO ~-2 ~ ~-2 ~2 ~3 ~2", "command"),
    ("who broke my wall", "prompt"),
    ("who 1 2 3", "prompt"),
    ("stop the tower at y=80", "prompt"),
    ("status of the wall", "prompt"),
    ("project create my house", "prompt"),
    ("area set here", "prompt"),
    ("area set 1 2 3", "prompt"),
    ("undo the last wall", "prompt"),
    ("protect tower", "prompt"),
    ("camera save the front", "prompt"),
    ("resume building", "prompt"),
    ("rollback Griefer", "command"),
    ("/ai ROLLBACK griefer SINCE 2H ~-8 60 ~-8 ~8 80 ~8", "command"),
    ("rollback explosion since 30m 16", "command"),
    ("rollback confirm pl_ab12", "prompt"),
    ("rollback the griefer", "prompt"),
    ("rollback Bob since 2 days", "prompt"),
    ("rollback Bob 1 2 3", "prompt"),
]


def test_a_line_is_a_command_only_when_it_is_exactly_one(world_host):
    from mcb_common.chatcommands import message_type

    ids = [say(world_host, "alice", text) for text, _ in TYPED]
    c = Client(world_host)
    c.ok("resume")  # the stops above paused writes
    got = {m["id"]: (m["type"], m["text"]) for m in poll(world_host, "bridge-1", max_messages=100)["messages"]}
    assert [got[i] for i in ids] == [(want, text.strip()) for text, want in TYPED]
    assert [message_type(text) for text, _ in TYPED] == [want for _, want in TYPED]


def test_reply_goes_to_the_initiator_only_from_the_lease_holder(world_host):
    mid = say(world_host, "alice", "build a wall")
    pending = say(world_host, "bob", "hello")
    (m,) = poll(world_host, "bridge-1", max_messages=1)["messages"]
    assert m["id"] == mid
    # another client (without polling, so no takeover) may not answer
    r = reply(world_host, "bridge-2", mid, "alice", "hijack")
    assert r.status_code == 403 and r.json()["error"]["code"] == "permission_denied"
    # replies go only to the initiator
    r = reply(world_host, "bridge-1", mid, "bob", "psst")
    assert r.status_code == 403 and r.json()["error"]["code"] == "permission_denied"
    # unknown ids and messages not polled yet are not leased
    r = reply(world_host, "bridge-1", "msg-nope", "alice", "x")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    r = reply(world_host, "bridge-1", pending, "bob", "x")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    r = reply(world_host, "bridge-1", mid, "alice", "inspecting the area")
    assert r.status_code == 200 and r.json()["result"] == {"delivered": True}
    r = reply(world_host, "bridge-1", mid, "alice", "planned 40 blocks\napplying 50%")
    assert r.json()["result"]["delivered"] is True
    r = reply(world_host, "bridge-1", mid, "alice", "", done=True, error="conflict at 1,64,2")
    assert r.json()["result"]["delivered"] is True
    assert outbox(world_host, "alice") == [
        "inspecting the area",
        "planned 40 blocks",
        "applying 50%",
        "[ai] error: conflict at 1,64,2",
    ]
    assert outbox(world_host, "bob") == []
    # done ended the lease
    r = reply(world_host, "bridge-1", mid, "alice", "again")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    # an empty done reply ends a lease silently
    (m2,) = poll(world_host, "bridge-1")["messages"]
    assert reply(world_host, "bridge-1", m2["id"], "bob", done=True).json()["result"] == {"delivered": False}
    assert outbox(world_host, "bob") == []


def test_reply_lines_are_capped_and_cleaned(world_host):
    mid = say(world_host, "carol", "go")
    poll(world_host, "bridge-1")
    assert reply(world_host, "bridge-1", mid, "carol", "x" * 300 + "\n\u00a7cred\x07 text").status_code == 200
    lines = outbox(world_host, "carol")
    assert len(lines[0]) == 256 and lines[0].endswith("…") and lines[0].startswith("x" * 255)
    assert lines[1] == "cred text"
    r = reply(world_host, "bridge-1", mid, "carol", "1\n2\n3\n4\n5")
    assert r.status_code == 413 and r.json()["error"]["code"] == "budget_exceeded"
    r = reply(world_host, "bridge-1", mid, "carol", "y" * 5000)
    assert r.status_code == 413 and r.json()["error"]["code"] == "budget_exceeded"
    assert len(outbox(world_host, "carol")) == 2


def test_reply_rate_limit_four_lines_per_second_per_player(world_host):
    a = say(world_host, "dave", "one")
    b = say(world_host, "erin", "two")
    poll(world_host, "bridge-1")
    t0 = time.monotonic()
    assert reply(world_host, "bridge-1", a, "dave", "l1\nl2\nl3\nl4").status_code == 200
    r = reply(world_host, "bridge-1", a, "dave", "l5", done=True)
    elapsed = time.monotonic() - t0
    if elapsed < 0.9:
        body = r.json()
        assert r.status_code == 429 and body["error"]["code"] == "busy", body
        assert body["error"]["retryable"] is True
        assert 0 < body["error"]["details"]["retryAfterMillis"] <= 1000
        # refused means nothing shown and the lease kept: it can be retried
        assert outbox(world_host, "dave") == ["l1", "l2", "l3", "l4"]
        # another player has a budget of their own
        assert reply(world_host, "bridge-1", b, "erin", "hi").status_code == 200
        time.sleep(1.05)
        r = reply(world_host, "bridge-1", a, "dave", "l5", done=True)
    assert r.status_code == 200, r.json()
    assert outbox(world_host, "dave")[-1] == "l5"


def test_new_client_takes_over_pauses_and_fails_leased_messages(world_host):
    c = Client(world_host)
    epoch = c.ok("world_info")["epoch"]
    leased = say(world_host, "alice", "build a bridge over the river")
    poll(world_host, "bridge-old")
    waiting = say(world_host, "bob", "paint it red")
    assert paused(world_host) is False
    res = poll(world_host, "bridge-new")
    assert res["tookOver"] is True
    assert [m["id"] for m in res["messages"]] == [waiting]  # the unleased one goes to the new bridge
    assert paused(world_host) is True
    c.err(
        "batch_apply",
        {
            "batchId": "chat-t1",
            "worldEpoch": epoch,
            "entries": [{"x": 12, "y": 64, "z": 12, "expected": AIR, "desired": STONE}],
        },
        423,
        "paused",
    )
    (notice,) = outbox(world_host, "alice")
    assert notice.startswith("[ai] ") and "bridge restarted" in notice and "build a bridge" in notice
    assert outbox(world_host, "bob") == []
    # the failed message is not replayed and the old client cannot answer it any more
    r = reply(world_host, "bridge-old", leased, "alice", "done!", done=True)
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    r = reply(world_host, "bridge-old", waiting, "bob", "x")
    assert r.status_code == 403 and r.json()["error"]["code"] == "permission_denied"
    assert reply(world_host, "bridge-new", waiting, "bob", "on it", done=True).status_code == 200
    assert poll(world_host, "bridge-new") == {"messages": [], "tookOver": False}
    c.ok("resume")
    assert paused(world_host) is False


def test_player_context(world_host):
    for principal in ("service", "admin"):
        res = Client(world_host, principal).ok("player_context", {"playerId": "nobody"})
        assert res["playerId"] == "nobody" and res["online"] is False
        assert "position" not in res and "targetBlock" not in res
    say(world_host, "frank", "hi", position=POS, targetBlock=TARGET)
    res = Client(world_host).ok("player_context", {"playerId": "frank"})
    assert res["online"] is True and res["position"] == POS and res["targetBlock"] == TARGET
    Client(world_host).err("player_context", {}, 400, "invalid_request")


def test_chat_scopes_and_validation(world_host):
    svc, admin, auto = Client(world_host), Client(world_host, "admin"), Client(world_host, "automation")
    for method, params in (
        ("chat_poll", {"clientId": "b"}),
        ("chat_reply", {"id": "m", "playerId": "p", "clientId": "b"}),
    ):
        svc.err(method, params, 403, "permission_denied")
        auto.err(method, params, 403, "permission_denied")
        svc.err(method, params, 401, "unauthenticated", token=world_host.tokens["agent"])
    auto.err("player_context", {"playerId": "p"}, 403, "permission_denied")
    admin.err("automation_chat_outbox", {"playerId": "p"}, 403, "permission_denied")
    admin.err("chat_poll", {}, 400, "invalid_request")
    admin.err("chat_poll", {"clientId": "x" * 201}, 400, "invalid_request")
    admin.err("chat_reply", {"id": "", "playerId": "p", "clientId": "b"}, 400, "invalid_request")
    auto.err("automation_chat", {"playerId": "p", "text": "x" * 5000}, 413, "budget_exceeded")
    auto.err("automation_chat", {"playerId": "p", "text": "   "}, 400, "invalid_request")
    admin.err("chat_poll", {"clientId": "b", "colour": 1}, 400, "invalid_request")


def test_outbox_needs_local_automation(world_host_no_automation):
    auto = Client(world_host_no_automation, "automation")
    auto.err("automation_chat_outbox", {"playerId": "p"}, 403, "permission_denied")
    # chat itself works without automation (the real server's players type /ai)
    assert Client(world_host_no_automation, "admin").ok("chat_poll", {"clientId": "b"})["messages"] == []
