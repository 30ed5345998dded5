"""In-game commands in the chat loop (chat/commands.py, chat/projects.py): the fake host of
test_chat.py, a real Redis and the scripted ACP agent; the journal and camera worker are a recording
fake here (tests/e2e/test_chat_e2e.py runs the same commands against the real services)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcb.camera.v1 import camera_pb2
from mcb.common.v1 import common_pb2
from mcb.journal.v1 import journal_pb2
from mcb.world.v1 import world_pb2
from mcb_bridge.chat.loop import ChatLoop
from mcb_bridge.chat.projects import ProjectError, ProjectRegistry
from mcb_common.chatcommands import Command, parse
from mcb_common.errors import ErrorCode, McbError
from test_chat import FakeHost, make_cfg, run_loop, wait_for

HERE = world_pb2.PlayerPosition(x=1000.5, y=70, z=-2000.2, yaw=45, pitch=10, world="world")
HERE_P1 = world_pb2.PlayerPosition(x=-63.5, y=70, z=-64.2, yaw=0, pitch=0, world="world")  # p1's corner


class FakeServices:
    """The journal/camera calls of commands.py, recorded; undo applies after two status polls."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.recent = [
            journal_pb2.OperationBrief(operation_id="op_new", state="failed", written=0),
            journal_pb2.OperationBrief(operation_id="op_last", state="applied", written=7),
            journal_pb2.OperationBrief(operation_id="op_old", state="applied", written=3),
        ]
        self.parts = {"p1": {"pt_aa"}}
        self.polls = 0

    async def recent_operations(self, project, player):
        self.calls.append(("recent", project, player))
        return self.recent

    async def undo_prepare(self, project, player, op):
        self.calls.append(("undo_prepare", project, player, op))
        return journal_pb2.PlanSummary(
            plan_id="pl_1",
            plan_hash="h",
            changed_blocks=6,
            conflicts=[journal_pb2.Conflict(pos=common_pb2.Vec3(x=1, y=64, z=2), source="player")],
        )

    async def apply(self, project, player, plan, key, replace_player_blocks=False):
        self.calls.append(
            ("apply", project, player, plan.plan_id, key) + (("consent",) if replace_player_blocks else ())
        )
        return journal_pb2.OperationReport(operation_id="op_undo", state="queued")

    async def note_prompt(self, project, player, ops, prompt):
        self.calls.append(("note_prompt", project, player, tuple(ops), prompt))
        return len(ops)

    async def plan_entries(self, project, player, plan_id):
        self.calls.append(("plan_entries", project, player, plan_id))
        return journal_pb2.PlanEntriesResponse(plan_id=plan_id)

    async def rollback_prepare(self, project, player, lo, hi, target, cause, since_ms):
        self.calls.append(("rollback_prepare", project, player, lo, hi, target, cause, since_ms))
        if target == "nobody":
            return journal_pb2.PlanSummary(plan_id="pl_0", plan_hash="h0")
        return journal_pb2.PlanSummary(
            plan_id="pl_rb",
            plan_hash="hr",
            changed_blocks=5,
            expires_at="2026-12-02T16:00:00Z",
            conflicts=[
                journal_pb2.Conflict(pos=common_pb2.Vec3(x=1, y=64, z=2), source="player"),
                journal_pb2.Conflict(pos=common_pb2.Vec3(x=3, y=64, z=2), source="external"),
            ],
            replaced=journal_pb2.ReplacedBlocks(
                total=2, by_source=[journal_pb2.ReplacedBySource(source="player", count=2)]
            ),
        )

    async def status(self, project, player, op):
        self.polls += 1
        state = "applied" if self.polls >= 2 else "applying"
        return journal_pb2.OperationReport(operation_id=op, state=state, written=6 if state == "applied" else 2)

    async def cancel(self, project, player, op):
        self.calls.append(("cancel", project, player, op))
        return journal_pb2.OperationReport(operation_id=op, state="cancelled")

    async def part_get(self, project, player, part):
        if part not in self.parts.get(project, set()):
            raise McbError(ErrorCode.NOT_FOUND, f"part {part!r} not found in project {project!r}")
        return "{}"

    async def part_protect(self, project, part, protected):
        self.calls.append(("protect", project, part, protected))

    async def region_history(self, project, player, lo, hi):
        import time

        self.calls.append(("history", project, player, lo, hi))
        now = int(time.time() * 1000)
        e = journal_pb2.HistoryEntry
        return journal_pb2.RegionHistoryResponse(
            complete=lo == hi,
            entries=[]
            if lo[0] > 50
            else [
                e(
                    pos=common_pb2.Vec3(x=lo[0], y=lo[1], z=lo[2]),
                    source="player",
                    player_name="Griefer",
                    before="minecraft:stone",
                    after="minecraft:air",
                    at_millis=now - 30_000,
                ),
                e(
                    pos=common_pb2.Vec3(x=lo[0], y=lo[1], z=lo[2]),
                    source="environment",
                    cause="explosion",
                    before="minecraft:oak_planks",
                    after="minecraft:stone",
                    at_millis=now - 600_000,
                ),
                e(
                    pos=common_pb2.Vec3(x=lo[0], y=lo[1], z=lo[2]),
                    source="ours",
                    operation_id="op_7",
                    before="minecraft:air",
                    after="minecraft:oak_planks[axis=y]",
                    at_millis=now - 4 * 3_600_000,
                ),
            ],
        )

    async def camera_save(self, project, player, cam):
        self.calls.append(("camera", project, player, cam.camera_id))
        out = camera_pb2.CameraInfo()
        out.CopyFrom(cam)
        return out


def asker(host: FakeHost):
    """``ask(player, text, **context)``: say a line as the player, wait for its final answer."""

    async def ask(player: str, text: str, **extra) -> str:
        mid = host.say(player, text, **extra)
        await wait_for(lambda: host.done(mid), 30, text)
        return host.final(mid)

    return ask


def write_config(tmp: Path) -> Path:
    cfg = tmp / "config.json"
    cfg.write_text(
        json.dumps(
            {
                "comment": "kept",
                "projects": [
                    {
                        "project_id": "p1",
                        "name": "P1",
                        "owner_player_id": "alice",
                        "area": {"min": {"x": -64, "y": -64, "z": -64}, "max": {"x": 63, "y": 319, "z": 63}},
                    },
                    {
                        "project_id": "p2",
                        "name": "P2",
                        "owner_player_id": "carol",
                        "area": {"min": {"x": 200, "y": -64, "z": 200}, "max": {"x": 263, "y": 319, "z": 263}},
                    },
                ],
            }
        )
    )
    return cfg


def test_projects_are_created_chosen_and_moved_by_their_owners(tmp_path: Path, redis_url: str) -> None:
    conf = write_config(tmp_path)
    cfg = make_cfg(tmp_path, redis_url)

    async def scenario(loop: ChatLoop, host: FakeHost) -> None:
        ask = asker(host)

        assert "needs your position" in await ask("bob", "project create castle")
        made = await ask("bob", "project create castle", position=HERE)
        assert made.startswith("project castle created, area x 968..1032, y -64..319, z -2033..-1969"), made
        # bob's requests now go to castle (the agent runs for that project)
        hello = host.say("bob", "hello")
        await wait_for(lambda: host.done(hello), 30, "bob's turn")
        assert host.final(hello) == "echo: hello" and "castle" in loop.agents
        # others may neither use nor overlap it; names are unique (any case)
        assert "belongs to another player" in await ask("alice", "project use castle")
        assert "no project 'nope'" in await ask("alice", "project use nope")
        assert "exists already" in await ask("carol", "project create CASTLE", position=HERE)
        near = world_pb2.PlayerPosition(x=1040, y=70, z=-2000)
        assert "overlaps project 'castle'" in await ask("carol", "project create keep", position=near)
        # area set: around the player, or two corners (~ relative), validated
        assert (
            await ask("bob", "area set 10", position=HERE)
            == "area of project castle is now x 990..1010, y -64..319, z -2011..-1991"
        )
        assert "radius must be 1..128" in await ask("bob", "area set 500")
        assert "y must stay inside the world (-64..319)" in await ask("bob", "area set 0 0 0 5 400 5")
        assert "at most 512 blocks wide" in await ask("bob", "area set 0 0 0 600 10 5")
        assert (
            await ask("bob", "area set ~-2 ~ ~3 1010 80 -1990", position=HERE)
            == "area of project castle is now x 998..1010, y 70..80, z -1998..-1990"
        )
        assert "belongs to another player" in await ask("carol", "project use p1")
        # alice still builds in p1: the host's project unless she chose another
        assert (await ask("alice", "status")).startswith("project p1 (yours); writes running; running: nothing")
        assert (await ask("bob", "status")).startswith("project castle (yours)")

    run_loop(cfg, scenario, services=FakeServices())
    doc = json.loads(conf.read_text())
    assert doc["comment"] == "kept"
    castle = next(p for p in doc["projects"] if p["project_id"] == "castle")
    assert castle["owner_player_id"] == "bob"
    assert castle["area"] == {"min": {"x": 998, "y": 70, "z": -1998}, "max": {"x": 1010, "y": 80, "z": -1990}}
    assert [p["project_id"] for p in doc["projects"]] == ["p1", "p2", "castle"]
    assert json.loads((cfg.state_dir / "players.json").read_text()) == {"bob": "castle"}


def test_undo_protect_and_camera_go_to_the_services_for_the_owner_only(tmp_path: Path, redis_url: str) -> None:
    write_config(tmp_path)
    cfg = make_cfg(tmp_path, redis_url)
    services = FakeServices()

    async def scenario(loop: ChatLoop, host: FakeHost) -> None:
        ask = asker(host)

        undo = host.say("alice", "undo")
        await wait_for(lambda: host.done(undo), 30, "undo")
        assert host.texts(undo)[0] == "undoing op_last: 6 blocks to restore"
        assert host.final(undo) == (
            "undone op_last: 6 blocks restored; 1 block(s) changed since were left as they are (player at 1 64 2)"
        )
        assert ("undo_prepare", "p1", "alice", "op_last") in services.calls
        assert ("apply", "p1", "alice", "pl_1", f"chat-undo-{undo}") in services.calls
        assert "belongs to another player" in await ask("bob", "undo op_last")
        status = host.say("alice", "status")
        await wait_for(lambda: host.done(status), 30, "status")
        assert host.final(status).split("\n")[1] == (
            "recent operations: op_new failed (0 blocks), op_last applied (7 blocks), op_old applied (3 blocks)"
        )
        assert await ask("alice", "protect pt_aa") == "part pt_aa is protected: the AI can no longer change it"
        assert await ask("alice", "protect pt_aa off") == "part pt_aa is no longer protected"
        assert "not found in project 'p1'" in await ask("alice", "protect pt_bb")
        assert ("protect", "p1", "pt_aa", True) in services.calls and (
            "protect",
            "p1",
            "pt_aa",
            False,
        ) in services.calls
        assert not any(c[0] == "protect" and c[2] == "pt_bb" for c in services.calls)
        assert "needs your position" in await ask("alice", "camera save front")
        saved = await ask("alice", "camera save front", position=HERE)
        assert saved.startswith("camera front saved at 1000.5 71.6 -2000.2 (yaw 45, pitch 10)"), saved
        assert "belongs to another player" in await ask("carol", "camera save front", project="p1", position=HERE)

    run_loop(cfg, scenario, services=services)


def test_who_answers_for_the_block_looked_at_or_a_box(tmp_path: Path, redis_url: str) -> None:
    """Issue 32: `/ai who` asks the journal's region_history about the target block the host sent (or a
    box, ~ relative to the player) and answers in lines a player reads."""
    write_config(tmp_path)
    cfg = make_cfg(tmp_path, redis_url)
    services = FakeServices()

    async def scenario(loop: ChatLoop, host: FakeHost) -> None:
        ask = asker(host)

        looked = world_pb2.TargetBlock(x=2, y=64, z=-3, state="minecraft:air")
        text = await ask("alice", "/ai who", target_block=looked)
        assert text.split("\n") == [
            "changes at 2 64 -3, newest first:",
            "Griefer broke stone at 2 64 -3, 30 s ago",
            "explosion changed oak_planks to stone at 2 64 -3, 10 min ago",
            "the AI (op_7) placed oak_planks at 2 64 -3, 4 h ago",
        ], text
        assert ("history", "p1", "alice", (2, 64, -3), (2, 64, -3)) in services.calls
        box = await ask("alice", "who ~-1 ~ ~ ~1 ~2 ~1", position=HERE)
        assert ("history", "p1", "alice", (999, 70, -2001), (1001, 72, -2000)) in services.calls
        assert box.startswith("no recorded changes at 999 70 -2001 .. 1001 72 -2000"), box
        assert "look at a block" in await ask("alice", "who")
        assert "at most 64 blocks a side" in await ask("alice", "who 0 0 0 100 1 1")
        assert "belongs to another player" in await ask("bob", "who", target_block=looked)

    run_loop(cfg, scenario, services=services)


def test_a_players_own_stop_ends_only_their_requests_and_does_not_pause(tmp_path: Path, redis_url: str) -> None:
    write_config(tmp_path)
    cfg = make_cfg(tmp_path, redis_url)
    services = FakeServices()

    async def scenario(loop: ChatLoop, host: FakeHost) -> None:
        slow = host.say("alice", "slow build")
        await wait_for(lambda: "p1" in loop.active and loop.active["p1"].prompt_sent, 30, "alice's turn")
        loop.active["p1"].operations.append("op_running")  # as the progress stream reports it
        waiting = host.say("bob", "add a door")
        await wait_for(lambda: any("queued" in t for t in host.texts(waiting)), 10, "bob queued")
        # bob (no right to stop everything: the host sends "command") stops only his own request
        bobs = host.say("bob", "stop", type_="command")
        await wait_for(lambda: host.done(bobs) and host.done(waiting), 10, "bob's stop")
        assert host.final(bobs) == "nothing of yours was running"
        assert host.final(waiting) == "cancelled by your /ai stop"
        assert not host.done(slow) and not loop.active["p1"].cancelled
        alices = host.say("alice", "/ai stop", type_="command")
        await wait_for(lambda: host.done(alices) and host.done(slow), 10, "alice's stop")
        assert host.final(alices) == "stopped your request"
        assert host.final(slow).startswith("stopped")
        assert ("cancel", "p1", "alice", "op_running") in services.calls
        assert host.paused is False and host.resumes == []

    run_loop(cfg, scenario, services=services)


def test_registry_keeps_other_keys_and_refuses_bad_configs(tmp_path: Path) -> None:
    conf = tmp_path / "config.json"
    reg = ProjectRegistry(conf, tmp_path / "chat", {"legacy": "zed"})
    assert reg.owner("legacy") == "zed" and reg.current("zed", "default") == "default"
    reg.create("a", "ann", ((0, 0, 0), (9, 9, 9)))
    with pytest.raises(ProjectError, match="exists already"):
        reg.create("legacy", "ann", ((100, 0, 0), (109, 9, 9)))
    with pytest.raises(ProjectError, match="overlaps project 'a'"):
        reg.create("b", "ben", ((5, 5, 5), (20, 20, 20)))
    reg.create("b2", "ann", ((5, 5, 5), (20, 20, 20)))  # the same owner's projects may overlap
    conf.write_text("{not json")
    with pytest.raises(ProjectError, match="not valid JSON"):
        reg.create("c", "cy", ((500, 0, 0), (509, 9, 9)))
    assert conf.read_text() == "{not json", "a refused change writes nothing"


def test_the_bridge_parses_what_the_host_marked_as_a_command() -> None:
    assert parse("undo op_1") == Command("undo", ("op_1",))
    assert parse("area set ~ ~ ~ 1 2 3") == Command("area set", ("~", "~", "~", "1", "2", "3"))
    assert parse("undo everything") is None


def test_an_unwritable_config_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    (tmp_path / "not-a-dir").write_text("")  # unwritable for any user, root included
    reg = ProjectRegistry(tmp_path / "not-a-dir" / "config.json", tmp_path / "chat")
    with pytest.raises(ProjectError, match="cannot lock .*config.json.lock .*where the chat loop may write"):
        reg.create("a", "ann", ((0, 0, 0), (9, 9, 9)))


def test_area_set_outside_the_world_is_refused_before_the_config_is_written() -> None:
    # one such area in config.json would keep every project from loading in the journal
    from mcb_bridge.chat.commands import area_from_args
    from mcb_bridge.chat.projects import ProjectError

    with pytest.raises(ProjectError, match="outside the world"):
        area_from_args(("99999000", "0", "0", "99999100", "10", "10"), {}, -64, 319)
    assert area_from_args(("0", "0", "0", "10", "10", "10"), {}, -64, 319) == ((0, 0, 0), (10, 10, 10))


def test_the_journal_is_asked_with_this_stacks_admin_token_never_the_world_hosts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcb_bridge.chat.config import load_chat_config
    from mcb_rpc.settings import Settings

    for k in (
        "MCB_ADMIN_TOKEN",
        "MCB_AGENT_TOKEN",
        "MCB_SERVICE_TOKEN",
        "MCB_WORLD_HOST_URL",
        "MCB_CONFIG",
        "MCB_SECRETS_DIR",
    ):
        monkeypatch.delenv(k, raising=False)
    stack, plugin = tmp_path / "rt" / "secrets", tmp_path / "plugin"
    stack.mkdir(parents=True)
    plugin.mkdir()
    for d, who in ((stack, "stack"), (plugin, "plugin")):
        for p in ("admin", "service"):
            (d / f"{p}.token").write_text(f"{who}-{p}\n")
    (stack / "agent.token").write_text("stack-agent\n")
    monkeypatch.setenv("MCB_RUNTIME_DIR", str(tmp_path / "rt"))
    monkeypatch.setenv("MCB_WORLD_HOST_TOKEN_FILE", str(plugin / "service.token"))
    cfg = load_chat_config(Settings.from_env())
    assert cfg.admin_token == "plugin-admin"  # chat_poll / chat_reply on the Paper server
    assert cfg.journal_admin_token == "stack-admin"  # part protection in this stack's journal
    (plugin / "admin.token").unlink()
    with pytest.raises(Exception, match="beside the world host's service token file"):
        load_chat_config(Settings.from_env())


def test_rollback_is_offered_then_applied_with_consent_by_the_owner_only(tmp_path: Path, redis_url: str) -> None:
    """Issue 32 item 4: `/ai rollback` prepares (nothing written) and says what it restores and which later
    changes by others it leaves and who made them; the plan becomes the player's pending plan, and `/ai apply`
    applies exactly that plan with replace_player_blocks (their consent). Only the project's owner may."""
    import time

    write_config(tmp_path)
    cfg = make_cfg(tmp_path, redis_url)
    services = FakeServices()

    def prepared() -> tuple:
        return [c for c in services.calls if c[0] == "rollback_prepare"][-1]

    async def no_previews(params):  # as the embedded host answers chat_preview
        raise McbError(ErrorCode.INVALID_REQUEST, "no players", details={"reason": "no_previews"})

    async def scenario(loop: ChatLoop, host: FakeHost) -> None:
        host.chat_preview = no_previews
        ask = asker(host)
        t0 = int(time.time() * 1000)
        offer = await ask("alice", "/ai rollback Griefer since 2h")
        assert offer.split("\n") == [
            "rollback of player Griefer since 2h ago in x -64..63, y -64..319, z -64..63: 5 block(s) to restore",
            "2 block(s) changed since by others stay as they are: Griefer at 1 64 2, an unrecorded change at 3 64 2",
            "plan pl_rb: 5 blocks to change, not built yet. (This world host cannot show it in game.) /ai apply "
            "builds it, /ai reject drops it. It replaces 2 block(s) placed by players: /ai apply agrees to that.",
        ], offer
        assert prepared()[1:7] == ("p1", "alice", (-64, -64, -64), (63, 319, 63), "Griefer", "")
        assert abs(prepared()[7] - (t0 - 2 * 3_600_000)) < 5_000
        assert not any(c[0] == "apply" for c in services.calls), "an offer writes nothing"
        # an environment cause, R blocks around the player (clipped to the area), the default 24 h
        await ask("alice", "rollback EXPLOSION 10", position=HERE_P1)
        assert prepared()[3:7] == ((-64, -64, -64), (-54, 319, -55), "", "explosion")
        assert abs(prepared()[7] - (t0 - 86_400_000)) < 5_000
        assert (await ask("alice", "rollback Griefer since 30d ~-1 ~ ~-1 ~1 ~1 ~1", position=HERE_P1)).startswith(
            "rollback of player Griefer since 30d ago in x -65..-63, y 70..71, z -66..-64: "
        )
        assert prepared()[3:5] == ((-65, 70, -66), (-63, 71, -64))
        assert "since is 1s .. 30d, got 31d" in await ask("alice", "rollback Griefer since 31d")
        assert (await ask("alice", "rollback nobody")).endswith(": nothing to restore")
        # others may not prepare one
        n = len(services.calls)
        assert "belongs to another player" in await ask("bob", "rollback alice")
        assert len(services.calls) == n
        assert "no plan of yours is waiting" in await ask("bob", "apply")
        assert not any(c[0] == "apply" for c in services.calls)
        # alice's pending plan is the last offered with a change: the rollback; apply it
        done = host.say("alice", "apply")
        await wait_for(lambda: host.done(done), 30, "apply")
        assert host.final(done) == "done: 6 blocks placed", host.texts(done)
        assert ("apply", "p1", "alice", "pl_rb", f"chat-apply-{done}", "consent") in services.calls
        assert "no plan of yours is waiting" in await ask("alice", "apply"), "applied once"

    run_loop(cfg, scenario, services=services)
