"""Issue 32 item 1: an operation's page shows its plan's preview while nothing is written yet
(prepared, queued, waiting for writes to resume) and not once it has started; a prepared plan's own
page shows it too. The picture itself (a real capture in Chromium) is tested in
tests/e2e/test_dashboard.py (test_a_prepared_plans_page_shows_its_preview)."""

from __future__ import annotations

import pytest
from mcb_dashboard import render

PLAN = {"plan_id": "pl_0123456789abcdef", "changed_blocks": 4}


def entry(state: str) -> dict:
    return {
        "project_id": "default",
        "plan": PLAN,
        "report": {"operation_id": "op_1", "state": state, "plan_id": PLAN["plan_id"]},
    }


@pytest.mark.parametrize("state", ["prepared", "queued", "waiting_for_resume"])
def test_not_started_operations_show_the_preview(state):
    html = render.operation_page(entry(state), [], None, "", "", False)
    assert 'figure data-capture="preview"' in html
    assert 'src="/plans/pl_0123456789abcdef/preview.png?project=default"' in html


@pytest.mark.parametrize("state", ["applying", "applied", "conflict", "cancelled", "failed", "recovery_required"])
def test_started_or_finished_operations_do_not(state):
    assert 'data-capture="preview"' not in render.operation_page(entry(state), [], None, "", "", False)


def test_the_plan_page_escapes_and_shows_the_preview():
    html = render.plan_page(
        "de<fault",
        {
            "plan_id": "pl_0123456789abcdef",
            "changed": 3,
            "total": 5,
            "expires_at": "2026-12-02T12:00:00.000Z",
            "bounds": {"min": {"x": 0, "y": 64, "z": 0}, "max": {"x": 2, "y": 64, "z": 0}},
        },
    )
    assert "de&lt;fault" in html and "de<fault" not in html
    assert "3 changed of 5 positions" in html and 'data-capture="preview"' in html
