"""Image motion per region of the frame, for ``motion(frames, regions=...)``: how far each region's matched
features move between two frames, and what the difference between regions means (parallax).

A camera that only turns moves every point by one homography, whatever its depth: regions move alike (up to
the small change of a turn's flow across the image). A camera that translates moves NEAR things more than far
ones, against its travel: the near-minus-far flow points opposite to the way it travels (sideways or up and
down; a move forward spreads the flow out from the point it heads to instead). So near-vs-far parallax tells
an orbit (the camera travels one way and turns the other: near and far regions move apart) from a pan (they
move alike), a descent from a tilt, and a moving thing (its region moves unlike the rest) from the camera.

Per region: the median flow (dx, dy) of the matches that start in it, its spread (1.4826 x the median absolute
deviation, per axis, combined), the standard error of the median (1.25 x spread / sqrt(n)), and the median
flow left after the step's best pure turn (``PairGeometry.homography``): near zero for a region the turn
explains (far away, or no move), larger for nearer regions. Too few matches (< ``MIN_POINTS``): "unknown".
Regions on opposite sides of the image whose flows beyond the turn all point away from its middle (or all
towards it) read as a move forward (backward) or a zoom, not as a sideways travel.

Pixels of the given frames: x right, y down; flows are b - a of matched features (frame a -> frame b).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["MIN_POINTS", "NOISE_PX", "RegionFlow", "RegionStep", "region_masks", "region_step"]

MIN_POINTS = 6  # matches a region needs for its flow to be reported
NOISE_PX = 1.0  # a difference between regions below this (pixels) is not parallax, whatever its standard error
SIGNIFICANT = 3.0  # ... and it must exceed this many standard errors


@dataclass
class RegionFlow:
    """One region's image motion from frame a to frame b.

    name: the region's name ("top", "near", ...). box: (x0, y0, x1, y1) pixels around it. points: matches
    starting in it. flow_px: (dx, dy) median pixels they move (x right, y down), None when unknown.
    turn_free_px: (dx, dy) median pixels they move beyond the step's measured turn (None when the turn is
    unknown): zero for a turn, larger for nearer things when the camera translates. spread_px: how much the
    compared flow (turn-free where known) scatters (pixels); sd_px: standard error of its median (pixels).
    status: "measured" or "unknown" (``reason`` says why)."""

    name: str
    box: tuple[int, int, int, int]
    points: int
    flow_px: tuple[float, float] | None
    turn_free_px: tuple[float, float] | None
    spread_px: float
    sd_px: float
    status: str
    reason: str = ""

    @property
    def compared_px(self) -> tuple[float, float] | None:
        """The flow the regions are compared by: beyond the turn where it is known, else the raw flow."""
        return self.turn_free_px if self.turn_free_px is not None else self.flow_px

    def readout(self) -> str:
        if self.flow_px is None:
            return f"{self.name}: unknown ({self.reason})"
        text = f"{self.name}: {flow_words(*self.flow_px)} ({self.flow_px[0]:+.1f}, {self.flow_px[1]:+.1f}) px"
        if self.turn_free_px is not None:
            text += f", beyond the turn ({self.turn_free_px[0]:+.1f}, {self.turn_free_px[1]:+.1f}) px"
        return text + f" +-{self.sd_px:.1f} (spread {self.spread_px:.1f} px, {self.points} points)"


@dataclass
class RegionStep:
    """Per-region image motion of one pair of frames (``frame_a`` -> ``frame_b``, absolute indices) and what
    the regions' difference means. regions: one flow per region (.name, .flow_px, .turn_free_px, .sd_px,
    .points, .status). parallax: True when two regions move differently beyond their uncertainty (the camera
    translates, or something moves on its own), False when every measured region moves alike, None when fewer
    than two regions are measured. nearer: the region
    that moves more beyond the turn when there is parallax (None otherwise). verdict: the words."""

    frame_a: int
    frame_b: int
    regions: list[RegionFlow]
    parallax: bool | None
    verdict: str
    nearer: str | None = None

    def readout(self) -> str:
        parts = "; ".join(region.readout() for region in self.regions)
        return f"frames {self.frame_a}->{self.frame_b} by region: {parts}. {self.verdict}"


def flow_words(dx: float, dy: float, minimum: float = 0.3) -> str:
    """Words for an image flow (x right, y down), e.g. "moves left and up"; "stays" under ``minimum`` px."""
    length = math.hypot(dx, dy)
    if length < minimum:
        return "stays"
    words = [
        word
        for value, (positive, negative) in sorted(
            ((dx, ("right", "left")), (dy, ("down", "up"))), key=lambda item: -abs(item[0])
        )
        if abs(value) >= 0.35 * length
        for word in [positive if value > 0 else negative]
    ]
    return "moves " + " and ".join(words)


def _travel(dx: float, dy: float) -> str:
    """The camera's travel that makes near things move by (dx, dy) relative to far ones (the opposite way), with
    the way round a near thing it keeps in view when the travel is sideways."""
    words = flow_words(-dx, -dy, minimum=0.0).removeprefix("moves ")
    if abs(dx) < 0.35 * math.hypot(dx, dy):
        return words
    return f"{words} ({'counterclockwise' if dx < 0 else 'clockwise'} seen from above around a near thing it keeps in view)"


def region_masks(regions: Any, height: int, width: int) -> dict[str, np.ndarray]:
    """(H, W) bool masks by name for ``regions``: "bands" (top / middle / bottom thirds), "columns" (left /
    centre / right thirds), a dict of name -> box (x0, y0, x1, y1) pixels or (H, W) bool mask (e.g.
    ``{"near": depth < 2, "far": depth > 4}`` from a depth map in metres), or a list of boxes / masks
    (named "region 0", "region 1", ...)."""
    if isinstance(regions, str):
        thirds = np.linspace(0, 1, 4)
        if regions == "bands":
            rows = np.round(thirds * height).astype(int)
            names = ("top", "middle", "bottom")
            return {n: _box_mask((0, rows[i], width, rows[i + 1]), height, width) for i, n in enumerate(names)}
        if regions == "columns":
            cols = np.round(thirds * width).astype(int)
            names = ("left", "centre", "right")
            return {n: _box_mask((cols[i], 0, cols[i + 1], height), height, width) for i, n in enumerate(names)}
        raise ValueError(
            f'regions must be "bands", "columns", a dict of name -> box or mask, or a list; got {regions!r}'
        )
    items = regions.items() if isinstance(regions, Mapping) else ((f"region {i}", r) for i, r in enumerate(regions))
    masks = {}
    for name, region in items:
        array = np.asarray(region)
        if array.ndim == 2:
            if array.shape != (height, width):
                raise ValueError(f"region {name!r}: a mask must be (H, W) = ({height}, {width}), got {array.shape}")
            masks[str(name)] = array.astype(bool)
        elif array.shape == (4,):
            masks[str(name)] = _box_mask(tuple(float(v) for v in array), height, width)
        else:
            raise ValueError(f"region {name!r} must be a box (x0, y0, x1, y1) in pixels or an (H, W) bool mask")
    if len(masks) < 2:
        raise ValueError("give at least two regions to compare (e.g. regions='bands', or near and far masks)")
    return masks


def _box_mask(box: Sequence[float], height: int, width: int) -> np.ndarray:
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    mask = np.zeros((height, width), dtype=bool)
    mask[max(y0, 0) : max(min(y1, height), 0), max(x0, 0) : max(min(x1, width), 0)] = True
    return mask


def _bounds(mask: np.ndarray) -> tuple[int, int, int, int]:
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    if not len(rows):
        return (0, 0, 0, 0)
    return (int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1)


def _flow_of(
    name: str, mask: np.ndarray, points_a: np.ndarray, points_b: np.ndarray, turn: np.ndarray | None
) -> RegionFlow:
    height, width = mask.shape
    cols = np.clip(np.round(points_a[:, 0]).astype(int), 0, width - 1)
    rows = np.clip(np.round(points_a[:, 1]).astype(int), 0, height - 1)
    inside = mask[rows, cols] if len(points_a) else np.zeros(0, bool)
    a, b = points_a[inside], points_b[inside]
    box = _bounds(mask)
    if len(a) < MIN_POINTS:
        reason = f"{len(a)} matched features in it (need {MIN_POINTS}): too little texture, or it leaves the view"
        return RegionFlow(name, box, len(a), None, None, float("nan"), float("nan"), "unknown", reason)
    flow = b - a
    raw = np.median(flow, axis=0)
    free = None
    if turn is not None:
        moved = np.column_stack([a, np.ones(len(a))]) @ turn.T
        flow = b - moved[:, :2] / moved[:, 2:3]
        free = np.median(flow, axis=0)
    centre = free if free is not None else raw
    spread = float(np.hypot(*(1.4826 * np.median(np.abs(flow - centre), axis=0))))
    sd = 1.25 * max(spread, 0.1) / math.sqrt(len(a))
    return RegionFlow(
        name,
        box,
        len(a),
        (float(raw[0]), float(raw[1])),
        None if free is None else (float(free[0]), float(free[1])),
        spread,
        sd,
        "measured",
    )


def _radial(measured: list[RegionFlow], width: int, height: int) -> tuple[bool, str] | None:
    """(outward, words) when the regions away from the image's centre that move clearly (2 standard errors,
    0.5 px) along the line from it all move away from it (outward: a move forward or a zoom in) or all
    towards it (backward, zoom out), two of them on opposite sides; else None. Each region's flow beyond the turn is projected on the direction from the image's
    centre to its box's centre; a region whose box centre lies within 30 % of the half-size of the centre
    (the middle band, a near/far mask spread over the frame) takes no part."""
    sides: list[tuple[np.ndarray, float, str]] = []
    for region in measured:
        x0, y0, x1, y1 = region.box
        offset = np.array([((x0 + x1) / 2 - width / 2) / (width / 2), ((y0 + y1) / 2 - height / 2) / (height / 2)])
        if float(np.hypot(*offset)) <= 0.3:
            continue
        unit = offset / float(np.hypot(*offset))
        along = float(np.dot(region.compared_px or (0.0, 0.0), unit))
        if abs(along) < max(2.0 * region.sd_px, 0.5):  # not clearly radial: it neither supports nor vetoes
            continue
        sides.append((unit, along, region.name))
    if len({along > 0 for _, along, _ in sides}) != 1:
        return None
    if not any(float(np.dot(a[0], b[0])) < -0.5 for i, a in enumerate(sides) for b in sides[i + 1 :]):
        return None
    outward = sides[0][1] > 0
    way = "outward" if outward else "inward"
    return outward, ", ".join(f"{name} {abs(along):.1f} px {way}" for _, along, name in sides)


def region_step(
    frame_a: int,
    frame_b: int,
    masks: Mapping[str, np.ndarray],
    points_a: np.ndarray,
    points_b: np.ndarray,
    turn: np.ndarray | None,
) -> RegionStep:
    """The flow of each region (``masks``: name -> (H, W) bool in frame a) from the matches (``points_a`` ->
    ``points_b``, (M, 2) pixels) and what their differences mean; ``turn`` (3, 3): the step's measured turn as
    a homography, pixels of a -> b (None: unknown; the regions are then compared by their raw flows)."""
    flows = [_flow_of(name, mask, points_a, points_b, turn) for name, mask in masks.items()]
    measured = [f for f in flows if f.compared_px is not None]
    if len(measured) < 2:
        return RegionStep(frame_a, frame_b, flows, None, "too few regions measured to compare: no parallax reading")
    pairs = [(first, second) for i, first in enumerate(measured) for second in measured[i + 1 :]]

    def difference(pair: tuple[RegionFlow, RegionFlow]) -> tuple[float, float, float]:
        (x0, y0), (x1, y1) = pair[0].compared_px or (0.0, 0.0), pair[1].compared_px or (0.0, 0.0)
        return x0 - x1, y0 - y1, math.hypot(pair[0].sd_px, pair[1].sd_px)

    first, second = max(pairs, key=lambda pair: math.hypot(*difference(pair)[:2]) / difference(pair)[2])
    dx, dy, sd = difference((first, second))
    size, limit = math.hypot(dx, dy), max(NOISE_PX, SIGNIFICANT * sd)
    raw = turn is None
    basis = "raw flows (the step's turn is unknown, and a turn alone moves parts of the image a few px differently)"
    basis = basis if raw else "flows beyond the measured turn"
    if size <= limit:
        verdict = (
            f"every region moves alike in the {basis} (largest difference {size:.1f} px, {first.name} vs "
            f"{second.name}, within the uncertainty {limit:.1f} px): no parallax: the camera turns (or stays), or "
            f"moves past regions at one depth"
        )
        return RegionStep(frame_a, frame_b, flows, False, verdict)
    if raw:
        verdict = (
            f"the regions differ in the {basis}: {first.name} {flow_words(dx, dy).removeprefix('moves ')} "
            f"{size:.1f} px +-{sd:.1f} relative to {second.name}; if that is parallax, nearer things move more, "
            f"against the travel: the camera travels {_travel(dx, dy)} if {first.name} is nearer, "
            f"{_travel(-dx, -dy)} if {second.name} is"
        )
        return RegionStep(frame_a, frame_b, flows, True, verdict)
    height, width = next(iter(masks.values())).shape
    radial = _radial(measured, width, height)
    if radial is not None:
        outward, names = radial
        way = "spread out from" if outward else "gather towards"
        move = "FORWARD (towards what the middle shows), or zooms in" if outward else "BACKWARD, or zooms out"
        verdict = (
            f"the flows beyond the measured turn {way} the middle of the image ({names}): the camera moves {move}; "
            f"not a sideways or vertical travel (regions on opposite sides move opposite ways)"
        )
        return RegionStep(frame_a, frame_b, flows, True, verdict)
    near, far, sign = (first, second, 1.0)
    if math.hypot(*(second.compared_px or (0.0, 0.0))) > math.hypot(*(first.compared_px or (0.0, 0.0))):
        near, far, sign = second, first, -1.0
    verdict = (
        f"PARALLAX: beyond the measured turn {near.name} moves {flow_words(sign * dx, sign * dy).removeprefix('moves ')} "
        f"{size:.1f} px +-{sd:.1f} relative to {far.name}: the camera translates and {near.name} is nearer (it "
        f"moves more), so the camera travels {_travel(sign * dx, sign * dy)}; unless something in {near.name} "
        f"moves on its own"
    )
    return RegionStep(frame_a, frame_b, flows, True, verdict, near.name)
