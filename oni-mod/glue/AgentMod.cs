// NOT COMPILED HERE: needs the game's Assembly-CSharp.dll, Assembly-CSharp-firstpass.dll,
// UnityEngine*.dll and 0Harmony.dll (see docs/oni/mod.md, "Building the mod"). Thin glue only:
// every method converts types and calls the core (OniAgentMod.Core, compiled and tested in CI).
using HarmonyLib;
using KMod;
using OniAgentMod.Core;
using UnityEngine;

namespace OniAgentMod.Glue
{
    public sealed class AgentMod : UserMod2
    {
        internal static ModCore Core;

        public override void OnLoad(Harmony harmony)
        {
            base.OnLoad(harmony);                         // applies the [HarmonyPatch] classes below
            var game = new GameStateReader();
            Core = new ModCore(game, new GameActions(), new UnityLog(), "oni-agent-mod");
            Core.Start(ModSettings.Port(path));           // path: this mod's folder (UserMod2.path)
        }

        public override void OnUnload(Harmony harmony)   // KMod calls it when the mod is disabled
        {
            if (Core != null) Core.Stop();
            Core = null;
            base.OnUnload(harmony);
        }
    }

    /// <summary>The game thread's tick: Game.Update runs once per frame on Unity's main thread.</summary>
    [HarmonyPatch(typeof(Game), "Update")]
    public static class GameUpdatePatch
    {
        public static void Postfix()
        {
            if (AgentMod.Core != null) AgentMod.Core.Tick();
        }
    }

    /// <summary>Leaving a save: publish nothing stale (state endpoints answer not_ready until the next tick).</summary>
    [HarmonyPatch(typeof(Game), "OnDestroy")]
    public static class GameDestroyPatch
    {
        public static void Postfix()
        {
            GameStateReader.Reset();
            if (AgentMod.Core != null) AgentMod.Core.Forget();
        }
    }

    public sealed class UnityLog : IModLog
    {
        public void Info(string message) { Debug.Log("[oni-agent] " + message); }
        public void Error(string message) { Debug.LogWarning("[oni-agent] " + message); }
    }

    /// <summary>The port from the mod folder's config.json {"modPort": 23876} (the only file the mod reads).</summary>
    internal static class ModSettings
    {
        internal static int Port(string modPath)
        {
            try
            {
                var file = System.IO.Path.Combine(modPath, "config.json");
                if (!System.IO.File.Exists(file)) return ModCore.DefaultPort;
                var cfg = Json.Parse(System.IO.File.ReadAllText(file)) as JsonObject;
                object port;
                if (cfg != null && cfg.TryGet("modPort", out port) && port is long && (long)port > 0 && (long)port < 65536)
                    return (int)(long)port;
            }
            catch (System.Exception e) { Debug.LogWarning("[oni-agent] config.json ignored: " + e.Message); }
            return ModCore.DefaultPort;
        }
    }
}
