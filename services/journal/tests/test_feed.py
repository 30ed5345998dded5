"""Issue 13 item 5: the change feed's pages (feed.py), pure: people first, whole-range head on
every page, the byte limit, resuming after a page, cursors bound to region and filter."""

from __future__ import annotations

import pytest
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box, Vec3
from mcb_journal import feed

BOX = Box(Vec3(0, 0, 0), Vec3(9, 9, 9))


def rows(spec: list[str]) -> list[dict]:
    """One event per source letter (p player, e environment, o ours), oids 1.. in that order."""
    name = {"p": "player", "e": "environment", "o": "ours"}
    return [
        {
            "oid": i + 1,
            "x": i % 10,
            "y": 1,
            "z": 2,
            "before": "minecraft:air",
            "after": "minecraft:stone",
            "source": name[c],
            "op_id": "op_1" if c == "o" else "",
        }
        for i, c in enumerate(spec)
    ]


def cursor_at(phase, oid):
    return "open" if phase is None else f"page.{phase}.{oid}"


def pages(all_rows, source="", limit=100, max_bytes=4096):
    out, phase, after = [], 0, 0
    while True:
        doc = feed.page_of(all_rows, source, phase, after, {"changes": len(all_rows)}, limit, max_bytes, cursor_at)
        out.append(doc)
        if doc["complete"]:
            return out
        _, phase, after = doc["next_cursor"].split(".")
        phase, after = int(phase), int(after)


def test_people_first_then_environment_then_ours_each_oldest_first():
    got = pages(rows(list("ooopoeop")), limit=100)
    assert len(got) == 1 and got[0]["complete"] and got[0]["next_cursor"] == "open"
    assert [(e["source"], e["pos"]["x"]) for e in got[0]["events"]] == [
        ("player", 3),
        ("player", 7),
        ("environment", 5),
        ("ours", 0),
        ("ours", 1),
        ("ours", 2),
        ("ours", 4),
        ("ours", 6),
    ]
    assert got[0]["events"][3]["operation_id"] == "op_1" and "operation_id" not in got[0]["events"][0]


def test_pages_stay_within_the_byte_limit_and_cover_every_event_once():
    spec = list("o" * 300 + "p" + "e" * 5)
    got = pages(rows(spec))
    seen = [e for p in got for e in p["events"]]
    assert len(seen) == len(spec) and seen[0]["source"] == "player"
    for p in got:
        assert len(feed.dumps(p).encode()) <= 4096
        assert p["changes"] == len(spec)  # the head is the range's, on every page
    assert [p["remaining"] for p in got][-1] == 0 and got[0]["remaining"] == len(spec) - len(got[0]["events"])
    assert len(got) > 300 * 100 // 4096  # the bytes, not the 100-event limit, cut the pages


def test_limit_and_at_least_one_event_per_page():
    assert [len(p["events"]) for p in pages(rows(list("ppppp")), limit=2)] == [2, 2, 1]
    huge = rows(list("pp"))
    for r in huge:
        r["before"] = "minecraft:oak_sign[rotation=0]" + "x" * 3000  # one event alone exceeds the page
    got = pages(huge, max_bytes=1024)
    assert [len(p["events"]) for p in got] == [1, 1]


def test_source_filter():
    got = pages(rows(list("opeop")), source="foreign")
    assert [e["source"] for e in got[0]["events"]] == ["player", "player", "environment"]
    got = pages(rows(list("opeop")), source="ours")
    assert [e["source"] for e in got[0]["events"]] == ["ours", "ours"]


def test_cursors_name_their_region_and_a_page_its_filter():
    open_cur = f"rc2.w.1.{feed.region_key(BOX)}.5.0.0.0"
    assert feed.parse_cursor(open_cur, BOX, "player") == ("w", "1", 5, 0, 0, 0)  # any filter reads an open cursor
    page = f"rc2.w.1.{feed.region_key(BOX, 'player')}.5.9.0.7"
    assert feed.parse_cursor(page, BOX, "player") == ("w", "1", 5, 9, 0, 7)
    for text, src in (
        (page, ""),
        (open_cur.replace("rc2.w.1.", "rc2.w.1.x"), ""),
        ("rc2.w.1.k.5.0", ""),
        (f"rc2.w.1.{feed.region_key(BOX, 'player')}.5.9.3.7", "player"),
        ("nonsense", ""),
    ):
        with pytest.raises(McbError) as exc:
            feed.parse_cursor(text, BOX, src)
        assert exc.value.code == ErrorCode.INVALID_REQUEST
    other = Box(Vec3(0, 0, 0), Vec3(9, 9, 8))
    with pytest.raises(McbError):
        feed.parse_cursor(open_cur, other, "")


def test_affected_parts_read_each_part_mask_once():
    class Db:
        def all(self, sql, project):
            assert "FROM parts" in sql and project == "pr_1"
            return [{"part_id": "pt_a", "name": "house"}, {"part_id": "pt_b", "name": "roof"}]

    masks = {"pt_a": {(x, 1, 2) for x in range(0, 3)}, "pt_b": {(x, 1, 2) for x in range(5, 10)}}
    read: list[str] = []

    def part_mask(part_id):
        read.append(part_id)
        return masks[part_id]

    head = feed.summarise(Db(), "pr_1", part_mask, rows(list("p" * 40)), "")  # x = 0..9, four times each
    assert head["affected_parts"] == [
        {"part_id": "pt_b", "name": "roof", "changes": 20},
        {"part_id": "pt_a", "name": "house", "changes": 12},
    ]
    assert sorted(read) == ["pt_a", "pt_b"]  # not once per changed position
    assert head["changes"] == 40 and head["by_source"] == {"player": 40}
