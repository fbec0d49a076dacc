"""Looking closely: zoomed crops with a pixel grid labelled in ORIGINAL image coordinates.

Models read pixel positions poorly from a whole frame; a zoomed crop whose grid is labelled in the
ORIGINAL image's pixel coordinates lets them read positions off directly. All coordinates here are
pixels (x, y) of the original image, origin top-left, integer coordinates at pixel centres.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from PIL import Image, ImageDraw

from spatialclaw.primitives.display.overlay import label_font
from spatialclaw.primitives.imaging import as_rgb_array, png_bytes

__all__ = ["Zoom", "auto_contrast", "zoom"]

_NICE_STEPS = (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000)


@dataclass(frozen=True)
class Zoom:
    """A zoomed crop with a labelled grid; every label is an ORIGINAL-image pixel coordinate.

    Attributes:
        image: the rendered view (PIL RGB): the upscaled crop placed at ``offset`` inside margins that
            hold the tick labels (x labels on top, y labels on the left).
        box: (x0, y0, x1, y1) the cropped original pixels: columns x0..x1-1, rows y0..y1-1.
        scale: output pixels per original pixel (with ``interpolation="nearest"`` each original pixel
            is a ``scale`` x ``scale`` block).
        offset: (left, top) margin in output pixels.
        label: the caption given to ``zoom(..., label=)`` (None: none).
        x_ticks / y_ticks: (original coordinate, output pixel) pairs; each grid line runs through the
            centre of the original pixel column/row it is labelled with.
    """

    image: Image.Image
    box: tuple[int, int, int, int]
    scale: float
    offset: tuple[int, int]
    x_ticks: list[tuple[int, int]] = field(repr=False)
    y_ticks: list[tuple[int, int]] = field(repr=False)
    interpolation: str = "nearest"
    contrast: str | None = None
    label: str | None = None

    @property
    def array(self) -> np.ndarray:
        """(H, W, 3) uint8 rendered view."""
        return np.asarray(self.image)

    def to_original(self, u: Any, v: Any) -> tuple[np.ndarray, np.ndarray]:
        """Output-image pixel(s) (u, v) -> original-image pixel coordinates (x, y) (floats)."""
        x = self.box[0] - 0.5 + (np.asarray(u, dtype=np.float64) - self.offset[0] + 0.5) / self.scale
        y = self.box[1] - 0.5 + (np.asarray(v, dtype=np.float64) - self.offset[1] + 0.5) / self.scale
        return x, y

    def to_zoom(self, x: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        """Original-image pixel coordinates (x, y) -> output-image pixel (u, v) (floats)."""
        u = (np.asarray(x, dtype=np.float64) - self.box[0] + 0.5) * self.scale - 0.5 + self.offset[0]
        v = (np.asarray(y, dtype=np.float64) - self.box[1] + 0.5) * self.scale - 0.5 + self.offset[1]
        return u, v

    def _repr_png_(self) -> bytes:
        return png_bytes(self.image)[0]

    def __repr__(self) -> str:
        how = self.interpolation + (", auto contrast" if self.contrast else "")
        return (
            f"Zoom(box={self.box} original px, scale={self.scale:g}x {how}, image {self.image.width}x{self.image.height}; "
            f"grid labels are original pixel coordinates)"
        )


_RESAMPLING = {
    "nearest": Image.Resampling.NEAREST,
    "bilinear": Image.Resampling.BILINEAR,
    "bicubic": Image.Resampling.BICUBIC,
    "lanczos": Image.Resampling.LANCZOS,
}


def auto_contrast(array: Any, low_percentile: float = 1.0, high_percentile: float = 99.0) -> np.ndarray:
    """A display copy of an (H, W, 3) uint8 image with its brightness stretched (the input is untouched),
    never less readable than the input.

    The ``low_percentile``..``high_percentile`` range of the brightness (mean of R, G, B) is mapped to
    0..255, then a gamma (0.5..2) brings the median brightness towards mid-grey unless that would bend
    the image's edges (their gradient agreement with the input's drops by more than 0.01: then the
    stretch stays linear). Colour (each pixel's difference from its brightness) is smoothed and raised
    by at most the square root of the brightness gain, so the JPEG colour noise of a dark frame does not
    turn into coloured blocks. For looking at dark or overexposed frames only.
    """
    from scipy.ndimage import gaussian_filter

    image = np.asarray(array)
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"auto_contrast needs an (H, W, 3) RGB image, got shape {image.shape}")
    values = image.astype(np.float64)
    brightness = values.mean(axis=2)
    lo, hi = np.percentile(brightness, [low_percentile, high_percentile])
    if hi - lo < 1.0:
        return image.copy()
    gain = 255.0 / (hi - lo)
    linear = np.clip((brightness - lo) / (hi - lo), 0.0, 1.0)
    stretched = linear
    median = float(np.median(linear))
    if 0.0 < median < 1.0:
        curved = linear ** float(np.clip(np.log(0.5) / np.log(median), 0.5, 2.0))
        if _edge_agreement(curved, brightness) >= _edge_agreement(linear, brightness) - 0.01:
            stretched = curved
    out_brightness = stretched * 255.0
    colour = values - brightness[..., None]
    if gain > 2.0:
        colour = gaussian_filter(colour, (1.0, 1.0, 0.0))
    lift = np.clip(out_brightness / np.maximum(brightness, 1.0), 0.0, np.sqrt(gain))
    out = out_brightness[..., None] + colour * lift[..., None]
    return np.asarray(np.clip(np.round(out), 0, 255).astype(np.uint8))


def _edge_agreement(a: np.ndarray, b: np.ndarray) -> float:
    """Correlation of two (H, W) images' gradient magnitudes (1: the same edges, equally strong relative to
    each other)."""
    ga, gb = (np.hypot(*np.gradient(x.astype(np.float64))).ravel() for x in (a, b))
    if ga.std() == 0 or gb.std() == 0:
        return 1.0
    return float(np.corrcoef(ga, gb)[0, 1])


def _tick_step(scale: float, min_spacing_px: float = 48.0) -> int:
    for step in _NICE_STEPS:
        if step * scale >= min_spacing_px:
            return step
    return _NICE_STEPS[-1]


def zoom(
    frame: Any,
    box: Any,
    scale: float | None = None,
    grid: bool = True,
    pad: int = 0,
    target_px: int = 768,
    interpolation: Literal["nearest", "bilinear", "bicubic", "lanczos"] = "nearest",
    contrast: Literal[None, "auto"] = None,
    label: str | None = None,
) -> Zoom:
    """Crop ``box`` from ``frame`` and upscale it, with a labelled pixel grid in ORIGINAL pixel coordinates.

    Which interpolation when: ``"nearest"`` (default) keeps each original pixel a sharp square block, so
    you can read exact pixel coordinates and edges off the grid (use it to locate or measure);
    ``"bicubic"`` (or ``"lanczos"``) gives a smooth upscaled view that is easier to recognise things in
    (use it to identify what a small object is; the grid still labels original pixels, but a blurred edge
    no longer sits on a block boundary). ``contrast="auto"`` stretches a dark or overexposed crop for
    viewing only (``auto_contrast``: never less readable than the crop); the frame's pixels are never
    changed, so measure on the frame, not on the zoom.

    Args:
        frame: the image (Frame, PIL image or (H, W, 3) array).
        box: (x0, y0, x1, y1) original pixels, or an object with ``.box`` (a detection ``Instance``);
            columns x0..x1-1 and rows y0..y1-1 are kept (rounded to integers and clipped to the image).
        scale: output pixels per original pixel; default the largest integer keeping the longer side
            within ``target_px`` (at least 1, at most 32).
        grid: draw grid lines and tick labels in the original image's pixel coordinates.
        pad: grow the box by this many pixels on every side (context around a detection).
        interpolation: "nearest" (pixel blocks, for reading coordinates), "bicubic" or "lanczos" (smooth,
            for looking), or "bilinear".
        contrast: None (pixels as they are) or "auto" (stretch dark/overexposed crops for viewing).
        label: a caption (``show(z)`` shows it, as does a contact sheet), e.g. ``"the mug"``.

    Returns:
        A ``Zoom`` (``.image``; ``show(z)`` displays it), with ``to_original(u, v)`` / ``to_zoom(x, y)``.
    """
    array = as_rgb_array(frame)
    height, width = array.shape[:2]
    box = getattr(box, "box", box)
    if len(box) != 4:
        raise ValueError(f"box must be (x0, y0, x1, y1) in pixels, got {box!r}")
    x0, y0, x1, y1 = (int(round(float(v))) for v in box)
    x0, y0, x1, y1 = x0 - int(pad), y0 - int(pad), x1 + int(pad), y1 + int(pad)
    if x1 <= x0 or y1 <= y0:
        raise ValueError(f"box {tuple(box)} is empty: need x1 > x0 and y1 > y0 (pixels)")
    cx0, cy0, cx1, cy1 = max(0, x0), max(0, y0), min(width, x1), min(height, y1)
    if cx1 <= cx0 or cy1 <= cy0:
        raise ValueError(
            f"box {tuple(box)} lies outside the {width}x{height} image (x in 0..{width - 1}, y in 0..{height - 1})"
        )
    call = f"zoom(frames[0], {tuple(int(round(float(v))) for v in box)}"  # the caller's box, for a call that works
    if interpolation not in _RESAMPLING:
        raise ValueError(
            f"interpolation must be one of {', '.join(map(repr, _RESAMPLING))}, got {interpolation!r}; "
            f"e.g. {call}, interpolation='bicubic')"
        )
    if contrast not in (None, "auto"):
        raise ValueError(
            f"contrast must be None or 'auto' (a stretch chosen from the crop's own brightness; there is no "
            f"strength to set), got {contrast!r}; e.g. {call}, contrast='auto')"
        )
    crop = array[cy0:cy1, cx0:cx1]
    if contrast == "auto":
        crop = auto_contrast(crop)
    crop_h, crop_w = crop.shape[:2]
    if scale is None:
        scale = float(min(32, max(1, target_px // max(crop_w, crop_h))))
    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    out_w, out_h = max(1, int(round(crop_w * scale))), max(1, int(round(crop_h * scale)))
    upscaled = Image.fromarray(crop).resize((out_w, out_h), _RESAMPLING[interpolation])
    if not grid:
        return Zoom(upscaled, (cx0, cy0, cx1, cy1), float(scale), (0, 0), [], [], interpolation, contrast, label)
    font = label_font(12)
    label_w = int(ImageDraw.Draw(upscaled).textlength(str(cy1), font=font)) + 8
    left, top = max(label_w, 24), 18
    canvas = Image.new("RGB", (out_w + left + 4, out_h + top + 4), (255, 255, 255))
    canvas.paste(upscaled, (left, top))
    step = _tick_step(scale)
    x_ticks = [
        (x, int(np.floor((x - cx0 + 0.5) * scale)) + left) for x in range(((cx0 + step - 1) // step) * step, cx1, step)
    ]
    y_ticks = [
        (y, int(np.floor((y - cy0 + 0.5) * scale)) + top) for y in range(((cy0 + step - 1) // step) * step, cy1, step)
    ]
    overlay = Image.new("RGBA", canvas.size, (0, 0, 0, 0))
    pen = ImageDraw.Draw(overlay)
    for _, u in x_ticks:
        pen.line([(u, top), (u, top + out_h - 1)], fill=(255, 255, 0, 170), width=1)
    for _, v in y_ticks:
        pen.line([(left, v), (left + out_w - 1, v)], fill=(255, 255, 0, 170), width=1)
    canvas = Image.alpha_composite(canvas.convert("RGBA"), overlay).convert("RGB")
    text = ImageDraw.Draw(canvas)
    for x, u in x_ticks:
        text.text((u, top - 2), str(x), fill=(0, 0, 0), font=font, anchor="mb")
    for y, v in y_ticks:
        text.text((left - 4, v), str(y), fill=(0, 0, 0), font=font, anchor="rm")
    return Zoom(
        canvas, (cx0, cy0, cx1, cy1), float(scale), (left, top), x_ticks, y_ticks, interpolation, contrast, label
    )
