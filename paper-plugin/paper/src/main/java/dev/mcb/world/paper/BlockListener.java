package dev.mcb.world.paper;

import com.destroystokyo.paper.event.block.BlockDestroyEvent;
import dev.mcb.world.core.Cause;
import dev.mcb.world.core.Source;
import dev.mcb.world.core.WorldHostCore;
import java.util.List;
import org.bukkit.World;
import org.bukkit.block.Block;
import org.bukkit.block.BlockFace;
import org.bukkit.block.BlockState;
import org.bukkit.block.data.Directional;
import org.bukkit.entity.Entity;
import org.bukkit.entity.Player;
import org.bukkit.entity.Projectile;
import org.bukkit.event.EventHandler;
import org.bukkit.event.EventPriority;
import org.bukkit.event.Listener;
import org.bukkit.event.block.Action;
import org.bukkit.event.block.BlockBreakEvent;
import org.bukkit.event.block.BlockBurnEvent;
import org.bukkit.event.block.BlockCookEvent;
import org.bukkit.event.block.BlockDispenseEvent;
import org.bukkit.event.block.BlockExplodeEvent;
import org.bukkit.event.block.BlockFadeEvent;
import org.bukkit.event.block.BlockFertilizeEvent;
import org.bukkit.event.block.BlockFormEvent;
import org.bukkit.event.block.BlockFromToEvent;
import org.bukkit.event.block.BlockGrowEvent;
import org.bukkit.event.block.BlockIgniteEvent;
import org.bukkit.event.block.BlockMultiPlaceEvent;
import org.bukkit.event.block.BlockPistonExtendEvent;
import org.bukkit.event.block.BlockPistonRetractEvent;
import org.bukkit.event.block.BlockPlaceEvent;
import org.bukkit.event.block.BlockSpreadEvent;
import org.bukkit.event.block.CauldronLevelChangeEvent;
import org.bukkit.event.block.EntityBlockFormEvent;
import org.bukkit.event.block.FluidLevelChangeEvent;
import org.bukkit.event.block.LeavesDecayEvent;
import org.bukkit.event.block.MoistureChangeEvent;
import org.bukkit.event.block.SpongeAbsorbEvent;
import org.bukkit.event.block.TNTPrimeEvent;
import org.bukkit.event.entity.EntityChangeBlockEvent;
import org.bukkit.event.entity.EntityExplodeEvent;
import org.bukkit.event.inventory.BrewEvent;
import org.bukkit.event.inventory.BrewingStandFuelEvent;
import org.bukkit.event.inventory.FurnaceBurnEvent;
import org.bukkit.event.inventory.InventoryMoveItemEvent;
import org.bukkit.event.inventory.InventoryPickupItemEvent;
import org.bukkit.event.player.PlayerBucketEmptyEvent;
import org.bukkit.event.player.PlayerBucketFillEvent;
import org.bukkit.event.player.PlayerInteractEvent;
import org.bukkit.event.world.PortalCreateEvent;
import org.bukkit.event.world.StructureGrowEvent;

/**
 * Block events → the core's observation buffer (README, "Observed events"). MONITOR priority, cancelled
 * events ignored; each handler only picks the positions, the state before and the cause; the core reads
 * the states after on the next tick and records only what really changed.
 *
 * <p>Bukkit delivers an event only to listeners of the class that declares its handler list: a
 * {@link BlockGrowEvent} listener never sees {@link BlockFormEvent} or {@link BlockSpreadEvent} (each has
 * its own list), so each has its own handler here; {@link EntityBlockFormEvent} has no list of its own
 * and arrives at the {@link BlockFormEvent} handler.
 *
 * <p>"around": the position and its six neighbours are re-read, which records the dependent changes the
 * game makes without an event (the other half of doors and beds, attached blocks that pop off, fences,
 * panes, walls and stairs changing shape), with the same cause. Events that list the blocks they are
 * about to place as new states (bone meal, sponges, structures, portals) are reported with the state the
 * world still holds when the event fires (the game writes them after the event), never with the listed
 * new state.
 *
 * <p>Pistons: the moved blocks hold {@code moving_piston} for two ticks and land with no event; the core
 * re-reads a position in motion until it comes to rest (Observations#inMotion). Containers the game fills or
 * empties (hoppers, droppers, furnaces, brewing stands, campfires) are re-read after the events that precede
 * those changes, as {@code environment}.
 *
 * <p>Who: a player's change carries the player's id and name ({@link Player#getName()}); an environment
 * change carries its {@link Cause}, taken from the event Paper fires for it (the javadoc of each event in
 * PaperMC/Paper paper-api/src/main/java/org/bukkit/event/block/: BlockFadeEvent "fades, melts or disappears":
 * snow and ice melting, fire burning out, coral dying; BlockFormEvent "formed ... based on world conditions";
 * BlockSpreadEvent "Mushrooms spreading. Fire spreading." — fire when its source block is fire, else growth;
 * BlockBurnEvent, BlockIgniteEvent: fire; LeavesDecayEvent: decay; BlockFromToEvent, FluidLevelChangeEvent,
 * SpongeAbsorbEvent: flow; BlockGrowEvent, StructureGrowEvent, BlockFertilizeEvent: growth;
 * BlockExplodeEvent, EntityExplodeEvent, TNTPrimeEvent: explosion; BlockPistonExtendEvent/RetractEvent:
 * piston). Everything else the game does by itself is {@code other}.
 */
final class BlockListener implements Listener {
    private final WorldHostCore core;
    private final World world;

    BlockListener(WorldHostCore core, World world) {
        this.core = core;
        this.world = world;
    }

    private boolean mine(World w) {
        return w.equals(world);
    }

    private static String id(Player p) {
        return p == null ? "" : p.getUniqueId().toString();
    }

    private static String name(Player p) {
        return p == null ? "" : p.getName();
    }

    private static Source by(Player p) {
        return p != null ? Source.PLAYER : Source.ENVIRONMENT;
    }

    /** The player behind an entity (the entity itself, or the shooter of a projectile), or null. */
    static Player playerOf(Entity e) {
        if (e instanceof Player p) {
            return p;
        }
        if (e instanceof Projectile pr && pr.getShooter() instanceof Player p) {
            return p;
        }
        return null;
    }

    /** A block's full state: block state plus its block entity's data (the core compares both). */
    private static String full(Block b) {
        return PaperBlockEntities.read(b, b.getBlockData().getAsString());
    }

    /** Only this position (fluids, levels): its current state is the state before. A player's change has no cause. */
    private void later(Block b, Source source, Player p, String cause) {
        if (mine(b.getWorld())) {
            core.observeLater(b.getX(), b.getY(), b.getZ(), full(b), source, id(p), name(p),
                    source == Source.ENVIRONMENT ? cause : "");
        }
    }

    /** The position and its six neighbours; the block's current state is the state before. */
    private void around(Block b, Source source, Player p, String cause) {
        if (mine(b.getWorld())) {
            core.observeAround(b.getX(), b.getY(), b.getZ(), full(b), source, id(p), name(p),
                    source == Source.ENVIRONMENT ? cause : "");
        }
    }

    // ---- furniture: a player moving items in a container changes no block, only its block entity ----
    /** Per player: the container blocks they have open (both halves of a double chest), full states at opening. */
    private final java.util.Map<java.util.UUID, java.util.Map<Block, String>> open = new java.util.HashMap<>();

    private static List<Block> containerBlocks(org.bukkit.inventory.Inventory inv) {
        org.bukkit.inventory.InventoryHolder h = inv.getHolder();
        if (h instanceof BlockState bs) {
            return List.of(bs.getBlock());
        }
        if (h instanceof org.bukkit.block.DoubleChest dc) {
            List<Block> out = new java.util.ArrayList<>();
            for (org.bukkit.inventory.InventoryHolder side : new org.bukkit.inventory.InventoryHolder[] {
                    dc.getLeftSide(), dc.getRightSide()}) {
                if (side instanceof BlockState bs) {
                    out.add(bs.getBlock());
                }
            }
            return out;
        }
        return List.of(); // a player's own inventory, an entity's, a virtual one
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onContainerOpen(org.bukkit.event.inventory.InventoryOpenEvent e) {
        if (!(e.getPlayer() instanceof Player p)) {
            return;
        }
        java.util.Map<Block, String> before = new java.util.LinkedHashMap<>();
        for (Block b : containerBlocks(e.getInventory())) {
            if (mine(b.getWorld())) {
                before.put(b, full(b));
            }
        }
        if (!before.isEmpty()) {
            open.put(p.getUniqueId(), before);
        }
    }

    @EventHandler(priority = EventPriority.MONITOR)
    public void onContainerClose(org.bukkit.event.inventory.InventoryCloseEvent e) {
        java.util.Map<Block, String> before = e.getPlayer() instanceof Player p ? open.remove(p.getUniqueId()) : null;
        if (before == null) {
            return;
        }
        for (java.util.Map.Entry<Block, String> en : before.entrySet()) {
            Block b = en.getKey();
            if (!b.getWorld().isChunkLoaded(b.getX() >> 4, b.getZ() >> 4)) {
                continue;
            }
            String after = full(b);
            if (!after.equals(en.getValue())) { // the contents changed: that player's edit of this block
                Player p = (Player) e.getPlayer();
                core.observe(b.getX(), b.getY(), b.getZ(), en.getValue(), after, Source.PLAYER, id(p), name(p), "");
            }
        }
    }

    // ---- containers the game fills and empties (hoppers, furnaces, brewing stands, campfires) ----
    /** Each container block behind an inventory, re-read next tick: its contents are about to change. */
    private void containersLater(org.bukkit.inventory.Inventory inv) {
        for (Block b : containerBlocks(inv)) {
            later(b, Source.ENVIRONMENT, null, Cause.OTHER);
        }
    }

    /** A hopper (or a dropper into a container) moving an item: fired before both inventories change. */
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onMoveItem(InventoryMoveItemEvent e) {
        containersLater(e.getSource());
        containersLater(e.getDestination());
    }

    /** A hopper taking an item entity into its inventory. */
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onPickupItem(InventoryPickupItemEvent e) {
        containersLater(e.getInventory());
    }

    /**
     * A furnace, smoker or blast furnace smelting an item, or a campfire finishing one: FurnaceSmeltEvent has no
     * handler list of its own and arrives here (paper-api FurnaceSmeltEvent extends BlockCookEvent).
     */
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onCook(BlockCookEvent e) {
        later(e.getBlock(), Source.ENVIRONMENT, null, Cause.OTHER);
    }

    /** A furnace taking a fuel item. */
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onFurnaceBurn(FurnaceBurnEvent e) {
        later(e.getBlock(), Source.ENVIRONMENT, null, Cause.OTHER);
    }

    /** A brewing stand finishing its potions. */
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onBrew(BrewEvent e) {
        later(e.getBlock(), Source.ENVIRONMENT, null, Cause.OTHER);
    }

    /** A brewing stand taking blaze powder as fuel. */
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onBrewingFuel(BrewingStandFuelEvent e) {
        later(e.getBlock(), Source.ENVIRONMENT, null, Cause.OTHER);
    }

    /** The position of a state the event reports as the state before (a replaced block) and its neighbours. */
    private void aroundReplaced(BlockState before, Source source, Player p) {
        if (mine(before.getWorld())) {
            core.observeAround(before.getX(), before.getY(), before.getZ(), before.getBlockData().getAsString(),
                    source, id(p), name(p), "");
        }
    }

    /** Positions an event lists with their NEW states: the world still holds the old ones when it fires. */
    private void aroundListed(List<BlockState> newStates, Source source, Player p, String cause) {
        for (BlockState s : newStates) {
            if (mine(s.getWorld())) {
                around(s.getBlock(), source, p, cause);
            }
        }
    }

    // ---- people ----
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onPlace(BlockPlaceEvent e) {
        // fired after the block is in the world: the replaced states are the states before
        if (e instanceof BlockMultiPlaceEvent m) {
            for (BlockState s : m.getReplacedBlockStates()) {
                aroundReplaced(s, Source.PLAYER, e.getPlayer());
            }
        } else {
            aroundReplaced(e.getBlockReplacedState(), Source.PLAYER, e.getPlayer());
        }
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onBreak(BlockBreakEvent e) {
        around(e.getBlock(), Source.PLAYER, e.getPlayer(), "");
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onBucketEmpty(PlayerBucketEmptyEvent e) {
        around(e.getBlock(), Source.PLAYER, e.getPlayer(), "");
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onBucketFill(PlayerBucketFillEvent e) {
        around(e.getBlock(), Source.PLAYER, e.getPlayer(), "");
    }

    /**
     * Right-clicking a block (doors, trapdoors, fence gates, and every other state a click changes: cake,
     * candles, composters, repeaters, note blocks, ...) and stepping on one (farmland, turtle eggs):
     * fired before the change; the next tick records what changed, as the player's.
     */
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onInteract(PlayerInteractEvent e) {
        Block b = e.getClickedBlock();
        if (b != null && (e.getAction() == Action.RIGHT_CLICK_BLOCK || e.getAction() == Action.PHYSICAL)) {
            around(b, Source.PLAYER, e.getPlayer(), "");
        }
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onFertilize(BlockFertilizeEvent e) {
        // getBlocks() are the states bone meal will place; the world still holds the previous ones
        aroundListed(e.getBlocks(), by(e.getPlayer()), e.getPlayer(), Cause.GROWTH);
    }

    // ---- fluids ----
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onFlow(BlockFromToEvent e) {
        later(e.getToBlock(), Source.ENVIRONMENT, null, Cause.FLOW);
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onFluidLevel(FluidLevelChangeEvent e) {
        later(e.getBlock(), Source.ENVIRONMENT, null, Cause.FLOW);
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onSponge(SpongeAbsorbEvent e) {
        // the sponge turns wet after the event; getBlocks() are the NEW states (air) of the drained water
        later(e.getBlock(), Source.ENVIRONMENT, null, Cause.FLOW);
        for (BlockState s : e.getBlocks()) {
            if (mine(s.getWorld())) {
                later(s.getBlock(), Source.ENVIRONMENT, null, Cause.FLOW);
            }
        }
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onCauldron(CauldronLevelChangeEvent e) {
        Player p = playerOf(e.getEntity());
        later(e.getBlock(), by(p), p, Cause.OTHER);
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onMoisture(MoistureChangeEvent e) {
        later(e.getBlock(), Source.ENVIRONMENT, null, Cause.OTHER);
    }

    // ---- fire ----
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onBurn(BlockBurnEvent e) {
        around(e.getBlock(), Source.ENVIRONMENT, null, Cause.FIRE);
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onIgnite(BlockIgniteEvent e) {
        around(e.getBlock(), by(e.getPlayer()), e.getPlayer(), Cause.FIRE);
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onTntPrime(TNTPrimeEvent e) {
        Player p = playerOf(e.getPrimingEntity());
        around(e.getBlock(), by(p), p, Cause.EXPLOSION);
    }

    // ---- growth, decay, forming (snow, ice, concrete, frost walker), spreading (grass, fire, vines) ----
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onGrow(BlockGrowEvent e) { // crops, sugar cane, cactus... (not BlockFormEvent: own handler list)
        around(e.getBlock(), Source.ENVIRONMENT, null, Cause.GROWTH);
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onForm(BlockFormEvent e) { // also EntityBlockFormEvent (snow golems, frost walker)
        Player p = e instanceof EntityBlockFormEvent f ? playerOf(f.getEntity()) : null;
        around(e.getBlock(), by(p), p, Cause.FORM);
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onSpread(BlockSpreadEvent e) { // fire spreading (its source is fire), or grass, mycelium, vines...
        around(e.getBlock(), Source.ENVIRONMENT, null, spreadCause(e.getSource().getType()));
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onFade(BlockFadeEvent e) {
        around(e.getBlock(), Source.ENVIRONMENT, null, Cause.FADE);
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onDecay(LeavesDecayEvent e) {
        around(e.getBlock(), Source.ENVIRONMENT, null, Cause.DECAY);
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onStructureGrow(StructureGrowEvent e) {
        aroundListed(e.getBlocks(), by(e.getPlayer()), e.getPlayer(), Cause.GROWTH);
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onPortal(PortalCreateEvent e) {
        if (mine(e.getWorld())) {
            Player p = playerOf(e.getEntity());
            aroundListed(e.getBlocks(), by(p), p, Cause.OTHER);
        }
    }

    /** Attached blocks that pop off, and other blocks the game destroys naturally (Paper). */
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onDestroy(BlockDestroyEvent e) {
        around(e.getBlock(), Source.ENVIRONMENT, null, Cause.OTHER);
    }

    /** A dispenser or dropper: the item leaves its inventory, and it may place or take fluids or blocks in front of it. */
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onDispense(BlockDispenseEvent e) {
        Block b = e.getBlock();
        later(b, Source.ENVIRONMENT, null, Cause.OTHER);
        if (b.getBlockData() instanceof Directional d) {
            around(b.getRelative(d.getFacing()), Source.ENVIRONMENT, null, Cause.OTHER);
        }
    }

    // ---- gravity and mobs (falling sand, endermen, ravagers, silverfish, farmland trampling) ----
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onEntityChange(EntityChangeBlockEvent e) {
        Player p = playerOf(e.getEntity());
        around(e.getBlock(), by(p), p, Cause.OTHER);
    }

    // ---- explosions ----
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onBlockExplode(BlockExplodeEvent e) {
        around(e.getBlock(), Source.ENVIRONMENT, null, Cause.EXPLOSION);
        for (Block b : e.blockList()) {
            around(b, Source.ENVIRONMENT, null, Cause.EXPLOSION);
        }
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onEntityExplode(EntityExplodeEvent e) {
        for (Block b : e.blockList()) {
            around(b, Source.ENVIRONMENT, null, Cause.EXPLOSION);
        }
    }

    // ---- pistons: the moved blocks, where they land, and the head ----
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onPistonExtend(BlockPistonExtendEvent e) {
        piston(e.getBlock(), e.getBlocks(), e.getDirection());
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onPistonRetract(BlockPistonRetractEvent e) {
        piston(e.getBlock(), e.getBlocks(), e.getDirection());
    }

    private void piston(Block piston, List<Block> moved, BlockFace dir) {
        around(piston, Source.ENVIRONMENT, null, Cause.PISTON);
        around(piston.getRelative(dir), Source.ENVIRONMENT, null, Cause.PISTON);
        for (Block b : moved) {
            around(b, Source.ENVIRONMENT, null, Cause.PISTON);
            around(b.getRelative(dir), Source.ENVIRONMENT, null, Cause.PISTON);
        }
    }

    /** BlockSpreadEvent covers fire spreading and growth spreading (its javadoc): the source block tells which. */
    static String spreadCause(org.bukkit.Material source) {
        return source == org.bukkit.Material.FIRE || source == org.bukkit.Material.SOUL_FIRE ? Cause.FIRE : Cause.GROWTH;
    }
}
