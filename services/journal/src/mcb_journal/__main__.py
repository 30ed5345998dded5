"""``python -m mcb_journal`` / ``mcb-journal``: run the journal service."""

from __future__ import annotations

import asyncio

from mcb_rpc.service import configure_logging


def setup_logging() -> None:
    configure_logging("journal")  # httpx's line a request silenced (the observer polls 4 times a second)


def main() -> None:
    setup_logging()
    from .app import main_async

    asyncio.run(main_async())


if __name__ == "__main__":
    main()
