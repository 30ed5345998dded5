"""Issue 31 item 2 through the whole stack, over MCP: the example of every recipe operation in
``mcb://guides/examples`` (generated from the recipe schema, ``mcb_bridge.recipe_docs``) is read
as the agent reads it, prepared, applied and read back from the world, one after another on one
fresh world; the recipes guide and build_prepare's description name every operation."""

from __future__ import annotations

import json
import re
from typing import Any

from e2e.components import run
from e2e.mcpclient import call, wait_terminal
from mcb_common.recipe_schema import OPERATION_TYPES

OPERATION = re.compile(r"<!-- operation: (\w+) -->\n```json\n(.*?)\n```", re.S)


def blocks_of(op: dict[str, Any]) -> set[str]:
    """The block ids an operation writes (nested operations included), without states."""
    out = {op[k].split("[")[0].removeprefix("minecraft:") for k in ("block", "to") if isinstance(op.get(k), str)}
    for inner in op.get("operations") or ():
        out |= blocks_of(inner)
    return out


def test_every_operation_example_of_the_guide_builds(comp) -> None:
    results: dict[str, dict[str, Any]] = {}

    async def scenario(client) -> None:
        examples_text = (await client.read_resource("mcb://guides/examples")).contents[0].text
        recipes_text = (await client.read_resource("mcb://guides/recipes")).contents[0].text
        listed = {t.name: t for t in (await client.list_tools()).tools}
        examples = OPERATION.findall(examples_text)
        assert [n for n, _ in examples] and set(n for n, _ in examples) == set(OPERATION_TYPES)
        for name, _ in examples:
            assert f"| `{name}` |" in recipes_text and f"{name}(" in listed["build_prepare"].description, name
        assets: dict[str, set[str]] = {}
        for name, text in examples:
            recipe = json.loads(text)
            [op] = recipe["operations"]
            if "asset" in op:  # the guide says which asset it needs: save the box example's as that
                box = json.loads(dict(examples)["box"])["operations"][0]
                await call(client, "schematic_export", {"name": op["asset"], "min": box["min"], "max": box["max"]})
                assets[op["asset"]] = blocks_of(box)
            plan = await call(client, "build_prepare", {"recipe": recipe})
            assert plan["changed_blocks"] > 0 and not plan.get("conflicts"), (name, plan)
            applied = await call(
                client,
                "build_apply",
                {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": f"guide-{name}"},
            )
            st = await wait_terminal(client, applied["operation_id"], timeout=120)
            assert st["state"] == "applied", (name, st)
            summary = await call(client, "region_inspect", {**plan["region"], "detail": "summary"})
            present = {e["state"].split("[")[0].removeprefix("minecraft:") for e in summary["palette"]}
            wanted = blocks_of(op) | assets.get(op.get("asset", ""), set())
            assert wanted & present, (name, wanted, summary["palette"])
            results[name] = {"changed": plan["changed_blocks"], "state": st["state"]}

    run(comp, scenario)
    assert set(results) == set(OPERATION_TYPES), results
