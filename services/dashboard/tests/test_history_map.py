"""Issue 32 item 3 (the dashboard's History page): stable, distinct colours per legend entry, the
map's PNG (read back by Pillow, an independent decoder), the window of a large area, the pixel ->
column mapping of a click, and the page's HTML (escaped, legend, slider, column history). The page
in a real browser on the real stack: tests/e2e/test_dashboard_history.py."""

from __future__ import annotations

import io

import pytest
from mcb_dashboard import histmap, historypage

AREA = {"min": {"x": -64, "y": -64, "z": -64}, "max": {"x": 63, "y": 319, "z": 63}}
ALEX = {"source": "player", "player_id": "u-1", "player_name": "Alex"}
BOOM = {"source": "environment", "cause": "explosion"}
OP = {"source": "ours", "operation_id": "op_1234"}


def test_colours_are_stable_and_tell_entries_apart():
    assert histmap.colour(ALEX) == histmap.colour(dict(ALEX))
    # a player is their id: another name for the same id keeps the colour
    assert histmap.colour(ALEX) == histmap.colour(ALEX | {"player_name": "Alex2"})
    players = [histmap.colour({"source": "player", "player_id": f"u-{i}"}) for i in range(12)]
    ops = [histmap.colour({"source": "ours", "operation_id": f"op_{i}"}) for i in range(12)]
    causes = [histmap.colour({"source": "environment", "cause": c}) for c in histmap.CAUSE_COLOURS]
    assert len(set(causes)) == len(causes)
    everything = players + ops + causes
    assert len(set(everything)) == len(everything)
    assert histmap.UNCHANGED not in everything
    # environment "" reads as other (hosts before causes)
    assert histmap.colour({"source": "environment", "cause": ""}) == histmap.CAUSE_COLOURS["other"]
    assert histmap.hex_colour((1, 2, 255)) == "#0102ff"


def test_the_png_shows_each_column_in_its_colour():
    image = pytest.importorskip("PIL.Image")
    win = histmap.window(AREA)
    assert (win.x0, win.z0, win.x1, win.z1, win.scale) == (-64, -64, 63, 63, 6)
    doc = {"legend": [ALEX, BOOM, OP], "x": [-64, 0, 63], "z": [-64, 5, 63], "who": [0, 1, 2]}
    img = image.open(io.BytesIO(histmap.png(win, doc))).convert("RGB")
    assert img.size == (128 * 6, 128 * 6)
    for x, z, who in ((-64, -64, ALEX), (0, 5, BOOM), (63, 63, OP)):
        px, py = (x - win.x0) * 6, (z - win.z0) * 6
        assert img.getpixel((px + 5, py + 5)) == histmap.colour(who)
        assert win.column_at(px + 3, py + 5) == (x, z)
    assert img.getpixel((6, 0)) == histmap.UNCHANGED
    assert win.column_at(-1, 0) is None and win.column_at(768, 0) is None


def test_a_large_area_is_looked_at_one_window_at_a_time():
    big = {"min": {"x": 0, "y": 0, "z": 0}, "max": {"x": 999, "y": 100, "z": 299}}
    win = histmap.window(big)
    assert (win.x0, win.x1, win.z0, win.z1, win.scale) == (0, 255, 0, 255, 3)
    east = histmap.window(big, 900, 100)  # moved back inside the area
    assert (east.x0, east.x1, east.z0, east.z1) == (744, 999, 44, 299)
    assert histmap.window(big, -50, -50).x0 == 0


def test_the_page_has_the_legend_the_slider_and_escapes():
    project = {"project_id": "p<1", "name": "Tower <b>", "area": AREA}
    doc = {
        "legend": [ALEX | {"columns": 2}, BOOM | {"columns": 1}, OP | {"columns": 1}],
        "x": [0, 1, 2, 3],
        "z": [0, 0, 0, 0],
        "who": [0, 0, 1, 2],
        "at_millis": [1, 2, 3, 4],
        "first_millis": 1_000,
        "last_millis": 2_000,
        "note": "",
    }
    html = historypage.page(project, histmap.window(AREA), doc, 0)
    assert "Tower &lt;b&gt;" in html and "<b>" not in html and 'action="/projects/p&lt;1/history"' in html
    for who in (ALEX, BOOM, OP):
        assert f'data-who="{histmap.key(who)}" data-colour="{histmap.hex_colour(histmap.colour(who))}"' in html
    assert "player Alex · 2 columns" in html and 'href="/operations/op_1234"' in html
    assert 'type="range" id="until" name="until" min="999" max="2000" step="1" value="2000"' in html
    assert 'type="image" id="history-map" name="at"' in html
    empty = historypage.page(
        project,
        histmap.window(AREA),
        doc | {"legend": [], "x": [], "z": [], "who": [], "at_millis": [], "last_millis": 0},
        0,
    )
    assert "No change has been observed" in empty


def test_a_columns_history_lists_who_when_and_the_blocks():
    hist = {
        "complete": False,
        "note": "",
        "entries": [
            {
                "source": "ours",
                "operation_id": "op_9",
                "asked_by": "owner-uuid",
                "prompt": "a <b>oak</b> floor",
                "at_millis": 3_000,
                "pos": {"x": 1, "y": 65, "z": 2},
                "before": "minecraft:air",
                "after": "minecraft:oak_planks",
            },
            {
                "source": "environment",
                "cause": "explosion",
                "at_millis": 2_000,
                "pos": {"x": 1, "y": 64, "z": 2},
                "before": "minecraft:stone",
                "after": "minecraft:air",
            },
            {
                "source": "player",
                "player_name": "<Alex>",
                "at_millis": 1_000,
                "pos": {"x": 1, "y": 64, "z": 2},
                "before": "minecraft:air",
                "after": "minecraft:stone",
            },
        ],
    }
    html = historypage.column_section(1, 2, hist, "", 2_500)
    assert html.index("op_9") < html.index("explosion") < html.index("&lt;Alex&gt;")
    assert "<q>a &lt;b&gt;oak&lt;/b&gt; floor</q>" in html  # the request that started it, escaped
    assert "asked by <code>owner-uuid</code>" in html and "minecraft:air</code> → <code>minecraft:oak_planks" in html
    assert html.count("after the map’s time") == 1 and "Older changes not listed" in html
    assert "1970-01-01 00:00:02.000 UTC" in html
    assert "not_found" in historypage.column_section(1, 2, None, "not_found: x", 0)
