"""`oni`: the agent toolchain's command line (seed 004).

  oni status                      colony summary (game, duplicants, power)
  oni analyze [--json]            oxygen, food, power, temperature, water: levels and recommendations
  oni build ID X Y [--rotation R] queue a building
  oni dig X Y W H                 queue digging a rectangle
  oni research TECH               choose the research
  oni blueprint list|show NAME|plan NAME X Y|apply NAME X Y [--wait S]
  oni watch [--interval S] [--count N]   report new alerts and analysis changes

The mod is found through config.json ({"modHost", "modPort", "timeout"}; --config, $ONI_AGENT_CONFIG,
./config.json, else 127.0.0.1:23876) or --url. Exit codes: 0 ok, 1 refused/critical (see each
command), 2 the mod answered an error, 3 the mod cannot be reached, 4 bad configuration.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from . import analysis, blueprints
from .client import ModClient, ModError
from .config import ConfigError, load


def _out(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, indent=1, ensure_ascii=False) if args.json else text)


def cmd_status(c: ModClient, a: argparse.Namespace) -> int:
    game = c.state("game")
    dupes = c.state_all("duplicants")
    lines = [f"{game['worldName']}: cycle {game['cycle']}, {game['duplicantCount']} duplicant(s)"]
    if isinstance(game.get("power"), dict):
        p = game["power"]
        lines.append(f"power: {p['produced']:.0f} W produced, {p['consumed']:.0f} W used, {p['stored']:.0f} J stored")
    for d in dupes:
        lines.append(f"  {d['name']:<12} stress {d['stress']:5.1f}  {d['calories'] / 1000:6.0f} kcal  "
                     f"stamina {d['stamina']:5.1f}  breath {d['oxygen']:5.1f}")
    _out(a, {"game": game, "duplicants": dupes}, "\n".join(lines))
    return 0


def _report_text(rep: dict[str, Any]) -> str:
    lines = [f"colony: {rep['status']} (cycle {rep['cycle']}, {rep['duplicants']} duplicants)"]
    for f in rep["findings"]:
        mark = {"ok": "  ok ", "warning": "  !! ", "critical": "  XX "}[f["level"]]
        lines.append(f"{mark}{f['area']:<12} {f['message']}")
        if f.get("recommendation"):
            lines.append(f"       -> {f['recommendation']}")
    return "\n".join(lines)


def cmd_analyze(c: ModClient, a: argparse.Namespace) -> int:
    rep = analysis.analyze(analysis.fetch_view(c))
    _out(a, rep, _report_text(rep))
    return 1 if a.strict and rep["status"] == "critical" else 0


def cmd_build(c: ModClient, a: argparse.Namespace) -> int:
    body: dict[str, Any] = {"buildingId": a.building_id, "x": a.x, "y": a.y}
    if a.rotation is not None:
        body["rotation"] = a.rotation
    r = c.action("build", body)
    _out(a, r, f"{r['result']}: {r['buildingId']} at ({r['x']},{r['y']})")
    return 0


def cmd_dig(c: ModClient, a: argparse.Namespace) -> int:
    r = c.action("dig", {"x": a.x, "y": a.y, "width": a.width, "height": a.height})
    _out(a, r, f"{r['result']}: {r['width']}x{r['height']} at ({r['x']},{r['y']})")
    return 0


def cmd_research(c: ModClient, a: argparse.Namespace) -> int:
    r = c.action("research", {"techId": a.tech_id})
    _out(a, r, f"{r['result']}: {r['techId']}")
    return 0


def cmd_blueprint(c: ModClient | None, a: argparse.Namespace) -> int:
    if a.bp_cmd == "list":
        data = {k: v["description"] for k, v in blueprints.BLUEPRINTS.items()}
        _out(a, data, "\n".join(f"{k:<10} {v}" for k, v in data.items()))
        return 0
    if a.name not in blueprints.BLUEPRINTS:
        print(f"error: no blueprint {a.name!r}; known: {', '.join(blueprints.BLUEPRINTS)}", file=sys.stderr)
        return 2
    if a.bp_cmd == "show":
        bp = {**blueprints.BLUEPRINTS[a.name], "research": blueprints.required_techs(blueprints.BLUEPRINTS[a.name])}
        _out(a, bp, json.dumps(bp, indent=1))
        return 0
    assert c is not None
    if a.bp_cmd == "plan":
        p = blueprints.plan(a.name, a.x, a.y, blueprints.world_view(c, a.name, a.x, a.y))
        text = [f"{a.name} at ({a.x},{a.y}): {'ok' if p['ok'] else 'refused'}"]
        text += [f"  problem: {x['message']}" for x in p["problems"]]
        text += [f"  warning: {x['message']}" for x in p["warnings"]]
        text += [f"  {x['action']} {json.dumps(x['body'])}" for x in p["actions"]]
        _out(a, p, "\n".join(text))
        return 0 if p["ok"] else 1
    end = time.monotonic() + a.wait
    while True:
        r = blueprints.apply_step(c, a.name, a.x, a.y,
                                  None if a.json else lambda i, n, m: print(f"  [{i}/{n}] {m}", flush=True))
        if not a.json:
            print(f"{a.name}: {r['phase']}" + (f" - {r.get('next')}" if r.get("next") else ""))
            for x in r.get("problems", []):
                print(f"  problem: {x['message']}")
        if r["phase"] in ("refused", "done") or time.monotonic() >= end:
            break
        time.sleep(min(1.0, max(0.05, a.poll)))
    if a.json:
        _out(a, r, "")
    return 1 if r["phase"] == "refused" else 0


def cmd_watch(c: ModClient, a: argparse.Namespace) -> int:
    seen: set[tuple[str, str]] = set()
    levels: dict[str, str] = {}
    n = 0
    while a.count <= 0 or n < a.count:
        n += 1
        view = analysis.fetch_view(c)
        for al in view["alert"]:
            key = (al["type"], al["message"])
            if key not in seen:
                seen.add(key)
                _emit(a, {"kind": "alert", **al}, f"ALERT [{al['severity']}] {al['type']}: {al['message']}")
        rep = analysis.analyze(view)
        worst: dict[str, str] = {}
        for f in rep["findings"]:
            if analysis.LEVELS.index(f["level"]) >= analysis.LEVELS.index(worst.get(f["area"], "ok")):
                worst[f["area"]] = f["level"]
        for area, lvl in worst.items():
            if lvl != levels.get(area, "ok"):
                finding = next(f for f in rep["findings"] if f["area"] == area and f["level"] == lvl)
                _emit(a, {"kind": "change", "area": area, "from": levels.get(area, "ok"), "to": lvl,
                          "message": finding["message"], "recommendation": finding.get("recommendation")},
                      f"{area}: {levels.get(area, 'ok')} -> {lvl}: {finding['message']}"
                      + (f" ({finding['recommendation']})" if finding.get("recommendation") else ""))
            levels[area] = lvl
        if a.count <= 0 or n < a.count:
            time.sleep(a.interval)
    return 0


def _emit(a: argparse.Namespace, data: dict[str, Any], text: str) -> None:
    print(json.dumps(data, ensure_ascii=False) if a.json else text, flush=True)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="oni", description="Play Oxygen Not Included through the agent mod's API.")
    p.add_argument("--config", help="config.json with modHost, modPort, timeout")
    p.add_argument("--url", help="the mod's base URL (overrides config.json), e.g. http://127.0.0.1:23876")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("status", help="colony summary")
    s = sub.add_parser("analyze", help="oxygen, food, power, temperature, water")
    s.add_argument("--strict", action="store_true", help="exit 1 when the colony is critical")
    s = sub.add_parser("build", help="queue a building")
    s.add_argument("building_id")
    s.add_argument("x", type=int)
    s.add_argument("y", type=int)
    s.add_argument("--rotation", type=int, choices=[0, 90, 180, 270])
    s = sub.add_parser("dig", help="queue digging a rectangle")
    for k in ("x", "y", "width", "height"):
        s.add_argument(k, type=int)
    s = sub.add_parser("research", help="choose the research")
    s.add_argument("tech_id")
    s = sub.add_parser("blueprint", help="list, show, plan or apply a blueprint")
    bsub = s.add_subparsers(dest="bp_cmd", required=True)
    bsub.add_parser("list")
    bsub.add_parser("show").add_argument("name")
    for name in ("plan", "apply"):
        b = bsub.add_parser(name)
        b.add_argument("name")
        b.add_argument("x", type=int)
        b.add_argument("y", type=int)
        if name == "apply":
            b.add_argument("--wait", type=float, default=0.0, help="keep stepping up to S seconds until done")
            b.add_argument("--poll", type=float, default=1.0, help="seconds between steps while waiting")
    s = sub.add_parser("watch", help="report new alerts and analysis changes")
    s.add_argument("--interval", type=float, default=5.0)
    s.add_argument("--count", type=int, default=0, help="stop after N polls (0: forever)")
    return p


COMMANDS = {"status": cmd_status, "analyze": cmd_analyze, "build": cmd_build, "dig": cmd_dig,
            "research": cmd_research, "blueprint": cmd_blueprint, "watch": cmd_watch}


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    try:
        cfg = load(a.config)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 4
    client = ModClient(a.url, cfg.timeout) if a.url else ModClient.from_config(cfg)
    try:
        return COMMANDS[a.cmd](client, a)
    except ModError as exc:
        print(f"error: {exc.error}: {exc.details}" + (f" ({json.dumps(exc.payload)})" if a.json else ""),
              file=sys.stderr)
        return 3 if exc.error == "unreachable" else 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
