"""Which side of an imaged rectangle is the long one, from perspective geometry (part of ``geom``).

An image quadrilateral of a rectangle fixes the camera's focal length (principal point at the image
centre, square pixels): the two vanishing points of its side pairs are orthogonal directions, and the
homography's two plane axes must have equal length through ``K^-1``. With that focal the quad's true
aspect ratio follows, so a sheet seen steeply (its long side foreshortened below the short one in the
image) is still assigned correctly; image side lengths would get it wrong.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spatialclaw.primitives.geometry.homography import homography_from_points

__all__ = ["FOV_RANGE_DEG", "QuadGeometry", "focal_for_aspect", "quad_geometry"]

FOV_RANGE_DEG = (20.0, 120.0)  # horizontal fields of view accepted as a real camera's


@dataclass(frozen=True)
class QuadGeometry:
    """The camera and shape implied by a quad seen as a rectangle.

    Attributes:
        focal_px: focal length (pixels) from the orthogonal vanishing points, or None where they fix none
            (a side pair parallel in the image, or f^2 < 0: not a rectangle) or its field of view is outside
            ``FOV_RANGE_DEG``.
        fov_deg: the horizontal field of view the vanishing points imply, degrees (None without a real focal).
        aspect: true length ratio of side quad[0]->quad[1] over side quad[0]->quad[3] on the plane, with
            ``focal_px`` (or, without one, ``image_aspect``).
        image_aspect: the same ratio measured in the image (sum of the opposite side pairs' lengths).
    """

    focal_px: float | None
    fov_deg: float | None
    aspect: float
    image_aspect: float


def _fov(focal: float, image_width: int) -> float:
    return float(np.degrees(2 * np.arctan(image_width / (2 * focal))))


def _plane_axes(quad: np.ndarray, centre: np.ndarray, focal: float) -> tuple[np.ndarray, np.ndarray]:
    """K^-1 h1, K^-1 h2 of the homography unit square -> quad (their length ratio = true aspect)."""
    H = homography_from_points(np.array([[0, 0], [1, 0], [1, 1], [0, 1]], float), quad)
    K_inv = np.array([[1 / focal, 0, -centre[0] / focal], [0, 1 / focal, -centre[1] / focal], [0, 0, 1]])
    M = K_inv @ H
    return M[:, 0], M[:, 1]


def quad_geometry(quad: np.ndarray, image_size: tuple[int, int]) -> QuadGeometry:
    """Focal length and true aspect of a (4, 2) quad (pixels, in order) in an image of (width, height) px."""
    quad = np.asarray(quad, dtype=np.float64)
    width, height = image_size
    centre = np.array([(width - 1) / 2, (height - 1) / 2])
    sides = np.linalg.norm(np.roll(quad, -1, axis=0) - quad, axis=1)
    image_aspect = float((sides[0] + sides[2]) / (sides[1] + sides[3]))
    H = homography_from_points(np.array([[0, 0], [1, 0], [1, 1], [0, 1]], float), quad)
    # H = K [r1 r2 t] diag(w, h, 1): with c the principal point, orthogonality of r1 and r2 gives
    # (h1 - c h1z).(h2 - c h2z) / f^2 + h1z h2z = 0 (square pixels, zero skew).
    h1, h2 = H[:, 0], H[:, 1]
    a = np.array([h1[0] - centre[0] * h1[2], h1[1] - centre[1] * h1[2]])
    b = np.array([h2[0] - centre[0] * h2[2], h2[1] - centre[1] * h2[2]])
    focal = None
    if abs(h1[2] * h2[2]) > 1e-12:
        f2 = -float(a @ b) / (h1[2] * h2[2])
        if f2 > 0:
            focal = float(np.sqrt(f2))
    fov = _fov(focal, width) if focal is not None else None
    if focal is None or fov is None or not (FOV_RANGE_DEG[0] <= fov <= FOV_RANGE_DEG[1]):
        return QuadGeometry(None, fov, image_aspect, image_aspect)
    r1, r2 = _plane_axes(quad, centre, focal)
    return QuadGeometry(focal, fov, float(np.linalg.norm(r1) / np.linalg.norm(r2)), image_aspect)


def focal_for_aspect(quad: np.ndarray, image_size: tuple[int, int], aspect: float) -> tuple[float | None, str]:
    """The focal length (pixels) for which the quad is a rectangle whose side quad[0]->quad[1] is ``aspect``
    times side quad[0]->quad[3] (the plane axes through ``K^-1`` equal in length), or None with the reason
    (no real focal, or a field of view outside ``FOV_RANGE_DEG``). Works where one side pair is parallel
    in the image, which leaves the vanishing-point focal undetermined."""
    quad = np.asarray(quad, dtype=np.float64)
    width, height = image_size
    centre = np.array([(width - 1) / 2, (height - 1) / 2])
    H = homography_from_points(np.array([[0, 0], [1, 0], [1, 1], [0, 1]], float), quad)
    h1, h2 = H[:, 0] / aspect, H[:, 1]
    a1 = np.array([h1[0] - centre[0] * h1[2], h1[1] - centre[1] * h1[2]])
    a2 = np.array([h2[0] - centre[0] * h2[2], h2[1] - centre[1] * h2[2]])
    # |K^-1 h1|^2 = |a1|^2 / f^2 + h1z^2 must equal the same for h2
    denominator = h2[2] ** 2 - h1[2] ** 2
    if abs(denominator) < 1e-18:
        return None, "no focal fixed (the view is fronto-parallel)"
    f2 = float(a1 @ a1 - a2 @ a2) / denominator
    if f2 <= 0:
        return None, "no real focal (f^2 < 0)"
    focal = float(np.sqrt(f2))
    fov = _fov(focal, width)
    if not (FOV_RANGE_DEG[0] <= fov <= FOV_RANGE_DEG[1]):
        return None, f"a {fov:.0f} deg field of view"
    return focal, f"focal {focal:.0f} px (fov {fov:.0f} deg)"
