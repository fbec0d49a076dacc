"""scene.link_views(a, b) without named landmarks: features matched between the two frames place the views,
checked against exact cameras. Middlebury temple and dino rings (``*_par.txt``: K [R t], world-to-camera;
the photos are stored turned on their side, so they are turned upright with their cameras), the Redwood
RGB-D trajectory, and unrelated real photos, all at benchmark size (200 px wide)."""

from __future__ import annotations

import itertools
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from spatialclaw.primitives.frames.load import load_images
from spatialclaw.primitives.motion.angles import yaw_pitch_roll
from spatialclaw.primitives.scene.memory import Scene
from tests.primitives.reconstruction.test_reconstruct import read_middlebury, read_redwood
from tests.virtual_camera import intrinsics, scaled_K, shrink

WIDTH = 200


def upright_ring(folder: Path) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(rgb, K, R world-to-camera) per present view, turned upright: image x was the world's up, so the
    image is turned 90 degrees counter-clockwise (new x = old y, new y = W - 1 - old x) with its camera."""
    cameras = read_middlebury(folder)
    out = []
    for name in sorted(p.name for p in folder.glob("*.png")):
        K, R, _ = cameras[name]
        rgb = np.asarray(Image.open(folder / name).convert("RGB"))
        width = rgb.shape[1]
        K_up = np.array([[K[1, 1], 0.0, K[1, 2]], [0.0, K[0, 0], width - 1 - K[0, 2]], [0.0, 0.0, 1.0]])
        out.append((np.ascontiguousarray(np.rot90(rgb, 1)), K_up, np.stack([R[1], -R[0], R[2]])))
    return out


def ground_headings(ring: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> np.ndarray:
    """Each camera's heading on the ring's ground plane, degrees clockwise seen from above (the scene's
    convention); up = the cameras' mean up direction (the ring's axis)."""
    up = -np.mean([R[1] for _, _, R in ring], axis=0)
    up /= np.linalg.norm(up)
    north = np.cross(up, [1.0, 0.0, 0.0])
    north /= np.linalg.norm(north)
    east = np.cross(north, up)
    return np.array([np.degrees(np.arctan2(R[2] @ east, R[2] @ north)) for _, _, R in ring])


def wrap(angle: float) -> float:
    return float((angle + 180.0) % 360.0 - 180.0)


def small_frames(tmp_path: Path, images: list[np.ndarray], indices: list[int], width: int | None = WIDTH):
    """Real ``Frames`` (image files with absolute indices) of the images shrunk to ``width`` (None: as they are)."""
    paths = []
    for image, index in zip(images, indices, strict=True):
        paths.append(tmp_path / f"view_{index}.png")
        Image.fromarray(image if width is None else shrink(image, width)).save(paths[-1])
    return load_images(paths, indices=indices)


def linked_ring(tmp_path: Path, ring, chosen: list[int]) -> tuple[Scene, list[str]]:
    frames = small_frames(tmp_path, [ring[k][0] for k in chosen], chosen)
    scene = Scene()
    for k, frame in zip(chosen, frames, strict=True):
        scene.add_view(frame, K=scaled_K(ring[k][1], WIDTH / ring[k][0].shape[1]))
    texts = [str(scene.link_views(a, b)) for a, b in itertools.pairwise(frames)]
    return scene, texts


@pytest.fixture(scope="module")
def temple(test_data):
    return upright_ring(test_data / "multiview-temple")


@pytest.mark.parametrize("a, b", [(0, 1), (0, 2), (5, 8), (5, 9)])
def test_auto_linked_temple_views_give_the_calibrated_relative_heading(temple, tmp_path, a, b):
    truth = wrap(ground_headings(temple)[b] - ground_headings(temple)[a])
    scene, (text,) = linked_ring(tmp_path, temple, [a, b])
    assert text.startswith(f"Linked views {a} and {b} by 12 matched features"), text
    assert "the cameras stand apart" in text and "up to scale" in text
    heading, sigma = scene.layout.headings_deg[b], scene.layout.heading_sigmas_deg[b]
    assert abs(wrap(heading - truth)) < 4.0 and abs(wrap(heading - truth)) <= 2 * sigma + 0.5, (truth, text)
    assert len(scene) == 0  # matched features stay in scene.layout; they are not objects to ask about
    assert b in scene.cameras


def test_a_chain_of_auto_links_places_temple_views_90_degrees_apart(temple, tmp_path):
    # views 90 degrees apart share no features; the views between them link them pairwise
    chosen = [1, 3, 5, 7, 9, 11, 13]
    scene, texts = linked_ring(tmp_path, temple, chosen)
    headings = ground_headings(temple)
    assert "Floor plan from 7 views" in texts[-1]
    for k in chosen:
        truth = wrap(headings[k] - headings[chosen[0]])
        error = abs(wrap(scene.layout.headings_deg[k] - truth))
        assert error < 4.0 and error <= 2 * scene.layout.heading_sigmas_deg[k] + 0.5, (k, truth, texts[-1])
    assert abs(wrap(headings[13] - headings[1])) > 85


def test_narrow_field_of_view_dino_headings_come_with_an_honest_uncertainty(test_data, tmp_path):
    # an 8 degree field of view: turning about the dinosaur trades for sideways motion, so the stated
    # sigma must cover the error, and a link that pins the turn poorly must say so
    ring = upright_ring(test_data / "multiview-dino")
    chosen = list(range(9))
    scene, texts = linked_ring(tmp_path, ring, chosen)
    headings = ground_headings(ring)
    for k in chosen:
        truth = wrap(headings[k] - headings[0])
        assert abs(wrap(scene.layout.headings_deg[k] - truth)) <= 2 * scene.layout.heading_sigmas_deg[k] + 0.5, k
    for text in texts:
        first = text.splitlines()[0]
        sigma = float(first.split("° ± ")[1].split("°")[0])
        assert (sigma > 5) == ("pin the turn only to" in text), text
    assert max(scene.layout.heading_sigmas_deg.values()) > 5


def test_an_auto_link_of_redwood_frames_matches_the_trajectory(test_data, tmp_path):
    colors, _, poses, K = read_redwood(test_data / "rgbd-redwood")
    truth = yaw_pitch_roll(poses[0][:3, :3].T @ poses[4][:3, :3])[0]  # camera 4 in camera 0's frame
    frames = small_frames(tmp_path, [colors[0], colors[4]], [0, 4])
    scene = Scene()
    for frame in frames:
        scene.add_view(frame, K=scaled_K(K, WIDTH / colors[0].shape[1]))
    text = str(scene.link_views(frames[0], frames[1]))
    assert text.startswith("Linked views 0 and 4 by 12 matched features"), text
    assert abs(scene.layout.headings_deg[4] - truth) < 0.5 and abs(truth) > 0.5, (truth, text)


def test_views_that_share_nothing_give_no_reliable_matches_instead_of_a_heading(test_data, tmp_path, temple):
    def photo(path: Path) -> np.ndarray:
        return cv2.resize(np.asarray(Image.open(path).convert("RGB")), (640, 480), interpolation=cv2.INTER_AREA)

    single = test_data / "rgbd-single"
    pairs = [
        (photo(single / "TUM_color.png"), photo(single / "NYU_color.ppm")),
        (photo(test_data / "rgbd-redwood" / "color" / "00000.jpg"), photo(single / "SUN_color.jpg")),
        (photo(test_data / "multiview-dino" / "dino0001.png"), temple[0][0][80:560]),
    ]
    K = intrinsics(WIDTH, 150, 60.0)
    for first, second in pairs:
        frames = small_frames(tmp_path, [first, second], [0, 1])
        scene = Scene()
        scene.add_view(frames[0], K=K)
        scene.add_view(frames[1], K=K)
        text = str(scene.link_views(frames[0], frames[1], landmarks="auto"))
        assert text.startswith("No reliable matches between views 0 and 1") and "heading" in text, text
        assert "landmarks=[" in text  # what to do instead
        assert scene.layout is None and 1 not in scene.cameras


def test_a_view_that_matches_nothing_is_left_out_of_a_solved_plan(temple, tmp_path, test_data):
    frames = small_frames(
        tmp_path,
        [
            temple[0][0],
            temple[2][0],
            np.asarray(Image.open(test_data / "rgbd-single" / "TUM_color.png").convert("RGB")),
        ],
        [0, 2, 7],
    )
    scene, K = Scene(), scaled_K(temple[0][1], WIDTH / temple[0][0].shape[1])
    scene.add_view(frames[0], K=K)
    scene.add_view(frames[1], K=K)
    assert str(scene.link_views(frames[0], frames[1])).startswith("Linked views 0 and 2")
    solved = dict(scene.layout.headings_deg)
    scene.add_view(frames[2], K=K)
    assert str(scene.link_views(frames[1], frames[2])).startswith("No reliable matches between views 2 and 7")
    assert scene.layout.headings_deg == solved and 7 not in scene.cameras


def test_matches_on_one_small_region_are_warned_about(temple, tmp_path):
    # only a window of 140 x 130 px (6 % of the 480 x 640 view) shows anything; soft edges, so the window
    # itself gives no still features
    def window(rgb: np.ndarray) -> np.ndarray:
        mask = np.zeros(rgb.shape[:2], np.float32)
        mask[230:360, 170:310] = 1.0
        return (rgb * cv2.GaussianBlur(mask, (0, 0), 12)[..., None]).round().astype(np.uint8)

    frames = small_frames(tmp_path, [window(temple[5][0]), window(temple[6][0])], [5, 6], width=None)
    scene = Scene()
    for index, frame in zip((5, 6), frames, strict=True):
        scene.add_view(frame, K=temple[index][1])
    text = str(scene.link_views(5, 6))  # indices: add_view kept the Frames
    assert "WARNING: the agreeing matches sit in one small region of view 5" in text, text
    assert "check with named landmarks: scene.link_views(5, 6, landmarks=[...])" in text


def test_auto_links_say_what_they_need(temple, tmp_path):
    scene = Scene()
    scene.add_view(0, K=temple[0][1])
    scene.add_view(1, K=temple[1][1])
    with pytest.raises(ValueError, match=r"view 0 was given as an index only: pass the Frames"):
        scene.link_views(0, 1)
    with pytest.raises(ValueError, match="landmarks must be a list"):
        scene.link_views(0, 1, landmarks="matched")
    frames = small_frames(tmp_path, [temple[0][0], temple[1][0]], [0, 1], width=100)
    with pytest.raises(ValueError, match=r"view 0's intrinsics .* do not fit its 100x133 px frame"):
        scene.link_views(frames[0], frames[1])  # K is for the 480 x 640 photos


def test_link_views_by_matched_features_in_a_real_kernel(test_data, tmp_path):
    from spatialclaw import Kernel

    colors, _, poses, _ = read_redwood(test_data / "rgbd-redwood")
    paths = []
    for i in (0, 4):
        paths.append(str(tmp_path / f"room_{i}.png"))
        Image.fromarray(shrink(colors[i], WIDTH)).save(paths[-1])
    truth = yaw_pitch_roll(poses[0][:3, :3].T @ poses[4][:3, :3])[0]
    code = (
        "for f in frames:\n"
        "    scene.add_view(f, hfov_deg=62.7)\n"
        "print(scene.link_views(frames[0], frames[1]))\n"
        "print('heading', scene.layout.headings_deg[frames[1].index])"
    )
    with Kernel(frames=paths) as kernel:
        result = kernel.execute(code)
    assert result.error is None, result.to_text(3000)
    assert "by 12 matched features" in result.stdout, result.stdout
    heading = float(result.stdout.split("heading ")[-1])
    assert abs(heading - truth) < 0.5
