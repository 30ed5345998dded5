"""One real stack for the stack-level hardening tests of a session (started on first use)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def hostile_stack(tmp_path_factory):
    """Redis, the embedded world host, planner, journal and bridge as processes
    (``tests/e2e/components.py``, imported unchanged)."""
    from e2e.components import start_components

    comp = start_components(tmp_path_factory.mktemp("hostile") / "rt")
    try:
        yield comp
    finally:
        comp.stop_all()
