// Reference stubs of Assembly-CSharp: only the types and members the glue uses. Compile-only.
// seen (unless a line says otherwise): 2373370715/NOISourceCode, commit ba7aec3 "U56-674504", the
// decompile of build 674504, at Assembly-CSharp/<the file named on each type>. A stub may declare a
// simpler base class than the game (narrower), never a member the game lacks.
using System;
using System.Collections.Generic;
using OniAgentMod.Stubs;
using UnityEngine;

// Game.cs: public class Game : KMonoBehaviour; public static Game Instance { get; private set; };
// public bool SandboxModeActive { get; set; }; private void Update(); private new void OnDestroy()
// (the glue's Harmony patches name these two); public CircuitManager circuitManager; public RoomProber roomProber
public class Game : KMonoBehaviour
{
    public static Game Instance { get { throw Stub.Missing(); } private set { } }
    public bool SandboxModeActive { get { throw Stub.Missing(); } }
    public CircuitManager circuitManager;
    public RoomProber roomProber;
    private void Update() { }
    private void OnDestroy() { }
}

// Components.cs: Cmps<T>.Items is a List<T> property, Count an int property; Brains holds every Brain
// (Cmps<Brain>); Geysers is kept per world (CmpsByWorld<Geyser>, GetItems(int worldId)).
public class Components
{
    public static Components.Cmps<MinionIdentity> LiveMinionIdentities;
    public static Components.Cmps<Brain> Brains;
    public static Components.Cmps<BuildingComplete> BuildingCompletes;
    public static Components.CmpsByWorld<Geyser> Geysers;
    public static Components.Cmps<Generator> Generators;
    public static Components.Cmps<EnergyConsumer> EnergyConsumers;
    public static Components.Cmps<Battery> Batteries;
    // Components.cs: public static Components.Cmps<HarvestDesignatable> HarvestDesignatables
    public static Components.Cmps<HarvestDesignatable> HarvestDesignatables;

    // Components.cs: public class Cmps<T> : ICollection, IEnumerable, IEnumerable<T>;
    // public List<T> Items => items.GetDataList(); public int Count
    public class Cmps<T>
    {
        public List<T> Items { get { throw Stub.Missing(); } }
        public int Count { get { throw Stub.Missing(); } }
    }

    // Components.cs: public class CmpsByWorld<T>; public List<T> GetItems(int worldId) (no Items)
    public class CmpsByWorld<T>
    {
        public List<T> GetItems(int worldId) { throw Stub.Missing(); }
    }
}

// ClusterManager.cs: public static ClusterManager Instance; public WorldContainer activeWorld { get; };
// public List<WorldContainer> WorldContainers { get; } (every world: asteroids, rocket interiors);
// public WorldContainer GetWorld(int id) (null for an id it does not have)
public class ClusterManager : KMonoBehaviour
{
    public static ClusterManager Instance;
    public WorldContainer activeWorld { get { throw Stub.Missing(); } }
    public List<WorldContainer> WorldContainers { get { throw Stub.Missing(); } }
    public WorldContainer GetWorld(int id) { throw Stub.Missing(); }
}

// WorldContainer.cs: public WorldInventory worldInventory { get; private set; }; public int id = -1;
// public bool IsDiscovered { get; }; public Vector2I WorldSize { get; }; public Vector2I WorldOffset { get; }
// (a world is the rectangle WorldOffset .. WorldOffset + WorldSize of the one grid)
public class WorldContainer : KMonoBehaviour
{
    public WorldInventory worldInventory { get { throw Stub.Missing(); } private set { } }
    public int id = -1;
    public bool IsDiscovered { get { throw Stub.Missing(); } }
    public Vector2I WorldSize { get { throw Stub.Missing(); } }
    public Vector2I WorldOffset { get { throw Stub.Missing(); } }
}

// WorldInventory.cs: public float GetAmount(Tag tag, bool includeRelatedWorlds);
// public Dictionary<Tag, float> GetAccessibleAmounts()
public class WorldInventory : KMonoBehaviour
{
    public float GetAmount(Tag tag, bool includeRelatedWorlds) { throw Stub.Missing(); }
    public Dictionary<Tag, float> GetAccessibleAmounts() { throw Stub.Missing(); }
}

// Grid.cs: static fields WidthInCells, HeightInCells, Element (Element[]), Solid, Objects; PosToCell has
// overloads for StateMachine.Instance, GameObject, KMonoBehaviour, Vector2, Vector3 (the stub keeps
// KMonoBehaviour); CellToXY(int, out int, out int); XYToCell(int, int); IsValidCell(int);
// CellToPosCBC(int, Grid.SceneLayer)
public class Grid
{
    public static int WidthInCells;
    public static int HeightInCells;
    public static Element[] Element;
    public static byte[] WorldIdx;
    public static Grid.MassIndexer Mass;
    public static Grid.TemperatureIndexer Temperature;
    public static Grid.BuildFlagsSolidIndexer Solid;
    // Grid.cs: public static int CellBelow(int cell)
    public static int CellBelow(int cell) { throw Stub.Missing(); }
    public static Grid.ObjectLayerIndexer Objects;

    public static int PosToCell(KMonoBehaviour cmp) { throw Stub.Missing(); }
    public static void CellToXY(int cell, out int x, out int y) { throw Stub.Missing(); }
    public static int XYToCell(int x, int y) { throw Stub.Missing(); }
    public static bool IsValidCell(int cell) { throw Stub.Missing(); }
    public static Vector3 CellToPosCBC(int cell, Grid.SceneLayer layer) { throw Stub.Missing(); }

    // Grid.cs: public struct BuildFlagsSolidIndexer { public bool this[int i] { get; set; } }
    public struct BuildFlagsSolidIndexer
    {
        public bool this[int i] { get { throw Stub.Missing(); } }
    }

    // Grid.cs: public struct ObjectLayerIndexer { public GameObject this[int cell, int layer] { get; set; } }
    public struct ObjectLayerIndexer
    {
        public GameObject this[int cell, int layer] { get { throw Stub.Missing(); } set { } }
    }

    // Grid.cs: public struct MassIndexer { public unsafe float this[int i] { get; } } (kg)
    public struct MassIndexer
    {
        public float this[int i] { get { throw Stub.Missing(); } }
    }

    // Grid.cs: public struct TemperatureIndexer { public unsafe float this[int i] { get; } } (Kelvin)
    public struct TemperatureIndexer
    {
        public float this[int i] { get { throw Stub.Missing(); } }
    }

    // Grid.cs: public enum SceneLayer { WorldSelection = -3, NoLayer, Background, Backwall = 1, Gas, ...,
    // Ore, Creatures, Move, Front, ..., SceneMAX }: Move is the 25th after Backwall = 1. The glue passes
    // BuildingDef.SceneLayer on and places a mop order at Move (InterfaceTool.cs: visualizerLayer = Move,
    // which MopTool keeps)
    public enum SceneLayer { Move = 25 }
}

// ObjectLayer.cs: public enum ObjectLayer { Minion, Building, Backwall, Pickupables, ... } (ClearTool
// reads layer 3: Pickupables)
public enum ObjectLayer
{
    Minion,
    Building,
    Backwall,
    Pickupables,
}

// PermittedRotations.cs: public enum PermittedRotations { Unrotatable, R90, R360, FlipH, FlipV }
public enum PermittedRotations
{
    Unrotatable,
    R90,
    R360,
    FlipH,
    FlipV,
}

// Rotatable.cs: public class Rotatable : KMonoBehaviour, ISaveLoadable; public Orientation GetOrientation();
// public static CellOffset GetRotatedCellOffset(CellOffset offset, Orientation orientation)
// (R90: (y, -x); R180: (-x, -y); R270: (-y, x); FlipH: (-x, y); FlipV: (x, -y))
public class Rotatable : KMonoBehaviour
{
    public Orientation GetOrientation() { throw Stub.Missing(); }
    public static CellOffset GetRotatedCellOffset(CellOffset offset, Orientation orientation) { throw Stub.Missing(); }
}

// Orientation.cs: public enum Orientation { Neutral, R90, R180, R270, NumRotations, FlipH, FlipV }
public enum Orientation
{
    Neutral,
    R90,
    R180,
    R270,
    NumRotations,
    FlipH,
    FlipV,
}

// ConduitType.cs: public enum ConduitType { None, Gas, Liquid, Solid, MAX }
public enum ConduitType
{
    None,
    Gas,
    Liquid,
    Solid,
    MAX,
}

// UtilityConnections.cs: public enum UtilityConnections { Left = 1, Right = 2, Up = 4, Down = 8 }
public enum UtilityConnections
{
    Left = 1,
    Right = 2,
    Up = 4,
    Down = 8,
}

// UtilityConnectionsExtensions.cs: public static UtilityConnections InverseDirection(this
// UtilityConnections direction); public static UtilityConnections DirectionFromToCell(int from_cell, int to_cell)
public static class UtilityConnectionsExtensions
{
    public static UtilityConnections InverseDirection(this UtilityConnections direction) { throw Stub.Missing(); }
    public static UtilityConnections DirectionFromToCell(int from_cell, int to_cell) { throw Stub.Missing(); }
}

// IUtilityNetworkMgr.cs: bool CanAddConnection(UtilityConnections new_connection, int cell, bool
// is_physical_building, out string fail_reason); void AddConnection(UtilityConnections new_connection,
// int cell, bool is_physical_building)
public interface IUtilityNetworkMgr
{
    bool CanAddConnection(UtilityConnections new_connection, int cell, bool is_physical_building, out string fail_reason);
    void AddConnection(UtilityConnections new_connection, int cell, bool is_physical_building);
}

// IHaveUtilityNetworkMgr.cs: IUtilityNetworkMgr GetNetworkManager(); the utility tools get it with
// def.BuildingComplete.GetComponent<IHaveUtilityNetworkMgr>() (BaseUtilityBuildTool.cs)
public interface IHaveUtilityNetworkMgr
{
    IUtilityNetworkMgr GetNetworkManager();
}

// SimHashes: the element ids (an enum of name hashes); the glue only prints one with ToString()
public enum SimHashes { }

// Element.cs: public class Element; IsLiquid, IsSolid (get); public byte hardness; public Tag tag;
// public bool HasTag(Tag search_tag)
public class Element
{
    public bool IsLiquid { get { throw Stub.Missing(); } }
    public bool IsSolid { get { throw Stub.Missing(); } }
    public byte hardness;
    public Tag tag;
    public bool HasTag(Tag search_tag) { throw Stub.Missing(); }
}

// ElementLoader.cs: public static List<Element> elements;
public class ElementLoader
{
    public static List<Element> elements;
}

// Def.cs: public class Def : ScriptableObject; public virtual string Name { get; }; public string PrefabID;
public class Def : ScriptableObject
{
    public virtual string Name { get { throw Stub.Missing(); } }
    public string PrefabID;
}

// BuildingDef.cs: public class BuildingDef : Def, IHasDlcRestrictions; public override string Name;
// WidthInCells, HeightInCells (int fields); public Grid.SceneLayer SceneLayer; public Recipe CraftRecipe;
// public fields EnergyConsumptionWhenActive, GeneratorWattageRating (float), RequiresPowerInput,
// RequiresPowerOutput (bool), InputConduitType, OutputConduitType (ConduitType), MaterialCategory
// (string[]), Mass (float[]), ShowInBuildMenu (bool), PowerInputOffset, PowerOutputOffset,
// UtilityInputOffset, UtilityOutputOffset (CellOffset, from the building's anchor cell);
// public ObjectLayer TileLayer = ObjectLayer.NumLayers; public GameObject BuildingComplete;
// IsValidPlaceLocation(GameObject source_go, Vector3 pos, Orientation orientation, out string fail_reason);
// TryPlace(GameObject src_go, Vector3 pos, Orientation orientation, IList<Tag> selected_elements,
//          string facadeID, int layer = 0)
public class BuildingDef : Def
{
    public override string Name { get { throw Stub.Missing(); } }
    public int WidthInCells;
    public int HeightInCells;
    public Grid.SceneLayer SceneLayer;
    public Recipe CraftRecipe;
    public float EnergyConsumptionWhenActive;
    public float GeneratorWattageRating;
    public bool RequiresPowerInput;
    public bool RequiresPowerOutput;
    public ConduitType InputConduitType;
    public ConduitType OutputConduitType;
    public string[] MaterialCategory;
    public float[] Mass;
    public bool ShowInBuildMenu = true;
    public CellOffset PowerInputOffset;
    public CellOffset PowerOutputOffset;
    public CellOffset UtilityInputOffset;
    public CellOffset UtilityOutputOffset;
    public ObjectLayer TileLayer;
    public GameObject BuildingComplete;
    // BuildingDef.cs: public PermittedRotations PermittedRotations; public CellOffset[] PlacementOffsets (the
    // cells from the anchor, unrotated; MarkArea turns each with Rotatable.GetRotatedCellOffset)
    public PermittedRotations PermittedRotations;
    public CellOffset[] PlacementOffsets;

    // BuildingDef.cs: public bool IsAvailable() => !Deprecated && (!DebugOnly || Game.Instance.DebugOnlyBuildingsAllowed)
    public bool IsAvailable() { throw Stub.Missing(); }

    public bool IsValidPlaceLocation(GameObject source_go, Vector3 pos, Orientation orientation, out string fail_reason)
    {
        throw Stub.Missing();
    }

    public GameObject TryPlace(GameObject src_go, Vector3 pos, Orientation orientation, IList<Tag> selected_elements, string facadeID, int layer = 0)
    {
        throw Stub.Missing();
    }
}

// Recipe.cs: public List<Recipe.Ingredient> Ingredients; public class Ingredient { public Tag tag; }
public class Recipe
{
    public List<Recipe.Ingredient> Ingredients;

    public class Ingredient
    {
        public Tag tag;
    }
}

// Assets.cs: public static BuildingDef GetBuildingDef(string prefab_id); public static List<BuildingDef> BuildingDefs;
public class Assets : KMonoBehaviour
{
    public static List<BuildingDef> BuildingDefs;
    public static BuildingDef GetBuildingDef(string prefab_id) { throw Stub.Missing(); }
    // Assets.cs: public static GameObject GetPrefab(Tag tag)
    public static GameObject GetPrefab(Tag tag) { throw Stub.Missing(); }
}

// Building.cs: public BuildingDef Def;  BuildingComplete.cs: public class BuildingComplete : Building
public class Building : KMonoBehaviour
{
    public BuildingDef Def;
}

public class BuildingComplete : Building { }

// Operational.cs: public bool IsOperational { get; private set; }
public class Operational : KMonoBehaviour
{
    public bool IsOperational { get { throw Stub.Missing(); } private set { } }
}

// Db.cs: public class Db : EntityModifierSet; public static Db Get(); public Techs Techs;
// public TechItems TechItems; public ScheduleGroups ScheduleGroups (Database namespace)
public class Db
{
    public Database.Techs Techs;
    public Database.TechItems TechItems;
    public Database.ScheduleGroups ScheduleGroups;
    public static Db Get() { throw Stub.Missing(); }
}

namespace Database
{
    // Database/Techs.cs: public class Techs : ResourceSet<Tech>; public Tech TryGetTechForTechItem(string itemId)
    public class Techs : ResourceSet<Tech>
    {
        public Tech TryGetTechForTechItem(string itemId) { throw Stub.Missing(); }
    }

    // Database/TechItems.cs: public class TechItems : ResourceSet<TechItem>; public bool IsTechItemComplete(string id)
    // (true for an item no tech lists: available from the start); PlanScreen.UpdateDefResearched calls it
    // with BuildingDef.PrefabID
    public class TechItems : ResourceSet<TechItem>
    {
        public bool IsTechItemComplete(string id) { throw Stub.Missing(); }
    }

    // Database/ScheduleGroups.cs: public class ScheduleGroups : ResourceSet<ScheduleGroup>;
    // public ScheduleGroup Hygene, Worktime, Recreation, Sleep;
    public class ScheduleGroups : ResourceSet<ScheduleGroup>
    {
        public ScheduleGroup Hygene;
        public ScheduleGroup Worktime;
        public ScheduleGroup Recreation;
        public ScheduleGroup Sleep;
    }
}

// TechItem.cs: public class TechItem : Resource, IHasDlcRestrictions
public class TechItem : Resource { }

// Tech.cs: public class Tech : Resource; public bool IsComplete(); public bool ArePrerequisitesComplete()
public class Tech : Resource
{
    public bool IsComplete() { throw Stub.Missing(); }
    public bool ArePrerequisitesComplete() { throw Stub.Missing(); }
}

// TechInstance.cs: public Tech tech; public float GetTotalPercentageComplete()
public class TechInstance
{
    public Tech tech;
    public float GetTotalPercentageComplete() { throw Stub.Missing(); }
}

// Research.cs: public static Research Instance; public TechInstance GetActiveResearch();
// public void SetActiveResearch(Tech tech, bool clearQueue = false)
public class Research : KMonoBehaviour
{
    public static Research Instance;
    public TechInstance GetActiveResearch() { throw Stub.Missing(); }
    public void SetActiveResearch(Tech tech, bool clearQueue = false) { throw Stub.Missing(); }
}

// GameClock.cs: public static GameClock Instance; public int GetCycle()
public class GameClock : KMonoBehaviour
{
    public static GameClock Instance;
    public int GetCycle() { throw Stub.Missing(); }
}

// KScreen: Assembly-CSharp-firstpass/KScreen.cs (2665679902/Assembly-CSharp): public class KScreen : KMonoBehaviour, ...
public class KScreen : KMonoBehaviour { }

// SpeedControlScreen.cs: public class SpeedControlScreen : KScreen;
// public static SpeedControlScreen Instance { get; private set; }; public bool IsPaused { get; };
// public int GetSpeed(); public void SetSpeed(int Speed) (Speed % 3: slow, medium, fast);
// public void Pause(bool playSound = true, bool isCrashed = false); public void Unpause(bool playSound = true)
// (a pause count: each Pause needs its Unpause)
public class SpeedControlScreen : KScreen
{
    public static SpeedControlScreen Instance { get { throw Stub.Missing(); } private set { } }
    public bool IsPaused { get { throw Stub.Missing(); } }
    public int GetSpeed() { throw Stub.Missing(); }
    public void SetSpeed(int Speed) { throw Stub.Missing(); }
    public void Pause(bool playSound = true, bool isCrashed = false) { throw Stub.Missing(); }
    public void Unpause(bool playSound = true) { throw Stub.Missing(); }
}

// MinionIdentity.cs: public class MinionIdentity : KMonoBehaviour, ...; public string GetProperName()
public class MinionIdentity : KMonoBehaviour
{
    public string GetProperName() { throw Stub.Missing(); }
}

// MinionResume.cs (U56 shows no base class): public int TotalSkillPointsGained { get; }
public class MinionResume
{
    public int TotalSkillPointsGained { get { throw Stub.Missing(); } }
}

namespace Klei.AI
{
    // Klei/AI/Amounts.cs: public class Amounts : Modifications<Amount, AmountInstance>; public float GetValue(string amount_id)
    public class Amounts
    {
        public float GetValue(string amount_id) { throw Stub.Missing(); }
    }

    // Klei/AI/Sicknesses.cs: public class Sicknesses : Modifications<Sickness, SicknessInstance>;
    // Klei/AI/Modifications.cs: public int Count { get; }
    public class Sicknesses
    {
        public int Count { get { throw Stub.Missing(); } }
    }

    // Klei/AI/ModifiersExtensions.cs: public static Amounts GetAmounts(this KMonoBehaviour cmp);
    // public static Sicknesses GetSicknesses(this KMonoBehaviour cmp)
    public static class ModifiersExtensions
    {
        public static Amounts GetAmounts(this KMonoBehaviour cmp) { throw Stub.Missing(); }
        public static Sicknesses GetSicknesses(this KMonoBehaviour cmp) { throw Stub.Missing(); }
    }
}

// ClusterUtil.cs: public static int GetMyWorldId(this KMonoBehaviour component)
public static class ClusterUtil
{
    public static int GetMyWorldId(this KMonoBehaviour component) { throw Stub.Missing(); }
}

// Generator.cs: public class Generator : KMonoBehaviour, ...; public float WattageRating { get; };
// public virtual bool IsProducingPower() (operational.IsActive)
// public ushort CircuitID { get; } (Game.Instance.circuitManager.GetCircuitID(this); 65535: no circuit)
public class Generator : KMonoBehaviour
{
    public float WattageRating { get { throw Stub.Missing(); } }
    public ushort CircuitID { get { throw Stub.Missing(); } }
    public virtual bool IsProducingPower() { throw Stub.Missing(); }
}

// EnergyConsumer.cs: public class EnergyConsumer : KMonoBehaviour, ...; public float WattsUsed { get; }
// (BaseWattageRating while operational.IsActive, else 0)
// public ushort CircuitID { get; private set; }; public virtual bool IsPowered { get; protected set; };
// public float WattsNeededWhenActive { get; }
public class EnergyConsumer : KMonoBehaviour
{
    public float WattsUsed { get { throw Stub.Missing(); } }
    public ushort CircuitID { get { throw Stub.Missing(); } private set { } }
    public virtual bool IsPowered { get { throw Stub.Missing(); } protected set { } }
    public float WattsNeededWhenActive { get { throw Stub.Missing(); } }
}

// Battery.cs: public class Battery : KMonoBehaviour, ...; public float JoulesAvailable { get; };
// public float Capacity { get; }
// public ushort CircuitID { get; }
public class Battery : KMonoBehaviour
{
    public float JoulesAvailable { get { throw Stub.Missing(); } }
    public float Capacity { get { throw Stub.Missing(); } }
    public ushort CircuitID { get { throw Stub.Missing(); } }
}

// CircuitManager.cs: public class CircuitManager (Game.Instance.circuitManager); per circuit id (ushort,
// 65535 = none): float GetWattsGeneratedByCircuit(ushort) (WattageRating of its generators producing now),
// float GetWattsUsedByCircuit(ushort) (circuitInfo.wattsUsed: drawn by its consumers in the last 200 ms,
// Sim200msLast), float GetJoulesAvailableOnCircuit(ushort), float GetMaxSafeWattageForCircuit(ushort)
// (ElectricalUtilityNetwork.GetMaxSafeWattage: its weakest wire's rating)
public class CircuitManager
{
    public float GetWattsGeneratedByCircuit(ushort circuitID) { throw Stub.Missing(); }
    public float GetWattsUsedByCircuit(ushort circuitID) { throw Stub.Missing(); }
    public float GetJoulesAvailableOnCircuit(ushort circuitID) { throw Stub.Missing(); }
    public float GetMaxSafeWattageForCircuit(ushort circuitID) { throw Stub.Missing(); }
}

// RoomProber.cs: public class RoomProber : ISim1000ms (Game.Instance.roomProber);
// public CavityInfo GetCavityForCell(int cell) (null for a solid or invalid cell)
public class RoomProber
{
    public CavityInfo GetCavityForCell(int cell) { throw Stub.Missing(); }
}

// CavityInfo.cs: public class CavityInfo; public int numCells, maxX, maxY, minX, minY; public Room room
// (null unless RoomProber made the cavity a room: numCells <= Tuning.maxRoomSize)
public class CavityInfo
{
    public int numCells;
    public int maxX;
    public int maxY;
    public int minX;
    public int minY;
    public Room room;
}

// Room.cs: public class Room : IAssignableIdentity; public CavityInfo cavity; public RoomType roomType
public class Room
{
    public CavityInfo cavity;
    public RoomType roomType;
}

// RoomType.cs: public class RoomType : Resource (Id: e.g. "Neutral", "Bedroom", "Latrine")
public class RoomType : Resource { }

// FetchChore.cs: public class FetchChore : Chore<FetchChore.StatesInstance>
public class FetchChore { }

// SingleEntityReceptacle.cs: public class SingleEntityReceptacle : Workable, IRender1000ms;
// public FetchChore GetActiveRequest { get; } (the order's fetch, null without one);
// public GameObject Occupant { get; }; public virtual void CreateOrder(Tag entityTag, Tag additionalFilterTag)
public class SingleEntityReceptacle : KMonoBehaviour
{
    public FetchChore GetActiveRequest { get { throw Stub.Missing(); } }
    public GameObject Occupant { get { throw Stub.Missing(); } }
    public virtual void CreateOrder(Tag entityTag, Tag additionalFilterTag) { throw Stub.Missing(); }
}

// PlantablePlot.cs: public class PlantablePlot : SingleEntityReceptacle, ...; public override void
// CreateOrder(Tag entityTag, Tag additionalFilterTag) (keeps the order only when ValidPlant)
public class PlantablePlot : SingleEntityReceptacle
{
    public override void CreateOrder(Tag entityTag, Tag additionalFilterTag) { throw Stub.Missing(); }
}

// MopTool.cs: public class MopTool : DragTool; public static float maxMopAmt = 150f
public class MopTool
{
    public static float maxMopAmt;
}

// ObjectLayerListItem.cs: public class ObjectLayerListItem; public ObjectLayerListItem nextItem { get; private set; };
// public GameObject gameObject { get; private set; }
public class ObjectLayerListItem
{
    public ObjectLayerListItem nextItem { get { throw Stub.Missing(); } private set { } }
    public GameObject gameObject { get { throw Stub.Missing(); } private set { } }
}

// Pickupable.cs: public class Pickupable : Workable, ...; public ObjectLayerListItem objectLayerListItem
public class Pickupable : KMonoBehaviour
{
    public ObjectLayerListItem objectLayerListItem;
}

// Clearable.cs: public class Clearable : Workable, ISaveLoadable, IRender1000ms; public bool isClearable = true;
// public void MarkForClear(bool restoringFromSave = false, bool allowWhenStored = false)
public class Clearable : KMonoBehaviour
{
    public bool isClearable;
    public void MarkForClear(bool restoringFromSave = false, bool allowWhenStored = false) { throw Stub.Missing(); }
}

// OccupyArea.cs: public class OccupyArea : KMonoBehaviour; public bool CheckIsOccupying(int checkCell)
public class OccupyArea : KMonoBehaviour
{
    public bool CheckIsOccupying(int checkCell) { throw Stub.Missing(); }
}

// HarvestDesignatable.cs: public class HarvestDesignatable : KMonoBehaviour; public OccupyArea area;
// public void SetHarvestWhenReady(bool state)
public class HarvestDesignatable : KMonoBehaviour
{
    public OccupyArea area;
    public void SetHarvestWhenReady(bool state) { throw Stub.Missing(); }
}

// WorldResourceAmountTracker.cs: public abstract class WorldResourceAmountTracker<T> : KMonoBehaviour
// where T : KMonoBehaviour; public static T Get(); public float CountAmount(Dictionary<string, float>
// unitCountByID, WorldInventory inventory, bool excludeUnreachable = true)
public abstract class WorldResourceAmountTracker<T> : KMonoBehaviour where T : KMonoBehaviour
{
    public static T Get() { throw Stub.Missing(); }
    public float CountAmount(Dictionary<string, float> unitCountByID, WorldInventory inventory, bool excludeUnreachable = true)
    {
        throw Stub.Missing();
    }
}

// RationTracker.cs: public class RationTracker : WorldResourceAmountTracker<RationTracker>, ISaveLoadable
// (amounts are Edible.Calories: calories, 1000 to the kcal)
public class RationTracker : WorldResourceAmountTracker<RationTracker> { }

// ReportManager.cs: public class ReportManager : KMonoBehaviour; public static ReportManager Instance
// { get; private set; }; public List<DailyReport> reports { get; }; public DailyReport TodaysReport { get; };
// public enum ReportType { ..., CaloriesCreated, ..., OxygenCreated, EnergyCreated, ... }
// (the stub lists only those three, by name: the glue never uses the numbers);
// public class ReportEntry { public ReportType reportType; public float accPositive, accNegative; };
// public class DailyReport { public int day; public List<ReportEntry> reportEntries; }
public class ReportManager : KMonoBehaviour
{
    public static ReportManager Instance { get { throw Stub.Missing(); } private set { } }
    public List<ReportManager.DailyReport> reports { get { throw Stub.Missing(); } }
    public ReportManager.DailyReport TodaysReport { get { throw Stub.Missing(); } }

    // ReportManager.cs: public enum ReportType { DuplicantHeader, CaloriesCreated, ... (18) OxygenCreated, EnergyCreated, ... }
    public enum ReportType
    {
        CaloriesCreated = 1,
        OxygenCreated = 18,
        EnergyCreated = 19,
    }

    // ReportManager.cs: public class ReportEntry; public ReportType reportType; public float accPositive; public float accNegative;
    public class ReportEntry
    {
        public ReportManager.ReportType reportType;
        public float accPositive;
        public float accNegative;
    }

    // ReportManager.cs: public class DailyReport; public int day; public List<ReportEntry> reportEntries
    public class DailyReport
    {
        public int day;
        public List<ReportManager.ReportEntry> reportEntries;
    }
}

// KSelectableExtensions.cs: public static string GetProperName(this Component cmp)
public static class KSelectableExtensions
{
    public static string GetProperName(this Component cmp) { throw Stub.Missing(); }
}

// KPrefabIDExtensions.cs: public static bool HasTag(this Component cmp, Tag tag)
public static class KPrefabIDExtensions
{
    public static bool HasTag(this Component cmp, Tag tag) { throw Stub.Missing(); }
}

// GameTagExtensions.cs: public static string ProperName(this Tag tag)
public static class GameTagExtensions
{
    public static string ProperName(this Tag tag) { throw Stub.Missing(); }
}

// GameTags.cs: public class GameTags; public static readonly Tag Breathable; public static readonly Tag CropSeed;
// public static class Creatures { public static readonly Tag Wild; }
public class GameTags
{
    public static readonly Tag Breathable;
    public static readonly Tag CropSeed;

    public static class Creatures
    {
        public static readonly Tag Wild;
    }
}

// Brain.cs: public class Brain : KMonoBehaviour. MinionBrain.cs: public class MinionBrain : Brain.
// CreatureBrain.cs: public class CreatureBrain : Brain; public Tag species;
public class Brain : KMonoBehaviour { }

public class MinionBrain : Brain { }

public class CreatureBrain : Brain
{
    public Tag species;
}

// Geyser.cs: public class Geyser : StateMachineComponent<Geyser.StatesInstance>, ... (a KMonoBehaviour);
// private ElementEmitter emitter (not declared here: private); public
// GeyserConfigurator.GeyserInstanceConfiguration configuration; public bool ShouldGoDormant();
// public float RemainingEruptTime()
public class Geyser : KMonoBehaviour
{
    public GeyserConfigurator.GeyserInstanceConfiguration configuration;
    public bool ShouldGoDormant() { throw Stub.Missing(); }
    public float RemainingEruptTime() { throw Stub.Missing(); }
}

// GeyserConfigurator.cs: public class GeyserInstanceConfiguration { public float GetEmitRate(); public SimHashes GetElement(); }
public class GeyserConfigurator : KMonoBehaviour
{
    public class GeyserInstanceConfiguration
    {
        public float GetEmitRate() { throw Stub.Missing(); }
        public SimHashes GetElement() { throw Stub.Missing(); }
    }
}

// NotificationManager.cs: public static NotificationManager Instance { get; private set; };
// public event Action<Notification> notificationAdded; public event Action<Notification> notificationRemoved;
// (no method lists the notifications)
public class NotificationManager : KMonoBehaviour
{
    public static NotificationManager Instance { get { throw Stub.Missing(); } private set { } }
    public event Action<Notification> notificationAdded { add { throw Stub.Missing(); } remove { throw Stub.Missing(); } }
    public event Action<Notification> notificationRemoved { add { throw Stub.Missing(); } remove { throw Stub.Missing(); } }
}

// Notification.cs: public NotificationType Type { get; set; }; public string titleText { get; private set; };
// public string NotifierName { get; }
public class Notification
{
    public NotificationType Type { get { throw Stub.Missing(); } set { } }
    public string titleText { get { throw Stub.Missing(); } private set { } }
    public string NotifierName { get { throw Stub.Missing(); } }
}

// NotificationType.cs: Good = 2, BadMinor, Bad = 1, Neutral = 4, Tutorial, Messages, DuplicantThreatening,
// Event, MessageImportant, Custom
public enum NotificationType
{
    Good = 2,
    BadMinor,
    Bad = 1,
    Neutral = 4,
    Tutorial,
    Messages,
    DuplicantThreatening,
    Event,
    MessageImportant,
    Custom,
}

// DigTool.cs: public class DigTool : DragTool; public static GameObject PlaceDig(int cell, int animationDelay = 0)
public class DigTool
{
    public static GameObject PlaceDig(int cell, int animationDelay = 0) { throw Stub.Missing(); }
}

// Deconstructable.cs: public class Deconstructable : Workable (a KMonoBehaviour); public void QueueDeconstruction(bool userTriggered)
public class Deconstructable : KMonoBehaviour
{
    public void QueueDeconstruction(bool userTriggered) { throw Stub.Missing(); }
}

// Prioritizable.cs: public void SetMasterPriority(PrioritySetting priority)
public class Prioritizable : KMonoBehaviour
{
    public void SetMasterPriority(PrioritySetting priority) { throw Stub.Missing(); }
}

// PrioritySetting.cs: public struct PrioritySetting : IComparable<PrioritySetting>;
// public PrioritySetting(PriorityScreen.PriorityClass priority_class, int priority_value)
public struct PrioritySetting
{
    public PrioritySetting(PriorityScreen.PriorityClass priority_class, int priority_value) { throw Stub.Missing(); }
}

// PriorityScreen.cs: public class PriorityScreen : KScreen; public enum PriorityClass
// { idle = -1, basic, high, personalNeeds, topPriority, compulsory }
public class PriorityScreen : KScreen
{
    public enum PriorityClass
    {
        idle = -1,
        basic,
        high,
        personalNeeds,
        topPriority,
        compulsory,
    }
}

// Schedulable.cs: public class Schedulable : KMonoBehaviour
public class Schedulable : KMonoBehaviour { }

// ScheduleGroup.cs: public class ScheduleGroup : Resource
public class ScheduleGroup : Resource { }

// Schedule.cs: public class Schedule : ISaveLoadable, IListableOption; public string name;
// public void SetBlockGroup(int idx, ScheduleGroup group); public List<ScheduleBlock> GetBlocks();
// public void Assign(Schedulable schedulable); public void Unassign(Schedulable schedulable)
public class Schedule
{
    public string name;
    public void SetBlockGroup(int idx, ScheduleGroup group) { throw Stub.Missing(); }
    public List<ScheduleBlock> GetBlocks() { throw Stub.Missing(); }
    public void Assign(Schedulable schedulable) { throw Stub.Missing(); }
    public void Unassign(Schedulable schedulable) { throw Stub.Missing(); }
}

// ScheduleBlock.cs: public class ScheduleBlock; public string GroupId { get; set; }
public class ScheduleBlock
{
    public string GroupId { get { throw Stub.Missing(); } }
}

// ScheduleManager.cs: public static ScheduleManager Instance; public Schedule GetSchedule(Schedulable schedulable);
// public List<Schedule> GetSchedules(); public Schedule AddSchedule(List<ScheduleGroup> groups,
// string name = null, bool alarmOn = false)
public class ScheduleManager : KMonoBehaviour
{
    public static ScheduleManager Instance;
    public Schedule GetSchedule(Schedulable schedulable) { throw Stub.Missing(); }
    public List<Schedule> GetSchedules() { throw Stub.Missing(); }
    public Schedule AddSchedule(List<ScheduleGroup> groups, string name = null, bool alarmOn = false) { throw Stub.Missing(); }
}

namespace KMod
{
    // KMod/UserMod2.cs: public class UserMod2; public string path { get; set; };
    // public virtual void OnLoad(Harmony harmony); public virtual void OnAllModsLoaded(Harmony harmony,
    // IReadOnlyList<Mod> mods). No OnUnload: the game never unloads a mod's assembly.
    public class UserMod2
    {
        public string path { get { throw Stub.Missing(); } set { } }
        public virtual void OnLoad(HarmonyLib.Harmony harmony) { throw Stub.Missing(); }
    }
}
