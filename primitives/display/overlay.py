"""Drawing on images: labelled points, boxes, masks, lines and polygons (``draw``), and contact sheets.

All coordinates are pixels (x, y) of the image, origin top-left, integer coordinates at pixel centres.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from spatialclaw.primitives.display.color_names import contrasting, label_rgb
from spatialclaw.primitives.display.draw_items import KINDS, apply_labels, assign_colours, parse_items
from spatialclaw.primitives.imaging import as_pil

__all__ = ["contact_sheet", "draw", "label_font", "overlay_sizes"]


def label_font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def overlay_sizes(width: int, height: int) -> tuple[int, int]:
    """(line width px, label font px) that suit a ``width`` x ``height`` image: both grow with the image's
    geometric-mean side (1 px / 8 px on a 200x150 frame, 2 px / 14 px at 640x480, 12 px / 80 px at 4000x3000)."""
    side = float(np.sqrt(max(1, width) * max(1, height)))
    return int(np.clip(round(side / 300), 1, 24)), int(np.clip(round(side / 40), 8, 80))


def draw(
    frame: Any,
    points: Any = None,
    boxes: Any = None,
    masks: Any = None,
    lines: Any = None,
    polygons: Any = None,
    labels: Sequence[str] | str | None = None,
    width: int | None = None,
    font_px: int | None = None,
) -> Image.Image:
    """Overlay points, boxes, masks, lines, polygons (each one item, a list or {label: item(s)}) on an image.

    Returns a new PIL RGB image (the input is not changed).

    Every kind takes the same forms: one item, a list of items, or a dict {label: item} whose value may
    also be a list of items (all drawn under that label), e.g. ``draw(frame, points={"cup": (40, 30)},
    lines={"edge": [(0, 0, 50, 50), (50, 50, 90, 20)]}, polygons={"sheet": plane.quad})``. A label that is
    (or starts with) a colour name ("red", "blue cup", "light green"; the names ``find_color`` knows) is
    drawn in that colour, with a contrasting outline; other labels get distinct colours, one per label.

    Args:
        frame: the image (Frame, PIL image or (H, W, 3) array).
        points: (x, y) or (N, 2) pixels; ``Blob``s (their centroid).
        boxes: (x0, y0, x1, y1) or (N, 4) pixels; detections (``Detections`` or ``Instance``: their
            ``.box`` and ``.label`` are used) or ``Blob``s.
        masks: an (H, W) bool mask, (N, H, W), or objects with ``.mask`` (instances, blobs).
        lines: segments (x0, y0, x1, y1) or ((x0, y0), (x1, y1)) pixels; (N, 4) or (N, 2, 2) for several.
        polygons: (K, 2) corners (x, y) pixels, K >= 3, drawn closed: e.g. a plane reference's ``.quad``
            (``geom.find_plane_reference`` / ``geom.rectify_plane``; the result itself works too).
        labels: one text per item given without a dict, in the order points, boxes, masks, lines,
            polygons (several kinds at once are fine); dict keys label the others.
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
    given = dict(zip(KINDS, (points, boxes, masks, lines, polygons), strict=True))
    groups = {kind: parse_items(kind, value) for kind, value in given.items()}
    apply_labels(groups, given, labels)
    colours = assign_colours(groups)
    texts: list[tuple[tuple[float, float], str, tuple[int, int, int]]] = []
    for (mask, label), colour in zip(groups["masks"], colours["masks"], strict=True):
        if mask.shape != (base.height, base.width):
            raise ValueError(f"mask shape {mask.shape} does not match the {base.width}x{base.height} image (H, W)")
        alpha = Image.fromarray((mask * 110).astype(np.uint8))
        base.paste(Image.new("RGB", base.size, colour), (0, 0), alpha)
        if label and mask.any():
            ys, xs = np.nonzero(mask)
            texts.append(((float(xs.mean()), float(ys.mean())), label, colour))
    pen = ImageDraw.Draw(base)

    def stroke(path: list[tuple[float, float]], colour: tuple[int, int, int], label: str | None) -> None:
        if label_rgb(label) is not None:  # a named colour may match the background: outline it
            pen.line(path, fill=contrasting(colour), width=width + 2, joint="curve")
        pen.line(path, fill=colour, width=width, joint="curve")

    for (quad, label), colour in zip(groups["polygons"], colours["polygons"], strict=True):
        corners = [(float(x), float(y)) for x, y in quad]
        stroke([*corners, corners[0]], colour, label)
        if label:
            highest = int(np.argmin(quad[:, 1]))
            texts.append(((corners[highest][0], corners[highest][1] - 2), label, colour))
    for (box, label), colour in zip(groups["boxes"], colours["boxes"], strict=True):
        x0, y0, x1, y1 = (float(v) for v in box)
        x0, y0, x1, y1 = min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)
        if label_rgb(label) is not None:
            pen.rectangle([x0 - 1, y0 - 1, x1 + 1, y1 + 1], outline=contrasting(colour), width=width + 2)
        pen.rectangle([x0, y0, x1, y1], outline=colour, width=width)
        if label:
            texts.append(((x0, y0 - 2), label, colour))
    for (line, label), colour in zip(groups["lines"], colours["lines"], strict=True):
        x0, y0, x1, y1 = (float(v) for v in line)
        stroke([(x0, y0), (x1, y1)], colour, label)
        if label:
            texts.append((((x0 + x1) / 2, (y0 + y1) / 2), label, colour))
    radius = max(3, width * 2)
    for (point, label), colour in zip(groups["points"], colours["points"], strict=True):
        x, y = (float(v) for v in point)
        pen.ellipse([x - radius, y - radius, x + radius, y + radius], fill=colour, outline=contrasting(colour))
        if label:
            texts.append(((x + radius + 2, y - radius - 2), label, colour))
    font = label_font(font_px)
    text_pad = max(1, font_px // 7)
    for (x, y), label, colour in texts:
        left, top, right, bottom = pen.textbbox((x, y), label, font=font, anchor="lb")
        pen.rectangle([left - text_pad, top - text_pad, right + text_pad, bottom + text_pad], fill=contrasting(colour))
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
