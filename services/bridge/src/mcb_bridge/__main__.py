"""``python -m mcb_bridge http|stdio|chat|doctor`` (also the ``mcb-bridge`` script; ``mcb mcp`` = stdio).

http   MCP streamable HTTP at http://$MCB_BIND_HOST:$MCB_BRIDGE_PORT/mcp (default
       127.0.0.1:8787), bearer auth with the agent token, plus GET /health.
stdio  MCP over stdin/stdout for a client that spawns this process (the user's own process:
       no HTTP auth); stdout is the protocol, so every log line goes to stderr.
chat   the in-game chat loop: chat_poll/chat_reply with the admin token, an ACP agent per
       project (see mcb_bridge/chat and docs/chat.md).
doctor JSON diagnostics of the chat bridge (also `mcb doctor`).

Exit codes: 0 stopped cleanly, 2 configuration missing (the message says what to set).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from .config import ConfigError, load_config
from .server import Bridge, build_server, http_app

log = logging.getLogger("mcb.bridge")


class RedactSecrets(logging.Filter):
    """Last line of defence: replace any known secret value in a log record with ***."""

    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if s]

    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        changed = False
        for s in self.secrets:
            if s in msg:
                msg = msg.replace(s, "***")
                changed = True
            if record.exc_text and s in record.exc_text:
                record.exc_text = record.exc_text.replace(s, "***")
        if changed:
            record.msg, record.args = msg, None
        return True


def _configure_logging(secrets: list[str]) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s bridge %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactSecrets(secrets))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    for noisy in ("httpx", "httpx2", "mcp", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


async def _serve_http(bridge: Bridge) -> None:
    import uvicorn

    cfg = bridge.config
    config = uvicorn.Config(
        http_app(bridge),
        host=cfg.bind_host,
        port=cfg.port,
        log_level="warning",
        access_log=False,
        lifespan="on",
        http="h11",  # not httptools: it drops the body of a request proposing an h2c upgrade
        log_config=None,  # keep our stderr handler (and its redaction filter)
    )
    server = uvicorn.Server(config)
    log.info("MCP streamable HTTP on %s (journal %s, project %s)", cfg.mcp_url, cfg.journal_addr, cfg.project_id)
    try:
        await server.serve()
    finally:
        await bridge.journal.close()
    log.info("bridge stopped")


async def _serve_stdio(bridge: Bridge) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(bridge)
    log.info("MCP over stdio (journal %s, project %s)", bridge.config.journal_addr, bridge.config.project_id)
    try:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        await bridge.journal.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mcb-bridge", description="The minecraft-builder MCP server.")
    parser.add_argument(
        "transport",
        choices=["http", "stdio", "chat", "doctor"],
        help="http: streamable HTTP; stdio: stdin/stdout; chat: the in-game chat loop "
        "(ACP agent); doctor: JSON diagnostics of the chat bridge",
    )
    args = parser.parse_args(argv)
    _configure_logging([])
    if args.transport in ("chat", "doctor"):
        from mcb_rpc.settings import Settings
        from mcb_rpc.tokens import read_token

        s = Settings.from_env()
        _configure_logging(
            [read_token(s.secrets_dir, p) or "" for p in ("admin", "agent", "automation")]
            + [s.world_host_token(p) or "" for p in ("service", "admin")]
        )
        if args.transport == "doctor":
            from .chat.doctor import main as doctor_main

            return doctor_main()
        from .chat.service import main as chat_main

        return chat_main()
    try:
        config = load_config()
    except ConfigError as exc:
        log.error("cannot start: %s", exc)
        return 2
    _configure_logging([config.agent_token])
    bridge = Bridge(config)
    try:
        asyncio.run(_serve_http(bridge) if args.transport == "http" else _serve_stdio(bridge))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
