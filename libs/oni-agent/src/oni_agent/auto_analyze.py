"""auto_analyze (seed 004's utility script, `oni auto-analyze`): the analysis sampled again and
again, with the trend of every measure between samples (pure functions; the CLI loops).

A sample is ``analysis.analyze`` of one ``fetch_view``. ``trends(prev, cur)`` compares the numeric
measures of two samples: the change, its direction (falling / rising / steady), whether that is
worse for the colony (oxygen falling, temperature rising), the change per game cycle when the
cycle advanced and, for a measure getting worse, the cycles left until its critical threshold.
"""

from __future__ import annotations

from typing import Any

from .analysis import LEVELS, THRESHOLDS

AREAS = ("oxygen", "food", "power", "temperature", "water")
# the direction in which a measure gets worse
WORSE_WHEN: dict[str, str] = {
    "oxygen_kg_per_dupe": "falling",
    "breath_percent": "falling",
    "oxygen_sources": "falling",
    "food_cycles": "falling",
    "calories": "falling",
    "power_margin_w": "falling",
    "battery_capacity_j": "falling",
    "temperature_avg_c": "rising",
    "temperature_max_c": "rising",
    "water_cycles": "falling",
}
ETA_METRICS = (
    "oxygen_kg_per_dupe",
    "breath_percent",
    "food_cycles",
    "calories",
    "temperature_avg_c",
    "temperature_max_c",
    "water_cycles",
)


def area_levels(rep: dict[str, Any]) -> dict[str, str]:
    """The worst level of each of the five areas (and ``alerts`` when the game raised a bad one)."""
    out = {a: "ok" for a in AREAS}
    for f in rep["findings"]:
        if LEVELS.index(f["level"]) > LEVELS.index(out.get(f["area"], "ok")):
            out[f["area"]] = f["level"]
    return out


def metrics(rep: dict[str, Any]) -> dict[str, float]:
    return {
        f["metric"]: float(f["value"])
        for f in rep["findings"]
        if f["metric"] in WORSE_WHEN and f.get("value") is not None
    }


def trends(prev: dict[str, Any], cur: dict[str, Any]) -> list[dict[str, Any]]:
    """The measures that changed from sample ``prev`` to sample ``cur`` (each a dict with
    ``cycle``, ``metrics``, ``areas``)."""
    out = []
    cycles = (cur["cycle"] or 0) - (prev["cycle"] or 0)
    for m, v in cur["metrics"].items():
        if m not in prev["metrics"]:
            continue
        before = prev["metrics"][m]
        delta = v - before
        if abs(delta) <= 1e-9 + 0.005 * max(1.0, abs(before)):
            continue
        direction = "falling" if delta < 0 else "rising"
        t: dict[str, Any] = {
            "metric": m,
            "from": round(before, 2),
            "to": round(v, 2),
            "change": round(delta, 2),
            "direction": direction,
            "worse": direction == WORSE_WHEN[m],
        }
        if cycles > 0:
            rate = delta / cycles
            t["per_cycle"] = round(rate, 2)
            crit = THRESHOLDS.get(m, {}).get("critical")
            if t["worse"] and m in ETA_METRICS and crit is not None:
                left = (v - crit) / -rate if direction == "falling" else (crit - v) / rate
                t["cycles_to_critical"] = round(max(0.0, left), 1)
        out.append(t)
    return out


def sample(n: int, rep: dict[str, Any], prev: dict[str, Any] | None) -> dict[str, Any]:
    s: dict[str, Any] = {
        "kind": "sample",
        "n": n,
        "cycle": rep["cycle"],
        "status": rep["status"],
        "areas": area_levels(rep),
        "metrics": metrics(rep),
        "findings": rep["findings"],
    }
    s["trends"] = trends(prev, s) if prev else []
    return s


def summary(first: dict[str, Any], last: dict[str, Any], worst: str, count: int) -> dict[str, Any]:
    return {
        "kind": "summary",
        "samples": count,
        "worst": worst,
        "first_cycle": first["cycle"],
        "last_cycle": last["cycle"],
        "areas": last["areas"],
        "trends": trends(first, last) if count > 1 else [],
    }


def trend_text(t: dict[str, Any]) -> str:
    s = f"{t['metric']} {t['from']} -> {t['to']} ({t['change']:+}, {t['direction']}{', worse' if t['worse'] else ''}"
    if "per_cycle" in t:
        s += f"; {t['per_cycle']:+}/cycle"
    if "cycles_to_critical" in t:
        s += f"; critical in ~{t['cycles_to_critical']} cycles"
    return s + ")"


def sample_text(s: dict[str, Any]) -> str:
    areas = ", ".join(f"{a} {lvl}" for a, lvl in s["areas"].items())
    lines = [f"[{s['n']}] cycle {s['cycle']}: {s['status']} ({areas})"]
    lines += [f"  {'!!' if t['worse'] else '  '} {trend_text(t)}" for t in s["trends"]]
    lines += [
        f"  XX {f['area']}: {f['message']} -> {f.get('recommendation', '')}"
        for f in s["findings"]
        if f["level"] == "critical"
    ]
    return "\n".join(lines)
