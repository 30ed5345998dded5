"""Issue 32 item 4, the dashboard's part (rollbackpage.py): the History page's Prepare rollback form
and legend buttons, the form's values, who made the later edits a rollback leaves alone, and the
rollback's summary with the consent checkbox on its plan page. The actions over real gRPC:
test_rollback_actions.py; the whole flow in Chromium: tests/e2e/test_dashboard_history.py."""

from __future__ import annotations

import pytest
from mcb_common.errors import McbError
from mcb_dashboard import histmap, historypage, rollbackpage

AREA = {"min": {"x": -64, "y": -64, "z": -64}, "max": {"x": 63, "y": 319, "z": 63}}
GRIEF = {"source": "player", "player_id": "u-g", "player_name": "Grief<er>", "columns": 3}
BOOM = {"source": "environment", "cause": "explosion", "columns": 1}
OP = {"source": "ours", "operation_id": "op_1", "columns": 1}
DOC = {
    "legend": [GRIEF, BOOM, OP],
    "x": [0],
    "z": [0],
    "who": [0],
    "at_millis": [1],
    "first_millis": 1_000,
    "last_millis": 2_000,
    "note": "",
}


def page(session: bool, until: int = 0) -> str:
    win = histmap.window(AREA)
    form = rollbackpage.form(
        "p1",
        DOC["legend"] + [GRIEF | {"columns": 9}],
        win.x0,
        win.z0,
        until or 2_000,
        "c5rf" if session else "",
        session,
    )
    return historypage.page(
        {"project_id": "p1", "name": "n", "area": AREA},
        win,
        DOC,
        until,
        "",
        lambda w: rollbackpage.legend_button(w, session),
        form,
    )


def test_players_and_causes_get_a_button_and_the_form_defaults_to_the_sliders_time():
    html = page(True, until=1_500)
    assert html.count('form="rollback-form" name="target"') == 2  # not the operation
    assert 'value="player:u-g"' in html and 'value="environment:explosion"' in html
    assert 'id="rollback-form" method="post" action="/projects/p1/rollback"' in html
    assert '<input type="hidden" name="csrf" value="c5rf">' in html
    assert 'name="since" size="28" value="1970-01-01 00:00:01.500 UTC"' in html
    assert '<option value="player:u-g">player Grief&lt;er&gt;</option>' in html and "Grief<er>" not in html
    assert html.count('<option value="player:u-g">') == 1  # once, though in the legend of then and of now
    assert 'name="window" value="1"' in html and 'name="x0" value="-64"' in html
    assert " disabled" not in html


def test_logged_out_the_buttons_are_disabled_and_carry_no_csrf():
    html = page(False)
    assert html.count('disabled title="log in with the admin token first"') == 3  # 2 legend buttons + the form's
    assert 'name="csrf" value=""' in html


def test_no_form_without_a_player_or_cause():
    assert rollbackpage.form("p", [OP], 0, 0, 1, "c", True) == ""


def test_the_forms_values():
    assert rollbackpage.parse_target("player:u-g") == ("u-g", "")
    assert rollbackpage.parse_target("environment:") == ("", "other")
    assert rollbackpage.parse_since("1700000000000") == 1_700_000_000_000
    assert rollbackpage.parse_since("1970-01-01 00:00:01.500 UTC") == 1_500
    assert rollbackpage.parse_since("1970-01-01T00:01") == 60_000
    for bad_target in ("", "ours:op_1", "player:"):
        with pytest.raises(McbError, match="roll back whom"):
            rollbackpage.parse_target(bad_target)
    for bad in ("", "0", "yesterday", "1970-13-01 00:00"):
        with pytest.raises(McbError, match="since must be a time"):
            rollbackpage.parse_since(bad)


def test_later_edits_are_the_others_after_the_targets_last():
    newest_first = [
        {"source": "player", "player_id": "u-a", "player_name": "Alex", "at_millis": 30},
        {"source": "environment", "cause": "fire", "at_millis": 20},
        {"source": "player", "player_id": "u-g", "player_name": "Griefer", "at_millis": 10},
        {"source": "player", "player_id": "u-a", "player_name": "Alex", "at_millis": 5},
    ]
    assert [x["at_millis"] for x in rollbackpage.later_edits(newest_first, "u-g", "")] == [30, 20]
    assert [x["at_millis"] for x in rollbackpage.later_edits(newest_first, "griefer", "")] == [30, 20]  # a name
    assert [x["at_millis"] for x in rollbackpage.later_edits(newest_first, "", "fire")] == [30]


def rollback(player_blocks: int) -> rollbackpage.Rollback:
    summary = {
        "plan_id": "pl_0123456789abcdef",
        "plan_hash": "h4sh",
        "changed_blocks": 2,
        "total_positions": 2,
        "warnings": ["rollback of player u-g since 1500: 2 blocks return ..."],
        "conflicts": [
            {
                "pos": {"x": 1, "y": 64, "z": 2},
                "expected": "minecraft:tnt",
                "current": "minecraft:glass",
                "desired": "minecraft:stone",
                "source": "player",
            },
            {"pos": {"x": 3, "y": 64, "z": 2}, "expected": "a", "current": "b", "desired": "c", "source": "external"},
        ],
        "replaced": {"total": player_blocks, "by_source": [{"source": "player", "count": player_blocks}]},
    }
    rb = rollbackpage.Rollback("p1", "player Grief<er>", 1_500, summary)
    rb.later[(1, 64, 2)] = [
        {
            "source": "player",
            "player_name": "Alex",
            "at_millis": 2_000,
            "before": "minecraft:tnt",
            "after": "minecraft:glass",
        }
    ]
    return rb


def test_the_plan_page_lists_what_is_restored_and_who_made_the_edits_left_alone():
    blocks = [({"x": 1, "y": 65, "z": 2}, "minecraft:stone"), ({"x": 0, "y": 64, "z": 0}, "minecraft:air")]
    html = rollbackpage.section(rollback(2), "pl_0123456789abcdef", "p1", blocks, "c5rf", True)
    assert "Rollback of player Grief&lt;er&gt; since 1970-01-01 00:00:01.500 UTC" in html and "<er>" not in html
    assert "2 blocks return to how they were before" in html
    assert html.count('<tr class="restore">') == 2 and "(1, 65, 2)</td><td><code>minecraft:stone" in html
    left = html[html.index('id="rollback-left"') :]
    assert left.count('class="left-alone"') == 2
    assert "player Alex at 1970-01-01 00:00:02.000 UTC: <code>minecraft:tnt</code> → <code>minecraft:glass" in left
    assert "changed without an event (an external edit)" in left
    assert (
        'name="replace_player_blocks" value="1" required> Yes, replace the 2 player blocks player Grief&lt;er&gt; placed with what was there before'
        in html
    )
    assert 'action="/operations/pl_0123456789abcdef/apply"' in html and 'name="csrf" value="c5rf"' in html
    assert "/ai apply" in html and '"plan_hash": "h4sh"' in html


def test_no_consent_checkbox_without_player_blocks_and_no_apply_without_a_summary():
    html = rollbackpage.section(rollback(0), "pl_0123456789abcdef", "p1", None, "", False)
    assert "replace_player_blocks" not in html.split("Other ways")[0] and "Apply rollback</button>" in html
    assert "disabled" in html
    bare = rollbackpage.section(None, "pl_0123456789abcdef", "p1", None, "c", True)
    assert "Apply rollback" not in bare and "/ai apply" in bare


def test_a_rollback_summary_is_kept_for_the_newest_plans_only():
    keep = rollbackpage.Rollbacks(keep=2)
    for i in range(3):
        keep.put(rollbackpage.Rollback("p", "x", 1, {"plan_id": f"pl_{i}"}))
    assert keep.get("pl_0") is None and keep.get("pl_2") is not None
