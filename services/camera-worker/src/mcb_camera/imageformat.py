"""Picture encodings a capture may ask for: PNG (the drivers' own output, lossless) or JPEG
(Pillow; smaller for a model's context). Decoding either gives the RGB array ``diff`` compares."""

from __future__ import annotations

import io

import numpy as np

from . import png

FORMATS = {"png": ("image/png", "png"), "jpeg": ("image/jpeg", "jpg")}
JPEG_QUALITY = 88


def encode(png_bytes: bytes, fmt: str) -> bytes:
    """The driver's PNG in ``fmt`` ("png" returns it unchanged)."""
    if fmt in ("", "png"):
        return png_bytes
    from PIL import Image

    img = Image.open(io.BytesIO(png_bytes)).convert("RGB")
    out = io.BytesIO()
    img.save(out, "JPEG", quality=JPEG_QUALITY, optimize=True)
    return out.getvalue()


def decode(data: bytes) -> np.ndarray:
    if data.startswith(b"\x89PNG"):
        return png.decode(data)
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
