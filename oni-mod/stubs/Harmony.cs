// Reference stubs of 0Harmony.dll as the game ships it (HarmonyLib, Harmony 2). Compile-only.
// seen: cnctemaR/ONI-Assembly-CSharp_windows 0Harmony/HarmonyLib/HarmonyPatch.cs and
//       0Harmony/HarmonyLib/Harmony.cs (the game's copy); pardeike/Harmony Harmony/Public/Harmony.cs,
//       Harmony/Public/Attributes.cs (upstream).
using System;
using System.Reflection;
using OniAgentMod.Stubs;

namespace HarmonyLib
{
    // seen: pardeike/Harmony Harmony/Public/Harmony.cs: public class Harmony (ctor string id; PatchAll(Assembly))
    public class Harmony
    {
        public Harmony(string id) { throw Stub.Missing(); }
        public void PatchAll(Assembly assembly) { throw Stub.Missing(); }
    }

    // seen: pardeike/Harmony Harmony/Public/Attributes.cs: public class HarmonyAttribute : Attribute
    public class HarmonyAttribute : Attribute { }

    // seen: cnctemaR/ONI-Assembly-CSharp_windows 0Harmony/HarmonyLib/HarmonyPatch.cs:
    // [AttributeUsage(Class | Method | Delegate, AllowMultiple = true)], ctor (Type declaringType, string methodName)
    [AttributeUsage(AttributeTargets.Class | AttributeTargets.Method | AttributeTargets.Delegate, AllowMultiple = true)]
    public class HarmonyPatch : HarmonyAttribute
    {
        public HarmonyPatch(Type declaringType, string methodName) { }
    }
}
