// Compiled in CI against the reference stubs (oni-mod/stubs/, the game's signatures with where each
// was seen) and, opt-in, against a real install (ONI_MANAGED; docs/oni/mod.md "Building the mod").
// Thin glue only: every method converts types and calls the core (OniAgentMod.Core, tested in CI).
using HarmonyLib;
using KMod;
using OniAgentMod.Core;

namespace OniAgentMod.Glue
{
    public sealed class AgentMod : UserMod2
    {
        internal static ModCore Core;
        internal static readonly UnityLog Log = new UnityLog();

        // UserMod2 has OnLoad and OnAllModsLoaded only (KMod/UserMod2.cs): the game never unloads a
        // mod's assembly (disabling a mod asks for a restart), so the server lives as long as the
        // process; its threads are background threads.
        public override void OnLoad(Harmony harmony)
        {
            base.OnLoad(harmony);                         // applies the [HarmonyPatch] classes below
            try
            {
                Core = new ModCore(new GameStateReader(Log), new GameActions(), Log, "oni-agent-mod");
                // never throws: a busy port is logged and retried in the background (ModCore.StartOrRetry)
                Core.StartOrRetry(ModSettings.Port(path));   // path: this mod's folder (UserMod2.path)
            }
            catch (System.Exception e)                    // nothing may escape OnLoad: the game would drop the mod
            {
                Log.Error("could not start: " + e.GetType().Name + ": " + e.Message);
            }
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

    /// <summary>The game's log. `Debug` here is ONI's global Debug (Assembly-CSharp-firstpass), which
    /// a type in the global namespace makes win over UnityEngine.Debug; both write to Player.log.</summary>
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
