// Compiled in CI against oni-mod/stubs/ (the game's signatures, each with where it was seen). Reads
// the game on the game thread (called from ModCore.Tick) into the core's immutable Snapshot;
// converts types only, no rules. Each section is read on its own: one that throws (a game update
// renamed something, a half-loaded world) leaves its own part empty (a list is cleared; /game keeps
// the keys read before the failure), is named in the snapshot's Unavailable list and logged once,
// and the other sections are still published.
using System;
using System.Collections.Generic;
using Klei.AI;
using OniAgentMod.Core;
using UnityEngine;

namespace OniAgentMod.Glue
{
    public sealed class GameStateReader : IGameState
    {
        private static float lastCapture = -1f;
        private static Snapshot last;
        private static HashSet<string> buildingIds, techIds;   // fixed for a game session: read once
        // The game has no "list the notifications" call: NotificationManager raises notificationAdded /
        // notificationRemoved (NotificationManager.cs), so the glue keeps the live set itself.
        private static NotificationManager subscribed;
        private static readonly List<Notification> notifications = new List<Notification>();

        private readonly IModLog log;
        private readonly HashSet<string> logged = new HashSet<string>();

        public GameStateReader(IModLog log) { this.log = log; }

        internal static void Reset()
        {
            last = null;
            lastCapture = -1f;
            buildingIds = null;
            techIds = null;
            catalog = null;
            Unsubscribe();
        }

        public Snapshot Capture()
        {
            // a fresh picture at most twice a second of real time; between them the last one stands
            if (last != null && Time.unscaledTime - lastCapture < 0.5f) return last;
            if (Game.Instance == null || ClusterManager.Instance == null) return null;
            var active = ClusterManager.Instance.activeWorld;
            if (active == null) return null;
            lastCapture = Time.unscaledTime;
            // Spaced Out keeps several worlds (asteroids, rocket interiors) in one grid, each a rectangle
            // (WorldContainer.WorldOffset, WorldSize); the base game one. Each world gets its own picture
            // with cells counted from its bottom-left; the active world's is the one published.
            var worlds = new List<object>();
            foreach (var w in ClusterManager.Instance.WorldContainers)
                if (w.IsDiscovered || w == active)
                    worlds.Add(new JsonObject().Add("id", (long)w.id).Add("name", w.GetProperName())
                        .Add("width", (long)w.WorldSize.x).Add("height", (long)w.WorldSize.y).Add("active", w == active));
            Snapshot s = null;
            var all = new Dictionary<int, Snapshot>();
            foreach (var w in ClusterManager.Instance.WorldContainers)
            {
                if (!w.IsDiscovered && w != active) continue;
                var ws = ReadWorld(w, worlds);
                all[w.id] = ws;
                if (w == active) s = ws;
            }
            if (s == null) return null;
            s.Worlds = all;
            Section(s, "ids", () => ReadIds(s));
            Section(s, "catalog", () => ReadCatalog(s));
            Section(s, "research", () => ReadResearch(s));
            Section(s, "alert", () => ReadAlerts(s));
            Section(s, "schedules", () => ReadSchedules(s));
            Section(s, "reports", () => ReadReports(s));
            Section(s, "names", () => { foreach (MinionIdentity m in Components.LiveMinionIdentities.Items) s.DuplicantNames.Add(m.GetProperName()); });
            foreach (var ws in all.Values)
                if (ws.Unavailable.Count > 0) ws.Game.Add("unavailable", new List<object>(ws.Unavailable));
            last = s;
            return s;
        }

        /// <summary>One world's own sections: its game keys, oxygen, food, power, temperature and rooms,
        /// inventory, duplicants, buildings, geysers, critters and map, in the world's cells.</summary>
        private Snapshot ReadWorld(WorldContainer world, List<object> worlds)
        {
            var s = new Snapshot { WorldWidth = world.WorldSize.x, WorldHeight = world.WorldSize.y, WorldId = world.id };
            Section(s, "game", () => ReadGame(s, world, worlds));
            Section(s, "oxygen", () => ReadOxygen(s, world));
            Section(s, "food", () => ReadFood(s, world));
            Section(s, "power", () => ReadPower(s, world));
            Section(s, "temperature", () => ReadTemperature(s, world));
            Section(s, "resources", () => ReadResources(s, world));
            Section(s, "duplicants", () => ReadDuplicants(s, world));
            Section(s, "buildings", () => ReadBuildings(s, world));
            Section(s, "geysers", () => ReadGeysers(s, world));
            Section(s, "critters", () => ReadCritters(s, world));
            Section(s, "map", () => ReadMap(s, world));
            return s;
        }

        /// <summary>A cell's x, y in its world (from the world's bottom-left cell).</summary>
        internal static void WorldXY(int cell, WorldContainer world, out int x, out int y)
        {
            Grid.CellToXY(cell, out x, out y);
            x -= world.WorldOffset.x;
            y -= world.WorldOffset.y;
        }

        /// <summary>The grid cell of x, y in a world.</summary>
        internal static int WorldCell(WorldContainer world, int x, int y)
        {
            return Grid.XYToCell(x + world.WorldOffset.x, y + world.WorldOffset.y);
        }

        private void Section(Snapshot s, string name, Action read)
        {
            try { read(); }
            catch (Exception e)
            {
                Clear(s, name);   // nothing half-read is published
                s.Unavailable.Add(name);
                string what = name + ": " + e.GetType().Name + ": " + e.Message;
                if (logged.Count < 64 && logged.Add(what)) log.Error("reading " + what + " (logged once)");
            }
        }

        private static void Clear(Snapshot s, string name)
        {
            switch (name)
            {
                case "ids": s.BuildingIds = new HashSet<string>(); s.TechIds = new HashSet<string>(); break;
                case "catalog": s.Catalog.Clear(); break;
                case "resources": s.Resources.Clear(); break;
                case "duplicants": s.Duplicants.Clear(); break;
                case "names": s.DuplicantNames.Clear(); break;
                case "buildings": s.Buildings.Clear(); break;
                case "research": s.Research = new Snapshot().Research; break;
                case "geysers": s.Geysers.Clear(); break;
                case "alert": s.Alerts.Clear(); break;
                case "critters": s.Critters.Clear(); break;
                case "map": s.Rows = new string[0]; break;
                case "schedules": s.Schedules.Clear(); break;
                case "reports": s.Reports.Clear(); break;
                // game, oxygen, food, power, temperature: each adds its keys to /game as it reads them
            }
        }

        private static void ReadIds(Snapshot s)
        {
            if (buildingIds == null)
            {
                var b = new HashSet<string>();
                foreach (var def in Assets.BuildingDefs) b.Add(def.PrefabID);
                var t = new HashSet<string>();
                foreach (var tech in Db.Get().Techs.resources) t.Add(tech.Id);
                buildingIds = b;
                techIds = t;
            }
            s.BuildingIds = buildingIds;
            s.TechIds = techIds;
        }

        private static List<KeyValuePair<JsonObject, Tech>> catalog;   // fixed for a session but "researched"

        // The buildings as the game defines them (Assets.BuildingDefs): size, the material categories and
        // kg of the build recipe (MaterialCategory, Mass), the tech whose list names it
        // (Techs.TryGetTechForTechItem), whether the build menu offers it (IsAvailable: not deprecated,
        // not debug-only; ShowInBuildMenu) and its ports as cells from the bottom-left cell, unrotated
        // (the game's offsets are from the anchor cell, (width-1)/2 from the left).
        private static void ReadCatalog(Snapshot s)
        {
            if (catalog == null)
            {
                var list = new List<KeyValuePair<JsonObject, Tech>>();
                foreach (var def in Assets.BuildingDefs)
                {
                    int anchor = (def.WidthInCells - 1) / 2;
                    var materials = new List<object>();
                    for (int i = 0; i < def.MaterialCategory.Length && i < def.Mass.Length; i++)
                        materials.Add(new JsonObject().Add("category", def.MaterialCategory[i]).Add("kg", (double)def.Mass[i]));
                    var ports = new JsonObject();
                    if (def.RequiresPowerInput) ports.Add("powerIn", Cell(def.PowerInputOffset, anchor));
                    if (def.RequiresPowerOutput) ports.Add("powerOut", Cell(def.PowerOutputOffset, anchor));
                    if (def.InputConduitType != ConduitType.None)
                        ports.Add("conduitIn", Cell(def.UtilityInputOffset, anchor).Add("type", def.InputConduitType.ToString()));
                    if (def.OutputConduitType != ConduitType.None)
                        ports.Add("conduitOut", Cell(def.UtilityOutputOffset, anchor).Add("type", def.OutputConduitType.ToString()));
                    var tech = Db.Get().Techs.TryGetTechForTechItem(def.PrefabID);
                    var entry = new JsonObject().Add("id", def.PrefabID).Add("name", def.Name)
                        .Add("width", (long)def.WidthInCells).Add("height", (long)def.HeightInCells)
                        .Add("materials", materials).Add("tech", tech != null ? tech.Id : null)
                        .Add("available", def.IsAvailable() && def.ShowInBuildMenu)
                        .Add("powerW", (double)(def.GeneratorWattageRating - (def.RequiresPowerInput ? def.EnergyConsumptionWhenActive : 0f)))
                        .Add("ports", ports).Add("rotations", def.PermittedRotations.ToString());
                    list.Add(new KeyValuePair<JsonObject, Tech>(entry, tech));
                }
                catalog = list;
            }
            foreach (var kv in catalog)
            {
                var copy = new JsonObject();
                foreach (var item in kv.Key.Items) copy.Add(item.Key, item.Value);
                s.Catalog.Add(copy.Add("researched", kv.Value == null || kv.Value.IsComplete()));
            }
        }

        private static JsonObject Cell(CellOffset offset, int anchor)
        {
            return new JsonObject().Add("x", (long)(offset.x + anchor)).Add("y", (long)offset.y);
        }

        private static void ReadGame(Snapshot s, WorldContainer world, List<object> worlds)
        {
            long dupes = 0;
            foreach (MinionIdentity m in Components.LiveMinionIdentities.Items) if (m.GetMyWorldId() == world.id) dupes++;
            s.Game.Add("cycle", (long)GameClock.Instance.GetCycle())
                .Add("duplicantCount", dupes)
                .Add("worldName", world.GetProperName())
                .Add("worldId", (long)world.id)
                .Add("worlds", worlds)
                .Add("worldSize", (long)world.WorldSize.x)
                .Add("worldWidth", (long)world.WorldSize.x)
                .Add("worldHeight", (long)world.WorldSize.y)
                .Add("paused", SpeedControlScreen.Instance != null && SpeedControlScreen.Instance.IsPaused);
            if (SpeedControlScreen.Instance != null) s.Game.Add("speed", (long)SpeedControlScreen.Instance.GetSpeed() + 1);
        }

        private static readonly Dictionary<Element, bool> breathable = new Dictionary<Element, bool>();

        // Breathable gas in the world: the mass of every cell of the active world whose element has
        // the Breathable tag (oxygen and polluted oxygen: GameTags.Breathable, Element.HasTag);
        // Grid.WorldIdx says which world a cell belongs to, Grid.Mass is kg.
        private static void ReadOxygen(Snapshot s, WorldContainer world)
        {
            double kg = 0;
            long cells = 0;
            for (int wy = 0; wy < world.WorldSize.y; wy++)
            for (int wx = 0; wx < world.WorldSize.x; wx++)
            {
                int cell = WorldCell(world, wx, wy);
                if (!Grid.IsValidCell(cell) || Grid.WorldIdx[cell] != world.id) continue;
                var e = Grid.Element[cell];
                bool b;
                if (!breathable.TryGetValue(e, out b)) breathable[e] = b = e.HasTag(GameTags.Breathable);
                if (!b) continue;
                kg += Grid.Mass[cell];
                cells++;
            }
            s.Game.Add("oxygen", new JsonObject().Add("breathableKg", kg).Add("breathableCells", cells));
        }

        // The food the colony can reach, in kcal, as the game's ration meter counts it
        // (MeterScreen_Rations: RationTracker.CountAmount(null, worldInventory) is in calories).
        private static void ReadFood(Snapshot s, WorldContainer world)
        {
            var tracker = WorldResourceAmountTracker<RationTracker>.Get();
            if (tracker == null) return;
            double calories = tracker.CountAmount(null, world.worldInventory, true);
            s.Game.Add("food", new JsonObject().Add("kcal", calories / 1000.0));
        }

        private const ushort NoCircuit = 65535;   // CircuitManager.INVALID_ID: no wire on the power port

        // Power in the world, in total and per circuit. Totals: generators' WattageRating while
        // IsProducingPower, consumers' WattsUsed, batteries' JoulesAvailable of Capacity. Circuits: each
        // building's CircuitID (Generator/EnergyConsumer/Battery.CircuitID, CircuitManager.GetCircuitID:
        // the network of the wire on its power cell; 65535 = none), and for each circuit the game's own
        // figures (CircuitManager: GetWattsGeneratedByCircuit, GetWattsUsedByCircuit (what its consumers
        // drew in the last 200 ms), GetJoulesAvailableOnCircuit, GetMaxSafeWattageForCircuit (the weakest
        // wire's rating; above it the wires take damage)); consumers not IsPowered are counted.
        private sealed class Circuit { public long Generators, Consumers, Batteries, Unpowered; public double Needed, Capacity; }

        private static void ReadPower(Snapshot s, WorldContainer world)
        {
            double produced = 0, consumed = 0, stored = 0, capacity = 0;
            var circuits = new SortedDictionary<ushort, Circuit>();
            var loose = new Circuit();
            Func<ushort, Circuit> on = id =>
            {
                if (id == NoCircuit) return loose;
                Circuit c;
                if (!circuits.TryGetValue(id, out c)) circuits[id] = c = new Circuit();
                return c;
            };
            foreach (Generator g in Components.Generators.Items)
            {
                if (g.GetMyWorldId() != world.id) continue;
                if (g.IsProducingPower()) produced += g.WattageRating;
                on(g.CircuitID).Generators++;
            }
            foreach (EnergyConsumer c in Components.EnergyConsumers.Items)
            {
                if (c.GetMyWorldId() != world.id) continue;
                consumed += c.WattsUsed;
                var k = on(c.CircuitID);
                k.Consumers++;
                k.Needed += c.WattsNeededWhenActive;
                if (!c.IsPowered) k.Unpowered++;
            }
            foreach (Battery b in Components.Batteries.Items)
            {
                if (b.GetMyWorldId() != world.id) continue;
                stored += b.JoulesAvailable;
                capacity += b.Capacity;
                var k = on(b.CircuitID);
                k.Batteries++;
                k.Capacity += b.Capacity;
            }
            var cm = Game.Instance.circuitManager;
            var list = new List<object>();
            foreach (var kv in circuits)
            {
                var c = kv.Value;
                list.Add(new JsonObject().Add("id", (long)kv.Key)
                    .Add("generatedW", (double)cm.GetWattsGeneratedByCircuit(kv.Key))
                    .Add("usedW", (double)cm.GetWattsUsedByCircuit(kv.Key)).Add("neededW", c.Needed)
                    .Add("storedJ", (double)cm.GetJoulesAvailableOnCircuit(kv.Key)).Add("capacityJ", c.Capacity)
                    .Add("maxSafeW", (double)cm.GetMaxSafeWattageForCircuit(kv.Key))
                    .Add("generators", c.Generators).Add("consumers", c.Consumers).Add("batteries", c.Batteries)
                    .Add("unpowered", c.Unpowered));
            }
            s.Game.Add("power", new JsonObject().Add("produced", produced).Add("consumed", consumed)
                .Add("stored", stored).Add("capacity", capacity).Add("circuits", list)
                .Add("unconnected", new JsonObject().Add("generators", loose.Generators).Add("consumers", loose.Consumers)
                    .Add("batteries", loose.Batteries)));
        }

        // The temperature where the duplicants of the world are (Grid.Temperature is Kelvin), and the
        // rooms they are in: the game's rooms (RoomProber: an enclosed cavity of at most its maximum
        // size has a Room; Game.Instance.roomProber.GetCavityForCell(cell).room), each with its type
        // (Room.roomType, a RoomType resource), its cells (those of the cavity's bounding box,
        // CavityInfo.minX..maxX/minY..maxY, whose cavity is this one) and their mean temperature.
        private static void ReadTemperature(Snapshot s, WorldContainer world)
        {
            double sum = 0, max = double.MinValue;
            int n = 0;
            var prober = Game.Instance.roomProber;
            var rooms = new List<CavityInfo>();
            var inRoom = new Dictionary<CavityInfo, long>();
            foreach (MinionIdentity m in Components.LiveMinionIdentities.Items)
            {
                if (m.GetMyWorldId() != world.id) continue;
                int cell = Grid.PosToCell(m);
                double c = Grid.Temperature[cell] - 273.15;
                sum += c;
                max = Math.Max(max, c);
                n++;
                var cavity = prober.GetCavityForCell(cell);
                if (cavity == null || cavity.room == null) continue;
                long k;
                if (!inRoom.TryGetValue(cavity, out k)) rooms.Add(cavity);
                inRoom[cavity] = k + 1;
            }
            var list = new List<object>();
            foreach (var cavity in rooms)
            {
                double t = 0;
                long cells = 0;
                for (int y = cavity.minY; y <= cavity.maxY; y++)
                    for (int x = cavity.minX; x <= cavity.maxX; x++)
                    {
                        int cell = Grid.XYToCell(x, y);
                        if (prober.GetCavityForCell(cell) != cavity) continue;
                        t += Grid.Temperature[cell] - 273.15;
                        cells++;
                    }
                if (cells == 0) continue;
                list.Add(new JsonObject().Add("room", cavity.room.roomType.Id)
                    .Add("x", (long)(cavity.minX - world.WorldOffset.x)).Add("y", (long)(cavity.minY - world.WorldOffset.y))
                    .Add("width", (long)(cavity.maxX - cavity.minX + 1)).Add("height", (long)(cavity.maxY - cavity.minY + 1))
                    .Add("cells", cells).Add("temperature", Math.Round(t / cells, 2)).Add("duplicants", inRoom[cavity]));
            }
            if (n > 0)
                s.Game.Add("temperature", new JsonObject().Add("average", Math.Round(sum / n, 2)).Add("max", Math.Round(max, 2))
                    .Add("rooms", list));
        }

        // The world inventory: pickupable items the colony can reach (WorldInventory.GetAccessibleAmounts,
        // Tag -> kg). It is not the air or pooled liquids, and food is in kg of items, not kcal.
        private static void ReadResources(Snapshot s, WorldContainer world)
        {
            foreach (var kv in world.worldInventory.GetAccessibleAmounts())
                s.Resources.Add(new JsonObject().Add("name", kv.Key.ProperName()).Add("tag", kv.Key.Name)
                    .Add("amount", (double)kv.Value).Add("unit", "kg"));
        }

        private static void ReadDuplicants(Snapshot s, WorldContainer world)
        {
            foreach (MinionIdentity m in Components.LiveMinionIdentities.Items)
            {
                if (m.GetMyWorldId() != world.id) continue;
                var amounts = m.GetAmounts();
                s.Duplicants.Add(new JsonObject().Add("name", m.GetProperName())
                    .Add("stress", (double)amounts.GetValue("Stress"))
                    .Add("calories", (double)amounts.GetValue("Calories"))
                    .Add("stamina", (double)amounts.GetValue("Stamina"))
                    .Add("oxygen", (double)amounts.GetValue("Breath"))
                    .Add("diseases", (long)m.GetSicknesses().Count)
                    .Add("skillLevels", (long)m.GetComponent<MinionResume>().TotalSkillPointsGained));
            }
        }

        // A building's x, y is the bottom-left cell of its footprint as placed: the anchor cell (PosToCell)
        // plus the smallest of its PlacementOffsets turned by its orientation (Rotatable.GetOrientation,
        // Rotatable.GetRotatedCellOffset), as BuildingDef.MarkArea lays its cells.
        internal static void BottomLeft(BuildingDef def, Orientation o, out int dx, out int dy)
        {
            dx = int.MaxValue;
            dy = int.MaxValue;
            foreach (var offset in def.PlacementOffsets)
            {
                var r = Rotatable.GetRotatedCellOffset(offset, o);
                dx = Math.Min(dx, r.x);
                dy = Math.Min(dy, r.y);
            }
        }

        private static void ReadBuildings(Snapshot s, WorldContainer world)
        {
            foreach (BuildingComplete b in Components.BuildingCompletes.Items)
            {
                if (b.GetMyWorldId() != world.id) continue;
                int bx, by, dx, dy;
                WorldXY(Grid.PosToCell(b), world, out bx, out by);
                var rot = b.GetComponent<Rotatable>();
                var o = rot != null ? rot.GetOrientation() : Orientation.Neutral;
                BottomLeft(b.Def, o, out dx, out dy);
                bool side = o == Orientation.R90 || o == Orientation.R270;   // a quarter turn lays it on its side
                var op = b.GetComponent<Operational>();
                s.Buildings.Add(new JsonObject().Add("name", b.Def.Name).Add("id", b.Def.PrefabID)
                    .Add("x", (long)(bx + dx)).Add("y", (long)(by + dy)).Add("isOperational", op == null || op.IsOperational)
                    .Add("width", (long)(side ? b.Def.HeightInCells : b.Def.WidthInCells))
                    .Add("height", (long)(side ? b.Def.WidthInCells : b.Def.HeightInCells))
                    .Add("underConstruction", false));
            }
        }

        private static void ReadResearch(Snapshot s)
        {
            var active = Research.Instance.GetActiveResearch();
            var completed = new List<object>();
            var available = new List<object>();
            foreach (var tech in Db.Get().Techs.resources)
            {
                if (tech.IsComplete()) completed.Add(tech.Id);
                else if (tech.ArePrerequisitesComplete()) available.Add(tech.Id);
            }
            s.Research = new JsonObject().Add("current", active != null ? active.tech.Id : null)
                .Add("progress", active != null ? (double)active.GetTotalPercentageComplete() : 0.0)
                .Add("completed", completed).Add("available", available);
        }

        // Geysers are kept per world (Components.CmpsByWorld<Geyser>.GetItems(worldId)). The element and
        // the rate come from the geyser's configuration (Geyser.configuration, a
        // GeyserConfigurator.GeyserInstanceConfiguration): the emitter is private and has no rate.
        // The phase is the one Geyser's own timers give (ShouldGoDormant, RemainingEruptTime): the state
        // machine's pre/post-eruption shake counts as idle here.
        private static void ReadGeysers(Snapshot s, WorldContainer world)
        {
            foreach (Geyser g in Components.Geysers.GetItems(world.id))
            {
                int gx, gy;
                WorldXY(Grid.PosToCell(g), world, out gx, out gy);
                var config = g.configuration;
                s.Geysers.Add(new JsonObject().Add("id", g.GetComponent<KPrefabID>().InstanceID.ToString())
                    .Add("name", g.GetProperName()).Add("x", (long)gx).Add("y", (long)gy)
                    .Add("state", g.ShouldGoDormant() ? "dormant" : g.RemainingEruptTime() > 0f ? "erupting" : "idle")
                    .Add("element", config != null ? config.GetElement().ToString() : "")
                    .Add("emitRate", config != null ? (double)config.GetEmitRate() : 0.0));
            }
        }

        private static void OnAdded(Notification n) { notifications.Add(n); }
        private static void OnRemoved(Notification n) { notifications.Remove(n); }

        private static void Unsubscribe()
        {
            if (subscribed != null)
            {
                subscribed.notificationAdded -= OnAdded;
                subscribed.notificationRemoved -= OnRemoved;
            }
            subscribed = null;
            notifications.Clear();
        }

        private static void ReadAlerts(Snapshot s)
        {
            var manager = NotificationManager.Instance;
            if (manager != subscribed)
            {
                // a new game has a new manager: notifications raised before the mod subscribed are not
                // replayed, so the list starts with those added from now on
                Unsubscribe();
                if (manager == null) return;
                manager.notificationAdded += OnAdded;
                manager.notificationRemoved += OnRemoved;
                subscribed = manager;
            }
            foreach (var n in notifications)
                s.Alerts.Add(new JsonObject().Add("type", n.titleText).Add("message", n.NotifierName ?? n.titleText)
                    .Add("severity", n.Type == NotificationType.Bad || n.Type == NotificationType.DuplicantThreatening ? "bad"
                        : n.Type == NotificationType.BadMinor ? "warning" : "info"));
        }

        // Components.Brains holds every Brain: duplicants' MinionBrain and critters' CreatureBrain
        // (Components.cs; MinionBrain.cs and CreatureBrain.cs both derive from Brain), so filter with `as`.
        private static void ReadCritters(Snapshot s, WorldContainer world)
        {
            foreach (Brain brain in Components.Brains.Items)
            {
                var c = brain as CreatureBrain;
                if (c == null || c.GetMyWorldId() != world.id) continue;
                int cx, cy;
                WorldXY(Grid.PosToCell(c), world, out cx, out cy);
                s.Critters.Add(new JsonObject().Add("name", c.GetProperName()).Add("species", c.species.Name)
                    .Add("x", (long)cx).Add("y", (long)cy).Add("isWild", c.HasTag(GameTags.Creatures.Wild)));
            }
        }

        // ScheduleManager.GetSchedules(): each schedule's name, its 24 blocks (ScheduleBlock.GroupId: the
        // ScheduleGroups ids Worktime, Sleep, Recreation, Hygene) and the duplicants on it
        private static void ReadSchedules(Snapshot s)
        {
            var mgr = ScheduleManager.Instance;
            var on = new Dictionary<Schedule, List<object>>();
            foreach (MinionIdentity m in Components.LiveMinionIdentities.Items)
            {
                var sch = mgr.GetSchedule(m.GetComponent<Schedulable>());
                if (sch == null) continue;
                List<object> names;
                if (!on.TryGetValue(sch, out names)) on[sch] = names = new List<object>();
                names.Add(m.GetProperName());
            }
            foreach (var sch in mgr.GetSchedules())
            {
                var blocks = new List<object>();
                foreach (var block in sch.GetBlocks())
                    blocks.Add(block.GroupId == "Sleep" ? "sleep" : block.GroupId == "Recreation" ? "downtime"
                        : block.GroupId == "Hygene" ? "bathtime" : "work");
                List<object> names;
                s.Schedules.Add(new JsonObject().Add("name", sch.name).Add("blocks", blocks)
                    .Add("duplicants", on.TryGetValue(sch, out names) ? names : new List<object>()));
            }
        }

        // The game's daily reports (ReportManager.reports, the end-of-day screen), the last ReportsKept
        // cycles and the one in progress: each entry's accPositive (made) and -accNegative (used),
        // read from reportEntries without GetEntry (which adds a missing entry). Oxygen in kg,
        // CaloriesCreated in calories (1000 to the kcal), EnergyCreated in J.
        private const int ReportsKept = 10;

        private static void ReadReports(Snapshot s)
        {
            var all = ReportManager.Instance.reports;
            for (int i = Math.Max(0, all.Count - ReportsKept); i < all.Count; i++)
            {
                var r = all[i];
                s.Reports.Add(new JsonObject().Add("cycle", (long)r.day).Add("current", r == ReportManager.Instance.TodaysReport)
                    .Add("oxygenKg", Entry(r, ReportManager.ReportType.OxygenCreated, 1.0))
                    .Add("kcal", Entry(r, ReportManager.ReportType.CaloriesCreated, 1000.0))
                    .Add("energyJ", Entry(r, ReportManager.ReportType.EnergyCreated, 1.0)));
            }
        }

        private static JsonObject Entry(ReportManager.DailyReport r, ReportManager.ReportType type, double per)
        {
            double made = 0, used = 0;
            foreach (var e in r.reportEntries)
                if (e.reportType == type) { made += e.accPositive / per; used -= e.accNegative / per; }
            return new JsonObject().Add("produced", made).Add("consumed", used);
        }

        private static void ReadMap(Snapshot s, WorldContainer world)
        {
            var rows = new string[world.WorldSize.y];
            var row = new char[world.WorldSize.x];
            for (int y = 0; y < world.WorldSize.y; y++)
            {
                for (int x = 0; x < world.WorldSize.x; x++)
                {
                    var e = Grid.Element[WorldCell(world, x, y)];
                    row[x] = e.IsSolid ? (e.hardness >= 255 ? 'N' : '#') : e.IsLiquid ? '~' : '.';
                }
                rows[y] = new string(row);
            }
            s.Rows = rows;   // published whole or not at all
        }
    }
}
