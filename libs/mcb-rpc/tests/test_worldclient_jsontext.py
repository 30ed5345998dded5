"""``WorldClient`` sends params given as ``JsonText`` (already encoded: the journal's batch
requests, issue 29) as they are, in the same envelope as params it encodes itself."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from mcb.world.v1 import world_pb2
from mcb_common.jsontext import JsonText
from mcb_rpc.worldclient import WorldClient

TEXT = b'{"batchId":"op.1","worldEpoch":2,"entries":[{"x":1,"y":2,"z":3,"expected":"a","desired":"b"}]}'


def test_json_text_params_go_as_they_are_in_the_same_envelope():
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        p = json.loads(request.content)["params"]
        return httpx.Response(200, json={"ok": True, "result": {"batchId": p["batchId"], "status": "applied"}})

    async def main():
        wc = WorldClient("http://host", "t")
        wc._client = httpx.AsyncClient(transport=httpx.MockTransport(handler), headers={"Authorization": "Bearer t"})
        r1 = await wc.call("batch_apply", JsonText(TEXT), world_pb2.BatchApplyResult)
        r2 = await wc.call("batch_apply", json.loads(TEXT), world_pb2.BatchApplyResult)
        await wc.aclose()
        return r1, r2

    r1, r2 = asyncio.run(main())
    assert r1 == r2 and r1.batch_id == "op.1"
    first, second = (json.loads(r.content) for r in seen)
    assert seen[0].content.startswith(b'{"method":"batch_apply","params":' + TEXT + b',"requestId":"')
    assert first["params"] == second["params"] and first.keys() == second.keys()
    assert all(r.headers["content-type"] == "application/json" for r in seen)
    assert seen[0].headers["authorization"] == "Bearer t"


def test_json_text_reads_as_the_mapping_it_encodes_and_json_dumps_refuses_it():
    t = JsonText(b'{"a":1,"b":[2,3]}')
    assert t == {"a": 1, "b": [2, 3]} and t["b"] == [2, 3] and list(t) == ["a", "b"] and len(t) == 2
    with pytest.raises(TypeError):
        json.dumps(t)  # a transport that does not know it fails, never sends something else
    with pytest.raises(ValueError):
        JsonText(b"[1]")["a"]
