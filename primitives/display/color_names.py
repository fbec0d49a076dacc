"""Everyday colour names for ``find_color`` (each name's hue bands, lightness range and chroma limit) and
the colour ``draw`` paints a label of that name in.

A name is one or more bands; a pixel has the colour when it lies in any of them. Hue is HSV hue in
degrees (0..360: red 0, yellow 60, green 120, cyan 180, blue 240, magenta 300), given as
(centre, half-width). Lightness is CIE Lab L (0..100) and chroma is CIE Lab chroma (0..~130).
The chroma floor (how colourful a pixel must be at least) is adaptive and set in :mod:`.color_mask`;
``max_chroma`` here caps it from above for the pale names (beige, mint).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["COLOR_NAMES", "DISPLAY_RGB", "ColorBand", "color_names_table", "contrasting", "label_rgb"]


@dataclass(frozen=True)
class ColorBand:
    """One band of a colour name: hue ``centre`` +- ``half`` degrees, Lab lightness in ``lightness``
    (min, max), Lab chroma at most ``max_chroma`` (None = no cap) and at least ``min_chroma`` (on top of
    the adaptive floor)."""

    centre: float
    half: float
    lightness: tuple[float, float] = (8.0, 100.0)
    max_chroma: float | None = None
    min_chroma: float = 0.0


COLOR_NAMES: dict[str, tuple[ColorBand, ...]] = {
    "red": (ColorBand(0.0, 18.0, (8.0, 75.0)),),
    "orange": (ColorBand(28.0, 10.0),),
    "yellow": (ColorBand(56.0, 13.0),),
    # green includes olive-green grass and foliage in shade: yellow hues (50..72 deg) when dark (L <= 58)
    # and clearly coloured (chroma >= 20; a dark olive-grey tint in a shadow is not grass)
    "green": (ColorBand(120.0, 48.0), ColorBand(61.0, 11.0, (8.0, 58.0), None, 20.0)),
    "cyan": (ColorBand(184.0, 16.0),),
    "blue": (ColorBand(224.0, 24.0),),
    "purple": (ColorBand(276.0, 26.0),),
    "violet": (ColorBand(276.0, 26.0),),
    "magenta": (ColorBand(320.0, 18.0),),
    "pink": (ColorBand(335.0, 22.0, (60.0, 100.0)),),
    "brown": (ColorBand(25.0, 22.0, (8.0, 55.0)),),
    "beige": (ColorBand(40.0, 18.0, (65.0, 100.0), 40.0),),
    "tan": (ColorBand(35.0, 15.0, (50.0, 85.0), 45.0),),
    "gold": (ColorBand(47.0, 9.0, (45.0, 100.0)),),
    "olive": (ColorBand(64.0, 16.0, (8.0, 60.0), None, 15.0),),
    "lime": (ColorBand(90.0, 22.0, (50.0, 100.0)),),
    "mint": (ColorBand(145.0, 35.0, (75.0, 100.0), 60.0),),
    "teal": (ColorBand(178.0, 18.0, (8.0, 65.0)),),
    "navy": (ColorBand(228.0, 22.0, (8.0, 35.0)),),
    "maroon": (ColorBand(355.0, 18.0, (8.0, 35.0)),),
}
"""Chromatic colour names -> their bands (white, black, gray/grey are handled by lightness in ``color_mask``)."""


def color_names_table() -> str:
    """A readable table of the colour names: hue range (degrees), Lab lightness and chroma cap per name."""
    rows = []
    for name, bands in COLOR_NAMES.items():
        parts = []
        for band in bands:
            low, high = (band.centre - band.half) % 360.0, (band.centre + band.half) % 360.0
            text = f"hue {low:g}..{high:g}"
            if band.lightness != (8.0, 100.0):
                text += f", L {band.lightness[0]:g}..{band.lightness[1]:g}"
            if band.min_chroma > 0:
                text += f", chroma >= {band.min_chroma:g}"
            if band.max_chroma is not None:
                text += f", chroma <= {band.max_chroma:g}"
            parts.append(text)
        rows.append(f"{name}: " + " or ".join(parts))
    return "\n".join(rows)


DISPLAY_RGB: dict[str, tuple[int, int, int]] = {
    "red": (230, 25, 25),
    "orange": (255, 140, 0),
    "yellow": (255, 225, 0),
    "green": (20, 190, 40),
    "cyan": (0, 220, 230),
    "blue": (30, 90, 255),
    "purple": (140, 50, 200),
    "violet": (150, 80, 230),
    "magenta": (235, 0, 200),
    "pink": (255, 140, 190),
    "brown": (140, 80, 30),
    "beige": (230, 215, 175),
    "tan": (210, 180, 140),
    "gold": (240, 190, 20),
    "olive": (120, 120, 20),
    "lime": (170, 240, 40),
    "mint": (170, 240, 200),
    "teal": (0, 128, 128),
    "navy": (10, 20, 120),
    "maroon": (128, 10, 20),
    "white": (255, 255, 255),
    "black": (0, 0, 0),
    "gray": (128, 128, 128),
    "grey": (128, 128, 128),
}
"""Every colour name ``find_color`` knows -> the RGB ``draw`` paints a label of that name in (each lies in
its own name's bands, so ``find_color`` finds a drawn "red" as red)."""

_SHADES = {"light": (255, 255, 255), "pale": (255, 255, 255), "dark": (0, 0, 0)}


def label_rgb(label: str | None) -> tuple[int, int, int] | None:
    """The colour a label names, or None: a label that is (or starts with) a colour name ("red", "Blue cup",
    "green_2", "reddish", "light blue", "dark green") gets that colour; "light"/"pale"/"dark" mix it 45%
    towards white or black."""
    words = re.findall(r"[a-z]+", (label or "").lower())
    shade = _SHADES.get(words[0]) if len(words) > 1 else None
    if shade is not None:
        words = words[1:]
    if not words:
        return None
    word = words[0]
    if word.endswith("ish") and word not in DISPLAY_RGB:
        word = word[:-3]
        word = word[:-1] if word not in DISPLAY_RGB and word[-2:-1] == word[-1:] else word  # reddish -> red
    rgb = DISPLAY_RGB.get(word)
    if rgb is None or shade is None:
        return rgb
    r, g, b = (round(0.55 * value + 0.45 * towards) for value, towards in zip(rgb, shade, strict=True))
    return r, g, b


def contrasting(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    """Black for a light colour, white for a dark one (an outline or text background that stands out)."""
    return (0, 0, 0) if 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] >= 110 else (255, 255, 255)
