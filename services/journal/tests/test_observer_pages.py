"""The observer records events_since pages in groups (one transaction per PAGES_PER_COMMIT pages, a
gap or the end): every event once, in order, and a failure between two commits loses nothing (the
stored cursor still points before the pages not yet recorded, so they are pulled again)."""

from __future__ import annotations

import asyncio

import pytest
from google.protobuf import json_format
from hypothesis import given
from hypothesis import strategies as st
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError
from mcb_journal import observer
from mcb_journal.observer import Observer

from services.journal.tests.test_idempotency_race import make_core
from services.journal.tests.test_plan_summary_size import EventsJson


class PagedWorld(EventsJson):
    """``total`` events served 100 per page (an older host's page; the observer asks for the host's
    own) behind cursors ``h:<n>``; ``fail_at`` page fails once."""

    def __init__(self, total: int, fail_at: int = -1):
        self.total, self.fail_at, self.calls = total, fail_at, 0

    async def call(self, method, params, result_type):
        assert method == "events_since"
        assert params.limit == 0  # the host's page
        self.calls += 1
        start = int(params.cursor.split(":")[1]) if params.cursor else 0
        if start // 100 == self.fail_at:
            self.fail_at = -1
            raise McbError(ErrorCode.UNAVAILABLE, "link lost")
        stop = min(start + 100, self.total)
        return world_pb2.EventsSinceResult(
            events=[
                world_pb2.BlockEvent(
                    seq=n, x=n, y=64, z=0, before="minecraft:air", after="minecraft:stone", source="ours"
                )
                for n in range(start, stop)
            ],
            next_cursor=f"h:{stop}",
            complete=stop >= self.total,
        )


def seqs(core) -> list[int]:
    return [r["host_seq"] for r in core.db.all("SELECT host_seq FROM observed WHERE kind='event' ORDER BY oid")]


def test_pages_are_recorded_in_groups_once_and_in_order(tmp_path):
    core = make_core(tmp_path)
    world = PagedWorld(total=100 * (2 * observer.PAGES_PER_COMMIT + 3) + 17)
    asyncio.run(Observer(core.db, world).sync())
    assert seqs(core) == list(range(world.total))
    assert core.db.get_meta("observer_cursor") == f"h:{world.total}"


def test_a_failure_between_commits_loses_nothing(tmp_path):
    core = make_core(tmp_path)
    fetched_after = max(1, observer.PAGES_PER_COMMIT // 2)  # pages of the second group fetched before the failure
    world = PagedWorld(total=100 * (observer.PAGES_PER_COMMIT + 10), fail_at=observer.PAGES_PER_COMMIT + fetched_after)
    obs = Observer(core.db, world)
    with pytest.raises(McbError):
        asyncio.run(obs.sync())
    # the first group was recorded with its cursor; the pages fetched after it were not
    assert seqs(core) == list(range(100 * observer.PAGES_PER_COMMIT))
    assert core.db.get_meta("observer_cursor") == f"h:{100 * observer.PAGES_PER_COMMIT}"
    asyncio.run(obs.sync())
    assert seqs(core) == list(range(world.total))


INT32 = st.integers(-(2**31), 2**31 - 1)
U64 = st.integers(0, 2**64 - 1)
TEXT = st.text(max_size=8)
EVENT = st.builds(
    world_pb2.BlockEvent,
    seq=U64,
    x=INT32,
    y=INT32,
    z=INT32,
    before=TEXT,
    after=TEXT,
    source=TEXT,
    player_id=TEXT,
    at_millis=U64,
    operation_id=TEXT,
    player_name=TEXT,
    cause=TEXT,
)


@given(st.lists(EVENT, max_size=10), TEXT, st.booleans(), st.booleans(), TEXT, st.booleans(), st.booleans())
def test_a_page_read_from_json_is_the_message_of_it(events, cursor, resync, complete, reason, all_fields, proto_names):
    """read_page takes the host's JSON as json_format would: defaults printed (the embedded host)
    or left out (json_format's default, the Java host), 64-bit integers as strings, the fields'
    JSON names or their own (snake_case) names — both are proto3 JSON."""
    msg = world_pb2.EventsSinceResult(
        events=events, next_cursor=cursor, resync_required=resync, complete=complete, reason=reason
    )
    page = observer.read_page(
        json_format.MessageToDict(
            msg, always_print_fields_with_no_presence=all_fields, preserving_proto_field_name=proto_names
        )
    )
    assert page == observer.Page(
        [
            (
                e.seq,
                e.x,
                e.y,
                e.z,
                e.before,
                e.after,
                e.source,
                e.player_id,
                e.operation_id,
                e.at_millis,
                e.player_name,
                e.cause,
            )
            for e in events
        ],
        cursor,
        resync,
        complete,
        reason,
    )


@pytest.mark.parametrize(
    "damage",
    [
        {"events": [{"x": "1"}]},
        {"events": [{"x": 2**31}]},
        {"events": [{"y": 1.5}]},
        {"events": [{"seq": "-1"}]},
        {"events": [{"seq": "1e3"}]},
        {"events": [{"atMillis": 2**64}]},
        {"events": [{"before": 5}]},
        {"events": [{"z": True}]},
        {"events": ["not an event"]},
        {"events": "abc"},
        {"complete": "yes"},
        {"nextCursor": 7},
        {"reason": None},
        {"resyncRequired": 1},
        {"events": [{"playerName": 3}]},
        {"events": [{"cause": ["fire"]}]},
    ],
)
def test_a_malformed_page_is_an_error_not_a_row(damage):
    with pytest.raises(McbError) as exc:
        observer.read_page({"nextCursor": "h:1", "complete": True} | damage)
    assert exc.value.code == ErrorCode.INTERNAL and "malformed events_since page" in exc.value.message


# ---- runs (issue 29): a writer's consecutive events as columns

STATE = st.sampled_from(["minecraft:air", "minecraft:stone", "a", ""])
RUN = st.integers(1, 6).flatmap(
    lambda n: st.builds(
        lambda first, text, at, cols, picks: (first, text, at, cols, picks),
        st.integers(0, 2**64 - 1 - n),
        st.tuples(TEXT, TEXT, TEXT, TEXT, TEXT),
        U64,
        st.tuples(*[st.lists(INT32, min_size=n, max_size=n)] * 3),
        st.tuples(*[st.lists(STATE, min_size=n, max_size=n)] * 2),
    )
)


def run_message(first, text, at, cols, picks) -> world_pb2.EventRun:
    source, player, op, name, cause = text
    states = sorted(set(picks[0] + picks[1]))
    return world_pb2.EventRun(
        first_seq=first,
        source=source,
        player_id=player,
        at_millis=at,
        operation_id=op,
        player_name=name,
        cause=cause,
        states=states,
        x=cols[0],
        y=cols[1],
        z=cols[2],
        before=[states.index(v) for v in picks[0]],
        after=[states.index(v) for v in picks[1]],
    )


@given(st.lists(RUN, max_size=4), st.booleans(), st.booleans())
def test_a_page_of_runs_reads_as_its_events(runs, all_fields, proto_names):
    """Each run reads as the events it stands for (seq first, first + 1, ...; before and after
    looked up in its states), in any proto3 JSON form of the message."""
    msg = world_pb2.EventsSinceResult(runs=[run_message(*r) for r in runs], next_cursor="h:9", complete=True)
    page = observer.read_page(
        json_format.MessageToDict(
            msg, always_print_fields_with_no_presence=all_fields, preserving_proto_field_name=proto_names
        )
    )
    want = []
    for first, (source, player, op, name, cause), at, (xs, ys, zs), (befores, afters) in runs:
        want += [
            (first + i, x, y, z, b, a, source, player, op, at, name, cause)
            for i, (x, y, z, b, a) in enumerate(zip(xs, ys, zs, befores, afters, strict=True))
        ]
    assert page.events == [] and [e for r in page.runs for e in observer.run_events(r)] == want


GOOD_RUN = {"firstSeq": "4", "source": "ours", "operationId": "op", "states": ["a", "b"], "x": [1, 2], "y": [3, 4]}
GOOD_RUN |= {"z": [5, 6], "before": [0, 0], "after": [1, 0]}


@pytest.mark.parametrize(
    "damage",
    [
        {"x": [1]},  # columns of two lengths
        {"x": [], "y": [], "z": [], "before": [], "after": []},  # no event
        {"x": [1, "2"]},
        {"y": [1, 2**31]},
        {"z": [1.0, 2]},
        {"z": [True, 2]},
        {"before": [0, 2]},  # beyond its states
        {"after": [-1, 0]},
        {"states": ["a", 1]},
        {"states": "ab"},
        {"firstSeq": str(2**64 - 1)},  # its second event's seq is beyond uint64
        {"firstSeq": "-4"},
        {"atMillis": "x"},
        {"operationId": 5},
        {"x": "12"},
    ],
)
def test_a_malformed_run_is_an_error_not_a_row(damage):
    with pytest.raises(McbError) as exc:
        observer.read_page({"nextCursor": "h:1", "complete": True, "runs": [GOOD_RUN | damage]})
    assert exc.value.code == ErrorCode.INTERNAL and "malformed events_since page" in exc.value.message


def test_a_good_run_reads_and_a_page_of_both_events_and_runs_is_refused():
    page = observer.read_page({"nextCursor": "h:1", "complete": True, "runs": [GOOD_RUN]})
    assert [e[:6] for e in observer.run_events(page.runs[0])] == [(4, 1, 3, 5, "a", "b"), (5, 2, 4, 6, "a", "a")]
    for extra in ({}, {"newRunField": 1}):  # through the message parser too
        with pytest.raises(McbError):
            observer.read_page({"nextCursor": "h:1", "runs": [GOOD_RUN | extra], "events": [{"seq": "1", "x": 1}]})


def test_a_page_with_a_field_this_journal_does_not_know_is_read_without_it():
    page = observer.read_page(
        {
            "nextCursor": "h:2",
            "complete": True,
            "newPageField": 1,
            "events": [{"seq": "2", "x": 1, "playerId": "p", "newEventField": [1]}],
        }
    )
    assert page == observer.Page([(2, 1, 0, 0, "", "", "", "p", "", 0, "", "")], "h:2", False, True, "")


def test_an_event_of_a_host_before_names_and_causes_reads_with_them_empty():
    """Hosts before issue 32 send neither playerName nor cause: the event still reads."""
    page = observer.read_page(
        {
            "nextCursor": "h:3",
            "complete": True,
            "events": [
                {
                    "seq": "3",
                    "x": 1,
                    "y": 2,
                    "z": 3,
                    "before": "a",
                    "after": "b",
                    "source": "player",
                    "playerId": "u1",
                    "atMillis": "5",
                    "operationId": "",
                }
            ],
        }
    )
    assert page.events == [(3, 1, 2, 3, "a", "b", "player", "u1", "", 5, "", "")]


def test_a_sync_cancelled_while_its_pages_are_recorded_never_records_them_twice(tmp_path):
    """Callers of sync() are gRPC handlers that can be cancelled (the client went away); the
    group being recorded in the thread must be stored before the next sync reads the cursor."""
    import time

    core = make_core(tmp_path)
    world = PagedWorld(total=300)
    obs = Observer(core.db, world)
    real = obs._record

    def slow_record(pages):  # a 5,000-row group and its fsync
        time.sleep(0.3)
        real(pages)

    obs._record = slow_record

    async def main():
        handler = asyncio.create_task(obs.sync())
        await asyncio.sleep(0.1)  # inside the recording thread now
        handler.cancel()
        with pytest.raises(asyncio.CancelledError):
            await handler
        await obs.sync()  # the observer loop's next sync

    asyncio.run(main())
    assert seqs(core) == list(range(300))
    assert core.db.one("SELECT COUNT(*) AS n FROM observed WHERE kind='gap'")["n"] == 1
