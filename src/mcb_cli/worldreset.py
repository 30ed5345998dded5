"""`mcb world reset [--keep-journal]`: start over on a new embedded world, honestly.

The old save is never deleted: it moves to ``backups/<UTC time>/world`` (and, without
``--keep-journal``, the journal with it). The new world gets a new uuid and the next epoch
(old epoch + 1), written to ``world/mcb/world.json`` before the embedded host creates the flat
world around it at the next `mcb up`. With ``--keep-journal`` the history stays, and the journal
refuses every plan, operation, part and change cursor of the old world with ``world_changed``
(mcb_journal.worldid) — none of it is ever applied, undone or regenerated on the new world.
"""

from __future__ import annotations

import json
import shutil
import socket
import time
import uuid

from mcb_common.files import atomic_write
from mcb_rpc.settings import Settings


def _listening(port: int) -> bool:
    """Something accepts connections on the port (a running stack, even a busy one)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return True
    except OSError:
        return False


def reset(s: Settings, keep_journal: bool, now: float | None = None) -> tuple[int, str]:
    """(exit code, message). Refuses while the stack runs or when the world is a server's."""
    cfg = s.load_config()
    if isinstance(cfg.get("world_host"), dict) and cfg["world_host"].get("url"):
        return 2, (
            f"the world is served by {cfg['world_host']['url']} (config.json world_host): reset that server's "
            "world there; the journal notices the new world uuid by itself and refuses the old world's "
            "operations, parts and cursors (world_changed)"
        )
    saved = (cfg.get("world") or {}).get("path") if isinstance(cfg.get("world"), dict) else None
    if saved:
        return 2, (
            f"the world is your save {saved} (`mcb up --world`), never reset by this tool; `mcb up --own-world` "
            "goes back to the runtime's flat world, which `mcb world reset` then replaces"
        )
    for name, port in (("world host", s.port("world_host")), ("journal", s.port("journal_health"))):
        if _listening(port):
            return 2, f"the {name} port {port} is in use: stop `mcb up` (Ctrl-C) before resetting the world"
    rt = s.runtime_dir
    world = rt / "world"
    old_uuid, old_epoch = "", 0
    try:
        meta = json.loads((world / "mcb" / "world.json").read_text())
        old_uuid, old_epoch = str(meta.get("worldUuid", "")), int(meta.get("epoch", 0))
    except (OSError, ValueError):
        pass
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now or time.time()))
    backup = rt / "backups" / stamp
    moved = []
    for name in ("world", *(() if keep_journal else ("journal",))):
        if (rt / name).exists():
            backup.mkdir(parents=True, exist_ok=True)
            shutil.move(str(rt / name), str(backup / name))
            moved.append(name)
    new_uuid, new_epoch = str(uuid.uuid4()), old_epoch + 1
    atomic_write(
        world / "mcb" / "world.json",
        json.dumps(
            {
                "worldUuid": new_uuid,
                "epoch": new_epoch,
                "createdAtMillis": int(time.time() * 1000),
                "previousWorldUuid": old_uuid,
                "note": "minecraft-builder-mcp world identity, written by `mcb world reset`; the "
                "embedded host creates the flat world here at the next `mcb up`",
            },
            indent=2,
        ),
    )
    lines = [f"moved {', '.join(moved)} to {backup}" if moved else "there was no world or journal to move"]
    lines.append(
        f"new world {new_uuid}, epoch {new_epoch}" + (f" (was {old_uuid}, epoch {old_epoch})" if old_uuid else "")
    )
    lines.append(
        "the journal keeps its history; operations, parts and change cursors of the old world are refused "
        "with world_changed"
        if keep_journal
        else "the journal starts empty"
    )
    lines.append("start the stack again with `mcb up` (it creates the new flat world)")
    return 0, "\n".join(lines)


def run(keep_journal: bool) -> int:
    code, message = reset(Settings.from_env(), keep_journal)
    print(message if code == 0 else f"mcb world reset: {message}", flush=True)
    return code
