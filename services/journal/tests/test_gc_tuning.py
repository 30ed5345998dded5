"""The journal's GC settings after start-up (app.tune_gc, issue 29): what start-up made is frozen
out of the collector's walks and the young generation is collected less often."""

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
