package dev.mcb.world.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.destroystokyo.paper.event.block.BlockDestroyEvent;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bukkit.Material;
import org.bukkit.block.Block;
import org.bukkit.block.BlockFace;
import org.bukkit.block.BlockState;
import org.bukkit.block.data.Bisected;
import org.bukkit.block.data.BlockData;
import org.bukkit.block.data.Levelled;
import org.bukkit.block.data.Openable;
import org.bukkit.block.data.type.Dispenser;
import org.bukkit.block.data.type.Door;
import org.bukkit.block.data.type.Farmland;
import org.bukkit.block.data.type.Fence;
import org.bukkit.event.Event;
import org.bukkit.event.block.Action;
import org.bukkit.ExplosionResult;
import org.bukkit.event.block.BlockBreakEvent;
import org.bukkit.event.block.BlockBurnEvent;
import org.bukkit.event.block.BlockExplodeEvent;
import org.bukkit.event.block.BlockFadeEvent;
import org.bukkit.event.block.BlockFromToEvent;
import org.bukkit.event.block.LeavesDecayEvent;
import org.bukkit.event.block.BlockDispenseEvent;
import org.bukkit.event.block.BlockFertilizeEvent;
import org.bukkit.event.block.BlockFormEvent;
import org.bukkit.event.block.BlockGrowEvent;
import org.bukkit.event.block.BlockPlaceEvent;
import org.bukkit.event.block.BlockSpreadEvent;
import org.bukkit.event.block.CauldronLevelChangeEvent;
import org.bukkit.event.block.EntityBlockFormEvent;
import org.bukkit.event.block.FluidLevelChangeEvent;
import org.bukkit.event.block.MoistureChangeEvent;
import org.bukkit.event.block.SpongeAbsorbEvent;
import org.bukkit.event.block.TNTPrimeEvent;
import org.bukkit.event.player.PlayerInteractEvent;
import org.bukkit.event.world.PortalCreateEvent;
import org.bukkit.inventory.EquipmentSlot;
import org.bukkit.inventory.ItemStack;
import org.bukkit.util.Vector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mockbukkit.mockbukkit.entity.PlayerMock;

/**
 * Every event of issue 11 item 3 that MockBukkit can fire, through the real plugin: the event is called
 * as the game calls it (before or after the world changes, as Paper does), the test then changes the
 * world as the game would, ticks once, and reads the log back over the world protocol
 * ({@code events_since}): the source, the player and the before/after states.
 */
class ObservedEventsTest {
    PluginHarness h;
    PlayerMock alice;
    String cursor;

    @BeforeEach
    void start() throws Exception {
        h = PluginHarness.start();
        h.world.getChunkAt(0, 0); // players keep the chunks around them loaded
        alice = h.server.addPlayer("alice");
        cursor = h.rpcOk("service", "events_since", "{\"cursor\":\"\"}").get("nextCursor").getAsString();
    }

    @AfterEach
    void stop() {
        h.close();
    }

    private Block at(int x, int y, int z) {
        return h.world.getBlockAt(x, y, z);
    }

    private String state(int x, int y, int z) {
        return at(x, y, z).getBlockData().getAsString();
    }

    private void call(Event e) {
        h.server.getPluginManager().callEvent(e);
    }

    private BlockState newState(Block b, BlockData data) {
        BlockState s = b.getState();
        s.setBlockData(data);
        return s;
    }

    /** Tick once (the next-tick re-read), then the events since the test started, by "x,y,z". */
    private Map<String, JsonObject> events() throws Exception {
        h.tick();
        JsonObject r = h.rpcOk("service", "events_since", "{\"cursor\":\"" + cursor + "\"}");
        Map<String, JsonObject> out = new LinkedHashMap<>();
        for (JsonElement el : r.getAsJsonArray("events")) {
            JsonObject e = el.getAsJsonObject();
            out.put(e.get("x").getAsInt() + "," + e.get("y").getAsInt() + "," + e.get("z").getAsInt(), e);
        }
        return out;
    }

    private static void assertEvent(JsonObject e, String source, String before, String after) {
        assertEquals(source, e.get("source").getAsString(), e.toString());
        assertEquals(before, e.get("before").getAsString(), e.toString());
        assertEquals(after, e.get("after").getAsString(), e.toString());
    }

    private String aliceId() {
        return alice.getUniqueId().toString();
    }

    @Test
    void formSpreadAndEntityFormEachReachTheirOwnHandler() throws Exception {
        // snow forming: BlockFormEvent has its own handler list (a BlockGrowEvent listener never sees it)
        String air = state(0, 70, 0);
        Block snow = at(0, 70, 0);
        call(new BlockFormEvent(snow, newState(snow, Material.SNOW.createBlockData())));
        snow.setType(Material.SNOW);
        // grass spreading onto dirt: BlockSpreadEvent, its own list too
        Block dirt = at(2, 64, 0);
        dirt.setType(Material.DIRT);
        String dirtState = state(2, 64, 0);
        call(new BlockSpreadEvent(dirt, at(3, 64, 0), newState(dirt, Material.GRASS_BLOCK.createBlockData())));
        dirt.setType(Material.GRASS_BLOCK);
        // frost walker: EntityBlockFormEvent (no list of its own: the BlockFormEvent handler gets it)
        Block water = at(5, 70, 0);
        water.setType(Material.WATER);
        String waterState = state(5, 70, 0);
        call(new EntityBlockFormEvent(alice, water, newState(water, Material.FROSTED_ICE.createBlockData())));
        water.setType(Material.FROSTED_ICE);
        Map<String, JsonObject> ev = events();
        assertEvent(ev.get("0,70,0"), "environment", air, state(0, 70, 0));
        assertEvent(ev.get("2,64,0"), "environment", dirtState, state(2, 64, 0));
        assertEvent(ev.get("5,70,0"), "player", waterState, state(5, 70, 0));
        assertEquals(aliceId(), ev.get("5,70,0").get("playerId").getAsString());
        assertEquals(3, ev.size(), ev.keySet().toString());
        // issue 32: the environment's cause, the player's name
        assertEquals("form", ev.get("0,70,0").get("cause").getAsString());
        assertEquals("growth", ev.get("2,64,0").get("cause").getAsString());
        assertEquals("alice", ev.get("5,70,0").get("playerName").getAsString());
        assertEquals("", ev.get("5,70,0").get("cause").getAsString());
    }

    /**
     * Issue 32: each environment event carries the cause the event Paper fires names (BlockListener's
     * javadoc cites the paper-api sources): an explosion and the torch it knocks off, fire burning a block and
     * fire spreading (BlockSpreadEvent whose source is fire), ice melting (BlockFadeEvent), leaves decaying,
     * water flowing; a player's break carries the player's name and no cause.
     */
    @Test
    void environmentEventsCarryTheirCauseAndPlayersTheirName() throws Exception {
        at(0, 64, 0).setType(Material.STONE);
        at(0, 65, 0).setType(Material.TORCH);
        at(1, 64, 0).setType(Material.STONE);
        Block bomb = at(2, 64, 0);
        bomb.setType(Material.RESPAWN_ANCHOR);
        call(new BlockExplodeEvent(bomb, bomb.getState(), new ArrayList<>(List.of(at(0, 64, 0), at(1, 64, 0))), 1f,
                ExplosionResult.DESTROY));
        for (Block b : List.of(at(0, 64, 0), at(0, 65, 0), at(1, 64, 0), bomb)) {
            b.setType(Material.AIR);
        }
        at(4, 64, 0).setType(Material.OAK_PLANKS);
        call(new BlockBurnEvent(at(4, 64, 0), at(4, 65, 0)));
        at(4, 64, 0).setType(Material.AIR);
        at(4, 65, 0).setType(Material.FIRE); // the spread's source
        call(new BlockSpreadEvent(at(6, 65, 0), at(4, 65, 0), newState(at(6, 65, 0), Material.FIRE.createBlockData())));
        at(6, 65, 0).setType(Material.FIRE);
        at(8, 64, 0).setType(Material.ICE);
        call(new BlockFadeEvent(at(8, 64, 0), newState(at(8, 64, 0), Material.WATER.createBlockData())));
        at(8, 64, 0).setType(Material.WATER);
        at(10, 70, 0).setType(Material.OAK_LEAVES);
        call(new LeavesDecayEvent(at(10, 70, 0)));
        at(10, 70, 0).setType(Material.AIR);
        call(new BlockFromToEvent(at(12, 70, 0), at(12, 69, 0)));
        at(12, 69, 0).setType(Material.WATER);
        at(14, 64, 0).setType(Material.DIRT);
        call(new BlockBreakEvent(at(14, 64, 0), alice));
        at(14, 64, 0).setType(Material.AIR);
        Map<String, JsonObject> ev = events();
        Map<String, String> causes = new LinkedHashMap<>();
        for (String pos : List.of("0,64,0", "0,65,0", "1,64,0", "2,64,0", "4,64,0", "6,65,0", "8,64,0", "10,70,0",
                "12,69,0", "14,64,0")) {
            JsonObject e = ev.get(pos);
            causes.put(pos, e == null ? "(none)" : e.get("source").getAsString() + ":" + e.get("cause").getAsString()
                    + ":" + e.get("playerName").getAsString());
        }
        assertEquals(Map.of("0,64,0", "environment:explosion:", "0,65,0", "environment:explosion:",
                "1,64,0", "environment:explosion:", "2,64,0", "environment:explosion:", "4,64,0", "environment:fire:",
                "6,65,0", "environment:fire:", "8,64,0", "environment:fade:", "10,70,0", "environment:decay:",
                "12,69,0", "environment:flow:", "14,64,0", "player::alice"), causes);
        assertEquals("fire", BlockListener.spreadCause(Material.SOUL_FIRE));
        assertEquals("growth", BlockListener.spreadCause(Material.MYCELIUM));
    }

    @Test
    void boneMealRecordsTheStatesBeforeNotTheListedNewStates() throws Exception {
        // the event lists what bone meal WILL place; the world still holds the old states when it fires
        Block sapling = at(0, 65, 0);
        sapling.setType(Material.OAK_SAPLING);
        String before0 = state(0, 65, 0);
        String before1 = state(1, 65, 0);
        List<BlockState> grown = new ArrayList<>(List.of(newState(at(0, 65, 0), Material.OAK_LOG.createBlockData()),
                newState(at(1, 65, 0), Material.SHORT_GRASS.createBlockData())));
        call(new BlockFertilizeEvent(sapling, alice, grown));
        for (BlockState s : grown) {
            s.update(true); // the game places them after the event
        }
        Map<String, JsonObject> ev = events();
        assertEvent(ev.get("0,65,0"), "player", before0, state(0, 65, 0));
        assertEvent(ev.get("1,65,0"), "player", before1, state(1, 65, 0));
        assertEquals(aliceId(), ev.get("1,65,0").get("playerId").getAsString());
    }

    @Test
    void aSpongeRecordsTheWaterItTookAndItsOwnChange() throws Exception {
        Block sponge = at(0, 70, 0);
        sponge.setType(Material.SPONGE);
        at(0, 70, 1).setType(Material.WATER);
        at(0, 70, 2).setType(Material.WATER);
        String water = state(0, 70, 1);
        // the event lists the drained positions with their NEW states (air)
        List<BlockState> drained = new ArrayList<>(List.of(newState(at(0, 70, 1), Material.AIR.createBlockData()),
                newState(at(0, 70, 2), Material.AIR.createBlockData())));
        call(new SpongeAbsorbEvent(sponge, drained));
        at(0, 70, 1).setType(Material.AIR);
        at(0, 70, 2).setType(Material.AIR);
        sponge.setType(Material.WET_SPONGE);
        Map<String, JsonObject> ev = events();
        assertEvent(ev.get("0,70,1"), "environment", water, "minecraft:air");
        assertEvent(ev.get("0,70,2"), "environment", water, "minecraft:air");
        assertEquals("minecraft:wet_sponge", ev.get("0,70,0").get("after").getAsString().replaceAll("\\[.*", ""));
    }

    @Test
    void breakingTheLowerHalfOfADoorRecordsBothHalvesAsThePlayers() throws Exception {
        Door lower = (Door) Material.OAK_DOOR.createBlockData();
        lower.setHalf(Bisected.Half.BOTTOM);
        Door upper = (Door) Material.OAK_DOOR.createBlockData();
        upper.setHalf(Bisected.Half.TOP);
        at(0, 65, 0).setBlockData(lower);
        at(0, 66, 0).setBlockData(upper);
        String l = state(0, 65, 0);
        String u = state(0, 66, 0);
        call(new BlockBreakEvent(at(0, 65, 0), alice)); // fired before the block goes
        at(0, 65, 0).setType(Material.AIR);
        at(0, 66, 0).setType(Material.AIR); // the game removes the other half without an event
        Map<String, JsonObject> ev = events();
        assertEvent(ev.get("0,65,0"), "player", l, "minecraft:air");
        assertEvent(ev.get("0,66,0"), "player", u, "minecraft:air");
        assertEquals(aliceId(), ev.get("0,66,0").get("playerId").getAsString());
    }

    @Test
    void aFenceChangingShapeNextToAPlacedBlockIsRecorded() throws Exception {
        Fence fence = (Fence) Material.OAK_FENCE.createBlockData();
        at(1, 65, 0).setBlockData(fence);
        String fenceBefore = state(1, 65, 0);
        String air = state(0, 65, 0);
        BlockState replaced = at(0, 65, 0).getState();
        at(0, 65, 0).setType(Material.STONE); // BlockPlaceEvent fires after the block is in the world
        call(new BlockPlaceEvent(at(0, 65, 0), replaced, at(0, 64, 0), new ItemStack(Material.STONE), alice, true,
                EquipmentSlot.HAND));
        Fence connected = (Fence) Material.OAK_FENCE.createBlockData();
        connected.setFace(BlockFace.WEST, true);
        at(1, 65, 0).setBlockData(connected); // the shape update, no event
        Map<String, JsonObject> ev = events();
        assertEvent(ev.get("0,65,0"), "player", air, "minecraft:stone");
        assertEvent(ev.get("1,65,0"), "player", fenceBefore, state(1, 65, 0));
    }

    @Test
    void playersTogglingGatesAndTrapdoorsArePlayers() throws Exception {
        Block gate = at(0, 65, 0);
        gate.setType(Material.OAK_FENCE_GATE);
        String closed = state(0, 65, 0);
        call(new PlayerInteractEvent(alice, Action.RIGHT_CLICK_BLOCK, null, gate, BlockFace.UP));
        Openable open = (Openable) gate.getBlockData();
        open.setOpen(true);
        gate.setBlockData(open);
        // a click that changes nothing records nothing
        call(new PlayerInteractEvent(alice, Action.RIGHT_CLICK_BLOCK, null, at(3, 64, 3), BlockFace.UP));
        Map<String, JsonObject> ev = events();
        assertEvent(ev.get("0,65,0"), "player", closed, state(0, 65, 0));
        assertEquals(1, ev.size(), ev.keySet().toString());
    }

    @Test
    void tntPrimedByAPlayerAndAPortalLitByAPlayer() throws Exception {
        Block tnt = at(0, 65, 0);
        tnt.setType(Material.TNT);
        String primed = state(0, 65, 0);
        call(new TNTPrimeEvent(tnt, TNTPrimeEvent.PrimeCause.PLAYER, alice, null));
        tnt.setType(Material.AIR);
        // the portal event lists the NEW portal blocks; the world holds air when it fires
        String air = state(4, 66, 0);
        List<BlockState> portal = new ArrayList<>(List.of(newState(at(4, 66, 0), Material.NETHER_PORTAL.createBlockData()),
                newState(at(4, 67, 0), Material.NETHER_PORTAL.createBlockData())));
        call(new PortalCreateEvent(portal, h.world, alice, PortalCreateEvent.CreateReason.FIRE));
        for (BlockState s : portal) {
            s.update(true);
        }
        Map<String, JsonObject> ev = events();
        assertEvent(ev.get("0,65,0"), "player", primed, "minecraft:air");
        assertEvent(ev.get("4,66,0"), "player", air, state(4, 66, 0));
        assertEvent(ev.get("4,67,0"), "player", air, state(4, 67, 0));
    }

    @Test
    void dispensersCauldronsFarmlandFluidsGrowthAndPoppingBlocks() throws Exception {
        // a dispenser facing east places water in front of it
        Dispenser d = (Dispenser) Material.DISPENSER.createBlockData();
        d.setFacing(BlockFace.EAST);
        at(0, 65, 0).setBlockData(d);
        String air = state(1, 65, 0);
        call(new BlockDispenseEvent(at(0, 65, 0), new ItemStack(Material.WATER_BUCKET), new Vector()));
        at(1, 65, 0).setType(Material.WATER);
        // a player fills a cauldron
        Block cauldron = at(3, 65, 0);
        cauldron.setType(Material.CAULDRON);
        String empty = state(3, 65, 0);
        Levelled full = (Levelled) Material.WATER_CAULDRON.createBlockData();
        full.setLevel(3);
        call(new CauldronLevelChangeEvent(cauldron, alice, CauldronLevelChangeEvent.ChangeReason.BUCKET_EMPTY,
                newState(cauldron, full)));
        cauldron.setBlockData(full);
        // farmland gets wet
        Block farmland = at(5, 64, 0);
        farmland.setType(Material.FARMLAND);
        String dry = state(5, 64, 0);
        Farmland wet = (Farmland) Material.FARMLAND.createBlockData();
        wet.setMoisture(7);
        call(new MoistureChangeEvent(farmland, newState(farmland, wet)));
        farmland.setBlockData(wet);
        // flowing water drops a level
        Block flow = at(7, 65, 0);
        Levelled w1 = (Levelled) Material.WATER.createBlockData();
        w1.setLevel(1);
        flow.setBlockData(w1);
        String level1 = state(7, 65, 0);
        Levelled w2 = (Levelled) Material.WATER.createBlockData();
        w2.setLevel(2);
        call(new FluidLevelChangeEvent(flow, w2));
        flow.setBlockData(w2);
        // wheat grows (BlockGrowEvent keeps its own handler)
        Block wheat = at(9, 65, 0);
        wheat.setType(Material.WHEAT);
        String young = state(9, 65, 0);
        org.bukkit.block.data.Ageable older = (org.bukkit.block.data.Ageable) Material.WHEAT.createBlockData();
        older.setAge(1);
        call(new BlockGrowEvent(wheat, newState(wheat, older)));
        wheat.setBlockData(older);
        // a torch pops off (Paper's BlockDestroyEvent)
        Block torch = at(11, 65, 0);
        torch.setType(Material.TORCH);
        String lit = state(11, 65, 0);
        call(new BlockDestroyEvent(torch, Material.AIR.createBlockData(), Material.TORCH.createBlockData(), 0, true));
        torch.setType(Material.AIR);
        Map<String, JsonObject> ev = events();
        assertEvent(ev.get("1,65,0"), "environment", air, state(1, 65, 0));
        assertEvent(ev.get("3,65,0"), "player", empty, state(3, 65, 0));
        assertEquals(aliceId(), ev.get("3,65,0").get("playerId").getAsString());
        assertEvent(ev.get("5,64,0"), "environment", dry, state(5, 64, 0));
        assertEvent(ev.get("7,65,0"), "environment", level1, state(7, 65, 0));
        assertEvent(ev.get("9,65,0"), "environment", young, state(9, 65, 0));
        assertEvent(ev.get("11,65,0"), "environment", lit, "minecraft:air");
        assertTrue(ev.values().stream().noneMatch(e -> e.get("before").getAsString().equals(e.get("after").getAsString())),
                "only real changes are logged");
    }

    /**
     * A piston pushing a block: BlockPistonExtendEvent fires before the move (PistonBaseBlock#moveBlocks), the
     * positions then hold moving_piston, and two ticks later PistonMovingBlockEntity places the final states
     * with no event (PistonMovingBlockEntity.java.patch: level.setBlock): the events record where the blocks
     * came to rest, never moving_piston.
     */
    @Test
    void aPistonMoveIsRecordedWhereTheBlocksComeToRest() throws Exception {
        BlockData moving = org.bukkit.Bukkit.createBlockData("minecraft:moving_piston[facing=east,type=normal]");
        Block piston = at(0, 65, 0);
        piston.setBlockData(org.bukkit.Bukkit.createBlockData("minecraft:piston[extended=false,facing=east]"));
        Block stone = at(1, 65, 0);
        stone.setType(Material.STONE);
        String air = state(2, 65, 0);
        call(new org.bukkit.event.block.BlockPistonExtendEvent(piston, List.of(stone), BlockFace.EAST));
        piston.setBlockData(org.bukkit.Bukkit.createBlockData("minecraft:piston[extended=true,facing=east]"));
        stone.setBlockData(moving);
        at(2, 65, 0).setBlockData(moving);
        h.tick();
        Map<String, JsonObject> ev = events();
        for (JsonObject e : ev.values()) {
            assertTrue(!e.get("after").getAsString().startsWith("minecraft:moving_piston"), ev.toString());
        }
        String head = "minecraft:piston_head[facing=east,short=false,type=normal]";
        stone.setBlockData(org.bukkit.Bukkit.createBlockData(head)); // no event: the block entity lands them
        at(2, 65, 0).setType(Material.STONE);
        ev = events();
        assertEvent(ev.get("1,65,0"), "environment", "minecraft:stone", state(1, 65, 0));
        assertTrue(state(1, 65, 0).startsWith("minecraft:piston_head"), state(1, 65, 0));
        assertEvent(ev.get("2,65,0"), "environment", air, "minecraft:stone");
    }

    /** The full state (with the block entity's data) the plugin reads at a position. */
    private String full(int x, int y, int z) {
        return PaperBlockEntities.read(at(x, y, z), state(x, y, z));
    }

    /**
     * A hopper pulling an item out of a chest, and a furnace smelting: the game changes the contents with no
     * block change; InventoryMoveItemEvent and FurnaceSmeltEvent (which arrives at the BlockCookEvent handler:
     * it has no handler list of its own) precede the changes, and both are recorded as environment.
     */
    @Test
    void containersTheGameFillsAndEmptiesAreObserved() throws Exception {
        Block chestBlock = at(4, 65, 0);
        chestBlock.setType(Material.CHEST);
        org.bukkit.block.Chest chest = (org.bukkit.block.Chest) chestBlock.getState();
        chest.getBlockInventory().setItem(0, new ItemStack(Material.BREAD, 2));
        Block hopperBlock = at(4, 64, 0);
        hopperBlock.setType(Material.HOPPER);
        org.bukkit.inventory.Inventory hopper = ((org.bukkit.block.Hopper) hopperBlock.getState()).getInventory();
        Block furnaceBlock = at(6, 65, 0);
        furnaceBlock.setType(Material.FURNACE);
        org.bukkit.inventory.FurnaceInventory furnace = ((org.bukkit.block.Furnace) furnaceBlock.getState()).getInventory();
        furnace.setSmelting(new ItemStack(Material.BEEF, 1));
        String chestBefore = full(4, 65, 0);
        String hopperBefore = full(4, 64, 0);
        String furnaceBefore = full(6, 65, 0);
        cursor = h.rpcOk("service", "events_since", "{\"cursor\":\"\"}").get("nextCursor").getAsString();

        call(new org.bukkit.event.inventory.InventoryMoveItemEvent(chest.getBlockInventory(),
                new ItemStack(Material.BREAD, 1), hopper, false));
        chest.getBlockInventory().setItem(0, new ItemStack(Material.BREAD, 1));
        hopper.setItem(0, new ItemStack(Material.BREAD, 1));
        call(new org.bukkit.event.inventory.FurnaceSmeltEvent(furnaceBlock, new ItemStack(Material.BEEF, 1),
                new ItemStack(Material.COOKED_BEEF, 1)));
        furnace.setSmelting(null);
        furnace.setResult(new ItemStack(Material.COOKED_BEEF, 1));

        Map<String, JsonObject> ev = events();
        assertEquals(3, ev.size(), ev.toString());
        assertEvent(ev.get("4,65,0"), "environment", chestBefore, full(4, 65, 0));
        assertTrue(full(4, 65, 0).contains("\"count\":1"), full(4, 65, 0));
        assertEvent(ev.get("4,64,0"), "environment", hopperBefore, full(4, 64, 0));
        assertEvent(ev.get("6,65,0"), "environment", furnaceBefore, full(6, 65, 0));
        assertTrue(full(6, 65, 0).contains("minecraft:cooked_beef"), full(6, 65, 0));
    }
}
