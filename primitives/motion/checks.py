"""Plausibility gates and evidence warnings for ``motion``: what turns a fitted camera step into "unknown"
and what a measured step must warn about.

Gates (a fit that fails one is reported as unknown, with the reason, and stays out of every total):
the shared view the fitted motion implies (frames turned further apart than the field of view cannot
share matches), a turn over ``MAX_TURN_DEG``, an implausible roll between key frames (measured about the
vertical that explains it best: a camera looking down that turns about gravity does not roll), too little
agreement (confidence or inlier count); over a clip, a low-confidence step that turns far faster than the
clip's other steps (``rate_outliers``).
Warnings: the agreeing matches concentrate on one region (possibly a moving object, not the camera), or
many of them sit still on the frame's border (an overlay, logo or letterbox edge). Letterbox bars (black
rows or columns at the frame's edges in every frame) are found here so their matches can be left out.

Pixels: x right, y down, integer coordinates at pixel centres.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from spatialclaw.primitives.motion.pair import PairGeometry

__all__ = [
    "MAX_ROLL_DEG",
    "MAX_TURN_DEG",
    "MIN_CONFIDENCE",
    "MIN_INLIERS",
    "MIN_SHARED",
    "evidence_warnings",
    "image_motion",
    "implausible",
    "letterbox_mask",
    "lit_share",
    "rate_outliers",
    "shared_fraction",
]

MAX_ROLL_DEG = 30.0  # roll between two key frames beyond which a fit is taken for false matches
MAX_TURN_DEG = 90.0  # a turn between two frames beyond which they cannot share matched features
RATE_FACTOR = 4.0  # a step turning this many times the clip's median rate per frame is suspect ...
RATE_MIN_DEG = 20.0  # ... when it turns more than this ...
RATE_CONFIDENCE = 0.5  # ... at a confidence below this
MIN_CONFIDENCE = 0.3
MIN_INLIERS = 15
MIN_SHARED = 0.1  # share of frame a that the fitted motion keeps in view of frame b
CONCENTRATED = 0.2  # agreeing matches whose 5-95 % box covers less than this share of the frame
BORDER = 0.1  # border band (share of width / height) where overlays and letterbox edges sit
STILL_PX = 0.5


def shared_fraction(geometry: PairGeometry, width: int, height: int) -> float:
    """Share of frame a's pixels (a 20 x 20 grid) that the fitted rotation homography maps inside frame b
    and in front of its camera: 0 for frames turned further apart than the field of view."""
    if geometry.homography is None:
        return 0.0
    xs, ys = np.meshgrid(np.linspace(0, width - 1, 20), np.linspace(0, height - 1, 20))
    moved = np.column_stack([xs.ravel(), ys.ravel(), np.ones(xs.size)]) @ geometry.homography.T
    ahead = moved[:, 2] > 1e-9
    x = moved[:, 0] / np.where(ahead, moved[:, 2], 1.0)
    y = moved[:, 1] / np.where(ahead, moved[:, 2], 1.0)
    inside = ahead & (x >= -0.5) & (x <= width - 0.5) & (y >= -0.5) & (y <= height - 0.5)
    return float(inside.mean())


def implausible(
    geometry: PairGeometry,
    roll_deg: float,
    width: int,
    height: int,
    max_roll_deg: float = MAX_ROLL_DEG,
    turn_deg: float = 0.0,
) -> str | None:
    """Why a fitted step cannot be believed (a sentence), or None when it passes every gate. ``roll_deg``: the
    step's roll about the vertical that explains it best (``angles.least_roll``); ``turn_deg``: its rotation
    angle."""
    problems = []
    if turn_deg > MAX_TURN_DEG:
        problems.append(f"a turn of {turn_deg:.0f} deg between two frames (over {MAX_TURN_DEG:g} deg)")
    shared = shared_fraction(geometry, width, height)
    if geometry.kind != "translation" and shared < MIN_SHARED:
        problems.append(
            f"the fitted turn would leave only {100 * shared:.0f} % of the view shared, so its matches cannot "
            f"be real (the frames are further apart than the field of view)"
        )
    if abs(roll_deg) > max_roll_deg:
        problems.append(
            f"a roll of {abs(roll_deg):.0f} deg between key frames (over {max_roll_deg:g} deg), about any vertical "
            f"a camera pitched up to 60 deg up or down could have"
        )
    if geometry.confidence < MIN_CONFIDENCE:
        problems.append(f"confidence {geometry.confidence:.2f} < {MIN_CONFIDENCE}")
    if geometry.inliers < MIN_INLIERS:
        problems.append(f"only {geometry.inliers} agreeing matches (need {MIN_INLIERS})")
    if not problems:
        return None
    return (
        f"the best fit ({geometry.inliers} of {geometry.matches} matches) is implausible: "
        + "; ".join(problems)
        + "; the frames probably do not overlap (too far apart in time or view), or repeated texture or "
        "moving things produced false matches. Compare closer frames, or judge from the images"
    )


class _Turn(Protocol):
    """What ``rate_outliers`` reads of a ``result.CameraStep``."""

    frame_a: int
    frame_b: int
    kind: str
    rotation_deg: float | None
    confidence: float


def rate_outliers(steps: Sequence[_Turn]) -> dict[int, str]:
    """Steps (positions into ``steps``) too fast for the clip, with why: a measured step whose turn exceeds
    ``RATE_MIN_DEG`` and ``RATE_FACTOR`` times the median rate (degrees per frame) of the clip's OTHER
    measured steps over its own frame gap, at a confidence under ``RATE_CONFIDENCE`` (a fast, well-supported
    turn is believed). Needs 2 other measured steps; frames compared against the first are not rates."""
    measured = [(k, s) for k, s in enumerate(steps) if s.kind != "unknown" and s.rotation_deg is not None]
    if len({s.frame_a for s in steps}) == 1 and len(steps) > 1:
        return {}
    out = {}
    for k, step in measured:
        rates = [
            (other.rotation_deg or 0.0) / max(abs(other.frame_b - other.frame_a), 1) for j, other in measured if j != k
        ]
        if len(rates) < 2:
            continue
        rate = float(np.median(rates))
        gap = max(abs(step.frame_b - step.frame_a), 1)
        turn = step.rotation_deg or 0.0
        if turn > max(RATE_MIN_DEG, RATE_FACTOR * rate * gap) and step.confidence < RATE_CONFIDENCE:
            out[k] = (
                f"a turn of {turn:.1f} deg over {gap} frame(s) is {turn / max(rate * gap, 1e-9):.0f} times the "
                f"clip's median rate ({rate:.1f} deg per frame) at confidence {step.confidence:.2f} (< "
                f"{RATE_CONFIDENCE:g}): taken for false matches, left out of every total"
            )
    return out


def image_motion(geometry: PairGeometry, K: np.ndarray) -> tuple[float, float]:
    """(turn, move) pixels: the median image motion of the agreeing matches that the fitted turn alone
    (``R_ab`` through ``K``: K R_ab^T K^-1, whatever the depth) explains, and the median left over (what the
    camera's move adds); NaN without a rotation or 5 agreeing matches. The larger dominates the images."""
    inliers = geometry.inlier_mask
    if geometry.R_ab is None or inliers.sum() < 5:
        return float("nan"), float("nan")
    a, b = geometry.points_a[inliers], geometry.points_b[inliers]
    moved = np.column_stack([a, np.ones(len(a))]) @ (K @ geometry.R_ab.T @ np.linalg.inv(K)).T
    turned = moved[:, :2] / np.where(np.abs(moved[:, 2:]) > 1e-9, moved[:, 2:], 1e-9)
    return float(np.median(np.linalg.norm(turned - a, axis=1))), float(np.median(np.linalg.norm(b - turned, axis=1)))


def lit_share(array: np.ndarray, dark: int = 20) -> float:
    """Share of a frame's pixels that are not near-black (brightest channel over ``dark``): the area where
    matches can be found at all (an object photographed on black fills only this share)."""
    brightest = array.max(axis=2) if array.ndim == 3 else array
    return max(float((brightest > dark).mean()), 1e-6)


def evidence_warnings(geometry: PairGeometry, width: int, height: int, lit: float = 1.0) -> list[str]:
    """Warnings about where a measured step's agreeing matches lie (empty when they spread over the frame).
    ``lit``: share of frame a that is not near-black (``lit_share``); the matches' box is measured against
    that area, so an object on a black background is not taken for a moving region."""
    inliers = geometry.inlier_mask
    if geometry.homography is None or inliers.sum() < 5:
        return []
    warnings = []
    a, b = geometry.points_a[inliers], geometry.points_b[inliers]
    low, high = np.percentile(a, 5, axis=0), np.percentile(a, 95, axis=0)
    cover = float(np.prod(high - low) / (width * height * min(max(lit, 1e-6), 1.0)))
    if cover < CONCENTRATED:
        area = "the frame" if lit >= 0.95 else "the frame's non-black area"
        warnings.append(
            f"the agreeing matches sit in one region (box {low[0]:.0f}, {low[1]:.0f}, {high[0]:.0f}, {high[1]:.0f} px, "
            f"{100 * cover:.0f} % of {area}): if that is a moving object (a boat, a vehicle, a person) this "
            f"is its motion relative to the camera, not the camera's own"
        )
    still = np.linalg.norm(b - a, axis=1) < STILL_PX
    border = (
        (a[:, 0] < BORDER * width)
        | (a[:, 0] > (1 - BORDER) * width)
        | (a[:, 1] < BORDER * height)
        | (a[:, 1] > (1 - BORDER) * height)
    )
    stuck = int((still & border).sum())
    if geometry.kind != "static" and stuck >= max(5, 0.2 * len(a)):
        warnings.append(
            f"{stuck} of the agreeing matches do not move and sit on the frame's border (an overlay, logo, "
            f"timestamp or bar edge?): they pull the estimate towards no motion"
        )
    elif geometry.kind == "static" and stuck >= 0.5 * len(a):
        warnings.append(
            f"{stuck} of {len(a)} agreeing matches are still points on the frame's border (an overlay, logo, "
            f"timestamp or bar edge?): 'static' may only mean that the overlay does not move"
        )
    return warnings


def letterbox_mask(arrays: list[np.ndarray], dark: int = 20, margin: int = 2) -> np.ndarray | None:
    """(H, W) bool mask of letterbox / pillarbox bars (rows or columns at the frame's edges that are dark in
    every frame: brightest value <= ``dark``) grown by ``margin`` px, or None when there are none."""
    stack = np.max(np.stack([a.max(axis=2) if a.ndim == 3 else a for a in arrays]), axis=0)
    height, width = stack.shape
    rows, cols = stack.max(axis=1) <= dark, stack.max(axis=0) <= dark

    def run(flags: np.ndarray) -> tuple[int, int]:
        start = int(np.argmin(flags)) if not flags.all() else len(flags)
        end = int(np.argmin(flags[::-1])) if not flags.all() else len(flags)
        return start, end

    (top, bottom), (left, right) = run(rows), run(cols)
    if max(top, bottom, left, right) < 2 or top + bottom >= height - 4 or left + right >= width - 4:
        return None
    mask = np.zeros((height, width), bool)
    if top >= 2:
        mask[: top + margin] = True
    if bottom >= 2:
        mask[height - bottom - margin :] = True
    if left >= 2:
        mask[:, : left + margin] = True
    if right >= 2:
        mask[:, width - right - margin :] = True
    return mask
