"""The journal's typed answers (journal messages.py -> proto -> bridge render.py) give the agent
exactly the documents it got when they travelled as JSON strings converted by ``snake_keys``:
same keys, values and order, and the change feed's pages the size the journal measured.

The documents come from the journal's and the library's own builders where they are pure
(feed.page_of, AssetLibrary on a temporary folder), else in the builders' exact shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcb.journal.v1 import journal_pb2 as jpb
from mcb_bridge import render
from mcb_common import schematic as S
from mcb_common.assets import AssetLibrary
from mcb_journal import blame, feed, messages


def before(doc: dict) -> str:
    """What the bridge answered when the journal sent JSON: snake_keys over the parsed text
    (the library's entries were camelCase then: assetId, blockCount, ...)."""
    return render.dumps(render.snake_keys(json.loads(json.dumps(doc))))


def over_the_wire(msg):
    return type(msg).FromString(msg.SerializeToString())


def rows() -> list[dict]:
    out = []
    for oid, (x, src, op) in enumerate(
        [(1, "ours", "op_a"), (2, "player", ""), (3, "environment", ""), (4, "ours", "op_b"), (5, "player", "")],
        start=10,
    ):
        out.append(
            {
                "oid": oid,
                "x": x,
                "y": 64,
                "z": -3,
                "before": "minecraft:air",
                "after": f"minecraft:s{x}",
                "source": src,
                "op_id": op or None,
            }
        )
    return out


def head(source: str, selected: list[dict], parts: int) -> dict:
    h: dict = {"changes": len(selected), "by_source": {"player": 2, "environment": 1, "ours": 2}}
    if source:
        h["source"] = source
    h["bounding_box"] = feed._bounds(selected)
    h["affected_parts"] = [{"part_id": f"pt_{i}", "name": f"p{i}", "changes": 1} for i in range(min(parts, 20))]
    if parts > 20:
        h["affected_parts_omitted"] = parts - 20
    return h


@pytest.mark.parametrize("source,parts,limit", [("", 0, 100), ("foreign", 3, 2), ("player", 25, 1), ("ours", 1, 100)])
def test_change_feed_pages_are_unchanged(source, parts, limit):
    rs = rows()
    selected = [r for r in rs if r["source"] in feed.FILTERS[source]]
    doc = feed.page_of(
        rs, source, 0, 0, head(source, selected, parts), limit, 4096, lambda ph, oid: f"rc2.cursor.{ph}.{oid}"
    )
    got = render.region_changes(over_the_wire(messages.region_changes(doc)))
    assert render.dumps(got) == before(doc)
    assert len(feed.dumps(got).encode()) == len(feed.dumps(doc).encode())  # the page size the journal measured


def test_history_pages_reach_the_agent_as_the_journal_measured_them():
    """region_history (issue 32): blame.entry_doc -> RegionHistoryResponse -> render.region_history is the
    same document, byte for byte, so the journal's page budget holds for the agent's answer."""
    rs = [
        {
            "oid": 9,
            "x": 1,
            "y": 64,
            "z": -3,
            "before": "minecraft:air",
            "after": "minecraft:stone",
            "source": "player",
            "player_id": "u-1",
            "player_name": "Alice",
            "at_ms": 1700000000000,
        },
        {
            "oid": 8,
            "x": 2,
            "y": 64,
            "z": -3,
            "before": "minecraft:stone",
            "after": "minecraft:air",
            "source": "environment",
            "cause": "explosion",
            "at_ms": 1700000000001,
        },
        {
            "oid": 7,
            "x": 3,
            "y": 64,
            "z": -3,
            "before": "minecraft:air",
            "after": "minecraft:glass",
            "source": "ours",
            "operation_id": "op_1",
            "asked_by": "u-1",
            "at_ms": 1700000000002,
        },
    ]
    for doc in (
        {"entries": [blame.entry_doc(r) for r in rs], "next_cursor": "rh1.k.7", "complete": False},
        {"entries": [], "next_cursor": "", "complete": True, "note": "observation was interrupted"},
    ):
        got = render.region_history(over_the_wire(messages.region_history(doc)))
        assert blame.dumps(got) == blame.dumps(doc)


def test_a_range_without_events_and_a_fresh_cursor_are_unchanged():
    empty = feed.page_of([], "player", 0, 0, head("player", [], 0), 100, 4096, lambda ph, oid: "rc2.x")
    assert empty["bounding_box"] is None
    fresh = {
        "changes": 0,
        "by_source": {},
        "events": [],
        "remaining": 0,
        "next_cursor": "rc2.y",
        "complete": True,
        "resync_required": False,
        "note": "fresh cursor: changes after this moment will be reported",
    }
    for doc in (empty, fresh):
        assert render.dumps(render.region_changes(over_the_wire(messages.region_changes(doc)))) == before(doc)


def test_parts_are_unchanged():
    doc = {
        "part_id": "pt_1",
        "name": "walls",
        "operation_id": "op_1",
        "bounds": {"min": {"x": -1, "y": 64, "z": 2}, "max": {"x": 3, "y": 70, "z": 9}},
        "block_count": 120,
        "protected": True,
        "external_changes_since": {"count": 3, "by_source": {"environment": 1, "player": 2}, "complete": False},
    }
    assert render.dumps(render.part(over_the_wire(messages.part_detail(doc)))) == before(doc)


def _schem(name: str = "") -> bytes:
    s = S.from_region(
        (2, 1, 1), ["minecraft:stone", "minecraft:air"], [0, 1], offset=(0, -1, 0), data_version=4671, name=name
    )
    return S.write_bytes(s)


def test_asset_entries_and_exports_are_unchanged(tmp_path: Path):
    lib = AssetLibrary(tmp_path)
    written = lib.write("tower", _schem("Tower"))
    (tmp_path / "broken.schem").write_bytes(b"not a schematic")
    (tmp_path / "bad name.schem").write_bytes(b"x")
    (tmp_path / "empty.nbt").write_bytes(b"")
    first = lib.list("", "", page_size=3)
    last = lib.list("", first["next_cursor"], page_size=3)
    assert "next_cursor" not in last and [a["asset_id"] for a in last["assets"]] == ["tower"]
    for listing in (first, last):
        got = render.asset_list(over_the_wire(messages.asset_list(listing)))
        old = render.fit(json.loads(before(listing)))
        assert got == old
        for new_entry, old_entry in zip(got["assets"], old["assets"], strict=True):
            if "sha256" in old_entry:  # entries of files that were read: the same key order too
                assert list(new_entry) == list(old_entry), (new_entry, old_entry)
    assert last["assets"][0]["valid"] and not any(a["valid"] for a in first["assets"])

    export = {
        **written,
        "warnings": ["players are never exported"],
        "region": {"min": {"x": 0, "y": 64, "z": 0}, "max": {"x": 1, "y": 64, "z": 0}},
        "origin": {"x": 0, "y": 64, "z": 0},
    }
    assert render.dumps(render.schematic_export(over_the_wire(messages.schematic_export(export)))) == before(export)


def test_admin_answers_are_typed_with_one_casing():
    review = jpb.RecoveryReviewResponse(
        operation_id="op_1", matches_after=5, current_digest="ab" * 32, sampled_at_millis=1_700_000_000_000
    )
    stats = messages.journal_stats(
        {
            "bytes": {"sqlite": 5 << 32, "wal": 0, "blobs": 1, "total": (5 << 32) + 1},
            "operations": {"applied": 2},
            "written_blocks": 0,
            "bytes_per_written_block": None,
            "live": {"write_rows": 1, "our_event_rows": 2, "other_observed_rows": 3},
            "packed": {"operations": 0, "write_rows": 0, "event_rows": 0, "bytes": 0},
            "packable": {
                "operations": 1,
                "write_rows": 1,
                "event_rows": 1,
                "estimated_bytes_freed": 10,
                "free_pages_bytes": 0,
            },
            "pack_after_seconds": 30.0,
            "tables": {"written": 4096},
        }
    )
    assert not stats.HasField("bytes_per_written_block") and stats.bytes.sqlite == 5 << 32
    from mcb_rpc.pbjson import plain

    shown = plain(over_the_wire(stats))
    assert shown["bytes"]["sqlite"] == 5 << 32 and shown["bytes_per_written_block"] is None  # numbers, not strings
    assert shown["operations"] == {"applied": 2} and shown["tables"] == {"written": 4096}
    assert plain(review) == {
        "operation_id": "op_1",
        "plan_id": "",
        "positions": 0,
        "matches_before": 0,
        "matches_after": 5,
        "foreign_states": 0,
        "current_digest": "ab" * 32,
        "sampled_at_millis": 1_700_000_000_000,
    }
    assert isinstance(jpb.JournalCompactResponse().bytes_before, jpb.JournalBytes)
