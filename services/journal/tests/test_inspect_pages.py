"""region_inspect detail "blocks": pages in y, z, x order, a cursor bound to its region, and
``max_positions`` (the bridge asks for fewer positions when a page would not fit in one tool
answer, and passes the journal's cursor on as is)."""

from __future__ import annotations

import asyncio

import pytest
from mcb.journal.v1 import journal_pb2 as jpb
from mcb_common.errors import ErrorCode, McbError
from mcb_rpc.pbjson import vec3_pb

from services.journal.tests.test_consent import CALLER, core  # noqa: F401 - the fixture

MN, MX = {"x": 0, "y": 60, "z": 0}, {"x": 15, "y": 79, "z": 15}  # 5,120 positions: over one 4,096 page


def ask(core, cursor: str = "", max_positions: int = 0, mx=MX) -> jpb.RegionInspectResponse:  # noqa: F811
    req = jpb.RegionInspectRequest(
        min=vec3_pb(MN), max=vec3_pb(mx), detail="blocks", cursor=cursor, max_positions=max_positions
    )
    return asyncio.run(core.region_inspect(CALLER, req))


def states(resp: jpb.RegionInspectResponse) -> list[str]:
    return [resp.page_palette[i] for i in resp.page_states]


def test_max_positions_cuts_the_page_and_its_cursor_resumes_right_after(core) -> None:  # noqa: F811
    whole: list[str] = []
    cursor, pages = "", 0
    while True:
        resp = ask(core, cursor, max_positions=1000)
        assert resp.offset == len(whole) and len(resp.page_states) == min(1000, 5120 - len(whole))
        whole += states(resp)
        pages += 1
        if not resp.next_cursor:
            break
        cursor = resp.next_cursor
    assert pages == 6 and len(whole) == 5120
    # y 64 is stone (the fixture's world), layer by layer in y order
    layer = 16 * 16
    assert whole == ["minecraft:stone" if 60 + i // layer == 64 else "minecraft:air" for i in range(5120)]
    # without max_positions the journal's own page size
    first = ask(core)
    assert len(first.page_states) == 4096 and first.truncated and first.next_cursor


def test_a_cursor_of_another_region_or_not_issued_is_refused(core) -> None:  # noqa: F811
    cursor = ask(core, max_positions=10).next_cursor
    with pytest.raises(McbError) as other:
        ask(core, cursor, mx={**MX, "x": 14})
    assert other.value.code == ErrorCode.INVALID_REQUEST and "region" in other.value.message
    with pytest.raises(McbError) as garbage:
        ask(core, "rb1.eyJyIjpbXX0")
    assert garbage.value.code == ErrorCode.INVALID_REQUEST and "cursor" in garbage.value.message
