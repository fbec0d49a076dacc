"""Matches handed to a solver are one-to-one: SIFT finds some keypoints twice (one per orientation) and the
ratio test lets several points of one view pick the same point of the other; fed to OpenCV 5's five-point
solver, such sets draw degenerate samples and fail an assertion ("solvePoly"). Real pairs that crashed:
far-apart Middlebury temple views (640x480) and two copies of one Redwood frame."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from spatialclaw.primitives.motion.estimate import motion
from spatialclaw.primitives.motion.features import (
    DUPLICATE_PX,
    match_features,
    one_to_one_matches,
    sift_features,
)
from tests.virtual_camera import redwood_frame, shrink

CRASHED = [(0, 9), (3, 15)]  # temple views whose raw matches made cv2.findEssentialMat assert under OpenCV 5.1


@pytest.fixture(scope="module")
def temple(test_data) -> list[np.ndarray]:
    return [np.asarray(Image.open(p).convert("RGB")) for p in sorted((test_data / "multiview-temple").glob("*.png"))]


def _places_used_once(points: np.ndarray) -> bool:
    gaps = np.linalg.norm(points[:, None] - points[None], axis=2) + np.eye(len(points)) * 1e9
    return bool(len(points) < 2 or gaps.min() > DUPLICATE_PX)


@pytest.mark.parametrize("a, b", CRASHED)
def test_real_pairs_whose_ratio_test_matches_were_many_to_one_get_one_to_one_matches(temple, a, b):
    features_a, features_b = sift_features(temple[a]), sift_features(temple[b])
    raw = match_features(features_a[1], features_b[1])
    # the defect: several keypoints of a matched to one of b, and keypoints at one place matched twice
    assert len(np.unique(raw[:, 1])) < len(raw)
    assert not _places_used_once(features_a[0][raw[:, 0]])
    pairs, distances = one_to_one_matches(features_a, features_b)
    assert 0 < len(pairs) < len(raw)
    assert len(np.unique(pairs[:, 0])) == len(np.unique(pairs[:, 1])) == len(pairs)
    assert _places_used_once(features_a[0][pairs[:, 0]]) and _places_used_once(features_b[0][pairs[:, 1]])
    assert np.all(np.diff(distances) >= 0)  # the closest first: a place goes to its best match


@pytest.mark.parametrize("a, b", CRASHED)
def test_motion_on_the_pairs_that_crashed_reads_out_unknown_with_the_reason(temple, a, b):
    (step,) = motion([temple[a], temple[b]]).steps
    assert step.status == "unknown" and step.reason  # the views are far apart: no confident motion


def test_a_frame_matched_with_itself_is_one_to_one_and_static(test_data):
    rgb = shrink(redwood_frame(test_data, 0)[0], 200)
    features = sift_features(rgb, scale=3.2)
    pairs, _ = one_to_one_matches(features, features)
    assert len(pairs) < len(features[0])  # SIFT's duplicates (one per orientation) count once
    assert np.array_equal(features[0][pairs[:, 0]], features[0][pairs[:, 1]])
    (step,) = motion([rgb, rgb.copy()], fov_deg=60).steps
    assert step.kind == "static"


def test_the_ratio_test_both_ways_is_stricter_and_one_to_one_too(temple):
    features_a, features_b = sift_features(temple[0]), sift_features(temple[1])
    one_way, _ = one_to_one_matches(features_a, features_b)
    both_ways, _ = one_to_one_matches(features_a, features_b, ratio_both_ways=True)
    assert 0 < len(both_ways) <= len(one_way)
    assert len(np.unique(both_ways[:, 0])) == len(np.unique(both_ways[:, 1])) == len(both_ways)
