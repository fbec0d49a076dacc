"""Perspective taking: "standing at A facing B, where is C" on the ground plane (part of ``scene``).

Everything is read on the ground plane (world XY, +Z up): the viewer stands at A, "ahead" is the
horizontal direction from A to B (or a camera's forward), and C's bearing is the signed horizontal
angle from ahead to the direction A -> C, positive clockwise seen from above, i.e. to the viewer's
right. Clock: 12 = ahead, 3 = right, 6 = behind, 9 = left (30 degrees per hour). Eight-way: front,
front-right, right, back-right, back, back-left, left, front-left (45-degree sectors centred on those
directions); compass: the same with ahead as north (N, NE, E, ...). Uncertainty: the positions'
covariances (bearing-located objects) are sampled (Monte Carlo, fixed seed), giving the angle's and the
distance's standard deviations and the probability of each worded answer. A distance whose standard
deviation exceeds the distance itself is unknown, not measured: the readout says "distance unknown" and
prints no probability resting on it; for objects on the floor of one photo it says instead whether the
answer holds at every camera tilt the image allows (``tilts``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from spatialclaw.primitives.geometry.relate import format_metres

__all__ = [
    "COMPASS",
    "EIGHT_WAY",
    "Perspective",
    "eight_way",
    "mix_perspectives",
    "perspective_from_positions",
    "quadrant",
    "signed_angles",
]

EIGHT_WAY = ("front", "front-right", "right", "back-right", "back", "back-left", "left", "front-left")
COMPASS = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
SAMPLES = 4000


def _clock(angle_deg: np.ndarray | float) -> np.ndarray:
    hour = np.round(np.asarray(angle_deg) / 30.0).astype(int) % 12
    return np.where(hour == 0, 12, hour)


def _sector(angle_deg: np.ndarray | float) -> np.ndarray:
    return np.round(np.asarray(angle_deg) / 45.0).astype(int) % 8


def quadrant(angle_deg: float) -> str:
    """The side and depth of a signed angle (degrees, > 0 right): "left and in front", "right and behind"."""
    return f"{'right' if angle_deg > 0 else 'left'} and {'in front' if abs(angle_deg) < 90.0 else 'behind'}"


def eight_way(angle_deg: float) -> str:
    """The eight-way word of a signed angle (degrees, > 0 right): "front", "front-right", ..."""
    return EIGHT_WAY[int(_sector(angle_deg))]


@dataclass(frozen=True)
class Perspective:
    """Where ``target`` is for a viewer standing at ``standing_at`` facing ``facing`` (ground plane).

    Attributes:
        target, standing_at, facing: what was asked (names, "camera k", or "the given point").
        angle_deg: signed horizontal angle from straight ahead to the target, degrees in (-180, 180];
            > 0 to the right (clockwise seen from above), < 0 to the left. angle_sigma_deg: its std.
        clock: 1..12 (12 ahead, 3 right, 6 behind, 9 left). direction: eight-way word ("front-right").
        compass: the eight-way direction with ahead as north ("NE").
        compass_note: after ``scene.set_north``, the true compass of the facing and of the target
            ("Facing SW (225°); the lamp lies W (268° ± 6°) of the viewer."), else "".
        side: "left"/"right"/"straight ahead"/"straight behind"; depth: "in front"/"behind"/"beside".
        distance_m / distance_sigma_m: horizontal distance viewer -> target on the ground, metres.
        p_right, p_front: probabilities (0..1) that the target is right of / in front of the viewer.
        p_clock, p_direction: probabilities of the stated clock hour and eight-way direction.
        plan_note: when several floor plans fit the views (``scene.link_views``) and put the target
            differently, what each says and what would resolve it (the probabilities then cover every
            plan), else "".
        tilt_note: for objects on the floor of one photo, whether the answer holds at every camera pitch
            the image allows or depends on it (each answer with its share of the pitch evidence), else "".
        distance_note: why the distance is unknown (its sigma exceeds it, or a floor point it rests on is
            unknown), else "". Then the text prints no probability from those positions.
    """

    target: str
    standing_at: str
    facing: str
    angle_deg: float
    angle_sigma_deg: float
    clock: int
    direction: str
    compass: str
    side: str
    depth: str
    distance_m: float
    distance_sigma_m: float
    p_right: float
    p_front: float
    p_clock: float
    p_direction: float
    compass_note: str = ""
    plan_note: str = ""
    tilt_note: str = ""
    distance_note: str = ""

    @property
    def text(self) -> str:
        """E.g. "Standing at the sofa facing the tv, the lamp is at 2 o'clock (front-right): 58° ± 6° right of
        straight ahead, 2.3 ± 0.4 m away on the ground. P(right) = 0.99, P(in front) = 0.93." Compass words
        only after ``scene.set_north`` (``compass_note``: the true compass of the facing and the target)."""
        turn = (
            "straight ahead"
            if abs(self.angle_deg) < 0.5
            else f"{abs(self.angle_deg):.0f}° {'right' if self.angle_deg > 0 else 'left'} of straight ahead"
        )
        spread = f" ± {self.angle_sigma_deg:.0f}°" if self.angle_sigma_deg >= 0.5 else ""
        if spread and turn != "straight ahead":
            turn = turn.replace("° ", f"°{spread} ", 1)
        distance = format_metres(self.distance_m)
        if self.distance_sigma_m >= 0.005:
            distance = f"{distance} ± {format_metres(self.distance_sigma_m)}"
        distance = f"{distance} away on the ground"
        probabilities = ""
        if self.distance_note:
            distance = f"distance unknown ({distance}: {self.distance_note})"
            if not self.tilt_note:
                probabilities = " No probability stated: it would rest on positions that are not known."
        elif self.angle_sigma_deg > 0:
            probabilities = (
                f" P(right) = {self.p_right:.2f}, P(in front) = {self.p_front:.2f}, "
                f"P({self.clock} o'clock) = {self.p_clock:.2f}, P({self.direction}) = {self.p_direction:.2f}."
            )
        return (
            f"Standing at {self.standing_at} facing {self.facing}, {self.target} is at {self.clock} o'clock "
            f"({self.direction}): {turn}, {distance}.{probabilities}"
            + (f" {self.tilt_note}" if self.tilt_note else "")
            + (f" {self.compass_note}" if self.compass_note else "")
            + (f" {self.plan_note}" if self.plan_note else "")
        )

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text


def _wrap(angle_deg: np.ndarray) -> np.ndarray:
    return (np.asarray(angle_deg) + 180.0) % 360.0 - 180.0


def signed_angles(viewer: np.ndarray, ahead: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(S,) signed angles (deg, clockwise from ahead) and horizontal distances for (S, 2) samples."""
    to_target = target - viewer
    heading = np.arctan2(ahead[:, 0], ahead[:, 1])  # clockwise from +Y, seen from above
    bearing = np.arctan2(to_target[:, 0], to_target[:, 1])
    return _wrap(np.degrees(bearing - heading)), np.linalg.norm(to_target, axis=1)


def perspective_from_positions(
    target: tuple[str, np.ndarray, np.ndarray],
    standing_at: tuple[str, np.ndarray, np.ndarray],
    facing: tuple[str, np.ndarray | None, np.ndarray | None],
    forward: np.ndarray | None = None,
    seed: int = 0,
    joint: tuple[np.ndarray, ...] | None = None,
) -> Perspective:
    """The perspective readout from (name, (3,) position, (3, 3) covariance) triples.

    ``facing`` may have a None position when ``forward`` (a (3,) world direction, e.g. a camera's
    viewing axis) gives "ahead" instead. ``joint``: (S, 2) ground samples of target, standing_at and
    facing drawn together (points of one photo sharing its camera's error, ``geom.floor_samples``), used
    instead of sampling each covariance separately.
    """
    rng = np.random.default_rng(seed)

    def samples(position: np.ndarray, covariance: np.ndarray) -> np.ndarray:
        xy, cov = np.asarray(position)[:2], np.asarray(covariance)[:2, :2]
        if not np.any(cov):
            return np.repeat(xy[None], SAMPLES + 1, axis=0)
        drawn = rng.multivariate_normal(xy, cov, size=SAMPLES, method="eigh")
        return np.vstack([xy[None], drawn])

    if joint is not None:
        nominal = [np.asarray(place[1], dtype=np.float64)[:2][None] for place in (target, standing_at, facing)]
        target_xy, viewer, facing_xy = (
            np.vstack([n, np.asarray(s)[:, :2]]) for n, s in zip(nominal, joint, strict=True)
        )
        return _reading(target, standing_at, facing, viewer, facing_xy - viewer, target_xy)
    viewer = samples(standing_at[1], standing_at[2])
    target_xy = samples(target[1], target[2])
    if facing[1] is not None and facing[2] is not None:  # a position comes with its covariance
        ahead = samples(facing[1], facing[2]) - viewer
    else:
        f = np.asarray(forward, dtype=np.float64)[:2]
        if np.linalg.norm(f) < 1e-9:
            raise ValueError("the viewer's forward direction is vertical; say what it faces with facing=")
        ahead = np.repeat(f[None], SAMPLES + 1, axis=0)
    return _reading(target, standing_at, facing, viewer, ahead, target_xy)


def _reading(
    target: tuple[str, np.ndarray, np.ndarray],
    standing_at: tuple[str, np.ndarray, np.ndarray],
    facing: tuple[str, np.ndarray | None, np.ndarray | None],
    viewer: np.ndarray,
    ahead: np.ndarray,
    target_xy: np.ndarray,
) -> Perspective:
    """The Perspective from (S + 1, 2) viewer, ahead and target samples (row 0 nominal)."""
    if np.linalg.norm(ahead[0]) < 1e-9:
        raise ValueError(
            f"{standing_at[0]} and {facing[0]} are at the same place on the ground, so 'facing' is undefined"
        )
    if np.linalg.norm(target_xy[0] - viewer[0]) < 1e-9:
        raise ValueError(f"{target[0]} is where the viewer stands; its direction is undefined")
    angles, distances = signed_angles(viewer, ahead, target_xy)
    angle, distance = float(angles[0]), float(distances[0])
    drawn_angles, drawn_distances = angles[1:], distances[1:]
    uncertain = not np.allclose(drawn_angles, angle)
    angle_sigma = float(
        np.degrees(np.sqrt(-2.0 * np.log(max(np.abs(np.mean(np.exp(1j * np.radians(drawn_angles - angle)))), 1e-12))))
    )
    angle_sigma = angle_sigma if uncertain else 0.0
    clock = int(_clock(angle))
    sector = int(_sector(angle))
    if abs(angle) < 1.0:
        side = "straight ahead"
    elif abs(angle) > 179.0:
        side = "straight behind"
    else:
        side = "right" if angle > 0 else "left"
    depth = "beside" if abs(abs(angle) - 90.0) < 1.0 else ("in front" if abs(angle) < 90.0 else "behind")
    distance_sigma = float(np.std(drawn_distances)) if uncertain else 0.0
    return Perspective(
        target=target[0],
        standing_at=standing_at[0],
        facing=facing[0],
        angle_deg=angle,
        angle_sigma_deg=angle_sigma,
        clock=clock,
        direction=EIGHT_WAY[sector],
        compass=COMPASS[sector],
        side=side,
        depth=depth,
        distance_m=distance,
        distance_sigma_m=distance_sigma,
        p_right=float(np.mean(drawn_angles > 0)),
        p_front=float(np.mean(np.abs(drawn_angles) < 90.0)),
        p_clock=float(np.mean(_clock(drawn_angles) == clock)),
        p_direction=float(np.mean(_sector(drawn_angles) == sector)),
        distance_note="its sigma exceeds it" if distance_sigma > distance else "",
    )


def _p_between(centre: float, sigma: float, low: float, high: float) -> float:
    """P(low <= angle < high) (degrees, wrapped) for an angle ~ normal(centre, sigma)."""
    from scipy.stats import norm

    if sigma < 1e-6:
        return float((centre - low) % 360.0 < high - low)
    shifts = centre + 360.0 * np.arange(-2, 3)
    return float(np.sum(norm.cdf((high - shifts) / sigma) - norm.cdf((low - shifts) / sigma)))


def mix_perspectives(readings: list[Perspective], weights: list[float], plans_note: str) -> Perspective:
    """One readout from the same question asked of several floor plans (``readings[0]`` of the best plan,
    ``weights`` summing to 1): the best plan's words and angle; P(right) and P(in front) over every plan;
    P of the stated clock hour and eight-way direction over every plan (the other plans' angles taken as
    normal with their sigma); the angle's sigma widened to the plans' spread; and a note with what each plan
    says when they disagree (``plans_note`` says what would resolve it)."""
    best, w = readings[0], np.asarray(weights, dtype=float)
    offsets = np.array([float(_wrap(np.array(r.angle_deg - best.angle_deg))) for r in readings])
    sigmas = np.array([r.angle_sigma_deg for r in readings])
    clock_low, sector_low = best.clock * 30.0 - 15.0, EIGHT_WAY.index(best.direction) * 45.0 - 22.5
    p_clock = [best.p_clock] + [
        _p_between(r.angle_deg, r.angle_sigma_deg, clock_low, clock_low + 30) for r in readings[1:]
    ]
    p_sector = [best.p_direction] + [
        _p_between(r.angle_deg, r.angle_sigma_deg, sector_low, sector_low + 45) for r in readings[1:]
    ]
    note = ""
    if len({(r.side, r.depth) for r, wi in zip(readings, w, strict=True) if wi >= 0.05}) > 1:
        says = "; ".join(
            f"{r.clock} o'clock ({r.direction}) with weight {wi:.2f}" for r, wi in zip(readings, w, strict=True)
        )
        note = (
            f"AMBIGUOUS: {len(readings)} floor plans fit the sightings about as well and put {best.target} at: "
            f"{says}. {plans_note}"
        )
    return replace(
        best,
        angle_sigma_deg=float(np.sqrt(np.sum(w * (sigmas**2 + offsets**2)))),
        p_right=float(np.sum(w * [r.p_right for r in readings])),
        p_front=float(np.sum(w * [r.p_front for r in readings])),
        p_clock=float(np.sum(w * p_clock)),
        p_direction=float(np.sum(w * p_sector)),
        plan_note=note,
    )
