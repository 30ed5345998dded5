"""Journal responses -> compact JSON for the model, bounded in size.

Conventions of everything the model reads (stated once here, and in the tool descriptions):

* keys are snake_case, the same style as the tool arguments (the protobuf field names,
  ``preserving_proto_field_name``), never the camelCase of the canonical proto JSON mapping;
* numbers are JSON numbers (64-bit counters too) and are always shown, zero included;
  empty strings and empty lists are left out; positions are always full ``{x, y, z}``;
* a response's JSON text is at most ``MAX_TEXT_BYTES`` (64 KiB). Long lists are cut to a
  bounded sample *with* a count of what was left out (``<name>_omitted``) and
  ``truncated: true``; region blocks are cut into pages with ``next_cursor``. Nothing is
  dropped silently.
"""

from __future__ import annotations

import json
from typing import Any

from google.protobuf.message import Message
from mcb_rpc import pbjson

MAX_TEXT_BYTES = 64 * 1024
# Aim well below the hard cap so a typical answer stays within a few thousand tokens.
SOFT_TEXT_BYTES = 48 * 1024

SAMPLE_LIMITS = {
    "palette": 64,
    "materials": 64,
    "conflicts": 20,
    "conflict_samples": 20,
    "written_samples": 20,
    "warnings": 20,
    "needs_attention": 20,
    "recent_operations": 10,
    "capabilities": 64,
}


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def text_size(obj: Any) -> int:
    return len(dumps(obj).encode())


# ---------------------------------------------------------------- protobuf -> dict


# one conversion for the whole project (mcb_rpc.pbjson): Vec3/Box as {x, y, z} / {min, max}
vec = pbjson.vec3_dict
box = pbjson.box_dict


def _error(msg: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"code": msg.code, "message": msg.message, "retryable": msg.retryable}
    if msg.details_json:
        try:
            out["details"] = json.loads(msg.details_json)
        except ValueError:
            out["details"] = msg.details_json
    return out


_SPECIAL = {"mcb.common.v1.Error": _error}


def to_dict(msg: Message) -> dict[str, Any]:
    """snake_case dict: numbers/bools always, strings and lists only when non-empty
    (``mcb_rpc.pbjson.compact``); an ``Error``'s ``details_json`` as its parsed ``details``."""
    out: dict[str, Any] = pbjson.compact(msg, _SPECIAL)
    return out


# ---------------------------------------------------------------- bounding


def bound_lists(d: dict[str, Any], limits: dict[str, int] = SAMPLE_LIMITS) -> dict[str, Any]:
    """Cut known long lists to their sample size, recording how many were left out."""
    for key, limit in limits.items():
        items = d.get(key)
        if isinstance(items, list) and len(items) > limit:
            d[f"{key}_omitted"] = len(items) - limit
            d[key] = items[:limit]
            d["truncated"] = True
    return d


def fit(d: dict[str, Any], max_bytes: int = SOFT_TEXT_BYTES) -> dict[str, Any]:
    """Halve the longest list (anywhere at the top level) until the JSON fits; count the cuts."""
    while text_size(d) > max_bytes:
        lists = [(text_size(v), k) for k, v in d.items() if isinstance(v, list) and v]
        if not lists:
            break
        _, key = max(lists)
        items = d[key]
        keep = len(items) // 2
        d[f"{key}_omitted"] = d.get(f"{key}_omitted", 0) + len(items) - keep
        d[key] = items[:keep]
        d["truncated"] = True
    if text_size(d) > MAX_TEXT_BYTES:
        # Only giant strings can get here (lists are already empty): shorten them, loudly.
        for k, v in list(d.items()):
            if isinstance(v, str) and len(v) > 1024:
                d[k] = v[:1024] + "…"
                d["truncated"] = True
    return d


# ---------------------------------------------------------------- tools


def ground(sampled: list[int], step: int) -> dict[str, Any]:
    """The surface of an area from its sampled column heights: lowest/highest/most common top y."""
    heights = [int(v) for v in sampled if v not in (HEIGHT_NONE, HEIGHT_UNKNOWN)]
    out: dict[str, Any] = {"sampled_columns": len(sampled), "step": step}
    if heights:
        common = max(set(heights), key=lambda h: (heights.count(h), -h))
        out.update({"min_y": min(heights), "max_y": max(heights), "typical_y": common, "build_from_y": common + 1})
    unknown = sum(1 for v in sampled if v == HEIGHT_UNKNOWN)
    if unknown:
        out["ungenerated_columns"] = unknown
    out["note"] = (
        "highest non-air y per sampled column (buildings included) of the build area's central "
        "columns; region_inspect detail heightmap reads any other part"
    )
    return out


def project_context(resp: Any, tools: list[str] | None = None, ground: dict[str, Any] | None = None) -> dict[str, Any]:
    out = to_dict(resp)
    world = out.get("world")
    if isinstance(world, dict):
        world.pop("host_instance", None)  # process identity; meaningless to the model
        if resp.world.HasField("loaded_area"):  # chunk coordinates on the wire -> blocks
            la = resp.world.loaded_area
            world["loaded_area"] = {
                "min": {"x": la.min.x * 16, "y": int(resp.world.min_y), "z": la.min.z * 16},
                "max": {"x": la.max.x * 16 + 15, "y": int(resp.world.max_y), "z": la.max.z * 16 + 15},
            }
    if tools:  # every tool the agent has, then the journal's finer features (region_inspect.summary…)
        out["capabilities"] = list(dict.fromkeys([*tools, *out.get("capabilities", [])]))
    if resp.HasField("project") and resp.project.HasField("area"):
        out["project"]["area"] = box(resp.project.area)
        if ground is not None:
            out["project"]["ground"] = ground
    out["conventions"] = (
        "Coordinates are integer block positions, y up; boxes are inclusive [min, max]. "
        "Block states are canonical strings like minecraft:oak_stairs[facing=east,half=bottom,"
        "shape=straight,waterlogged=false]; shorthand without properties takes the defaults. "
        "Output keys are snake_case; empty strings and lists are omitted."
    )
    return fit(bound_lists(out))


def plan_summary(resp: Any) -> dict[str, Any]:
    out = to_dict(resp)
    if resp.HasField("region"):
        out["region"] = box(resp.region)
    out = bound_lists(out)
    if resp.plan_id:
        out["next"] = (
            "Review changed_blocks, materials and conflicts; then call build_apply with this "
            "plan_id and plan_hash and a new idempotency_key before expires_at."
        )
    return fit(out)


_TERMINAL = {"applied", "conflict", "cancelled", "failed", "recovery_required"}


def operation_report(resp: Any) -> dict[str, Any]:
    out = bound_lists(to_dict(resp))
    # No picture is taken for an operation: a "visual check" status would be a claim nobody
    # makes (camera_capture with after_operation_id is the agent's own check).
    out.pop("visual_check", None)
    if resp.state and resp.state not in _TERMINAL:
        out["next"] = "Still running: call operation_status with this operation_id in a second or two."
    elif resp.state == "conflict":
        out["next"] = (
            "Some blocks changed under the plan and were not overwritten: inspect the region "
            "and prepare a new plan that respects them."
        )
    return fit(out)


# ---------------------------------------------------------------- region_inspect

AIR_STATES = {"minecraft:air", "minecraft:cave_air", "minecraft:void_air"}
NOT_IN_PAGE = " "
# Printable ASCII without space, '"' and '\\' (which JSON would escape) and '.' (air).
_ALPHABET = [c for c in (chr(i) for i in range(33, 127)) if c not in ' "\\.']
_ALPHABET_SET = set(_ALPHABET)


def _symbols(states: list[str]) -> dict[str, str]:
    """A short, mostly mnemonic symbol per state (first letter of the block name first)."""
    width = 1 if len(states) <= len(_ALPHABET) + 1 else 2
    out: dict[str, str] = {}
    used: set[str] = set()
    if width == 1:
        for s in states:
            if s.split("[", 1)[0] in AIR_STATES and "." not in used:
                out[s] = "."
                used.add(".")
                continue
            name = s.split(":", 1)[-1]
            candidates = [ch for ch in (name[:1].upper(), name[:1].lower()) if ch in _ALPHABET_SET]
            candidates += [ch.upper() for ch in name if ch.isalpha()] + _ALPHABET
            for ch in candidates:
                if ch not in used:
                    out[s] = ch
                    used.add(ch)
                    break
        return out
    pairs = iter(a + b for a in _ALPHABET for b in _ALPHABET)
    for s in states:
        if s.split("[", 1)[0] in AIR_STATES and ".." not in used:
            out[s] = ".."
            used.add("..")
        else:
            out[s] = next(pairs)
    return out


def region_summary(resp: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "region": box(resp.region),
        "detail": "summary",
        "positions": int(resp.positions),
        "non_air": int(resp.non_air),
        "palette": [{"state": p.state, "count": int(p.count)} for p in resp.palette],
    }
    bound_lists(out)
    if resp.palette_omitted:
        out["palette_omitted"] = out.get("palette_omitted", 0) + int(resp.palette_omitted)
    if "palette_omitted" in out:
        shown = sum(p["count"] for p in out["palette"])
        out["palette_omitted_positions"] = int(resp.positions) - int(resp.unknown_positions) - shown
        out["hint"] = "Narrow the region to see the rarest states."
    if resp.occupied:
        out["occupied"] = [box(b) for b in resp.occupied]
        out["occupied_grouped_by"] = int(resp.occupied_cell)
    if resp.HasField("heightmap") and resp.heightmap.cols:
        out["heightmap"] = _heightmap(resp.heightmap)
    _unknown(out, resp)
    return fit(out)


HEIGHT_NONE = -32768
HEIGHT_UNKNOWN = -32769


def _heightmap(hm: Any) -> dict[str, Any]:
    """Rows (one per sampled z) of heights (one per sampled x): null = only air, "?" = unknown."""
    vals = list(hm.heights)
    cols = int(hm.cols)
    rows = []
    for r in range(int(hm.rows)):
        row = []
        for v in vals[r * cols : (r + 1) * cols]:
            row.append(None if v == HEIGHT_NONE else "?" if v == HEIGHT_UNKNOWN else int(v))
        rows.append(row)
    return {"x0": int(hm.x0), "z0": int(hm.z0), "step": int(hm.step), "rows": rows}


def _unknown(out: dict[str, Any], resp: Any) -> None:
    if resp.unknown_chunk_count:
        pairs = list(resp.unknown_chunks)
        out["unknown_chunks"] = [{"cx": pairs[i], "cz": pairs[i + 1]} for i in range(0, len(pairs), 2)]
        out["unknown_chunk_count"] = int(resp.unknown_chunk_count)
        out["unknown_positions"] = int(resp.unknown_positions)
        out["unknown_note"] = (
            "these chunks were never generated; they are not counted in the palette "
            "and nothing was generated by reading"
        )


def region_heightmap(resp: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "region": box(resp.region),
        "detail": "heightmap",
        "positions": int(resp.positions),
        "non_air": int(resp.non_air),
        "heightmap": _heightmap(resp.heightmap),
    }
    _unknown(out, resp)
    return fit(out)


def region_blocks(resp: Any, region: tuple[int, ...]) -> dict[str, Any]:
    """Render one journal page of blocks as legend + layers; ``next_cursor`` is the journal's own."""
    return _blocks(resp, region, len(resp.page_states))


def blocks_that_fit(resp: Any, region: tuple[int, ...], max_bytes: int = SOFT_TEXT_BYTES) -> int:
    """How many of the page's positions render within ``max_bytes`` (at least 1): the bridge asks
    the journal again for that many when it is fewer than the page holds."""
    n = len(resp.page_states)
    if n <= 1 or text_size(_blocks(resp, region, n)) <= max_bytes:
        return n
    lo, hi = 1, n  # largest n whose rendering fits
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if text_size(_blocks(resp, region, mid)) <= max_bytes:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _blocks(resp: Any, region: tuple[int, ...], n: int) -> dict[str, Any]:
    """The first ``n`` positions of a journal page as legend + layers (all of them: the journal's
    next_cursor, else the next cursor is not known here and the answer says it is cut)."""
    x0, y0, z0, x1, y1, z1 = region
    dx, dz = x1 - x0 + 1, z1 - z0 + 1
    states = list(resp.page_states)
    start = int(resp.offset)
    page = states[:n]
    # The journal's palette/non_air for a blocks page may describe the page or the region;
    # the answer states only what the page itself proves (counts per page, legend).
    out: dict[str, Any] = {
        "region": {"min": {"x": x0, "y": y0, "z": z0}, "max": {"x": x1, "y": y1, "z": z1}},
        "detail": "blocks",
        "positions": int(resp.positions),
    }
    air_idx = {i for i, s in enumerate(resp.page_palette) if s.split("[", 1)[0] in AIR_STATES}
    used = _by_freq(page)
    names = [resp.page_palette[i] for i in used]
    sym_by_state = _symbols(names)
    sym = {i: sym_by_state[resp.page_palette[i]] for i in used}
    width = len(next(iter(sym.values()))) if sym else 1
    blank = NOT_IN_PAGE * width
    layers: list[dict[str, Any]] = []
    rows: dict[tuple[int, int], list[str]] = {}
    order: list[tuple[int, int]] = []
    for k, st in enumerate(page):
        idx = start + k
        x = x0 + idx % dx
        z = z0 + (idx // dx) % dz
        y = y0 + idx // (dx * dz)
        key = (y, z)
        if key not in rows:
            rows[key] = [blank] * dx
            order.append(key)
        rows[key][x - x0] = sym[st]
    current_y = None
    for y, z in order:
        if y != current_y:
            layers.append({"y": y, "z_from": z, "rows": []})
            current_y = y
        layers[-1]["rows"].append("".join(rows[(y, z)]))
    legend = {sym_by_state[s]: s for s in names}
    if any(blank in "".join(layer["rows"]) for layer in layers):
        legend[blank] = "(not in this page)"
    out.update(
        {
            "page": {"first_position": start, "count": n, "non_air": sum(1 for st in page if st not in air_idx)},
            "orientation": (
                f"each layer is one y; layers[].rows[j] is z = z_from + j (z grows southward); "
                f"the i-th symbol of a row (each symbol is symbol_width={width} character"
                f"{'s' if width > 1 else ''}) is x = {x0} + i (x grows eastward). Positions "
                "are in y, then z, then x order."
            ),
            "symbol_width": width,
            "legend": legend,
            "layers": layers,
        }
    )
    if resp.next_cursor:
        out["next_cursor"] = resp.next_cursor
    out["truncated"] = bool(resp.next_cursor) or n < len(states)
    return out


def _by_freq(page: list[int]) -> list[int]:
    counts: dict[int, int] = {}
    for s in page:
        counts[s] = counts.get(s, 0) + 1
    return sorted(counts, key=lambda i: (-counts[i], i))


# ---------------------------------------------------------------- parts, change feed, schematics


def _by_source(counts: Any) -> dict[str, int]:
    return {c.source: int(c.count) for c in counts}


def part(resp: Any) -> dict[str, Any]:
    """part_define / part_get (journal PartDetail)."""
    ext = resp.external_changes_since
    return {
        "part_id": resp.part_id,
        "name": resp.name,
        "operation_id": resp.operation_id,
        "bounds": box(resp.bounds),
        "block_count": resp.block_count,
        "protected": resp.protected,
        "external_changes_since": {
            "count": ext.count,
            "by_source": _by_source(ext.by_source),
            "complete": ext.complete,
        },
    }


def _change(e: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"pos": vec(e.pos), "before": e.before, "after": e.after, "source": e.source}
    if e.operation_id:
        out["operation_id"] = e.operation_id
    return out


def history_entry(e: Any) -> dict[str, Any]:
    """One change of region_history (journal HistoryEntry), as the journal measured its page
    (mcb_journal.blame.entry_doc: empty fields left out)."""
    out: dict[str, Any] = {"pos": vec(e.pos), "at_millis": e.at_millis, "source": e.source}
    for k in ("player_name", "player_id", "cause", "operation_id", "asked_by", "prompt"):
        if getattr(e, k):
            out[k] = getattr(e, k)
    out["before"], out["after"] = e.before, e.after
    return out


def region_history(resp: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "entries": [history_entry(e) for e in resp.entries],
        "next_cursor": resp.next_cursor,
        "complete": resp.complete,
    }
    if resp.note:
        out["note"] = resp.note
    return out


def region_changes(resp: Any) -> dict[str, Any]:
    """region_changes (journal RegionChangesResponse), as the journal measured its page size:
    a fresh cursor has no range fields; a page always has bounding_box (null without events) and
    affected_parts."""
    out: dict[str, Any] = {"changes": resp.changes, "by_source": _by_source(resp.by_source)}
    if not resp.note:
        if resp.source:
            out["source"] = resp.source
        out["bounding_box"] = box(resp.bounding_box) if resp.HasField("bounding_box") else None
        out["affected_parts"] = [
            {"part_id": p.part_id, "name": p.name, "changes": p.changes} for p in resp.affected_parts
        ]
        if resp.affected_parts_omitted:
            out["affected_parts_omitted"] = resp.affected_parts_omitted
    out.update(
        {
            "events": [_change(e) for e in resp.events],
            "remaining": resp.remaining,
            "next_cursor": resp.next_cursor,
            "complete": resp.complete,
            "resync_required": resp.resync_required,
        }
    )
    if resp.note:
        out["note"] = resp.note
    return out


def asset(a: Any) -> dict[str, Any]:
    """One schematic library entry (journal AssetEntry); a file that did not parse has no shape."""
    out: dict[str, Any] = {"asset_id": a.asset_id, "name": a.name}
    if a.sha256:
        out["sha256"] = a.sha256
    if a.HasField("bytes"):
        out["bytes"] = a.bytes
    out.update({"read_only": a.read_only, "valid": a.valid})
    if a.reason:
        out["reason"] = a.reason
    if a.HasField("shape"):
        s = a.shape
        out.update(
            {
                "width": s.width,
                "height": s.height,
                "length": s.length,
                "block_count": s.block_count,
                "data_version": s.data_version,
                "offset": vec(s.offset),
                "format": s.format,
                "block_entities": s.block_entities,
                "entities": s.entities,
            }
        )
    return out


def asset_list(resp: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"assets": [asset(a) for a in resp.assets], "total": resp.total}
    if resp.next_cursor:
        out["next_cursor"] = resp.next_cursor
    return fit(out)


def schematic_export(resp: Any) -> dict[str, Any]:
    return fit(
        {**asset(resp.asset), "warnings": list(resp.warnings), "region": box(resp.region), "origin": vec(resp.origin)}
    )


# ---------------------------------------------------------------- cameras


def camera_info(c: Any) -> dict[str, Any]:
    return {
        "camera_id": c.camera_id,
        "name": c.name,
        "pose": {
            "x": c.pose.x,
            "y": c.pose.y,
            "z": c.pose.z,
            "yaw": c.pose.yaw,
            "pitch": c.pose.pitch,
            "fov": c.pose.fov,
            "width": c.pose.width,
            "height": c.pose.height,
        },
    }


def snake_keys(obj: Any, data_maps: frozenset[str] = frozenset({"legend"})) -> Any:
    """Every object key in snake_case (others' JSON may carry camelCase: the ONI mod's answers);
    the keys of ``data_maps`` (symbol -> state) are data, kept."""
    if isinstance(obj, list):
        return [snake_keys(v, data_maps) for v in obj]
    if not isinstance(obj, dict):
        return obj
    return {
        _snake(k) if isinstance(k, str) else k: (v if k in data_maps else snake_keys(v, data_maps))
        for k, v in obj.items()
    }


def camera_list(resp: Any) -> dict[str, Any]:
    out = {
        "worker_state": resp.worker_state,
        "driver": resp.driver or "none",
        "cameras": [camera_info(c) for c in resp.cameras],
    }
    return fit(bound_lists(out, {"cameras": 50}))


# CaptureMetadata's fields the model sees, in this order (camera.proto); the rest (timings, the
# client's report, ...) are for the dashboard and diagnosis
_CAPTURE_FIELDS = (
    "stage",
    "hint",
    "driver",
    "view",
    "width",
    "height",
    "stale",
    "server_revision_verified",
    "ready",
    "region",
    "operation",
    "after_operation_id",
    "sections",
    "max_revision",
    "revision_digest",
    "changed_section_count",
    "camera_id",
    "pose",
    "captured_at_ms",
    "requested_at_ms",
    "latency_ms",
    "cache",
    "world",
    "format",
    "mime_type",
    "preview",
)


def _snake(k: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in k).lstrip("_") if not k.islower() else k


def capture_meta(resp: Any) -> dict[str, Any]:
    """A capture's metadata for the model (snake_case, bounded); the image travels separately.
    The typed ``CaptureMetadata`` by its own field names: a field is shown when the worker set it
    (an empty string never); messages as ``to_dict`` gives them."""
    meta = resp.metadata
    out: dict[str, Any] = {"status": resp.status, "capture_id": resp.capture_id}
    for name in _CAPTURE_FIELDS:
        if not meta.HasField(name):
            continue
        value = getattr(meta, name)
        if isinstance(value, Message):
            out[name] = to_dict(value)
        elif value != "":
            out[name] = value
    if resp.status == "pending":
        out["next"] = "Call camera_capture with this capture_id in a second or two."
    elif out.get("stale"):
        out["next"] = "Blocks in view changed while the picture was taken: capture again."
    return fit(out)
