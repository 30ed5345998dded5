// Compiled in CI against oni-mod/stubs/ (the game's signatures, each with where it was seen).
// Applies queued actions on the game thread (ModCore.Tick from the Game.Update patch); converts cell
// coordinates and ids, calls the game. Each returns null when the game took the order, else why not
// ("reason: details"); ModCore publishes it in /api/state/actions.
using System.Collections.Generic;
using OniAgentMod.Core;
using UnityEngine;

namespace OniAgentMod.Glue
{
    public sealed class GameActions : IGameActions
    {
        // Every order carries a priority, as the game's tools give theirs (the priority screen's choice):
        // the placed errand's Prioritizable.SetMasterPriority(PrioritySetting(basic, 1..9)).
        private static void Prioritize(GameObject go, int priority)
        {
            var p = go != null ? go.GetComponent<Prioritizable>() : null;
            if (p != null) p.SetMasterPriority(new PrioritySetting(PriorityScreen.PriorityClass.basic, priority));
        }

        /// <summary>The world of an order (ClusterManager.GetWorld(id)), null when there is none now.</summary>
        private static WorldContainer World(int id) { return ClusterManager.Instance.GetWorld(id); }

        private const string NoWorld = "unknown_world: the world is gone (a rocket interior taken apart?)";

        public string Dig(int world, int x, int y, int width, int height, int priority)
        {
            var w = World(world);
            if (w == null) return NoWorld;
            int placed = 0;
            foreach (int cell in ValidCells(w, x, y, width, height))
            {
                if (!Grid.Solid[cell]) continue;
                var go = DigTool.PlaceDig(cell, 0);
                if (go == null) continue;
                Prioritize(go, priority);
                placed++;
            }
            return placed > 0 || !AnySolid(w, x, y, width, height) ? null : "invalid_location: the game placed no dig order in the area";
        }

        private static bool AnySolid(WorldContainer w, int x, int y, int width, int height)
        {
            foreach (int cell in ValidCells(w, x, y, width, height))
            {
                if (Grid.Solid[cell]) return true;
            }
            return false;
        }

        // The checks of the game's build menu before a placement (PlanScreen.GetBuildableStateForDef):
        // BuildingDef.IsAvailable() (not deprecated, not debug-only), then researched
        // (Db.Get().TechItems.IsTechItemComplete(PrefabID), skipped in sandbox mode), then materials;
        // then the tool's own placement check (BuildingDef.IsValidPlaceLocation).
        // Orientation names as the core sends them -> the game's Orientation; PermittedRotations -> the
        // orientations the build tool turns through (Rotatable.Rotate)
        private static Orientation ToOrientation(string o)
        {
            return o == "R90" ? Orientation.R90 : o == "R180" ? Orientation.R180 : o == "R270" ? Orientation.R270
                : o == "FlipH" ? Orientation.FlipH : o == "FlipV" ? Orientation.FlipV : Orientation.Neutral;
        }

        private static bool Permitted(PermittedRotations p, Orientation o)
        {
            if (o == Orientation.Neutral) return true;
            switch (p)
            {
                case PermittedRotations.R90: return o == Orientation.R90;
                case PermittedRotations.R360: return o == Orientation.R90 || o == Orientation.R180 || o == Orientation.R270;
                case PermittedRotations.FlipH: return o == Orientation.FlipH;
                case PermittedRotations.FlipV: return o == Orientation.FlipV;
                default: return false;
            }
        }

        public string Build(int world, string buildingId, int x, int y, string orientationName, int priority)
        {
            var w = World(world);
            if (w == null) return NoWorld;
            var def = Assets.GetBuildingDef(buildingId);
            if (def == null) return "unknown_building: " + buildingId;
            if (!def.IsAvailable()) return "unavailable: " + buildingId + " is deprecated or debug-only in this game";
            if (!Game.Instance.SandboxModeActive && !Db.Get().TechItems.IsTechItemComplete(def.PrefabID))
                return "not_researched: research the tech that unlocks " + buildingId + " first";
            var orientation = ToOrientation(orientationName);
            if (!Permitted(def.PermittedRotations, orientation))
                return "invalid_rotation: " + buildingId + " allows " + def.PermittedRotations + ", not " + orientationName;
            // the API names the bottom-left cell of the turned footprint; the game places the anchor cell,
            // from which PlacementOffsets turned by the orientation lay the cells (BuildingDef.MarkArea)
            int dx, dy;
            GameStateReader.BottomLeft(def, orientation, out dx, out dy);
            var pos = Grid.CellToPosCBC(GameStateReader.WorldCell(w, x - dx, y - dy), def.SceneLayer);
            var elements = Materials(def);
            if (elements == null) return "no_materials: the colony holds none of one of " + buildingId + "'s ingredients";
            string reason;
            if (!def.IsValidPlaceLocation(null, pos, orientation, out reason)) return "invalid_location: " + reason;
            var placedGo = def.TryPlace(null, pos, orientation, elements, "DEFAULT_FACADE", 0);
            if (placedGo == null) return "invalid_location: the game did not place " + buildingId;
            Prioritize(placedGo, priority);
            return null;
        }

        /// <summary>For each ingredient (a material category such as BuildableRaw), the element with
        /// that tag the colony holds most of; null when one has none.</summary>
        private static List<Tag> Materials(BuildingDef def)
        {
            var stock = ClusterManager.Instance.activeWorld.worldInventory;
            var chosen = new List<Tag>();
            foreach (var ingredient in def.CraftRecipe.Ingredients)
            {
                Tag best = Tag.Invalid;
                float most = 0f;
                foreach (var element in ElementLoader.elements)
                {
                    if (!element.HasTag(ingredient.tag) && element.tag != ingredient.tag) continue;
                    float amount = stock.GetAmount(element.tag, false);
                    if (amount > most) { most = amount; best = element.tag; }
                }
                if (!best.IsValid) return null;
                chosen.Add(best);
            }
            return chosen;
        }

        public string Deconstruct(int world, int x, int y, int width, int height, int priority)
        {
            var w = World(world);
            if (w == null) return NoWorld;
            int n = 0;
            foreach (var d in Objects<Deconstructable>(w, x, y, width, height))
            {
                d.QueueDeconstruction(true);
                Prioritize(d.gameObject, priority);
                n++;
            }
            return n > 0 ? null : "nothing_there: no building to deconstruct in the area";
        }

        // As the game's CancelTool.OnDragTool: every object on every object layer of each cell gets the
        // Cancel event (GameHashes.Cancel = 2127324410; the tool loops layers 0..44, ObjectLayer's count):
        // digs, constructions and deconstruction orders each cancel themselves.
        private const int CancelHash = 2127324410;
        private const int ObjectLayers = 45;

        public string Cancel(int world, int x, int y, int width, int height)
        {
            var w = World(world);
            if (w == null) return NoWorld;
            int n = 0;
            foreach (int cell in ValidCells(w, x, y, width, height))
            {
                for (int layer = 0; layer < ObjectLayers; layer++)
                {
                    var go = Grid.Objects[cell, layer];
                    if (go == null) continue;
                    go.Trigger(CancelHash, null);
                    n++;
                }
            }
            return n > 0 ? null : "nothing_there: no order or building in the area";
        }

        public string Prioritize(int world, int x, int y, int width, int height, int priority)
        {
            var w = World(world);
            if (w == null) return NoWorld;
            var setting = new PrioritySetting(PriorityScreen.PriorityClass.basic, priority);
            int n = 0;
            foreach (var p in Objects<Prioritizable>(w, x, y, width, height)) { p.SetMasterPriority(setting); n++; }
            return n > 0 ? null : "nothing_there: nothing with a priority in the area";
        }

        // Research.SetActiveResearch queues the tech's missing prerequisites first (AddTechToQueue),
        // so a tech whose prerequisites are not done is taken, not refused.
        public string Research(string techId)
        {
            var tech = Db.Get().Techs.Get(techId);
            if (tech.IsComplete()) return "already_researched: " + techId;
            global::Research.Instance.SetActiveResearch(tech, true);
            return null;
        }

        // Schedules are the game's ScheduleManager schedules, shared by the duplicants assigned to them:
        // GetSchedule(Schedulable) is the one a duplicant is on (its blocks change for everyone on it),
        // GetSchedules() all of them by name, AddSchedule(groups, name) a new one; assigning moves the
        // duplicant (Unassign from its schedule, Assign to the other: what the schedule screen does).
        public string Schedule(string duplicant, string schedule, string[] blocks)
        {
            var mgr = ScheduleManager.Instance;
            Schedulable who = null;
            if (duplicant != null)
            {
                foreach (MinionIdentity m in Components.LiveMinionIdentities.Items)
                    if (m.GetProperName() == duplicant) who = m.GetComponent<Schedulable>();
                if (who == null) return "unknown_duplicant: " + duplicant + " is no longer in the colony";
            }
            Schedule target = null;
            if (schedule != null)
                foreach (var candidate in mgr.GetSchedules())
                    if (candidate.name == schedule) target = candidate;
            if (blocks != null)
            {
                var groups = Db.Get().ScheduleGroups;
                var wanted = new List<ScheduleGroup>();
                foreach (var block in blocks)
                    wanted.Add(block == "sleep" ? groups.Sleep : block == "downtime" ? groups.Recreation
                        : block == "bathtime" ? groups.Hygene : groups.Worktime);
                if (schedule != null && target == null)
                {
                    mgr.AddSchedule(wanted, schedule, false);
                    return null;
                }
                if (target == null) target = mgr.GetSchedule(who);
                if (target == null) return "no_schedule: " + duplicant + " is on none";
                for (int i = 0; i < 24; i++) target.SetBlockGroup(i, wanted[i]);
                return null;
            }
            if (target == null) return "unknown_schedule: no schedule named " + schedule;
            var current = mgr.GetSchedule(who);
            if (current != null) current.Unassign(who);
            target.Assign(who);
            return null;
        }

        // As the game's utility tools do (WireBuildTool / UtilityBuildTool.ApplyPathToConduitSystem and
        // BaseUtilityBuildTool.BuildPath): the network manager of the utility's building gets a
        // connection both ways between each pair of consecutive cells (UtilityConnectionsExtensions.
        // DirectionFromToCell, InverseDirection; the build menu picks WireBuildTool for a building with a
        // Wire component, else UtilityBuildTool, which first asks CanAddConnection), then each
        // cell without the utility on its tile layer gets a placed building (TryPlace, unrotated).
        public string Utility(int world, string kind, int[] xs, int[] ys, int priority)
        {
            var w = World(world);
            if (w == null) return NoWorld;
            string id = kind == "wire" ? "Wire" : kind == "gas" ? "GasConduit" : kind == "liquid" ? "LiquidConduit" : "LogicWire";
            var def = Assets.GetBuildingDef(id);
            if (def == null) return "unknown_building: " + id;
            if (!Game.Instance.SandboxModeActive && !Db.Get().TechItems.IsTechItemComplete(id))
                return "not_researched: research the tech that unlocks " + id + " first";
            var elements = Materials(def);
            if (elements == null) return "no_materials: the colony holds none of one of " + id + "'s ingredients";
            var mgr = def.BuildingComplete.GetComponent<IHaveUtilityNetworkMgr>().GetNetworkManager();
            var cells = new int[xs.Length];
            for (int i = 0; i < xs.Length; i++) cells[i] = GameStateReader.WorldCell(w, xs[i], ys[i]);
            for (int i = 1; i < cells.Length; i++)
            {
                var dir = UtilityConnectionsExtensions.DirectionFromToCell(cells[i - 1], cells[i]);
                string why;
                if (kind != "wire"
                    && !(mgr.CanAddConnection(dir, cells[i - 1], false, out why) && mgr.CanAddConnection(dir.InverseDirection(), cells[i], false, out why)))
                    return "invalid_location: " + why;
                mgr.AddConnection(dir, cells[i - 1], false);
                mgr.AddConnection(dir.InverseDirection(), cells[i], false);
            }
            int placed = 0, failed = 0;
            foreach (int cell in cells)
            {
                if (Grid.Objects[cell, (int)def.TileLayer] != null) continue;   // already there: connections only
                var pos = Grid.CellToPosCBC(cell, def.SceneLayer);
                string reason;
                GameObject go = null;
                if (def.IsValidPlaceLocation(null, pos, Orientation.Neutral, out reason))
                    go = def.TryPlace(null, pos, Orientation.Neutral, elements, "DEFAULT_FACADE", 0);
                if (go == null) { failed++; continue; }
                Prioritize(go, priority);
                placed++;
            }
            return failed == 0 ? null : "invalid_location: " + failed + " of " + cells.Length + " cells could not take the " + kind;
        }

        // SpeedControlScreen (the game's clock controls): Pause/Unpause count nested pauses (a menu
        // holds one too), so pause only when running and unpause once; SetSpeed(0..2) is slow,
        // medium, fast (GetSpeed() the same).
        public string Speed(bool? paused, int? speed)
        {
            var screen = SpeedControlScreen.Instance;
            if (screen == null) return "no_clock: the game's speed controls are not there";
            if (speed.HasValue) screen.SetSpeed(speed.Value - 1);
            if (paused == true && !screen.IsPaused) screen.Pause(false, false);
            if (paused == false && screen.IsPaused)
            {
                screen.Unpause(false);
                if (screen.IsPaused) return "still_paused: something else in the game holds a pause (a menu or a dialog)";
            }
            return null;
        }

        // Planting as the seed side screen orders it (ReceptacleSideScreen -> SingleEntityReceptacle.
        // CreateOrder): the PlantablePlot on the building layer of the cell (PlanterBox, FarmTile, ...),
        // empty (Occupant null), gets PlantablePlot.CreateOrder(seed tag, Tag.Invalid), which keeps the
        // order only for a plant the plot can take (ValidPlant; a FetchChore then brings the seed:
        // GetActiveRequest). The seed is a prefab with the CropSeed tag (PlanterBoxConfig.cs: AddDepositTag(GameTags.CropSeed)).
        public string Plant(int world, int x, int y, string seed, int priority)
        {
            var w = World(world);
            if (w == null) return NoWorld;
            int cell = GameStateReader.WorldCell(w, x, y);
            var go = Grid.IsValidCell(cell) ? Grid.Objects[cell, (int)ObjectLayer.Building] : null;
            var plot = go != null ? go.GetComponent<PlantablePlot>() : null;
            if (plot == null) return "nothing_there: no built planter box or farm tile at the cell";
            if (plot.Occupant != null) return "occupied: the plot already has a plant";
            // CreateFetchChore keeps an earlier order (it only makes one while fetchChore is null)
            if (plot.GetActiveRequest != null) return "occupied: the plot already waits for a seed";
            var prefab = Assets.GetPrefab(new Tag(seed));
            var id = prefab != null ? prefab.GetComponent<KPrefabID>() : null;
            if (id == null || !id.HasTag(GameTags.CropSeed)) return "unknown_seed: " + seed + " is no seed a plot takes";
            plot.CreateOrder(new Tag(seed), Tag.Invalid);
            if (plot.GetActiveRequest == null) return "invalid_seed: this plot does not take " + seed;
            Prioritize(plot.gameObject, priority);
            return null;
        }

        // As MopTool.OnDragTool: a cell that is not solid, holds a liquid of at most MopTool.maxMopAmt kg
        // (Grid.Mass), has a solid cell below (Grid.CellBelow) and no mop order yet (object layer 8) gets
        // a MopPlacer (Assets.GetPrefab("MopPlacer"), Util.KInstantiate, placed at the cell, activated);
        // other cells of the area are skipped, as the tool skips them.
        private const int MopLayer = 8;   // ObjectLayer.MopPlacer (ObjectLayer.cs: the 9th)

        public string Mop(int world, int x, int y, int width, int height, int priority)
        {
            var w = World(world);
            if (w == null) return NoWorld;
            var placer = Assets.GetPrefab(new Tag("MopPlacer"));
            int placed = 0;
            foreach (int cell in ValidCells(w, x, y, width, height))
            {
                if (Grid.Solid[cell] || Grid.Objects[cell, MopLayer] != null || !Grid.Element[cell].IsLiquid) continue;
                int below = Grid.CellBelow(cell);
                if (!Grid.IsValidCell(below) || !Grid.Solid[below] || Grid.Mass[cell] > MopTool.maxMopAmt) continue;
                var go = Util.KInstantiate(placer, null, null);
                Grid.Objects[cell, MopLayer] = go;
                go.transform.position = Grid.CellToPosCBC(cell, Grid.SceneLayer.Move);
                go.SetActive(true);
                Prioritize(go, priority);
                placed++;
            }
            return placed > 0 ? null : "nothing_there: no liquid of at most " + MopTool.maxMopAmt + " kg on a floor to mop in the area";
        }

        // As ClearTool.OnDragTool: on each cell, the pickupables lying there (object layer Pickupables,
        // the chain of Pickupable.objectLayerListItem), not a duplicant, Clearable.isClearable, get
        // MarkForClear(false, false): a duplicant carries them to storage.
        public string Sweep(int world, int x, int y, int width, int height, int priority)
        {
            var w = World(world);
            if (w == null) return NoWorld;
            int n = 0;
            foreach (int cell in ValidCells(w, x, y, width, height))
            {
                var first = Grid.Objects[cell, (int)ObjectLayer.Pickupables];
                var item = first != null ? first.GetComponent<Pickupable>().objectLayerListItem : null;
                while (item != null)
                {
                    var go = item.gameObject;
                    item = item.nextItem;
                    if (go == null || go.GetComponent<MinionIdentity>() != null) continue;
                    var clearable = go.GetComponent<Clearable>();
                    if (clearable == null || !clearable.isClearable) continue;
                    clearable.MarkForClear(false, false);
                    Prioritize(go, priority);
                    n++;
                }
            }
            return n > 0 ? null : "nothing_there: no debris to sweep in the area";
        }

        // As HarvestTool.OnDragTool with "harvest when ready" on (its default): every HarvestDesignatable
        // (Components.HarvestDesignatables) standing on a cell of the area (its cell, or a cell its
        // OccupyArea covers) gets SetHarvestWhenReady(true).
        public string Harvest(int world, int x, int y, int width, int height, int priority)
        {
            var w = World(world);
            if (w == null) return NoWorld;
            int n = 0;
            foreach (HarvestDesignatable h in Components.HarvestDesignatables.Items)
            {
                if (h.GetMyWorldId() != w.id) continue;
                bool inside = false;
                for (int yy = y; yy < y + height && !inside; yy++)
                    for (int xx = x; xx < x + width && !inside; xx++)
                    {
                        int cell = GameStateReader.WorldCell(w, xx, yy);
                        inside = Grid.PosToCell(h) == cell || (h.area != null && h.area.CheckIsOccupying(cell));
                    }
                if (!inside) continue;
                h.SetHarvestWhenReady(true);
                Prioritize(h.gameObject, priority);
                n++;
            }
            return n > 0 ? null : "nothing_there: no plant in the area";
        }

        // The valid cells of a rectangle in a world's own coordinates, row by row from the bottom
        // (the order every area order here used).
        private static IEnumerable<int> ValidCells(WorldContainer w, int x, int y, int width, int height)
        {
            for (int yy = y; yy < y + height; yy++)
                for (int xx = x; xx < x + width; xx++)
                {
                    int cell = GameStateReader.WorldCell(w, xx, yy);
                    if (Grid.IsValidCell(cell)) yield return cell;
                }
        }

        private static IEnumerable<T> Objects<T>(WorldContainer w, int x, int y, int width, int height) where T : Component
        {
            var seen = new HashSet<T>();
            foreach (int cell in ValidCells(w, x, y, width, height))
            {
                var go = Grid.Objects[cell, (int)ObjectLayer.Building];
                var c = go != null ? go.GetComponent<T>() : null;
                if (c != null && seen.Add(c)) yield return c;
            }
        }
    }
}
