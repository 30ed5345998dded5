"""Guides and prompts (MCP resources/prompts) and the size of tools/list, over the real
processes: ``python -m mcb_bridge http`` (raw JSON-RPC bytes and the SDK client) and
``python -m mcb_bridge stdio``, against the FakeJournal."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from bridge_testkit import ROOT, TOKEN, FakeEnv, arun
from harness import free_port, start_process
from mcb_bridge.catalog import TEMPLATES, template_for
from mcb_bridge.tools import build_specs, validate_arguments
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

# The agent reads tools/list at the start of every session: it stays within this budget
# (issue 19: "≤ 20 KB"); bench/tools_list_bytes.py reports the measured size.
TOOLS_LIST_BUDGET = 20 * 1024
EXAMPLE = re.compile(r"<!-- example: (\w+) -->\n```json\n(.*?)\n```", re.S)
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}


def _jsonrpc_result(r: httpx.Response) -> tuple[dict[str, Any], int]:
    """The JSON-RPC result of a streamable-HTTP answer (JSON or one SSE event) and its bytes."""
    body = r.text
    if r.headers.get("content-type", "").startswith("text/event-stream"):
        body = "".join(line[len("data: ") :] for line in body.splitlines() if line.startswith("data: "))
    return json.loads(body)["result"], len(body.encode())


async def read_everything(client: Client) -> dict[str, Any]:
    """List and read every resource, list and get every prompt; -> what was read."""
    out: dict[str, Any] = {"resources": {}, "prompts": {}}
    listed = (await client.list_resources()).resources
    assert {str(r.uri) for r in listed} >= {
        "mcb://guides/recipes",
        "mcb://guides/block-states",
        "mcb://guides/coordinates",
        "mcb://guides/examples",
        "mcb://guides/recipe-schema",
        "mcb://project/context",
    }
    for r in listed:
        got = await client.read_resource(str(r.uri))
        assert len(got.contents) == 1 and got.contents[0].text, r.uri
        out["resources"][str(r.uri)] = got.contents[0].text
    prompts = (await client.list_prompts()).prompts
    assert {p.name for p in prompts} == {"survey_area", "build_house", "furnish_room", "undo_safely", "rework_part"}
    for p in prompts:
        args = {a.name: "1,64,1" if a.name in ("min", "max") else "op-123" for a in p.arguments or [] if a.required}
        got = await client.get_prompt(p.name, args)
        text = got.messages[0].content.text
        assert got.messages[0].role == "user" and len(text) > 200, p.name
        for v in args.values():
            assert v in text, (p.name, v)
        out["prompts"][p.name] = text
    return out


def check_contents(read: dict[str, Any]) -> None:
    res = read["resources"]
    # the door convention is stated where an agent looks for it
    assert (
        "faces\n  **inward**" in res["mcb://guides/block-states"]
        or "faces **inward**" in res["mcb://guides/block-states"]
    )
    assert json.loads(res["mcb://guides/recipe-schema"])["$defs"]["operation"]["oneOf"]
    ctx = json.loads(res["mcb://project/context"])
    assert ctx["project"]["project_id"] and "build_prepare" in ctx["capabilities"]
    # every prompt names only tools that exist and resources that are listed
    tools = set(build_specs())
    for text in read["prompts"].values():
        for uri in re.findall(r"mcb://[\w/{}:.-]*[\w}]", text):  # a listed resource, or a template's URI
            assert uri in res or template_for(uri) or uri in {t.uri_template for t in TEMPLATES}, uri
        for name in re.findall(r"\b([a-z]+_[a-z_]+)\b(?= ?[\{(]| with| detail| the| it| as| until| first)", text):
            if name.endswith(("_id", "_key", "_blocks")) or name in ("after_operation",):
                continue
            assert name in tools or name in ("idempotency_key",), name


def test_worked_examples_pass_the_recipe_schema() -> None:
    """Every example of mcb://guides/examples is a valid recipe (the e2e test also plans them)."""
    from mcb_bridge.resources import guide_text

    examples = dict(EXAMPLE.findall(guide_text("examples")))
    assert set(examples) == {"house", "roof", "windows", "arches"}
    spec = build_specs()["build_prepare"]
    for name, text in examples.items():
        validate_arguments(spec, {"recipe": json.loads(text)}, seconds=None), name


def test_unknown_operation_type_lists_the_valid_ones() -> None:
    from mcb_common.errors import McbError

    spec = build_specs()["build_prepare"]
    with pytest.raises(McbError) as exc:
        validate_arguments(spec, {"recipe": {"version": 1, "operations": [{"type": "pyramidz"}]}})
    msg = exc.value.message
    assert "unknown type 'pyramidz' (did you mean 'pyramid'?)" in msg and "box, line, cylinder" in msg
    assert "was expected" not in msg
    # a known type still names that operation's own problem
    with pytest.raises(McbError) as exc:
        validate_arguments(
            spec,
            {
                "recipe": {
                    "version": 1,
                    "operations": [
                        {
                            "type": "box",
                            "min": {"x": 0, "y": 0, "z": 0},
                            "max": {"x": 1, "y": 1, "z": 1},
                            "block": "stone",
                            "hollw": True,
                        }
                    ],
                }
            },
        )
    assert "'hollw' was unexpected" in exc.value.message


def _tools_list_over_http(base: str) -> tuple[dict[str, Any], int, dict[str, str]]:
    """initialize + tools/list as raw JSON-RPC: the result, its bytes on the wire, session headers."""
    headers = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream"}
    with httpx.Client(base_url=base, headers=headers, timeout=10) as http:
        init = http.post("/mcp", json=INIT)
        assert init.status_code == 200
        caps, _ = _jsonrpc_result(init)
        assert {"tools", "resources", "prompts"} <= set(caps["capabilities"])
        sid = init.headers.get("mcp-session-id")
        h = {"mcp-session-id": sid} if sid else {}
        http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=h)
        result, size = _jsonrpc_result(
            http.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=h)
        )
    return result, size, h


def test_guides_prompts_and_tools_list_bytes_over_http(fake_env: FakeEnv, tmp_path: Path) -> None:
    port = free_port()
    # Minecraft only: no ONI endpoint (an empty MCB_ONI_URL is unset; config.json has no "oni")
    env = fake_env.runtime(tmp_path) | {"MCB_BRIDGE_PORT": str(port), "MCB_ONI_URL": ""}
    proc = start_process(
        "bridge-http",
        [sys.executable, "-m", "mcb_bridge", "http"],
        tmp_path / "logs",
        env=env,
        health_url=f"http://127.0.0.1:{port}/health",
        timeout=30,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        result, size, _ = _tools_list_over_http(base)
        names = [t["name"] for t in result["tools"]]
        assert set(names) == set(build_specs()) and len(names) >= 16 and not any(n.startswith("oni_") for n in names)
        # the byte budget of the whole answer, as the client receives it
        assert size <= TOOLS_LIST_BUDGET, f"tools/list is {size} bytes, budget {TOOLS_LIST_BUDGET}"
        text = json.dumps(result)
        # lean: the full recipe schema is a resource; the error sentence is said once
        assert "$defs/operation" not in text and "mcb://guides/recipe-schema" in text
        assert text.count("follow the hint") == 1

        async def body() -> dict[str, Any]:
            async with create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"}) as client_http:
                async with Client(streamable_http_client(f"{base}/mcp", http_client=client_http)) as client:
                    read = await read_everything(client)
                    with pytest.raises(Exception, match="not_found"):
                        await client.read_resource("mcb://guides/nope")
                    with pytest.raises(Exception, match="missing"):
                        await client.get_prompt("undo_safely", {})
                    return read

        read = arun(body())
        check_contents(read)
        assert "mcb://guides/oni" not in read["resources"]  # ONI material only with an ONI endpoint
    finally:
        proc.stop()


def test_tools_list_bytes_with_oni_over_http(fake_env: FakeEnv, tmp_path: Path) -> None:
    """The same budget when an ONI endpoint is configured (the oni_* tools are listed), against
    the real simulator process; the long ONI texts are the resource mcb://guides/oni."""
    sim_port, port = free_port(), free_port()
    sim = start_process(
        "oni-sim",
        [sys.executable, "-m", "oni_sim", "--port", str(sim_port), "--tick", "0"],
        tmp_path / "logs",
        health_url=f"http://127.0.0.1:{sim_port}/health",
        timeout=30,
    )
    env = fake_env.runtime(tmp_path) | {"MCB_BRIDGE_PORT": str(port), "MCB_ONI_URL": f"http://127.0.0.1:{sim_port}"}
    proc = start_process(
        "bridge-http",
        [sys.executable, "-m", "mcb_bridge", "http"],
        tmp_path / "logs",
        env=env,
        health_url=f"http://127.0.0.1:{port}/health",
        timeout=30,
    )
    try:
        result, size, h = _tools_list_over_http(f"http://127.0.0.1:{port}")
        tools = {t["name"]: t for t in result["tools"]}
        assert {"oni_state", "oni_action", "oni_blueprint"} <= set(tools) and len(tools) >= 19
        assert size <= TOOLS_LIST_BUDGET, f"tools/list with ONI is {size} bytes, budget {TOOLS_LIST_BUDGET}"
        assert "mcb://guides/oni" in tools["oni_state"]["description"]
        # enums stay in the listed schema (bounds are enforced server-side: tests/oni)
        assert tools["oni_action"]["inputSchema"]["properties"]["item"]["enum"]

        async def body() -> tuple[str, dict[str, Any]]:
            async with create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"}) as client_http:
                async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=client_http)) as c:
                    assert "mcb://guides/oni" in {str(r.uri) for r in (await c.list_resources()).resources}
                    guide = (await c.read_resource("mcb://guides/oni")).contents[0].text
                    got = await c.call_tool("oni_state", {"what": "map", "x": 0, "y": 0, "width": 3, "height": 2})
                    return guide, json.loads(got.content[0].text)

        guide, m = arun(body())
        for word in ("oni_state", "oni_action", "oni_blueprint", "bottom-left", "queue_full", "phase"):
            assert word in guide, word
        assert len(m["rows"]) == 2 and set(m["legend"]) >= {"#", "N", "~", "."}
    finally:
        proc.stop()
        sim.stop()


def test_guides_and_prompts_over_stdio(fake_env: FakeEnv, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcb_bridge", "stdio"], env=fake_env.runtime(tmp_path), cwd=str(ROOT)
    )

    async def body() -> dict[str, Any]:
        with open(tmp_path / "stderr.log", "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                return await read_everything(client)

    check_contents(arun(body()))


# ---------------------------------------------------------------- generated from the recipe schema

OPERATION = re.compile(r"<!-- operation: (\w+) -->\n```json\n(.*?)\n```", re.S)


def test_every_operation_has_a_guide_line_an_example_and_a_signature() -> None:
    """Issue 31 item 2: each type the schema accepts is in the recipes guide's table, has one
    whole-recipe example in the examples guide (valid against the full schema, of its own type)
    and a signature in build_prepare's description."""
    from mcb_bridge.resources import guide_text
    from mcb_bridge.tools import operation_types, recipe_schema
    from mcb_common.recipe_schema import OPERATION_TYPES

    types_ = operation_types(recipe_schema())
    assert sorted(types_) == sorted(OPERATION_TYPES) and len(types_) >= 16
    recipes = guide_text("recipes")
    examples = dict(OPERATION.findall(guide_text("examples")))
    description = build_specs()["build_prepare"].description
    spec = build_specs()["build_prepare"]
    assert set(examples) == set(types_)
    for name in types_:
        assert re.search(rf"^\| `{name}` \| `", recipes, re.M), f"no line for {name} in mcb://guides/recipes"
        assert re.search(rf"\b{name}\(\w", description), f"no signature for {name} in build_prepare"
        recipe = json.loads(examples[name])
        assert [op["type"] for op in recipe["operations"]] == [name]
        validate_arguments(spec, {"recipe": recipe}, seconds=None)
    # the generated parts replaced their marks; the old hand-written list is gone
    assert "<!-- generated" not in recipes and "<!-- generated" not in guide_text("examples")
    assert "Other shapes may be listed" not in recipes


def test_an_operation_without_an_example_or_description_fails_the_generation() -> None:
    from mcb_bridge import recipe_docs
    from mcb_bridge.tools import recipe_schema

    schema = recipe_schema()
    schema["$defs"]["spiral"] = {
        "type": "object",
        "description": "a spiral staircase",
        "properties": {"type": {"const": "spiral"}, "center": {}},
        "required": ["type", "center"],
    }
    schema["$defs"]["operation"]["oneOf"].append({"$ref": "#/$defs/spiral"})
    for make in (recipe_docs.signatures, recipe_docs.operations_table, recipe_docs.operation_examples):
        with pytest.raises(recipe_docs.MissingOperationDoc, match="'spiral' has no examples"):
            make(schema)
    with pytest.raises(recipe_docs.MissingOperationDoc, match="'spiral' has no examples"):
        build_specs(schema)
    del schema["$defs"]["spiral"]["description"]
    with pytest.raises(recipe_docs.MissingOperationDoc, match="no description and no examples"):
        recipe_docs.operations_table(schema)
    schema["$defs"]["spiral"] |= {"description": "a spiral", "examples": [{"type": "spiral", "center": {}}]}
    assert "spiral(center)" in recipe_docs.signatures(schema)
    assert "| `spiral` | `center` | a spiral |" in recipe_docs.operations_table(schema)
    assert "<!-- operation: spiral -->" in recipe_docs.operation_examples(schema)
    # and the schema's own constructor cannot make an operation without an example
    from mcb_common import recipe_schema as rs

    with pytest.raises(TypeError, match="example"):
        rs._op("spiral", "a spiral", {}, [])  # type: ignore[call-arg]
