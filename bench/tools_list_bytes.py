"""Bytes of the bridge's tools/list (issue 19: target ≤ 20 KB; the test budget is 20 KiB).

    uv run --frozen python bench/tools_list_bytes.py            # the tool list as the server builds it
    uv run --frozen python bench/tools_list_bytes.py --url http://127.0.0.1:8787/mcp \\
        --token-file .runtime/secrets/agent.token                 # the JSON-RPC answer over HTTP

Without --url it serialises ``ListToolsResult`` the way the SDK puts it on the wire (aliases,
no nulls, compact) and prints the total and the five largest tools (description / schema
bytes). With --url it sends initialize + tools/list to a running bridge and counts the bytes of
the JSON-RPC answer itself. ONI tools (issue 18) are listed only with an ONI endpoint and are
not part of the default list.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def in_process() -> None:
    import mcp_types as types
    from mcb_bridge.tools import build_specs

    tools = [s.to_mcp() for s in build_specs().values()]
    wire = types.ListToolsResult(tools=tools).model_dump_json(by_alias=True, exclude_none=True)
    print(f"tools/list result: {len(wire.encode()):,} bytes, {len(tools)} tools")
    rows = []
    for t in tools:
        d = t.model_dump(by_alias=True, exclude_none=True, mode="json")
        rows.append((len(json.dumps(d, separators=(",", ":"))), t.name, len(d.get("description", "")),
                     len(json.dumps(d["inputSchema"], separators=(",", ":")))))
    desc = sum(r[2] for r in rows)
    schema = sum(r[3] for r in rows)
    print(f"descriptions {desc:,} bytes, input schemas {schema:,} bytes")
    for size, name, d, s in sorted(rows, reverse=True)[:5]:
        print(f"  {name:26} {size:6,} (description {d:,}, schema {s:,})")


def over_http(url: str, token: str) -> None:
    import httpx

    h = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    with httpx.Client(headers=h, timeout=20) as http:
        init = http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
        init.raise_for_status()
        sid = init.headers.get("mcp-session-id")
        extra = {"mcp-session-id": sid} if sid else {}
        http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=extra)
        r = http.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=extra)
    body = r.text
    if r.headers.get("content-type", "").startswith("text/event-stream"):
        body = "".join(line[6:] for line in body.splitlines() if line.startswith("data: "))
    print(f"tools/list JSON-RPC answer over HTTP: {len(body.encode()):,} bytes, "
          f"{len(json.loads(body)['result']['tools'])} tools")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url")
    ap.add_argument("--token-file", default=".runtime/secrets/agent.token")
    a = ap.parse_args()
    if a.url:
        over_http(a.url, Path(a.token_file).read_text().strip())
    else:
        in_process()
    return 0


if __name__ == "__main__":
    sys.exit(main())
