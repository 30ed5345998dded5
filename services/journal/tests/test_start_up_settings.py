"""The journal process's settings at start-up (issue 29): the GC (app.tune_gc: what start-up made
is frozen out of the collector's walks, the young generation is collected less often) and its log
(no line per world-host request)."""

from __future__ import annotations

import gc

from mcb_journal import app


def test_tune_gc_freezes_start_up_objects_and_raises_the_thresholds():
    before = gc.get_threshold()
    try:
        app.tune_gc()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == app.GC_THRESHOLDS
        assert app.GC_THRESHOLDS[0] > before[0]
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_the_services_log_no_line_per_http_request():
    """httpx's INFO line per request (the journal's observer polls 4 times a second) stays out of the
    journal's log and every service's that configures logging through mcb_rpc (planner, camera
    worker, dashboard); its warnings do not."""
    import logging

    from mcb_journal.__main__ import setup_logging
    from mcb_rpc.service import configure_logging

    httpx_log = logging.getLogger("httpx")
    before = httpx_log.level
    try:
        for setup in (setup_logging, lambda: configure_logging("camera-worker")):
            httpx_log.setLevel(logging.NOTSET)
            setup()
            # its own level (the effective one also depends on the root logger, which pytest sets)
            assert httpx_log.level == logging.WARNING
    finally:
        httpx_log.setLevel(before)
