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

        public string Dig(int x, int y, int width, int height, int priority)
        {
            int placed = 0;
            for (int yy = y; yy < y + height; yy++)
                for (int xx = x; xx < x + width; xx++)
                {
                    int cell = Grid.XYToCell(xx, yy);
                    if (!Grid.IsValidCell(cell) || !Grid.Solid[cell]) continue;
                    var go = DigTool.PlaceDig(cell, 0);
                    if (go == null) continue;
                    Prioritize(go, priority);
                    placed++;
                }
            return placed > 0 || !AnySolid(x, y, width, height) ? null : "invalid_location: the game placed no dig order in the area";
        }

        private static bool AnySolid(int x, int y, int width, int height)
        {
            for (int yy = y; yy < y + height; yy++)
                for (int xx = x; xx < x + width; xx++)
                {
                    int cell = Grid.XYToCell(xx, yy);
                    if (Grid.IsValidCell(cell) && Grid.Solid[cell]) return true;
                }
            return false;
        }

        // The checks of the game's build menu before a placement (PlanScreen.GetBuildableStateForDef):
        // BuildingDef.IsAvailable() (not deprecated, not debug-only), then researched
        // (Db.Get().TechItems.IsTechItemComplete(PrefabID), skipped in sandbox mode), then materials;
        // then the tool's own placement check (BuildingDef.IsValidPlaceLocation).
        public string Build(string buildingId, int x, int y, int? rotation, int priority)
        {
            var def = Assets.GetBuildingDef(buildingId);
            if (def == null) return "unknown_building: " + buildingId;
            if (!def.IsAvailable()) return "unavailable: " + buildingId + " is deprecated or debug-only in this game";
            if (!Game.Instance.SandboxModeActive && !Db.Get().TechItems.IsTechItemComplete(def.PrefabID))
                return "not_researched: research the tech that unlocks " + buildingId + " first";
            // the API names the bottom-left cell; the game anchors a building at its bottom row, (width-1)/2 from the left
            var pos = Grid.CellToPosCBC(Grid.XYToCell(x + (def.WidthInCells - 1) / 2, y), def.SceneLayer);
            var orientation = rotation == 90 ? Orientation.R90 : rotation == 180 ? Orientation.R180
                : rotation == 270 ? Orientation.R270 : Orientation.Neutral;
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

        public string Deconstruct(int x, int y, int width, int height, int priority)
        {
            int n = 0;
            foreach (var d in Objects<Deconstructable>(x, y, width, height))
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

        public string Cancel(int x, int y, int width, int height)
        {
            int n = 0;
            for (int yy = y; yy < y + height; yy++)
                for (int xx = x; xx < x + width; xx++)
                {
                    int cell = Grid.XYToCell(xx, yy);
                    if (!Grid.IsValidCell(cell)) continue;
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

        public string Prioritize(int x, int y, int width, int height, int priority)
        {
            var setting = new PrioritySetting(PriorityScreen.PriorityClass.basic, priority);
            int n = 0;
            foreach (var p in Objects<Prioritizable>(x, y, width, height)) { p.SetMasterPriority(setting); n++; }
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
        public string Utility(string kind, int[] xs, int[] ys, int priority)
        {
            string id = kind == "wire" ? "Wire" : kind == "gas" ? "GasConduit" : kind == "liquid" ? "LiquidConduit" : "LogicWire";
            var def = Assets.GetBuildingDef(id);
            if (def == null) return "unknown_building: " + id;
            if (!Game.Instance.SandboxModeActive && !Db.Get().TechItems.IsTechItemComplete(id))
                return "not_researched: research the tech that unlocks " + id + " first";
            var elements = Materials(def);
            if (elements == null) return "no_materials: the colony holds none of one of " + id + "'s ingredients";
            var mgr = def.BuildingComplete.GetComponent<IHaveUtilityNetworkMgr>().GetNetworkManager();
            var cells = new int[xs.Length];
            for (int i = 0; i < xs.Length; i++) cells[i] = Grid.XYToCell(xs[i], ys[i]);
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

        private static IEnumerable<T> Objects<T>(int x, int y, int width, int height) where T : Component
        {
            var seen = new HashSet<T>();
            for (int yy = y; yy < y + height; yy++)
                for (int xx = x; xx < x + width; xx++)
                {
                    int cell = Grid.XYToCell(xx, yy);
                    if (!Grid.IsValidCell(cell)) continue;
                    var go = Grid.Objects[cell, (int)ObjectLayer.Building];
                    var c = go != null ? go.GetComponent<T>() : null;
                    if (c != null && seen.Add(c)) yield return c;
                }
        }
    }
}
