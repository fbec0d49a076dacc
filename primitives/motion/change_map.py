"""Where two frames differ once the camera's motion is taken out: ``change_map(frame_a, frame_b)``.

Frame b is aligned onto frame a by one homography fitted (RANSAC) to one-to-one SIFT matches: exact for a camera
that turns or zooms, and for a flat scene; for a camera that moves past things at several depths the homography
fits the dominant surfaces and near things keep some parallax (the readout warns when the matches say so). The
aligned frames are compared in CIE Lab after matching their brightness, each pixel against the aligned
neighbourhood of +-``SLACK_PX`` pixels (so an edge off by a pixel is no change); a pixel changes when its colour
difference exceeds ``threshold`` (Lab units, about 2.3 per just noticeable difference); specks under 3 px
across are dropped, and changed pixels are grouped into regions (boxes in frame a's pixels, x right, y down) of at least ``min_share`` of the frame.

When too few matches agree on one alignment, the readout says ALIGNMENT FAILED and reports no regions: the
difference would be the camera's motion, not a change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from PIL import Image

from spatialclaw.primitives.motion.features import feature_scale, matched_points
from spatialclaw.primitives.runtime.library_failures import guarded

__all__ = ["MIN_AGREEING", "SLACK_PX", "ChangeMap", "ChangedRegion", "change_map"]

MIN_AGREEING = 15  # matches that must agree on the alignment
MIN_AGREEING_SHARE = 0.3  # ... and this share of all matches
PARALLAX_PX = 1.0  # 75th-percentile alignment error of the agreeing matches above which the camera moved
SLACK_PX = 1  # a pixel is compared with frame b's aligned pixels within this many pixels of it
INLIER_PX = 2.0  # alignment error (pixels) for a match to agree with the homography


@dataclass
class ChangedRegion:
    """One connected region that changed: box (x0, y0, x1, y1) pixels of frame a (x1, y1 exclusive), share
    of the frame's pixels it covers, and its median colour difference (Lab units)."""

    box: tuple[int, int, int, int]
    share: float
    difference: float


@dataclass
class ChangeMap:
    """Where frame b differs from frame a after aligning the camera's motion; ``print(cm)`` reads it out and
    ``show(cm.image)`` shows it (frame a with the changed pixels in red and their boxes; grey where frame b
    does not reach).

    aligned: whether one homography aligned the frames (False: ``reason`` says why, and ``regions`` is empty).
    homography: (3, 3) pixels of a -> pixels of b (None when not aligned). matches / agreeing: SIFT matches and
    how many agree with it (within 2 px); error_px: their 75th-percentile alignment error (pixels): above 1 px
    the camera moved past things at several depths and near edges may show as change. mask: (H, W) bool changed
    pixels of frame a. regions: the changed regions (.box, .share, .difference), largest first. changed_share: share of the overlap
    that changed (None when not aligned). overlap_share: share of frame a that frame b covers.
    threshold: the colour difference (Lab units) a pixel had to exceed; min_share: the smallest region reported
    (share of the frame)."""

    frame_a: int
    frame_b: int
    aligned: bool
    reason: str
    homography: np.ndarray | None
    matches: int
    agreeing: int
    error_px: float
    mask: np.ndarray
    regions: list[ChangedRegion]
    changed_share: float | None
    overlap_share: float
    threshold: float
    min_share: float
    image: Image.Image = field(repr=False)

    @property
    def readout(self) -> str:
        head = f"frames {self.frame_a} vs {self.frame_b}: "
        if not self.aligned:
            return head + (
                f"ALIGNMENT FAILED ({self.reason}): the frames' differences would be the camera's motion, not a "
                f"change, so no changed regions are reported; compare frames closer in time, or look at both"
            )
        text = (
            f"aligned by one homography ({self.agreeing}/{self.matches} matches agree, error {self.error_px:.1f} px; "
            f"frame b covers {100 * self.overlap_share:.0f} % of frame a)"
        )
        if self.error_px > PARALLAX_PX:
            text += (
                "; WARNING: the camera moved past things at several depths (the alignment leaves parallax), so "
                "edges of near things may show as change"
            )
        if not self.regions:
            return (
                head
                + text
                + (
                    f"; NO CHANGE: no region of {100 * self.min_share:.1f} % of the frame or more differs by over "
                    f"{self.threshold:.0f} Lab units"
                )
            )
        listed = ", ".join(
            f"box ({r.box[0]}, {r.box[1]}, {r.box[2]}, {r.box[3]}) {100 * r.share:.1f} % of the frame "
            f"(difference {r.difference:.0f})"
            for r in self.regions[:8]
        )
        more = f" and {len(self.regions) - 8} smaller" if len(self.regions) > 8 else ""
        return (
            head
            + text
            + (
                f"; {len(self.regions)} changed region{'s' if len(self.regions) > 1 else ''} in frame a's pixels: "
                f"{listed}{more}; {100 * (self.changed_share or 0.0):.1f} % of the overlap changed (a pixel changes "
                f"when its colour differs by over {self.threshold:.0f} Lab units from frame b's within {SLACK_PX} px)"
            )
        )

    def __repr__(self) -> str:
        return self.readout


def _align(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray | None, int, int, float, str]:
    """(homography a -> b or None, matches, agreeing, 75th-percentile error px, reason when None)."""
    import cv2

    points_a, points_b, _ = matched_points(a, b, feature_scale(a.shape))
    if len(points_a) < MIN_AGREEING:
        return None, len(points_a), 0, float("nan"), f"only {len(points_a)} feature matches (need {MIN_AGREEING})"
    found = guarded(
        lambda: cv2.findHomography(points_a, points_b, cv2.RANSAC, INLIER_PX, maxIters=4000, confidence=0.999)[0],
        lambda _: None,
    )
    if found is None:
        return None, len(points_a), 0, float("nan"), "no homography fits the matches"
    H = np.asarray(found, dtype=np.float64)
    moved = np.column_stack([points_a, np.ones(len(points_a))]) @ H.T
    errors = np.linalg.norm(moved[:, :2] / moved[:, 2:3] - points_b, axis=1)
    agree = errors <= INLIER_PX
    error = float(np.percentile(errors[agree], 75)) if agree.any() else float("nan")
    if agree.sum() < max(MIN_AGREEING, MIN_AGREEING_SHARE * len(points_a)):
        return (
            None,
            len(points_a),
            int(agree.sum()),
            error,
            f"only {int(agree.sum())} of {len(points_a)} matches agree on one alignment (need {MIN_AGREEING} and "
            f"{100 * MIN_AGREEING_SHARE:.0f} %): the views share too little, or the camera moved past a deep scene",
        )
    return H, len(points_a), int(agree.sum()), error, ""


def _lab(rgb: np.ndarray) -> np.ndarray:
    import cv2

    return np.asarray(cv2.cvtColor(rgb.astype(np.float32) / 255.0, cv2.COLOR_RGB2LAB))


def _differences(a: np.ndarray, warped: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """(H, W) Lab colour difference of each pixel of ``a`` from the nearest colour among ``warped``'s pixels
    within ``SLACK_PX`` (per channel, the distance to their range), after matching the lightness."""
    import cv2

    lab_a, lab_b = _lab(a), _lab(warped)
    if valid.sum() > 100:  # exposure: match the lightness's median and spread over the overlap
        la, lb = lab_a[..., 0][valid], lab_b[..., 0][valid]
        spread_a, spread_b = np.subtract(*np.percentile(la, [90, 10])), np.subtract(*np.percentile(lb, [90, 10]))
        gain = float(np.clip(spread_a / max(spread_b, 1e-3), 0.5, 2.0))
        lab_b[..., 0] = (lab_b[..., 0] - np.median(lb)) * gain + np.median(la)
    kernel = np.ones((2 * SLACK_PX + 1, 2 * SLACK_PX + 1), np.uint8)
    low = np.stack([cv2.erode(lab_b[..., c], kernel) for c in range(3)], axis=-1)
    high = np.stack([cv2.dilate(lab_b[..., c], kernel) for c in range(3)], axis=-1)
    outside = np.maximum(low - lab_a, 0) + np.maximum(lab_a - high, 0)
    return np.asarray(np.linalg.norm(outside, axis=-1))


def _overlay(a: np.ndarray, mask: np.ndarray, valid: np.ndarray, regions: list[ChangedRegion]) -> Image.Image:
    import cv2

    out = a.astype(np.float32)
    out[~valid] = 0.35 * out[~valid] + 0.65 * 128
    out[mask] = 0.4 * out[mask] + 0.6 * np.array([255.0, 0.0, 0.0])
    image = np.ascontiguousarray(np.clip(out, 0, 255).astype(np.uint8))
    for region in regions:
        x0, y0, x1, y1 = region.box
        cv2.rectangle(image, (x0, y0), (x1 - 1, y1 - 1), (255, 255, 0), 1)
    return Image.fromarray(image)


def change_map(frame_a: Any, frame_b: Any, *, threshold: float = 12.0, min_share: float = 0.002) -> ChangeMap:
    """Where two frames differ once the camera's motion is aligned away: changed regions (boxes, share) and an image.

    The alignment is one homography (a turn, a zoom, a flat scene); regions are boxes in frame a's pixels with
    their share of the frame, and ``show(cm.image)`` shows them. It says when the alignment failed (then the
    differences are just camera motion and no region is reported).

    Args:
        frame_a, frame_b: two frames of the same size (``frames[i]``, PIL images or (H, W, 3) uint8 arrays);
            boxes and the mask are in frame a's pixels (x right, y down).
        threshold: colour difference (CIE Lab units; about 2.3 is just noticeable) a pixel must exceed against
            every aligned pixel of frame b within 1 px to count as changed.
        min_share: the smallest region reported, as a share of the frame's pixels (0.002 = 0.2 %).

    Returns:
        ``ChangeMap``: ``print(cm)`` reads it out (alignment evidence, each region's box, share and colour
        difference, the changed share of the overlap, or ALIGNMENT FAILED / NO CHANGE); ``cm.regions``,
        ``cm.mask`` ((H, W) bool), ``cm.aligned``, ``cm.error_px`` (over 1 px: the camera moved past things at
        several depths and near edges may show as change), ``show(cm.image)``.

    Example: ``cm = change_map(frames[0], frames[3]); print(cm); show(cm.image)``.
    """
    import cv2

    from spatialclaw.primitives.perception.inputs import frame_array, frame_index

    a, b = frame_array(frame_a), frame_array(frame_b)
    if a.shape != b.shape:
        raise ValueError(f"frames must have the same size; got {a.shape[:2]} and {b.shape[:2]} (H, W)")
    # frame_index returns its default (an int) for an item without an absolute index
    index_a, index_b = cast(int, frame_index(frame_a, 0)), cast(int, frame_index(frame_b, 1))
    height, width = a.shape[:2]
    H, matches, agreeing, error, reason = _align(a, b)
    if H is None:
        empty = np.zeros((height, width), dtype=bool)
        image = _overlay(a, empty, np.ones_like(empty), [])
        return ChangeMap(
            index_a,
            index_b,
            False,
            reason,
            None,
            matches,
            agreeing,
            error,
            empty,
            [],
            None,
            0.0,
            threshold,
            min_share,
            image,
        )
    flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP  # frame b's pixel at H x for each pixel x of frame a
    warped = cv2.warpPerspective(b, H, (width, height), flags=flags, borderMode=cv2.BORDER_CONSTANT)
    reach = cv2.warpPerspective(np.full((height, width), 255, np.uint8), H, (width, height), flags=flags)
    valid = cv2.erode(reach, np.ones((5, 5), np.uint8)) == 255
    difference = _differences(a, warped, valid)
    changed = (difference > threshold) & valid
    opened = cv2.morphologyEx(changed.astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    closed = cv2.morphologyEx(opened, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8)) > 0
    count, labels, stats, _ = cv2.connectedComponentsWithStats(closed.astype(np.uint8), connectivity=8)
    regions = []
    mask = np.zeros_like(closed)
    for label in range(1, count):
        x, y, w, h, area = (int(v) for v in stats[label])
        if area < min_share * height * width:
            continue
        inside = labels == label
        mask |= inside
        regions.append(
            ChangedRegion((x, y, x + w, y + h), area / (height * width), float(np.median(difference[inside])))
        )
    regions.sort(key=lambda r: -r.share)
    overlap = float(valid.mean())
    share = float(mask.sum() / max(valid.sum(), 1))
    image = _overlay(a, mask, valid, regions)
    return ChangeMap(
        index_a,
        index_b,
        True,
        "",
        H,
        matches,
        agreeing,
        error,
        mask,
        regions,
        share,
        overlap,
        threshold,
        min_share,
        image,
    )
