"""Metric depth from one image, with intrinsics and a confidence map.

``depth(frame)`` runs a learned monocular metric-depth model through ``transformers``:

- Depth Anything V2 metric (default ``depth-anything/Depth-Anything-V2-Metric-Indoor-Small-hf``; outdoor and
  larger variants by alias or hub id). It predicts metres but no focal length, so the intrinsics come from
  the user (``intrinsics=`` or ``fov_deg=``) or from a default horizontal field of view of
  ``DEFAULT_HFOV_DEG`` degrees.
- Depth Pro (``apple/DepthPro-hf``): predicts metres and the field of view, hence the focal length. With
  user intrinsics its depth is rescaled to the given focal length (its depth scales with focal length).

Choose with ``model=`` (an alias from ``MODEL_ALIASES``, a hub id or a local folder saved with
``save_pretrained``) or the ``SPATIALCLAW_DEPTH_MODEL`` environment variable. Results are cached on disk by
content (model id + version + arguments + image bytes). For rectified stereo pairs, the classical backend
needs no weights: ``spatialclaw.primitives.reconstruction.stereo.stereo_depth``.

Conventions: depth is metres along the camera z axis (OpenCV camera: x right, y down, z forward), one value
per pixel of the input image (same H, W), NaN where there is no estimate. Intrinsics are pixels,
[[fx, 0, cx], [0, fy, cy], [0, 0, 1]], for that same resolution.
"""

from __future__ import annotations

import importlib.util
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from spatialclaw.primitives.geometry import geom
from spatialclaw.primitives.geometry.camera import as_intrinsics
from spatialclaw.primitives.imaging import as_rgb_array
from spatialclaw.primitives.perception import cache, models, remote
from spatialclaw.primitives.perception.backends import depth_family
from spatialclaw.primitives.runtime.library_failures import guarded

if TYPE_CHECKING:
    import torch

__all__ = [
    "DEFAULT_HFOV_DEG",
    "DEFAULT_MODEL",
    "MODEL_ALIASES",
    "DepthResult",
    "depth",
    "edge_confidence",
    "estimated_intrinsics",
    "intrinsics_from_fov",
    "load_depth_model",
]

DEFAULT_MODEL = "depth-anything/Depth-Anything-V2-Metric-Indoor-Small-hf"
MODEL_ALIASES: dict[str, str] = {
    "depth-anything-indoor": "depth-anything/Depth-Anything-V2-Metric-Indoor-Small-hf",
    "depth-anything-indoor-base": "depth-anything/Depth-Anything-V2-Metric-Indoor-Base-hf",
    "depth-anything-indoor-large": "depth-anything/Depth-Anything-V2-Metric-Indoor-Large-hf",
    "depth-anything-outdoor": "depth-anything/Depth-Anything-V2-Metric-Outdoor-Small-hf",
    "depth-anything-outdoor-base": "depth-anything/Depth-Anything-V2-Metric-Outdoor-Base-hf",
    "depth-anything-outdoor-large": "depth-anything/Depth-Anything-V2-Metric-Outdoor-Large-hf",
    "depth-pro": "apple/DepthPro-hf",
}
DEFAULT_HFOV_DEG = 60.0  # horizontal field of view assumed when neither the model nor the user gives one
_CACHE_FORMAT = "1"
_ESTIMATED: dict[int, tuple[int, int, np.ndarray, str]] = {}  # frame index -> (W, H, K, model) from depth()


@dataclass
class DepthResult:
    """A metric depth map of one image.

    Attributes:
        depth: (H, W) float32 metres along the camera z axis; NaN where there is no estimate.
        intrinsics: (3, 3) float64 pinhole intrinsics in pixels for this H x W image.
        confidence: (H, W) float32 in [0, 1]; 0 where ``depth`` is NaN. For learned models a heuristic
            (low at depth discontinuities, where monocular depth smears), for stereo the left-right check.
        frame_index: absolute index of the source frame, or None for a plain image.
        model: the model id (hub id, local folder or "stereo-sgbm").
        intrinsics_source: "model" (focal length estimated by the model), "user" (given by the caller) or
            "default-fov" (``DEFAULT_HFOV_DEG`` assumed: metric depth is right, but back-projected lateral
            positions are only as good as that guess).
    """

    depth: np.ndarray
    intrinsics: np.ndarray
    confidence: np.ndarray
    frame_index: int | None
    model: str
    intrinsics_source: str
    extras: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def backend(self) -> str:
        """Which backend answered: "depth-pro", "depth-anything", "stereo-sgbm" or "depth" (another model);
        ``model`` names the exact checkpoint."""
        return depth_family(self.model)

    @property
    def focal_px(self) -> float:
        """Focal length fx in pixels of ``intrinsics`` (the model's estimate when ``intrinsics_source`` is "model")."""
        return float(self.intrinsics[0, 0])

    @property
    def fov_deg(self) -> float:
        """Horizontal field of view in degrees of ``intrinsics``: 2 atan(W / (2 fx)). Estimated by the model
        (Depth Pro) when ``intrinsics_source`` is "model", the caller's when "user", a guess when "default-fov"."""
        return float(np.degrees(2.0 * np.arctan(self.depth.shape[1] / (2.0 * self.intrinsics[0, 0]))))

    @property
    def shape(self) -> tuple[int, int]:
        """(H, W) in pixels."""
        return tuple(self.depth.shape)

    def at(self, x: float, y: float) -> float:
        """Depth in metres at pixel (x, y) (nearest pixel); NaN where there is none."""
        height, width = self.depth.shape
        col, row = int(round(x)), int(round(y))
        if not (0 <= col < width and 0 <= row < height):
            raise IndexError(f"pixel ({x}, {y}) is outside the {width}x{height} depth map")
        return float(self.depth[row, col])

    def points(self, mask: Any = None, pose: Any = None, stride: int = 1) -> np.ndarray:
        """(N, 3) points in metres: camera frame, or world frame when ``pose`` (4, 4 camera-to-world) is
        given; ``mask`` (H, W) bool restricts to those pixels. Pixels without depth are skipped."""
        points = geom.backproject(self.depth, self.intrinsics, pose=pose, mask=mask, stride=stride)
        assert isinstance(points, np.ndarray)  # no pixels asked for: points only
        return points

    def __repr__(self) -> str:
        valid = np.isfinite(self.depth)
        median = float(np.median(self.depth[valid])) if valid.any() else float("nan")
        height, width = self.depth.shape
        fx = self.intrinsics[0, 0]
        return (
            f"DepthResult(frame_index={self.frame_index}, {width}x{height}, median {median:.2f} m, "
            f"valid {valid.mean():.0%}, fx={fx:.1f} px ({self.intrinsics_source}), backend={self.backend}, model={self.model!r})"
        )


def intrinsics_from_fov(width: int, height: int, hfov_deg: float) -> np.ndarray:
    """(3, 3) pinhole intrinsics in pixels for a horizontal field of view in degrees, square pixels and the
    principal point at the image centre ((W - 1) / 2, (H - 1) / 2)."""
    if not 0.0 < hfov_deg < 180.0:
        raise ValueError(f"fov_deg must be a horizontal field of view between 0 and 180 degrees, got {hfov_deg}")
    focal = 0.5 * width / math.tan(math.radians(hfov_deg) / 2.0)
    return np.array([[focal, 0.0, (width - 1) / 2.0], [0.0, focal, (height - 1) / 2.0], [0.0, 0.0, 1.0]])


def edge_confidence(depth_m: np.ndarray, scale: float = 0.05) -> np.ndarray:
    """(H, W) float32 in [0, 1]: 1 on smooth surfaces, falling towards 0 where log-depth changes by more than
    ``scale`` per pixel (object boundaries, where per-pixel depth is least reliable); 0 where depth is NaN."""
    import cv2

    valid = np.isfinite(depth_m) & (depth_m > 0)
    log_depth = np.log(np.where(valid, depth_m, 1.0)).astype(np.float32)

    def sobel() -> tuple[np.ndarray, np.ndarray]:
        gx = np.asarray(cv2.Sobel(log_depth, cv2.CV_32F, 1, 0, ksize=3)) / 8.0
        gy = np.asarray(cv2.Sobel(log_depth, cv2.CV_32F, 0, 1, ksize=3)) / 8.0
        return gx, gy

    def central(_: str) -> tuple[np.ndarray, np.ndarray]:  # when OpenCV fails on the map
        rows, cols = np.gradient(log_depth)
        return np.asarray(cols), np.asarray(rows)

    gx, gy = guarded(sobel, central)
    confidence = 1.0 / (1.0 + (np.hypot(gx, gy) / scale) ** 2)
    return np.where(valid, confidence, 0.0).astype(np.float32)


def _load_rgb(frame: Any) -> np.ndarray:
    if isinstance(frame, (list, tuple)) or (hasattr(frame, "__len__") and hasattr(frame, "indices")):
        raise ValueError(
            "expected ONE frame (e.g. frames[0]), got a sequence of frames; call once per frame "
            "([depth(f) for f in frames]) or use reconstruct(frames) for several views"
        )
    if isinstance(frame, (str, Path)):
        from PIL import Image

        path = Path(frame)
        if not path.is_file():
            raise FileNotFoundError(f"no image at {path}")
        with Image.open(path) as image:
            return np.asarray(image.convert("RGB"))
    return as_rgb_array(frame)


def _model_id(model: str | os.PathLike[str] | None) -> str:
    chosen = os.fspath(model) if model is not None else os.environ.get("SPATIALCLAW_DEPTH_MODEL") or DEFAULT_MODEL
    return MODEL_ALIASES.get(chosen, chosen)


def depth(
    frame: Any,
    model: str | os.PathLike[str] | None = None,
    *,
    intrinsics: Any = None,
    fov_deg: float | None = None,
    device: str | None = None,
) -> DepthResult:
    """Metric depth of one image with a learned model.

    Args:
        frame: a ``Frame``, PIL image, (H, W, 3) uint8 array or image path.
        model: alias ("depth-anything-indoor", "depth-anything-outdoor", "depth-pro", ...), hub id or local
            folder; default ``$SPATIALCLAW_DEPTH_MODEL`` or ``DEFAULT_MODEL``. Indoor variants cover ~0-20 m,
            outdoor ~0-80 m.
        intrinsics: known (3, 3) pixel intrinsics of this image (preferred when known).
        fov_deg: known horizontal field of view in degrees (used when ``intrinsics`` is not given).
        device: "cuda", "mps" or "cpu"; default automatic.

    Returns:
        ``DepthResult``: ``.depth`` (H, W) metres at the input resolution, ``.intrinsics`` (3, 3) pixels,
        ``.confidence`` (H, W) in [0, 1], ``.frame_index``, ``.model``, ``.intrinsics_source``.

    Raises:
        MissingWeightsError: the weights are not available (the message says how to get them).
    """
    rgb = _load_rgb(frame)
    height, width = rgb.shape[:2]
    user_K = None
    if intrinsics is not None:
        user_K = as_intrinsics(intrinsics, name="intrinsics")
    elif fov_deg is not None:
        user_K = intrinsics_from_fov(width, height, float(fov_deg))
    model_id = _model_id(model)
    service = remote.service()
    if service is not None:  # $SPATIALCLAW_PERCEPTION: the model runs on a shared service, the cache stays here
        hosted = service.model("depth", model_id)
        version, compute = hosted.version, lambda: hosted.run(rgb=rgb, intrinsics=user_K)
    else:
        version = models.model_version(model_id)  # without loading: a cache hit never loads the model
        if version == "unknown":
            version = load_depth_model(model_id, device).version
        compute = lambda: _estimate(load_depth_model(model_id, device), rgb, user_K)  # noqa: E731
    key = cache.cache_key(model_id, version, "depth", _CACHE_FORMAT, user_K, rgb)
    values = cache.cached("depth", key, compute)
    result = DepthResult(
        depth=values["depth"],
        intrinsics=values["intrinsics"],
        confidence=values["confidence"],
        frame_index=getattr(frame, "index", None),
        model=model_id,
        intrinsics_source=values["intrinsics_source"],
    )
    if result.intrinsics_source == "model" and isinstance(result.frame_index, int):
        _ESTIMATED[result.frame_index] = (width, height, result.intrinsics.copy(), model_id)
    return result


def estimated_intrinsics(frame_index: int, image_size: tuple[int, int] | None = None) -> tuple[np.ndarray, str] | None:
    """The (3, 3) pixel intrinsics a camera-estimating depth model (Depth Pro) gave for the frame with this
    absolute index in this process, with the model id; None when ``depth`` has not estimated them (or for
    another ``image_size`` (width, height) in pixels). ``scene.add_bearing`` uses it instead of a guessed
    field of view."""
    found = _ESTIMATED.get(int(frame_index))
    if found is None or (image_size is not None and tuple(image_size) != found[:2]):
        return None
    return found[2].copy(), found[3]


def load_depth_model(model_id: str, device: str | None = None) -> models.LoadedModel:
    """Load (once per process) the depth model ``model_id`` (hub id or folder; aliases are not expanded)."""
    try:
        return models.load_model("depth", model_id, device=device)
    except models.MissingDependencyError as error:
        # Depth Pro's image processor needs torchvision; without it we preprocess in torch (same steps).
        if importlib.util.find_spec("torchvision") is not None:
            raise
        loaded = models.load_model("depth", model_id, device=device, load_processor=False)
        if loaded.model.config.model_type != "depth_pro":
            raise ImportError(f"the image processor of {model_id!r} needs torchvision: {error}") from error
        return loaded


def _estimate(loaded: models.LoadedModel, rgb: np.ndarray, user_K: np.ndarray | None) -> dict[str, Any]:
    import torch

    model_type = loaded.model.config.model_type
    if getattr(loaded.model.config, "depth_estimation_type", "metric") == "relative":
        raise ValueError(
            f"{loaded.model_id!r} predicts relative depth, not metres; use a metric model such as "
            f"{MODEL_ALIASES['depth-anything-indoor']!r} (indoor) or {MODEL_ALIASES['depth-pro']!r}"
        )
    height, width = rgb.shape[:2]
    with torch.inference_mode():
        if model_type == "depth_pro":
            depth_m, focal = _run_depth_pro(loaded, rgb)
        else:
            inputs = loaded.processor(images=rgb, return_tensors="pt").to(loaded.device)
            inputs["pixel_values"] = inputs["pixel_values"].to(loaded.dtype)
            outputs = loaded.model(**inputs)
            outputs.predicted_depth = outputs.predicted_depth.float()
            post = loaded.processor.post_process_depth_estimation(outputs, target_sizes=[(height, width)])
            depth_m, focal = post[0]["predicted_depth"].float().cpu().numpy(), None
    depth_m = np.asarray(depth_m, dtype=np.float32).reshape(height, width)
    if user_K is not None:
        if model_type == "depth_pro":  # Depth Pro's depth is proportional to the focal length it assumed
            assumed = focal if focal is not None else intrinsics_from_fov(width, height, DEFAULT_HFOV_DEG)[0, 0]
            depth_m = depth_m * np.float32(user_K[0, 0] / assumed)
        K, source = user_K, "user"
    elif focal is not None:
        K = np.array([[focal, 0.0, (width - 1) / 2.0], [0.0, focal, (height - 1) / 2.0], [0.0, 0.0, 1.0]])
        source = "model"
    else:
        K, source = intrinsics_from_fov(width, height, DEFAULT_HFOV_DEG), "default-fov"
    depth_m = np.where(np.isfinite(depth_m) & (depth_m > 0), depth_m, np.nan).astype(np.float32)
    return {"depth": depth_m, "intrinsics": K, "confidence": edge_confidence(depth_m), "intrinsics_source": source}


def _run_depth_pro(loaded: models.LoadedModel, rgb: np.ndarray) -> tuple[np.ndarray, float | None]:
    """Depth Pro forward pass; returns (depth (H, W) metres, focal length in pixels, or None when the model
    gave no usable field of view, in which case depth assumes ``DEFAULT_HFOV_DEG``)."""
    import torch

    height, width = rgb.shape[:2]
    if loaded.processor is not None:
        inputs = loaded.processor(images=rgb, return_tensors="pt").to(loaded.device)
        pixel_values = inputs["pixel_values"]
    else:
        pixel_values = _depth_pro_pixel_values(loaded, rgb)
    outputs = loaded.model(pixel_values=pixel_values.to(loaded.device, loaded.dtype))
    # The network predicts canonical inverse depth; with the field of view f = 0.5 W / tan(fov / 2) and
    # depth = f / (W * inverse) (the same conversion as DepthProImageProcessor.post_process_depth_estimation).
    inverse = outputs.predicted_depth.float()[0]
    fov = getattr(outputs, "field_of_view", None)
    fov_deg = float(fov.float().reshape(-1)[0]) if fov is not None else float("nan")
    if 1.0 < fov_deg < 179.0:
        focal = 0.5 * width / math.tan(0.5 * math.radians(fov_deg))
    else:  # no (usable) field-of-view head: convert with the default field of view instead
        focal = None
    conversion_focal = focal if focal is not None else intrinsics_from_fov(width, height, DEFAULT_HFOV_DEG)[0, 0]
    inverse = inverse * (width / conversion_focal)
    inverse = torch.nn.functional.interpolate(
        inverse[None, None], size=(height, width), mode="bilinear", align_corners=False
    )[0, 0]
    depth_m = 1.0 / torch.clamp(inverse, min=1e-4, max=1e4)
    return depth_m.cpu().numpy(), focal


def _depth_pro_pixel_values(loaded: models.LoadedModel, rgb: np.ndarray) -> torch.Tensor:
    """Depth Pro preprocessing without torchvision, from the checkpoint's processor config: rescale and
    normalise first, then resize bilinearly to the configured size (as DepthProImageProcessor does)."""
    import torch
    from transformers.image_processing_base import ImageProcessingMixin

    config, _ = ImageProcessingMixin.get_image_processor_dict(loaded.source, local_files_only=True)
    size = config.get("size", {"height": 1536, "width": 1536})
    mean = torch.tensor(config.get("image_mean", [0.5, 0.5, 0.5]), dtype=torch.float32)[:, None, None]
    std = torch.tensor(config.get("image_std", [0.5, 0.5, 0.5]), dtype=torch.float32)[:, None, None]
    image = torch.from_numpy(np.ascontiguousarray(rgb)).permute(2, 0, 1).float() * float(
        config.get("rescale_factor", 1 / 255)
    )
    image = (image - mean) / std
    return torch.nn.functional.interpolate(
        image[None], size=(size["height"], size["width"]), mode="bilinear", align_corners=False
    )
