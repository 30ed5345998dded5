package dev.mcb.world.paper;

import com.google.common.base.Preconditions;
import io.papermc.paper.datacomponent.item.ResolvableProfile;
import java.util.Arrays;
import org.bukkit.Location;
import org.bukkit.Material;
import org.bukkit.block.BlockFace;
import org.bukkit.block.DoubleChest;
import org.bukkit.block.data.type.Chest.Type;
import org.bukkit.event.inventory.InventoryType;
import org.bukkit.inventory.DoubleChestInventory;
import org.bukkit.inventory.Inventory;
import org.bukkit.inventory.ItemStack;
import org.mockbukkit.mockbukkit.block.BlockMock;
import org.mockbukkit.mockbukkit.block.state.BlockStateMock;
import org.mockbukkit.mockbukkit.block.state.ChestStateMock;
import org.mockbukkit.mockbukkit.block.state.SkullStateMock;
import org.mockbukkit.mockbukkit.inventory.InventoryMock;

/**
 * Block states as strict as Paper 1.21.11's where MockBukkit 4.116.3 is kinder or leaves the call
 * unimplemented. Each behaviour names the upstream file that shows it (paper-plugin/README.md,
 * "Doubles as strict as Paper"). {@link HarnessWorld} makes every block a {@link StrictBlock}, whose states
 * are these.
 */
final class StrictStates {
    private StrictStates() {}

    /** A block whose skull and chest states are the strict ones below. */
    static final class StrictBlock extends BlockMock {
        StrictBlock(Material m, Location l) {
            super(m, l);
            strictify();
        }

        @Override
        public void setType(Material type) {
            super.setType(type); // MockBukkit: a new state from BlockStateMockFactory
            strictify();
        }

        private void strictify() {
            BlockStateMock s = (BlockStateMock) super.getState();
            if (s instanceof SkullStateMock && !(s instanceof Skull)) {
                setState(new Skull(this));
            } else if (s instanceof ChestStateMock && !(s instanceof Chest)) {
                setState(new Chest(this));
            }
        }
    }

    /**
     * A skull's profile as Paper keeps it (paper-server/src/main/java/org/bukkit/craftbukkit/block/CraftSkull.java
     * at tag 1.21.11): one {@code ResolvableProfile}; {@code setProfile(null)} clears it (l.67-73);
     * {@code setPlayerProfile} starts with {@code Preconditions.checkNotNull(profile, "profile")} (l.132-135),
     * so null throws NullPointerException. MockBukkit leaves get/setProfile unimplemented. The deprecated
     * {@code getPlayerProfile} (paper-api Skull.java: {@code @Deprecated(since = "1.21.9")}) is refused here so a
     * test fails if the adapter goes back to it.
     */
    static final class Skull extends SkullStateMock {
        private ResolvableProfile profile;

        Skull(org.bukkit.block.Block b) {
            super(b);
        }

        private Skull(Skull s) {
            super(s);
            profile = s.profile;
        }

        @Override
        public Skull getSnapshot() {
            return new Skull(this);
        }

        @Override
        public Skull copy() {
            return new Skull(this);
        }

        @Override
        public ResolvableProfile getProfile() {
            return profile;
        }

        @Override
        public void setProfile(ResolvableProfile p) {
            profile = p;
        }

        @Override
        public boolean hasOwner() {
            return profile != null;
        }

        @Override
        public void setPlayerProfile(com.destroystokyo.paper.profile.PlayerProfile p) {
            Preconditions.checkNotNull(p, "profile");
            profile = ResolvableProfile.resolvableProfile(p);
        }

        @Override
        public com.destroystokyo.paper.profile.PlayerProfile getPlayerProfile() {
            throw new UnsupportedOperationException("Skull#getPlayerProfile is deprecated since 1.21.9; use getProfile");
        }
    }

    /**
     * A chest half as Paper shows it (paper-server/src/main/java/org/bukkit/craftbukkit/block/CraftChest.java at
     * 1.21.11, l.31-56): {@code getBlockInventory()} is this half's 27 slots (the placed block entity's, even
     * from a snapshot), {@code getInventory()} of a half of a double chest is the 54-slot
     * {@code CraftInventoryDoubleChest} of both halves; {@code getSnapshotInventory()} is the snapshot's 27.
     * The halves pair as the game pairs them (Mojang's ChestBlock#getConnectedDirection: a {@code left} half's
     * partner is clockwise of its facing, a {@code right} half's counter-clockwise; ChestBlock#getBlockType:
     * the {@code right} half is the first 27 slots of the double inventory).
     */
    static final class Chest extends ChestStateMock {
        Chest(org.bukkit.block.Block b) {
            super(b);
        }

        private Chest(Chest c) {
            super(c);
        }

        @Override
        public Chest getSnapshot() {
            return new Chest(this);
        }

        @Override
        public Chest copy() {
            return new Chest(this);
        }

        /** The live half's own 27 slots (MockBukkit: the block's current state's inventory). */
        private static Inventory own(org.bukkit.block.Block b) {
            return ((Chest) ((BlockMock) b).getState()).ownInventory();
        }

        private Inventory ownInventory() {
            return super.getInventory();
        }

        @Override
        public Inventory getBlockInventory() {
            return isPlaced() ? own(getBlock()) : getSnapshotInventory();
        }

        @Override
        public Inventory getInventory() {
            if (!isPlaced() || !(getBlock().getBlockData() instanceof org.bukkit.block.data.type.Chest d)
                    || d.getType() == Type.SINGLE) {
                return getBlockInventory();
            }
            BlockFace f = d.getFacing();
            BlockFace toPartner = d.getType() == Type.LEFT ? clockwise(f) : counterClockwise(f);
            org.bukkit.block.Block other = getBlock().getRelative(toPartner);
            if (other.getType() != getBlock().getType()
                    || !(other.getBlockData() instanceof org.bukkit.block.data.type.Chest od)
                    || od.getFacing() != f || od.getType() == Type.SINGLE || od.getType() == d.getType()) {
                return getBlockInventory();
            }
            boolean first = d.getType() == Type.RIGHT;
            return new DoubleView(first ? own(getBlock()) : own(other), first ? own(other) : own(getBlock()));
        }
    }

    static BlockFace clockwise(BlockFace f) {
        return switch (f) {
            case NORTH -> BlockFace.EAST;
            case EAST -> BlockFace.SOUTH;
            case SOUTH -> BlockFace.WEST;
            default -> BlockFace.NORTH;
        };
    }

    static BlockFace counterClockwise(BlockFace f) {
        return clockwise(clockwise(clockwise(f)));
    }

    /**
     * The 54-slot inventory of a double chest: slots 0-26 the first half, 27-53 the second, live views of
     * both (paper-server/.../inventory/CraftInventoryDoubleChest.java); its holder is a {@link DoubleChest}
     * whose sides are the halves' states. Only the calls a plugin or test here makes are served; the rest
     * throw instead of answering for one half.
     */
    static final class DoubleView extends InventoryMock implements DoubleChestInventory {
        private final Inventory first;
        private final Inventory second;

        DoubleView(Inventory first, Inventory second) {
            super(null, 54, InventoryType.CHEST);
            this.first = first;
            this.second = second;
        }

        private Inventory half(int slot) {
            return slot < 27 ? first : second;
        }

        @Override
        public int getSize() {
            return 54;
        }

        @Override
        public ItemStack getItem(int slot) {
            return half(slot).getItem(slot % 27);
        }

        @Override
        public void setItem(int slot, ItemStack item) {
            half(slot).setItem(slot % 27, item);
        }

        @Override
        public ItemStack[] getContents() {
            ItemStack[] a = first.getContents();
            ItemStack[] b = second.getContents();
            ItemStack[] out = Arrays.copyOf(a, 54);
            System.arraycopy(b, 0, out, 27, 27);
            return out;
        }

        @Override
        public boolean isEmpty() {
            return first.isEmpty() && second.isEmpty();
        }

        @Override
        public void clear() {
            first.clear();
            second.clear();
        }

        @Override
        public Inventory getLeftSide() {
            return first;
        }

        @Override
        public Inventory getRightSide() {
            return second;
        }

        @Override
        public DoubleChest getHolder() {
            return new DoubleChest(this);
        }

        @Override
        public Location getLocation() {
            return first.getLocation();
        }
    }
}
