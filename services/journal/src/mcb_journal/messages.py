"""The journal's answers as typed messages (journal.proto) from the documents the core builds
(the change feed's pages are measured as JSON, the library's entries come from mcb_common.assets):
the same snake_case names, field by field. Transport only: no rule lives here.
"""

from __future__ import annotations

from typing import Any

from mcb.journal.v1 import journal_pb2 as jpb
from mcb_rpc.pbjson import box_pb as _box
from mcb_rpc.pbjson import vec3_pb as _vec


def _counts(by_source: dict[str, int]) -> list[jpb.SourceCount]:
    return [jpb.SourceCount(source=s, count=int(n)) for s, n in by_source.items()]


def part_detail(d: dict[str, Any]) -> jpb.PartDetail:
    ext = d["external_changes_since"]
    return jpb.PartDetail(
        part_id=d["part_id"],
        name=d["name"],
        operation_id=d["operation_id"],
        bounds=_box(d["bounds"]),
        block_count=int(d["block_count"]),
        protected=bool(d["protected"]),
        external_changes_since=jpb.ExternalChanges(
            count=int(ext["count"]), by_source=_counts(ext["by_source"]), complete=bool(ext["complete"])
        ),
    )


def region_changes(d: dict[str, Any]) -> jpb.RegionChangesResponse:
    out = jpb.RegionChangesResponse(
        changes=int(d["changes"]),
        by_source=_counts(d["by_source"]),
        source=d.get("source", ""),
        affected_parts=[
            jpb.AffectedPart(part_id=p["part_id"], name=p["name"], changes=int(p["changes"]))
            for p in d.get("affected_parts", [])
        ],
        affected_parts_omitted=int(d.get("affected_parts_omitted", 0)),
        events=[
            jpb.ChangeEvent(
                pos=_vec(e["pos"]),
                before=e["before"],
                after=e["after"],
                source=e["source"],
                operation_id=e.get("operation_id", ""),
            )
            for e in d["events"]
        ],
        remaining=int(d["remaining"]),
        next_cursor=d["next_cursor"],
        complete=bool(d["complete"]),
        resync_required=bool(d["resync_required"]),
        note=d.get("note", ""),
    )
    if d.get("bounding_box"):
        out.bounding_box.CopyFrom(_box(d["bounding_box"]))
    return out


_SHAPE = ("width", "height", "length", "block_count", "data_version", "format", "block_entities", "entities")


def asset_entry(d: dict[str, Any]) -> jpb.AssetEntry:
    """An mcb_common.assets entry as an AssetEntry (a file that did not parse has no shape)."""
    out = jpb.AssetEntry(
        asset_id=d["asset_id"],
        name=d.get("name", ""),
        sha256=d.get("sha256", ""),
        read_only=bool(d.get("read_only")),
        valid=bool(d.get("valid")),
        reason=d.get("reason", ""),
    )
    if "bytes" in d:
        out.bytes = int(d["bytes"])
    if "width" in d:  # the file parsed: schematic.info's fields
        out.shape.CopyFrom(jpb.SchematicShape(**{k: d[k] for k in _SHAPE}, offset=_vec(d["offset"])))
    return out


def asset_list(d: dict[str, Any]) -> jpb.AssetListResponse:
    return jpb.AssetListResponse(
        assets=[asset_entry(a) for a in d["assets"]], total=int(d["total"]), next_cursor=d.get("next_cursor", "")
    )


def schematic_export(d: dict[str, Any]) -> jpb.SchematicExportResponse:
    return jpb.SchematicExportResponse(
        asset=asset_entry(d), warnings=d["warnings"], region=_box(d["region"]), origin=_vec(d["origin"])
    )


def journal_stats(d: dict[str, Any]) -> jpb.JournalStatsResponse:
    out = jpb.JournalStatsResponse(
        bytes=jpb.JournalBytes(**d["bytes"]),
        operations=d["operations"],
        written_blocks=d["written_blocks"],
        live=jpb.JournalLiveRows(**d["live"]),
        packed=jpb.JournalPackedRows(**d["packed"]),
        packable=jpb.JournalPackable(**d["packable"]),
        pack_after_seconds=d["pack_after_seconds"],
        tables=d["tables"],
    )
    if d["bytes_per_written_block"] is not None:
        out.bytes_per_written_block = d["bytes_per_written_block"]
    return out


def journal_compact(d: dict[str, Any]) -> jpb.JournalCompactResponse:
    return jpb.JournalCompactResponse(
        packed_operations=d["packed_operations"],
        rows=jpb.JournalCompactRows(**d["rows"]),
        bytes_before=jpb.JournalBytes(**d["bytes_before"]),
        bytes_after=jpb.JournalBytes(**d["bytes_after"]),
    )


def region_history(d: dict[str, Any]) -> jpb.RegionHistoryResponse:
    """blame.page's document (entries as blame.entry_doc) as a RegionHistoryResponse."""
    return jpb.RegionHistoryResponse(
        entries=[
            jpb.HistoryEntry(
                pos=_vec(e["pos"]),
                before=e["before"],
                after=e["after"],
                source=e["source"],
                player_id=e.get("player_id", ""),
                player_name=e.get("player_name", ""),
                cause=e.get("cause", ""),
                operation_id=e.get("operation_id", ""),
                asked_by=e.get("asked_by", ""),
                at_millis=int(e["at_millis"]),
                prompt=e.get("prompt", ""),
            )
            for e in d["entries"]
        ],
        next_cursor=d["next_cursor"],
        complete=bool(d["complete"]),
        note=d.get("note", ""),
    )


def history_map(d: dict[str, Any]) -> jpb.HistoryMapResponse:
    """histmap.build's document as a HistoryMapResponse."""
    return jpb.HistoryMapResponse(
        x=d["x"],
        z=d["z"],
        who=d["who"],
        at_millis=d["at_millis"],
        legend=[jpb.HistoryMapWho(**w) for w in d["legend"]],
        first_millis=d["first_millis"],
        last_millis=d["last_millis"],
        note=d.get("note", ""),
    )
