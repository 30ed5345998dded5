"""Issue 32 item 3, the dashboard's History page in a real browser (Debian's Chromium through
Playwright, as test_dashboard.py) on the real stack with the embedded host: a named player's edit,
an environment change (an explosion) and one of our operations -> the map shows three distinct
legend entries in their colours (the PNG read back by Pillow); the slider set before the operation
hides it; a click on a column lists that column's history (who, when, block before -> after).
Item 4 from the same page: a griefer's edits rolled back (Prepare rollback, the plan's page, Apply
rollback), exactly their changes undone."""

from __future__ import annotations

import io
import json

import httpx
import pytest
from e2e.components import start_components
from e2e.mcpclient import apply_and_wait, call
from e2e.test_dashboard import ARGS, CHROMIUM, TIMEOUT_MS, in_thread, login, tokens

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's chromium is not installed (scripts/test_deps.sh installs it as root: apt-get install chromium)",
)


@pytest.fixture(scope="module")
def dash(tmp_path_factory):
    playwright = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    tmp = tmp_path_factory.mktemp("dashboard-history")
    comp = start_components(tmp / "rt")  # the embedded host
    try:
        comp.start("dashboard")
        with playwright.sync_playwright() as pw:
            ctx = pw.chromium.launch_persistent_context(
                str(tmp / "profile"),
                executable_path=CHROMIUM,
                headless=True,
                args=ARGS,
                viewport={"width": 1280, "height": 1100},
            )
            requests: list[str] = []
            ctx.on("request", lambda r: requests.append(r.url))
            page = ctx.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            yield {
                "comp": comp,
                "base": f"http://127.0.0.1:{comp.ports['dashboard']}",
                "page": page,
                "requests": requests,
                "tmp": tmp,
            }
            ctx.close()
    finally:
        comp.stop_all()


def automation(comp, x, y, z, state, **who):
    comp.world_rpc(
        "automation_set_blocks", who | {"blocks": [{"x": x, "y": y, "z": z, "state": state}]}, principal="automation"
    )


def legend(page) -> dict[str, str]:
    return {
        li.get_attribute("data-who"): li.get_attribute("data-colour")
        for li in page.locator("#history-legend li[data-colour]").all()
    }


def map_pixel(base: str, src: str, x: int, z: int, x0: int, z0: int, scale: int) -> str:
    from PIL import Image

    png = httpx.get(base + src, timeout=30).content
    img = Image.open(io.BytesIO(png)).convert("RGB")
    r, g, b = img.getpixel(((x - x0) * scale + scale // 2, (z - z0) * scale + scale // 2))
    return f"#{r:02x}{g:02x}{b:02x}"


def test_the_map_colours_who_changed_each_column_the_slider_goes_back_and_a_click_lists_a_column(dash):
    page, comp, base = dash["page"], dash["comp"], dash["base"]
    project = json.loads((comp.runtime / "config.json").read_text())["projects"][0]["project_id"]
    holder: dict = {}

    async def scenario(client):
        for x in (5, 6):
            automation(comp, x, 64, 7, "minecraft:glass", actor="player", playerId="uuid-alex", playerName="Alex")
        automation(comp, 9, 64, 7, "minecraft:stone", actor="external")  # silent: not in the history
        automation(comp, 9, 64, 7, "minecraft:air", actor="environment", cause="explosion")
        plan = await call(
            client,
            "build_prepare",
            {
                "recipe": {
                    "version": 1,
                    "operations": [
                        {
                            "type": "box",
                            "min": {"x": 6, "y": 66, "z": 7},
                            "max": {"x": 6, "y": 66, "z": 7},
                            "block": "minecraft:oak_planks",
                        }
                    ],
                }
            },
        )  # above Alex's second glass: that column's last change
        holder["st"] = await apply_and_wait(client, plan)

    in_thread(comp, scenario)
    st = holder["st"]
    assert st["state"] == "applied", st
    op = st["operation_id"]

    page.goto(f"{base}/")
    page.click(f'a[href="/projects/{project}/history"]')
    page.wait_for_selector("#history-map")
    got = legend(page)
    assert set(got) == {"player:uuid-alex", "environment:explosion", f"ours:{op}"}, got
    assert len(set(got.values())) == 3  # three distinct colours
    assert "observation was interrupted" not in page.inner_text("#history")  # the journal's first gap hides nothing
    assert "player Alex · 1 column" in page.inner_text("#history-legend")
    img = page.locator("#history-map")
    x0, z0, scale = (int(img.get_attribute(a)) for a in ("data-x0", "data-z0", "data-scale"))
    src = img.get_attribute("src")
    assert map_pixel(base, src, 5, 7, x0, z0, scale) == got["player:uuid-alex"]
    assert map_pixel(base, src, 9, 7, x0, z0, scale) == got["environment:explosion"]
    assert map_pixel(base, src, 6, 7, x0, z0, scale) == got[f"ours:{op}"]
    page.screenshot(path=str(dash["tmp"] / "history-now.png"), full_page=True)

    # the slider just before the operation (the newest change): its column shows Alex again
    ends = json.loads(
        page.evaluate("""() => JSON.stringify([document.getElementById('until').min,
                                                             document.getElementById('until').max])""")
    )
    assert int(ends[0]) < int(ends[1])
    page.evaluate("""() => { const s = document.getElementById('until'); s.value = String(Number(s.max) - 1);
                             s.dispatchEvent(new Event('input')); s.dispatchEvent(new Event('change')); }""")
    page.wait_for_url("**until=*")
    page.wait_for_selector("#history-map")
    before = legend(page)
    assert set(before) == {"environment:explosion", "player:uuid-alex"}, before
    assert before["player:uuid-alex"] == got["player:uuid-alex"]  # stable colours
    assert "player Alex · 2 columns" in page.inner_text("#history-legend")
    img = page.locator("#history-map")
    assert map_pixel(base, img.get_attribute("src"), 6, 7, x0, z0, scale) == before["player:uuid-alex"]

    # back to now, then a click on the operation's column lists its history, newest first
    page.goto(f"{base}/projects/{project}/history")
    page.click("#history-map", position={"x": (6 - x0) * scale + scale // 2, "y": (7 - z0) * scale + scale // 2})
    page.wait_for_selector("#column-history")
    assert "Column (6, 7)" in page.inner_text("#column-history h2")
    rows = page.locator("#column-history tbody tr").all()
    assert [r.get_attribute("data-source") for r in rows] == ["ours", "player"]
    newest, oldest = rows[0].inner_text(), rows[1].inner_text()
    assert op in newest and "(6, 66, 7)" in newest and "minecraft:air → minecraft:oak_planks" in newest
    assert "player Alex" in oldest and "(6, 64, 7)" in oldest and "→ minecraft:glass" in oldest
    assert "UTC" in newest
    page.screenshot(path=str(dash["tmp"] / "history-column.png"), full_page=True)

    body = page.content()
    for principal in ("agent", "admin", "service", "automation"):
        assert comp.token(principal) not in body
    outside = [u for u in dash["requests"] if not u.startswith(base + "/")]
    assert not outside, outside


def test_bad_input_gets_a_message_not_a_traceback(dash):
    base = dash["base"]
    r = httpx.get(f"{base}/projects/nope/history", timeout=30)
    assert r.status_code == 404 and "no project" in r.text
    project = json.loads((dash["comp"].runtime / "config.json").read_text())["projects"][0]["project_id"]
    r = httpx.get(f"{base}/projects/{project}/history", params={"until": "soon"}, timeout=30)
    assert r.status_code == 400 and "until must be a number" in r.text
    r = httpx.get(f"{base}/projects/{project}/history", params={"x": 5000, "z": 0}, timeout=30)
    assert r.status_code == 200 and "out_of_bounds" in r.text  # the column's history is refused, the map stays


GRIEFER = {"actor": "player", "playerId": "uuid-g3", "playerName": "Griefer3"}
BOB = {"actor": "player", "playerId": "uuid-bob", "playerName": "Bob"}
ALEX = {"actor": "player", "playerId": "uuid-alex", "playerName": "Alex"}
WALL = [(10, 64, -20), (11, 64, -20), (12, 64, -20)]
WATCHED = [*WALL, (12, 65, -20), (13, 65, -20)]


def states(comp) -> dict[tuple[int, int, int], str]:
    res = comp.world_rpc("blocks_get", {"xyz": [c for p in WATCHED for c in p]})
    return {p: res["palette"][i] for p, i in zip(WATCHED, res["state"], strict=True)}


def test_a_griefers_changes_are_rolled_back_from_the_history_page(dash):
    """Issue 32 item 4: a griefer's edits among Alex's and Bob's; Prepare rollback on the griefer's
    legend entry (since a time typed into the form) -> the plan's page lists the blocks it restores
    and Bob's later repair it leaves alone (named); Apply rollback with the consent box -> exactly
    the griefer's changes are undone."""
    import time

    from mcb_dashboard.historypage import when

    page, comp, base = dash["page"], dash["comp"], dash["base"]
    project = json.loads((comp.runtime / "config.json").read_text())["projects"][0]["project_id"]
    for x, y, z in WALL:
        automation(comp, x, y, z, "minecraft:stone_bricks", **ALEX)
    untouched = states(comp)
    time.sleep(0.05)
    since = int(time.time() * 1000)
    time.sleep(0.05)
    for x, y, z, s in [
        (10, 64, -20, "minecraft:air"),
        (11, 64, -20, "minecraft:air"),
        (12, 65, -20, "minecraft:tnt"),
        (13, 65, -20, "minecraft:tnt"),
    ]:
        automation(comp, x, y, z, s, **GRIEFER)
    automation(comp, 11, 64, -20, "minecraft:cobblestone", **BOB)  # Bob repairs one, after the griefer
    before = states(comp)

    login(dash)
    # the slider set back to just before: the form's since is the next millisecond, and it offers the griefer
    page.goto(f"{base}/projects/{project}/history?until={since - 1}")
    page.wait_for_selector("#rollback-form")
    assert page.input_value("#rollback-since") == when(since)
    assert page.locator('#rollback-who option[value="player:uuid-g3"]').count() == 1
    assert page.locator('#history-legend li[data-who="player:uuid-g3"]').count() == 0  # not on the map then
    # now: the griefer's own legend entry, the time typed into the form
    page.goto(f"{base}/projects/{project}/history")
    page.wait_for_selector("#rollback-form")
    page.fill("#rollback-since", when(since))
    page.click('#history-legend li[data-who="player:uuid-g3"] button')
    page.wait_for_selector("#rollback")
    assert "/operations/pl_" in page.url
    assert "rollback prepared" in page.inner_text(".flash")
    text = page.inner_text("#rollback")
    assert "Rollback of player Griefer3" in text and "3 blocks return to how they were before" in text, text
    restore = {r.inner_text().split("\t")[0]: r.inner_text() for r in page.locator("#rollback-restore tbody tr").all()}
    assert set(restore) == {"(10, 64, -20)", "(12, 65, -20)", "(13, 65, -20)"}, restore
    assert "minecraft:stone_bricks" in restore["(10, 64, -20)"]
    left = page.locator("#rollback-left tbody tr").all()
    assert len(left) == 1, [r.inner_text() for r in left]
    assert "(11, 64, -20)" in left[0].inner_text() and "player Bob" in left[0].inner_text()
    assert "minecraft:air → minecraft:cobblestone" in left[0].inner_text()
    assert "replace the 2 player blocks" in page.inner_text("#rollback form.apply")
    assert states(comp) == before, "preparing wrote nothing"
    page.screenshot(path=str(dash["tmp"] / "rollback-plan.png"), full_page=True)
    body = page.content()
    assert not [t for t in tokens(comp) if t in body]

    page.check('#rollback input[name="replace_player_blocks"]')
    page.click("#rollback form.apply button")
    page.wait_for_url("**/operations/op_*")
    assert "apply: the operation is now" in page.inner_text(".flash")
    deadline = time.monotonic() + 90
    while (state := page.locator("span.badge[data-state]").first.inner_text()) not in ("applied", "conflict", "failed"):
        assert time.monotonic() < deadline, state
        time.sleep(0.5)
        page.reload()
    assert state == "applied", page.inner_text("main")
    after = states(comp)
    assert after[(10, 64, -20)] == "minecraft:stone_bricks"  # the griefer's break is undone
    assert after[(11, 64, -20)] == "minecraft:cobblestone"  # Bob's repair stays
    assert after[(12, 65, -20)] == untouched[(12, 65, -20)] and after[(13, 65, -20)] == untouched[(13, 65, -20)]
    assert after[(12, 64, -20)] == before[(12, 64, -20)] == "minecraft:stone_bricks"  # nothing else changed
