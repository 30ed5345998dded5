"""The fuzz suite of issue 12 item 8: Hypothesis-generated tool calls and schematic files.

* Every MCP tool, with arguments generated from the input schema ``tools/list`` gives
  (schema_strategy.py: schema-valid ones and hostile variants), called over HTTP on the real
  stack: each answer is a valid result or a structured error whose code is a known one and
  never ``internal``.
* Mutated schematic/structure files (truncated, bytes flipped or inserted, raw or gzipped):
  in-process through the reader and the planner's import, and through the stack
  (asset_list + schematic_import_prepare): a refusal with a reason, never ``internal``.
* Afterwards: no operation was started (no block written), every service answers /health,
  and an ordinary build_prepare still works.

Deterministic and bounded for CI: ``derandomize=True``, no example database, a fixed number
of examples per tool (``FUZZ_EXAMPLES``, default 12).
"""

from __future__ import annotations

import gzip
import os
from typing import Any

import httpx
import pytest
from anyio.from_thread import start_blocking_portal
from e2e.mcpclient import http_client, payload
from hardening.hostile import deep_nbt, sponge_v3
from hardening.schema_strategy import arguments
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcb.common.v1 import common_pb2
from mcb.planner.v1 import planner_pb2
from mcb_bridge.tools import build_specs
from mcb_common import schematic as S
from mcb_common.errors import ErrorCode, McbError
from mcb_planner.servicer import import_request

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "12"))
CODES = {str(c) for c in ErrorCode} - {"internal"}
FUZZ = settings(
    max_examples=EXAMPLES, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck)
)
TOOLS = sorted(build_specs())


@pytest.fixture(scope="module")
def mcp(hostile_stack):
    """A blocking MCP client on the stack (the Hypothesis tests are synchronous)."""
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(http_client(hostile_stack.mcp_url, hostile_stack.token("agent"))) as client,
    ):

        def call(name: str, args: dict[str, Any]) -> Any:
            return portal.call(client.call_tool, name, args)

        before = _operations(call)
        yield call
        assert _operations(call) == before, "a fuzzed call started an operation"


def _ids(node: Any, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "operation_id" and isinstance(v, str):
                out.add(v)
            _ids(v, out)
    elif isinstance(node, list):
        for v in node:
            _ids(v, out)
    return out


def _operations(call) -> set[str]:
    return _ids(payload(call("project_context", {})), set())


def check_answer(name: str, result: Any) -> None:
    data = payload(result)
    assert isinstance(data, dict), data
    if result.is_error:
        err = data.get("error") or {}
        assert err.get("code") in CODES, f"{name}: {err}"
        assert isinstance(err.get("message"), str) and err["message"], err


def test_tools_list_is_what_is_fuzzed(mcp, hostile_stack):
    import anyio

    async def listed() -> set[str]:
        async with http_client(hostile_stack.mcp_url, hostile_stack.token("agent")) as c:
            return {t.name for t in (await c.list_tools()).tools}

    assert anyio.run(listed) == set(TOOLS)


@pytest.mark.parametrize("tool", TOOLS)
def test_generated_calls_get_a_result_or_a_structured_error(mcp, tool):
    schema = build_specs()[tool].input_schema  # the same schema tools/list publishes

    @FUZZ
    @given(st.data())
    def fuzz(data):
        args = arguments(schema, data)
        check_answer(tool, mcp(tool, args))

    fuzz()


# ---- files -------------------------------------------------------------------------------------
def _varint(v: int) -> bytes:
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v >> 7 else 0))
        v >>= 7
        if not v:
            return bytes(out)


@st.composite
def hostile_schematic(draw) -> bytes:
    """Uncompressed NBT of a Sponge schematic with hostile fields: huge or zero dimensions, any
    DataVersion and version, palette indices up to 2^35, varints that never end, deep nesting."""
    dims = [draw(st.sampled_from([0, 1, 2, 255, 32767, 65535])) for _ in range(3)]
    pal_size = draw(st.integers(1, 3))
    palette = {f"minecraft:{b}": i for i, b in enumerate(["stone", "air", "dirt"][:pal_size])}
    if draw(st.booleans()):
        palette["minecraft:stone"] = draw(st.sampled_from([-1, pal_size, 2**31 - 1]))
    n = max(1, min(dims[0] * dims[1] * dims[2], 64))
    values = draw(st.lists(st.sampled_from([0, 1, pal_size, 2**31 - 1, 2**31, 2**35 - 1]), min_size=n, max_size=n))
    data = b"".join(_varint(v) for v in values)
    if draw(st.booleans()):
        data += b"\xff" * draw(st.integers(1, 6))  # a varint that never ends
    raw = sponge_v3(
        *dims,
        data=data,
        palette=palette,
        data_version=draw(st.sampled_from([-1, 0, 3953, 2**31 - 1, -(2**31)])),
        version=draw(st.sampled_from([1, 2, 3, 99])),
    )
    depth = draw(st.sampled_from([0, 0, 20, 600]))
    if depth:  # the schematic nested inside `depth` compounds
        raw = b"\x0a\x00\x00" + b"\x0a\x00\x01a" * depth + raw[3:-1] + b"\x00" * (depth + 1)
    return raw


@st.composite
def mutated_file(draw) -> tuple[str, bytes]:
    """(kind, file bytes): a hostile schematic or a deep document, bytes mutated, gzipped or raw."""
    raw = bytearray(draw(st.one_of(hostile_schematic(), st.sampled_from([deep_nbt(20), deep_nbt(600)]))))
    for _ in range(draw(st.integers(0, 3))):
        how = draw(st.sampled_from(["flip", "insert", "truncate"]))
        i = draw(st.integers(0, max(0, len(raw) - 1)))
        if how == "flip" and raw:
            raw[i] = draw(st.integers(0, 255))
        elif how == "insert":
            raw[i:i] = draw(st.binary(min_size=1, max_size=8))
        else:
            del raw[i:]
    kind = draw(st.sampled_from(["schem", "nbt"]))
    return kind, bytes(raw) if draw(st.booleans()) else gzip.compress(bytes(raw), mtime=0)


def _clear_refusal(fn, *args, gzipped: bool) -> None:
    try:
        fn(*args)
    except McbError as err:
        assert err.code != ErrorCode.INTERNAL, err
        assert "Error" not in err.message, f"an exception class leaks: {err.message}"
    else:
        assert gzipped, "an uncompressed file was accepted as a schematic"


@settings(
    max_examples=EXAMPLES * 20, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck)
)
@given(mutated_file())
def test_mutated_files_are_read_or_refused_in_process(f):
    kind, data = f
    gzipped = data[:2] == b"\x1f\x8b"
    _clear_refusal(S.read_bytes, data, kind, gzipped=gzipped)
    req = planner_pb2.ImportSchematicRequest(
        data=data, kind=kind, target=common_pb2.Vec3(x=0, y=64, z=0), world_data_version=3953
    )
    _clear_refusal(import_request, req, gzipped=gzipped)


def test_mutated_files_through_the_stack(mcp, hostile_stack):
    assets = hostile_stack.runtime / "assets"
    assets.mkdir(parents=True, exist_ok=True)
    n = {"i": 0}

    @FUZZ
    @given(mutated_file())
    def fuzz(f):
        kind, data = f
        n["i"] += 1
        name = f"fuzz{n['i']}"
        (assets / f"{name}.{kind}").write_bytes(data)
        asset_id = name if kind == "schem" else f"{name}.nbt"
        check_answer(
            "schematic_import_prepare",
            mcp("schematic_import_prepare", {"asset_id": asset_id, "target": {"x": 0, "y": 64, "z": 0}}),
        )
        listing = mcp("asset_list", {"query": name})
        check_answer("asset_list", listing)
        assert any(e["asset_id"] == asset_id for e in payload(listing)["assets"]), "missing from the listing"

    fuzz()


def test_services_are_healthy_afterwards(mcp, hostile_stack):
    ports = hostile_stack.ports
    for url in (
        f"http://127.0.0.1:{ports['bridge']}/health",
        f"http://127.0.0.1:{ports['journal_health']}/health",
        f"http://127.0.0.1:{ports['planner_health']}/health",
        f"{hostile_stack.world_url}/health",
    ):
        assert httpx.get(url, timeout=5).status_code == 200, url
    for name, proc in hostile_stack.procs.items():
        assert proc.alive(), f"{name} died during the fuzz run"
    bad = [
        p.name
        for p in (hostile_stack.runtime / "assets").iterdir()
        if any(ord(ch) < 32 or ord(ch) == 127 for ch in p.name)
    ]
    assert not bad, f"files with control characters in their names were created: {bad!r}"
    ok = mcp(
        "build_prepare",
        {
            "recipe": {
                "version": 1,
                "operations": [
                    {
                        "type": "box",
                        "min": {"x": 0, "y": 70, "z": 0},
                        "max": {"x": 1, "y": 70, "z": 1},
                        "block": "minecraft:stone",
                    }
                ],
            }
        },
    )
    assert not ok.is_error and payload(ok)["changed_blocks"] == 4, payload(ok)
