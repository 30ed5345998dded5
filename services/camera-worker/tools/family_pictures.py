"""Draw each block family of the built-in renderer (mcb_camera.scenes.FAMILIES) to
docs/img/camera-family-<name>.png, all of them to docs/img/camera-families.png, and the oak
house of the patterns (scenes.house) to docs/img/camera-patterns-after.png.

    uv run --frozen python services/camera-worker/tools/family_pictures.py [OUT_DIR]

Needs a headless OpenGL 3.3 context (moderngl on EGL; Mesa's llvmpipe works). Look at every
picture before committing it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mcb_camera import gl, mesh, png, scenes


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    r = gl.GLRenderer()
    for name in scenes.FAMILIES:
        pal, arr = scenes.family(name)
        v = gl.perspective_view(*scenes.PLOT_POSE, 480, 270, (0, 0, 0), 64)
        (out / f"camera-family-{name}.png").write_bytes(png.encode(r.render(mesh.build(pal, arr), v)))
    pal, arr = scenes.families()
    v = gl.perspective_view(*scenes.FAMILIES_POSE, 960, 540, (0, 0, 0), 96)
    (out / "camera-families.png").write_bytes(png.encode(r.render(mesh.build(pal, arr), v)))
    pal, arr = scenes.house()
    v = gl.perspective_view(*scenes.HOUSE_POSE, 640, 360, (0, 0, 0), 64)
    (out / "camera-patterns-after.png").write_bytes(png.encode(r.render(mesh.build(pal, arr), v)))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[3] / "docs" / "img")
