"""Issue 12 item 6: disk full tells the truth.

On a real, small tmpfs (skipped where it cannot be mounted): the agent is told ``unavailable``
with "disk full" (never ``internal``), an apply that runs out of space mid-way ends
``recovery_required`` — recorded as soon as there is room again, reported at once — nothing is
half-written (the journal stays consistent, every written block is recorded, the world outside
the operation's mask is untouched), and review/abandon settles it once space is freed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid

import anyio
import pytest
from e2e.components import run, start_components
from e2e.mcpclient import ToolError, call, wait_terminal
from hardening.diskfull import fill, free, tmpfs

DISK_FULL = re.compile(r"disk (is )?full")


def box(x0, y0, z0, x1, y1, z1, block):
    return {
        "version": 1,
        "operations": [
            {"type": "box", "min": {"x": x0, "y": y0, "z": z0}, "max": {"x": x1, "y": y1, "z": z1}, "block": block}
        ],
    }


def admin(comp, *args):
    env = comp.env | {"MCB_JOURNAL_ADDR": f"127.0.0.1:{comp.ports['journal_grpc']}"}
    out = subprocess.run(
        [sys.executable, "-m", "mcb_cli.main", *args], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture
def journal_on_tmpfs(tmp_path):
    runtime = tmp_path / "rt"
    with tmpfs(runtime / "journal", "8m") as jdir:
        comp = start_components(runtime)
        try:
            yield comp, jdir
        finally:
            comp.stop_all()


def test_journal_disk_full_is_unavailable_and_recovery_required(journal_on_tmpfs):
    comp, jdir = journal_on_tmpfs
    held: dict = {}

    async def full_refusals(client):
        held["plan"] = await call(
            client, "build_prepare", {"recipe": box(-60, 70, -60, -45, 109, -51, "minecraft:andesite")}
        )  # 6400 blocks
        fill(jdir)
        for name, args in (
            ("build_prepare", {"recipe": box(0, 70, 0, 3, 70, 3, "minecraft:stone")}),
            (
                "build_apply",
                {
                    "plan_id": held["plan"]["plan_id"],
                    "plan_hash": held["plan"]["plan_hash"],
                    "idempotency_key": "k-full",
                },
            ),
        ):
            with pytest.raises(ToolError) as exc:
                await call(client, name, args)
            assert exc.value.error["code"] == "unavailable", (name, exc.value.error)
            assert DISK_FULL.search(exc.value.error["message"]), (name, exc.value.error)
        free(jdir)
        # room again: the same key now applies (nothing of the refused call was recorded)
        free_some = 48 * 1024
        op = await call(
            client,
            "build_apply",
            {"plan_id": held["plan"]["plan_id"], "plan_hash": held["plan"]["plan_hash"], "idempotency_key": "k-full"},
        )
        assert not op.get("replayed")
        fill(jdir, leave=free_some)  # runs out part-way through the 13 batches
        held["op"] = op["operation_id"]
        st = await wait_terminal(client, op["operation_id"], timeout=120)
        held["st"] = st

    run(comp, full_refusals)
    st = held["st"]
    assert st["state"] == "recovery_required", st
    assert st["error"]["code"] == "unavailable" and DISK_FULL.search(st["error"]["message"]), st
    free(jdir)

    async def after(client):
        with anyio.fail_after(30):  # the verdict is written to disk once there is room
            while True:
                ctx = await call(client, "project_context")
                if any(o["operation_id"] == held["op"] for o in ctx["needs_attention"]):
                    break
                await anyio.sleep(0.2)

    run(comp, after)
    # the journal process restarts cleanly: its database is whole (integrity check at start)
    comp.procs["journal"].stop()
    comp.start("journal")
    review = admin(comp, "recovery", "review", held["op"])
    assert review["foreign_states"] == 0
    assert review["matches_before"] + review["matches_after"] == review["positions"]
    assert review["matches_after"] >= st["written"]
    # at most two requests are uncertain: the answered one whose completions could not be committed
    # and the one the pipeline had in flight meanwhile (sent: its intents were on disk before) — a
    # request is a group of up to 8 batches (batch_apply_many, MCB_JOURNAL_BATCHES_PER_REQUEST)
    assert review["positions"] - st["written"] <= 2 * 8 * 512
    # outside the mask: untouched (the batches after the failure were never sent)
    got = comp.world_rpc("region_read", {"min": {"x": -60, "y": 70, "z": -60}, "max": {"x": -45, "y": 109, "z": -51}})
    import array
    import base64

    idx = array.array("H")
    idx.frombytes(base64.b64decode(got["indices"]))
    andesite = sum(1 for i in idx if got["palette"][i] == "minecraft:andesite")
    assert andesite == review["matches_after"], (andesite, review)
    done = admin(comp, "recovery", "abandon", held["op"], "--digest", review["current_digest"])
    assert done["state"] == "failed"

    async def unblocked(client):
        plan = await call(client, "build_prepare", {"recipe": box(0, 120, 0, 1, 120, 1, "minecraft:stone")})
        op = await call(
            client,
            "build_apply",
            {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": str(uuid.uuid4())},
        )
        assert (await wait_terminal(client, op["operation_id"]))["state"] == "applied"

    run(comp, unblocked)


@pytest.fixture
def world_on_tmpfs(tmp_path):
    runtime = tmp_path / "rt"
    with tmpfs(runtime / "world", "16m") as wdir:
        comp = start_components(runtime)
        try:
            comp.procs["journal"].stop()  # give up on a host that keeps refusing after 1 s, not 60
            comp.start("journal", {"MCB_LINK_RETRY_SECONDS": "1"})
            yield comp, wdir
        finally:
            comp.stop_all()


def test_world_host_disk_full_mid_apply(world_on_tmpfs):
    """The embedded world host's disk fills during an apply: each batch is rolled back whole and
    refused as unavailable "disk full"; the journal stops the operation (recovery_required with
    that error) instead of writing on; nothing outside the confirmed batches changed."""
    comp, wdir = world_on_tmpfs
    held: dict = {}

    async def apply(client):
        plan = await call(client, "build_prepare", {"recipe": box(-64, 200, -64, -1, 219, -1, "minecraft:stone")})
        held["plan"] = plan  # 64 x 20 x 64 = 81,920 blocks over 16 chunks' fresh sections
        fill(wdir, leave=64 * 1024)
        op = await call(
            client,
            "build_apply",
            {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": str(uuid.uuid4())},
        )
        held["st"] = await wait_terminal(client, op["operation_id"], timeout=180)

    run(comp, apply)
    st = held["st"]
    assert st["state"] == "recovery_required", st
    assert st["error"]["code"] == "unavailable" and DISK_FULL.search(st["error"]["message"]), st
    assert st["written"] < held["plan"]["changed_blocks"]
    free(wdir)
    comp.procs["world-host"].stop()  # a restart rolls back a batch the host could not (if any)
    comp.start("world-host")
    review = admin(comp, "recovery", "review", st["operation_id"])
    assert review["foreign_states"] == 0
    assert review["matches_before"] + review["matches_after"] == review["positions"]
    assert review["matches_after"] == st["written"]  # the refused batch wrote nothing
    done = admin(comp, "recovery", "abandon", st["operation_id"], "--digest", review["current_digest"])
    assert done["state"] == "failed"
