// The ports between the core and the game. The game glue (oni-mod/glue, compiled only against the
// game's assemblies) implements them; the test host (oni-mod/host) implements them with a fake colony.
using System.Collections.Generic;

namespace OniAgentMod.Core
{
    /// <summary>An immutable picture of the game, captured on the game thread and published whole;
    /// the HTTP thread only reads the latest one (no locks, no game calls off the game thread).</summary>
    public sealed class Snapshot
    {
        public JsonObject Game = new JsonObject();   // cycle, duplicantCount, worldName, worldSize, ...
        public List<JsonObject> Resources = new List<JsonObject>();
        public List<JsonObject> Duplicants = new List<JsonObject>();
        public List<JsonObject> Buildings = new List<JsonObject>();
        public JsonObject Research = new JsonObject().Add("current", null).Add("progress", 0.0)
            .Add("completed", new List<object>()).Add("available", new List<object>());
        public List<JsonObject> Geysers = new List<JsonObject>();
        public List<JsonObject> Alerts = new List<JsonObject>();
        public List<JsonObject> Critters = new List<JsonObject>();
        /// <summary>The game's buildings: id, name, size, materials, tech, researched, available, ports.</summary>
        public List<JsonObject> Catalog = new List<JsonObject>();
        /// <summary>The schedules: name, 24 blocks, the duplicants assigned.</summary>
        public List<JsonObject> Schedules = new List<JsonObject>();
        /// <summary>The game's daily reports, oldest first: cycle, oxygen, kcal, energy made and used.</summary>
        public List<JsonObject> Reports = new List<JsonObject>();
        public int WorldWidth;
        public int WorldHeight;
        /// <summary>rows[y] is the full row y of the map, one of '#', 'N', '~', '.' per cell.</summary>
        public string[] Rows = new string[0];
        public HashSet<string> DuplicantNames = new HashSet<string>();
        /// <summary>Every building id and tech id the game knows (unknown_building / unknown_tech).</summary>
        public HashSet<string> BuildingIds = new HashSet<string>();
        public HashSet<string> TechIds = new HashSet<string>();
        /// <summary>The sections the game could not be read for this time (each left empty).</summary>
        public List<string> Unavailable = new List<string>();
        /// <summary>The world this picture is of (WorldContainer.id; 0 in the base game). The published
        /// snapshot is the active world's; Worlds holds every world's own (game, resources, duplicants,
        /// buildings, geysers, critters, map, size) by id, the active one included. Research, alerts,
        /// catalog, schedules, reports and the id sets are the colony's: read from the published one.</summary>
        public int WorldId;
        public Dictionary<int, Snapshot> Worlds = new Dictionary<int, Snapshot>();
    }

    /// <summary>Reads the game. Called on the game thread only (from ModCore.Tick).</summary>
    public interface IGameState
    {
        /// <summary>The current picture, or null when no colony is loaded.</summary>
        Snapshot Capture();
    }

    /// <summary>Changes the game. Called on the game thread only (ModCore.Tick drains the queue).
    /// Each returns null when the game took the order (a dig or build designated, a priority set, a
    /// research selected: duplicants may still have work to do), else why the game refused it
    /// ("reason: details", e.g. "not_researched: FarmingTech"), published in /api/state/actions.</summary>
    public interface IGameActions
    {
        // Cells are the world's own (x, y from the bottom-left cell of world `world`, WorldContainer.WorldOffset).
        string Dig(int world, int x, int y, int width, int height, int priority);
        /// <summary>orientation: the game's Orientation name (Neutral, R90, R180, R270, FlipH, FlipV); x, y is
        /// the bottom-left cell of the turned footprint.</summary>
        string Build(int world, string buildingId, int x, int y, string orientation, int priority);
        string Deconstruct(int world, int x, int y, int width, int height, int priority);
        /// <summary>Cancels every order in the area (digs, constructions, deconstructions).</summary>
        string Cancel(int world, int x, int y, int width, int height);
        string Prioritize(int world, int x, int y, int width, int height, int priority);
        /// <summary>Orders a seed planted in the plot (planter box, farm tile) at the cell.</summary>
        string Plant(int world, int x, int y, string seed, int priority);
        /// <summary>Mop orders on the area's mop-able liquid cells.</summary>
        string Mop(int world, int x, int y, int width, int height, int priority);
        /// <summary>Sweep orders on the items lying in the area.</summary>
        string Sweep(int world, int x, int y, int width, int height, int priority);
        /// <summary>Harvest-when-ready on the plants in the area.</summary>
        string Harvest(int world, int x, int y, int width, int height, int priority);
        string Research(string techId);
        /// <summary>Blocks (24 of work/sleep/downtime/bathtime) for the named schedule (added when new)
        /// or, with a duplicant, for the schedule it is assigned to (shared by every duplicant on it);
        /// without blocks, the duplicant is assigned to the named schedule.</summary>
        string Schedule(string duplicant, string schedule, string[] blocks);
        /// <summary>A utility ("wire", "gas", "liquid", "logic") along consecutive neighbouring cells.</summary>
        string Utility(int world, string kind, int[] xs, int[] ys, int priority);
        /// <summary>Pause or resume (null: leave as it is) and the speed 1..3 (null: leave).</summary>
        string Speed(bool? paused, int? speed);
    }

    public interface IModLog
    {
        void Info(string message);
        void Error(string message);
    }
}
