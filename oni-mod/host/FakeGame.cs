// A deterministic fake colony behind the core's ports, for the test host only (never shipped).
// It checks that every action arrives on the game thread (a wrong thread becomes an alert).
using System;
using System.Collections.Generic;
using System.Threading;
using OniAgentMod.Core;

namespace OniAgentMod.Host
{
    public sealed class FakeGame : IGameState, IGameActions
    {
        public const int Width = 64, Height = 48;
        // a second world (Spaced Out: a rocket interior), its cells its own from its bottom-left
        public const int Width1 = 16, Height1 = 12;
        private static readonly Dictionary<string, int[]> Sizes = new Dictionary<string, int[]>
        {
            { "Headquarters", new[] { 4, 4 } }, { "Tile", new[] { 1, 1 } }, { "Ladder", new[] { 1, 1 } },
            { "ManualGenerator", new[] { 2, 2 } }, { "Battery", new[] { 1, 2 } }, { "Electrolyzer", new[] { 2, 2 } },
            { "MineralDeoxidizer", new[] { 1, 2 } }, { "Bed", new[] { 2, 2 } }, { "ResearchCenter", new[] { 2, 2 } },
            { "Outhouse", new[] { 2, 3 } }, { "MicrobeMusher", new[] { 2, 3 } }, { "GasPump", new[] { 2, 2 } },
            { "Door", new[] { 1, 2 } }, { "FlushToilet", new[] { 2, 3 } }, { "PlanterBox", new[] { 1, 1 } },
        };
        private static readonly Dictionary<string, string> Rotations = new Dictionary<string, string>
        {
            { "Door", "R90" }, { "FlushToilet", "FlipH" },
        };
        private static readonly string[] Techs = { "FarmingTech", "PowerRegulation", "Combustion", "ImprovedOxygen", "GasPiping" };

        private readonly char[][] cells = new char[Height][];
        private readonly char[][] cells1 = new char[Height1][];
        private readonly List<JsonObject> buildings1 = new List<JsonObject>();
        private readonly List<JsonObject> buildings = new List<JsonObject>();
        private readonly List<JsonObject> alerts = new List<JsonObject>();
        private readonly List<string> completed = new List<string>();
        private string currentTech;
        private bool paused;
        private long speed = 1;
        private long ticks;
        public Thread GameThread;

        public FakeGame()
        {
            for (int y = 0; y < Height; y++)
            {
                cells[y] = new char[Width];
                for (int x = 0; x < Width; x++)
                    cells[y][x] = (x == 0 || y == 0 || x == Width - 1 || y == Height - 1) ? 'N' : (y < 24 ? '#' : '.');
            }
            buildings.Add(Building("Headquarters", 30, 24, true));
            for (int y = 0; y < Height1; y++)
            {
                cells1[y] = new char[Width1];
                for (int x = 0; x < Width1; x++) cells1[y][x] = (x == 0 || y == 0 || x == Width1 - 1 || y == Height1 - 1) ? 'N' : '.';
            }
        }

        private char[][] Cells(int world) { return world == 1 ? cells1 : cells; }

        private static JsonObject Building(string id, int x, int y, bool operational)
        {
            return new JsonObject().Add("name", id).Add("id", id).Add("x", (long)x).Add("y", (long)y)
                .Add("isOperational", operational).Add("width", (long)Sizes[id][0]).Add("height", (long)Sizes[id][1])
                .Add("underConstruction", false);
        }

        private void OnGameThread(string what)
        {
            if (Thread.CurrentThread != GameThread)
                alerts.Add(new JsonObject().Add("type", "wrong_thread").Add("message", what + " ran off the game thread").Add("severity", "bad"));
        }

        public Snapshot Capture()
        {
            OnGameThread("capture");
            ticks++;
            var s = new Snapshot { WorldWidth = Width, WorldHeight = Height };
            s.BuildingIds.UnionWith(Sizes.Keys);
            foreach (var kv in Sizes)
                {
                string rot;
                if (!Rotations.TryGetValue(kv.Key, out rot)) rot = "Unrotatable";
                s.Catalog.Add(new JsonObject().Add("id", kv.Key).Add("name", kv.Key).Add("width", (long)kv.Value[0])
                    .Add("height", (long)kv.Value[1]).Add("materials", new List<object>()).Add("tech", null)
                    .Add("available", true).Add("powerW", 0.0).Add("ports", new JsonObject()).Add("rotations", rot).Add("researched", true));
            }
            s.TechIds.UnionWith(Techs);
            s.Game = new JsonObject().Add("cycle", ticks / 600).Add("duplicantCount", 2L).Add("worldName", "FakeAsteroid")
                .Add("worldSize", (long)Width).Add("worldWidth", (long)Width).Add("worldHeight", (long)Height).Add("paused", paused).Add("speed", speed)
                .Add("worldId", 0L).Add("worlds", Worlds())
                .Add("power", new JsonObject().Add("produced", 400.0).Add("consumed", 120.0).Add("stored", 0.0).Add("capacity", 0.0)
                    .Add("circuits", new List<object> { new JsonObject().Add("id", 0L).Add("generatedW", 400.0).Add("usedW", 120.0)
                        .Add("neededW", 120.0).Add("storedJ", 0.0).Add("capacityJ", 0.0).Add("maxSafeW", 1000.0)
                        .Add("generators", 1L).Add("consumers", 1L).Add("batteries", 0L).Add("unpowered", 0L) })
                    .Add("unconnected", new JsonObject().Add("generators", 0L).Add("consumers", 0L).Add("batteries", 0L)))
                .Add("temperature", new JsonObject().Add("average", 24.5).Add("max", 27.0)
                    .Add("rooms", new List<object> { new JsonObject().Add("room", "Neutral").Add("x", 24L).Add("y", 24L).Add("width", 16L)
                        .Add("height", 6L).Add("cells", 96L).Add("temperature", 24.5).Add("duplicants", 2L) }));
            string[] tags = { "Algae", "Carbon", "Dirt", "Food", "Oxygen", "SandStone", "Water" };
            double[] amounts = { 400, 300, 500, 3000, 60, 1000, 2000 };
            for (int i = 0; i < tags.Length; i++)
                s.Resources.Add(new JsonObject().Add("name", tags[i]).Add("tag", tags[i]).Add("amount", amounts[i]).Add("unit", tags[i] == "Food" ? "kcal" : "kg"));
            foreach (var name in new[] { "Ada", "Bram" })
            {
                s.DuplicantNames.Add(name);
                s.Duplicants.Add(new JsonObject().Add("name", name).Add("stress", 5.0).Add("calories", 900000.0).Add("stamina", 98.0)
                    .Add("oxygen", 100.0).Add("diseases", 0L).Add("skillLevels", 1L));
            }
            s.Buildings.AddRange(buildings);
            s.Reports.Add(new JsonObject().Add("cycle", 0L).Add("current", true)
                .Add("oxygenKg", new JsonObject().Add("produced", 0.0).Add("consumed", 0.0))
                .Add("kcal", new JsonObject().Add("produced", 0.0).Add("consumed", 0.0))
                .Add("energyJ", new JsonObject().Add("produced", 0.0).Add("consumed", 0.0)));
            foreach (var kv in schedules)
            {
                var who = new List<object>();
                foreach (var a in assigned) if (a.Value == kv.Key) who.Add(a.Key);
                s.Schedules.Add(new JsonObject().Add("name", kv.Key).Add("blocks", new List<object>(kv.Value)).Add("duplicants", who));
            }
            var available = new List<object>();
            foreach (var t in Techs) if (!completed.Contains(t)) available.Add(t);
            s.Research = new JsonObject().Add("current", currentTech).Add("progress", 0.0).Add("completed", new List<object>(completed.ToArray())).Add("available", available);
            s.Geysers.Add(new JsonObject().Add("id", "geyser-1").Add("name", "Cool Steam Vent").Add("x", 8L).Add("y", 8L)
                .Add("state", "idle").Add("element", "Steam").Add("emitRate", 0.0));
            s.Alerts.AddRange(alerts);
            s.Critters.Add(new JsonObject().Add("name", "Hatch").Add("species", "Hatch").Add("x", 40L).Add("y", 24L).Add("isWild", true));
            s.Rows = new string[Height];
            for (int y = 0; y < Height; y++) s.Rows[y] = new string(cells[y]);
            // world 1: its own size, map and buildings; nobody lives there
            var w1 = new Snapshot { WorldWidth = Width1, WorldHeight = Height1, WorldId = 1 };
            w1.Game = new JsonObject().Add("cycle", ticks / 600).Add("duplicantCount", 0L).Add("worldName", "FakeRocket")
                .Add("worldSize", (long)Width1).Add("worldWidth", (long)Width1).Add("worldHeight", (long)Height1).Add("paused", paused)
                .Add("speed", speed).Add("worldId", 1L).Add("worlds", Worlds());
            w1.Buildings.AddRange(buildings1);
            w1.Rows = new string[Height1];
            for (int y = 0; y < Height1; y++) w1.Rows[y] = new string(cells1[y]);
            s.Worlds[0] = s;
            s.Worlds[1] = w1;
            return s;
        }

        private static List<object> Worlds()
        {
            return new List<object>
            {
                new JsonObject().Add("id", 0L).Add("name", "FakeAsteroid").Add("width", (long)Width).Add("height", (long)Height).Add("active", true),
                new JsonObject().Add("id", 1L).Add("name", "FakeRocket").Add("width", (long)Width1).Add("height", (long)Height1).Add("active", false),
            };
        }

        public string Dig(int world, int x, int y, int width, int height, int priority)
        {
            OnGameThread("dig");
            var c = Cells(world);
            for (int yy = y; yy < y + height; yy++)
                for (int xx = x; xx < x + width; xx++)
                    if (c[yy][xx] == '#') c[yy][xx] = '.';
            return null;
        }

        public string Build(int world, string buildingId, int x, int y, string orientation, int priority)
        {
            OnGameThread("build");
            int[] size = Sizes[buildingId];
            bool turned = orientation == "R90" || orientation == "R270";
            int w = turned ? size[1] : size[0], h = turned ? size[0] : size[1];
            var c = Cells(world);
            for (int yy = y; yy < y + h; yy++)
                for (int xx = x; xx < x + w; xx++)
                    if (xx >= c[0].Length || yy >= c.Length || c[yy][xx] != '.')
                        return "invalid_location: cell (" + xx + "," + yy + ") is not open";
            (world == 1 ? buildings1 : buildings).Add(Building(buildingId, x, y, true));
            return null;
        }

        public string Plant(int world, int x, int y, string seed, int priority) { OnGameThread("plant"); return "nothing_there: no plot at the cell"; }
        public string Mop(int world, int x, int y, int width, int height, int priority) { OnGameThread("mop"); return "nothing_there: no liquid to mop in the area"; }
        public string Sweep(int world, int x, int y, int width, int height, int priority) { OnGameThread("sweep"); return "nothing_there: no debris to sweep in the area"; }
        public string Harvest(int world, int x, int y, int width, int height, int priority) { OnGameThread("harvest"); return "nothing_there: no plant in the area"; }

        public string Deconstruct(int world, int x, int y, int width, int height, int priority)
        {
            OnGameThread("deconstruct");
            buildings.RemoveAll(b =>
            {
                object bx, by, id;
                b.TryGet("x", out bx); b.TryGet("y", out by); b.TryGet("id", out id);
                return (string)id != "Headquarters" && (long)bx >= x && (long)bx < x + width && (long)by >= y && (long)by < y + height;
            });
            return null;
        }

        public string Cancel(int world, int x, int y, int width, int height) { OnGameThread("cancel"); return null; }

        public string Prioritize(int world, int x, int y, int width, int height, int priority) { OnGameThread("prioritize"); return null; }

        public string Research(string techId)
        {
            OnGameThread("research");
            currentTech = techId;
            return null;
        }

        private readonly Dictionary<string, string[]> schedules = new Dictionary<string, string[]>
        {
            { "Default Standard Schedule", DefaultBlocks() },
        };
        private readonly Dictionary<string, string> assigned = new Dictionary<string, string>
        {
            { "Ada", "Default Standard Schedule" }, { "Bram", "Default Standard Schedule" },
        };

        private static string[] DefaultBlocks()
        {
            var b = new string[24];
            for (int i = 0; i < 24; i++) b[i] = i < 21 ? "work" : "sleep";
            return b;
        }

        public string Schedule(string duplicant, string schedule, string[] blocks)
        {
            OnGameThread("schedule");
            if (blocks != null)
            {
                schedules[schedule ?? assigned[duplicant]] = blocks;
                return null;
            }
            if (!schedules.ContainsKey(schedule)) return "unknown_schedule: no schedule named " + schedule;
            assigned[duplicant] = schedule;
            return null;
        }

        public string Speed(bool? paused, int? speed)
        {
            OnGameThread("speed");
            if (paused.HasValue) this.paused = paused.Value;
            if (speed.HasValue) this.speed = speed.Value;
            return null;
        }

        public string Utility(int world, string kind, int[] xs, int[] ys, int priority)
        {
            OnGameThread("utility");
            var c = Cells(world);
            for (int i = 0; i < xs.Length; i++)
                if (c[ys[i]][xs[i]] != '.') return "invalid_location: cell (" + xs[i] + "," + ys[i] + ") is solid";
            return null;
        }
    }
}
