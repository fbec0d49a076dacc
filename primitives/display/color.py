"""Colour blobs: ``find_color`` finds the regions of a colour as ranked ``Blob``s with sub-pixel centroids.

All coordinates are pixels (x, y) of the original image, origin top-left, integer coordinates at pixel
centres. Which pixels count as the colour is decided in :mod:`.color_mask`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from spatialclaw.primitives.display.color_box import BoxShare, box_share, frame_box
from spatialclaw.primitives.display.color_mask import (
    MIN_CHROMA,
    band_distance,
    circular_mean,
    color_mask,
    color_space,
    hue_distance,
)
from spatialclaw.primitives.display.color_split import dot_cores
from spatialclaw.primitives.imaging import as_rgb_array

__all__ = ["Blob", "ColorBlobs", "find_color"]


@dataclass(frozen=True)
class Blob:
    """One connected region of the colour.

    Attributes:
        centroid: (x, y) pixels, sub-pixel: the centre of the region weighted by how strongly each pixel
            (including the partly covered edge pixels just outside the mask) shows the colour.
        area: pixel count of the mask (px^2). ``weighted_area``: the same weighted by colour strength
            (edge pixels count partly), px^2.
        box: (x0, y0, x1, y1) pixels: columns x0..x1-1 and rows y0..y1-1.
        mask: (H, W) bool region.
        mean_rgb: (3,) mean colour of the region, 0..255.
        match: 0..1, how well the blob fits the request (colour closeness and, when an expected size was
            given, size closeness); blobs are ranked by it.
        plane_xy / plane_size: with ``rectified=``: the centroid in plane units and the equivalent
            diameter in plane units (else None).
        compactness: 0..1, how disc-like the region is: the overlap (intersection over union) of its
            mask with the disc of the same area at its centroid (a solid round dot ~0.9-1, a square
            ~0.8, a strip or an irregular patch of wall or brick ~0.2-0.5).
    """

    centroid: tuple[float, float]
    area: int
    box: tuple[int, int, int, int]
    mask: np.ndarray = field(repr=False)
    mean_rgb: tuple[float, float, float] = (0.0, 0.0, 0.0)
    weighted_area: float = 0.0
    match: float = 1.0
    plane_xy: tuple[float, float] | None = None
    plane_size: float | None = None
    compactness: float = 0.0

    @property
    def size_px(self) -> float:
        """Equivalent diameter in pixels: the diameter of a disc of ``weighted_area``."""
        return float(np.sqrt(4.0 * (self.weighted_area or self.area) / np.pi))

    def __repr__(self) -> str:
        plane = ""
        if self.plane_xy is not None:
            plane = f", plane=({self.plane_xy[0]:.4g}, {self.plane_xy[1]:.4g}) size {self.plane_size:.3g}"
        return (
            f"Blob(centroid=({self.centroid[0]:.2f}, {self.centroid[1]:.2f}) px, area={self.area} px^2, "
            f"box={self.box}, match={self.match:.2f}, compactness={self.compactness:.2f}{plane})"
        )


class ColorBlobs(list[Blob]):
    """Blobs of one colour, best match first (a list of ``Blob``), with the colour mask that produced them.

    Without an expected size or a shape the order is by area (largest first); ``.thresholds`` records the adaptive
    thresholds used (hue band in degrees, Lab chroma or lightness floor)."""

    def __init__(
        self,
        blobs: Sequence[Blob],
        color: str,
        mask: np.ndarray,
        thresholds: dict[str, Any] | None = None,
        paler: Sequence[tuple[tuple[float, float], int, float]] = (),
        region: BoxShare | None = None,
    ) -> None:
        super().__init__(blobs)
        self.color = color
        self.mask = mask
        self.thresholds = thresholds or {}
        self.paler = list(paler)  # near misses: ((x, y) px, area px^2, median chroma)
        self.region = region  # with box=: the box searched and the share of it that shows the colour

    def __repr__(self) -> str:
        if self.region is None:
            return self._blobs_text()
        share = self.region.text.replace("of the colour", self.color)
        misses = ""
        if self.paler:
            floor = float(self.thresholds.get("min_chroma", 0.0))
            misses = f"; near misses (paler {self.color}, chroma under {floor:.0f}): " + "; ".join(
                f"({x:.0f}, {y:.0f}) px, area {area} px^2, chroma {c:.0f}" for (x, y), area, c in self.paler[:5]
            )
        body = self._blobs_text() if self else f"no {self.color} blobs of at least the minimum area"
        return f"{share}{misses}\n{body} (full-frame pixels)"

    def _blobs_text(self) -> str:
        if not self and self.paler:
            floor = float(self.thresholds.get("min_chroma", 0.0))
            low = min(c for _, _, c in self.paler)
            regions = "; ".join(
                f"({x:.0f}, {y:.0f}) px, area {area} px^2, chroma {c:.0f}" for (x, y), area, c in self.paler[:5]
            )
            return (
                f"ColorBlobs(no {self.color} blobs at chroma >= {floor:.0f}; {len(self.paler)} paler {self.color} "
                f"region{'s' if len(self.paler) != 1 else ''} at chroma {low:.0f}-{floor - 1:.0f}: {regions}; "
                f"pass min_chroma={int(low)} to get them as blobs)"
            )
        if not self:
            return f"ColorBlobs(no {self.color} blobs found; thresholds {self.thresholds})"
        lines = [f"{len(self)} {self.color} blob{'s' if len(self) != 1 else ''}, best match first:"]
        lines += [f"  [{i}] {blob!r}" for i, blob in enumerate(self)]
        return "\n".join(lines)


def _weighted_centroid(
    local: np.ndarray, values: np.ndarray, origin: tuple[int, int]
) -> tuple[tuple[float, float], float]:
    """Sub-pixel centre and area of a region (``local``: its mask in a crop with a 5-px margin,
    ``values``: the colour strength there, ``origin``: the crop's (x0, y0)): pixels within 2 px of the
    region weigh by their strength, scaled from the surrounding background's (0) to the core's (1)."""
    from scipy.ndimage import binary_dilation, binary_erosion

    near = binary_dilation(local, iterations=2)
    ring = binary_dilation(local, iterations=4) & ~near
    core = binary_erosion(local, iterations=1)
    core = core if core.any() else local
    background = float(np.median(values[ring])) if ring.any() else float(values[~local].min(initial=values.min()))
    inside = float(np.percentile(values[core], 90))  # blur lowers a small blob's median below its colour
    if inside - background < 1e-6:
        weights = local.astype(np.float64)
    else:
        weights = np.clip((values - background) / (inside - background), 0.0, 1.0) * near
    total = float(weights.sum())
    if total <= 0:
        weights, total = local.astype(np.float64), float(local.sum())
    gy, gx = np.mgrid[0 : local.shape[0], 0 : local.shape[1]]
    return (float((weights * gx).sum() / total) + origin[0], float((weights * gy).sum() / total) + origin[1]), total


def find_color(
    frame: Any,
    color: str | tuple[int, int, int] = "red",
    min_area: int = 20,
    hue_tolerance: float | None = None,
    min_chroma: float | None = None,
    max_blobs: int = 50,
    expected_size: float | None = None,
    rectified: Any = None,
    shape: str | None = None,
    box: Any = None,
) -> ColorBlobs:
    """Find blobs of a colour, pale or saturated; in ``box=``, also the share it covers.

    Adaptive thresholds and connected components; for small
    solid marker dots pass ``shape="dot"`` (and ``expected_size=`` their diameter, px) so the dot ranks
    first, above larger same-coloured clutter.

    A pixel has the colour when its hue (HSV, degrees) lies in the colour's band and its colourfulness
    (CIE Lab chroma) stands out from this image's neutral surfaces: the chroma floor adapts to the image
    (2.5 x the typical chroma of the more neutral half of the pixels that could be mistaken for the colour,
    so pink walls do not hide a pale green bag; at least 6 and at most 25), so pale stickers on
    white paper and saturated ones are both found, and grey or white surfaces are not; pink is the light (Lab L >= 60)
    and red the darker (L <= 75) part of the red-pink hues. White/grey/black use Lab lightness among
    neutral pixels.

    Ranking: without ``expected_size`` blobs come largest first. With ``expected_size`` (the blob's
    typical width: a disc's diameter, about 1.13 x a square's side) they are ranked by ``match``: how
    close their size is to it (in pixels, or in plane units when ``rectified=`` is given) and how close
    their colour is to the band centre, so a large object of similar hue, or light-brown tape when asking
    for yellow, ranks below the sticker you asked for. With ``rectified=`` blobs on the reference
    rectangle rank above blobs off it (their ``plane_xy`` says where each one is).

    Shape: ``shape="dot"`` is for small solid round markers (e.g. 8-11 px coloured dots drawn on a photo
    to mark points): blobs are ranked by ``match`` with a strong preference for disc-like regions
    (``Blob.compactness``), so the dot ranks above larger or irregular patches of the same colour (brick,
    a wall, a poster); a large region of the colour (sky around a blue dot) is also searched for its
    more colourful compact cores, so a dot on a background of its own hue is found. Pass the dot's
    diameter as ``expected_size`` too when you know it. With ``expected_size`` and no ``shape`` compact
    blobs are mildly preferred; ``shape="any"`` turns the shape term off.
    Typical: ``find_color(frames[0], "red", shape="dot", expected_size=10)[0].centroid``.
    Check the top blob: a real dot has ``compactness`` near 1 and an area near its disc's; a top blob with
    compactness below about 0.6 is a dot merged with a background of similar tint (a bluish floor): call
    again with a higher ``min_chroma`` (e.g. 40) to separate them, and ``draw`` the result to confirm.

    Centroids are sub-pixel: intensity-weighted over the blob and its partly covered edge pixels.
    Measure in a plane by passing ``rectified=geom.find_plane_reference(...)`` (or ``geom.rectify_plane``):
    each blob then has ``plane_xy`` and ``plane_size`` in the plane's units.

    Args:
        frame: the image (Frame, PIL image or (H, W, 3) RGB array).
        color: a name ("red", "orange", "yellow", "green", "cyan", "blue", "purple"/"violet", "magenta",
            "pink", "brown", "beige", "tan", "gold", "olive", "lime", "mint", "teal", "navy", "maroon",
            "white", "black", "gray"; each a hue range in degrees with a lightness range, listed by
            the table in docs/geometry.md; "green" includes olive-green grass in shade)
            or an (r, g, b) tuple 0..255 (hue +- 20 degrees, chroma at least 0.4 x the target's; greys by
            lightness +- 15).
        min_area: smaller regions (pixels) are dropped.
        hue_tolerance: override the hue half-width, degrees (0..180).
        min_chroma: override the adaptive Lab chroma floor (0..~130; pale colours ~15-30, vivid 50+).
        max_blobs: keep at most this many, best first.
        expected_size: typical width of the wanted blobs, pixels (or plane units with ``rectified``).
        rectified: a ``Rectified`` plane (from ``geom.rectify_plane`` / ``geom.find_plane_reference``).
        shape: None (default), "dot" (prefer small solid round blobs: marker dots) or "any" (no shape term).
        box: (x0, y0, x1, y1) pixels (or anything with ``.box``): search only there (with the whole frame's
            adaptive threshold, so a box the object fills is judged against the frame's neutral surfaces),
            e.g. count a colour inside a region. Blobs, masks and near misses stay in
            full-frame pixels; ``.region`` says how much of the box shows the colour (``.share`` 0..1, its
            ``.share_low``-``.share_high`` range as the threshold varies, ``.count``, ``.pixels``) and the
            readout names paler near misses even when blobs are found. A box reaching outside the frame is
            clipped (the readout says so); one wholly outside, or empty, is an error naming the frame size.

    Returns:
        ``ColorBlobs``: a list of ``Blob`` (centroid (x, y) px sub-pixel, area px^2, box, mask, mean_rgb,
        match, compactness, plane_xy, plane_size), 8-connected; ``.mask`` the full colour mask, ``.thresholds`` the
        thresholds used; when none was found, ``.paler`` the near misses (regions of the hue at chroma from half
        the floor up to it: ((x, y) px, area px^2, chroma)), which its readout names; with ``box=``,
        ``.region`` (the box searched and the share of it that shows the colour).
    """
    import cv2

    array = as_rgb_array(frame)
    if box is not None:
        if rectified is not None:
            raise ValueError("pass box= or rectified=, not both; to search part of a plane, filter blobs by .plane_xy")
        return _in_box(array, box, color, min_area, hue_tolerance, min_chroma, max_blobs, expected_size, shape)
    space = color_space(array)
    mask, strength, label, thresholds, bands = color_mask(space, color, hue_tolerance, min_chroma)
    if expected_size is not None and not float(expected_size) > 0:
        raise ValueError(
            f"expected_size must be a positive width (pixels, or plane units with rectified=), got {expected_size!r}"
        )
    if shape not in _SHAPE_WEIGHT:
        raise ValueError(f"shape must be None, 'dot' (small solid round markers) or 'any', got {shape!r}")
    shape_weight = _SHAPE_WEIGHT[shape] if (shape is not None or expected_size is not None) else 0.0
    layers = [mask] + ([dot_cores(mask, space.chroma, min_area, _disc_overlap)] if shape == "dot" else [])
    candidates = []
    for layer in layers:
        count, components, stats, _ = cv2.connectedComponentsWithStats(layer.astype(np.uint8), connectivity=8)
        candidates += [(components, stats[i], i) for i in range(1, count) if stats[i, cv2.CC_STAT_AREA] >= min_area]
    height, width = mask.shape
    found = []
    for components, stat, i in candidates:
        x, y, w, h, area = (int(v) for v in stat)
        x0, y0, x1, y1 = max(0, x - 5), max(0, y - 5), min(width, x + w + 5), min(height, y + h + 5)
        local = components[y0:y1, x0:x1] == i
        centroid, weighted = _weighted_centroid(local, strength[y0:y1, x0:x1], (x0, y0))
        score = 0.0
        if bands:
            score += 0.5 * band_distance(circular_mean(space.hue[y0:y1, x0:x1][local]), bands)
            score += _halo_penalty(local, space.chroma[y0:y1, x0:x1], space.hue[y0:y1, x0:x1])
        plane_xy = plane_size = None
        ranked_area = float(np.sqrt(weighted * area))  # a faint speck's weights must not make it look big
        size = float(np.sqrt(4.0 * ranked_area / np.pi))
        if rectified is not None:
            plane_xy, plane_size = _blob_on_plane(rectified, centroid, weighted)
            size = plane_size * float(np.sqrt(ranked_area / weighted))
            score += _off_reference_penalty(rectified, plane_xy)
        if expected_size is not None:
            score += abs(float(np.log(max(size, 1e-9) / float(expected_size)))) / np.log(1.5)
        compact = _disc_overlap(local)
        score += shape_weight * (1.0 - compact)
        red, green, blue = (float(v) for v in array[y0:y1, x0:x1][local].mean(axis=0))
        found.append(
            (
                components == i,
                (x, y, x + w, y + h),
                area,
                centroid,
                weighted,
                float(np.exp(-score)),
                plane_xy,
                plane_size,
                (red, green, blue),
                compact,
            )
        )
    by_area = expected_size is None and shape in (None, "any")
    found.sort(key=(lambda f: -f[2]) if by_area else (lambda f: -f[5]))
    blobs = [
        Blob(
            centroid=centroid,
            area=area,
            box=box,
            mask=region,
            mean_rgb=mean_rgb,
            weighted_area=weighted,
            match=match,
            plane_xy=plane_xy,
            plane_size=plane_size,
            compactness=compact,
        )
        for region, box, area, centroid, weighted, match, plane_xy, plane_size, mean_rgb, compact in found[:max_blobs]
    ]
    paler = _paler_regions(space, color, hue_tolerance, thresholds, min_area) if not blobs and bands else []
    return ColorBlobs(blobs[:max_blobs], label, mask, thresholds, paler)


def _in_box(
    array: np.ndarray,
    box: Any,
    color: str | tuple[int, int, int],
    min_area: int,
    hue_tolerance: float | None,
    min_chroma: float | None,
    max_blobs: int,
    expected_size: float | None,
    shape: str | None,
) -> ColorBlobs:
    """``find_color`` inside ``box``: the search on the box's crop, its blobs, mask and near misses moved to
    full-frame pixels, and the share of the box that shows the colour (``ColorBlobs.region``)."""
    from scipy.ndimage import binary_dilation, binary_erosion

    height, width = array.shape[:2]
    (x0, y0, x1, y1), clipped = frame_box(box, width, height)
    crop = array[y0:y1, x0:x1]
    if min_chroma is None:  # the frame's neutral surfaces set the floor: a box filled by the object cannot
        min_chroma = color_mask(color_space(array), color, hue_tolerance, None)[3].get("min_chroma")
    found = find_color(crop, color, min_area, hue_tolerance, min_chroma, max_blobs, expected_size, None, shape)
    space = color_space(crop)
    mask, _, _, thresholds, bands = color_mask(space, color, hue_tolerance, min_chroma)
    if bands:
        floor = float(thresholds["min_chroma"])
        stricter = color_mask(space, color, hue_tolerance, floor * 4.0 / 3.0)[0]
        looser = color_mask(space, color, hue_tolerance, floor * 0.75)[0]
    else:
        stricter, looser = binary_erosion(mask), binary_dilation(mask)
    region = box_share(mask, stricter, looser, (x0, y0, x1, y1), clipped)

    def full(local: np.ndarray) -> np.ndarray:
        out = np.zeros((height, width), bool)
        out[y0:y1, x0:x1] = local
        return out

    blobs = [
        replace(
            blob,
            centroid=(blob.centroid[0] + x0, blob.centroid[1] + y0),
            box=(blob.box[0] + x0, blob.box[1] + y0, blob.box[2] + x0, blob.box[3] + y0),
            mask=full(blob.mask),
        )
        for blob in found
    ]
    paler = _paler_regions(space, color, hue_tolerance, thresholds, min_area) if bands else []
    paler = [((x + x0, y + y0), area, c) for (x, y), area, c in paler]
    return ColorBlobs(blobs, found.color, full(found.mask), found.thresholds, paler, region)


def _paler_regions(
    space: Any, color: Any, hue_tolerance: float | None, thresholds: dict[str, Any], min_area: int
) -> list[tuple[tuple[float, float], int, float]]:
    """Regions of the colour's hue below the chroma floor but at least half of it (and ``MIN_CHROMA``):
    the near misses a readout names when nothing was found, largest first, ((x, y) px, area, chroma)."""
    import cv2

    floor = float(thresholds.get("min_chroma", 0.0))
    lower = max(MIN_CHROMA, floor / 2.0)
    if lower >= floor:
        return []
    mask = color_mask(space, color, hue_tolerance, lower)[0] & (space.chroma < floor)
    count, components, stats, centroids = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    found = [
        ((float(centroids[i][0]), float(centroids[i][1])), int(stats[i, cv2.CC_STAT_AREA]), i)
        for i in range(1, count)
        if stats[i, cv2.CC_STAT_AREA] >= min_area
    ]
    found.sort(key=lambda f: -f[1])
    return [(xy, area, float(np.median(space.chroma[components == i]))) for xy, area, i in found[:10]]


_SHAPE_WEIGHT = {None: 1.5, "dot": 4.0, "any": 0.0}
"""Ranking penalty per unit of (1 - compactness): mild by default with an expected size, strong for dots."""


def _disc_overlap(local: np.ndarray) -> float:
    """Intersection over union of a region's mask with the disc of equal area at its centroid (1 = a disc)."""
    ys, xs = np.nonzero(local)
    if xs.size == 0:
        return 0.0
    radius_sq = xs.size / np.pi
    gy, gx = np.mgrid[0 : local.shape[0], 0 : local.shape[1]]
    disc = (gx - xs.mean()) ** 2 + (gy - ys.mean()) ** 2 <= radius_sq
    inside = float((local & disc).sum())
    return inside / float(local.sum() + disc.sum() - inside)


def _halo_penalty(local: np.ndarray, chroma: np.ndarray, hue: np.ndarray) -> float:
    """How much a region looks like a halo rather than an object of its own (0 = not at all): the
    blurred rim of a saturated neighbour of a similar hue (the light edge of a red dot asked for as
    "pink": within 3 px, pixels 1.5 x as colourful and within 30 degrees of its hue) or JPEG colour
    ringing beside a saturated object (pixels twice as colourful, any hue) gets +2; a faint patch that
    barely stands out from its surroundings gets up to +1.5 (when its chroma is under twice theirs)."""
    from scipy.ndimage import binary_dilation

    ring = binary_dilation(local, iterations=3) & ~local
    if ring.sum() < 3:
        return 0.0
    own = float(np.median(chroma[local]))
    same_hue = ring & (hue_distance(hue, circular_mean(hue[local])) <= 30.0)
    rim = same_hue.sum() >= 2 and float(np.percentile(chroma[same_hue], 95)) > 1.5 * own
    ringing = float(np.percentile(chroma[ring], 95)) > 2.0 * own
    contrast = own / max(float(np.median(chroma[ring])), MIN_CHROMA / 2)
    return (2.0 if rim or ringing else 0.0) + 1.5 * float(np.clip(2.0 - contrast, 0.0, 1.0))


def _off_reference_penalty(rectified: Any, plane_xy: tuple[float, float]) -> float:
    """0 on the reference rectangle (and within 2% of its size around it); else 1 + the distance outside in
    reference sizes: things measured on a reference usually lie on it, so on-reference blobs rank first."""
    width, height = getattr(rectified, "size_m", (0.0, 0.0))
    scale = max(width, height)
    if scale <= 0:
        return 0.0
    x, y = plane_xy
    outside = float(np.hypot(max(0.0, -x, x - width), max(0.0, -y, y - height)))
    return 0.0 if outside <= 0.02 * scale else 1.0 + outside / scale


def _blob_on_plane(rectified: Any, centroid: tuple[float, float], area_px: float) -> tuple[tuple[float, float], float]:
    """Centroid in plane units and equivalent diameter in plane units (area scaled by the homography's
    local Jacobian at the centroid)."""
    to_plane = getattr(rectified, "to_plane", None)
    if to_plane is None:
        raise ValueError("rectified= must be a Rectified plane (geom.rectify_plane or geom.find_plane_reference)")
    c = np.asarray(centroid, dtype=np.float64)
    probe = np.array([c, c + (1.0, 0.0), c + (0.0, 1.0)])
    mapped = np.asarray(to_plane(probe), dtype=np.float64)
    jacobian = np.stack([mapped[1] - mapped[0], mapped[2] - mapped[0]], axis=1)
    area_plane = area_px * abs(float(np.linalg.det(jacobian)))
    return (float(mapped[0][0]), float(mapped[0][1])), float(np.sqrt(4.0 * area_plane / np.pi))
