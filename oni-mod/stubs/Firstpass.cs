// Reference stubs of Assembly-CSharp-firstpass: only what the glue touches. Compile-only.
// seen (all): 2665679902/Assembly-CSharp, Assembly-CSharp-firstpass/<File>.cs (a 2023 decompile; the
// U56 decompile 2373370715/NOISourceCode has no firstpass, and its Assembly-CSharp uses these same
// members, e.g. Tag.Name in GameTagExtensions.cs, KPrefabID.InstanceID in many files).
using System.Collections.Generic;
using OniAgentMod.Stubs;
using UnityEngine;

// seen: Assembly-CSharp-firstpass/Debug.cs: `public static class Debug` in the global namespace, with
// Log(object) and LogWarning(object); it wins over UnityEngine.Debug for code with `using UnityEngine;`
public static class Debug
{
    public static void Log(object obj) { throw Stub.Missing(); }
    public static void LogWarning(object obj) { throw Stub.Missing(); }
}

// seen: Assembly-CSharp-firstpass/Tag.cs: public struct Tag : ..., IEquatable<Tag>; Name (get),
// IsValid (get), static readonly Tag Invalid
public struct Tag : System.IEquatable<Tag>
{
    public static readonly Tag Invalid;
    // seen: Tag.cs: public Tag(string name)
    public Tag(string name) { throw Stub.Missing(); }
    public string Name { get { throw Stub.Missing(); } }
    public bool IsValid { get { throw Stub.Missing(); } }
    public bool Equals(Tag other) { throw Stub.Missing(); }
    public override bool Equals(object obj) { throw Stub.Missing(); }
    public override int GetHashCode() { throw Stub.Missing(); }
    // seen: Tag.cs: public static bool operator ==(Tag a, Tag b) / !=
    public static bool operator ==(Tag a, Tag b) { throw Stub.Missing(); }
    public static bool operator !=(Tag a, Tag b) { throw Stub.Missing(); }
}

// seen: Assembly-CSharp-firstpass/CellOffset.cs: public struct CellOffset : IEquatable<CellOffset>; public int x; public int y;
public struct CellOffset
{
    public int x;
    public int y;
}

// seen: Assembly-CSharp-firstpass/EventExtensions.cs: public static void Trigger(this GameObject go, int hash, object data = null)
public static class EventExtensions
{
    public static void Trigger(this GameObject go, int hash, object data = null) { throw Stub.Missing(); }
}

// seen: Assembly-CSharp-firstpass/KMonoBehaviour.cs: public class KMonoBehaviour : MonoBehaviour, ...
public class KMonoBehaviour : MonoBehaviour { }

// seen: Assembly-CSharp-firstpass/KPrefabID.cs: public class KPrefabID : KMonoBehaviour, ...; public int InstanceID;
public class KPrefabID : KMonoBehaviour
{
    public int InstanceID;
    // seen: KPrefabID.cs: public bool HasTag(Tag tag)
    public bool HasTag(Tag tag) { throw Stub.Missing(); }
}
// seen: Assembly-CSharp-firstpass/Vector2I.cs: public struct Vector2I : IComparable<Vector2I>, IEquatable<Vector2I>; public int x; public int y;
public struct Vector2I
{
    public int x;
    public int y;
}
// seen: Assembly-CSharp-firstpass/Util.cs: public static GameObject KInstantiate(GameObject original, GameObject parent = null, string name = null)
public static class Util
{
    public static GameObject KInstantiate(GameObject original, GameObject parent = null, string name = null) { throw Stub.Missing(); }
}

// seen: Assembly-CSharp-firstpass/Resource.cs: public class Resource; public string Id;
public class Resource
{
    public string Id;
}

// seen: Assembly-CSharp-firstpass/ResourceSet.cs (abstract class ResourceSet : Resource) and
// ResourceSet.2.cs: public class ResourceSet<T> : ResourceSet where T : Resource;
// public List<T> resources; public T Get(string id)
public abstract class ResourceSet : Resource { }

public class ResourceSet<T> : ResourceSet where T : Resource
{
    public List<T> resources;
    public T Get(string id) { throw Stub.Missing(); }
}
