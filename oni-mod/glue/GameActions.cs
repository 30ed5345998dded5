// NOT COMPILED HERE (needs the game's assemblies). Applies queued actions on the game thread
// (ModCore.Tick from the Game.Update patch); converts cell coordinates and ids, calls the game.
using OniAgentMod.Core;
using UnityEngine;

namespace OniAgentMod.Glue
{
    public sealed class GameActions : IGameActions
    {
        public void Dig(int x, int y, int width, int height)
        {
            for (int yy = y; yy < y + height; yy++)
                for (int xx = x; xx < x + width; xx++)
                {
                    int cell = Grid.XYToCell(xx, yy);
                    if (Grid.IsValidCell(cell) && Grid.Solid[cell]) DigTool.PlaceDig(cell, 0);
                }
        }

        public void Build(string buildingId, int x, int y, int? rotation)
        {
            var def = Assets.GetBuildingDef(buildingId);
            // the API names the bottom-left cell; the game anchors a building at its bottom row, (width-1)/2 from the left
            var pos = Grid.CellToPosCBC(Grid.XYToCell(x + (def.WidthInCells - 1) / 2, y), def.SceneLayer);
            var orientation = rotation == 90 ? Orientation.R90 : rotation == 180 ? Orientation.R180
                : rotation == 270 ? Orientation.R270 : Orientation.Neutral;
            var elements = Materials(def);
            if (elements == null)
                Debug.LogWarning("[oni-agent] build " + buildingId + ": no material in stock for one of its ingredients");
            else if (def.IsValidPlaceLocation(null, pos, orientation, out string reason))
                def.TryPlace(null, pos, orientation, elements, "DEFAULT_FACADE", 0);
            else
                Debug.LogWarning("[oni-agent] build " + buildingId + " at " + x + "," + y + " refused: " + reason);
        }

        /// <summary>For each ingredient (a material category such as BuildableRaw), the element with
        /// that tag the colony holds most of; null when one has none.</summary>
        private static System.Collections.Generic.List<Tag> Materials(BuildingDef def)
        {
            var stock = ClusterManager.Instance.activeWorld.worldInventory;
            var chosen = new System.Collections.Generic.List<Tag>();
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

        public void Deconstruct(int x, int y, int width, int height)
        {
            foreach (var d in Objects<Deconstructable>(x, y, width, height)) d.QueueDeconstruction(true);
        }

        public void Prioritize(int x, int y, int width, int height, int priority)
        {
            var setting = new PrioritySetting(PriorityScreen.PriorityClass.basic, priority);
            foreach (var p in Objects<Prioritizable>(x, y, width, height)) p.SetMasterPriority(setting);
        }

        public void Research(string techId)
        {
            global::Research.Instance.SetActiveResearch(Db.Get().Techs.Get(techId), true);
        }

        public void Schedule(string duplicant, string[] blocks)
        {
            foreach (MinionIdentity m in Components.LiveMinionIdentities.Items)
            {
                if (m.GetProperName() != duplicant) continue;
                var schedule = ScheduleManager.Instance.GetSchedule(m.GetComponent<Schedulable>());
                var groups = Db.Get().ScheduleGroups;
                for (int i = 0; i < 24; i++)
                    schedule.SetBlockGroup(i, blocks[i] == "sleep" ? groups.Sleep : blocks[i] == "downtime" ? groups.Recreation
                        : blocks[i] == "bathtime" ? groups.Hygene : groups.Worktime);
            }
        }

        public void Wardrobe(string duplicant, string item)
        {
            // Suits are worn at Suit Docks in the game; the mod cannot dress a duplicant directly yet.
            Debug.LogWarning("[oni-agent] wardrobe " + item + " for " + duplicant + ": not implemented in the game glue");
        }

        private static System.Collections.Generic.IEnumerable<T> Objects<T>(int x, int y, int width, int height) where T : Component
        {
            var seen = new System.Collections.Generic.HashSet<T>();
            for (int yy = y; yy < y + height; yy++)
                for (int xx = x; xx < x + width; xx++)
                {
                    int cell = Grid.XYToCell(xx, yy);
                    var go = Grid.Objects[cell, (int)ObjectLayer.Building];
                    var c = go != null ? go.GetComponent<T>() : null;
                    if (c != null && seen.Add(c)) yield return c;
                }
        }
    }
}
