"""MCP beyond tools (issue 31 item 12), with the official Python SDK's client against the real stack
(Redis, world host, planner, journal, camera worker, bridge as processes), over streamable HTTP and
over stdio (`mcb mcp`):

* ``logging/setLevel`` + ``notifications/message``: a plan's warnings while the call runs, an
  operation's outcome when it ends (``applied`` info, ``waiting_for_resume`` warning), only at or
  above the level set; on 2026-07-28 the outcome rides the ``build_apply`` call that opted in;
* ``resources/subscribe`` / ``unsubscribe`` + ``notifications/resources/updated`` for
  ``mcb://project/context`` and ``mcb://operations/{id}``; on 2026-07-28 ``subscriptions/listen``;
* ``completion/complete`` for the prompts' arguments and the resource templates (operation ids, part
  names, camera ids, block ids) from the journal, the camera worker and the block registry, and the
  templates' reads;
* SSE priming events with ``retry`` and ``Last-Event-ID`` replay: over raw HTTP (the ``retry`` field,
  which the SDK client does not expose; one session's event ids replaying nothing in another) and with
  the SDK client's resumption API (the priming event's id, a resumed request answered by replay).

The world host does not take part in any of this beyond what the tools already do (each tool runs on
every host in the other e2e modules), so this module runs on the embedded host only.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
import warnings
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from e2e.components import Components, start_components
from e2e.mcpclient import call, http_client, wait_terminal
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

CTX = "mcb://project/context"
PANE = {
    "version": 1,
    "operations": [
        {
            "type": "box",
            "min": {"x": 5, "y": 90, "z": 5},
            "max": {"x": 5, "y": 90, "z": 5},
            "block": "minecraft:glass_pane[north=true,east=false,south=false,west=false]",
        }
    ],
}


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Components]:
    c = start_components(tmp_path_factory.mktemp("live") / "runtime", "embedded")
    try:
        c.start("camera-worker")
        yield c
    finally:
        c.stop_all()


def _box(x: int, block: str = "minecraft:stone_bricks", side: int = 2) -> dict:
    return {
        "version": 1,
        "operations": [
            {
                "type": "box",
                "min": {"x": x, "y": 80, "z": 20},
                "max": {"x": x + side - 1, "y": 80 + side - 1, "z": 20 + side - 1},
                "block": block,
            }
        ],
    }


async def _apply(client: Client, recipe: dict, **kw: Any) -> dict:
    plan = await call(client, "build_prepare", {"recipe": recipe})
    args = {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": str(uuid.uuid4())}
    if kw:
        result = await client.call_tool("build_apply", args, **kw)
        assert not result.is_error, result
        return result.structured_content
    return await call(client, "build_apply", args)


class Inbox:
    """What the server pushed: log entries (logging_callback) and resource updates (message_handler)."""

    def __init__(self) -> None:
        self.logs: list[types.LoggingMessageNotificationParams] = []
        self.updated: list[str] = []

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.updated.append(str(message.params.uri))

    def outcomes(self, op_id: str) -> list[tuple[str, str]]:
        return [
            (e.level, e.data["state"])
            for e in self.logs
            if isinstance(e.data, dict) and e.data.get("operation_id") == op_id
        ]

    async def until(self, what: Any, timeout: float = 30) -> None:
        with anyio.fail_after(timeout):
            while not what():
                await anyio.sleep(0.05)


def _legacy_http(comp: Components, inbox: Inbox) -> Client:
    headers = {"Authorization": f"Bearer {comp.token('agent')}"}
    return Client(
        streamable_http_client(comp.mcp_url, http_client=create_mcp_http_client(headers=headers)),
        mode="legacy",
        logging_callback=inbox.on_log,
        message_handler=inbox.on_message,
    )


def _legacy_stdio(comp: Components, inbox: Inbox) -> Client:
    return Client(
        StdioServerParameters(command=sys.executable, args=["-m", "mcb_cli.main", "mcp"], env=dict(comp.env)),
        mode="legacy",
        logging_callback=inbox.on_log,
        message_handler=inbox.on_message,
    )


async def _set_level(client: Client, level: str) -> None:
    with warnings.catch_warnings():  # the SDK marks the 2025 logging API deprecated (2026-07-28)
        warnings.simplefilter("ignore")
        await client.set_logging_level(level)  # type: ignore[arg-type]


async def _subscribe(client: Client, uri: str, on: bool = True) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        await (client.subscribe_resource(uri) if on else client.unsubscribe_resource(uri))


# ---------------------------------------------------------------- logging


async def _logging_scenario(comp: Components, client: Client, inbox: Inbox, x: int) -> None:
    assert client.server_capabilities.logging is not None
    # nothing before logging/setLevel: an apply that ends is not logged
    op = await _apply(client, _box(x))
    await wait_terminal(client, op["operation_id"])
    await _set_level(client, "warning")
    # a plan's warnings, on the call's own stream
    await call(client, "build_prepare", {"recipe": PANE})
    await inbox.until(
        lambda: any(isinstance(e.data, dict) and e.data.get("event") == "plan_warnings" for e in inbox.logs)
    )
    warned = next(e for e in inbox.logs if e.data.get("event") == "plan_warnings")
    assert warned.level == "warning" and warned.logger == "mcb.plans" and "pane" in json.dumps(warned.data)
    # paused writes: the apply waits (warning, logged); when it then applies (info) nothing comes at "warning"
    assert comp.world_rpc("pause", {"reason": "live test"})["paused"] is True
    try:
        waiting = await _apply(client, _box(x + 3))
        await inbox.until(lambda: ("warning", "waiting_for_resume") in inbox.outcomes(waiting["operation_id"]))
    finally:
        comp.world_rpc("resume", {})
    assert (await wait_terminal(client, waiting["operation_id"]))["state"] == "applied"
    await anyio.sleep(1.5)  # three rounds of the watcher: it saw the end (at "warning": not sent)
    await _set_level(client, "info")
    applied = await _apply(client, _box(x + 6))
    await inbox.until(lambda: ("info", "applied") in inbox.outcomes(applied["operation_id"]))
    entry = next(
        e for e in inbox.logs if isinstance(e.data, dict) and e.data.get("operation_id") == applied["operation_id"]
    )
    assert entry.logger == "mcb.operations" and entry.data["written"] == 8 and entry.data["planned"] == 8
    assert inbox.outcomes(waiting["operation_id"]) == [("warning", "waiting_for_resume")]  # its "applied" was below
    assert not inbox.outcomes(op["operation_id"])


def test_logging_levels_and_operation_outcomes_over_http_and_stdio(live: Components) -> None:
    async def over(make: Any, x: int) -> None:
        inbox = Inbox()
        async with make(live, inbox) as client:
            await _logging_scenario(live, client, inbox, x)

    anyio.run(over, _legacy_http, -40)
    anyio.run(over, _legacy_stdio, -20)


def test_logging_on_2026_rides_the_call_that_opted_in(live: Components) -> None:
    async def main() -> None:
        inbox = Inbox()
        headers = {"Authorization": f"Bearer {live.token('agent')}"}
        async with Client(
            streamable_http_client(live.mcp_url, http_client=create_mcp_http_client(headers=headers)),
            logging_callback=inbox.on_log,
            log_level="info",
        ) as client:
            assert client.protocol_version == "2026-07-28"

            async def progress(*_: Any) -> None:
                pass

            op = await _apply(client, _box(0), progress_callback=progress)  # follows the operation to its end
            assert op["state"] == "applied"
            await inbox.until(lambda: ("info", "applied") in inbox.outcomes(op["operation_id"]))

    anyio.run(main)


# ---------------------------------------------------------------- subscriptions


async def _subscribe_scenario(comp: Components, client: Client, inbox: Inbox, x: int) -> None:
    assert client.server_capabilities.resources.subscribe is True
    await _subscribe(client, CTX)
    await _subscribe(client, "mcb://guides/recipes")  # a guide: accepted, never changes
    plan = await call(client, "build_prepare", {"recipe": _box(x, side=4)})
    assert comp.world_rpc("pause", {"reason": "live test"})["paused"] is True
    try:  # paused: the operation waits, so its subscription starts before it changes
        op = await call(
            client,
            "build_apply",
            {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": str(uuid.uuid4())},
        )
        uri = f"mcb://operations/{op['operation_id']}"
        with anyio.fail_after(30):
            while (await call(client, "operation_status", {"operation_id": op["operation_id"]}))[
                "state"
            ] != "waiting_for_resume":
                await anyio.sleep(0.05)
        await _subscribe(client, uri)
        await inbox.until(lambda: CTX in inbox.updated)  # a new recent operation
        await anyio.sleep(1.0)
        assert uri not in inbox.updated  # it waits: nothing changed
    finally:
        comp.world_rpc("resume", {})
    await wait_terminal(client, op["operation_id"])
    await inbox.until(lambda: uri in inbox.updated)  # it ran
    read = json.loads((await client.read_resource(uri)).contents[0].text)
    assert read["state"] == "applied" and read["operation_id"] == op["operation_id"]
    assert "mcb://guides/recipes" not in inbox.updated
    # unsubscribed: no more updates of the context, though it changes
    await _subscribe(client, CTX, on=False)
    await _subscribe(client, uri, on=False)
    await anyio.sleep(1.5)  # what was already on its way
    seen = len(inbox.updated)
    second = await _apply(client, _box(x + 5))
    await wait_terminal(client, second["operation_id"])
    await anyio.sleep(1.5)  # three polls of the watcher
    assert len(inbox.updated) == seen, inbox.updated[seen:]
    # unknown resources are refused with the code and the known ones
    with pytest.raises(Exception, match="not_found") as err:
        await _subscribe(client, "mcb://operations/op_nope")
    with pytest.raises(Exception, match="not_found"):
        await _subscribe(client, "mcb://nope")
    assert "op_nope" in str(err.value)


def test_resource_subscriptions_over_http_and_stdio(live: Components) -> None:
    async def over(make: Any, x: int) -> None:
        inbox = Inbox()
        async with make(live, inbox) as client:
            await _subscribe_scenario(live, client, inbox, x)

    anyio.run(over, _legacy_http, 20)
    anyio.run(over, _legacy_stdio, 32)


def test_subscriptions_listen_on_2026(live: Components) -> None:
    async def main() -> None:
        async with http_client(live.mcp_url, live.token("agent")) as client:
            assert client.protocol_version == "2026-07-28"
            plan = await call(client, "build_prepare", {"recipe": _box(44, side=4)})
            async with client.listen(resource_subscriptions=[CTX]) as sub:
                await call(
                    client,
                    "build_apply",
                    {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": str(uuid.uuid4())},
                )
                with anyio.fail_after(30):
                    async for event in sub:
                        assert event.uri == CTX
                        break

    anyio.run(main)


# ---------------------------------------------------------------- completion and templates


async def _complete(client: Client, ref: Any, name: str, value: str) -> types.Completion:
    return (await client.complete(ref, {"name": name, "value": value})).completion


async def _completion_scenario(client: Client, x: int) -> None:
    assert client.server_capabilities.completions is not None
    op = await _apply(client, _box(x))
    await wait_terminal(client, op["operation_id"])
    op_id = op["operation_id"]
    await call(client, "part_define", {"name": f"tower-{x}", "operation_id": op_id})
    await call(
        client,
        "camera_save",
        {
            "camera_id": f"front-{x}",
            "name": f"Door {x} view",
            "pose": {"x": 0, "y": 90, "z": -30, "yaw": 0, "pitch": 20},
        },
    )
    undo = types.PromptReference(name="undo_safely")
    got = await _complete(client, undo, "operation_id", op_id[: len(op_id) - 2])
    assert op_id in got.values, got
    got = await _complete(
        client, types.ResourceTemplateReference(uri="mcb://operations/{operation_id}"), "operation_id", ""
    )
    assert got.values[0] == op_id and got.total >= 1  # newest first
    rework = types.PromptReference(name="rework_part")
    assert (await _complete(client, rework, "part", f"TOWER-{x}")).values == [f"tower-{x}"]
    assert (await _complete(client, rework, "camera", f"door {x}")).values == [f"front-{x}"]  # by its name too
    blocks = await _complete(client, rework, "block", "spruce_pl")
    assert blocks.values == ["minecraft:spruce_planks"] and blocks.total == 1 and not blocks.has_more
    many = await _complete(client, types.ResourceTemplateReference(uri="mcb://blocks/{block_id}"), "block_id", "")
    assert len(many.values) == 100 and many.total > 1000 and many.has_more  # the registry: capped at 100
    assert (await _complete(client, rework, "block", "no_such_block")).values == []
    assert (await _complete(client, types.PromptReference(name="build_house"), "style", "x")).values == []
    with pytest.raises(Exception, match="no argument 'nope'"):
        await _complete(client, rework, "nope", "")
    with pytest.raises(Exception, match="not_found"):
        await _complete(client, types.PromptReference(name="nope"), "part", "")
    # the templates, read
    templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
    assert templates == {
        "mcb://operations/{operation_id}",
        "mcb://parts/{part}",
        "mcb://cameras/{camera_id}",
        "mcb://blocks/{block_id}",
    }

    async def read(uri: str) -> dict:
        return json.loads((await client.read_resource(uri)).contents[0].text)

    assert (await read(f"mcb://operations/{op_id}"))["state"] == "applied"
    part = await read(f"mcb://parts/tower-{x}")
    assert part["operation_id"] == op_id and part["block_count"] == 8
    assert (await read(f"mcb://parts/{part['part_id']}"))["name"] == f"tower-{x}"
    assert (await read(f"mcb://cameras/front-{x}"))["pose"]["pitch"] == 20
    stairs = await read("mcb://blocks/oak_stairs")
    assert stairs["properties"]["facing"] == ["north", "south", "west", "east"]
    assert stairs["default_state"].startswith("minecraft:oak_stairs[")
    for uri, code in (
        ("mcb://blocks/oak_stair", "unsupported_block"),
        ("mcb://parts/nope", "not_found"),
        ("mcb://cameras/nope", "not_found"),
        ("mcb://operations/op_nope", "not_found"),
    ):
        with pytest.raises(Exception, match=code):
            await client.read_resource(uri)


def test_completion_and_templates_over_http_and_stdio(live: Components) -> None:
    async def over(make: Any, x: int) -> None:
        async with make(live, Inbox()) as client:
            await _completion_scenario(client, x)

    anyio.run(over, _legacy_http, 50)
    anyio.run(over, _legacy_stdio, 53)


# ---------------------------------------------------------------- SSE priming and resumption


def _events(lines: Iterator[str]) -> Iterator[dict[str, str]]:
    """SSE events (id, data, retry) from a response's lines."""
    event: dict[str, str] = {}
    for line in lines:
        if line == "":
            if event:
                yield event
            event = {}
            continue
        key, _, value = line.partition(":")
        event[key] = event.get(key, "") + value.removeprefix(" ")


def _session(http: httpx.Client, url: str) -> dict[str, str]:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    r = http.post(
        url,
        headers=headers,
        json={
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        },
    )
    r.raise_for_status()
    headers |= {"mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    http.post(url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"}).raise_for_status()
    return headers


def _tool(http: httpx.Client, url: str, headers: dict, rid: int, name: str, args: dict) -> dict:
    with http.stream(
        "POST",
        url,
        headers=headers,
        json={"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": args}},
    ) as r:
        for e in _events(r.iter_lines()):
            if e.get("data"):
                return json.loads(e["data"])["result"]["structuredContent"]
    raise AssertionError("no result")


def test_sse_priming_event_retry_and_last_event_id_replay(live: Components) -> None:
    url = live.mcp_url
    with httpx.Client(headers={"Authorization": f"Bearer {live.token('agent')}"}, timeout=60) as http:
        headers = _session(http, url)
        plan = _tool(http, url, headers, 1, "build_prepare", {"recipe": _box(-60, side=16)})  # 8 batches
        call_ = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "build_apply",
                "_meta": {"progressToken": "p1"},
                "arguments": {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": "sse-1"},
            },
        }
        with http.stream("POST", url, headers=headers, json=call_) as r:
            events = _events(r.iter_lines())
            priming = next(events)
            assert priming["id"] and priming.get("data", "") == "" and priming["retry"] == "1000", priming
            first = next(events)  # the first progress notification; then the client goes away
            assert json.loads(first["data"])["method"] == "notifications/progress" and first["id"] != priming["id"]
        # the rest of the stream, from the event after `first` (reconnecting as a client does until the
        # answer came: a replay that starts while the old stream is still being torn down ends early)
        seen: list[dict] = []
        last = first["id"]
        for _ in range(20):
            with http.stream("GET", url, headers=headers | {"Accept": "text/event-stream", "Last-Event-ID": last}) as r:
                assert r.status_code == 200
                for e in _events(r.iter_lines()):
                    last = e.get("id") or last
                    if e.get("data"):
                        seen.append(json.loads(e["data"]))
                        if seen[-1].get("id") == 2:
                            break
            if seen and seen[-1].get("id") == 2:
                break
            time.sleep(1.0)  # the priming event's retry
        progress = [m["params"]["progress"] for m in seen if m.get("method") == "notifications/progress"]
        first_progress = json.loads(first["data"])["params"]["progress"]
        assert progress and progress == sorted(progress) and progress[0] > first_progress and progress[-1] == 9
        assert seen[-1]["result"]["structuredContent"]["state"] == "applied"
        # another session's stream never replays this one's events
        other = _session(http, url)
        with http.stream(
            "GET", url, headers=other | {"Accept": "text/event-stream", "Last-Event-ID": priming["id"]}
        ) as r:
            replayed = [e for e in _events(r.iter_lines()) if e.get("data")]
        assert replayed == []


def test_sdk_client_gets_the_priming_event_and_resumes_with_its_token(live: Components) -> None:
    """The SDK client's own resumability API: ``on_resumption_token_update`` is told each SSE event id
    (the priming event's first), and a request sent with ``resumption_token`` is answered by a GET with
    ``Last-Event-ID`` — here with the replayed answer of the earlier call, never sent again (the
    resumed request names a tool that does not exist)."""
    from mcp.shared.message import ClientMessageMetadata

    async def main() -> None:
        async with _legacy_http(live, Inbox()) as client:
            assert client.protocol_version == "2025-11-25"
            plan = await call(client, "build_prepare", {"recipe": _box(-60, side=16)})  # 8 batches
            tokens: list[str] = []
            seen: list[float] = []

            async def token(t: str) -> None:
                tokens.append(t)

            async def progress(p: float, *_: Any) -> None:
                seen.append(p)

            request = types.CallToolRequest(
                params=types.CallToolRequestParams(
                    name="build_apply",
                    arguments={
                        "plan_id": plan["plan_id"],
                        "plan_hash": plan["plan_hash"],
                        "idempotency_key": str(uuid.uuid4()),
                    },
                )
            )
            first = await client.session.send_request(
                request,
                types.CallToolResult,
                progress_callback=progress,
                metadata=ClientMessageMetadata(on_resumption_token_update=token),
            )
            assert first.structured_content["state"] == "applied"
            # an event id for the priming event (no message), each progress notification and the answer
            assert len(tokens) == 1 + len(seen) + 1 and len(set(tokens)) == len(tokens), (tokens, seen)
            assert seen[-1] == 9
            resumed = await client.session.send_request(
                types.CallToolRequest(params=types.CallToolRequestParams(name="never_sent", arguments={})),
                types.CallToolResult,
                metadata=ClientMessageMetadata(resumption_token=tokens[1]),
            )
            assert resumed.structured_content == first.structured_content

    anyio.run(main)
