"""Looking closely: zoomed crops with a pixel grid, overlays, contact sheets, and colour blobs.

Models read pixel positions poorly from a whole frame; a zoomed crop whose grid is labelled in the
ORIGINAL image's pixel coordinates lets them read positions off directly. All coordinates here are
pixels (x, y) of the original image, origin top-left, integer coordinates at pixel centres.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from spatialclaw.primitives.imaging import as_pil, as_rgb_array, png_bytes

__all__ = ["Zoom", "zoom", "auto_contrast", "draw", "overlay_sizes", "contact_sheet", "Blob", "ColorBlobs", "find_color", "NAMED_COLORS"]

PALETTE = [(255, 64, 64), (64, 160, 255), (64, 220, 64), (255, 200, 0), (220, 64, 255), (0, 220, 220),
           (255, 128, 0), (255, 255, 255)]
_NICE_STEPS = (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000)


def _font(size: int) -> ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


# ---- zoom ----------------------------------------------------------------------------------------
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
        return (f"Zoom(box={self.box} original px, scale={self.scale:g}x {how}, image {self.image.width}x{self.image.height}; "
                f"grid labels are original pixel coordinates)")


_RESAMPLING = {"nearest": Image.NEAREST, "bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC,
               "lanczos": Image.LANCZOS}


def auto_contrast(array: Any, low_percentile: float = 1.0, high_percentile: float = 99.0) -> np.ndarray:
    """A display copy of an (H, W, 3) uint8 image with its brightness stretched (the input is untouched).

    The ``low_percentile``..``high_percentile`` range of the brightness (mean of R, G, B) is mapped to
    0..255 (the same linear map for all channels, so hues are kept), then a gamma brings the median
    brightness to mid-grey (gamma clamped to 0.33..3). For looking at dark or overexposed frames only.
    """
    image = np.asarray(array)
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"auto_contrast needs an (H, W, 3) RGB image, got shape {image.shape}")
    values = image.astype(np.float64)
    brightness = values.mean(axis=2)
    lo, hi = np.percentile(brightness, [low_percentile, high_percentile])
    if hi - lo < 1.0:
        return image.copy()
    stretched = np.clip((values - lo) / (hi - lo), 0.0, 1.0)
    median = float(np.median(stretched.mean(axis=2)))
    if 0.0 < median < 1.0:
        gamma = float(np.clip(np.log(0.5) / np.log(median), 1 / 3, 3.0))
        stretched = stretched ** gamma
    return np.round(stretched * 255).astype(np.uint8)


def _tick_step(scale: float, min_spacing_px: float = 48.0) -> int:
    for step in _NICE_STEPS:
        if step * scale >= min_spacing_px:
            return step
    return _NICE_STEPS[-1]


def zoom(frame: Any, box: Any, scale: float | None = None, grid: bool = True, pad: int = 0,
         target_px: int = 768, interpolation: str = "nearest", contrast: str | None = None) -> Zoom:
    """Crop ``box`` from ``frame`` and upscale it, with a labelled pixel grid in ORIGINAL pixel coordinates.

    Which interpolation when: ``"nearest"`` (default) keeps each original pixel a sharp square block, so
    you can read exact pixel coordinates and edges off the grid (use it to locate or measure);
    ``"bicubic"`` (or ``"lanczos"``) gives a smooth upscaled view that is easier to recognise things in
    (use it to identify what a small object is; the grid still labels original pixels, but a blurred edge
    no longer sits on a block boundary). ``contrast="auto"`` stretches a dark or overexposed crop for
    viewing only (1st..99th brightness percentile to full range, then a gamma that brings the median to
    mid-grey); the frame's pixels are never changed, so measure on the frame, not on the zoom.

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
        raise ValueError(f"box {tuple(box)} lies outside the {width}x{height} image (x in 0..{width - 1}, y in 0..{height - 1})")
    if interpolation not in _RESAMPLING:
        raise ValueError(f"interpolation must be one of {sorted(_RESAMPLING)}, got {interpolation!r}")
    if contrast not in (None, "auto"):
        raise ValueError(f"contrast must be None or 'auto', got {contrast!r}")
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
        return Zoom(upscaled, (cx0, cy0, cx1, cy1), float(scale), (0, 0), [], [], interpolation, contrast)
    font = _font(12)
    label_w = int(ImageDraw.Draw(upscaled).textlength(str(cy1), font=font)) + 8
    left, top = max(label_w, 24), 18
    canvas = Image.new("RGB", (out_w + left + 4, out_h + top + 4), (255, 255, 255))
    canvas.paste(upscaled, (left, top))
    step = _tick_step(scale)
    x_ticks = [(x, int(np.floor((x - cx0 + 0.5) * scale)) + left)
               for x in range(((cx0 + step - 1) // step) * step, cx1, step)]
    y_ticks = [(y, int(np.floor((y - cy0 + 0.5) * scale)) + top)
               for y in range(((cy0 + step - 1) // step) * step, cy1, step)]
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
    return Zoom(canvas, (cx0, cy0, cx1, cy1), float(scale), (left, top), x_ticks, y_ticks, interpolation, contrast)


# ---- draw ----------------------------------------------------------------------------------------
def overlay_sizes(width: int, height: int) -> tuple[int, int]:
    """(line width px, label font px) that suit a ``width`` x ``height`` image: both grow with the image's
    geometric-mean side (1 px / 8 px on a 200x150 frame, 2 px / 14 px at 640x480, 12 px / 80 px at 4000x3000)."""
    side = float(np.sqrt(max(1, width) * max(1, height)))
    return int(np.clip(round(side / 300), 1, 24)), int(np.clip(round(side / 40), 8, 80))


def _named_items(items: Any, kind: str) -> list[tuple[Any, str | None]]:
    if items is None:
        return []
    if isinstance(items, dict):
        return [(value, str(key)) for key, value in items.items()]
    if kind == "boxes" and hasattr(items, "box"):
        items = [items]
    if kind == "boxes" and not isinstance(items, np.ndarray) and any(hasattr(i, "box") for i in items):
        return [(np.asarray(getattr(i, "box", i), dtype=np.float64), getattr(i, "label", None)) for i in items]
    if kind in ("points", "boxes", "lines"):
        array = np.asarray(items, dtype=np.float64)
        if array.size == 0:
            return []
        width = {"points": 2, "boxes": 4, "lines": 4}[kind]
        if array.ndim == 1 and array.size == width:
            array = array[None]
        if kind == "lines" and array.ndim == 3 and array.shape[1:] == (2, 2):
            array = array.reshape(-1, 4)
        if array.ndim != 2 or array.shape[1] != width:
            shapes = {"points": "(N, 2) (x, y)", "boxes": "(N, 4) (x0, y0, x1, y1)", "lines": "(N, 4) (x0, y0, x1, y1) or (N, 2, 2)"}
            raise ValueError(f"{kind} must be {shapes[kind]} pixels, got shape {array.shape}")
        return [(row, None) for row in array]
    entries: list[tuple[Any, str | None]] = []
    if isinstance(items, np.ndarray) and items.size == 0:
        return []
    many = not isinstance(items, np.ndarray) and not hasattr(items, "mask") and hasattr(items, "__len__")
    for item in items if many else [items]:
        mask = np.asarray(getattr(item, "mask", item)).astype(bool)
        if mask.ndim == 3:
            entries.extend((layer, None) for layer in mask)
        elif mask.ndim == 2:
            label = getattr(item, "label", None)
            entries.append((mask, None if label is None else str(label)))
        else:
            raise ValueError(f"masks must be (H, W) or (N, H, W) bool arrays, got shape {mask.shape}")
    return entries


def draw(
    frame: Any,
    points: Any = None,
    boxes: Any = None,
    masks: Any = None,
    lines: Any = None,
    labels: Sequence[str] | None = None,
    width: int | None = None,
    font_px: int | None = None,
) -> Image.Image:
    """Overlay labelled points, boxes, masks and lines on an image; returns a new PIL RGB image.

    Args:
        frame: the image (Frame, PIL image or (H, W, 3) array).
        points: (N, 2) pixels (x, y), or a dict {label: (x, y)}.
        boxes: (N, 4) pixels (x0, y0, x1, y1), a dict {label: box}, or detections (``Detections`` or
        ``Instance`` objects: their ``.box`` and ``.label`` are used).
        masks: an (H, W) bool mask, a list of them (or of objects with ``.mask``), or a dict {label: mask}.
        lines: (N, 4) pixels (x0, y0, x1, y1) or (N, 2, 2), or a dict {label: line}.
        labels: texts for the elements when exactly one of points/boxes/masks/lines is given as a
            sequence (use dicts to label several kinds at once).
        width: line width in pixels; default scales with the image (1 px on a 200-px frame, 2 px at
            640x480, about 12 px on a 4000-px photo).
        font_px: label height in pixels; default scales with the image (8 px on a 200-px frame, 14 px at
            640x480, up to 80 px), so labels stay legible without covering small frames.

    Empty overlays (``boxes=[]``, ``points=np.zeros((0, 2))``, ``masks=[]``) draw nothing: with nothing
    to draw the frame comes back unchanged (as a copy).
    """
    base = as_pil(frame).copy()
    auto_width, auto_font = overlay_sizes(base.width, base.height)
    width = auto_width if width is None else max(1, int(width))
    font_px = auto_font if font_px is None else max(6, int(font_px))
    groups = {kind: _named_items(value, kind) for kind, value in
              (("masks", masks), ("boxes", boxes), ("lines", lines), ("points", points))}
    if labels is not None:
        given = [kind for kind, value in (("points", points), ("boxes", boxes), ("masks", masks), ("lines", lines))
                 if value is not None]
        if len(given) != 1:
            raise ValueError("labels= applies when exactly one of points/boxes/masks/lines is given; "
                             "to label several kinds, pass each as a dict {label: geometry}")
        items = groups[given[0]]
        if len(labels) != len(items):
            raise ValueError(f"got {len(labels)} labels for {len(items)} {given[0]}")
        groups[given[0]] = [(geometry, str(label)) for (geometry, _), label in zip(items, labels)]
    colour_index = 0
    for mask, _ in groups["masks"]:
        if mask.shape != (base.height, base.width):
            raise ValueError(f"mask shape {mask.shape} does not match the {base.width}x{base.height} image (H, W)")
        colour = PALETTE[colour_index % len(PALETTE)]
        colour_index += 1
        tint = Image.new("RGB", base.size, colour)
        alpha = Image.fromarray((mask.astype(bool) * 110).astype(np.uint8))
        base.paste(tint, (0, 0), alpha)
    pen = ImageDraw.Draw(base)
    font = _font(font_px)
    text_pad = max(1, font_px // 7)
    colour_index = 0
    texts: list[tuple[tuple[float, float], str, tuple[int, int, int]]] = []
    for mask, label in groups["masks"]:
        colour = PALETTE[colour_index % len(PALETTE)]
        colour_index += 1
        if label and mask.any():
            ys, xs = np.nonzero(mask)
            texts.append(((float(xs.mean()), float(ys.mean())), label, colour))
    for box, label in groups["boxes"]:
        colour = PALETTE[colour_index % len(PALETTE)]
        colour_index += 1
        x0, y0, x1, y1 = (float(v) for v in np.asarray(getattr(box, "box", box), dtype=np.float64))
        pen.rectangle([min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)], outline=colour, width=width)
        if label:
            texts.append(((min(x0, x1), min(y0, y1) - 2), label, colour))
    for line, label in groups["lines"]:
        colour = PALETTE[colour_index % len(PALETTE)]
        colour_index += 1
        x0, y0, x1, y1 = (float(v) for v in np.asarray(line, dtype=np.float64).ravel())
        pen.line([(x0, y0), (x1, y1)], fill=colour, width=width)
        if label:
            texts.append((((x0 + x1) / 2, (y0 + y1) / 2), label, colour))
    radius = max(3, width * 2)
    for point, label in groups["points"]:
        colour = PALETTE[colour_index % len(PALETTE)]
        colour_index += 1
        x, y = (float(v) for v in np.asarray(point, dtype=np.float64).ravel())
        pen.ellipse([x - radius, y - radius, x + radius, y + radius], fill=colour, outline=(0, 0, 0))
        if label:
            texts.append(((x + radius + 2, y - radius - 2), label, colour))
    for (x, y), label, colour in texts:
        left, top, right, bottom = pen.textbbox((x, y), label, font=font, anchor="lb")
        pen.rectangle([left - text_pad, top - text_pad, right + text_pad, bottom + text_pad], fill=(0, 0, 0))
        pen.text((x, y), label, fill=colour, font=font, anchor="lb")
    return base


def contact_sheet(crops: Sequence[Any], labels: Sequence[str] | None = None, columns: int | None = None,
                  cell_px: int = 256) -> Image.Image:
    """Tile several images (crops, frames, zooms) into one labelled grid; returns a PIL RGB image.

    Each image is fitted (aspect kept) into a ``cell_px`` square with its label underneath;
    ``columns`` defaults to ceil(sqrt(n)).
    """
    if len(crops) == 0:
        raise ValueError("contact_sheet needs at least one image")
    if labels is not None and len(labels) != len(crops):
        raise ValueError(f"got {len(labels)} labels for {len(crops)} images")
    columns = columns or int(np.ceil(np.sqrt(len(crops))))
    rows = int(np.ceil(len(crops) / columns))
    caption = 20 if labels is not None else 0
    pad = 4
    sheet = Image.new("RGB", (columns * (cell_px + pad) + pad, rows * (cell_px + caption + pad) + pad), (40, 40, 40))
    pen = ImageDraw.Draw(sheet)
    font = _font(14)
    for i, crop in enumerate(crops):
        image = as_pil(getattr(crop, "image", crop) if isinstance(getattr(crop, "image", None), Image.Image) else crop)
        image = image.copy()
        image.thumbnail((cell_px, cell_px), Image.LANCZOS if max(image.size) > cell_px else Image.NEAREST)
        if max(image.size) < cell_px:
            factor = cell_px / max(image.size)
            image = image.resize((max(1, int(image.width * factor)), max(1, int(image.height * factor))), Image.NEAREST)
        col, row = i % columns, i // columns
        x = pad + col * (cell_px + pad)
        y = pad + row * (cell_px + caption + pad)
        sheet.paste(image, (x + (cell_px - image.width) // 2, y + (cell_px - image.height) // 2))
        if labels is not None:
            pen.text((x + cell_px // 2, y + cell_px + caption // 2), str(labels[i]), fill=(255, 255, 255),
                     font=font, anchor="mm")
    return sheet


# ---- find_color ----------------------------------------------------------------------------------
# Hue bands in degrees (HSV hue, 0..360): (centre, half-width). Chroma and lightness are CIE Lab.
NAMED_COLORS: dict[str, tuple[float, float]] = {
    "red": (0.0, 18.0), "orange": (28.0, 10.0), "yellow": (56.0, 13.0), "green": (120.0, 48.0),
    "cyan": (184.0, 16.0), "blue": (224.0, 24.0), "purple": (276.0, 26.0), "magenta": (320.0, 18.0),
    "pink": (335.0, 22.0),
}
_LIGHTNESS = {"pink": (60.0, 100.0), "red": (8.0, 75.0)}   # Lab L ranges that tell pink from red
_ACHROMATIC = ("white", "black", "gray", "grey")
_NEUTRAL_CHROMA = 12.0      # Lab chroma below which a pixel counts as neutral (white/grey/black)
_MIN_CHROMA = 6.0           # never call a pixel coloured below this Lab chroma


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
        return (f"Blob(centroid=({self.centroid[0]:.2f}, {self.centroid[1]:.2f}) px, area={self.area} px^2, "
                f"box={self.box}, match={self.match:.2f}, compactness={self.compactness:.2f}{plane})")


class ColorBlobs(list):
    """Blobs of one colour, best match first (a list of ``Blob``), with the colour mask that produced them.

    Without an expected size or a shape the order is by area (largest first); ``.thresholds`` records the adaptive
    thresholds used (hue band in degrees, Lab chroma or lightness floor)."""

    def __init__(self, blobs: Sequence[Blob], color: str, mask: np.ndarray,
                 thresholds: dict[str, Any] | None = None) -> None:
        super().__init__(blobs)
        self.color = color
        self.mask = mask
        self.thresholds = thresholds or {}

    def __repr__(self) -> str:
        if not self:
            return f"ColorBlobs(no {self.color} blobs found; thresholds {self.thresholds})"
        lines = [f"{len(self)} {self.color} blob{'s' if len(self) != 1 else ''}, best match first:"]
        lines += [f"  [{i}] {blob!r}" for i, blob in enumerate(self)]
        return "\n".join(lines)


@dataclass(frozen=True)
class _ColorSpace:
    hue: np.ndarray        # degrees 0..360 (HSV hue)
    lightness: np.ndarray  # Lab L, 0..100
    chroma: np.ndarray     # Lab chroma sqrt(a^2 + b^2), 0..~130


def _color_space(array: np.ndarray) -> _ColorSpace:
    import cv2

    lab = cv2.cvtColor(array, cv2.COLOR_RGB2LAB)              # 8-bit: L * 255 / 100, a + 128, b + 128
    hue = cv2.cvtColor(array, cv2.COLOR_RGB2HSV_FULL)[..., 0]  # 0..255 for 0..360 degrees
    a = lab[..., 1].astype(np.float32) - 128.0
    b = lab[..., 2].astype(np.float32) - 128.0
    return _ColorSpace(hue.astype(np.float32) * np.float32(360.0 / 256.0),
                       lab[..., 0].astype(np.float32) * np.float32(100.0 / 255.0), np.sqrt(a * a + b * b))


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


def _hue_distance(hue: np.ndarray, centre: float) -> np.ndarray:
    difference = np.abs(hue - centre) % 360.0
    return np.minimum(difference, 360.0 - difference)


def _neutral_floor(chroma: np.ndarray) -> float:
    """The chroma a pixel needs to count as coloured in this image: 2.5 x the typical chroma of its
    more neutral half (JPEG noise, white balance), at least ``_MIN_CHROMA``."""
    lower = chroma[chroma <= np.median(chroma)]
    return float(max(_MIN_CHROMA, 2.5 * float(np.median(lower)) if lower.size else _MIN_CHROMA))


def _chromatic_mask(space: _ColorSpace, centre: float, half: float, min_chroma: float | None,
                    lightness: tuple[float, float] = (8.0, 100.0)) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    in_band = (_hue_distance(space.hue, centre) <= half) & (space.lightness >= lightness[0]) & (space.lightness <= lightness[1])
    if min_chroma is None:
        min_chroma = _neutral_floor(space.chroma)
    mask = in_band & (space.chroma >= min_chroma)
    thresholds = {"hue_deg": (round(centre, 1), round(half, 1)), "min_chroma": round(float(min_chroma), 1)}
    if lightness != (8.0, 100.0):
        thresholds["lightness"] = lightness
    return mask, space.chroma, thresholds


def _color_mask(space: _ColorSpace, color: Any, hue_tolerance: float | None, min_chroma: float | None
                ) -> tuple[np.ndarray, np.ndarray, str, dict[str, Any], float | None, float]:
    """(mask, strength map, label, thresholds, hue centre or None, hue half-width)."""
    if isinstance(color, str):
        name = color.lower().strip()
        if name in _ACHROMATIC:
            neutral = space.chroma < _NEUTRAL_CHROMA
            if name == "white":
                floor = max(70.0, min(92.0, _otsu(space.lightness[neutral]) if neutral.any() else 70.0))
                return (neutral & (space.lightness >= floor), space.lightness, name,
                        {"max_chroma": _NEUTRAL_CHROMA, "min_lightness": round(floor, 1)}, None, 0.0)
            if name == "black":
                return (space.lightness <= 22.0, 100.0 - space.lightness, name, {"max_lightness": 22.0}, None, 0.0)
            mask = neutral & (space.lightness > 22.0) & (space.lightness < 75.0)
            return mask, 100.0 - np.abs(space.lightness - 50.0), name, {"max_chroma": _NEUTRAL_CHROMA,
                                                                      "lightness": (22.0, 75.0)}, None, 0.0
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
        target = _color_space(rgb.astype(np.uint8).reshape(1, 1, 3))
        label = f"rgb{tuple(int(v) for v in rgb)}"
        t_hue, t_light, t_chroma = float(target.hue[0, 0]), float(target.lightness[0, 0]), float(target.chroma[0, 0])
        if t_chroma < _NEUTRAL_CHROMA:
            mask = (space.chroma < _NEUTRAL_CHROMA) & (np.abs(space.lightness - t_light) <= 15.0)
            return mask, 100.0 - np.abs(space.lightness - t_light), label, {"lightness": (t_light - 15, t_light + 15)}, None, 0.0
        centre, half = t_hue, 20.0
        lightness = (8.0, 100.0)
        if min_chroma is None:
            min_chroma = max(_MIN_CHROMA, 0.4 * t_chroma)
    if hue_tolerance is not None:
        half = float(hue_tolerance)
    mask, strength, thresholds = _chromatic_mask(space, centre, half, min_chroma, lightness)
    return mask, strength, label, thresholds, centre, half


def _weighted_centroid(local: np.ndarray, values: np.ndarray, origin: tuple[int, int]
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
    inside = float(np.percentile(values[core], 90))   # blur lowers a small blob's median below its colour
    if inside - background < 1e-6:
        weights = local.astype(np.float64)
    else:
        weights = np.clip((values - background) / (inside - background), 0.0, 1.0) * near
    total = float(weights.sum())
    if total <= 0:
        weights, total = local.astype(np.float64), float(local.sum())
    gy, gx = np.mgrid[0:local.shape[0], 0:local.shape[1]]
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
) -> ColorBlobs:
    """Find regions of a colour (pale or saturated) with adaptive thresholds and connected components;
    for small solid marker dots pass ``shape="dot"`` (and ``expected_size=`` their diameter, px) so the
    dot ranks first, above larger same-coloured clutter.

    A pixel has the colour when its hue (HSV, degrees) lies in the colour's band and its colourfulness
    (CIE Lab chroma) stands out from this image's neutral surfaces: the chroma floor adapts to the image
    (2.5 x the typical chroma of its more neutral half, at least 6), so pale stickers on white paper and
    saturated ones are both found, and grey or white surfaces are not; pink is the light (Lab L >= 60)
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
    a wall, a poster). Pass the dot's diameter as ``expected_size`` too when you know it. With
    ``expected_size`` and no ``shape`` compact blobs are mildly preferred; ``shape="any"`` turns the
    shape term off. Typical: ``find_color(frames[0], "red", shape="dot", expected_size=10)[0].centroid``.
    Check the top blob: a real dot has ``compactness`` near 1 and an area near its disc's; a top blob with
    compactness below about 0.6 is a dot merged with a background of similar tint (a bluish floor): call
    again with a higher ``min_chroma`` (e.g. 40) to separate them, and ``draw`` the result to confirm.

    Centroids are sub-pixel: intensity-weighted over the blob and its partly covered edge pixels.
    Measure in a plane by passing ``rectified=geom.find_plane_reference(...)`` (or ``geom.rectify_plane``):
    each blob then has ``plane_xy`` and ``plane_size`` in the plane's units.

    Args:
        frame: the image (Frame, PIL image or (H, W, 3) RGB array).
        color: a name ("red", "orange", "yellow", "green", "cyan", "blue", "purple", "magenta", "pink",
            "white", "black", "gray") or an (r, g, b) tuple 0..255 (hue +- 20 degrees, chroma at least
            0.4 x the target's; greys by lightness +- 15).
        min_area: smaller regions (pixels) are dropped.
        hue_tolerance: override the hue half-width, degrees (0..180).
        min_chroma: override the adaptive Lab chroma floor (0..~130; pale colours ~15-30, vivid 50+).
        max_blobs: keep at most this many, best first.
        expected_size: typical width of the wanted blobs, pixels (or plane units with ``rectified``).
        rectified: a ``Rectified`` plane (from ``geom.rectify_plane`` / ``geom.find_plane_reference``).
        shape: None (default), "dot" (prefer small solid round blobs: marker dots) or "any" (no shape term).

    Returns:
        ``ColorBlobs``: a list of ``Blob`` (centroid (x, y) px sub-pixel, area px^2, box, mask, mean_rgb,
        match, compactness, plane_xy, plane_size), 8-connected; ``.mask`` the full colour mask, ``.thresholds`` the
        thresholds used.
    """
    import cv2

    array = as_rgb_array(frame)
    space = _color_space(array)
    mask, strength, label, thresholds, centre, half = _color_mask(space, color, hue_tolerance, min_chroma)
    if expected_size is not None and not float(expected_size) > 0:
        raise ValueError(f"expected_size must be a positive width (pixels, or plane units with rectified=), got {expected_size!r}")
    if shape not in _SHAPE_WEIGHT:
        raise ValueError(f"shape must be None, 'dot' (small solid round markers) or 'any', got {shape!r}")
    shape_weight = _SHAPE_WEIGHT[shape] if (shape is not None or expected_size is not None) else 0.0
    count, components, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    candidates = [i for i in range(1, count) if stats[i, cv2.CC_STAT_AREA] >= min_area]
    height, width = mask.shape
    found = []
    for i in candidates:
        x, y, w, h, area = (int(v) for v in stats[i])
        x0, y0, x1, y1 = max(0, x - 5), max(0, y - 5), min(width, x + w + 5), min(height, y + h + 5)
        local = components[y0:y1, x0:x1] == i
        centroid, weighted = _weighted_centroid(local, strength[y0:y1, x0:x1], (x0, y0))
        score = 0.0
        if centre is not None:
            mean_hue = _circular_mean(space.hue[y0:y1, x0:x1][local])
            score += 0.5 * float(_hue_distance(np.array(mean_hue), centre)) / max(half, 1.0)
            score += _halo_penalty(local, space.chroma[y0:y1, x0:x1], space.hue[y0:y1, x0:x1])
        plane_xy = plane_size = None
        ranked_area = float(np.sqrt(weighted * area))   # a faint speck's weights must not make it look big
        size = float(np.sqrt(4.0 * ranked_area / np.pi))
        if rectified is not None:
            plane_xy, plane_size = _blob_on_plane(rectified, centroid, weighted)
            size = plane_size * float(np.sqrt(ranked_area / weighted))
            score += _off_reference_penalty(rectified, plane_xy)
        if expected_size is not None:
            score += abs(float(np.log(max(size, 1e-9) / float(expected_size)))) / np.log(1.5)
        compact = _disc_overlap(local)
        score += shape_weight * (1.0 - compact)
        found.append((i, (x, y, x + w, y + h), area, centroid, weighted, float(np.exp(-score)), plane_xy, plane_size,
                      tuple(float(v) for v in array[y0:y1, x0:x1][local].mean(axis=0)), compact))
    by_area = expected_size is None and shape in (None, "any")
    found.sort(key=(lambda f: -f[2]) if by_area else (lambda f: -f[5]))
    blobs = [Blob(centroid=centroid, area=area, box=box, mask=components == i, mean_rgb=mean_rgb,
                  weighted_area=weighted, match=match, plane_xy=plane_xy, plane_size=plane_size, compactness=compact)
             for i, box, area, centroid, weighted, match, plane_xy, plane_size, mean_rgb, compact in found[:max_blobs]]
    return ColorBlobs(blobs[:max_blobs], label, mask, thresholds)


_SHAPE_WEIGHT = {None: 1.5, "dot": 4.0, "any": 0.0}
"""Ranking penalty per unit of (1 - compactness): mild by default with an expected size, strong for dots."""


def _disc_overlap(local: np.ndarray) -> float:
    """Intersection over union of a region's mask with the disc of equal area at its centroid (1 = a disc)."""
    ys, xs = np.nonzero(local)
    if xs.size == 0:
        return 0.0
    radius_sq = xs.size / np.pi
    gy, gx = np.mgrid[0:local.shape[0], 0:local.shape[1]]
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
    same_hue = ring & (_hue_distance(hue, _circular_mean(hue[local])) <= 30.0)
    rim = same_hue.sum() >= 2 and float(np.percentile(chroma[same_hue], 95)) > 1.5 * own
    ringing = float(np.percentile(chroma[ring], 95)) > 2.0 * own
    contrast = own / max(float(np.median(chroma[ring])), _MIN_CHROMA / 2)
    return (2.0 if rim or ringing else 0.0) + 1.5 * float(np.clip(2.0 - contrast, 0.0, 1.0))


def _circular_mean(hue_deg: np.ndarray) -> float:
    angles = np.radians(hue_deg)
    return float(np.degrees(np.arctan2(np.sin(angles).mean(), np.cos(angles).mean())) % 360.0)


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
