"""Drawing with OpenGL (moderngl) on a headless EGL context — Mesa's llvmpipe when no GPU.

One ``GLRenderer`` per worker; it owns the context and must be used from one thread (the
driver runs it in a single-thread executor). Faces come from ``mesh.Mesh`` and are drawn
instanced: one row per face, the vertex shader expands it into a quad. Passes: sky
(a gradient from the view ray), opaque faces (depth test), translucent faces (alpha blend,
no depth write). Shading: a fixed light per face direction (top 1.0, bottom 0.5,
north/south 0.8, east/west 0.6 — the game's own flat shading; a plant's crossed planes 0.85),
times the face's per-corner ambient occlusion (mesh.py), the material's pattern (patterns.py), a
faint edge line per block face so single blocks stay readable, a darker outline on the sides
where the surface does not go on (mesh.py: silhouettes, steps, corners, a door's panel), and
distance fog toward the horizon colour.

Camera convention (Minecraft Java): the pose is the *feet* position; the eye is 1.62 above.
yaw 0 looks toward +z (south), 90 toward -x (west), 180 north, 270 east; pitch +90 looks
straight down, -90 straight up. ``fov`` is the vertical field of view in degrees.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import patterns
from .mesh import Mesh

EYE_HEIGHT = 1.62
SKY_ZENITH = (0.47, 0.65, 1.0)
SKY_HORIZON = (0.75, 0.85, 1.0)
GROUND_HAZE = (0.55, 0.6, 0.68)

_VS = """
#version 330
uniform mat4 u_vp;
in vec2 in_corner;
in vec3 in_lo; in vec3 in_hi; in float in_dir; in vec4 in_color; in vec4 in_ao; in float in_pat;
in float in_outline;
out vec4 v_color; out vec2 v_uv; out vec2 v_size; out vec3 v_pos; out float v_light;
flat out int v_dir; flat out int v_pat; flat out int v_outline;
void main() {
    int d = int(in_dir + 0.5);
    vec3 ext = in_hi - in_lo;
    vec3 p; vec2 size;
    if (d < 2) {
        p = vec3(d == 0 ? in_hi.x : in_lo.x, mix(in_lo.y, in_hi.y, in_corner.x), mix(in_lo.z, in_hi.z, in_corner.y));
        size = ext.yz;
    } else if (d < 4) {
        p = vec3(mix(in_lo.x, in_hi.x, in_corner.x), d == 2 ? in_hi.y : in_lo.y, mix(in_lo.z, in_hi.z, in_corner.y));
        size = ext.xz;
    } else if (d < 6) {
        p = vec3(mix(in_lo.x, in_hi.x, in_corner.x), mix(in_lo.y, in_hi.y, in_corner.y), d == 4 ? in_hi.z : in_lo.z);
        size = ext.xy;
    } else {
        // a plant's cross: the two vertical diagonals of the box
        float t = d == 6 ? in_corner.x : 1.0 - in_corner.x;
        p = vec3(mix(in_lo.x, in_hi.x, in_corner.x), mix(in_lo.y, in_hi.y, in_corner.y), mix(in_lo.z, in_hi.z, t));
        size = vec2(length(ext.xz), ext.y);
    }
    float shade = d == 2 ? 1.0 : (d == 3 ? 0.5 : (d >= 6 ? 0.85 : (d >= 4 ? 0.8 : 0.6)));
    int corner = int(in_corner.x + 0.5) + 2 * int(in_corner.y + 0.5);
    float ao = corner == 0 ? in_ao.x : (corner == 1 ? in_ao.y : (corner == 2 ? in_ao.z : in_ao.w));
    v_color = vec4(in_color.rgb * shade * ao, in_color.a);
    v_light = shade * ao;
    v_uv = in_corner * size;
    v_size = size;
    v_pos = p;
    v_dir = d;
    v_pat = int(in_pat + 0.5);
    v_outline = int(in_outline + 0.5);
    gl_Position = u_vp * vec4(p, 1.0);
}
"""

# Patterns (patterns.py names them): drawn from the face's position in the world, so boards,
# courses and bark line up across blocks. (u, v) are the face's in-plane world axes (±x faces:
# z, y; ±y: x, z; ±z: x, y), in blocks; 1/16 is one texture pixel. Each line fades out as it
# gets thinner than about a pixel on screen (no moire far away).
_FS = """
#version 330
// PAT >= 0: a program for the faces of that one pattern (the other branches are compiled
// out: llvmpipe runs every branch of a varying if under a mask, so one program for all
// patterns cost ~50 % more per pixel); PAT < 0: any pattern (the translucent pass)
#define IS(n) (PAT < 0 ? v_pat == n : PAT == n)
uniform vec3 u_eye; uniform vec3 u_haze; uniform float u_fog_start; uniform float u_fog_end;
in vec4 v_color; in vec2 v_uv; in vec2 v_size; in vec3 v_pos; in float v_light;
flat in int v_dir; flat in int v_pat; flat in int v_outline;
out vec4 f_color;

float hash(vec2 p) { return fract(sin(dot(p, vec2(12.9898, 78.233))) * 43758.5453); }

// 1 on the lines t = k (k an integer), half-width w in units of t, anti-aliased; faded where
// the lines come closer than ~3 pixels
float lines(float t, float w) {
    float fw = max(fwidth(t), 1e-5);
    float d = abs(t - floor(t + 0.5));
    return (1.0 - smoothstep(w, w + fw, d)) * (1.0 - smoothstep(0.2, 0.35, fw));
}

// 1 inside the rectangle [a, b] of the cell (coordinates in sixteenths), anti-aliased
float rect(vec2 c, vec2 a, vec2 b) {
    vec2 fw = max(fwidth(c), vec2(1e-5));
    vec2 i = smoothstep(a - fw * 0.5, a + fw * 0.5, c) * (1.0 - smoothstep(b - fw * 0.5, b + fw * 0.5, c));
    return i.x * i.y;
}

// 1 within w sixteenths of the cell's border
float frame(vec2 c, float w) {
    return 1.0 - rect(c, vec2(w), vec2(16.0 - w));
}

void main() {
    vec3 c = v_color.rgb;
    float a = v_color.a;
    if (PAT != 0 && v_pat > 0 && v_dir < 6) {
        vec2 q = v_dir < 2 ? v_pos.zy : (v_dir < 4 ? v_pos.xz : v_pos.xy);
        // in-plane cell coordinates in sixteenths: every face lies within its block's cell, so
        // the face's centre picks the cell (a face on the boundary u = 1.0 stays in its block)
        vec2 uvq = v_dir < 2 ? v_uv.yx : v_uv;
        vec2 szq = v_dir < 2 ? v_size.yx : v_size;
        vec2 cell = floor(q - uvq + 0.5 * szq);
        vec2 px = (q - cell) * 16.0;
        float detail = 1.0 - smoothstep(0.35, 0.7, max(fwidth(q.x), fwidth(q.y)) * 16.0 / 4.0);
        if (IS(1)) {            // planks: 4 boards, staggered joints
            float row = floor(q.y * 4.0);
            float off = fract(row * 0.375);
            float m = max(lines(q.y * 4.0, 0.1), lines(q.x - off, 0.025));
            c *= (1.0 - 0.3 * m) * (1.0 - 0.07 * hash(vec2(row, floor(q.x - off))) * detail);
        } else if (IS(2)) {     // bricks: 4 courses, 8-px bricks, light mortar
            float row = floor(q.y * 4.0);
            float m = max(lines(q.y * 4.0, 0.13), lines(q.x * 2.0 + 0.5 * mod(row, 2.0), 0.07));
            c *= 1.0 - 0.08 * hash(vec2(row, floor(q.x * 2.0 + 0.5 * mod(row, 2.0)))) * detail;
            c = mix(c, vec3(0.74, 0.71, 0.67) * v_light, 0.75 * m);
        } else if (IS(3)) {     // stone bricks: 2 courses of 8 px, bricks a block long
            float row = floor(q.y * 2.0);
            float m = max(lines(q.y * 2.0, 0.07), lines(q.x + 0.5 * mod(row, 2.0), 0.035));
            c *= (1.0 - 0.35 * m) * (1.0 - 0.06 * hash(vec2(row, floor(q.x + 0.5 * mod(row, 2.0)))) * detail);
        } else if (IS(4) || IS(5)) {  // bark: stripes along the log's axis
            float t = (IS(4) ? q.x : q.y) * 5.0;
            float m = max(lines(t, 0.14), 0.5 * lines(t + 0.45, 0.07));
            c *= (1.0 - 0.32 * m) * (1.0 - 0.1 * hash(vec2(floor(t), 7.0)) * detail);
        } else if (IS(6)) {     // a log's cut end: square rings, bark rim
            vec2 d = abs(px - 8.0);
            float r = max(d.x, d.y);
            float rim = smoothstep(6.6, 7.0, r);
            c *= (1.0 - 0.2 * lines(r / 2.0, 0.12) * (1.0 - rim)) * (1.0 - 0.45 * rim);
        } else if (IS(7)) {     // glass: a 1-px frame, nearly opaque; a faint streak
            float f = frame(px, 1.0);
            float streak = rect(px, vec2(3.0, 9.0), vec2(5.0, 13.0)) + rect(px, vec2(5.0, 11.0), vec2(7.0, 13.0));
            c = mix(c, vec3(0.93, 0.96, 0.98) * v_light, 0.55 * f + 0.25 * streak * detail);
            a = mix(a, 0.95, f);
        } else if (IS(8) || IS(9)) {  // door: frame; lower: rail and panels; upper: window
            float f = frame(px, 2.0);
            float inner;
            if (IS(8)) {
                inner = max(frame(px, 4.0) * (1.0 - f), rect(px, vec2(2.0, 7.0), vec2(14.0, 9.0)));
                inner = max(inner, rect(px, vec2(7.0, 2.0), vec2(9.0, 14.0)));
                c *= (1.0 - 0.4 * f) * (1.0 - 0.18 * inner);
            } else {
                float win = rect(px, vec2(3.0, 4.0), vec2(13.0, 13.0))
                          * (1.0 - rect(px, vec2(7.5, 4.0), vec2(8.5, 13.0)))
                          * (1.0 - rect(px, vec2(3.0, 8.0), vec2(13.0, 9.0)));
                c *= (1.0 - 0.4 * f) * (1.0 - 0.6 * win);
            }
        } else if (IS(10)) {    // trapdoor: frame and four openings
            float f = frame(px, 2.0);
            float holes = rect(px, vec2(3.0), vec2(7.0)) + rect(px, vec2(9.0, 3.0), vec2(13.0, 7.0))
                        + rect(px, vec2(3.0, 9.0), vec2(7.0, 13.0)) + rect(px, vec2(9.0), vec2(13.0));
            c *= (1.0 - 0.4 * f) * (1.0 - 0.6 * holes);
        }
    }
    vec2 e = min(v_uv, v_size - v_uv);
    float m = min(e.x, e.y);
    float w = fwidth(m);
    float line = (1.0 - smoothstep(0.0, 1.5 * w, m)) * (1.0 - smoothstep(0.04, 0.2, w));
    // outlined sides (mesh.py: the surface does not go on there): a darker line that stays
    // longer with distance
    float o = 1e9;
    if ((v_outline & 1) != 0) o = min(o, v_uv.x);
    if ((v_outline & 2) != 0) o = min(o, v_size.x - v_uv.x);
    if ((v_outline & 4) != 0) o = min(o, v_uv.y);
    if ((v_outline & 8) != 0) o = min(o, v_size.y - v_uv.y);
    float outline = (1.0 - smoothstep(0.0, 2.0 * w, o)) * (1.0 - smoothstep(0.15, 0.5, w));
    c *= 1.0 - max(0.22 * line, 0.55 * outline);
    float dist = length(v_pos - u_eye);
    float fog = clamp((dist - u_fog_start) / max(u_fog_end - u_fog_start, 1.0), 0.0, 1.0);
    f_color = vec4(mix(c, u_haze, fog * 0.7), a);
}
"""

_SKY_VS = """
#version 330
in vec2 in_pos; out vec2 v_ndc;
void main() { v_ndc = in_pos; gl_Position = vec4(in_pos, 0.0, 1.0); }
"""

_SKY_FS = """
#version 330
uniform mat4 u_inv; uniform vec3 u_zenith; uniform vec3 u_horizon; uniform vec3 u_ground; uniform int u_ortho;
in vec2 v_ndc; out vec4 f_color;
void main() {
    vec4 a = u_inv * vec4(v_ndc, -1.0, 1.0);
    vec4 b = u_inv * vec4(v_ndc, 1.0, 1.0);
    vec3 dir = normalize(b.xyz / b.w - a.xyz / a.w);
    float t = u_ortho == 1 ? (v_ndc.y * 0.5 + 0.5) : dir.y;
    vec3 c = t > 0.0 ? mix(u_horizon, u_zenith, pow(clamp(t, 0.0, 1.0), 0.6))
                     : mix(u_horizon, u_ground, clamp(-t * 4.0, 0.0, 1.0));
    f_color = vec4(c, 1.0);
}
"""


def look_dir(yaw: float, pitch: float) -> np.ndarray:
    y, p = math.radians(yaw), math.radians(pitch)
    return np.array([-math.sin(y) * math.cos(p), -math.sin(p), math.cos(y) * math.cos(p)], np.float64)


def look_at(eye: np.ndarray, fwd: np.ndarray) -> np.ndarray:
    f = fwd / np.linalg.norm(fwd)
    up = np.array([0.0, 1.0, 0.0]) if abs(f[1]) < 0.999 else np.array([0.0, 0.0, -1.0 if f[1] < 0 else 1.0])
    s = np.cross(f, up)
    s /= np.linalg.norm(s)
    u = np.cross(s, f)
    m = np.identity(4)
    m[0, :3], m[1, :3], m[2, :3] = s, u, -f
    m[:3, 3] = -m[:3, :3] @ eye
    return m


def perspective(fov_deg: float, aspect: float, near: float, far: float) -> np.ndarray:
    f = 1.0 / math.tan(math.radians(fov_deg) / 2)
    m = np.zeros((4, 4))
    m[0, 0], m[1, 1] = f / aspect, f
    m[2, 2], m[2, 3] = (far + near) / (near - far), 2 * far * near / (near - far)
    m[3, 2] = -1.0
    return m


def orthographic(half_w: float, half_h: float, near: float, far: float) -> np.ndarray:
    m = np.identity(4)
    m[0, 0], m[1, 1] = 1 / half_w, 1 / half_h
    m[2, 2], m[2, 3] = -2 / (far - near), -(far + near) / (far - near)
    return m


@dataclass
class View:
    """Where to look from, in coordinates relative to the mesh origin."""

    eye: np.ndarray
    forward: np.ndarray
    fov: float
    width: int
    height: int
    ortho_half: tuple[float, float] | None = None  # (half width, half height) for orthographic
    far: float = 512.0


def perspective_view(
    pose_xyz: tuple[float, float, float],
    yaw: float,
    pitch: float,
    fov: float,
    width: int,
    height: int,
    origin: tuple[int, int, int],
    far: float,
) -> View:
    eye = np.array(pose_xyz, np.float64) - np.array(origin, np.float64)
    eye[1] += EYE_HEIGHT
    return View(eye, look_dir(yaw, pitch), fov, width, height, None, far)


def ortho_view(kind: str, size: tuple[int, int, int], width: int, height: int, yaw: float = 180.0) -> View:
    """``top`` (looking down, north up) or ``side`` (looking horizontally along ``yaw``, snapped
    to the nearest of south 0, west 90, north 180, east 270) over a box."""
    sx, sy, sz = size
    c = np.array([sx / 2, sy / 2, sz / 2])
    aspect = width / height
    if kind == "top":
        hw, hh = sx / 2 + 1, sz / 2 + 1
        eye, fwd = c + np.array([0, sy / 2 + 2, 0]), np.array([0.0, -1.0, 0.0])
    else:
        fwd = np.round(look_dir(round((yaw % 360.0) / 90.0) * 90.0, 0.0))
        along_x = abs(fwd[0]) > 0.5
        hw, hh = (sz if along_x else sx) / 2 + 1, sy / 2 + 1
        eye = c - fwd * ((sx if along_x else sz) / 2 + 2)
    if hw / hh > aspect:
        hh = hw / aspect
    else:
        hw = hh * aspect
    return View(eye, fwd, 0.0, width, height, (hw, hh), float(sx + sy + sz) + 8)


def view_projection(view: View) -> np.ndarray:
    """The 4x4 matrix from mesh coordinates to clip space for ``view``."""
    vmat = look_at(view.eye, view.forward)
    if view.ortho_half is not None:
        proj = orthographic(view.ortho_half[0], view.ortho_half[1], 0.1, view.far)
    else:
        proj = perspective(view.fov, view.width / view.height, 0.05, view.far)
    return proj @ vmat


def project(view: View, points: np.ndarray) -> np.ndarray:
    """Mesh coordinates (n, 3) -> pixel coordinates (n, 2) as (column, row), row 0 at the top
    of the rendered image (for tests and pictures that point at a block)."""
    pts = np.asarray(points, np.float64).reshape(-1, 3)
    clip = np.c_[pts, np.ones(len(pts))] @ view_projection(view).T
    ndc = clip[:, :3] / clip[:, 3:4]
    return np.c_[(ndc[:, 0] + 1) / 2 * view.width, (1 - ndc[:, 1]) / 2 * view.height]


class GLRenderer:
    def __init__(self, backend: str = "egl") -> None:
        """``backend``: moderngl's standalone context backend (CameraSettings.gl_backend)."""
        import moderngl

        self.mgl = moderngl
        # Any: moderngl's bundled stubs (moderngl-stubs) lack Context.depth_mask (a property in
        # moderngl/__init__.py), type Program[name] as a union without a common write()/value, and
        # each **settings value of create_standalone_context as a dict (backend is a str)
        self.ctx: Any = moderngl.create_standalone_context(backend=backend, require=330)  # type: ignore[arg-type]
        # one program per pattern (index = patterns id) and one for any pattern (-1)
        self.progs: dict[int, Any] = {
            k: self.ctx.program(
                vertex_shader=_VS, fragment_shader=_FS.replace("#version 330\n", f"#version 330\n#define PAT {k}\n", 1)
            )
            for k in range(-1, len(patterns.NAMES))
        }
        self.sky: Any = self.ctx.program(vertex_shader=_SKY_VS, fragment_shader=_SKY_FS)
        quad = np.array([0, 0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 1], np.float32)
        self.quad = self.ctx.buffer(quad.tobytes())
        tri = np.array([-1, -1, 3, -1, -1, 3], np.float32)
        self.sky_vao = self.ctx.vertex_array(self.sky, [(self.ctx.buffer(tri.tobytes()), "2f", "in_pos")])
        self._fbos: dict[tuple[int, int], Any] = {}
        i = self.ctx.info  # read here: the context is current only in this (the GL) thread
        self.info = {"renderer": str(i.get("GL_RENDERER")), "version": str(i.get("GL_VERSION"))}

    def _fbo(self, w: int, h: int):
        fbo = self._fbos.get((w, h))
        if fbo is None:
            if len(self._fbos) > 4:
                for old in self._fbos.values():
                    old.release()
                self._fbos.clear()
            fbo = self.ctx.framebuffer(
                color_attachments=[self.ctx.renderbuffer((w, h), 4)],
                depth_attachment=self.ctx.depth_renderbuffer((w, h)),
            )
            self._fbos[(w, h)] = fbo
        return fbo

    def render(self, mesh: Mesh, view: View) -> np.ndarray:
        """-> (height, width, 3) uint8, top row first."""
        w, h = view.width, view.height
        fbo = self._fbo(w, h)
        fbo.use()
        ctx = self.ctx
        vp = view_projection(view)
        inv = np.linalg.inv(vp)
        ctx.disable(self.mgl.DEPTH_TEST | self.mgl.BLEND | self.mgl.CULL_FACE)
        self.sky["u_inv"].write(inv.T.astype("f4").tobytes())
        self.sky["u_zenith"].value = SKY_ZENITH
        self.sky["u_horizon"].value = SKY_HORIZON
        self.sky["u_ground"].value = GROUND_HAZE
        self.sky["u_ortho"].value = 1 if view.ortho_half is not None else 0
        ctx.clear(*SKY_HORIZON, 1.0, depth=1.0)
        self.sky_vao.render(self.mgl.TRIANGLES)
        fog_end = view.far if view.ortho_half is None else 1e9
        for prog in self.progs.values():
            prog["u_vp"].write(vp.T.astype("f4").tobytes())
            prog["u_eye"].value = tuple(float(v) for v in view.eye)
            prog["u_haze"].value = SKY_HORIZON
            prog["u_fog_start"].value = float(fog_end * 0.45)
            prog["u_fog_end"].value = float(fog_end)
        ctx.enable(self.mgl.DEPTH_TEST)
        # mesh.opaque is sorted by pattern (mesh.build): one draw per pattern's program
        pat = mesh.opaque[:, 15]
        cuts = np.searchsorted(pat, np.arange(len(self.progs) - 1), side="left").tolist() + [len(pat)]
        for k in range(len(cuts) - 1):
            self._draw(mesh.opaque[cuts[k] : cuts[k + 1]], self.progs[k])
        if len(mesh.translucent):
            ctx.enable(self.mgl.BLEND)
            ctx.blend_func = self.mgl.SRC_ALPHA, self.mgl.ONE_MINUS_SRC_ALPHA
            ctx.depth_mask = False
            # back to front by face centre: good enough for glass and water surfaces
            t = mesh.translucent
            centre = (t[:, 0:3] + t[:, 3:6]) * 0.5
            order = np.argsort(-np.einsum("ij,ij->i", centre - view.eye, centre - view.eye))
            self._draw(t[order], self.progs[-1])
            ctx.depth_mask = True
            ctx.disable(self.mgl.BLEND)
        data = fbo.read(components=3, alignment=1)
        ctx.finish()
        img = np.frombuffer(data, np.uint8).reshape(h, w, 3)
        return img[::-1].copy()

    def _draw(self, rows: np.ndarray, prog) -> None:
        if len(rows) == 0:
            return
        inst = self.ctx.buffer(np.ascontiguousarray(rows, np.float32).tobytes())
        vao = self.ctx.vertex_array(
            prog,
            [
                (self.quad, "2f", "in_corner"),
                (
                    inst,
                    "3f 3f 1f 4f 4f 1f 1f/i",
                    "in_lo",
                    "in_hi",
                    "in_dir",
                    "in_color",
                    "in_ao",
                    "in_pat",
                    "in_outline",
                ),
            ],
            skip_errors=True,
        )  # the plain program (PAT 0) has no in_pat: the compiler dropped it
        vao.render(self.mgl.TRIANGLES, vertices=6, instances=len(rows))
        vao.release()
        inst.release()
