"""Which pixels show a colour: HSV hue bands, CIE Lab chroma and lightness, adaptive thresholds (for ``find_color``).

Hue bands are in degrees (HSV hue, 0..360): (centre, half-width). Chroma and lightness are CIE Lab
(chroma sqrt(a^2 + b^2), 0..~130; lightness L, 0..100).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from spatialclaw.primitives.display.color_names import COLOR_NAMES, ColorBand

__all__ = [
    "MAX_FLOOR_CHROMA",
    "MIN_CHROMA",
    "adaptive_floor",
    "band_distance",
    "circular_mean",
    "color_mask",
    "color_space",
    "hue_distance",
]

_ACHROMATIC = ("white", "black", "gray", "grey")
_NEUTRAL_CHROMA = 12.0  # Lab chroma below which a pixel counts as neutral (white/grey/black)
MIN_CHROMA = 6.0  # never call a pixel coloured below this Lab chroma
MAX_FLOOR_CHROMA = 25.0  # the adaptive floor never demands more: grass, sky and pale mint in a colourful photo


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


def otsu(values: np.ndarray) -> float:
    """Otsu's threshold of a set of values (same units): the level that best splits them into two groups."""
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
    more neutral half (JPEG noise, white balance), at least ``MIN_CHROMA`` and at most ``MAX_FLOOR_CHROMA``
    (in a photo that is colourful all over, grass and sky, its "neutral half" is not neutral)."""
    lower = chroma[chroma <= np.median(chroma)]
    floor = 2.5 * float(np.median(lower)) if lower.size else MIN_CHROMA
    return float(min(MAX_FLOOR_CHROMA, max(MIN_CHROMA, floor)))


def _other_hue(space: _ColorSpace, bands: tuple[ColorBand, ...]) -> np.ndarray:
    """Pixels clearly of another colour than ``bands``: coloured (chroma >= ``MIN_CHROMA``) with a hue
    more than 45 degrees outside every band (pink walls when green is asked for)."""
    near = np.zeros(space.hue.shape, bool)
    for band in bands:
        near |= hue_distance(space.hue, band.centre) <= band.half + 45.0
    return (space.chroma >= MIN_CHROMA) & ~near


def adaptive_floor(space: _ColorSpace, bands: tuple[ColorBand, ...]) -> float:
    """The automatic chroma floor for ``bands``: :func:`_neutral_floor` over the pixels that could be
    mistaken for the colour (neutral ones and those of nearby hues), so a large surface of another pale
    colour (pink walls) does not raise it above a pale object of the asked colour; over the whole image
    when fewer than 5% of the pixels are left."""
    candidates = ~_other_hue(space, bands)
    if candidates.sum() < 0.05 * candidates.size:
        return _neutral_floor(space.chroma)
    return _neutral_floor(space.chroma[candidates])


def _chromatic_mask(
    space: _ColorSpace, bands: tuple[ColorBand, ...], min_chroma: float | None
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    if min_chroma is None:
        min_chroma = adaptive_floor(space, bands)
    mask = np.zeros(space.hue.shape, bool)
    for band in bands:
        mask |= (
            (hue_distance(space.hue, band.centre) <= band.half)
            & (space.lightness >= band.lightness[0])
            & (space.lightness <= band.lightness[1])
            & (space.chroma <= (np.inf if band.max_chroma is None else band.max_chroma))
            & (space.chroma >= band.min_chroma)
        )
    mask &= space.chroma >= min_chroma
    hues = [(round(band.centre, 1), round(band.half, 1)) for band in bands]
    thresholds: dict[str, Any] = {"hue_deg": hues[0] if len(hues) == 1 else hues, "min_chroma": round(min_chroma, 1)}
    lightness = [band.lightness for band in bands if band.lightness != (8.0, 100.0)]
    if lightness:
        thresholds["lightness"] = lightness[0] if len(bands) == 1 else [band.lightness for band in bands]
    return mask, space.chroma, thresholds


def band_distance(hue: float, bands: tuple[ColorBand, ...]) -> float:
    """How far a hue (degrees) lies from the nearest band's centre, in that band's half-widths (0 = centre)."""
    return min(float(hue_distance(np.array(hue), band.centre)) / max(band.half, 1.0) for band in bands)


def color_mask(
    space: _ColorSpace, color: Any, hue_tolerance: float | None, min_chroma: float | None
) -> tuple[np.ndarray, np.ndarray, str, dict[str, Any], tuple[ColorBand, ...]]:
    """(mask, strength map, label, thresholds, hue bands; empty for white/grey/black)."""
    if isinstance(color, str):
        name = color.lower().strip()
        if name in _ACHROMATIC:
            neutral = space.chroma < _NEUTRAL_CHROMA
            if name == "white":
                floor = max(70.0, min(92.0, otsu(space.lightness[neutral]) if neutral.any() else 70.0))
                return (
                    neutral & (space.lightness >= floor),
                    space.lightness,
                    name,
                    {"max_chroma": _NEUTRAL_CHROMA, "min_lightness": round(floor, 1)},
                    (),
                )
            if name == "black":
                return (space.lightness <= 22.0, 100.0 - space.lightness, name, {"max_lightness": 22.0}, ())
            mask = neutral & (space.lightness > 22.0) & (space.lightness < 75.0)
            return (
                mask,
                100.0 - np.abs(space.lightness - 50.0),
                name,
                {"max_chroma": _NEUTRAL_CHROMA, "lightness": (22.0, 75.0)},
                (),
            )
        if name not in COLOR_NAMES:
            known = sorted(COLOR_NAMES) + sorted(_ACHROMATIC)
            raise ValueError(f"unknown colour {color!r}; use one of {known} or an (r, g, b) tuple")
        bands = COLOR_NAMES[name]
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
                (),
            )
        bands = (ColorBand(t_hue, 20.0),)
        if min_chroma is None:
            min_chroma = max(MIN_CHROMA, 0.4 * t_chroma)
    if hue_tolerance is not None:
        bands = tuple(
            ColorBand(band.centre, float(hue_tolerance), band.lightness, band.max_chroma, band.min_chroma)
            for band in bands
        )
    mask, strength, thresholds = _chromatic_mask(space, bands, min_chroma)
    return mask, strength, label, thresholds, bands


def circular_mean(hue_deg: np.ndarray) -> float:
    angles = np.radians(hue_deg)
    return float(np.degrees(np.arctan2(np.sin(angles).mean(), np.cos(angles).mean())) % 360.0)
