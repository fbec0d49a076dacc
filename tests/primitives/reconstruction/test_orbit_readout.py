"""rec.orbit() and rec.focal against the Middlebury calibration: six-view clips of the temple and the dino at
benchmark size (the dev set's orbit clips: photos turned upright, 224 px wide), the angle between viewing
directions, the angle swept around the object and the direction of travel within the stated uncertainty,
unregistered dino frames named and extrapolated over; focal lengths that are implausible are flagged, and a
pair whose focal length is assumed says that its angle is not a measurement."""

from __future__ import annotations

import itertools
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from spatialclaw.benchmarks.devset.camera import middlebury_cameras
from spatialclaw.benchmarks.devset.data import small_frame
from spatialclaw.benchmarks.devset.orbit import upright_rotation
from spatialclaw.primitives.reconstruction.reconstruct import reconstruct

TABLES = {"multiview-temple": "templeR_par.txt", "multiview-dino": "dino_par.txt"}


def _angle(a: np.ndarray, b: np.ndarray) -> float:
    return math.degrees(math.acos(float(np.clip(a @ b / np.linalg.norm(a) / np.linalg.norm(b), -1.0, 1.0))))


def _clip(root: Path, folder: str, views: list[str], upright: bool = True):
    """Frames as the dev set shows them, and the calibration: world-to-camera rotations (of the shown
    photos) and camera centres."""
    from PIL import Image

    cameras = middlebury_cameras(root, folder, TABLES[folder])
    frames = []
    for view in views:
        photo = np.array(Image.open(root / folder / view).convert("RGB"))
        frames.append(np.asarray(small_frame(np.ascontiguousarray(np.rot90(photo)) if upright else photo)))
    rotations = [upright_rotation(cameras[v][0]) if upright else cameras[v][0] for v in views]
    centres = [-cameras[v][0].T @ cameras[v][1] for v in views]
    return frames, rotations, centres, cameras


def _calibrated_K(root: Path, folder: str, view: str) -> np.ndarray:
    """The published (3, 3) pixel intrinsics of one 640 x 480 photo."""
    for line in (root / folder / TABLES[folder]).read_text().splitlines()[1:]:
        parts = line.split()
        if parts and parts[0] == view:
            return np.array(parts[1:10], dtype=float).reshape(3, 3)
    raise KeyError(view)


def _ring_azimuths(cameras: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict[str, np.ndarray]:
    """Each camera centre's offset from the centre of the gantry's ring, in the ring's plane."""
    names = sorted(cameras)
    centres = np.array([-cameras[n][0].T @ cameras[n][1] for n in names])
    mean = centres.mean(axis=0)
    _, _, Vt = np.linalg.svd(centres - mean)
    flat = (centres - mean) @ Vt[:2].T
    A = np.column_stack([2 * flat, np.ones(len(flat))])
    cx, cy, _ = np.linalg.lstsq(A, (flat**2).sum(axis=1), rcond=None)[0]
    return {n: flat[i] - np.array([cx, cy]) for i, n in enumerate(names)}


# (folder, first view, ring step, reversed): the dev set's orbit clips (seed 0) and a fully registered dino clip
CLIPS = [
    ("multiview-temple", "templeR0016.png", 2, False),
    ("multiview-temple", "templeR0015.png", 3, True),
    ("multiview-dino", "dino0022.png", 2, False),
    ("multiview-dino", "dino0016.png", 4, False),
]


@pytest.mark.parametrize(("folder", "first", "step", "backwards"), CLIPS)
def test_the_orbit_readout_matches_the_calibration_within_its_stated_uncertainty(
    test_data, folder, first, step, backwards
):
    ring = sorted(middlebury_cameras(test_data, folder, TABLES[folder]))
    start = ring.index(first)
    views = ring[start : start + 5 * step + 1 : step][:: -1 if backwards else 1]
    frames, rotations, centres, cameras = _clip(test_data, folder, views)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unregistered dino frames and its narrow field of view warn
        rec = reconstruct(frames, depth=None)
    orbit = rec.orbit()
    rows = np.flatnonzero(rec.registered)
    assert rec.method == "sfm" and len(rows) >= 4
    assert orbit.measured and rec.focal is not None and rec.focal.status == "estimated"
    assert orbit.unregistered == [i for i in range(6) if not rec.registered[i]]
    # every step between consecutive registered frames, and first to last
    for step_readout, (a, b) in zip(orbit.steps, itertools.pairwise(rows), strict=True):
        assert (step_readout.frame_a, step_readout.frame_b) == (a, b)
        truth = _angle(rotations[a][2], rotations[b][2])
        assert abs(step_readout.view_angle_deg - truth) <= step_readout.uncertainty_deg
        assert step_readout.uncertainty_deg < 0.2 * truth  # and the bound says something
    a, b = rows[0], rows[-1]
    truth = _angle(rotations[a][2], rotations[b][2])
    assert (orbit.first, orbit.last) == (a, b)
    assert abs(orbit.first_to_last_deg - truth) <= orbit.first_to_last_uncertainty_deg
    assert orbit.from_first_deg[b] == pytest.approx(orbit.first_to_last_deg)
    # the angle swept around the object: the ring azimuths of the camera centres, summed step by step
    offsets = _ring_azimuths(cameras)
    swept = sum(_angle(offsets[views[i]], offsets[views[j]]) for i, j in itertools.pairwise(rows))
    assert abs(orbit.swept_deg - swept) <= orbit.swept_uncertainty_deg
    # travel: sideways along the first registered camera's x axis (the question "left or right")
    sideways = rotations[a][0] @ (centres[b] - centres[a])
    assert orbit.travel == ("right" if sideways > 0 else "left")
    assert {s.travel for s in orbit.steps} == {orbit.travel} and {s.turn for s in orbit.steps} != {orbit.travel}
    # the way round seen from above (the cameras' up): the signed sweep of the calibrated centres about it
    up = -np.mean([r[1] for r in rotations], axis=0)
    middle = np.mean(centres, axis=0)
    turning = sum(np.cross(centres[i] - middle, centres[j] - middle) @ up for i, j in itertools.pairwise(rows))
    assert orbit.direction == f"{'counterclockwise' if turning > 0 else 'clockwise'} seen from above"
    assert (orbit.direction == "counterclockwise seen from above") == (orbit.travel == "right")
    assert f"around the centre: {orbit.direction}" in str(orbit)
    if orbit.unregistered:  # the dino at 30 deg steps: the end frames share no features with the rest
        assert a > 0 and orbit.extrapolated_first_to_last_deg is not None
        truth_all = _angle(rotations[0][2], rotations[5][2])
        assert abs(orbit.extrapolated_first_to_last_deg - truth_all) <= orbit.extrapolated_uncertainty_deg
        assert "EXTRAPOLATED" in str(orbit) and f"unregistered {orbit.unregistered}" in str(orbit)
    else:
        assert orbit.extrapolated_first_to_last_deg is None


def test_a_pair_with_an_assumed_focal_says_its_angle_is_not_measured_and_how_it_scales(test_data):
    folder = "multiview-temple"
    views = ["templeR0013.png", "templeR0016.png"]  # the dev set's first orbit_angle pair, 22.7 deg apart
    frames, rotations, *_ = _clip(test_data, folder, views, upright=False)
    truth = _angle(rotations[0][2], rotations[1][2])
    with pytest.warns(UserWarning, match="NOT a measurement"):
        rec = reconstruct(frames, depth=None)
    assert rec.method == "two-view" and rec.focal is not None
    assert rec.focal.status == "assumed" and not rec.focal.measured
    assert "ASSUMED" in repr(rec) and any("NOT a measurement" in note for note in rec.notes)
    orbit = rec.orbit()
    assert not orbit.measured and math.isnan(orbit.first_to_last_uncertainty_deg)
    assert "NOT MEASURED" in str(orbit)
    # how the angle scales: it grows as the field of view narrows, and the photos' true one (24 deg) brackets
    # the true angle between the angles at 20 and 35 deg
    alternatives = orbit.alternatives
    assert alternatives[20.0] > alternatives[35.0] > orbit.first_to_last_deg > alternatives[90.0]
    assert alternatives[35.0] < truth < alternatives[20.0]
    # with the calibrated focal length, the same pair is a measurement within its uncertainty
    K = _calibrated_K(test_data, folder, views[0]) * (frames[0].shape[1] / 640)  # 224 px wide
    K[2, 2] = 1.0
    known = reconstruct(frames, depth=None, intrinsics=K)
    assert known.focal is not None and known.focal.status == "given"
    measured = known.orbit()
    assert measured.measured and abs(measured.first_to_last_deg - truth) <= measured.first_to_last_uncertainty_deg


def test_implausible_focal_lengths_are_flagged(test_data):
    folder = "multiview-temple"
    views = [f"templeR{n:04d}.png" for n in range(16, 27, 2)]
    frames, *_ = _clip(test_data, folder, views)
    height, width = frames[0].shape[:2]
    focal = _calibrated_K(test_data, folder, views[0])[1, 1] * width / 480  # turned upright, 224 px: 18 deg
    K = np.array([[focal, 0, (width - 1) / 2], [0, focal, (height - 1) / 2], [0, 0, 1]])
    per_frame = np.stack([K] * 6)
    per_frame[3, 0, 0] = per_frame[3, 1, 1] = 2.6 * K[0, 0]  # one key frame "zoomed": 7 deg instead of 18
    with pytest.warns(UserWarning, match=r"IMPLAUSIBLE\? focal length far from the clip's others \(frame 3"):
        rec = reconstruct(frames, depth=None, intrinsics=per_frame)
    assert rec.focal is not None and any("frame 3" in w for w in rec.focal.warnings)
    assert "outside the usual 15-120 deg (frame 3: 6.9 deg)" in repr(rec)
    # the dino's estimated focal length is truly narrow (8 deg): flagged, with what that means for angles
    dino_views = [f"dino{n:04d}.png" for n in range(22, 33, 2)]
    dino, *_ = _clip(test_data, "multiview-dino", dino_views)
    with pytest.warns(UserWarning, match=r"outside the usual 15-120 deg"):
        narrow = reconstruct(dino, depth=None)
    assert narrow.focal is not None and narrow.focal.status == "estimated" and narrow.focal.views >= 3
    assert 5.0 < float(np.nanmedian(narrow.focal.hfov_deg)) < 12.0
    assert "from 3+ views the angles depend little on it" in str(narrow.focal)


def test_orbit_needs_two_registered_frames(test_data):
    frames, *_ = _clip(test_data, "multiview-temple", ["templeR0013.png"])
    rec = reconstruct(frames, depth=None)
    with pytest.raises(ValueError, match=r"orbit\(\) needs two registered frames; registered: \[0\]"):
        rec.orbit()
