// NOT COMPILED HERE (needs the game's assemblies). Reads the game on the game thread (called from
// ModCore.Tick) into the core's immutable Snapshot; converts types only, no rules.
using System.Collections.Generic;
using OniAgentMod.Core;
using UnityEngine;

namespace OniAgentMod.Glue
{
    public sealed class GameStateReader : IGameState
    {
        private static float lastCapture = -1f;
        private static Snapshot last;

        internal static void Reset() { last = null; lastCapture = -1f; }

        private static HashSet<string> buildingIds, techIds;   // fixed for a game session: read once
        public Snapshot Capture()
        {
            // a fresh picture at most twice a second of real time; between them the last one stands
            if (last != null && Time.unscaledTime - lastCapture < 0.5f) return last;
            if (Game.Instance == null || ClusterManager.Instance == null) return null;
            lastCapture = Time.unscaledTime;
            var s = new Snapshot { WorldWidth = Grid.WidthInCells, WorldHeight = Grid.HeightInCells };
            if (buildingIds == null)
            {
                buildingIds = new HashSet<string>();
                foreach (var def in Assets.BuildingDefs) buildingIds.Add(def.PrefabID);
                techIds = new HashSet<string>();
                foreach (var tech in Db.Get().Techs.resources) techIds.Add(tech.Id);
            }
            s.BuildingIds = buildingIds;
            s.TechIds = techIds;
            var world = ClusterManager.Instance.activeWorld;
            int dupes = Components.LiveMinionIdentities.Count;
            s.Game = new JsonObject()
                .Add("cycle", (long)GameClock.Instance.GetCycle())
                .Add("duplicantCount", (long)dupes)
                .Add("worldName", world != null ? world.GetProperName() : SaveGame.Instance.BaseName)
                .Add("worldSize", (long)Grid.WidthInCells)
                .Add("worldWidth", (long)Grid.WidthInCells)
                .Add("worldHeight", (long)Grid.HeightInCells)
                .Add("paused", SpeedControlScreen.Instance != null && SpeedControlScreen.Instance.IsPaused);
            foreach (var kv in world.worldInventory.GetAccessibleAmounts())   // Tag -> kg
                s.Resources.Add(new JsonObject().Add("name", kv.Key.ProperName()).Add("tag", kv.Key.Name)
                    .Add("amount", (double)kv.Value).Add("unit", "kg"));
            foreach (MinionIdentity m in Components.LiveMinionIdentities.Items)
            {
                var amounts = m.GetAmounts();
                s.DuplicantNames.Add(m.GetProperName());
                s.Duplicants.Add(new JsonObject().Add("name", m.GetProperName())
                    .Add("stress", (double)amounts.GetValue("Stress"))
                    .Add("calories", (double)amounts.GetValue("Calories"))
                    .Add("stamina", (double)amounts.GetValue("Stamina"))
                    .Add("oxygen", (double)amounts.GetValue("Breath"))
                    .Add("diseases", (long)m.GetComponent<MinionModifiers>().sicknesses.Count)
                    .Add("skillLevels", (long)m.GetComponent<MinionResume>().TotalSkillPointsGained));
            }
            foreach (BuildingComplete b in Components.BuildingCompletes.Items)
            {
                Grid.CellToXY(Grid.PosToCell(b), out int bx, out int by);
                var op = b.GetComponent<Operational>();
                s.Buildings.Add(new JsonObject().Add("name", b.Def.Name).Add("id", b.Def.PrefabID)
                    .Add("x", (long)(bx - (b.Def.WidthInCells - 1) / 2)).Add("y", (long)by).Add("isOperational", op == null || op.IsOperational)
                    .Add("width", (long)b.Def.WidthInCells).Add("height", (long)b.Def.HeightInCells)
                    .Add("underConstruction", false));
            }
            var research = Research.Instance;
            var active = research.GetActiveResearch();
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
            foreach (Geyser g in Components.Geysers.Items)
            {
                Grid.CellToXY(Grid.PosToCell(g), out int gx, out int gy);
                s.Geysers.Add(new JsonObject().Add("id", g.GetComponent<KPrefabID>().InstanceID.ToString())
                    .Add("name", g.GetProperName()).Add("x", (long)gx).Add("y", (long)gy)
                    .Add("state", g.ShouldGoDormant() ? "dormant" : g.smi.IsInsideState(g.smi.sm.erupt) ? "erupting" : "idle")
                    .Add("element", g.emitter.outputElement.elementHash.ToString())
                    .Add("emitRate", (double)g.emitter.emissionRate));
            }
            foreach (Notification n in NotificationManager.Instance.GetNotifications())
                s.Alerts.Add(new JsonObject().Add("type", n.titleText).Add("message", n.NotifierName ?? n.titleText)
                    .Add("severity", n.Type == NotificationType.Bad || n.Type == NotificationType.DuplicantThreatening ? "bad"
                        : n.Type == NotificationType.BadMinor ? "warning" : "info"));
            foreach (CreatureBrain c in Components.Brains.Items)
            {
                if (c.GetComponent<MinionIdentity>() != null) continue;
                Grid.CellToXY(Grid.PosToCell(c), out int cx, out int cy);
                s.Critters.Add(new JsonObject().Add("name", c.GetProperName()).Add("species", c.species.Name)
                    .Add("x", (long)cx).Add("y", (long)cy).Add("isWild", c.HasTag(GameTags.Creatures.Wild)));
            }
            s.Rows = new string[Grid.HeightInCells];
            var row = new char[Grid.WidthInCells];
            for (int y = 0; y < Grid.HeightInCells; y++)
            {
                for (int x = 0; x < Grid.WidthInCells; x++)
                {
                    int cell = Grid.XYToCell(x, y);
                    var e = Grid.Element[cell];
                    row[x] = e.IsSolid ? (e.hardness >= 255 ? 'N' : '#') : e.IsLiquid ? '~' : '.';
                }
                s.Rows[y] = new string(row);
            }
            last = s;
            return s;
        }
    }
}
