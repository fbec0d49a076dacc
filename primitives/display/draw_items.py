"""Reading ``draw``'s arguments and choosing its colours.

Every kind (points, boxes, masks, lines, polygons) takes the same forms: one item, a list of items, result
objects that carry the geometry (detections, colour blobs, plane references), or a dict {label: item} whose
value may itself be a list of items. A label that names a colour is drawn in that colour; the others get
distinct palette colours, one per label. Coordinates are pixels (x, y), origin top-left.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from spatialclaw.primitives.display.color_names import label_rgb

__all__ = ["KINDS", "PALETTE", "Item", "apply_labels", "assign_colours", "parse_items"]

KINDS = ("points", "boxes", "masks", "lines", "polygons")
"""The kinds ``draw`` takes, in the order ``labels=`` is applied to them."""

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

Item = tuple[np.ndarray, str | None]
"""One thing to draw: its geometry (pixels, or an (H, W) bool mask) and its label."""

_SHAPES = {
    "points": "(x, y) or (N, 2)",
    "boxes": "(x0, y0, x1, y1) or (N, 4)",
    "masks": "(H, W) bool or (N, H, W)",
    "lines": "(x0, y0, x1, y1), ((x0, y0), (x1, y1)), (N, 4) or (N, 2, 2)",
    "polygons": "(K, 2) corners (x, y) with K >= 3, or a list of them",
}
_EXAMPLES = {
    "points": 'points={"cup": (40, 30), "corners": [(5, 5), (90, 5)]}',
    "boxes": 'boxes={"table": (10, 50, 120, 90)}',
    "masks": 'masks={"rug": mask}',
    "lines": 'lines={"edge": [(0, 0, 50, 50), (50, 50, 90, 20)]}',
    "polygons": 'polygons={"sheet": plane.quad}',
}
# the attribute of a result object that holds each kind's geometry (a Blob, an Instance, a Rectified plane)
_ATTRIBUTES = {"points": ("centroid",), "boxes": ("box",), "masks": ("mask",), "polygons": ("quad",)}


def _bad(kind: str, what: str) -> ValueError:
    return ValueError(
        f"{kind} must be {_SHAPES[kind]} pixels, a list of them, or a dict {{label: item or list of items}}; "
        f"got {what}. Example: draw(frame, {_EXAMPLES[kind]})"
    )


def _from_object(kind: str, value: Any) -> Item | None:
    """The geometry a result object carries for ``kind`` (with its ``.label``), or None for plain data."""
    if isinstance(value, (np.ndarray, list, tuple, str, bytes)):
        return None
    for attribute in _ATTRIBUTES.get(kind, ()):
        if not hasattr(value, attribute):
            continue
        geometry = getattr(value, attribute)
        label = getattr(value, "label", None)
        if geometry is None:
            raise ValueError(
                f"{kind}: {type(value).__name__}{f' {label!r}' if label else ''} has no .{attribute}"
                + (" (a box-only detection: draw it with boxes=)" if kind == "masks" else "")
            )
        array = np.asarray(geometry).astype(bool) if kind == "masks" else np.asarray(geometry, dtype=np.float64)
        return array, None if label is None else str(label)
    return None


def _split(kind: str, array: np.ndarray) -> list[np.ndarray] | None:
    """The items in an array of ``kind``, or None when its shape is not one of the kind's forms."""
    shape = array.shape
    if kind == "masks":
        array = array.astype(bool)
        return [array] if array.ndim == 2 else list(array) if array.ndim == 3 else None
    array = array.astype(np.float64)
    if kind == "points":
        return [array] if shape == (2,) else list(array) if array.ndim == 2 and shape[1] == 2 else None
    if kind == "boxes":
        return [array] if shape == (4,) else list(array) if array.ndim == 2 and shape[1] == 4 else None
    if kind == "lines":
        if shape in ((4,), (2, 2)):
            return [array.reshape(4)]
        if array.ndim == 2 and shape[1] == 4:
            return list(array)
        return list(array.reshape(-1, 4)) if array.ndim == 3 and shape[1:] == (2, 2) else None
    if array.ndim == 2 and shape[1] == 2:
        if shape[0] < 3:
            raise ValueError(f"a polygon needs at least 3 corners (x, y), got {shape[0]}")
        return [array]
    return list(array) if array.ndim == 3 and shape[2] == 2 and shape[1] >= 3 else None


def parse_items(kind: str, value: Any) -> list[Item]:
    """The items of one ``draw`` argument: (geometry, label) pairs, in the order given.

    ``value`` is None, one item, a list of items (also of result objects), or a dict {label: item or list
    of items} (the key labels every item under it). Raises ``ValueError`` naming the accepted forms, with
    an example, for anything else.
    """
    if value is None:
        return []
    if isinstance(value, Mapping):
        items: list[Item] = []
        for key, inner in value.items():
            if isinstance(inner, Mapping):
                raise _bad(kind, f"a dict inside the dict (under {key!r})")
            items.extend((geometry, str(key)) for geometry, _ in parse_items(kind, inner))
        return items
    found = _from_object(kind, value)
    if found is not None:
        return [found]
    if isinstance(value, (str, bytes)):
        raise _bad(kind, f"the text {value!r} (labels go in a dict key or labels=)")
    try:
        array = np.asarray(value)
    except (ValueError, TypeError):  # a ragged list: items of different sizes
        array = None
    if array is not None and array.size == 0:
        return []
    if array is not None and (array.dtype.kind in "biuf"):
        split = _split(kind, array)
        if split is None:
            raise _bad(kind, f"an array of shape {array.shape}")
        return [(geometry, None) for geometry in split]
    if not isinstance(value, (Sequence, np.ndarray)) and not hasattr(value, "__iter__"):
        raise _bad(kind, f"a {type(value).__name__}")
    items = []
    for element in value:
        items.extend(parse_items(kind, element))
    return items


def apply_labels(groups: dict[str, list[Item]], given: Mapping[str, Any], labels: Sequence[str] | str | None) -> None:
    """Give ``labels`` (one per item) to the items of the kinds not given as dicts, in :data:`KINDS` order;
    a count that does not match raises ``ValueError`` with the counts and a call that works."""
    if labels is None:
        return
    texts = [labels] if isinstance(labels, str) else [str(label) for label in labels]
    targets = [kind for kind in KINDS if given.get(kind) is not None and not isinstance(given[kind], Mapping)]
    count = sum(len(groups[kind]) for kind in targets)
    if len(texts) != count:
        counted = ", ".join(f"{len(groups[kind])} {kind}" for kind in targets) or "none: the dicts' keys label them"
        raise ValueError(
            f"got {len(texts)} labels for {count} items given without a dict ({counted}); labels= takes one "
            f"text per item, in the order {', '.join(KINDS)}. Or label each item by a dict key, e.g. "
            'draw(frame, points={"cup": (40, 30)}, boxes={"table": (10, 50, 120, 90)})'
        )
    position = 0
    for kind in targets:
        groups[kind] = [(geometry, texts[position + i]) for i, (geometry, _) in enumerate(groups[kind])]
        position += len(groups[kind])


def _far_from(colour: tuple[int, int, int], taken: list[tuple[int, int, int]]) -> bool:
    return all(sum((a - b) ** 2 for a, b in zip(colour, other, strict=True)) >= 100**2 for other in taken)


def assign_colours(groups: Mapping[str, list[Item]]) -> dict[str, list[tuple[int, int, int]]]:
    """One RGB per item of each kind: a label's colour name gives that colour; every other label gets a
    palette colour of its own (the same for all its items) and every unlabelled item the next one; palette
    colours close to a named colour in use are skipped, so "cup" is never drawn in the blue of "blue"."""
    named = [rgb for items in groups.values() for _, label in items if (rgb := label_rgb(label)) is not None]
    palette = [colour for colour in PALETTE if _far_from(colour, named)] or PALETTE
    by_label: dict[str, tuple[int, int, int]] = {}
    colours: dict[str, list[tuple[int, int, int]]] = {}
    turn = 0
    for kind in ("masks", "polygons", "boxes", "lines", "points"):
        colours[kind] = []
        for _, label in groups.get(kind, []):
            rgb = label_rgb(label) or (by_label.get(label) if label else None)
            if rgb is None:
                rgb = palette[turn % len(palette)]
                turn += 1
                if label:
                    by_label[label] = rgb
            colours[kind].append(rgb)
    return colours
