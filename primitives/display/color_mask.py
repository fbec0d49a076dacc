"""Which pixels show a colour: HSV hue bands, CIE Lab chroma and lightness, adaptive thresholds (for ``find_color``).

Hue bands are in degrees (HSV hue, 0..360): (centre, half-width). Chroma and lightness are CIE Lab
(chroma sqrt(a^2 + b^2), 0..~130; lightness L, 0..100).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["MIN_CHROMA", "NAMED_COLORS", "circular_mean", "color_mask", "color_space", "hue_distance"]

# Hue bands in degrees (HSV hue, 0..360): (centre, half-width). Chroma and lightness are CIE Lab.
NAMED_COLORS: dict[str, tuple[float, float]] = {
    "red": (0.0, 18.0),
    "orange": (28.0, 10.0),
    "yellow": (56.0, 13.0),
    "green": (120.0, 48.0),
    "cyan": (184.0, 16.0),
    "blue": (224.0, 24.0),
    "purple": (276.0, 26.0),
    "magenta": (320.0, 18.0),
    "pink": (335.0, 22.0),
}
_LIGHTNESS = {"pink": (60.0, 100.0), "red": (8.0, 75.0)}  # Lab L ranges that tell pink from red
_ACHROMATIC = ("white", "black", "gray", "grey")
_NEUTRAL_CHROMA = 12.0  # Lab chroma below which a pixel counts as neutral (white/grey/black)
MIN_CHROMA = 6.0  # never call a pixel coloured below this Lab chroma


@dataclass(frozen=True)
class _ColorSpace:
    hue: np.ndarray  # degrees 0..360 (HSV hue)
    lightness: np.ndarray  # Lab L, 0..100
    chroma: np.ndarray  # Lab chroma sqrt(a^2 + b^2), 0..~130


def color_space(array: np.ndarray) -> _ColorSpace:
    import cv2

    lab = cv2.cvtColor(array, cv2.COLOR_RGB2LAB)  # 8-bit: L * 255 / 100, a + 128, b + 128
    hue = cv2.cvtColor(array, cv2.COLOR_RGB2HSV_FULL)[..., 0]  # 0..255 for 0..360 degrees
    a = lab[..., 1].astype(np.float32) - 128.0
    b = lab[..., 2].astype(np.float32) - 128.0
    return _ColorSpace(
        hue.astype(np.float32) * np.float32(360.0 / 256.0),
        lab[..., 0].astype(np.float32) * np.float32(100.0 / 255.0),
        np.sqrt(a * a + b * b),
    )


def _otsu(values: np.ndarray) -> float:
    if values.size < 2 or np.ptp(values) < 1e-6:
        return float(values.min()) if values.size else 0.0
    histogram, edges = np.histogram(values, bins=128)
    centres = (edges[:-1] + edges[1:]) / 2
    weight = np.cumsum(histogram)
    mean = np.cumsum(histogram * centres)
    total, total_mean = weight[-1], mean[-1]
    between = np.zeros(len(centres))
    valid = (weight > 0) & (weight < total)
    w0, m0 = weight[valid], mean[valid]
    between[valid] = (total_mean * w0 / total - m0) ** 2 / (w0 * (total - w0))
    return float(edges[int(np.argmax(between)) + 1])


def hue_distance(hue: np.ndarray, centre: float) -> np.ndarray:
    difference = np.abs(hue - centre) % 360.0
    return np.minimum(difference, 360.0 - difference)


def _neutral_floor(chroma: np.ndarray) -> float:
    """The chroma a pixel needs to count as coloured in this image: 2.5 x the typical chroma of its
    more neutral half (JPEG noise, white balance), at least ``MIN_CHROMA``."""
    lower = chroma[chroma <= np.median(chroma)]
    return float(max(MIN_CHROMA, 2.5 * float(np.median(lower)) if lower.size else MIN_CHROMA))


def _chromatic_mask(
    space: _ColorSpace,
    centre: float,
    half: float,
    min_chroma: float | None,
    lightness: tuple[float, float] = (8.0, 100.0),
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    in_band = (
        (hue_distance(space.hue, centre) <= half)
        & (space.lightness >= lightness[0])
        & (space.lightness <= lightness[1])
    )
    if min_chroma is None:
        min_chroma = _neutral_floor(space.chroma)
    mask = in_band & (space.chroma >= min_chroma)
    thresholds = {"hue_deg": (round(centre, 1), round(half, 1)), "min_chroma": round(float(min_chroma), 1)}
    if lightness != (8.0, 100.0):
        thresholds["lightness"] = lightness
    return mask, space.chroma, thresholds


def color_mask(
    space: _ColorSpace, color: Any, hue_tolerance: float | None, min_chroma: float | None
) -> tuple[np.ndarray, np.ndarray, str, dict[str, Any], float | None, float]:
    """(mask, strength map, label, thresholds, hue centre or None, hue half-width)."""
    if isinstance(color, str):
        name = color.lower().strip()
        if name in _ACHROMATIC:
            neutral = space.chroma < _NEUTRAL_CHROMA
            if name == "white":
                floor = max(70.0, min(92.0, _otsu(space.lightness[neutral]) if neutral.any() else 70.0))
                return (
                    neutral & (space.lightness >= floor),
                    space.lightness,
                    name,
                    {"max_chroma": _NEUTRAL_CHROMA, "min_lightness": round(floor, 1)},
                    None,
                    0.0,
                )
            if name == "black":
                return (space.lightness <= 22.0, 100.0 - space.lightness, name, {"max_lightness": 22.0}, None, 0.0)
            mask = neutral & (space.lightness > 22.0) & (space.lightness < 75.0)
            return (
                mask,
                100.0 - np.abs(space.lightness - 50.0),
                name,
                {"max_chroma": _NEUTRAL_CHROMA, "lightness": (22.0, 75.0)},
                None,
                0.0,
            )
        if name not in NAMED_COLORS:
            known = sorted(NAMED_COLORS) + sorted(_ACHROMATIC)
            raise ValueError(f"unknown colour {color!r}; use one of {known} or an (r, g, b) tuple")
        centre, half = NAMED_COLORS[name]
        lightness = _LIGHTNESS.get(name, (8.0, 100.0))
        label = name
    else:
        rgb = np.asarray(color, dtype=np.float64).ravel()
        if rgb.shape != (3,) or (rgb < 0).any() or (rgb > 255).any():
            raise ValueError(f"color must be a name or an (r, g, b) tuple with values 0..255, got {color!r}")
        target = color_space(rgb.astype(np.uint8).reshape(1, 1, 3))
        label = f"rgb{tuple(int(v) for v in rgb)}"
        t_hue, t_light, t_chroma = float(target.hue[0, 0]), float(target.lightness[0, 0]), float(target.chroma[0, 0])
        if t_chroma < _NEUTRAL_CHROMA:
            mask = (space.chroma < _NEUTRAL_CHROMA) & (np.abs(space.lightness - t_light) <= 15.0)
            return (
                mask,
                100.0 - np.abs(space.lightness - t_light),
                label,
                {"lightness": (t_light - 15, t_light + 15)},
                None,
                0.0,
            )
        centre, half = t_hue, 20.0
        lightness = (8.0, 100.0)
        if min_chroma is None:
            min_chroma = max(MIN_CHROMA, 0.4 * t_chroma)
    if hue_tolerance is not None:
        half = float(hue_tolerance)
    mask, strength, thresholds = _chromatic_mask(space, centre, half, min_chroma, lightness)
    return mask, strength, label, thresholds, centre, half


def circular_mean(hue_deg: np.ndarray) -> float:
    angles = np.radians(hue_deg)
    return float(np.degrees(np.arctan2(np.sin(angles).mean(), np.cos(angles).mean())) % 360.0)
