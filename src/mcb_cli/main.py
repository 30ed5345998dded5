"""``mcb``: the command line.

mcb up        start Redis and every service as local processes on the embedded world
              (--world-host URL --world-host-token-file F: on a Paper server instead)
mcb status    each service's /health
mcb mcp       the MCP server over stdio (for MCP clients that spawn a command)
mcb chat      talk to the agent from a terminal against the embedded world (runs the chat loop)
mcb doctor    JSON diagnostics: host health, chat config, pinned versions, isolation
mcb login [status]   device-code login of the chat agent's own Codex home (explicit only)
mcb recovery review OP | abandon OP --digest D     admin: crash-recovery decisions
mcb part protect PART [--off]                      admin: part protection
mcb journal stats | compact                        admin: journal size; pack finished operations now
mcb world reset [--keep-journal]                   a new embedded world (the old one moves to backups/)
mcb history BOX [--player P|--cause C] [--since 2h] who or what changed the blocks of a box, and when
"""

from __future__ import annotations

import argparse
import os
import signal
import sys


def _stop_quietly(signum: int, frame) -> None:  # noqa: ANN001
    """Ctrl-C/SIGTERM before `mcb up` has a stack to stop: end without a traceback."""
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    if (sys.argv[1:] if argv is None else argv)[:1] == ["up"]:
        # Until run_up installs its own handlers (which stop the services it started), a stop
        # while Python imports the runner or writes the first files must not print a traceback.
        signal.signal(signal.SIGINT, _stop_quietly)
        signal.signal(signal.SIGTERM, _stop_quietly)
    ap = argparse.ArgumentParser(prog="mcb", description="minecraft-builder-mcp")
    sub = ap.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="start the whole stack locally (Ctrl-C stops it)")
    up.add_argument("--quiet", action="store_true", help="print no connection help")
    up.add_argument(
        "--world-host",
        metavar="URL",
        help="use an external world host (a Paper server with the plugin, e.g. http://127.0.0.1:8765) "
        "instead of the embedded one; saved in config.json for later runs",
    )
    up.add_argument(
        "--world-host-token-file",
        metavar="FILE",
        help="the service token that world host accepts (e.g. plugins/MinecraftBuilderMcp/secrets/"
        "service.token); an admin.token beside it is used for chat. Default: this stack's own tokens",
    )
    up.add_argument(
        "--embedded", action="store_true", help="go back to the embedded world host (forgets a saved --world-host)"
    )
    world_opt = up.add_mutually_exclusive_group()
    world_opt.add_argument(
        "--world",
        metavar="PATH",
        help="open your own Minecraft 1.21.11 single-player save (its folder, e.g. "
        "~/.minecraft/saves/MyWorld) instead of the runtime's flat world: refused while the "
        "game has it open; backed up to .runtime/backups/ first; saved in config.json",
    )
    world_opt.add_argument(
        "--own-world", action="store_true", help="go back to the runtime's own flat world (forgets a saved --world)"
    )
    up.add_argument(
        "--area",
        metavar="minX,minY,minZ,maxX,maxY,maxZ",
        help="the build area of the default project (same as `mcb area set`)",
    )
    chat_opt = up.add_mutually_exclusive_group()
    chat_opt.add_argument(
        "--chat",
        dest="chat",
        action="store_true",
        default=None,
        help="run the in-game chat loop (default: on when an external host offers chat)",
    )
    chat_opt.add_argument("--no-chat", dest="chat", action="store_false", help="do not run the chat loop")
    sub.add_parser("status", help="show each service's health and the world host's identity")
    sub.add_parser("mcp", help="serve the MCP tools over stdio")
    chat = sub.add_parser("chat", help="talk to the agent from a terminal (embedded world)")
    chat.add_argument("--player", help="player id (default: the first project's owner)")
    chat.add_argument("--no-loop", action="store_true", help="another bridge already runs the chat loop")
    chat.add_argument("--wait", type=float, default=600, help="seconds to wait for running turns at end of input")
    sub.add_parser("doctor", help="JSON diagnostics of the chat bridge")
    login = sub.add_parser("login", help="device-code login of the chat agent's own Codex home (pinned Codex CLI)")
    login.add_argument("action", nargs="?", choices=["status"], help="status: only check the login")
    rec = sub.add_parser("recovery", help="admin: decide operations left recovery_required by a crash")
    rsub = rec.add_subparsers(dest="action", required=True)
    rv = rsub.add_parser("review", help="compare the live world with before/after over the affected blocks")
    rv.add_argument("operation_id")
    ab = rsub.add_parser("abandon", help="leave every block as it is, mark the operation failed, forbid its undo")
    ab.add_argument("operation_id")
    ab.add_argument("--digest", required=True, help="current_digest from the latest review")
    part = sub.add_parser("part", help="admin: part protection")
    psub = part.add_subparsers(dest="action", required=True)
    pp = psub.add_parser("protect", help="protect a part from agent writes (--off to unprotect)")
    pp.add_argument("part_id")
    pp.add_argument("--off", action="store_true")
    jr = sub.add_parser("journal", help="admin: the journal's size on disk and its retention (docs/journal-format.md)")
    jsub = jr.add_subparsers(dest="action", required=True)
    jsub.add_parser("stats", help="sizes, operations, bytes per written block, what compaction would free")
    jsub.add_parser(
        "compact", help="pack every finished operation now, then shrink the files (blocks the journal while it runs)"
    )
    from .camera import add_parser as add_camera_parser

    add_camera_parser(sub)
    from .history import add_parser as add_history_parser

    add_history_parser(sub)
    ar = sub.add_parser("area", help="the build area: where the agent may build")
    asub = ar.add_subparsers(dest="action", required=True)
    aset = asub.add_parser("set", help="set a project's build area (config.json; a running stack picks it up)")
    aset.add_argument(
        "area",
        nargs="+",
        metavar="minX,minY,minZ,maxX,maxY,maxZ",
        help="six integers, with commas or spaces (negative numbers: `mcb area set -- -20,-64,...`)",
    )
    aset.add_argument("--project", help="project id (default: the first project)")
    wr = sub.add_parser("world", help="the embedded world: start over on a new one")
    wsub = wr.add_subparsers(dest="action", required=True)
    wreset = wsub.add_parser("reset", help="move world/ (and journal/) to backups/<time>/, new world uuid, next epoch")
    wreset.add_argument(
        "--keep-journal",
        action="store_true",
        help="keep the journal's history; the old world's operations, parts and cursors are refused (world_changed)",
    )
    args = ap.parse_args(argv)
    if args.cmd == "area":
        from mcb_common.errors import McbError
        from mcb_rpc.settings import Settings

        from .runner import set_area

        try:
            print(set_area(Settings.from_env(), ",".join(args.area), args.project), flush=True)
        except McbError as exc:
            print(f"mcb area set: {exc.message}", file=sys.stderr, flush=True)
            return 2
        return 0
    if args.cmd == "world":
        from .worldreset import run as world_run

        return world_run(args.keep_journal)
    if args.cmd == "history":
        from .history import run as history_run

        return history_run(args)
    if args.cmd == "camera":
        from .camera import run as camera_run

        return camera_run(args)
    if args.cmd in ("recovery", "part", "journal"):
        from .admin import run

        return run(args)
    if args.cmd == "up":
        from .runner import run_up

        if args.embedded and args.world_host:
            ap.error("--embedded and --world-host exclude each other")
        return run_up(
            quiet=args.quiet,
            world_host=args.world_host,
            world_host_token_file=args.world_host_token_file,
            embedded=args.embedded,
            chat=args.chat,
            world=args.world,
            own_world=args.own_world,
            area=args.area,
        )
    if args.cmd == "status":
        from .runner import run_status

        return run_status()
    if args.cmd == "chat":
        from mcb_bridge.chat.terminal import main as chat_main

        return chat_main(
            [
                *(["--player", args.player] if args.player else []),
                *(["--no-loop"] if args.no_loop else []),
                "--wait",
                str(args.wait),
            ]
        )
    if args.cmd == "login":
        from mcb_bridge.chat.login import run as login_run

        return login_run(args.action)
    if args.cmd == "doctor":
        from mcb_bridge.chat.doctor import main as doctor_main

        return doctor_main()
    if args.cmd == "mcp":
        # Replace this process: stdout belongs to the MCP protocol from here on.
        os.execv(sys.executable, [sys.executable, "-m", "mcb_bridge", "stdio"])
    return 2


if __name__ == "__main__":
    sys.exit(main())
