"""Layouts from views 60-120 degrees apart (add_view / link_views) and compass bookkeeping (set_north),
checked against exact truth: landmarks are real measured 3D points (a Redwood RGB-D frame lifted with its
depth) seen by level virtual cameras placed around them at known headings."""

from __future__ import annotations

import numpy as np
import pytest

from spatialclaw.primitives.scene.memory import Scene
from tests.paths import DATA_ROOT
from tests.virtual_camera import intrinsics, redwood_frame

pytestmark = pytest.mark.skipif(
    not (DATA_ROOT / "rgbd-redwood").is_dir(), reason=f"no Redwood RGB-D data under {DATA_ROOT}"
)

HEADINGS = {0: 0.0, 1: 80.0, 2: 170.0, 3: 255.0}  # degrees clockwise from +Y: 80-90 degrees between views
K = intrinsics(640, 480, 75.0)
COMPASS = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")


def measured_landmarks() -> dict[str, np.ndarray]:
    """Six real points of the Redwood scene (metres), in a +Z-up world: camera x -> X, z -> Y, -y -> Z."""
    _, depth, K0 = redwood_frame(DATA_ROOT, 0)
    out = {}
    for i, (x, y) in enumerate([(120, 150), (520, 140), (320, 240), (200, 380), (450, 360), (330, 90)]):
        patch = depth[y - 3 : y + 4, x - 3 : x + 4]
        d = float(np.nanmedian(patch))
        cam = np.array([(x - K0[0, 2]) / K0[0, 0] * d, (y - K0[1, 2]) / K0[1, 1] * d, d])
        out[f"mark{i}"] = np.array([cam[0], cam[2], -cam[1]])
    return out


def camera(heading_deg: float, centre: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """(position (3,), forward (3,)) of a level camera ``radius`` m from ``centre`` looking at it."""
    h = np.radians(heading_deg)
    forward = np.array([np.sin(h), np.cos(h), 0.0])
    return np.array([centre[0], centre[1], 0.0]) - radius * forward, forward


def pixel(point: np.ndarray, position: np.ndarray, forward: np.ndarray) -> tuple[float, float, float]:
    """(x, y, range in metres) of a world point in a level camera (independent projection)."""
    right = np.array([forward[1], -forward[0], 0.0])
    d = point - position
    xc, yc, zc = d @ right, -d[2], d @ forward
    return K[0, 0] * xc / zc + K[0, 2], K[1, 1] * yc / zc + K[1, 2], float(np.linalg.norm(d))


def build(ranged: bool, world_offset: float = 0.0) -> tuple[Scene, dict, dict, str]:
    marks = measured_landmarks()
    centre = np.mean(list(marks.values()), axis=0)
    cams = {v: camera(h + world_offset, centre, 2.8) for v, h in HEADINGS.items()}
    rng = np.random.default_rng(7)  # picked pixels are off by ~1.5 px, depth readings by ~3%
    scene = Scene()
    for v in cams:
        scene.add_view(v, K=K)
    for a, b in [(0, 1), (1, 2), (2, 3)]:
        shared = []
        for name, p in marks.items():
            xa, ya, ra = pixel(p, *cams[a])
            xb, yb, rb = pixel(p, *cams[b])
            if all(0 <= x < 640 for x in (xa, xb)):
                xa, ya, xb, yb = np.array([xa, ya, xb, yb]) + rng.normal(0, 1.5, 4)
                ra, rb = np.array([ra, rb]) * (1 + rng.normal(0, 0.03, 2))
                shared.append((name, (xa, ya), (xb, yb), ra, rb) if ranged else (name, (xa, ya), (xb, yb)))
        assert len(shared) >= 3, f"views {a} and {b} share {len(shared)} landmarks"
        text = scene.link_views(a, b, shared, distance=None if ranged else 2.5)
    return scene, marks, cams, text


def true_angle(target, standing, facing) -> float:
    ahead, to = np.subtract(facing, standing)[:2], np.subtract(target, standing)[:2]
    return float(-np.degrees(np.arctan2(ahead[0] * to[1] - ahead[1] * to[0], ahead @ to)))


def solved_heading(scene: Scene, v: int) -> float:
    return scene.layout.headings_deg[v]


@pytest.mark.parametrize("ranged", [True, False])
def test_headings_of_views_far_apart_come_from_shared_landmarks(ranged):
    scene, marks, cams, text = build(ranged)
    assert "Floor plan from 4 views" in text, text
    for v, h in HEADINGS.items():
        error = (solved_heading(scene, v) - h + 180) % 360 - 180
        assert abs(error) < (2.0 if ranged else 4.0), (v, solved_heading(scene, v), h, text)
    if ranged:  # metric distances: the positions and landmarks are right in metres too
        origin = cams[0][0]
        for v, (position, _) in cams.items():
            assert np.allclose(scene.layout.positions[v], (position - origin)[:2], atol=0.15), v
        for name, p in marks.items():
            assert np.allclose(scene[name].center[:2], (p - origin)[:2], atol=0.15), name
    else:
        assert "up to scale" in text


def test_perspective_answers_on_the_solved_floor_plan_match_the_truth():
    scene, marks, _, _ = build(ranged=False)
    for target, standing, facing in [
        ("mark0", "mark1", "mark2"),
        ("mark3", "mark5", "mark4"),
        ("mark4", "mark0", "mark1"),
    ]:
        truth = true_angle(marks[target], marks[standing], marks[facing])
        p = scene.perspective(target, standing_at=standing, facing=facing)
        assert abs((p.angle_deg - truth + 180) % 360 - 180) < 6.0, (target, p.angle_deg, truth)
        assert p.angle_sigma_deg > 0  # the solve's uncertainty reaches the readout


def test_compass_readouts_after_north_is_named():
    # the true north is world heading 30 deg; we are told which compass bearing view 1 looks along
    scene, marks, _, _ = build(ranged=True)
    north = 30.0
    with pytest.raises(ValueError, match="north is not set"):
        scene.compass(0)
    scene.set_north(view=1, direction=(HEADINGS[1] - north) % 360)  # "camera 1 looks 50 degrees (NE)"
    for v, h in HEADINGS.items():
        truth = (h - north) % 360
        reading = scene.compass(v)
        assert abs((reading.bearing_deg - truth + 180) % 360 - 180) < 2.5  # view 1's heading is solved (± 2 deg)
        assert reading.direction == COMPASS[round(truth / 45) % 8]
    for a, b in [("mark0", "mark1"), ("mark3", "mark5"), ("mark2", "mark4")]:
        d = marks[a] - marks[b]
        truth = (np.degrees(np.arctan2(d[0], d[1])) - north) % 360
        reading = scene.compass(a, b)
        assert abs((reading.bearing_deg - truth + 180) % 360 - 180) < 2.0
        assert f"is {reading.direction} of the {b}" in reading.text
        assert f"the {a} is {reading.direction}" in scene.relation(a, b).text
    described = scene.describe()
    assert abs(scene.north_deg - north) < 2.5 and "North: world heading" in described
    assert f"camera 2 faces {COMPASS[round((HEADINGS[2] - north) / 45) % 8]}" in described
    assert "lies" in scene.perspective("mark0", standing_at="mark1", facing="mark2").text


def test_north_from_a_named_facing():
    scene, marks, _, _ = build(ranged=True)
    # "standing at mark0 looking at mark1 you face west"; view 0 (heading 0 in truth and in the solve) then faces
    d = marks["mark1"] - marks["mark0"]
    scene.set_north(facing="mark1", standing_at="mark0", direction="west")
    assert abs(scene.compass("mark1", "mark0").bearing_deg - 270.0) < 0.5
    truth = (0.0 - (np.degrees(np.arctan2(d[0], d[1])) - 270.0)) % 360
    assert abs((scene.compass(0).bearing_deg - truth + 180) % 360 - 180) < 3.0
    assert scene.compass(0).direction == COMPASS[round(truth / 45) % 8]


def test_views_that_share_too_little_are_reported_not_guessed():
    scene = Scene()
    scene.add_view(0, K=K)
    scene.add_view(1, K=K)
    text = scene.link_views(0, 1, [("lamp", (300, 200), (100, 220))])
    assert text.startswith("Not solved yet") and "fewer than 2 landmarks" in text
    assert scene.layout is None and 1 not in scene.cameras
