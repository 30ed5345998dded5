"""``mcb history`` — who or what changed the blocks of a box, and when (the agent's ``region_history``).

    mcb history X0,Y0,Z0,X1,Y1,Z1 [--player NAME] [--cause CAUSE] [--since 2h|30m|1d|ISO-8601]
                                  [--limit N] [--json] [--project P]

Newest first, one line per change: time (UTC), position, who (a player's name, an environment
cause, or our operation and who asked for it), before → after. ``--json`` prints one JSON object
per change (the agent's entries). Follows the journal's pages up to ``--limit`` changes (default
200). The project is ``--project``, ``MCB_PROJECT_ID`` or ``projects[0]`` of the runtime config;
the call uses the admin token (the owner's). Errors print the structured error and exit 1.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from datetime import UTC, datetime
from typing import Any

from mcb_common.causes import CAUSES
from mcb_common.errors import ErrorCode, McbError

_SPAN = re.compile(r"(\d+)([smhd])")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def add_parser(sub: Any) -> None:
    h = sub.add_parser("history", help="who or what changed the blocks of a box, and when (newest first)")
    h.add_argument("box", metavar="X0,Y0,Z0,X1,Y1,Z1", help="an inclusive box inside the project's area")
    who = h.add_mutually_exclusive_group()
    who.add_argument("--player", default="", help="only this player's changes (a name, any case, or an id)")
    who.add_argument("--cause", default="", choices=CAUSES, help="only environment changes of this cause")
    h.add_argument("--since", default="", help="only changes since: 30m, 2h, 1d, or an ISO-8601 time")
    h.add_argument("--limit", type=int, default=200, help="at most this many changes (default 200)")
    h.add_argument("--json", action="store_true", help="one JSON object per change")
    h.add_argument("--project", default="", help="project id (default MCB_PROJECT_ID or the first project)")


def since_millis(text: str, now: float | None = None) -> int:
    """``30m``/``2h``/``1d``/``45s`` before now, or an ISO-8601 time (UTC when it names no zone), in Unix ms."""
    if not text:
        return 0
    now = time.time() if now is None else now
    m = _SPAN.fullmatch(text.strip())
    if m:
        return int((now - int(m.group(1)) * _UNIT[m.group(2)]) * 1000)
    try:
        t = datetime.fromisoformat(text.strip())
    except ValueError:
        raise McbError(
            ErrorCode.INVALID_REQUEST, f"--since {text!r}: use 30m, 2h, 1d or an ISO-8601 time such as 2026-12-02T14:00"
        ) from None
    return int((t if t.tzinfo else t.replace(tzinfo=UTC)).timestamp() * 1000)


def parse_box(text: str) -> tuple[dict[str, int], dict[str, int]]:
    try:
        v = [int(p) for p in text.replace(" ", ",").split(",") if p.strip()]
    except ValueError:
        v = []
    if len(v) != 6:
        raise McbError(ErrorCode.INVALID_REQUEST, f"the box must be 6 integers X0,Y0,Z0,X1,Y1,Z1 (got {text!r})")
    return {"x": v[0], "y": v[1], "z": v[2]}, {"x": v[3], "y": v[4], "z": v[5]}


def describe(e: dict[str, Any]) -> str:
    """One change as a line a person reads."""
    at = datetime.fromtimestamp(e["at_millis"] / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")
    p = e["pos"]
    if e["source"] == "player":
        who = e.get("player_name") or e.get("player_id") or "a player"
    elif e["source"] == "environment":
        who = e.get("cause", "other")
    elif e.get("operation_id"):
        who = f"operation {e['operation_id']}" + (f" (asked by {e['asked_by']})" if e.get("asked_by") else "")
        who += f' "{e["prompt"]}"' if e.get("prompt") else ""
    else:
        who = "another project's operation"
    return f"{at}  ({p['x']}, {p['y']}, {p['z']})  {who}  {e['before']} -> {e['after']}"


async def _entries(args: Any) -> tuple[list[dict[str, Any]], str]:
    import grpc
    from mcb.common.v1 import common_pb2
    from mcb.journal.v1 import journal_pb2 as jpb
    from mcb.journal.v1 import journal_pb2_grpc
    from mcb_bridge.render import history_entry
    from mcb_rpc.auth import call_metadata
    from mcb_rpc.errors import from_rpc_error
    from mcb_rpc.settings import Settings
    from mcb_rpc.tokens import read_token

    from .camera import _project

    mn, mx = parse_box(args.box)
    s = Settings.from_env()
    token = read_token(s.secrets_dir, "admin")
    if not token:
        raise McbError(ErrorCode.UNAUTHENTICATED, f"no admin token in {s.secrets_dir} (or MCB_ADMIN_TOKEN)")
    md = call_metadata(token, args.project or _project(s))
    req = jpb.RegionHistoryRequest(
        region=common_pb2.Box(min=common_pb2.Vec3(**mn), max=common_pb2.Vec3(**mx)),
        player=args.player,
        cause=args.cause,
        since_millis=since_millis(args.since),
        limit=100,
        max_bytes=32768,
    )
    out: list[dict[str, Any]] = []
    notes: list[str] = []
    async with grpc.aio.insecure_channel(s.journal_addr) as ch:
        stub = journal_pb2_grpc.JournalStub(ch)
        while len(out) < args.limit:
            try:
                resp = await stub.RegionHistory(req, metadata=md, timeout=60)
            except grpc.RpcError as exc:
                raise from_rpc_error(exc, "journal", 60) from None
            out += [history_entry(e) for e in resp.entries]
            if resp.note and resp.note not in notes:
                notes.append(resp.note)
            if resp.complete:
                break
            req.cursor = resp.next_cursor
    return out[: max(args.limit, 0)], "; ".join(notes)


def run(args: Any) -> int:
    try:
        entries, note = asyncio.run(_entries(args))
    except McbError as err:
        print(json.dumps({"error": err.to_dict()}, indent=2), file=sys.stderr)
        return 1
    for e in entries:
        print(json.dumps(e, ensure_ascii=False) if args.json else describe(e))
    if not entries and not args.json:
        print("no observed changes in this box" + (" matching the filter" if args.player or args.cause else ""))
    if note:
        print(f"note: {note}", file=sys.stderr)
    return 0
