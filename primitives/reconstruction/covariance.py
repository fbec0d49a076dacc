"""How well a structure-from-motion model fixes its cameras: the standard deviation of the relative rotation
between every two registered images and of the focal length, from COLMAP's bundle-adjustment covariance
(``pycolmap.estimate_ba_covariance``) scaled by the model's own reprojection error.

A formal covariance describes small noise around the solution it was computed at: it says nothing about a
wrong solution, and on the Middlebury rings it is several times smaller than the real errors. Readouts
therefore state ``stated_uncertainty_deg`` (a margin and a multiple of this standard deviation, calibrated on
those rings), never the bare standard deviation.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pycolmap

__all__ = ["FALLBACK_SD_DEG", "SfmUncertainty", "sfm_uncertainty", "stated_uncertainty_deg"]

#: standard deviation assumed for a relative rotation when the covariance cannot be computed (degrees)
FALLBACK_SD_DEG = 0.5


class SfmUncertainty:
    """(N, N) standard deviations of relative rotations in degrees (NaN where unknown) and the focal
    length's relative standard deviation (NaN when it was fixed or could not be computed)."""

    def __init__(self, rotation_sd_deg: np.ndarray, focal_sd: float, note: str = "") -> None:
        self.rotation_sd_deg = rotation_sd_deg
        self.focal_sd = focal_sd
        self.note = note


def stated_uncertainty_deg(angle_deg: float, sd_deg: float) -> float:
    """The uncertainty a readout states for an SfM angle: 0.5 deg + 2% of the angle + 4 standard deviations
    of the covariance (``FALLBACK_SD_DEG`` when there is none). Measured on 47 six-view clips of the
    Middlebury temple and dino (photos turned upright, 224 px wide, 15 to 38 degree steps; 5 temple, 42 dino):
    the bound held for 151 of 156 steps and 45 of 47 first-to-last angles. The misses are two dino clips whose
    SfM solution is wrong as a whole (too few features on the white dino), which no covariance describes."""
    sd = sd_deg if math.isfinite(sd_deg) else FALLBACK_SD_DEG
    return 0.5 + 0.02 * abs(angle_deg) + 4.0 * sd


def sfm_uncertainty(
    model: pycolmap.Reconstruction, position: dict[str, int], count: int, refine_focal: bool
) -> SfmUncertainty:
    """Rotation and focal uncertainty of ``model`` (images named as in ``position``: name -> input row)."""
    import pycolmap

    sd = np.full((count, count), np.nan)
    images = sorted(
        ((position[image.name], image) for image in model.images.values() if image.has_pose), key=lambda x: x[0]
    )
    if len(images) < 2 or len(model.points3D) < 3:
        return SfmUncertainty(sd, math.nan, "too few images or points for a covariance")
    config = pycolmap.BundleAdjustmentConfig()
    for _, image in images:
        config.add_image(image.image_id)
    config.fix_gauge(pycolmap.BundleAdjustmentGauge.THREE_POINTS)
    options = pycolmap.BundleAdjustmentOptions()
    options.print_summary = False
    options.refine_focal_length = refine_focal
    options.refine_principal_point = False
    options.refine_extra_params = False
    try:
        adjuster = pycolmap.create_default_ceres_bundle_adjuster(options, config, model)
        covariance = pycolmap.estimate_ba_covariance(pycolmap.BACovarianceOptions(), model, adjuster)
    except Exception as error:  # pycolmap raises its own error types for singular problems
        return SfmUncertainty(sd, math.nan, f"no covariance ({type(error).__name__})")
    if covariance is None:
        return SfmUncertainty(sd, math.nan, "no covariance (the problem is singular: the focal length is unobservable)")
    errors = np.array([point.error for point in model.points3D.values()], dtype=float)
    variance = float(np.mean(errors**2)) / 2.0  # per image coordinate, pixels^2 (the error is a 2D distance)
    for a, (row_a, image_a) in enumerate(images):
        for row_b, image_b in images[a + 1 :]:
            block = covariance.get_cam2_cov_from_cam1(
                image_a.image_id, image_a.cam_from_world(), image_b.image_id, image_b.cam_from_world()
            )
            if block is None or not np.isfinite(block[:3, :3]).all():
                continue
            sd[row_a, row_b] = sd[row_b, row_a] = math.degrees(math.sqrt(max(np.trace(block[:3, :3]), 0.0) * variance))
    np.fill_diagonal(sd, 0.0)
    focal_sd = math.nan
    if refine_focal:
        camera = images[0][1].camera
        block = covariance.get_other_params_cov(camera.params)
        if block is not None and block.size and np.isfinite(block[0, 0]):
            focal_sd = math.sqrt(max(float(block[0, 0]), 0.0) * variance) / float(camera.params[0])
    return SfmUncertainty(sd, focal_sd)
