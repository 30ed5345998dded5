"""events_since answers its pages in JSON built from the event log directly (events.page_json):
it must be exactly what the message would give (``mcb_rpc.pbjson.to_json``, json_format's dict),
and parse back to the same message, for any events and page."""

from __future__ import annotations

from google.protobuf import json_format
from hypothesis import given
from hypothesis import strategies as st
from mcb.world.v1 import world_pb2
from mcb_rpc import pbjson
from mcb_world_host.events import Event, EventLog, Page, page_json

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
