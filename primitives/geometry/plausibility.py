"""Plausibility notes for readouts: object sizes far outside everyday ranges, floor distances beyond a
room or too close to the horizon to trust (part of ``geom``; the readouts of ``floor_point``, boxes,
known scales, planar references and the scene print them).

Sizes and distances are metres. A note is one short clause ("" when nothing is odd): readouts are read by a
model, so it names the number, the everyday range and what to check.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

__all__ = ["EVERYDAY_SIZES_M", "ROOM_SCALE_M", "floor_notes", "size_note"]

ROOM_SCALE_M = 6.0
"""Floor distances beyond this (metres) get a note: most indoor rooms are smaller."""
NEAR_HORIZON_DEG = 5.0
"""A floor ray less than this (degrees) below the horizon gives an ill-conditioned distance."""

EVERYDAY_SIZES_M: dict[str, tuple[float, float]] = {
    # longest side of the object (metres): the range a real one falls in, generously
    "reference": (0.02, 5.0),  # a planar reference: a sticker, a sheet, a tape square, a rug
    "person": (0.4, 2.3),
    "chair": (0.3, 1.4),
    "stool": (0.25, 1.0),
    "table": (0.35, 4.0),
    "desk": (0.5, 3.0),
    "sofa": (0.6, 3.8),
    "couch": (0.6, 3.8),
    "bed": (0.8, 2.8),
    "door": (0.6, 2.8),
    "window": (0.2, 4.0),
    "tv": (0.25, 2.5),
    "television": (0.25, 2.5),
    "monitor": (0.2, 1.3),
    "laptop": (0.2, 0.5),
    "keyboard": (0.25, 0.6),
    "phone": (0.08, 0.25),
    "cup": (0.04, 0.2),
    "mug": (0.06, 0.18),
    "bottle": (0.05, 0.5),
    "book": (0.08, 0.5),
    "lamp": (0.1, 2.2),
    "plant": (0.05, 3.0),
    "radiator": (0.3, 2.5),
    "refrigerator": (0.5, 2.2),
    "fridge": (0.5, 2.2),
    "sink": (0.3, 1.5),
    "toilet": (0.35, 0.95),
    "bathtub": (1.0, 2.0),
    "cabinet": (0.3, 3.5),
    "shelf": (0.3, 3.5),
    "bookshelf": (0.5, 3.5),
    "pillow": (0.3, 1.0),
    "backpack": (0.3, 0.7),
    "box": (0.05, 1.5),
    "bin": (0.2, 1.2),
    "car": (2.5, 6.5),
    "bicycle": (1.2, 2.2),
    "dog": (0.2, 1.3),
    "cat": (0.25, 0.8),
}
_ANY_RANGE_M = (0.003, 30.0)  # anything indoors-sized: a 3 mm speck to a 30 m hall


def _everyday_range(label: str | None) -> tuple[str, tuple[float, float]] | None:
    """(the name matched, its range) for the last word of ``label`` that names an everyday object."""
    words = re.findall(r"[a-z]+", (label or "").lower())
    for word in reversed(words):
        for name in (word, word[:-1] if word.endswith("s") else word):
            if name in EVERYDAY_SIZES_M:
                return name, EVERYDAY_SIZES_M[name]
    return None


def size_note(size_m: Any, label: str | None = None) -> str:
    """A short note when an object's size (its longest side, metres; a number or a (3,) size) is far
    outside the everyday range for its label (within a factor 1.5 of the range counts as fine; unknown
    labels get 3 mm..30 m), else "". E.g. "a chair 3.9 m long? chairs are 0.3-1.4 m: check the unit,
    the scale, the points (a wall or floor behind it?)"."""
    longest = float(np.max(np.abs(np.asarray(size_m, dtype=np.float64))))
    if not np.isfinite(longest):
        return f"size {longest} m: not a measurement"
    known = _everyday_range(label)
    name, (low, high) = known if known is not None else ("object", _ANY_RANGE_M)
    if low / 1.5 <= longest <= high * 1.5:
        return ""
    what = f"a {name}" if known is not None else (f"{label!r}" if label else "an object")
    hint = "a wall or floor behind it" if longest > high else "a fragment"
    shown = f"{longest:.2g}" if longest < 1 else f"{longest:.1f}".removesuffix(".0")
    return f"{what} {shown} m long? {name}s are {low:g}-{high:g} m: check the unit, the scale, the points ({hint}?)"


def floor_notes(
    ground_distance_m: float,
    distance_m: float,
    distance_sigma_m: float,
    below_horizon_deg: float,
    pitch_sensitivity_m: float,
) -> list[str]:
    """Notes on a floor point (metres, degrees): beyond room scale, a ray within ``NEAR_HORIZON_DEG``
    of the horizon (with how far 1 degree of pitch moves the point), or a distance known worse than
    half its size."""
    notes = []
    one_degree = (
        "1 deg of pitch moves it past the horizon"
        if not np.isfinite(pitch_sensitivity_m)
        else f"1 deg of pitch moves it {pitch_sensitivity_m:.1f} m"
    )
    if ground_distance_m > ROOM_SCALE_M:
        notes.append(
            f"{ground_distance_m:.1f} m on the ground is beyond most rooms (< {ROOM_SCALE_M:g} m across): check "
            f"that the pixel is where the object touches the floor and the camera's tilt ({one_degree})"
        )
    elif below_horizon_deg < NEAR_HORIZON_DEG:
        notes.append(f"the ray is only {below_horizon_deg:.1f} deg below the horizon: {one_degree}")
    if distance_sigma_m > 0.5 * distance_m:
        notes.append(f"the distance is poorly known (± {distance_sigma_m:.1f} m)")
    return notes
