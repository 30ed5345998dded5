// Routing, validation and answers of the seed-004 API (oni-mod/contract/openapi.json), transport-free.
// Checks run in the order JSON -> object -> unknown fields -> each field's type and range -> inside
// the map -> known building/tech/duplicant; the first failure answers {"error", "details", "field"?}.
// The same rules as the simulator (services/oni-sim/src/oni_sim/api.py); one conformance suite tests both.
using System;
using System.Collections.Generic;

namespace OniAgentMod.Core
{
    public sealed class ApiResponse
    {
        public int Status;
        public object Body;
        public readonly List<KeyValuePair<string, string>> Headers = new List<KeyValuePair<string, string>>();

        public ApiResponse(int status, object body) { Status = status; Body = body; }
    }

    public sealed class ApiException : Exception
    {
        public readonly int Status;
        public readonly JsonObject Payload;

        public ApiException(int status, string error, string details, string extraKey = null, string extraValue = null)
            : base(details)
        {
            Status = status;
            Payload = new JsonObject().Add("error", error).Add("details", details);
            if (extraKey != null) Payload.Add(extraKey, extraValue);
        }

        public static ApiException Bad(string details, string field = null)
        {
            return new ApiException(400, "invalid_request", details, field == null ? null : "field", field);
        }
    }

    public sealed class Api
    {
        public const int MaxBody = 64 * 1024;
        public const int MapMax = 64;
        private static readonly string[] StateNames = { "game", "resources", "duplicants", "buildings", "research", "geysers", "alert", "critters", "map", "actions", "catalog", "schedules", "reports" };
        private static readonly string[] ActionNames = { "dig", "build", "deconstruct", "prioritize", "research", "schedule", "wardrobe", "utility", "speed", "cancel", "plant", "mop", "sweep", "harvest" };
        private static readonly string[] UtilityKinds = { "wire", "gas", "liquid", "logic" };
        public const int PathMax = 256;
        private static readonly string[] ScheduleBlocks = { "work", "sleep", "downtime", "bathtime" };
        private static readonly string[] Suits = { "None", "AtmoSuit", "JetSuit", "LeadSuit", "OxygenMask" };

        private readonly ModCore core;
        private readonly string service;

        public Api(ModCore core, string service) { this.core = core; this.service = service; }

        public ApiResponse Handle(string method, string path, IDictionary<string, string> query, string body)
        {
            try
            {
                if (path == "/health")
                {
                    Method(method, "GET");
                    return new ApiResponse(200, new JsonObject().Add("status", "ok").Add("service", service));
                }
                if (path.StartsWith("/api/state/", StringComparison.Ordinal) && Array.IndexOf(StateNames, path.Substring(11)) >= 0)
                {
                    Method(method, "GET");
                    return State(path.Substring(11), query);
                }
                if (path.StartsWith("/api/action/", StringComparison.Ordinal) && Array.IndexOf(ActionNames, path.Substring(12)) >= 0)
                {
                    Method(method, "POST");
                    return new ApiResponse(200, Action(path.Substring(12), body));
                }
                throw new ApiException(404, "not_found", "no endpoint " + path);
            }
            catch (ApiException e)
            {
                return new ApiResponse(e.Status, e.Payload);
            }
        }

        private static void Method(string got, string want)
        {
            if (got != want) throw new ApiException(405, "invalid_request", "use " + want + " for this endpoint");
        }

        private Snapshot Snap()
        {
            var s = core.Current;
            if (s == null) throw new ApiException(503, "not_ready", "no game is loaded yet");
            return s;
        }

        /// <summary>The world a call is about (Spaced Out: an asteroid or a rocket interior): the
        /// snapshot of worldId, the active world's when absent; 400 unknown_world for another id.</summary>
        private static Snapshot World(Snapshot s, int? id)
        {
            if (!id.HasValue || id.Value == s.WorldId) return s;
            Snapshot w;
            if (s.Worlds.TryGetValue(id.Value, out w)) return w;
            var known = new List<string>();
            known.Add(s.WorldId.ToString());
            foreach (var k in s.Worlds.Keys) if (k != s.WorldId) known.Add(k.ToString());
            throw new ApiException(400, "unknown_world", "no world with id " + id.Value + " (worlds: " + string.Join(", ", known.ToArray()) + ")", "field", "worldId");
        }

        private ApiResponse State(string what, IDictionary<string, string> query)
        {
            if (what == "actions") return Page(core.Outcomes(), query);   // the core's own record: no game needed
            var s = Snap();
            // per world: game, resources, duplicants, buildings, geysers, critters, map; the rest is the colony's
            var w = World(s, query.ContainsKey("worldId") ? QueryInt(query, "worldId", 0, 65535, null) : (int?)null);
            switch (what)
            {
                case "game": return new ApiResponse(200, w.Game);
                case "research": return new ApiResponse(200, s.Research);
                case "map": return new ApiResponse(200, Map(w, query));
            }
            List<JsonObject> items;
            switch (what)
            {
                case "resources": items = w.Resources; break;
                case "duplicants": items = w.Duplicants; break;
                case "buildings": items = w.Buildings; break;
                case "geysers": items = w.Geysers; break;
                case "alert": items = s.Alerts; break;
                case "catalog": items = s.Catalog; break;
                case "schedules": items = s.Schedules; break;
                case "reports": items = s.Reports; break;
                default: items = w.Critters; break;
            }
            return Page(items, query);
        }

        private static ApiResponse Page(List<JsonObject> items, IDictionary<string, string> query)
        {
            int offset = QueryInt(query, "offset", 0, 1000000000, 0);
            int limit = QueryInt(query, "limit", 1, 1000, 500);
            int start = Math.Min(offset, items.Count);
            int count = Math.Min(limit, items.Count - start);
            var r = new ApiResponse(200, items.GetRange(start, count));
            r.Headers.Add(new KeyValuePair<string, string>("X-Total-Count", items.Count.ToString()));
            if (offset + limit < items.Count)
                r.Headers.Add(new KeyValuePair<string, string>("X-Next-Offset", (offset + limit).ToString()));
            return r;
        }

        private static int QueryInt(IDictionary<string, string> q, string name, int lo, int hi, int? dflt)
        {
            string raw;
            if (!q.TryGetValue(name, out raw))
            {
                if (dflt.HasValue) return dflt.Value;
                throw ApiException.Bad("missing field " + name, name);
            }
            long v;
            bool digits = raw.Length > 0 && raw.Length < 12;
            string body = raw.StartsWith("-") ? raw.Substring(1) : raw;
            foreach (char c in body) if (c < '0' || c > '9') digits = false;
            if (body.Length == 0 || !digits || !long.TryParse(raw, out v))
                throw ApiException.Bad(name + " must be an integer", name);
            if (v < lo || v > hi)
                throw ApiException.Bad(name + " must be between " + lo + " and " + hi, name);
            return (int)v;
        }

        private static JsonObject Map(Snapshot s, IDictionary<string, string> q)
        {
            int x = QueryInt(q, "x", 0, 4095, null), y = QueryInt(q, "y", 0, 4095, null);
            int w = QueryInt(q, "width", 1, MapMax, null), h = QueryInt(q, "height", 1, MapMax, null);
            InMap(s, x, y, w, h);
            if (s.Rows.Length < s.WorldHeight)   // the glue could not read the map this time (Snapshot.Unavailable)
                throw new ApiException(503, "not_ready", "the map could not be read from the game; retry");
            var rows = new List<object>();
            for (int yy = y; yy < y + h; yy++) rows.Add(s.Rows[yy].Substring(x, w));
            return new JsonObject().Add("x", (long)x).Add("y", (long)y).Add("width", (long)w).Add("height", (long)h).Add("rows", rows);
        }

        private static void InMap(Snapshot s, int x, int y, int w, int h)
        {
            if (x + w > s.WorldWidth) throw ApiException.Bad("x is outside the map (" + s.WorldWidth + " x " + s.WorldHeight + " cells)", "x");
            if (y + h > s.WorldHeight) throw ApiException.Bad("y is outside the map (" + s.WorldWidth + " x " + s.WorldHeight + " cells)", "y");
        }

        private static JsonObject ParseObject(string raw, params string[] allowed)
        {
            object parsed;
            try { parsed = Json.Parse(raw ?? ""); }
            catch (JsonException) { throw ApiException.Bad("request body is not valid JSON"); }
            var o = parsed as JsonObject;
            if (o == null) throw ApiException.Bad("request body must be a JSON object");
            var extra = new List<string>();
            foreach (var k in o.Keys) if (Array.IndexOf(allowed, k) < 0) extra.Add(k);
            if (extra.Count > 0)
            {
                extra.Sort(StringComparer.Ordinal);
                throw ApiException.Bad("unknown field " + extra[0], extra[0]);
            }
            return o;
        }

        private static int Int(JsonObject b, string name, int lo, int hi, int? dflt = null)
        {
            object v;
            bool present = b.TryGet(name, out v);
            if (!present || (v == null && dflt.HasValue))
            {
                if (!dflt.HasValue) throw ApiException.Bad("missing field " + name, name);
                return dflt.Value;
            }
            if (!(v is long)) throw ApiException.Bad(name + " must be an integer", name);
            long l = (long)v;
            if (l < lo || l > hi) throw ApiException.Bad(name + " must be between " + lo + " and " + hi, name);
            return (int)l;
        }

        private static string Str(JsonObject b, string name, int hi = 64)
        {
            object v;
            if (!b.TryGet(name, out v)) throw ApiException.Bad("missing field " + name, name);
            var s = v as string;
            if (s == null || s.Length < 1 || s.Length > hi)
                throw ApiException.Bad(name + " must be a string of 1 to " + hi + " characters", name);
            return s;
        }

        private static int[] Area(Snapshot world, JsonObject b, bool sizeRequired)
        {
            int x = Int(b, "x", 0, 4095), y = Int(b, "y", 0, 4095);
            int w = Int(b, "width", 1, 128, sizeRequired ? (int?)null : 1);
            int h = Int(b, "height", 1, 128, sizeRequired ? (int?)null : 1);
            InMap(world, x, y, w, h);
            return new[] { x, y, w, h };
        }

        /// <summary>1 to PathMax cells [x, y] inside the map, each next to the one before (left, right,
        /// up, down), none twice: the cells the game's utility tool drags through.</summary>
        private static void Path(Snapshot s, JsonObject b, out int[] xs, out int[] ys)
        {
            object v;
            if (!b.TryGet("path", out v)) throw ApiException.Bad("missing field path", "path");
            string shape = "path must be 1 to " + PathMax + " cells [x, y], each next to the one before, none twice";
            var list = v as List<object>;
            if (list == null || list.Count < 1 || list.Count > PathMax) throw ApiException.Bad(shape, "path");
            xs = new int[list.Count];
            ys = new int[list.Count];
            var seen = new HashSet<long>();
            for (int i = 0; i < list.Count; i++)
            {
                var p = list[i] as List<object>;
                if (p == null || p.Count != 2 || !(p[0] is long) || !(p[1] is long)) throw ApiException.Bad(shape, "path");
                long x = (long)p[0], y = (long)p[1];
                if (x < 0 || x > 4095 || y < 0 || y > 4095) throw ApiException.Bad(shape, "path");
                if (i > 0 && Math.Abs(x - xs[i - 1]) + Math.Abs(y - ys[i - 1]) != 1) throw ApiException.Bad(shape, "path");
                if (!seen.Add(x * 4096 + y)) throw ApiException.Bad(shape, "path");
                xs[i] = (int)x;
                ys[i] = (int)y;
            }
            for (int i = 0; i < xs.Length; i++)
                if (xs[i] >= s.WorldWidth || ys[i] >= s.WorldHeight)
                    throw ApiException.Bad("path is outside the map (" + s.WorldWidth + " x " + s.WorldHeight + " cells)", "path");
        }

        private string Duplicant(JsonObject b)
        {
            string name = Str(b, "duplicant");
            if (!Snap().DuplicantNames.Contains(name)) throw ApiException.Bad("no duplicant named " + name, "duplicant");
            return name;
        }

        /// <summary>An order's priority 1..9, 5 when absent (the game's default, PriorityScreen basic 5).</summary>
        private static int Priority(JsonObject b) { return Int(b, "priority", 1, 9, 5); }

        private static JsonObject WithPriority(JsonObject result, JsonObject b, int p)
        {
            return b.Has("priority") ? result.Add("priority", (long)p) : result;
        }

        private static JsonObject AreaResult(string result, int[] a)
        {
            return new JsonObject().Add("result", result).Add("x", (long)a[0]).Add("y", (long)a[1])
                .Add("width", (long)a[2]).Add("height", (long)a[3]);
        }

        private static readonly Dictionary<string, string[]> Permitted = new Dictionary<string, string[]>
        {
            // BuildingDef.PermittedRotations -> the orientations the game's build tool turns through
            // (Rotatable.Rotate: R90 toggles Neutral/R90, R360 all four, FlipH/FlipV toggle the mirror)
            { "Unrotatable", new[] { "Neutral" } }, { "R90", new[] { "Neutral", "R90" } },
            { "R360", new[] { "Neutral", "R90", "R180", "R270" } }, { "FlipH", new[] { "Neutral", "FlipH" } },
            { "FlipV", new[] { "Neutral", "FlipV" } },
        };

        /// <summary>The game's Orientation for rotation (0/90/180/270) and flip, checked against the
        /// building's PermittedRotations from the catalog (unchecked when the catalog lacks it).</summary>
        private static string Orientation(Snapshot s, string id, int? rot, bool flip)
        {
            string rotations = null;
            foreach (var e in s.Catalog)
            {
                object v, r;
                if (e.TryGet("id", out v) && (string)v == id && e.TryGet("rotations", out r)) rotations = r as string;
            }
            string o = flip ? (rotations == "FlipV" ? "FlipV" : "FlipH")
                : rot == 90 ? "R90" : rot == 180 ? "R180" : rot == 270 ? "R270" : "Neutral";
            string[] allowed;
            if (rotations == null || !Permitted.TryGetValue(rotations, out allowed)) allowed = null;
            if ((flip && rot.HasValue && rot.Value != 0) || (allowed != null && Array.IndexOf(allowed, o) < 0))
                throw ApiException.Bad(id + " cannot be turned so: the game allows " + (allowed == null ? "no turn with a mirror" : string.Join(", ", allowed))
                    + " (rotation 90 = R90, 180, 270; flip = the mirror it allows)", flip && !(rot.HasValue && rot.Value != 0) ? "flip" : "rotation");
            return o;
        }

        /// <summary>The world of an action: its worldId's snapshot (400 unknown_world), else the active
        /// world's (null while no game is loaded: actions that need the map ask Snap() and answer not_ready).</summary>
        private Snapshot WorldOf(JsonObject b)
        {
            return b.Has("worldId") ? World(Snap(), Int(b, "worldId", 0, 65535)) : core.Current;
        }

        private JsonObject Action(string what, string raw)
        {
            if (raw != null && raw.Length > MaxBody) throw new ApiException(413, "invalid_request", "request body over " + MaxBody + " bytes");
            JsonObject b, result;
            Snapshot w;
            Func<IGameActions, string> act;
            switch (what)
            {
                case "dig":
                {
                    b = ParseObject(raw, "x", "y", "width", "height", "priority", "worldId");
                    w = WorldOf(b);
                    var a = Area(w ?? Snap(), b, true);
                    int p = Priority(b);
                    int wid = (w ?? Snap()).WorldId;
                    act = g => g.Dig(wid, a[0], a[1], a[2], a[3], p);
                    result = WithPriority(AreaResult("dig_queued", a), b, p);
                    break;
                }
                case "build":
                {
                    b = ParseObject(raw, "buildingId", "x", "y", "rotation", "flip", "priority", "worldId");
                    w = WorldOf(b);
                    string id = Str(b, "buildingId");
                    int x = Int(b, "x", 0, 4095), y = Int(b, "y", 0, 4095);
                    object r;
                    int? rot = null;
                    if (b.TryGet("rotation", out r) && r != null)
                    {
                        if (!(r is long) || ((long)r != 0 && (long)r != 90 && (long)r != 180 && (long)r != 270))
                            throw ApiException.Bad("rotation must be null, 0, 90, 180 or 270", "rotation");
                        rot = (int)(long)r;
                    }
                    object f;
                    bool flip = false;
                    if (b.TryGet("flip", out f))
                    {
                        if (!(f is bool)) throw ApiException.Bad("flip must be true or false", "flip");
                        flip = (bool)f;
                    }
                    int p = Priority(b);
                    InMap(w ?? Snap(), x, y, 1, 1);
                    if (!Snap().BuildingIds.Contains(id))
                        throw new ApiException(400, "unknown_building", "no building with id " + id, "buildingId", id);
                    string orientation = Orientation(Snap(), id, rot, flip);
                    int wid = (w ?? Snap()).WorldId;
                    act = g => g.Build(wid, id, x, y, orientation, p);
                    result = WithPriority(new JsonObject().Add("result", "build_queued").Add("buildingId", id).Add("x", (long)x).Add("y", (long)y), b, p);
                    if (orientation != "Neutral") result.Add("orientation", orientation);
                    break;
                }
                case "deconstruct":
                {
                    b = ParseObject(raw, "x", "y", "width", "height", "priority", "worldId");
                    w = WorldOf(b);
                    var a = Area(w ?? Snap(), b, false);
                    int p = Priority(b);
                    int wid = (w ?? Snap()).WorldId;
                    act = g => g.Deconstruct(wid, a[0], a[1], a[2], a[3], p);
                    result = WithPriority(AreaResult("deconstruct_queued", a), b, p);
                    break;
                }
                case "cancel":
                {
                    b = ParseObject(raw, "x", "y", "width", "height", "worldId");
                    w = WorldOf(b);
                    var a = Area(w ?? Snap(), b, false);
                    int wid = (w ?? Snap()).WorldId;
                    act = g => g.Cancel(wid, a[0], a[1], a[2], a[3]);
                    result = AreaResult("cancel_queued", a);
                    break;
                }
                case "prioritize":
                {
                    b = ParseObject(raw, "x", "y", "width", "height", "priority", "worldId");
                    w = WorldOf(b);
                    var a = Area(w ?? Snap(), b, false);
                    int p = Int(b, "priority", 1, 9);
                    int wid = (w ?? Snap()).WorldId;
                    act = g => g.Prioritize(wid, a[0], a[1], a[2], a[3], p);
                    result = AreaResult("prioritize_queued", a).Add("priority", (long)p);
                    break;
                }
                case "research":
                {
                    b = ParseObject(raw, "techId", "worldId");
                    w = WorldOf(b);
                    string tech = Str(b, "techId");
                    if (!Snap().TechIds.Contains(tech)) throw new ApiException(400, "unknown_tech", "no tech with id " + tech, "techId", tech);
                    act = g => g.Research(tech);
                    result = new JsonObject().Add("result", "research_queued").Add("techId", tech);
                    break;
                }
                case "schedule":
                {
                    b = ParseObject(raw, "duplicant", "schedule", "blocks", "worldId");
                    w = WorldOf(b);
                    if ((b.Has("duplicant") ? 1 : 0) + (b.Has("schedule") ? 1 : 0) + (b.Has("blocks") ? 1 : 0) != 2)
                        throw ApiException.Bad("give blocks with duplicant or schedule, or duplicant with schedule (to assign it)", "blocks");
                    result = new JsonObject().Add("result", "schedule_queued");
                    string name = null, schedule = null;
                    string[] blocks = null;
                    if (b.Has("duplicant")) result.Add("duplicant", name = Duplicant(b));
                    if (b.Has("schedule")) result.Add("schedule", schedule = Str(b, "schedule"));
                    object v;
                    if (b.TryGet("blocks", out v))
                    {
                        var list = v as List<object>;
                        if (list == null || list.Count != 24) throw ApiException.Bad("blocks must be 24 of work, sleep, downtime, bathtime", "blocks");
                        blocks = new string[24];
                        for (int i = 0; i < 24; i++)
                        {
                            var s = list[i] as string;
                            if (s == null || Array.IndexOf(ScheduleBlocks, s) < 0)
                                throw ApiException.Bad("blocks must be 24 of work, sleep, downtime, bathtime", "blocks");
                            blocks[i] = s;
                        }
                    }
                    act = g => g.Schedule(name, schedule, blocks);
                    break;
                }
                case "speed":
                {
                    b = ParseObject(raw, "paused", "speed", "worldId");
                    w = WorldOf(b);
                    if (!b.Has("paused") && !b.Has("speed")) throw ApiException.Bad("give paused, speed or both", "paused");
                    bool? paused = null;
                    int? speed = null;
                    result = new JsonObject().Add("result", "speed_queued");
                    object pv;
                    if (b.TryGet("paused", out pv))
                    {
                        if (!(pv is bool)) throw ApiException.Bad("paused must be true or false", "paused");
                        paused = (bool)pv;
                        result.Add("paused", pv);
                    }
                    if (b.Has("speed"))
                    {
                        speed = Int(b, "speed", 1, 3);
                        result.Add("speed", (long)speed.Value);
                    }
                    act = g => g.Speed(paused, speed);
                    break;
                }
                case "utility":
                {
                    b = ParseObject(raw, "kind", "path", "priority", "worldId");
                    w = WorldOf(b);
                    object k;
                    if (!b.TryGet("kind", out k)) throw ApiException.Bad("missing field kind", "kind");
                    var kind = k as string;
                    if (kind == null || Array.IndexOf(UtilityKinds, kind) < 0)
                        throw ApiException.Bad("kind must be one of " + string.Join(", ", UtilityKinds), "kind");
                    int[] xs, ys;
                    Path(w ?? Snap(), b, out xs, out ys);
                    int p = Priority(b);
                    int wid = (w ?? Snap()).WorldId;
                    act = g => g.Utility(wid, kind, xs, ys, p);
                    result = WithPriority(new JsonObject().Add("result", "utility_queued").Add("kind", kind).Add("cells", (long)xs.Length), b, p);
                    break;
                }
                case "plant":
                {
                    b = ParseObject(raw, "x", "y", "seed", "priority", "worldId");
                    w = WorldOf(b);
                    int x = Int(b, "x", 0, 4095), y = Int(b, "y", 0, 4095);
                    string seed = Str(b, "seed");
                    int p = Priority(b);
                    InMap(w ?? Snap(), x, y, 1, 1);
                    int wid = (w ?? Snap()).WorldId;
                    act = g => g.Plant(wid, x, y, seed, p);
                    result = WithPriority(new JsonObject().Add("result", "plant_queued").Add("x", (long)x).Add("y", (long)y).Add("seed", seed), b, p);
                    break;
                }
                case "mop":
                case "sweep":
                case "harvest":
                {
                    b = ParseObject(raw, "x", "y", "width", "height", "priority", "worldId");
                    w = WorldOf(b);
                    var a = Area(w ?? Snap(), b, false);
                    int p = Priority(b);
                    int wid = (w ?? Snap()).WorldId;
                    string order = what;
                    act = g => order == "mop" ? g.Mop(wid, a[0], a[1], a[2], a[3], p)
                        : order == "sweep" ? g.Sweep(wid, a[0], a[1], a[2], a[3], p) : g.Harvest(wid, a[0], a[1], a[2], a[3], p);
                    result = WithPriority(AreaResult(what + "_queued", a), b, p);
                    break;
                }
                default: // wardrobe
                {
                    b = ParseObject(raw, "duplicant", "item", "worldId");
                    w = WorldOf(b);
                    Duplicant(b);
                    object v;
                    b.TryGet("item", out v);
                    var item = v as string;
                    if (item == null || Array.IndexOf(Suits, item) < 0)
                        throw ApiException.Bad("item must be one of " + string.Join(", ", Suits), "item");
                    // the game has no call that dresses a duplicant: suits are put on at a suit dock
                    // (a duplicant passing a checkpoint); nothing is queued
                    throw new ApiException(501, "not_implemented",
                        "wardrobe is not implemented: in the game a duplicant puts a suit on at a suit dock");
                }
            }
            if (b.Has("worldId")) result.Add("worldId", (long)w.WorldId);
            long actionId = core.Enqueue(what, b, act);
            if (actionId == 0) throw new ApiException(503, "queue_full", "the action queue is full; retry when the game has caught up");
            return result.Add("actionId", actionId);
        }
    }
}
