"""``python -m mcb_journal`` / ``mcb-journal``: run the journal service."""

from __future__ import annotations

import asyncio
import logging

from mcb_rpc.service import configure_logging


def setup_logging() -> None:
    configure_logging("journal")
    # httpx logs every request at INFO: a line per world-host call, the observer's polls included
    # (4 a second while idle, one per page during an apply). Its warnings and errors still show.
    logging.getLogger("httpx").setLevel(logging.WARNING)


def main() -> None:
    setup_logging()
    from .app import main_async

    asyncio.run(main_async())


if __name__ == "__main__":
    main()
