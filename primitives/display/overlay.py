"""Drawing on images: labelled points, boxes, masks and lines (``draw``), and contact sheets of several images.

All coordinates are pixels (x, y) of the image, origin top-left, integer coordinates at pixel centres.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from spatialclaw.primitives.imaging import as_pil

__all__ = ["contact_sheet", "draw", "label_font", "overlay_sizes"]

PALETTE = [
    (255, 64, 64),
    (64, 160, 255),
    (64, 220, 64),
    (255, 200, 0),
    (220, 64, 255),
    (0, 220, 220),
    (255, 128, 0),
    (255, 255, 255),
]


def label_font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


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
            shapes = {
                "points": "(N, 2) (x, y)",
                "boxes": "(N, 4) (x0, y0, x1, y1)",
                "lines": "(N, 4) (x0, y0, x1, y1) or (N, 2, 2)",
            }
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
    groups = {
        kind: _named_items(value, kind)
        for kind, value in (("masks", masks), ("boxes", boxes), ("lines", lines), ("points", points))
    }
    if labels is not None:
        given = [
            kind
            for kind, value in (("points", points), ("boxes", boxes), ("masks", masks), ("lines", lines))
            if value is not None
        ]
        if len(given) != 1:
            raise ValueError(
                "labels= applies when exactly one of points/boxes/masks/lines is given; "
                "to label several kinds, pass each as a dict {label: geometry}"
            )
        items = groups[given[0]]
        if len(labels) != len(items):
            raise ValueError(f"got {len(labels)} labels for {len(items)} {given[0]}")
        groups[given[0]] = [(geometry, str(label)) for (geometry, _), label in zip(items, labels, strict=True)]
    for colour_index, (mask, _) in enumerate(groups["masks"]):
        if mask.shape != (base.height, base.width):
            raise ValueError(f"mask shape {mask.shape} does not match the {base.width}x{base.height} image (H, W)")
        colour = PALETTE[colour_index % len(PALETTE)]
        tint = Image.new("RGB", base.size, colour)
        alpha = Image.fromarray((mask.astype(bool) * 110).astype(np.uint8))
        base.paste(tint, (0, 0), alpha)
    pen = ImageDraw.Draw(base)
    font = label_font(font_px)
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


def contact_sheet(
    crops: Sequence[Any], labels: Sequence[str] | None = None, columns: int | None = None, cell_px: int = 256
) -> Image.Image:
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
    font = label_font(14)
    for i, crop in enumerate(crops):
        image = as_pil(getattr(crop, "image", crop) if isinstance(getattr(crop, "image", None), Image.Image) else crop)
        image = image.copy()
        image.thumbnail(
            (cell_px, cell_px), Image.Resampling.LANCZOS if max(image.size) > cell_px else Image.Resampling.NEAREST
        )
        if max(image.size) < cell_px:
            factor = cell_px / max(image.size)
            image = image.resize(
                (max(1, int(image.width * factor)), max(1, int(image.height * factor))), Image.Resampling.NEAREST
            )
        col, row = i % columns, i // columns
        x = pad + col * (cell_px + pad)
        y = pad + row * (cell_px + caption + pad)
        sheet.paste(image, (x + (cell_px - image.width) // 2, y + (cell_px - image.height) // 2))
        if labels is not None:
            pen.text(
                (x + cell_px // 2, y + cell_px + caption // 2),
                str(labels[i]),
                fill=(255, 255, 255),
                font=font,
                anchor="mm",
            )
    return sheet
