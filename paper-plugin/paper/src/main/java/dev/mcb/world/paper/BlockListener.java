package dev.mcb.world.paper;

import dev.mcb.world.core.Source;
import dev.mcb.world.core.WorldHostCore;
import java.util.List;
import org.bukkit.World;
import org.bukkit.block.Block;
import org.bukkit.block.BlockFace;
import org.bukkit.block.BlockState;
import org.bukkit.entity.Player;
import org.bukkit.event.EventHandler;
import org.bukkit.event.EventPriority;
import org.bukkit.event.Listener;
import org.bukkit.event.block.BlockBreakEvent;
import org.bukkit.event.block.BlockBurnEvent;
import org.bukkit.event.block.BlockExplodeEvent;
import org.bukkit.event.block.BlockFadeEvent;
import org.bukkit.event.block.BlockFertilizeEvent;
import org.bukkit.event.block.BlockFromToEvent;
import org.bukkit.event.block.BlockGrowEvent;
import org.bukkit.event.block.BlockIgniteEvent;
import org.bukkit.event.block.BlockMultiPlaceEvent;
import org.bukkit.event.block.BlockPistonExtendEvent;
import org.bukkit.event.block.BlockPistonRetractEvent;
import org.bukkit.event.block.BlockPlaceEvent;
import org.bukkit.event.block.FluidLevelChangeEvent;
import org.bukkit.event.block.LeavesDecayEvent;
import org.bukkit.event.block.SpongeAbsorbEvent;
import org.bukkit.event.entity.EntityChangeBlockEvent;
import org.bukkit.event.entity.EntityExplodeEvent;
import org.bukkit.event.player.PlayerBucketEmptyEvent;
import org.bukkit.event.player.PlayerBucketFillEvent;
import org.bukkit.event.world.StructureGrowEvent;

/**
 * Block events → the core's observation buffer. MONITOR priority, cancelled events ignored; each
 * handler only picks the positions, the state before and the cause (player / environment); the core
 * reads the state after on the next tick and decides whether anything changed.
 */
final class BlockListener implements Listener {
    private final WorldHostCore core;
    private final World world;

    BlockListener(WorldHostCore core, World world) {
        this.core = core;
        this.world = world;
    }

    private boolean mine(Block b) {
        return b.getWorld().equals(world);
    }

    private void later(Block b, Source source, Player p) {
        if (mine(b)) {
            core.observeLater(b.getX(), b.getY(), b.getZ(), b.getBlockData().getAsString(), source,
                    p == null ? "" : p.getUniqueId().toString());
        }
    }

    private void later(BlockState s, Source source, Player p) {
        if (s.getWorld().equals(world)) {
            core.observeLater(s.getX(), s.getY(), s.getZ(), s.getBlockData().getAsString(), source,
                    p == null ? "" : p.getUniqueId().toString());
        }
    }

    private void laterAll(List<Block> blocks, Source source) {
        for (Block b : blocks) {
            later(b, source, null);
        }
    }

    // ---- people ----
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onPlace(BlockPlaceEvent e) {
        if (e instanceof BlockMultiPlaceEvent m) {
            for (BlockState s : m.getReplacedBlockStates()) {
                later(s, Source.PLAYER, e.getPlayer());
            }
        } else {
            later(e.getBlockReplacedState(), Source.PLAYER, e.getPlayer());
        }
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onBreak(BlockBreakEvent e) {
        later(e.getBlock(), Source.PLAYER, e.getPlayer());
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onBucketEmpty(PlayerBucketEmptyEvent e) {
        later(e.getBlock(), Source.PLAYER, e.getPlayer());
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onBucketFill(PlayerBucketFillEvent e) {
        later(e.getBlock(), Source.PLAYER, e.getPlayer());
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onFertilize(BlockFertilizeEvent e) {
        for (BlockState s : e.getBlocks()) {
            later(s, e.getPlayer() != null ? Source.PLAYER : Source.ENVIRONMENT, e.getPlayer());
        }
    }

    // ---- fluids ----
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onFlow(BlockFromToEvent e) {
        later(e.getToBlock(), Source.ENVIRONMENT, null);
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onFluidLevel(FluidLevelChangeEvent e) {
        later(e.getBlock(), Source.ENVIRONMENT, null);
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onSponge(SpongeAbsorbEvent e) {
        later(e.getBlock(), Source.ENVIRONMENT, null);
        for (BlockState s : e.getBlocks()) {
            later(s, Source.ENVIRONMENT, null);
        }
    }

    // ---- fire ----
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onBurn(BlockBurnEvent e) {
        later(e.getBlock(), Source.ENVIRONMENT, null);
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onIgnite(BlockIgniteEvent e) {
        later(e.getBlock(), e.getPlayer() != null ? Source.PLAYER : Source.ENVIRONMENT, e.getPlayer());
    }

    // ---- growth, decay, forming (snow, ice, concrete), spreading (grass, fire, vines) ----
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onGrow(BlockGrowEvent e) { // includes BlockFormEvent and BlockSpreadEvent
        later(e.getBlock(), Source.ENVIRONMENT, null);
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onFade(BlockFadeEvent e) {
        later(e.getBlock(), Source.ENVIRONMENT, null);
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onDecay(LeavesDecayEvent e) {
        later(e.getBlock(), Source.ENVIRONMENT, null);
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onStructureGrow(StructureGrowEvent e) {
        for (BlockState s : e.getBlocks()) {
            later(s.getBlock(), e.getPlayer() != null ? Source.PLAYER : Source.ENVIRONMENT, e.getPlayer());
        }
    }

    // ---- gravity and mobs (falling sand, endermen, ravagers, silverfish) ----
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onEntityChange(EntityChangeBlockEvent e) {
        Player p = e.getEntity() instanceof Player pl ? pl : null;
        later(e.getBlock(), p != null ? Source.PLAYER : Source.ENVIRONMENT, p);
    }

    // ---- explosions ----
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onBlockExplode(BlockExplodeEvent e) {
        later(e.getBlock(), Source.ENVIRONMENT, null);
        laterAll(e.blockList(), Source.ENVIRONMENT);
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onEntityExplode(EntityExplodeEvent e) {
        laterAll(e.blockList(), Source.ENVIRONMENT);
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
        later(piston, Source.ENVIRONMENT, null);
        later(piston.getRelative(dir), Source.ENVIRONMENT, null);
        later(piston.getRelative(dir.getOppositeFace()), Source.ENVIRONMENT, null);
        for (Block b : moved) {
            later(b, Source.ENVIRONMENT, null);
            later(b.getRelative(dir), Source.ENVIRONMENT, null);
            later(b.getRelative(dir.getOppositeFace()), Source.ENVIRONMENT, null);
        }
    }
}
