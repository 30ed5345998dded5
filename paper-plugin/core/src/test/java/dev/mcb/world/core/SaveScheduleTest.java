package dev.mcb.world.core;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SaveScheduleTest {
    @Test
    void paperDefaultsAreTrusted() {
        assertNull(SaveSchedule.PAPER_DEFAULTS.distrust());
        assertNull(SaveSchedule.PAPER_DEFAULTS.distrust(10_000));
        assertNull(new SaveSchedule(6000, 3000, 24).distrust(72_000));
    }

    @Test
    void eachUntrustedSettingIsNamed() {
        assertTrue(new SaveSchedule(0, 6000, 24).distrust().contains("ticks-per.autosave"));
        assertTrue(new SaveSchedule(6000, 0, 24).distrust().contains("chunks.auto-save-interval"));
        assertTrue(new SaveSchedule(6000, 12000, 24).distrust().contains("longer than ticks-per.autosave"));
        assertTrue(new SaveSchedule(6000, 6000, 0).distrust().contains("max-auto-save-chunks-per-tick"));
        // 24 a tick over 100 ticks is 2,400 chunks: 2,401 loaded ones may not all be written in one interval
        assertNull(new SaveSchedule(100, 100, 24).distrust(2400));
        assertTrue(new SaveSchedule(100, 100, 24).distrust(2401).contains("2401 loaded chunks"));
    }
}
