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
            var world = ClusterManager.Instance.activeWorld;
            if (world == null) return null;
            lastCapture = Time.unscaledTime;
            var s = new Snapshot { WorldWidth = Grid.WidthInCells, WorldHeight = Grid.HeightInCells };
            Section(s, "ids", () => ReadIds(s));
            Section(s, "catalog", () => ReadCatalog(s));
            Section(s, "game", () => ReadGame(s, world));
            Section(s, "oxygen", () => ReadOxygen(s, world));
            Section(s, "food", () => ReadFood(s, world));
            Section(s, "power", () => ReadPower(s, world));
            Section(s, "temperature", () => ReadTemperature(s, world));
            Section(s, "resources", () => ReadResources(s, world));
            Section(s, "duplicants", () => ReadDuplicants(s));
            Section(s, "buildings", () => ReadBuildings(s));
            Section(s, "research", () => ReadResearch(s));
            Section(s, "geysers", () => ReadGeysers(s, world));
            Section(s, "alert", () => ReadAlerts(s));
            Section(s, "critters", () => ReadCritters(s));
            Section(s, "map", () => ReadMap(s));
            Section(s, "schedules", () => ReadSchedules(s));
            Section(s, "reports", () => ReadReports(s));
            if (s.Unavailable.Count > 0) s.Game.Add("unavailable", new List<object>(s.Unavailable));
            last = s;
            return s;
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
                case "duplicants": s.Duplicants.Clear(); s.DuplicantNames.Clear(); break;
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
                        .Add("ports", ports);
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

        private static void ReadGame(Snapshot s, WorldContainer world)
        {
            s.Game.Add("cycle", (long)GameClock.Instance.GetCycle())
                .Add("duplicantCount", (long)Components.LiveMinionIdentities.Count)
                .Add("worldName", world.GetProperName())
                .Add("worldId", (long)world.id)
                .Add("worldSize", (long)Grid.WidthInCells)
                .Add("worldWidth", (long)Grid.WidthInCells)
                .Add("worldHeight", (long)Grid.HeightInCells)
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
            int n = Grid.WidthInCells * Grid.HeightInCells;
            for (int cell = 0; cell < n; cell++)
            {
                if (Grid.WorldIdx[cell] != world.id) continue;
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

        // The active world's generators (WattageRating while IsProducingPower), consumers (WattsUsed:
        // their rating while active) and batteries (JoulesAvailable of Capacity). Colony-wide per
        // world, not per circuit: a generator on another circuit counts too.
        private static void ReadPower(Snapshot s, WorldContainer world)
        {
            double produced = 0, consumed = 0, stored = 0, capacity = 0;
            foreach (Generator g in Components.Generators.Items)
                if (g.GetMyWorldId() == world.id && g.IsProducingPower()) produced += g.WattageRating;
            foreach (EnergyConsumer c in Components.EnergyConsumers.Items)
                if (c.GetMyWorldId() == world.id) consumed += c.WattsUsed;
            foreach (Battery b in Components.Batteries.Items)
                if (b.GetMyWorldId() == world.id) { stored += b.JoulesAvailable; capacity += b.Capacity; }
            s.Game.Add("power", new JsonObject().Add("produced", produced).Add("consumed", consumed)
                .Add("stored", stored).Add("capacity", capacity));
        }

        // The temperature where the duplicants of the active world are (Grid.Temperature is Kelvin):
        // the rooms they live and work in, not the whole map.
        private static void ReadTemperature(Snapshot s, WorldContainer world)
        {
            double sum = 0, max = double.MinValue;
            int n = 0;
            foreach (MinionIdentity m in Components.LiveMinionIdentities.Items)
            {
                if (m.GetMyWorldId() != world.id) continue;
                double c = Grid.Temperature[Grid.PosToCell(m)] - 273.15;
                sum += c;
                max = Math.Max(max, c);
                n++;
            }
            if (n > 0)
                s.Game.Add("temperature", new JsonObject().Add("average", Math.Round(sum / n, 2)).Add("max", Math.Round(max, 2)));
        }

        // The world inventory: pickupable items the colony can reach (WorldInventory.GetAccessibleAmounts,
        // Tag -> kg). It is not the air or pooled liquids, and food is in kg of items, not kcal.
        private static void ReadResources(Snapshot s, WorldContainer world)
        {
            foreach (var kv in world.worldInventory.GetAccessibleAmounts())
                s.Resources.Add(new JsonObject().Add("name", kv.Key.ProperName()).Add("tag", kv.Key.Name)
                    .Add("amount", (double)kv.Value).Add("unit", "kg"));
        }

        private static void ReadDuplicants(Snapshot s)
        {
            foreach (MinionIdentity m in Components.LiveMinionIdentities.Items)
            {
                var amounts = m.GetAmounts();
                s.DuplicantNames.Add(m.GetProperName());
                s.Duplicants.Add(new JsonObject().Add("name", m.GetProperName())
                    .Add("stress", (double)amounts.GetValue("Stress"))
                    .Add("calories", (double)amounts.GetValue("Calories"))
                    .Add("stamina", (double)amounts.GetValue("Stamina"))
                    .Add("oxygen", (double)amounts.GetValue("Breath"))
                    .Add("diseases", (long)m.GetSicknesses().Count)
                    .Add("skillLevels", (long)m.GetComponent<MinionResume>().TotalSkillPointsGained));
            }
        }

        private static void ReadBuildings(Snapshot s)
        {
            foreach (BuildingComplete b in Components.BuildingCompletes.Items)
            {
                int bx, by;
                Grid.CellToXY(Grid.PosToCell(b), out bx, out by);
                var op = b.GetComponent<Operational>();
                s.Buildings.Add(new JsonObject().Add("name", b.Def.Name).Add("id", b.Def.PrefabID)
                    .Add("x", (long)(bx - (b.Def.WidthInCells - 1) / 2)).Add("y", (long)by).Add("isOperational", op == null || op.IsOperational)
                    .Add("width", (long)b.Def.WidthInCells).Add("height", (long)b.Def.HeightInCells)
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
                Grid.CellToXY(Grid.PosToCell(g), out gx, out gy);
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
        private static void ReadCritters(Snapshot s)
        {
            foreach (Brain brain in Components.Brains.Items)
            {
                var c = brain as CreatureBrain;
                if (c == null) continue;
                int cx, cy;
                Grid.CellToXY(Grid.PosToCell(c), out cx, out cy);
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

        private static void ReadMap(Snapshot s)
        {
            var rows = new string[Grid.HeightInCells];
            var row = new char[Grid.WidthInCells];
            for (int y = 0; y < Grid.HeightInCells; y++)
            {
                for (int x = 0; x < Grid.WidthInCells; x++)
                {
                    var e = Grid.Element[Grid.XYToCell(x, y)];
                    row[x] = e.IsSolid ? (e.hardness >= 255 ? 'N' : '#') : e.IsLiquid ? '~' : '.';
                }
                rows[y] = new string(row);
            }
            s.Rows = rows;   // published whole or not at all
        }
    }
}
