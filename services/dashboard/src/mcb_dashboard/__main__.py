"""``python -m mcb_dashboard`` / ``mcb-dashboard``: serve the dashboard on MCB_BIND_HOST:MCB_DASHBOARD_PORT."""

from __future__ import annotations

import asyncio

from mcb_rpc.service import configure_logging


def main() -> None:
    configure_logging("dashboard")
    from .app import main_async

    asyncio.run(main_async())


if __name__ == "__main__":
    main()
