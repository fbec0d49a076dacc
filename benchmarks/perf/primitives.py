"""Speed of the depth/reconstruction primitives, each against a baseline measured in the same run.

1. geom.backproject of a 1-megapixel depth map vs a naive per-pixel Python loop (same points).
2. depth() with a learned backend (a tiny random Depth Anything saved to a local folder and loaded with
   from_pretrained): cache hit vs cache miss (model already loaded, so the miss is inference + write).
3. reconstruct() on the five Redwood RGB-D frames (depth + intrinsics: the RGB-D path) vs the same frames
   RGB-only (SfM), with pose errors against trajectory.log.
4. motion() on 8 frames at 200 px (an exact virtual pan of a real photo) vs a bare OpenCV step (SIFT +
   homography per pair), and reconstruct() on 6 temple views at 200 px vs the same views at 640 px, with
   rotation errors against the ground truth.
4. Planar metrology (geom.find_plane_reference + find_color with an expected size + measurements) on exact
   perspective photos of an A4 sheet over a real texture (tests/planar_photos.py) at 200 and 1600 px wide,
   vs rectify_plane from the known corners; with the worst ratio and angle errors against ground truth.
5. scene.add_bearing + scene.perspective (with uncertainty sampling) on a 4-object layout vs
   geom.direction on the same positions.

Usage: python benchmarks/perf/primitives.py   (SPATIALCLAW_TEST_DATA overrides the data folder)
Prints a table, then one JSON object on the last line.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from functools import partial
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))  # the tiny-model builders shared with the tests


def best_of(repeats: int, function: Callable[[], object]) -> float:
    """Fastest wall time of ``repeats`` runs, seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def naive_backproject(depth: np.ndarray, K: np.ndarray) -> np.ndarray:
    fx, fy, cx, cy = K[0, 0], K[1, 1], K[0, 2], K[1, 2]
    out = []
    for y in range(depth.shape[0]):
        for x in range(depth.shape[1]):
            z = depth[y, x]
            if z > 0 and np.isfinite(z):
                out.append(((x - cx) * z / fx, (y - cy) * z / fy, z))
    return np.array(out)


def bench_backproject() -> dict[str, Any]:
    from spatialclaw.primitives.geometry import geom

    rng = np.random.default_rng(0)
    depth = rng.uniform(0.5, 5.0, size=(1000, 1000)).astype(np.float32)
    depth[rng.random(depth.shape) < 0.05] = 0.0
    K = np.array([[800.0, 0, 499.5], [0, 800.0, 499.5], [0, 0, 1]])
    fast = geom.backproject(depth, K)
    naive = naive_backproject(depth, K)
    assert np.allclose(fast, naive, atol=1e-5), "vectorised and naive backprojection disagree"
    t_fast = best_of(5, lambda: geom.backproject(depth, K))
    t_naive = best_of(1, lambda: naive_backproject(depth, K))
    return {
        "backproject_1mp_s": t_fast,
        "backproject_naive_s": t_naive,
        "backproject_speedup": t_naive / t_fast,
        "points": len(fast),
    }


def bench_cache() -> dict[str, Any]:
    from tiny_depth_models import save_tiny_depth_anything

    from spatialclaw.primitives.perception import cache
    from spatialclaw.primitives.perception.depth import depth

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SPATIALCLAW_CACHE"] = str(Path(tmp) / "cache")
        folder = save_tiny_depth_anything(Path(tmp) / "tiny-da")
        rng = np.random.default_rng(1)
        depth(rng.integers(0, 256, (480, 640, 3), dtype=np.uint8), model=folder)  # load the model once
        misses, hits = [], []
        for _ in range(5):
            image = rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)
            before = dict(cache.stats)
            misses.append(best_of(1, partial(depth, image, model=folder)))
            hits.append(best_of(1, partial(depth, image, model=folder)))
            assert cache.stats["misses"] == before["misses"] + 1 and cache.stats["hits"] == before["hits"] + 1
    miss, hit = float(np.median(misses)), float(np.median(hits))
    return {"depth_cache_miss_s": miss, "depth_cache_hit_s": hit, "depth_cache_speedup": miss / hit}


def rotation_deg(R: np.ndarray) -> float:
    return float(np.degrees(np.arccos(np.clip((np.trace(R) - 1) / 2, -1, 1))))


def bench_reconstruct() -> dict[str, Any]:
    from PIL import Image

    from spatialclaw.primitives.reconstruction.reconstruct import reconstruct

    root = Path(os.environ.get("SPATIALCLAW_TEST_DATA", REPO.parent / "shared" / "data")) / "rgbd-redwood"
    if not root.is_dir():
        print(f"(Redwood data not found at {root}: reconstruct benchmark skipped)")
        return {}
    colors = [np.asarray(Image.open(root / "color" / f"{i:05d}.jpg").convert("RGB")) for i in range(5)]
    depths = [np.asarray(Image.open(root / "depth" / f"{i:05d}.png")).astype(np.float32) / 1000.0 for i in range(5)]
    rows = [line.split() for line in (root / "trajectory.log").read_text().splitlines() if line.strip()]
    truth = [np.array(rows[5 * i + 1 : 5 * i + 5], dtype=float) for i in range(5)]
    K = np.array([[525.0, 0, 319.5], [0, 525.0, 239.5], [0, 0, 1]])
    figures: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, kwargs in (("rgbd", {"depth": depths}), ("sfm_rgb_only", {"depth": None})):
            start = time.perf_counter()
            rec = reconstruct(colors, intrinsics=K, **kwargs)
            elapsed = time.perf_counter() - start
            t_err, r_err = [], []
            for i in np.flatnonzero(rec.registered)[1:]:
                est = np.linalg.inv(rec.poses[0]) @ rec.poses[i]
                gt = np.linalg.inv(truth[0]) @ truth[i]
                r_err.append(rotation_deg(est[:3, :3].T @ gt[:3, :3]))
                t_err.append(float(np.linalg.norm(est[:3, 3] - gt[:3, 3])))
            figures[f"reconstruct_{name}_s"] = elapsed
            figures[f"reconstruct_{name}_registered"] = int(rec.registered.sum())
            figures[f"reconstruct_{name}_max_rot_err_deg"] = max(r_err) if r_err else None
            if rec.metric:
                figures[f"reconstruct_{name}_max_trans_err_m"] = max(t_err) if t_err else None
    figures["reconstruct_sfm_over_rgbd_time"] = figures["reconstruct_sfm_rgb_only_s"] / figures["reconstruct_rgbd_s"]
    return figures


def bench_metrology() -> dict[str, Any]:
    from itertools import combinations

    import planar_photos as pp

    from spatialclaw.primitives.display.color import find_color
    from spatialclaw.primitives.geometry import geom

    root = Path(os.environ.get("SPATIALCLAW_TEST_DATA", REPO.parent / "shared" / "data"))
    texture = root / "rgbd-redwood" / "color" / "00000.jpg"
    canvas = pp.table_canvas(texture)
    colours = {"red": "red", "blue": "blue", "green": "green", "pale_yellow": "yellow", "pale_pink": "pink"}
    figures: dict[str, Any] = {}
    for width in (200, 1600):
        photo = pp.render(texture, width, canvas=canvas)

        def measure(photo: Any = photo) -> tuple[Any, dict[str, Any]]:
            plane = geom.find_plane_reference(photo.image, size=pp.SHEET, color="white")
            dots = {
                n: find_color(photo.image, c, expected_size=0.022, rectified=plane, min_area=2)[0]
                for n, c in colours.items()
            }
            return plane, dots

        plane, dots = measure()
        truth = {n: np.array(pp.DOTS[n][0]) for n in colours}
        long_pairs = [p for p in combinations(colours, 2) if np.linalg.norm(truth[p[0]] - truth[p[1]]) >= 0.12]
        ratio_err = max(
            abs(
                plane.ratio((dots[a], dots[b]), (dots[c], dots[d])).value
                / (np.linalg.norm(truth[a] - truth[b]) / np.linalg.norm(truth[c] - truth[d]))
                - 1
            )
            for (a, b), (c, d) in combinations(long_pairs, 2)
        )
        angle_err = 0.0
        for a, v, b in combinations(colours, 3):
            u, w = truth[a] - truth[v], truth[b] - truth[v]
            expected = np.degrees(np.arccos(u @ w / np.linalg.norm(u) / np.linalg.norm(w)))
            angle_err = max(angle_err, abs(plane.angle(dots[a], dots[v], dots[b]).value - expected))

        def rectify_given_corners(photo: Any = photo) -> object:
            return geom.rectify_plane(photo.image, photo.sheet_corners_px(), size=pp.SHEET)

        t_full = best_of(3, measure)
        t_base = best_of(3, rectify_given_corners)
        figures[f"metrology_{width}px_s"] = t_full
        figures[f"metrology_{width}px_over_rectify_given_corners"] = t_full / t_base
        figures[f"metrology_{width}px_worst_ratio_err_pct"] = 100 * ratio_err
        figures[f"metrology_{width}px_worst_angle_err_deg"] = angle_err
        within = 0
        for tilt in (30, 45, 60):  # a pose sweep at JPEG quality 70: ratios within 1%, angles 1 deg
            for yaw in (-30, 0, 30):
                swept = pp.render(
                    texture, width, canvas=canvas, tilt_deg=tilt, yaw_deg=yaw, jpeg_quality=70, seed=tilt + yaw
                )
                try:
                    plane = geom.find_plane_reference(swept.image, size=pp.SHEET, color="white")
                    found = {
                        n: find_color(swept.image, c, expected_size=0.022, rectified=plane, min_area=2)[0]
                        for n, c in colours.items()
                    }
                except (ValueError, IndexError):
                    continue
                ok = all(
                    abs(
                        plane.ratio((found[a], found[b]), (found[c], found[d])).value
                        / (np.linalg.norm(truth[a] - truth[b]) / np.linalg.norm(truth[c] - truth[d]))
                        - 1
                    )
                    < 0.01
                    for (a, b), (c, d) in combinations(long_pairs, 2)
                )
                within += int(ok)
        figures[f"metrology_{width}px_sweep_poses_within_1pct_of_9"] = within
    return figures


def bench_perspective() -> dict[str, Any]:
    from spatialclaw.primitives.geometry import geom
    from spatialclaw.primitives.scene.memory import Scene
    from spatialclaw.primitives.scene.perspective import Perspective

    K = np.array([[160.0, 0, 99.5], [0, 160.0, 74.5], [0, 0, 1]])
    pose = np.eye(4)
    pose[:3, :3] = np.array([[1.0, 0, 0], [0, 0, 1.0], [0, -1.0, 0]])
    layout = {"sofa": (-1.0, 4.0, 0.4), "tv": (1.5, 5.0, 0.8), "lamp": (-2.0, 2.5, 1.2), "plant": (0.6, 3.0, 0.5)}

    def with_bearings() -> Perspective:
        scene = Scene()
        scene.add_camera(0, pose)
        for name, p in layout.items():
            uv = geom.project(np.array([p]), K, pose)[0][0]
            scene.add_bearing(name, uv, distance=float(np.linalg.norm(p)), frame=0, K=K)
        return scene.perspective("lamp", standing_at="sofa", facing="tv")

    t = best_of(5, with_bearings)
    t_base = best_of(5, lambda: [geom.direction(np.array(layout[n]), np.array(layout["sofa"]), pose) for n in layout])
    return {"perspective_4_bearings_s": t, "perspective_over_direction": t / t_base}


def bench_small_frames() -> dict[str, Any]:
    """motion() on 8 frames of an exact virtual pan of a real Redwood photo at 200 px, against a bare OpenCV
    step (SIFT + homography RANSAC on the same pairs); reconstruct() on 6 temple views at 200 px against
    the same 6 views at full size (640 px). Rotation errors against the truth."""
    import cv2
    from PIL import Image
    from virtual_camera import redwood_frame, rotation_ypr, scaled_K, shrink, turning_sequence

    from spatialclaw.primitives.motion.estimate import motion
    from spatialclaw.primitives.reconstruction.reconstruct import reconstruct

    data = Path(os.environ.get("SPATIALCLAW_TEST_DATA", REPO.parent / "shared" / "data"))
    if not (data / "rgbd-redwood").is_dir() or not (data / "multiview-temple").is_dir():
        print(f"(shared data not found at {data}: small-frame benchmarks skipped)")
        return {}
    rgb, _, K = redwood_frame(data)
    frames = turning_sequence(rgb, K, [rotation_ypr(5.0 * i) for i in range(8)], width=200)
    K_small = scaled_K(K, 200 / 640)

    def bare_opencv() -> None:
        sift = cv2.SIFT.create()
        for a, b in pairwise(frames):
            ka, da = sift.detectAndCompute(cv2.cvtColor(a, cv2.COLOR_RGB2GRAY), None)
            kb, db = sift.detectAndCompute(cv2.cvtColor(b, cv2.COLOR_RGB2GRAY), None)
            pairs = [m for m, n in cv2.BFMatcher().knnMatch(da, db, k=2) if m.distance < 0.8 * n.distance]
            if len(pairs) >= 4:
                cv2.findHomography(
                    np.array([ka[m.queryIdx].pt for m in pairs], dtype=np.float32),
                    np.array([kb[m.trainIdx].pt for m in pairs], dtype=np.float32),
                    cv2.RANSAC,
                    1.5,
                )

    figures: dict[str, Any] = {}
    motion(frames[:2], intrinsics=K_small)  # imports (scipy.optimize) and OpenCV start-up, outside the timing
    start = time.perf_counter()
    result = motion(frames, intrinsics=K_small)
    figures["motion_8_frames_200px_s"] = time.perf_counter() - start
    figures["motion_max_pan_error_deg"] = float(np.max(np.abs(result.yaw_deg - 5.0)))
    figures["motion_verdicts_right"] = int(sum(kind == "rotation" for kind in result.kinds))
    start = time.perf_counter()
    calibrated = motion(frames)
    figures["motion_8_frames_self_calibrated_s"] = time.perf_counter() - start
    figures["motion_self_calibrated_max_pan_error_deg"] = float(np.max(np.abs(calibrated.yaw_deg - 5.0)))
    figures["bare_opencv_homographies_s"] = best_of(3, bare_opencv)
    figures["motion_over_bare_opencv"] = figures["motion_8_frames_200px_s"] / figures["bare_opencv_homographies_s"]

    folder = data / "multiview-temple"
    par = {
        line.split()[0]: np.array(line.split()[1:], float)
        for line in (folder / "templeR_par.txt").read_text().splitlines()[1:]
    }
    names = sorted(p.name for p in folder.glob("*.png"))[:6]
    full = [np.asarray(Image.open(folder / n).convert("RGB")) for n in names]
    truth = [par[n][9:18].reshape(3, 3) for n in names]  # world-to-camera rotations
    for label, images in (("small_200px", [shrink(image, 200) for image in full]), ("full_640px", full)):
        start = time.perf_counter()
        rec = reconstruct(images, depth=None)
        figures[f"reconstruct_6_{label}_s"] = time.perf_counter() - start
        figures[f"reconstruct_6_{label}_registered"] = int(rec.registered.sum())
        errors = []
        for i in np.flatnonzero(rec.registered)[1:]:
            estimated = rec.poses[0][:3, :3].T @ rec.poses[i][:3, :3]  # camera i in camera 0's frame
            expected = truth[0] @ truth[i].T
            errors.append(rotation_deg(estimated.T @ expected))
        figures[f"reconstruct_6_{label}_max_rel_rot_err_deg"] = max(errors) if errors else None
    figures["reconstruct_small_over_full_time"] = (
        figures["reconstruct_6_small_200px_s"] / figures["reconstruct_6_full_640px_s"]
    )
    return figures


def main() -> None:
    results: dict[str, Any] = {}
    results.update(bench_backproject())
    results.update(bench_cache())
    results.update(bench_reconstruct())
    results.update(bench_small_frames())
    results.update(bench_metrology())
    results.update(bench_perspective())
    print(f"{'measure':<42}{'value':>14}")
    for key, value in results.items():
        text = f"{value:.4g}" if isinstance(value, float) else str(value)
        print(f"{key:<42}{text:>14}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
