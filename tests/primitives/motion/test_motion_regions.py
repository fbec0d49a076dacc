"""``motion(frames, regions=...)``: the image motion per region and the near-vs-far parallax models wrote by hand
(issue 32) to tell a pan from a move and an orbit's direction, on a real Redwood RGB-D frame rendered with exact
camera motion (``tests.virtual_camera``: a turn warps the photo by its homography; a move re-projects each pixel
by its measured depth), at benchmark size (200 px) and full size (640 px)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from spatialclaw.primitives.motion.estimate import motion
from tests.virtual_camera import redwood_frame, rotation_ypr, shrink, translating_sequence, turning_sequence

FOV = math.degrees(2 * math.atan(320 / 525))  # the Redwood camera's horizontal field of view
MOVE_M = 0.08


@pytest.fixture(scope="module")
def photo(test_data):
    return redwood_frame(test_data)


def _near_far(depth: np.ndarray, width: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Masks of the pixels nearer and farther than the median measured depth, at ``width``; the depth (m)."""
    small = shrink(np.nan_to_num(depth, nan=0.0).astype(np.float32), width)
    median = float(np.median(depth[np.isfinite(depth)]))
    return {"near": (small > 0) & (small < median), "far": small >= median}, small


@pytest.mark.parametrize("width", [200, 640])
def test_a_pure_pan_moves_every_band_alike_beyond_its_turn(photo, width):
    rgb, _, K = photo
    frames = turning_sequence(rgb, K, [rotation_ypr(0.0), rotation_ypr(5.0)], width=width)
    step = motion(frames, fov_deg=FOV, regions="bands").regions[0]
    assert [r.name for r in step.regions] == ["top", "middle", "bottom"]
    assert step.parallax is False and "no parallax" in step.verdict, step.readout()
    for region in step.regions:
        assert region.status == "measured" and region.points >= 6
        assert region.flow_px[0] < -0.07 * width  # a pan right moves the picture left, by ~8 % of its width
        assert math.hypot(*region.turn_free_px) < 0.3, region.readout()  # the turn explains it all


@pytest.mark.parametrize("width", [200, 640])
def test_a_sideways_move_shows_parallax_between_near_and_far_at_their_true_depths(photo, width):
    """The camera moves 8 cm right: near pixels (by the measured depth) move left more than far ones, each by
    about focal x 0.08 m / depth; the readout names the near region and the travel."""
    rgb, depth, K = photo
    frames = translating_sequence(rgb, depth, K, [np.zeros(3), np.array([MOVE_M, 0.0, 0.0])], width=width)
    masks, small_depth = _near_far(depth, width)
    step = motion(frames, fov_deg=FOV, regions=masks).regions[0]
    assert step.parallax is True and step.nearer == "near", step.readout()
    assert "the camera travels right" in step.verdict
    focal = 525.0 * width / 640
    for region in step.regions:
        expected = float(np.median(focal * MOVE_M / small_depth[masks[region.name]]))
        assert region.turn_free_px[0] == pytest.approx(-expected, rel=0.15), region.readout()
        assert abs(region.turn_free_px[1]) < 0.5
    # by bands: the bottom band (median depth 1.4 m; 1.9 and 2.0 m above it) is the nearer one
    bands = motion(frames, fov_deg=FOV, regions="bands").regions[0]
    assert bands.parallax is True and bands.nearer == "bottom" and "travels right" in bands.verdict, bands.readout()


@pytest.mark.parametrize("width", [200, 640])
def test_an_orbit_is_told_by_near_versus_far_with_its_way_round(photo, width):
    """The camera travels 15 cm right while it turns left to keep a point 1.5 m ahead in view (an orbit): in the
    image the near things barely move and the far ones move right, which a pan right would never do; beyond the
    measured turn the near region moves left more: it travels right, counterclockwise seen from above."""
    rgb, depth, K = photo
    turn = -math.degrees(math.atan2(0.15, 1.5))
    frames = translating_sequence(
        rgb, depth, K, [np.zeros(3), np.array([0.15, 0.0, 0.0])], [np.eye(3), rotation_ypr(turn)], width=width
    )
    masks, _ = _near_far(depth, width)
    result = motion(frames, fov_deg=FOV, regions=masks)
    near, far = result.regions[0].regions
    assert abs(near.flow_px[0]) < 0.4 * far.flow_px[0]  # raw: the near things stay, the far ones move right
    assert result.steps[0].yaw_deg == pytest.approx(turn, abs=1.5)
    step = result.regions[0]
    assert step.parallax is True and step.nearer == "near", step.readout()
    assert "travels right (counterclockwise seen from above" in step.verdict


def test_a_region_with_too_few_features_is_unknown_and_the_others_are_still_compared(photo):
    rgb, _, K = photo
    frames = turning_sequence(rgb, K, [rotation_ypr(0.0), rotation_ypr(3.0)], width=200)
    regions = {"sliver": (100, 70, 103, 73), "left": (0, 0, 100, 150), "right": (100, 0, 200, 150)}
    result = motion(frames, fov_deg=FOV, regions=regions)
    step = result.regions[0]
    sliver = step.regions[0]
    assert sliver.status == "unknown" and sliver.flow_px is None and "need 6" in sliver.reason
    assert step.parallax is False
    assert "sliver: unknown" in repr(result) and "by region" in repr(result)
    with pytest.raises(ValueError, match="bands"):
        motion(frames, regions="thirds")


@pytest.mark.parametrize("width", [200, 640])
@pytest.mark.parametrize("regions", ["bands", "columns"])
@pytest.mark.parametrize("forward", [True, False])
def test_a_move_forward_or_back_reads_as_one_and_not_as_a_sideways_travel(photo, width, regions, forward):
    """The camera moves 15 cm straight forward or back: opposite bands (columns) move opposite ways, outward or
    inward. Before, the readout took the pair that differed most as near-vs-far parallax and told a model that a
    backward move "travels left and up" (a dev-set session, issue 32's third round)."""
    rgb, depth, K = photo
    move = np.array([0.0, 0.0, 0.15 if forward else -0.15])
    frames = translating_sequence(rgb, depth, K, [np.zeros(3), move], width=width)
    step = motion(frames, fov_deg=FOV, regions=regions).regions[0]
    expected = "FORWARD" if forward else "BACKWARD"
    assert step.parallax is True and f"the camera moves {expected}" in step.verdict, step.readout()
    assert "travels" not in step.verdict and step.nearer is None, step.readout()
