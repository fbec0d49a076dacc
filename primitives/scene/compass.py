"""Compass bookkeeping for the scene: where north is in the world, and readouts worded in compass terms.

North is stored as a world heading: degrees clockwise seen from above from world +Y (0 = +Y, 90 = +X),
the same convention as view headings. A world direction with heading H has compass bearing
``(H - north_deg) mod 360`` (0 = N, 90 = E, 180 = S, 270 = W), worded in eight 45-degree sectors
(N, NE, E, SE, S, SW, W, NW).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spatialclaw.primitives.scene.perspective import COMPASS

__all__ = ["CompassReading", "compass_bearing", "compass_reading", "compass_word", "mix_readings", "parse_direction"]

_NAMES = {
    "north": 0.0,
    "northeast": 45.0,
    "east": 90.0,
    "southeast": 135.0,
    "south": 180.0,
    "southwest": 225.0,
    "west": 270.0,
    "northwest": 315.0,
}
_NAMES |= {abbr.lower(): 45.0 * i for i, abbr in enumerate(COMPASS)}


def parse_direction(direction: str | float) -> float:
    """Compass bearing in degrees (0 = N, 90 = E) of "north", "NE", "south-west", ... or a number of degrees."""
    if isinstance(direction, (int, float, np.floating, np.integer)) and not isinstance(direction, bool):
        return float(direction) % 360.0
    key = str(direction).strip().lower().replace("-", "").replace(" ", "")
    if key not in _NAMES:
        raise ValueError(
            f"direction must be a compass direction (north, NE, south-west, ...) or degrees, got {direction!r}"
        )
    return _NAMES[key]


def compass_bearing(heading_deg: float, north_deg: float) -> float:
    """Compass bearing, degrees in [0, 360) (0 = N, 90 = E), of a world heading (degrees clockwise from +Y)."""
    return float((heading_deg - north_deg) % 360.0)


def compass_word(bearing_deg: float) -> str:
    """Eight-way compass word of a compass bearing in degrees: "N", "NE", ..."""
    return COMPASS[int(np.round(bearing_deg / 45.0)) % 8]


@dataclass(frozen=True)
class CompassReading:
    """A compass readout. subject/reference: what was asked ("the sofa", "the table", "camera 3").
    bearing_deg: compass bearing in degrees [0, 360) (0 = N, 90 = E) of the subject from the reference (or
    of the camera's facing); sigma_deg: its standard deviation; direction: eight-way word; p_direction: the
    probability of that word under the positions' uncertainty (and over every floor plan that fits);
    distance_m: ground distance (None for a facing); probabilities: (8,) the probability of each word of
    ``COMPASS`` (N, NE, ...); note: what else to know (the floor plan is ambiguous, ...), or ""."""

    subject: str
    reference: str
    bearing_deg: float
    sigma_deg: float
    direction: str
    p_direction: float
    distance_m: float | None
    probabilities: tuple[float, ...] = ()
    note: str = ""

    @property
    def text(self) -> str:
        """E.g. "the sofa is NE of the table (compass bearing 47° ± 5°, P = 0.93; 2.1 m on the ground)"."""
        spread = f" ± {self.sigma_deg:.0f}°" if self.sigma_deg >= 0.5 else ""
        p = f", P = {self.p_direction:.2f}" if self.sigma_deg >= 0.5 else ""
        note = f" {self.note}" if self.note else ""
        if self.distance_m is None:
            return f"{self.subject} faces {self.direction} (compass bearing {self.bearing_deg:.0f}°{spread}{p}){note}"
        return (
            f"{self.subject} is {self.direction} of {self.reference} (compass bearing {self.bearing_deg:.0f}°"
            f"{spread}{p}; {self.distance_m:.2f} m on the ground){note}"
        )

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text


def compass_reading(
    subject: str,
    reference: str,
    offset: np.ndarray,
    covariance: np.ndarray,
    north_deg: float,
    heading_sigma_deg: float = 0.0,
    seed: int = 0,
) -> CompassReading:
    """The compass direction of a ground ``offset`` (2,) metres (subject minus reference) whose (2, 2)
    covariance (m^2) is sampled for the spread and the word's probability; ``heading_sigma_deg`` adds a
    direct angular uncertainty (a camera's heading)."""
    rng = np.random.default_rng(seed)
    samples = rng.multivariate_normal(offset[:2], covariance[:2, :2], size=2000, method="eigh")
    headings = np.degrees(np.arctan2(samples[:, 0], samples[:, 1])) + rng.normal(0.0, heading_sigma_deg, 2000)
    centre = float(np.degrees(np.arctan2(offset[0], offset[1])))
    bearing = compass_bearing(centre, north_deg)
    spread = (headings - centre + 180.0) % 360.0 - 180.0
    word = compass_word(bearing)
    words = np.round(((centre + spread - north_deg) % 360.0) / 45.0).astype(int) % 8
    probabilities = np.bincount(words, minlength=8) / len(words)
    return CompassReading(
        subject=subject,
        reference=reference,
        bearing_deg=bearing,
        sigma_deg=float(np.std(spread)),
        direction=word,
        p_direction=float(probabilities[COMPASS.index(word)]),
        distance_m=None if reference == "" else float(np.hypot(offset[0], offset[1])),
        probabilities=tuple(float(p) for p in probabilities),
    )


def mix_readings(readings: list[CompassReading], weights: list[float], plans_note: str) -> CompassReading:
    """One reading from the same question asked of several floor plans (``readings[0]`` of the best plan,
    ``weights`` summing to 1): the best plan's bearing and word, the word's probability over every plan,
    the sigma widened to the plans' spread, and a note naming the ambiguity (``plans_note`` says what
    would resolve it) when the plans disagree on the word."""
    best, w = readings[0], np.asarray(weights, dtype=float)
    offsets = np.array([(r.bearing_deg - best.bearing_deg + 180.0) % 360.0 - 180.0 for r in readings])
    sigmas = np.array([r.sigma_deg for r in readings])
    mixed = np.sum(w[:, None] * np.array([r.probabilities for r in readings]), axis=0)
    note = best.note
    if len({r.direction for r, wi in zip(readings, w, strict=True) if wi >= 0.05}) > 1:
        order = np.argsort(-mixed)
        words = ", ".join(f"P({COMPASS[k]}) = {mixed[k]:.2f}" for k in order[:3] if mixed[k] >= 0.01)
        note = (note + " " if note else "") + (
            f"AMBIGUOUS: {len(readings)} floor plans fit the sightings about as well and disagree here: {words}. "
            + plans_note
        )
    return CompassReading(
        subject=best.subject,
        reference=best.reference,
        bearing_deg=best.bearing_deg,
        sigma_deg=float(np.sqrt(np.sum(w * (sigmas**2 + offsets**2)))),
        direction=best.direction,
        p_direction=float(mixed[COMPASS.index(best.direction)]),
        distance_m=best.distance_m,
        probabilities=tuple(float(p) for p in mixed),
        note=note,
    )
