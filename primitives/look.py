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

from .imaging import as_pil, as_rgb_array, png_bytes

__all__ = ["Zoom", "zoom", "draw", "contact_sheet", "Blob", "ColorBlobs", "find_color", "NAMED_COLORS"]

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
        scale: output pixels per original pixel (nearest-neighbour upscaling, so each original pixel
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
        return (f"Zoom(box={self.box} original px, scale={self.scale:g}x, image {self.image.width}x{self.image.height}; "
                f"grid labels are original pixel coordinates)")


def _tick_step(scale: float, min_spacing_px: float = 48.0) -> int:
    for step in _NICE_STEPS:
        if step * scale >= min_spacing_px:
            return step
    return _NICE_STEPS[-1]


def zoom(frame: Any, box: Any, scale: float | None = None, grid: bool = True, pad: int = 0,
         target_px: int = 768) -> Zoom:
    """Crop ``box`` from ``frame`` and upscale it (nearest neighbour), with a labelled pixel grid.

    Args:
        frame: the image (Frame, PIL image or (H, W, 3) array).
        box: (x0, y0, x1, y1) original pixels, or an object with ``.box`` (a detection ``Instance``);
            columns x0..x1-1 and rows y0..y1-1 are kept (rounded to integers and clipped to the image).
        scale: output pixels per original pixel; default the largest integer keeping the longer side
            within ``target_px`` (at least 1, at most 32).
        grid: draw grid lines and tick labels in the original image's pixel coordinates.
        pad: grow the box by this many pixels on every side (context around a detection).

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
    crop = array[cy0:cy1, cx0:cx1]
    crop_h, crop_w = crop.shape[:2]
    if scale is None:
        scale = float(min(32, max(1, target_px // max(crop_w, crop_h))))
    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    out_w, out_h = max(1, int(round(crop_w * scale))), max(1, int(round(crop_h * scale)))
    upscaled = Image.fromarray(crop).resize((out_w, out_h), Image.NEAREST)
    if not grid:
        return Zoom(upscaled, (cx0, cy0, cx1, cy1), float(scale), (0, 0), [], [])
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
    return Zoom(canvas, (cx0, cy0, cx1, cy1), float(scale), (left, top), x_ticks, y_ticks)


# ---- draw ----------------------------------------------------------------------------------------
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
    width: int = 2,
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
        width: line width in pixels.
    """
    base = as_pil(frame).copy()
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
    font = _font(max(12, base.width // 60))
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
        pen.rectangle([left - 2, top - 2, right + 2, bottom + 2], fill=(0, 0, 0))
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
# OpenCV HSV: hue 0..179 (degrees / 2), saturation and value 0..255. (centre hue, half-width).
NAMED_COLORS: dict[str, tuple[int, int]] = {
    "red": (0, 9), "orange": (15, 6), "yellow": (28, 7), "green": (60, 24), "cyan": (92, 8),
    "blue": (112, 12), "purple": (138, 13), "magenta": (160, 9), "pink": (165, 10),
}
_ACHROMATIC = {"white": (0, 45, 190, 255), "black": (0, 255, 0, 55), "gray": (0, 45, 56, 189), "grey": (0, 45, 56, 189)}


@dataclass(frozen=True)
class Blob:
    """One connected region of the colour.

    Attributes:
        centroid: (x, y) pixels (mean of the region's pixel centres).
        area: pixel count (px^2).
        box: (x0, y0, x1, y1) pixels: columns x0..x1-1 and rows y0..y1-1.
        mask: (H, W) bool region.
        mean_rgb: (3,) mean colour of the region, 0..255.
    """

    centroid: tuple[float, float]
    area: int
    box: tuple[int, int, int, int]
    mask: np.ndarray = field(repr=False)
    mean_rgb: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __repr__(self) -> str:
        return (f"Blob(centroid=({self.centroid[0]:.1f}, {self.centroid[1]:.1f}) px, area={self.area} px^2, "
                f"box={self.box})")


class ColorBlobs(list):
    """Blobs of one colour, largest first (a list of ``Blob``), with the colour mask that produced them."""

    def __init__(self, blobs: Sequence[Blob], color: str, mask: np.ndarray) -> None:
        super().__init__(blobs)
        self.color = color
        self.mask = mask

    def __repr__(self) -> str:
        if not self:
            return f"ColorBlobs(no {self.color} blobs found)"
        lines = [f"{len(self)} {self.color} blob{'s' if len(self) != 1 else ''}, largest first:"]
        lines += [f"  [{i}] {blob!r}" for i, blob in enumerate(self)]
        return "\n".join(lines)


def _color_mask(hsv: np.ndarray, color: Any, hue_tolerance: int | None, min_saturation: int,
                min_value: int) -> tuple[np.ndarray, str]:
    hue, sat, val = (hsv[..., i].astype(np.int32) for i in range(3))
    if isinstance(color, str):
        name = color.lower().strip()
        if name in _ACHROMATIC:
            s_lo, s_hi, v_lo, v_hi = _ACHROMATIC[name]
            return (sat >= s_lo) & (sat <= s_hi) & (val >= v_lo) & (val <= v_hi), name
        if name not in NAMED_COLORS:
            known = sorted(NAMED_COLORS) + sorted(_ACHROMATIC)
            raise ValueError(f"unknown colour {color!r}; use one of {known} or an (r, g, b) tuple")
        centre, half = NAMED_COLORS[name]
        if name == "pink":
            min_saturation = min(min_saturation, 40)
        label = name
    else:
        import cv2

        rgb = np.asarray(color, dtype=np.float64).ravel()
        if rgb.shape != (3,) or (rgb < 0).any() or (rgb > 255).any():
            raise ValueError(f"color must be a name or an (r, g, b) tuple with values 0..255, got {color!r}")
        target = cv2.cvtColor(rgb.astype(np.uint8).reshape(1, 1, 3), cv2.COLOR_RGB2HSV)[0, 0].astype(int)
        label = f"rgb{tuple(int(v) for v in rgb)}"
        if target[1] < 45:
            v_lo, v_hi = max(0, target[2] - 40), min(255, target[2] + 40)
            return (sat < 45) & (val >= v_lo) & (val <= v_hi), label
        centre, half = int(target[0]), 10
        min_saturation = min(min_saturation, int(target[1] * 0.6))
        min_value = min(min_value, int(target[2] * 0.6))
    if hue_tolerance is not None:
        half = int(hue_tolerance)
    difference = np.abs(hue - centre)
    difference = np.minimum(difference, 180 - difference)
    return (difference <= half) & (sat >= min_saturation) & (val >= min_value), label


def find_color(
    frame: Any,
    color: str | tuple[int, int, int] = "red",
    min_area: int = 20,
    hue_tolerance: int | None = None,
    min_saturation: int = 80,
    min_value: int = 60,
    max_blobs: int = 50,
) -> ColorBlobs:
    """Find regions of a colour with classical HSV thresholds and connected components (no model needed).

    Args:
        frame: the image (Frame, PIL image or (H, W, 3) RGB array).
        color: a name ("red", "orange", "yellow", "green", "cyan", "blue", "purple", "magenta", "pink",
            "white", "black", "gray") or an (r, g, b) tuple 0..255 (matched by hue +- 10 of 180, or by
            brightness for greys).
        min_area: smaller regions (pixels) are dropped.
        hue_tolerance: override the hue half-width (OpenCV hue units, 0..179 = 0..358 degrees).
        min_saturation, min_value: HSV floors (0..255) for chromatic colours.
        max_blobs: keep at most this many, largest first.

    Returns:
        ``ColorBlobs``: a list of ``Blob`` (centroid (x, y) px, area px^2, box, mask, mean_rgb) sorted by
        decreasing area, 8-connected; ``.mask`` holds the full colour mask.
    """
    import cv2

    array = as_rgb_array(frame)
    hsv = cv2.cvtColor(array, cv2.COLOR_RGB2HSV)
    mask, label = _color_mask(hsv, color, hue_tolerance, min_saturation, min_value)
    count, components, stats, centroids = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    order = [i for i in np.argsort(-stats[1:, cv2.CC_STAT_AREA]) + 1 if stats[i, cv2.CC_STAT_AREA] >= min_area]
    blobs = []
    for i in order[:max_blobs]:
        region = components == i
        x, y, w, h, area = (int(v) for v in stats[i])
        blobs.append(Blob(
            centroid=(float(centroids[i][0]), float(centroids[i][1])), area=area, box=(x, y, x + w, y + h),
            mask=region, mean_rgb=tuple(float(v) for v in array[region].mean(axis=0)),
        ))
    return ColorBlobs(blobs, label, mask)
