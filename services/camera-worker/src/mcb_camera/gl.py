"""Drawing with OpenGL (moderngl) on a headless EGL context — Mesa's llvmpipe when no GPU.

One ``GLRenderer`` per worker; it owns the context and must be used from one thread (the
driver runs it in a single-thread executor). Faces come from ``mesh.Mesh`` and are drawn
instanced: one row per face, the vertex shader expands it into a quad. Passes: sky
(a gradient from the view ray), opaque faces (depth test), translucent faces (alpha blend,
no depth write). Shading: a fixed light per face direction (top 1.0, bottom 0.5,
north/south 0.8, east/west 0.6 — the game's own flat shading; a plant's crossed planes 0.85),
times the face's per-corner ambient occlusion (mesh.py), a faint edge line per block face so
single blocks stay readable, and distance fog toward the horizon colour.

Camera convention (Minecraft Java): the pose is the *feet* position; the eye is 1.62 above.
yaw 0 looks toward +z (south), 90 toward -x (west), 180 north, 270 east; pitch +90 looks
straight down, -90 straight up. ``fov`` is the vertical field of view in degrees.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .mesh import Mesh

EYE_HEIGHT = 1.62
SKY_ZENITH = (0.47, 0.65, 1.0)
SKY_HORIZON = (0.75, 0.85, 1.0)
GROUND_HAZE = (0.55, 0.6, 0.68)

_VS = """
#version 330
uniform mat4 u_vp;
in vec2 in_corner;
in vec3 in_lo; in vec3 in_hi; in float in_dir; in vec4 in_color; in vec4 in_ao;
out vec4 v_color; out vec2 v_uv; out vec2 v_size; out vec3 v_pos;
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
    v_uv = in_corner * size;
    v_size = size;
    v_pos = p;
    gl_Position = u_vp * vec4(p, 1.0);
}
"""

_FS = """
#version 330
uniform vec3 u_eye; uniform vec3 u_haze; uniform float u_fog_start; uniform float u_fog_end;
in vec4 v_color; in vec2 v_uv; in vec2 v_size; in vec3 v_pos;
out vec4 f_color;
void main() {
    vec2 e = min(v_uv, v_size - v_uv);
    float m = min(e.x, e.y);
    float w = fwidth(m);
    float line = (1.0 - smoothstep(0.0, 1.5 * w, m)) * (1.0 - smoothstep(0.04, 0.2, w));
    vec3 c = v_color.rgb * (1.0 - 0.22 * line);
    float dist = length(v_pos - u_eye);
    float fog = clamp((dist - u_fog_start) / max(u_fog_end - u_fog_start, 1.0), 0.0, 1.0);
    f_color = vec4(mix(c, u_haze, fog * 0.7), v_color.a);
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


def perspective_view(pose_xyz: tuple[float, float, float], yaw: float, pitch: float, fov: float,
                     width: int, height: int, origin: tuple[int, int, int], far: float) -> View:
    eye = np.array(pose_xyz, np.float64) - np.array(origin, np.float64)
    eye[1] += EYE_HEIGHT
    return View(eye, look_dir(yaw, pitch), fov, width, height, None, far)


def ortho_view(kind: str, size: tuple[int, int, int], width: int, height: int) -> View:
    """``top`` (looking down, north up) or ``side`` (from the south, looking north) over a box."""
    sx, sy, sz = size
    c = np.array([sx / 2, sy / 2, sz / 2])
    aspect = width / height
    if kind == "top":
        hw, hh = sx / 2 + 1, sz / 2 + 1
        eye, fwd = c + np.array([0, sy / 2 + 2, 0]), np.array([0.0, -1.0, 0.0])
    else:
        hw, hh = sx / 2 + 1, sy / 2 + 1
        eye, fwd = c + np.array([0, 0, sz / 2 + 2]), np.array([0.0, 0.0, -1.0])
    if hw / hh > aspect:
        hh = hw / aspect
    else:
        hw = hh * aspect
    return View(eye, fwd, 0.0, width, height, (hw, hh), float(sx + sy + sz) + 8)


class GLRenderer:
    def __init__(self, backend: str = "egl") -> None:
        """``backend``: moderngl's standalone context backend (CameraSettings.gl_backend)."""
        import moderngl

        self.mgl = moderngl
        self.ctx = moderngl.create_standalone_context(backend=backend, require=330)
        self.prog = self.ctx.program(vertex_shader=_VS, fragment_shader=_FS)
        self.sky = self.ctx.program(vertex_shader=_SKY_VS, fragment_shader=_SKY_FS)
        quad = np.array([0, 0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 1], np.float32)
        self.quad = self.ctx.buffer(quad.tobytes())
        tri = np.array([-1, -1, 3, -1, -1, 3], np.float32)
        self.sky_vao = self.ctx.vertex_array(self.sky, [(self.ctx.buffer(tri.tobytes()), "2f", "in_pos")])
        self._fbos: dict[tuple[int, int], object] = {}
        i = self.ctx.info  # read here: the context is current only in this (the GL) thread
        self.info = {"renderer": str(i.get("GL_RENDERER")), "version": str(i.get("GL_VERSION"))}

    def _fbo(self, w: int, h: int):
        fbo = self._fbos.get((w, h))
        if fbo is None:
            if len(self._fbos) > 4:
                for old in self._fbos.values():
                    old.release()
                self._fbos.clear()
            fbo = self.ctx.framebuffer(color_attachments=[self.ctx.renderbuffer((w, h), 4)],
                                       depth_attachment=self.ctx.depth_renderbuffer((w, h)))
            self._fbos[(w, h)] = fbo
        return fbo

    def render(self, mesh: Mesh, view: View) -> np.ndarray:
        """-> (height, width, 3) uint8, top row first."""
        w, h = view.width, view.height
        fbo = self._fbo(w, h)
        fbo.use()
        ctx = self.ctx
        vmat = look_at(view.eye, view.forward)
        if view.ortho_half is not None:
            proj = orthographic(view.ortho_half[0], view.ortho_half[1], 0.1, view.far)
        else:
            proj = perspective(view.fov, w / h, 0.05, view.far)
        vp = proj @ vmat
        inv = np.linalg.inv(vp)
        ctx.disable(self.mgl.DEPTH_TEST | self.mgl.BLEND | self.mgl.CULL_FACE)
        self.sky["u_inv"].write(inv.T.astype("f4").tobytes())
        self.sky["u_zenith"].value = SKY_ZENITH
        self.sky["u_horizon"].value = SKY_HORIZON
        self.sky["u_ground"].value = GROUND_HAZE
        self.sky["u_ortho"].value = 1 if view.ortho_half is not None else 0
        ctx.clear(*SKY_HORIZON, 1.0, depth=1.0)
        self.sky_vao.render(self.mgl.TRIANGLES)
        self.prog["u_vp"].write(vp.T.astype("f4").tobytes())
        self.prog["u_eye"].value = tuple(float(v) for v in view.eye)
        self.prog["u_haze"].value = SKY_HORIZON
        fog_end = view.far if view.ortho_half is None else 1e9
        self.prog["u_fog_start"].value = float(fog_end * 0.45)
        self.prog["u_fog_end"].value = float(fog_end)
        ctx.enable(self.mgl.DEPTH_TEST)
        self._draw(mesh.opaque)
        if len(mesh.translucent):
            ctx.enable(self.mgl.BLEND)
            ctx.blend_func = self.mgl.SRC_ALPHA, self.mgl.ONE_MINUS_SRC_ALPHA
            ctx.depth_mask = False
            # back to front by face centre: good enough for glass and water surfaces
            t = mesh.translucent
            centre = (t[:, 0:3] + t[:, 3:6]) * 0.5
            order = np.argsort(-np.einsum("ij,ij->i", centre - view.eye, centre - view.eye))
            self._draw(t[order])
            ctx.depth_mask = True
            ctx.disable(self.mgl.BLEND)
        data = fbo.read(components=3, alignment=1)
        ctx.finish()
        img = np.frombuffer(data, np.uint8).reshape(h, w, 3)
        return img[::-1].copy()

    def _draw(self, rows: np.ndarray) -> None:
        if len(rows) == 0:
            return
        inst = self.ctx.buffer(np.ascontiguousarray(rows, np.float32).tobytes())
        vao = self.ctx.vertex_array(self.prog, [
            (self.quad, "2f", "in_corner"),
            (inst, "3f 3f 1f 4f 4f/i", "in_lo", "in_hi", "in_dir", "in_color", "in_ao"),
        ])
        vao.render(self.mgl.TRIANGLES, vertices=6, instances=len(rows))
        vao.release()
        inst.release()
