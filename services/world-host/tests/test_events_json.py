"""events_since answers its pages in JSON built from the event log directly (events.page_json):
it must be exactly what the message would give (``mcb_rpc.pbjson.to_json``, json_format's dict),
and parse back to the same message, for any events and page."""

from __future__ import annotations

from google.protobuf import json_format
from hypothesis import given
from hypothesis import strategies as st
from mcb.world.v1 import world_pb2
from mcb_rpc import pbjson
from mcb_world_host.events import Event, EventLog, Page, page_json, run_events, run_json

INT32 = st.integers(-(2**31), 2**31 - 1)
U64 = st.integers(0, 2**64 - 1)
TEXT = st.text(max_size=12)
EVENTS = st.lists(
    st.builds(Event, U64, INT32, INT32, INT32, TEXT, TEXT, TEXT, TEXT, U64, TEXT, TEXT, TEXT), max_size=20
)


def as_message(page: Page) -> world_pb2.EventsSinceResult:
    return world_pb2.EventsSinceResult(
        events=[
            world_pb2.BlockEvent(
                seq=e.seq,
                x=e.x,
                y=e.y,
                z=e.z,
                before=e.before,
                after=e.after,
                source=e.source,
                player_id=e.player_id,
                at_millis=e.at_millis,
                operation_id=e.operation_id,
                player_name=e.player_name,
                cause=e.cause,
            )
            for e in page.events
        ],
        next_cursor=page.next_cursor,
        resync_required=page.resync_required,
        complete=page.complete,
        reason=page.reason,
    )


@given(EVENTS, TEXT, st.booleans(), st.booleans(), TEXT)
def test_a_page_is_the_json_of_its_message(events, cursor, resync, complete, reason):
    page = Page(events, cursor, resync, complete, reason)
    msg = as_message(page)
    assert page_json(page) == pbjson.to_json(msg)
    assert json_format.ParseDict(page_json(page), world_pb2.EventsSinceResult()) == msg


def test_record_many_numbers_a_batch_in_order_at_one_time():
    log = EventLog("inst")
    start = log.cursor_now()
    log.record_many(
        [(0, 64, 0, "minecraft:air", "minecraft:stone"), (-1, -64, 5, "minecraft:dirt", "minecraft:air")],
        "ours",
        operation_id="op-1",
    )
    log.record_many([(2, 70, 2, "minecraft:air", "minecraft:glass")], "player", player_id="alice")
    page = log.since(start)
    assert [(e.seq, e.x, e.source, e.player_id, e.operation_id) for e in page.events] == [
        (1, 0, "ours", "", "op-1"),
        (2, -1, "ours", "", "op-1"),
        (3, 2, "player", "alice", ""),
    ]
    assert page.events[0].at_millis == page.events[1].at_millis and page.complete and page.next_cursor == "inst:3"


# ---- runs (issue 29): the same events as columns, one run per writer and time


def reference_since(events: list[Event], seq: int, limit: int, region) -> tuple[list[Event], int, bool]:
    """The page the log gave when it kept one Event per block (before runs): (events, last seq, complete)."""
    out, last, complete = [], seq, True
    for ev in events:
        if ev.seq <= seq:
            continue
        if region is not None:
            (x0, y0, z0), (x1, y1, z1) = region
            if not (x0 <= ev.x <= x1 and y0 <= ev.y <= y1 and z0 <= ev.z <= z1):
                last = ev.seq
                continue
        if len(out) >= limit:
            complete = False
            break
        out.append(ev)
        last = ev.seq
    return out, last, complete


SMALL = st.integers(-3, 3)
STATE = st.sampled_from(["minecraft:air", "minecraft:stone", "minecraft:dirt"])
CALLS = st.lists(
    st.tuples(
        st.lists(st.tuples(SMALL, SMALL, SMALL, STATE, STATE), min_size=0, max_size=9),
        st.sampled_from([("ours", "", "op-1"), ("ours", "", "op-2"), ("player", "alice", "")]),
    ),
    max_size=8,
)
REGION = st.none() | st.tuples(st.tuples(SMALL, SMALL, SMALL), st.tuples(SMALL, SMALL, SMALL)).map(
    lambda b: (tuple(map(min, *b)), tuple(map(max, *b)))
)


def expand(runs) -> list[Event]:
    return [e for r in runs for e in run_events(r)]


@given(CALLS, st.integers(1, 40), st.integers(0, 60), st.integers(1, 12), REGION)
def test_runs_and_events_are_the_same_page_as_one_event_a_block(calls, retain, start, limit, region):
    log = EventLog("inst", retain=retain)
    flat: list[Event] = []
    for changes, (source, player, op) in calls:
        log.record_many(changes, source, player_id=player, operation_id=op)
        at = log._runs[-1].at_millis if changes else 0
        flat += [
            Event(len(flat) + 1 + i, x, y, z, b, a, source, player, at, op) for i, (x, y, z, b, a) in enumerate(changes)
        ]
    kept = flat[-retain:] if flat else []
    seq = min(start, len(flat))
    if kept and seq < kept[0].seq - 1:
        assert log.since(f"inst:{seq}", limit, region).resync_required
        return
    want, last, complete = reference_since(kept, seq, limit, region)
    as_events = log.since(f"inst:{seq}", limit, region)
    as_runs = log.since(f"inst:{seq}", limit, region, runs=True)
    for page in (as_events, as_runs):
        assert (page.next_cursor, page.complete, page.resync_required) == (f"inst:{last}", complete, False)
    assert as_events.events == want and as_runs.events == []
    assert expand(as_runs.runs) == want
    for r in as_runs.runs:  # consecutive seqs, one writer, all columns of one length
        assert len({len(r.x), len(r.y), len(r.z), len(r.before), len(r.after)}) == 1 and r.x
    # the JSON is the message's, and reads back to the same events
    msg = world_pb2.EventsSinceResult(
        next_cursor=as_runs.next_cursor, complete=as_runs.complete, runs=[run_message(r) for r in as_runs.runs]
    )
    assert page_json(as_runs) == pbjson.to_json(msg)
    back = json_format.ParseDict(page_json(as_runs), world_pb2.EventsSinceResult())
    assert [(r.first_seq, len(r.x)) for r in back.runs] == [(r.first, len(r.x)) for r in as_runs.runs]


def run_message(r) -> world_pb2.EventRun:
    j = run_json(r)
    return world_pb2.EventRun(
        first_seq=r.first,
        source=r.source,
        player_id=r.player_id,
        at_millis=r.at_millis,
        operation_id=r.operation_id,
        player_name=r.player_name,
        cause=r.cause,
        states=j["states"],
        x=r.x,
        y=r.y,
        z=r.z,
        before=[j["states"].index(s) for s in r.before],
        after=[j["states"].index(s) for s in r.after],
    )


def test_a_batch_is_one_run_with_each_state_named_once():
    log = EventLog("inst")
    log.record_many([(0, 64, 0, "minecraft:air", "minecraft:stone")] * 3, "ours", operation_id="op-1")
    log.record_many([(1, 64, 0, "minecraft:air", "minecraft:dirt")], "player", player_id="alice", player_name="Alice")
    page = page_json(log.since("inst:0", runs=True))
    assert page["events"] == [] and [r["firstSeq"] for r in page["runs"]] == ["1", "4"]
    first = page["runs"][0]
    assert first["states"] == ["minecraft:air", "minecraft:stone"]
    assert (first["before"], first["after"], first["operationId"]) == ([0, 0, 0], [1, 1, 1], "op-1")
    assert page["runs"][1]["playerName"] == "Alice" and page["nextCursor"] == "inst:4"
