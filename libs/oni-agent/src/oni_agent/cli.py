"""`oni`: the agent toolchain's command line (seed 004).

  oni status                      colony summary (game, duplicants, power)
  oni analyze [--json]            oxygen, food, power, temperature, water: levels and recommendations
  oni build ID X Y [--rotation R] queue a building
  oni dig X Y W H                 queue digging a rectangle
  oni research TECH               choose the research
  oni blueprint list|show NAME|plan NAME X Y|apply NAME X Y [--wait S]
  oni watch [--interval S] [--count N]   report new alerts, refused actions and analysis changes
  oni setup [--host H] [--port P] [--timeout S] [--fresh] [--no-check]
                                  write/validate config.json, check the mod's /health
  oni auto-analyze [--interval S] [--count N] [--report FILE]   analysis samples with trends
  oni auto-repair [--apply] [--max-actions N] [--state FILE] [--wait S] [--reset]
                                  findings -> remedies (dry run unless --apply)

The mod is found through config.json ({"modHost", "modPort", "timeout"}; --config, $ONI_AGENT_CONFIG,
./config.json, else 127.0.0.1:23876) or --url. Exit codes: 0 ok, 1 refused/critical (see each
command), 2 the mod answered an error, 3 the mod cannot be reached, 4 bad configuration,
5 auto-analyze's worst level was warning (1: critical).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from . import analysis, auto_analyze, auto_repair, blueprints
from .client import ModClient, ModError
from .config import ConfigError, config_path, load, setup


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
        lines.append(
            f"  {d['name']:<12} stress {d['stress']:5.1f}  {d['calories'] / 1000:6.0f} kcal  "
            f"stamina {d['stamina']:5.1f}  breath {d['oxygen']:5.1f}"
        )
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
        r = blueprints.apply_step(
            c, a.name, a.x, a.y, None if a.json else lambda i, n, m: print(f"  [{i}/{n}] {m}", flush=True)
        )
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
        for o in _outcomes(c):  # the game's refusals are outcomes of actions, not alerts
            key = ("action", str(o["id"]))
            if o["state"] in ("refused", "failed") and key not in seen:
                seen.add(key)
                _emit(
                    a,
                    {"kind": o["state"], **o},
                    f"{o['state'].upper()} action {o['id']} {o['action']} {json.dumps(o['body'])}: {o.get('reason')}",
                )
        rep = analysis.analyze(view)
        worst: dict[str, str] = {}
        for f in rep["findings"]:
            if analysis.LEVELS.index(f["level"]) >= analysis.LEVELS.index(worst.get(f["area"], "ok")):
                worst[f["area"]] = f["level"]
        for area, lvl in worst.items():
            if lvl != levels.get(area, "ok"):
                finding = next(f for f in rep["findings"] if f["area"] == area and f["level"] == lvl)
                _emit(
                    a,
                    {
                        "kind": "change",
                        "area": area,
                        "from": levels.get(area, "ok"),
                        "to": lvl,
                        "message": finding["message"],
                        "recommendation": finding.get("recommendation"),
                    },
                    f"{area}: {levels.get(area, 'ok')} -> {lvl}: {finding['message']}"
                    + (f" ({finding['recommendation']})" if finding.get("recommendation") else ""),
                )
            levels[area] = lvl
        if a.count <= 0 or n < a.count:
            time.sleep(a.interval)
    return 0


def _outcomes(c: ModClient) -> list[dict[str, Any]]:
    """/api/state/actions, or nothing from a mod that predates it."""
    try:
        return c.state_all("actions")
    except ModError as e:
        if e.error == "not_found":
            return []
        raise


def cmd_setup(a: argparse.Namespace) -> int:
    """Write/validate config.json, then check that the mod answers /health at that address."""
    path = config_path(a.config)
    try:
        cfg, what = setup(path, {"modHost": a.host, "modPort": a.port, "timeout": a.timeout}, a.fresh)
    except ConfigError as exc:
        _fail(a, exc.payload())
        return 4
    out: dict[str, Any] = {
        "config": str(path),
        "written": what,
        "settings": {"modHost": cfg.modHost, "modPort": cfg.modPort, "timeout": cfg.timeout},
    }
    lines = [f"{path}: {what} (modHost {cfg.modHost}, modPort {cfg.modPort}, timeout {cfg.timeout:g} s)"]
    rc = 0
    if a.no_check:
        out["next"] = ["oni setup (without --no-check) to check the mod", "oni status"]
    else:
        try:
            h = ModClient(cfg.base_url, min(cfg.timeout, 5.0)).health()
            out["health"] = {"ok": True, **h}
            out["next"] = [
                "oni status",
                "oni analyze",
                "oni auto-analyze --interval 60",
                "oni auto-repair (dry run; --apply to queue)",
            ]
            lines.append(f"mod: {h.get('service', '?')} answers at {cfg.base_url}")
        except ModError as exc:
            rc = 3
            out["health"] = {"ok": False, "error": exc.error, "details": exc.details}
            out["next"] = [
                "start the game with the ONI Agent Mod enabled and load a colony",
                f"make the mod's port and modPort ({cfg.modPort}) agree: oni setup --port P",
                "or practise on the simulator: oni-sim --port " + str(cfg.modPort),
                "then run oni setup again",
            ]
            lines.append(f"mod: not reachable at {cfg.base_url} ({exc.error})")
    _out(a, out, "\n".join(lines + ["next:"] + [f"  {n}" for n in out["next"]]))
    return rc


def _fail(a: argparse.Namespace, payload: dict[str, Any]) -> None:
    print(
        f"error: {payload['error']}: {payload['details']}" + (f" ({json.dumps(payload)})" if a.json else ""),
        file=sys.stderr,
    )


def _stop_on_sigterm() -> None:
    def handler(signum: int, frame: Any) -> None:  # noqa: ARG001
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


def cmd_auto_analyze(c: ModClient, a: argparse.Namespace) -> int:
    """Analysis every --interval seconds (--count times, 0: until stopped), each sample with the
    trends since the previous one, a summary at the end; the exit code is the worst level seen."""
    if a.interval < 0 or a.count < 0:
        _fail(a, {"error": "invalid_request", "details": "--interval and --count must not be negative"})
        return 2
    _stop_on_sigterm()
    report = open(a.report, "a", encoding="utf-8") if a.report else None  # noqa: SIM115 - closed below
    first = prev = None
    worst, n = "ok", 0
    try:
        while a.count <= 0 or n < a.count:
            s = auto_analyze.sample(n + 1, analysis.analyze(analysis.fetch_view(c)), prev)
            n += 1
            s["time"] = round(time.time(), 3)
            worst = analysis.LEVELS[max(analysis.LEVELS.index(worst), analysis.LEVELS.index(s["status"]))]
            first, prev = first or s, s
            _emit(a, s, auto_analyze.sample_text(s))
            if report:
                report.write(json.dumps(s, ensure_ascii=False) + "\n")
                report.flush()
            if a.count <= 0 or n < a.count:
                time.sleep(a.interval)
    except KeyboardInterrupt:
        pass
    finally:
        if first and prev:
            summ = auto_analyze.summary(first, prev, worst, n)
            text = f"{n} sample(s), cycles {summ['first_cycle']}..{summ['last_cycle']}, worst {worst}" + "".join(
                f"\n  {'!!' if t['worse'] else '  '} {auto_analyze.trend_text(t)}" for t in summ["trends"]
            )
            _emit(a, summ, text)
            if report:
                report.write(json.dumps(summ, ensure_ascii=False) + "\n")
        if report:
            report.close()
    return {"ok": 0, "warning": 5, "critical": 1}[worst]


def cmd_auto_repair(c: ModClient, a: argparse.Namespace) -> int:
    """Findings -> remedies; a dry run unless --apply (then at most --max-actions actions)."""
    if not 1 <= a.max_actions <= 100 or not 0 <= a.wait <= 3600:
        _fail(a, {"error": "invalid_request", "details": "--max-actions must be 1..100 and --wait 0..3600 s"})
        return 2
    path = Path(a.state or os.environ.get("ONI_AGENT_STATE") or "oni-auto-repair.json")
    if a.reset and path.exists():
        path.unlink()
    try:
        state = auto_repair.load_state(path)
    except (OSError, ValueError) as exc:
        _fail(a, {"error": "invalid_state", "details": f"{path}: {exc}; delete it or pass --reset"})
        return 4
    end = time.monotonic() + a.wait
    sent: list[dict[str, Any]] = []
    while True:
        world = auto_repair.read_world(c)
        rep = analysis.analyze(analysis.fetch_view(c))
        remedies = auto_repair.plan_repairs(rep, world, state)
        if a.apply and len(sent) < a.max_actions:
            sent += auto_repair.apply(
                c,
                remedies,
                state,
                world["cycle"],
                a.max_actions - len(sent),
                lambda st: auto_repair.save_state(path, st),
            )
        busy = [r for r in remedies if r["status"] in ("new", "digging", "building")]
        if not a.apply or not busy or time.monotonic() >= end or len(sent) >= a.max_actions:
            break
        time.sleep(max(0.05, a.poll))
    out = {
        "mode": "apply" if a.apply else "dry_run",
        "cycle": world["cycle"],
        "status": rep["status"],
        "remedies": remedies,
        "sent": sent,
        "state": str(path),
    }
    text = [f"auto-repair ({out['mode']}), cycle {world['cycle']}, colony {rep['status']}:"]
    text += [auto_repair.remedy_text(r) for r in remedies] or ["  nothing to repair"]
    text.append(
        f"queued {len(sent)} action(s)"
        if a.apply
        else "dry run: nothing queued (--apply queues these, at most --max-actions)"
    )
    _out(a, out, "\n".join(text))
    return 1 if any(r["status"] in ("no_place", "blocked") for r in remedies) else 0


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
    s = sub.add_parser("setup", help="write/validate config.json and check the mod's /health")
    s.add_argument("--host", help="modHost (loopback only)")
    s.add_argument("--port", type=int, help="modPort: the port the mod listens on")
    s.add_argument("--timeout", type=float, help="HTTP timeout in seconds")
    s.add_argument("--fresh", action="store_true", help="start from the defaults, not the file's values")
    s.add_argument("--no-check", action="store_true", help="do not contact the mod")
    s = sub.add_parser("auto-analyze", aliases=["auto_analyze"], help="periodic analysis with trends")
    s.add_argument("--interval", type=float, default=60.0, help="seconds between samples")
    s.add_argument("--count", type=int, default=0, help="stop after N samples (0: until stopped)")
    s.add_argument("--report", help="append each sample and the summary to this JSON Lines file")
    s = sub.add_parser("auto-repair", aliases=["auto_repair"], help="remedies for the findings (dry run)")
    s.add_argument("--apply", action="store_true", help="queue the remedies' actions")
    s.add_argument("--max-actions", type=int, default=8, help="at most N actions per run")
    s.add_argument("--state", help="state file (default $ONI_AGENT_STATE or ./oni-auto-repair.json)")
    s.add_argument("--reset", action="store_true", help="forget earlier runs' remedies")
    s.add_argument("--wait", type=float, default=0.0, help="with --apply: keep stepping up to S seconds")
    s.add_argument("--poll", type=float, default=1.0, help="seconds between steps while waiting")
    return p


COMMANDS = {
    "status": cmd_status,
    "analyze": cmd_analyze,
    "build": cmd_build,
    "dig": cmd_dig,
    "research": cmd_research,
    "blueprint": cmd_blueprint,
    "watch": cmd_watch,
    "auto-analyze": cmd_auto_analyze,
    "auto_analyze": cmd_auto_analyze,
    "auto-repair": cmd_auto_repair,
    "auto_repair": cmd_auto_repair,
}


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    if a.cmd == "setup":
        return cmd_setup(a)
    try:
        cfg = load(a.config)
    except ConfigError as exc:
        _fail(a, exc.payload())
        return 4
    client = ModClient(a.url, cfg.timeout) if a.url else ModClient.from_config(cfg)
    try:
        return COMMANDS[a.cmd](client, a)
    except ModError as exc:
        print(
            f"error: {exc.error}: {exc.details}" + (f" ({json.dumps(exc.payload)})" if a.json else ""), file=sys.stderr
        )
        return 3 if exc.error == "unreachable" else 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
