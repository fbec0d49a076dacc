"""The focal length to assume for a frame when none is given: EXIF, a stated field of view, or a default.

Every source is reported in words next to the number, because rotation angles measured from pixels are
only as good as the focal length (an angle scales roughly with 1 / focal for small rotations).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["DEFAULT_PRIOR_HFOV_DEG", "exif_focal_px", "prior_intrinsics"]

DEFAULT_PRIOR_HFOV_DEG = 60.0  # a typical phone / webcam / benchmark camera; stated wherever it is used
_FULL_FRAME_DIAGONAL_MM = math.hypot(36.0, 24.0)


def exif_focal_px(item: Any, width: int, height: int) -> float | None:
    """Focal length in pixels from an image's EXIF ``FocalLengthIn35mmFilm`` (a path, a PIL image or a
    ``Frame`` with a ``source`` file), scaled by the image diagonal; None when the image carries none."""
    image = None
    try:
        from PIL import Image

        source = getattr(item, "source", None) if not isinstance(item, (str, Path)) else item
        if hasattr(item, "getexif"):
            image = item
        elif isinstance(source, (str, Path)) and Path(source).is_file():
            image = Image.open(source)
        if image is None:
            return None
        exif = image.getexif()
        focal_35 = exif.get_ifd(0x8769).get(0xA405) or exif.get(0xA405)
    except Exception:  # unreadable EXIF is the same as no EXIF
        return None
    if not focal_35 or float(focal_35) <= 0:
        return None
    return float(focal_35) * math.hypot(width, height) / _FULL_FRAME_DIAGONAL_MM


def prior_intrinsics(item: Any, width: int, height: int, fov_deg: float | None = None) -> tuple[np.ndarray, str]:
    """(3, 3) pixel intrinsics and where the focal length came from: ``fov_deg`` (a stated horizontal field
    of view, degrees) when given, else EXIF, else ``DEFAULT_PRIOR_HFOV_DEG``. Principal point at the centre."""
    if fov_deg is not None:
        if not 0.0 < float(fov_deg) < 180.0:
            raise ValueError(f"fov_deg must be a horizontal field of view between 0 and 180 degrees, got {fov_deg}")
        focal, source = (
            0.5 * width / math.tan(math.radians(float(fov_deg)) / 2.0),
            f"stated {float(fov_deg):g} degree field of view",
        )
    else:
        exif = exif_focal_px(item, width, height)
        if exif is not None:
            hfov = math.degrees(2 * math.atan(0.5 * width / exif))
            focal, source = exif, f"EXIF 35 mm focal length ({hfov:.0f} degree field of view)"
        else:
            focal = 0.5 * width / math.tan(math.radians(DEFAULT_PRIOR_HFOV_DEG) / 2.0)
            source = (
                f"ASSUMED {DEFAULT_PRIOR_HFOV_DEG:.0f} degree field of view (no intrinsics, fov_deg or EXIF; "
                f"angles scale with this guess)"
            )
    K = np.array([[focal, 0.0, (width - 1) / 2.0], [0.0, focal, (height - 1) / 2.0], [0.0, 0.0, 1.0]])
    return K, source
