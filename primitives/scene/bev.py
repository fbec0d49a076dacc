"""Bird's-eye view of the scene memory: a top-down matplotlib drawing of the world XY plane (metres).

+Y up the page, +X to the right, +Z out of the page. Instances measured in 3D are drawn as points with
their upright box footprint; instances located from bearings as a cross with their 2-sigma uncertainty
ellipse and the rays of the cameras that saw them; cameras as dots with an arrow along their forward
direction on the ground.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from PIL import Image

from spatialclaw.primitives.geometry import geom
from spatialclaw.primitives.scene.objects import SceneObject

__all__ = ["draw_bev", "figure_colour", "object_colour"]


def draw_bev(
    instances: dict[str, SceneObject], cameras: dict[int, np.ndarray], size_px: int, max_points: int, title: str | None
) -> Image.Image:
    """The image of ``Scene.bev``: ``instances`` and ``cameras`` (frame index -> (4, 4) camera-to-world pose)
    drawn top-down, about ``size_px`` pixels across, at most ``max_points`` points per instance."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from PIL import Image

    if not instances and not cameras:
        raise ValueError("nothing to draw: the scene has no instances and no cameras")
    dpi = 100
    figure = Figure(figsize=(size_px / dpi, size_px / dpi), dpi=dpi)
    FigureCanvasAgg(figure)
    ax = figure.add_subplot(1, 1, 1)
    colours = [object_colour(name, i) for i, name in enumerate(instances)]
    rng = np.random.default_rng(0)
    spans = []
    for colour, instance in zip(colours, instances.values(), strict=True):
        if instance.covariance is not None:
            spans.append(_draw_bearing_object(ax, instance, colour))
            continue
        pts = instance.points
        if len(pts) > max_points:
            pts = pts[rng.choice(len(pts), max_points, replace=False)]
        ax.scatter(pts[:, 0], pts[:, 1], s=2, color=colour, alpha=0.35, linewidths=0)
        footprint = np.vstack([instance.box.footprint, instance.box.footprint[:1]])
        ax.plot(footprint[:, 0], footprint[:, 1], color=colour, linewidth=1.5)
        c = instance.center
        ax.annotate(
            instance.name,
            (c[0], c[1]),
            ha="center",
            va="center",
            fontsize=9,
            weight="bold",
            bbox=dict(boxstyle="round,pad=0.2", fc="white", ec=colour, alpha=0.85),
        )
        spans.append(instance.extent[:, :2])
    arrow = 0.3
    if spans or cameras:
        allxy = np.vstack(spans + [p[:3, 3][None, :2] for p in cameras.values()])
        arrow = max(0.1, 0.08 * float(np.max(np.ptp(allxy, axis=0))) if len(allxy) > 1 else 0.3)
    groups: list[tuple[np.ndarray, list[int]]] = []  # cameras closer than half an arrow share a label
    for index, pose in sorted(cameras.items()):
        _, forward, _ = geom.observer_axes(pose)
        x, y = pose[0, 3], pose[1, 3]
        ax.plot([x], [y], marker="o", color="black", markersize=5)
        ax.arrow(
            x, y, forward[0] * arrow, forward[1] * arrow, color="black", width=arrow * 0.04, length_includes_head=True
        )
        near = next((g for g in groups if np.hypot(*(g[0] - (x, y))) < arrow / 2), None)
        if near is None:
            groups.append((np.array([x, y]), [index]))
        else:
            near[1].append(index)
    for (x, y), indices in groups:
        text = f"cam {indices[0]}" if len(indices) == 1 else "cams " + ", ".join(map(str, indices))
        if len(indices) > 6:
            text = f"cams {indices[0]}..{indices[-1]} ({len(indices)})"
        ax.annotate(text, (x, y), textcoords="offset points", xytext=(4, -10), fontsize=8)
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("X (m)")
    ax.set_ylabel("Y (m)")
    ax.grid(True, alpha=0.3)
    ax.set_title(title or "Bird's-eye view: world XY, +Z up (out of the page)")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    buffer.seek(0)
    return Image.open(buffer).convert("RGB")


def _draw_bearing_object(ax: Any, instance: SceneObject, colour: Any) -> np.ndarray:
    """Cross, 2-sigma ellipse (chi-square 95% for 2 dof: 2.45 sigma) and rays; returns its (2, 2) XY span."""
    from matplotlib.patches import Ellipse

    c = instance.center
    cov = np.asarray(instance.covariance)[:2, :2]
    values, vectors = np.linalg.eigh(cov)
    values = np.clip(values, 0, None)
    k = float(np.sqrt(5.991))
    width, height = 2 * k * np.sqrt(values[1]), 2 * k * np.sqrt(values[0])
    angle = float(np.degrees(np.arctan2(vectors[1, 1], vectors[0, 1])))
    ax.add_patch(Ellipse((c[0], c[1]), width, height, angle=angle, fill=True, alpha=0.18, color=colour))
    ax.add_patch(Ellipse((c[0], c[1]), width, height, angle=angle, fill=False, linewidth=1.5, color=colour))
    ax.plot([c[0]], [c[1]], marker="+", markersize=10, color=colour, markeredgewidth=2)
    for bearing in instance.bearings:
        o = bearing.origin
        ax.plot([o[0], c[0]], [o[1], c[1]], linestyle="--", linewidth=0.8, color=colour, alpha=0.7)
    ax.annotate(
        instance.name,
        (c[0], c[1]),
        textcoords="offset points",
        xytext=(6, 6),
        fontsize=9,
        weight="bold",
        bbox=dict(boxstyle="round,pad=0.2", fc="white", ec=colour, alpha=0.85),
    )
    half = k * np.sqrt(np.clip(np.diag(cov), 0, None))
    return np.array([c[:2] - half, c[:2] + half])


def figure_colour(i: int) -> tuple[float, float, float]:
    """The i-th colour of matplotlib's tab10 cycle as an RGB tuple in [0, 1]."""
    from matplotlib import colormaps

    red, green, blue = colormaps["tab10"](i % 10)[:3]
    return float(red), float(green), float(blue)


def object_colour(name: str, i: int) -> tuple[float, float, float]:
    """How the bird's-eye view draws object ``name`` (the i-th): in the colour its name says when it says
    one ("red", "blue dot", "green_marker"), else the i-th figure colour, so a "blue" object is never
    drawn orange."""
    from matplotlib.colors import to_rgb

    for word in str(name).lower().replace("_", " ").replace("-", " ").split():
        if word in _NAMED_COLOURS:
            return to_rgb(word)
    return figure_colour(i)


_NAMED_COLOURS = {
    "red",
    "green",
    "blue",
    "yellow",
    "orange",
    "purple",
    "pink",
    "brown",
    "black",
    "white",
    "gray",
    "grey",
    "cyan",
    "magenta",
}
