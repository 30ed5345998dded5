// Reference stubs of UnityEngine.CoreModule: only what the glue touches. Compile-only.
// seen: Unity scripting reference (ScriptReference/Object.html, Component.html, GameObject.html,
// MonoBehaviour.html, Time-unscaledTime.html); the game's decompile uses the same members
// (2373370715/NOISourceCode Assembly-CSharp/*.cs, build U56-674504).
using OniAgentMod.Stubs;

namespace UnityEngine
{
    // seen: ScriptReference/Object.html: operators ==, != and implicit bool (a destroyed object is == null)
    public class Object
    {
        public static bool operator ==(Object x, Object y) { throw Stub.Missing(); }
        public static bool operator !=(Object x, Object y) { throw Stub.Missing(); }
        public static implicit operator bool(Object exists) { throw Stub.Missing(); }
        public override bool Equals(object other) { throw Stub.Missing(); }
        public override int GetHashCode() { throw Stub.Missing(); }
    }

    // seen: ScriptReference/Component.html: gameObject, GetComponent<T>()
    public class Component : Object
    {
        public GameObject gameObject { get { throw Stub.Missing(); } }
        public T GetComponent<T>() { throw Stub.Missing(); }
    }

    // seen: ScriptReference/Behaviour.html: class Behaviour : Component
    public class Behaviour : Component { }

    // seen: ScriptReference/MonoBehaviour.html: class MonoBehaviour : Behaviour (the base of KMonoBehaviour)
    public class MonoBehaviour : Behaviour { }

    // seen: ScriptReference/GameObject.html: sealed class GameObject : Object, GetComponent<T>()
    // ScriptReference/GameObject-transform.html, GameObject.SetActive.html: transform { get; }, SetActive(bool)
    public sealed class GameObject : Object
    {
        public T GetComponent<T>() { throw Stub.Missing(); }
        public Transform transform { get { throw Stub.Missing(); } }
        public void SetActive(bool value) { throw Stub.Missing(); }
    }
    // seen: ScriptReference/Transform-position.html: class Transform : Component; Vector3 position { get; set; }
    public class Transform : Component
    {
        public Vector3 position { get { throw Stub.Missing(); } set { } }
    }

    // seen: ScriptReference/Vector3.html: struct Vector3
    public struct Vector3 { public float x, y, z; }

    // seen: ScriptReference/Time-unscaledTime.html: public static float unscaledTime { get; }
    public class Time
    {
        public static float unscaledTime { get { throw Stub.Missing(); } }
    }
}

namespace UnityEngine
{
    // seen: ScriptReference/ScriptableObject.html: class ScriptableObject : Object (the base of the game's Def)
    public class ScriptableObject : Object { }
}
