package dev.mcb.camera.core;

/** A 16³ section: chunk x, section y index (block y >> 4), chunk z (the world protocol's keys). */
public record SectionKey(int cx, int sy, int cz) {
}
