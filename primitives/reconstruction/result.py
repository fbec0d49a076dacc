"""Reconstruction result types and readouts: ``Reconstruction`` (poses, intrinsics, depth, world points,
``bev()``, ``orbit()``), ``FrameStatus`` (how each frame fared), ``ReconstructionError``, and the per-frame
status and the advice that ``reconstruct`` reports.

World frame (DESIGN.md): metres, right-handed, gravity-aligned +Z up (floor plane by RANSAC, else the first
camera's up), origin at the first registered camera, +Y its forward projected on the ground, +X its right.
Poses are camera-to-world (4, 4), OpenCV camera axes (x right, y down, z forward).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import numpy as np

from spatialclaw.primitives.reconstruction.focal import FocalReport, focal_report
from spatialclaw.primitives.reconstruction.orbit import Orbit, orbit_readout

if TYPE_CHECKING:
    from PIL import Image

    from spatialclaw.primitives.motion.result import CameraStep
    from spatialclaw.primitives.reconstruction.sfm import SfmResult

__all__ = ["FrameStatus", "Reconstruction", "ReconstructionError"]


class ReconstructionError(RuntimeError):
    """Not enough of the frames could be registered to build a reconstruction."""


@dataclass
class FrameStatus:
    """How one frame fared. frame: absolute index; status: "reference" (defines the world), "registered"
    (full pose), "rotation-only" (orientation; centre fixed at the reference's: the camera only turned) or
    "unregistered"; inliers: matches / 3D points supporting its pose; confidence in [0, 1] (inliers and
    their agreement; 1 for the reference); reason: plain words."""

    frame: int
    status: str
    inliers: int
    confidence: float
    reason: str

    def __str__(self) -> str:
        return f"frame {self.frame}: {self.status} ({self.inliers} inliers, confidence {self.confidence:.2f}; {self.reason})"


@dataclass
class Reconstruction:
    """Cameras and 3D points of a set of frames in the design world frame (metres when ``metric``).

    Attributes:
        poses: (N, 4, 4) camera-to-world, in the order of the input frames; NaN rows for frames that
            could not be registered (see ``registered``).
        intrinsics: (N, 3, 3) pixel intrinsics per frame (NaN where unknown).
        depth: per frame an (H, W) float32 depth map in metres (NaN = none), or None when no depth is known.
        points: (M, 3) world points (metres when ``metric``); dense from the depth maps when there are any,
            else the sparse SfM points.
        colors: (M, 3) uint8 RGB of each point.
        confidence: (M,) in [0, 1] per point (depth-edge heuristic for dense points; reprojection error and
            track length for sparse ones).
        point_frames: (M,) absolute index of the frame a dense point came from; -1 for triangulated points.
        frame_indices: (N,) absolute frame indices.
        registered: (N,) bool, which frames got a pose.
        metric: True when distances are in metres.
        scale_source: where the scale came from ("rgbd sensor depth", "given depth maps", "depth model X",
            or "none: arbitrary units ...").
        method: "rgbd", "sfm", "two-view" (essential matrix), "rotation" (a turning camera: homography
            chain, centres at the origin), "single-frame" or "learned" (a multi-view model, e.g. DA3).
        notes: plain-language remarks (unregistered frames, fallbacks, where the focal length came from).
        frame_status: one ``FrameStatus`` per frame (status, inliers, confidence, reason).
        backend: which backend answered: the multi-view model (method "learned", e.g. "da3 (model id)"), else
            "classical <method>" plus the depth model that set the scale ("+ depth model X").
        focal: ``FocalReport``: the focal lengths, whether they were given, estimated or ASSUMED (then angles
            are not measurements), plausibility warnings, and for two views how the angle scales with them.
        rotation_sd_deg: (N, N) standard deviation in degrees of the relative rotation of two frames (SfM's
            bundle-adjustment covariance; NaN where unknown), or None.

    ``rec.orbit()``: the angles a camera travels around an object (viewing directions, swept angle, left/right).
    """

    poses: np.ndarray
    intrinsics: np.ndarray
    depth: list[np.ndarray | None]
    points: np.ndarray
    colors: np.ndarray
    confidence: np.ndarray
    point_frames: np.ndarray
    frame_indices: np.ndarray
    registered: np.ndarray
    metric: bool
    scale_source: str
    method: str
    notes: list[str] = field(default_factory=list)
    frame_status: list[FrameStatus] = field(default_factory=list)
    backend: str = ""
    focal: FocalReport | None = None
    rotation_sd_deg: np.ndarray | None = None

    def __post_init__(self) -> None:
        if not self.backend:
            learned_depth = self.scale_source.startswith("depth model")
            self.backend = f"classical {self.method}" + (f" + {self.scale_source}" if learned_depth else "")

    def _position(self, frame_index: int) -> int:
        matches = np.flatnonzero(self.frame_indices == frame_index)
        if len(matches) == 0:
            raise KeyError(
                f"frame {frame_index} is not in this reconstruction; its frames are {self.frame_indices.tolist()}"
            )
        position = int(matches[0])
        if not self.registered[position]:
            raise KeyError(
                f"frame {frame_index} could not be registered (no pose); registered frames: "
                f"{self.frame_indices[self.registered].tolist()}"
            )
        return position

    def pose(self, frame_index: int) -> np.ndarray:
        """(4, 4) camera-to-world pose of the frame with this ABSOLUTE index."""
        return cast(np.ndarray, self.poses[self._position(frame_index)])

    def camera_center(self, frame_index: int) -> np.ndarray:
        """(3,) world position of the camera of the frame with this absolute index (metres when metric)."""
        return self.pose(frame_index)[:3, 3].copy()

    @property
    def unregistered(self) -> list[int]:
        """Absolute indices of the frames without a pose."""
        return cast(list[int], self.frame_indices[~self.registered].tolist())

    def __repr__(self) -> str:
        unit = "m" if self.metric else "units"
        centres = self.poses[self.registered][:, :3, 3]
        span = float(np.linalg.norm(centres.max(axis=0) - centres.min(axis=0))) if len(centres) else 0.0
        text = (
            f"Reconstruction({self.registered.sum()}/{len(self.registered)} frames registered, method={self.method}, "
            f"{len(self.points)} points, camera span {span:.3g} {unit}, metric={self.metric} ({self.scale_source}), "
            f"backend={self.backend}"
        )
        if self.unregistered:
            text += f", unregistered frames {self.unregistered}"
        lines = [text + ")"] + [f"  {status}" for status in self.frame_status]
        lines += [f"  {self.focal}"] if self.focal is not None else []
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def orbit(self) -> Orbit:
        """How the camera travelled around what it looks at, from the registered poses (``print(rec.orbit())``):
        the angle between consecutive viewing directions and between the first and last; the angle swept around
        the scene's centre (steps summed: can exceed 180); travel left/right in each camera's own frame and the
        way it turned; the way round (``.direction``: "clockwise" / "counterclockwise seen from above", or why
        it cannot be told); each with a stated uncertainty (degrees). Names unregistered frames (steps measured
        across them), extrapolates over unregistered end frames at the measured rate (labelled, not a
        measurement), and marks angles that rest on an ASSUMED focal length (two views), with the angle at other
        fields of view. Returns ``Orbit`` (``.first_to_last_deg``, ``.swept_deg``, ``.travel``, ``.direction``, ``.steps``)."""
        focal = self.focal or focal_report(
            "unknown",
            "not recorded with this reconstruction",
            self.intrinsics,
            [int(round(2 * (K[0, 2] + 0.5))) if np.isfinite(K).all() else 1 for K in self.intrinsics],
            self.registered,
            self.frame_indices.tolist(),
        )
        inliers = [s.inliers for s in self.frame_status] if len(self.frame_status) == len(self.registered) else None
        return orbit_readout(
            self.poses, self.registered, self.frame_indices, self.method, focal, self.rotation_sd_deg, inliers
        )

    def bev(self, size: int = 640, max_points: int = 50_000, z_range: tuple[float, float] | None = None) -> Image.Image:
        """Bird's-eye view (PIL image): points seen from above (world X right, Y up on the page), coloured by
        their RGB, and each registered camera as a dot with an arrow along its forward direction, labelled
        with its absolute frame index. ``z_range`` (min, max) keeps only points in that height band (e.g.
        (-2, 0.5) hides the ceiling)."""
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        from spatialclaw.primitives.imaging import as_pil

        points, colors = self.points, self.colors
        if z_range is not None:
            keep = (points[:, 2] >= z_range[0]) & (points[:, 2] <= z_range[1])
            points, colors = points[keep], colors[keep]
        if len(points) > max_points:
            chosen = np.random.default_rng(0).choice(len(points), max_points, replace=False)
            points, colors = points[chosen], colors[chosen]
        unit = "m" if self.metric else "arbitrary units"
        fig, ax = plt.subplots(figsize=(size / 100, size / 100), dpi=100)
        if len(points):
            ax.scatter(points[:, 0], points[:, 1], c=colors / 255.0, s=1, linewidths=0)
        centres = self.poses[self.registered][:, :3, 3]
        forwards = self.poses[self.registered][:, :3, 2]
        extent = np.ptp(np.vstack([points[:, :2], centres[:, :2]]), axis=0).max() if len(points) else 1.0
        arrow = 0.08 * max(float(extent), 1e-6)
        for centre, forward, index in zip(centres, forwards, self.frame_indices[self.registered], strict=True):
            direction = forward[:2] / max(np.linalg.norm(forward[:2]), 1e-9)
            ax.plot(centre[0], centre[1], "o", color="red", markersize=4)
            ax.annotate(
                "",
                xy=(centre[0] + arrow * direction[0], centre[1] + arrow * direction[1]),
                xytext=(centre[0], centre[1]),
                arrowprops={"arrowstyle": "->", "color": "red"},
            )
            ax.text(centre[0], centre[1], f" {index}", color="red", fontsize=7)
        ax.set_aspect("equal")
        ax.set_xlabel(f"X ({unit}), right of first camera")
        ax.set_ylabel(f"Y ({unit}), forward of first camera")
        ax.set_title("bird's-eye view (+Z up), cameras in red with frame index")
        ax.grid(True, linewidth=0.3)
        image = as_pil(fig)
        plt.close(fig)
        return image


# ---- readouts ---------------------------------------------------------------------------------------------


def advice(steps: list[CameraStep], arrays: list[np.ndarray]) -> str:
    small = max(arrays[0].shape[:2]) < 320
    reasons = " ".join(s.reason for s in steps)
    if "feature matches" in reasons:
        return (
            "The frames share too few features"
            + (
                f" (they are small, {arrays[0].shape[1]}x{arrays[0].shape[0]} px, already upsampled for matching)"
                if small
                else ""
            )
            + ": use frames closer together in time or "
            "crops of the shared region; depth maps do not help matching"
        )
    if "no single camera motion" in reasons:
        return "Moving objects or repeated texture dominate the matches: mask the moving object or use other frames"
    return "Try frames closer together in time, or give depth maps and intrinsics for an RGB-D reconstruction"


def frame_status(
    method: str,
    indices: list[int],
    registered: np.ndarray,
    sparse: SfmResult | None,
    rgbd_inliers: np.ndarray | None,
    rotation_steps: list[CameraStep] | None,
) -> list[FrameStatus]:
    out = []
    step_into = {s.frame_b: s for s in (rotation_steps or [])}
    for i, index in enumerate(indices):
        step = step_into.get(index)
        if i == 0 and registered[0] and method != "sfm":
            out.append(FrameStatus(index, "reference", 0, 1.0, "defines the world frame"))
        elif not registered[i]:
            reason = (
                f"{step.kind} from frame {step.frame_a}: {step.reason}"
                if step is not None
                else "too few feature matches with the registered frames"
            )
            out.append(FrameStatus(index, "unregistered", 0, 0.0, reason))
        elif method == "rotation":
            assert step is not None  # every frame after the first that the chain registered has a step into it
            out.append(
                FrameStatus(
                    index,
                    "rotation-only",
                    step.inliers,
                    step.confidence,
                    f"turned from frame {step.frame_a}: yaw {step.yaw_deg:+.1f}, pitch {step.pitch_deg:+.1f}, "
                    f"roll {step.roll_deg:+.1f} deg; {step.reason}",
                )
            )
        elif method == "rgbd":
            count = int(rgbd_inliers[i]) if rgbd_inliers is not None else 0
            out.append(
                FrameStatus(index, "registered", count, min(1.0, count / 100), "PnP on depth-lifted feature matches")
            )
        else:
            count = len(sparse.observations[i]) if sparse is not None else 0
            out.append(
                FrameStatus(
                    index,
                    "registered",
                    count,
                    min(1.0, count / 100),
                    f"{method}: {count} triangulated points observed in this frame",
                )
            )
    return out
