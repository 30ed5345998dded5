"""Bytes of the bridge's tools/list (issue 19: target ≤ 20 KB; the test budget is 20 KiB).

    uv run --frozen python bench/tools_list_bytes.py            # the tool list as the server builds it
    uv run --frozen python bench/tools_list_bytes.py --oni      # the same with an ONI endpoint (issue 18)
    uv run --frozen python bench/tools_list_bytes.py --http [--oni]   # a bridge process over HTTP
    uv run --frozen python bench/tools_list_bytes.py --url http://127.0.0.1:8787/mcp \\
        --token-file .runtime/secrets/agent.token                 # a running bridge over HTTP

Without --url/--http it serialises ``ListToolsResult`` the way the SDK puts it on the wire
(aliases, no nulls, compact; the SDK model's own fields included), prints its bytes and the five
largest tools (description / schema bytes). The size tests measure the JSON-RPC answer over HTTP
(a few dozen bytes less here): use --http for that number. With
--url it sends initialize + tools/list to a running bridge and counts the bytes of the JSON-RPC
answer itself; --http does the same against a ``python -m mcb_bridge http`` process it starts
(no journal needed for tools/list), as services/bridge/tests/test_guides.py does.

ONI tools (issue 18) are listed only with an ONI endpoint. --oni starts the real simulator
process (``python -m oni_sim --port 0``) and points the bridge at it (MCB_ONI_URL); without
--oni, MCB_ONI_URL is cleared and the list is the Minecraft-only one.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path


def in_process() -> None:
    import mcp_types as types
    from mcb_bridge.tools import build_specs

    tools = [s.to_mcp() for s in build_specs().values()]
    wire = types.ListToolsResult(tools=tools).model_dump_json(by_alias=True, exclude_none=True)
    n = len(wire.encode())
    print(f"tools/list result: {n:,} bytes, {len(tools)} tools")
    rows = []
    for t in tools:
        d = t.model_dump(by_alias=True, exclude_none=True, mode="json")
        rows.append(
            (
                len(json.dumps(d, separators=(",", ":"))),
                t.name,
                len(d.get("description", "")),
                len(json.dumps(d["inputSchema"], separators=(",", ":"))),
            )
        )
    desc = sum(r[2] for r in rows)
    schema = sum(r[3] for r in rows)
    print(f"descriptions {desc:,} bytes, input schemas {schema:,} bytes")
    for size, name, d, s in sorted(rows, reverse=True)[:5]:
        print(f"  {name:26} {size:6,} (description {d:,}, schema {s:,})")
    oni = [r for r in rows if r[1].startswith("oni_")]
    if oni:
        print(f"ONI tools: {sum(r[0] for r in oni):,} bytes ({', '.join(f'{r[1]} {r[0]:,}' for r in oni)})")


def over_http(url: str, token: str) -> int:
    import httpx

    h = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    with httpx.Client(headers=h, timeout=20) as http:
        init = http.post(
            url,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "0"},
                },
            },
        )
        init.raise_for_status()
        sid = init.headers.get("mcp-session-id")
        extra = {"mcp-session-id": sid} if sid else {}
        http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=extra)
        r = http.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=extra)
    body = r.text
    if r.headers.get("content-type", "").startswith("text/event-stream"):
        body = "".join(line[6:] for line in body.splitlines() if line.startswith("data: "))
    print(
        f"tools/list JSON-RPC answer over HTTP: {len(body.encode()):,} bytes, "
        f"{len(json.loads(body)['result']['tools'])} tools"
    )
    return len(body.encode())


def _wait(url: str, proc: subprocess.Popen, seconds: float = 30) -> None:
    import httpx

    end = time.monotonic() + seconds
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"{proc.args} exited with {proc.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=1).status_code == 200:
                return
        if time.monotonic() > end:
            raise SystemExit(f"{url} did not answer in {seconds} s")
        time.sleep(0.1)


@contextlib.contextmanager
def oni_sim() -> Iterator[str]:
    """The real simulator process on a free port; its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "oni_sim", "--port", "0", "--tick", "0"], stdout=subprocess.PIPE, text=True
    )
    try:
        line = proc.stdout.readline()  # "oni-sim listening on http://127.0.0.1:P"
        if "listening on" not in line:
            raise SystemExit(f"oni-sim did not start: {line!r}")
        url = line.strip().split("listening on ")[1]
        _wait(url + "/health", proc)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def bridge_over_http() -> None:
    """A bridge process on a free port with a throwaway runtime folder; tools/list over HTTP."""
    token = "b" * 43
    with tempfile.TemporaryDirectory() as tmp, socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        secrets = Path(tmp, "secrets")
        secrets.mkdir()
        (secrets / "agent.token").write_text(token + "\n")
        (secrets / "agent.token").chmod(0o600)
        Path(tmp, "config.json").write_text(
            json.dumps({"projects": [{"project_id": "bench", "owner_player_id": "bench", "name": "bench"}]})
        )
        env = os.environ | {
            "MCB_RUNTIME_DIR": tmp,
            "MCB_SECRETS_DIR": str(secrets),
            "MCB_CONFIG": str(Path(tmp, "config.json")),
            "MCB_JOURNAL_ADDR": "127.0.0.1:9",
            "MCB_BIND_HOST": "127.0.0.1",
            "MCB_BRIDGE_PORT": str(port),
            "MCB_AGENT_TOKEN": "",
            "MCB_PROJECT_ID": "",
            "MCB_PLAYER_ID": "",
        }
        proc = subprocess.Popen(
            [sys.executable, "-m", "mcb_bridge", "http"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            _wait(f"http://127.0.0.1:{port}/health", proc)
            over_http(f"http://127.0.0.1:{port}/mcp", token)
        finally:
            proc.terminate()
            proc.wait(10)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url")
    ap.add_argument("--token-file", default=".runtime/secrets/agent.token")
    ap.add_argument("--http", action="store_true", help="start a bridge process and measure over HTTP")
    ap.add_argument("--oni", action="store_true", help="with an ONI endpoint: the real simulator process")
    a = ap.parse_args()
    if a.url:
        over_http(a.url, Path(a.token_file).read_text().strip())
        return 0
    with contextlib.ExitStack() as stack:
        os.environ["MCB_ONI_URL"] = stack.enter_context(oni_sim()) if a.oni else ""
        print("with an ONI endpoint (oni-sim process)" if a.oni else "Minecraft only (no ONI endpoint)")
        bridge_over_http() if a.http else in_process()
    return 0


if __name__ == "__main__":
    sys.exit(main())
