"""Image diff of two captures: a signal for "did something visible change, and where" —
never a beauty score (seed 002 §13)."""

from __future__ import annotations

import numpy as np

THRESHOLD = 24  # max per-channel difference that still counts as "the same" (shading noise)


def diff(a: np.ndarray, b: np.ndarray) -> dict:
    if a.shape != b.shape:
        raise ValueError(
            f"the captures have different sizes ({a.shape[1]}x{a.shape[0]} vs "
            f"{b.shape[1]}x{b.shape[0]}); compare captures of the same camera"
        )
    d = np.abs(a.astype(np.int16) - b.astype(np.int16))
    changed = d.max(axis=2) > THRESHOLD
    ys, xs = np.nonzero(changed)
    bbox = [int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())] if len(xs) else []
    heat = (b.astype(np.float32) * 0.35).astype(np.uint8)
    heat[changed] = np.array([255, 40, 200], np.uint8)
    return {"changed_fraction": float(changed.mean()), "mean_abs_diff": float(d.mean()), "bbox": bbox, "image": heat}
