"""Where a reconstruction's focal lengths came from, whether they are plausible, and how its angles depend on
them: ``FocalReport`` (``rec.focal``), built by ``focal_report``, and ``alternative_poses`` (the same two
views solved again at other fields of view, so a readout can say how an angle scales with an assumed focal).

Why it matters: from two views nothing fixes the focal length of an orbit (the views' optical axes meet at the
object, the degenerate case of self-calibration), and the angle between the two viewing directions then grows
in proportion to the focal length assumed; a camera that only turns measures rotations through a homography,
whose angle shrinks as the focal grows. From three or more views SfM fixes the angles even where it fixes the
focal length poorly (a narrow field of view: nearly parallel projection). Angles are "measured" only when the
focal length was given, stated, read from EXIF or estimated by SfM from at least three views.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "ALTERNATIVE_HFOVS_DEG",
    "HFOV_RANGE_DEG",
    "MEASURED_STATUSES",
    "FocalReport",
    "alternative_poses",
    "classify_source",
    "describe_focal",
    "focal_notes",
    "focal_report",
    "hfov_deg",
    "rotation_alternatives",
]

HFOV_RANGE_DEG = (15.0, 120.0)  # horizontal fields of view of everyday cameras; outside: flagged
SPREAD = 0.2  # a frame whose focal length differs from the median of the others by more than this is flagged
POORLY_DETERMINED_SD = 0.25  # relative standard deviation above which an SfM focal length is called poorly fixed
ALTERNATIVE_HFOVS_DEG = (20.0, 35.0, 90.0)  # where an unmeasured two-view angle is solved again
#: statuses whose angles count as measured (the others: assumed, two-view estimates, single-image guesses)
MEASURED_STATUSES = ("given", "stated", "exif", "estimated", "learned")


def hfov_deg(focal_px: float, width: int) -> float:
    """Horizontal field of view in degrees of a pinhole camera ``width`` pixels wide."""
    return math.degrees(2.0 * math.atan(0.5 * width / focal_px)) if focal_px > 0 else math.nan


def classify_source(source: str) -> str:
    """The status of a focal length from the words that describe where it came from (``prior_intrinsics``'
    and ``motion``'s sources): "assumed", "stated", "exif", "given" or "estimated"."""
    text = source.lower()
    if "assumed" in text or "default" in text:
        return "assumed"
    if "stated" in text or "fov_deg" in text:
        return "stated"
    if "exif" in text:
        return "exif"
    if "given" in text or "intrinsics=" in text:
        return "given"
    return "estimated"


@dataclass
class FocalReport:
    """The focal lengths of a reconstruction and how far to trust angles that depend on them.

    Attributes:
        status: "given" (``intrinsics=`` or RGB-D), "stated" (``fov_deg=``), "exif", "estimated" (SfM from 3+
            views, or a camera that only turns, self-calibrated), "learned" (a multi-view model), "two-view"
            (SfM placed only two views: the focal is not determined), "depth model" (a single-image network's
            guess) or "assumed" (a default field of view: nothing measured it).
        source: where it came from, in words.
        focal_px: (N,) horizontal focal length per frame in pixels (NaN where unknown).
        hfov_deg: (N,) horizontal field of view per frame in degrees.
        views: how many views fixed the focal length (SfM), else 0.
        relative_sd: the estimate's relative standard deviation (SfM bundle-adjustment covariance), or NaN.
        warnings: implausible values, in words (outside ``HFOV_RANGE_DEG``, far from the clip's others,
            poorly determined).
        alternatives: for two views or a turning camera whose focal is not measured, poses relative to the
            first frame solved again at other horizontal fields of view: {hfov_deg: (N, 4, 4)}.
    """

    status: str
    source: str
    focal_px: np.ndarray
    hfov_deg: np.ndarray
    views: int = 0
    relative_sd: float = math.nan
    warnings: list[str] = field(default_factory=list)
    alternatives: dict[float, np.ndarray] = field(default_factory=dict)

    @property
    def measured(self) -> bool:
        """True when angles computed with this focal length count as measurements."""
        return self.status in MEASURED_STATUSES

    def __str__(self) -> str:
        finite = self.focal_px[np.isfinite(self.focal_px)]
        if len(finite) == 0:
            return f"focal: unknown ({self.source})"
        spread = np.ptp(finite) > 0.01 * np.median(finite)
        hfovs = self.hfov_deg[np.isfinite(self.hfov_deg)]
        value = (
            f"{np.min(finite):.0f}-{np.max(finite):.0f} px (hfov {np.min(hfovs):.1f}-{np.max(hfovs):.1f} deg)"
            if spread
            else f"{finite[0]:.0f} px (hfov {hfovs[0]:.1f} deg)"
        )
        text = f"focal {value}, {self.status.upper()}: {self.source}"
        if math.isfinite(self.relative_sd):
            text += f", +-{100 * self.relative_sd:.2g}% (1 sd)"
        if not self.measured:
            text += "; angles that depend on it are NOT measurements"
        return "; ".join([text, *self.warnings])


def focal_report(
    status: str,
    source: str,
    intrinsics: np.ndarray,
    widths: list[int],
    registered: np.ndarray,
    indices: list[int],
    views: int = 0,
    relative_sd: float = math.nan,
) -> FocalReport:
    """A ``FocalReport`` for (N, 3, 3) pixel ``intrinsics`` of frames ``widths`` pixels wide, with the
    plausibility checks (field of view, spread within the clip, SfM's own standard deviation)."""
    focal = np.array(
        [
            float(K[0, 0]) if ok and np.isfinite(K).all() else math.nan
            for K, ok in zip(intrinsics, registered, strict=True)
        ]
    )
    hfov = np.array([hfov_deg(f, w) if math.isfinite(f) else math.nan for f, w in zip(focal, widths, strict=True)])
    report = FocalReport(status, source, focal, hfov, views, relative_sd)
    low, high = HFOV_RANGE_DEG
    odd = [(i, h) for i, h in zip(indices, hfov, strict=True) if math.isfinite(h) and not low <= h <= high]
    if odd:
        what = ", ".join(f"frame {i}: {h:.1f} deg" for i, h in odd[:4])
        report.warnings.append(
            f"horizontal field of view outside the usual {low:g}-{high:g} deg ({what}): "
            + (
                "a telephoto or object-capture rig (normal for turntable sets) or a cropped view; from 3+ views "
                "the angles depend little on it (their stated uncertainty includes it)"
                if status == "estimated" and views >= 3
                else "a zoomed (telephoto) or cropped view, or a wrong focal length (IMPLAUSIBLE? for an everyday camera)"
            )
        )
    finite = [(i, f) for i, f in zip(indices, focal, strict=True) if math.isfinite(f)]
    if len(finite) >= 3:
        values = np.array([f for _, f in finite])
        far = [
            (i, f)
            for k, (i, f) in enumerate(finite)
            if abs(f / np.median(np.delete(values, k)) - 1.0) > SPREAD  # against the median of the OTHER frames
        ]
        if far:
            report.warnings.append(
                "IMPLAUSIBLE? focal length far from the clip's others ("
                + ", ".join(f"frame {i}: {f:.0f} px" for i, f in far[:4])
                + f", median {np.median(values):.0f} px): one camera should not zoom between key frames; its "
                f"angles are suspect"
            )
    if math.isfinite(relative_sd) and relative_sd > POORLY_DETERMINED_SD:
        report.warnings.append(
            f"the focal length is poorly determined (+-{100 * relative_sd:.0f}%): a narrow view or few points"
        )
    return report


def alternative_poses(
    arrays: list[np.ndarray], hfovs: tuple[float, ...] = ALTERNATIVE_HFOVS_DEG
) -> dict[float, np.ndarray]:
    """Two views solved again (essential matrix) at each horizontal field of view in ``hfovs``: {hfov: (2, 4, 4)
    camera-to-camera-0 poses}; a field of view at which the pair does not solve is left out."""
    from spatialclaw.primitives.geometry.focal_prior import prior_intrinsics
    from spatialclaw.primitives.reconstruction.twoview import two_view

    out: dict[float, np.ndarray] = {}
    for hfov in hfovs:
        Ks = [prior_intrinsics(None, rgb.shape[1], rgb.shape[0], hfov)[0] for rgb in arrays]
        solved = two_view(arrays, Ks)
        if solved.registered.all():
            out[float(hfov)] = np.linalg.inv(solved.poses[0]) @ solved.poses
    return out


def rotation_alternatives(
    poses: np.ndarray, registered: np.ndarray, K: np.ndarray, hfovs: tuple[float, ...] = ALTERNATIVE_HFOVS_DEG
) -> dict[float, np.ndarray]:
    """A camera that only turns, solved again at other horizontal fields of view: the pixels each frame's
    rotation from the first registered one moves (the homography ``K R K^-1`` over a grid of the frame) read
    through the other focal length, and the rotation that best fits those rays (least squares). {hfov: (N, 4, 4)
    poses relative to the first registered frame}."""
    rows = np.flatnonzero(registered)
    if len(rows) < 2 or not np.isfinite(K).all():
        return {}
    width, height = 2.0 * (float(K[0, 2]) + 0.5), 2.0 * (float(K[1, 2]) + 0.5)
    xs, ys = np.meshgrid(np.linspace(0, width - 1, 7), np.linspace(0, height - 1, 7))
    pixels = np.column_stack([xs.ravel(), ys.ravel(), np.ones(xs.size)])  # in frame i
    first = np.linalg.inv(poses[rows[0]])
    out: dict[float, np.ndarray] = {}
    for hfov in hfovs:
        other = K.copy()
        other[0, 0] = other[1, 1] = 0.5 * width / math.tan(math.radians(hfov) / 2.0)
        inverse = np.linalg.inv(other)
        moved = np.full_like(poses, np.nan)
        for i in rows:
            seen = pixels @ (K @ (first @ poses[i])[:3, :3] @ np.linalg.inv(K)).T  # the same pixels in frame 0
            rays_i = pixels @ inverse.T
            rays_0 = seen @ inverse.T
            rays_i /= np.linalg.norm(rays_i, axis=1, keepdims=True)
            rays_0 /= np.linalg.norm(rays_0, axis=1, keepdims=True)
            U, _, Vt = np.linalg.svd(rays_0.T @ rays_i)  # Kabsch: rays_0 = R rays_i
            moved[i] = np.eye(4)
            moved[i][:3, :3] = U @ np.diag([1.0, 1.0, np.linalg.det(U @ Vt)]) @ Vt
        out[float(hfov)] = moved
    return out


def describe_focal(
    method: str,
    intrinsics: np.ndarray,
    widths: list[int],
    registered: np.ndarray,
    indices: list[int],
    *,
    given: bool,
    sensor: bool = False,
    prior: bool = False,
    words: str = "",
    sfm_views: int = 0,
    sfm_sd: float = math.nan,
) -> FocalReport:
    """The ``FocalReport`` of a reconstruction by ``method``: ``given`` (``intrinsics=`` or RGB-D ``sensor``
    intrinsics), ``prior`` (a depth model's guess, refined by SfM), ``words`` (where ``prior_intrinsics`` or
    ``motion`` took it from), ``sfm_views`` / ``sfm_sd`` (how many views fixed it in SfM, its relative sd)."""
    status, source, views, sd = "estimated", words, 0, math.nan
    if given:
        status, source = "given", "given with the RGB-D depth maps" if sensor else "given intrinsics"
    elif method == "learned":
        status, source = "learned", "predicted by the multi-view model with the poses"
    elif method == "sfm":
        views, sd = sfm_views, sfm_sd
        status = "estimated" if views >= 3 else "two-view"
        source = f"estimated by SfM (bundle adjustment) from {views} views" + (
            ", starting from the depth model's guess" if prior else ""
        )
        if views < 3:
            source += ": two views do not fix it, so angles are no better than this focal length"
    elif method == "two-view" and prior:
        status, source = "depth model", "a depth network's single-image guess (two views cannot check it)"
    elif method == "single-frame":
        status, source = "assumed", "a default field of view (one frame)"
    else:
        status = classify_source(words)
    return focal_report(status, source, intrinsics, widths, registered, indices, views, sd)


def focal_notes(
    focal: FocalReport,
    method: str,
    arrays: list[np.ndarray],
    poses: np.ndarray,
    registered: np.ndarray,
    K_out: np.ndarray,
) -> list[str]:
    """Fill ``focal.alternatives`` where angles rest on a focal length nothing measured (two views, a turning
    camera), warn about implausible focal lengths, and say in words how the angles depend on the focal."""
    notes: list[str] = []
    if focal.warnings:
        warnings.warn(f"reconstruct: {'; '.join(focal.warnings)} (rec.focal)", stacklevel=3)
    rows = np.flatnonzero(registered)
    if focal.measured or len(rows) < 2 or method not in ("two-view", "rotation"):
        return notes
    if method == "two-view":
        focal.alternatives = alternative_poses(arrays)
    else:
        focal.alternatives = rotation_alternatives(poses, registered, K_out[rows[0]])
    first, last = rows[0], rows[-1]
    cosine = float(np.clip(poses[first][:3, 2] @ poses[last][:3, 2], -1.0, 1.0))
    at = ", ".join(
        f"{np.degrees(np.arccos(np.clip(alt[first][:3, 2] @ alt[last][:3, 2], -1.0, 1.0))):.1f} at {hfov:g}"
        for hfov, alt in sorted(focal.alternatives.items())
    )
    hfov = float(np.nanmedian(focal.hfov_deg))
    how = (
        "two views cannot fix the focal length (an orbit's optical axes meet at the object), and the angle "
        "between the viewing directions grows with the focal length assumed"
        if method == "two-view"
        else "a turning camera's rotation angles come from a homography and shrink as the focal length grows"
    )
    message = (
        f"{how}: the {focal.status.upper()} focal ({focal.source}; hfov {hfov:.0f} deg) gives "
        f"{np.degrees(np.arccos(cosine)):.1f} deg between the first and last viewing directions"
        + (f"; at other horizontal fields of view (deg): {at}" if at else "")
        + ". This angle is NOT a measurement: pass intrinsics= or fov_deg= if known, or 3+ views of the scene "
        "(SfM then estimates the focal length)"
    )
    warnings.warn(f"reconstruct: {message}", stacklevel=3)
    return [message]
