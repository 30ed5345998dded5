"""``python -m mcb_journal`` / ``mcb-journal``: run the journal service."""

from __future__ import annotations

import asyncio

from mcb_rpc.service import configure_logging


def main() -> None:
    configure_logging("journal")
    from .app import main_async

    asyncio.run(main_async())


if __name__ == "__main__":
    main()
