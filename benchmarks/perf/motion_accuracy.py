"""Accuracy of motion() on real photos moved by exact virtual cameras, at benchmark resolution (200 px).

Turning cameras (pans, tilts, rolls, zooms) warp a real photo by K_b diag(z, z, 1) R K^-1 (exact for any
scene depth); translating cameras re-render a real RGB-D frame with its measured depth (z-buffered forward
warp). Sources: Redwood frame 0, and the TUM, NYU v2 and SUN RGB-D single frames of the shared data.
For every case it prints the measured yaw / pitch / roll against the truth and whether the verdict
(rotation vs translation, and the translation's main direction) is right; the last line is JSON.

Usage: python benchmarks/perf/motion_accuracy.py   (SPATIALCLAW_TEST_DATA overrides the data folder)
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
from PIL import Image

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from virtual_camera import redwood_frame, rotation_ypr, scaled_K, translating_sequence, turning_sequence  # noqa: E402

from spatialclaw.primitives.motion.angles import yaw_pitch_roll  # noqa: E402
from spatialclaw.primitives.motion.estimate import motion  # noqa: E402

K_FULL = np.array([[525.0, 0, 319.5], [0, 525.0, 239.5], [0, 0, 1.0]])  # the rendering camera (exact by construction)


def rgbd_sources(data: Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """name -> (rgb, depth in metres, NaN = none) for the real RGB-D frames (README conventions)."""
    single = data / "rgbd-single"
    rgb, depth, _ = redwood_frame(data)
    out = {"redwood": (rgb, depth)}
    tum = np.asarray(Image.open(single / "TUM_depth.png")).astype(np.float64) / 5000.0
    raw = np.frombuffer((single / "NYU_depth.pgm").read_bytes()[-640 * 480 * 2 :], dtype="<u2").reshape(480, 640)
    nyu = np.where(raw < 2047, 351.3 / (1092.5 - raw.astype(np.float64)), np.nan)
    sun_raw = np.asarray(Image.open(single / "SUN_depth.png")).astype(np.uint16)
    sun = ((sun_raw >> 3) | (sun_raw << 13)).astype(np.float64) / 1000.0
    for name, d in (("tum", tum), ("nyu", nyu), ("sun", sun)):
        colour = {"tum": "TUM_color.png", "nyu": "NYU_color.ppm", "sun": "SUN_color.jpg"}[name]
        d = np.where(np.isfinite(d) & (d > 0.2) & (d < 10), d, np.nan)
        out[name] = (np.asarray(Image.open(single / colour).convert("RGB")), d)
    return out


TURNS = [
    (1, 0, 0),
    (3, 0, 0),
    (5, 0, 0),
    (10, 0, 0),
    (20, 0, 0),
    (30, 0, 0),
    (-8, 0, 0),
    (0, 5, 0),
    (0, -10, 0),
    (0, 0, 5),
    (8, 4, 0),
    (-6, -3, 2),
]
ZOOMS = [1.05, 1.15, 0.9]
MOVES = [
    ((0.15, 0, 0), "right"),
    ((-0.15, 0, 0), "left"),
    ((0, 0, 0.3), "forward"),
    ((0, 0, -0.3), "back"),
    ((0, -0.1, 0), "up"),
    ((0, 0.1, 0), "down"),
]


def main() -> None:
    data = Path(os.environ.get("SPATIALCLAW_TEST_DATA", REPO.parent / "shared" / "data"))
    sources = rgbd_sources(data)
    K = scaled_K(K_FULL, 200 / 640)
    rows, pan_errors, angle_errors, verdicts = [], [], [], []
    for name, (rgb, depth) in sources.items():
        for yaw, pitch, roll in TURNS:
            frames = turning_sequence(rgb, K_FULL, [np.eye(3), rotation_ypr(yaw, pitch, roll)])
            step = motion(frames, intrinsics=K).steps[0]
            ok = step.kind == "rotation"
            # the angles are all known or all None (then NaN)
            measured = [np.nan if a is None else a for a in (step.yaw_deg, step.pitch_deg, step.roll_deg)]
            error = float(np.max(np.abs(np.subtract(measured, (yaw, pitch, roll)))))
            angle_errors.append(error)
            if pitch == roll == 0:
                pan_errors.append(error)
            verdicts.append(ok)
            rows.append(
                f"{name:8} turn {yaw:+4}/{pitch:+3}/{roll:+3} deg -> {step.kind:11} "
                f"({measured[0]:+6.2f}, {measured[1]:+6.2f}, {measured[2]:+6.2f}) max err {error:.2f}"
            )
        for zoom in ZOOMS:
            frames = turning_sequence(rgb, K_FULL, [np.eye(3), np.eye(3)], zooms=[1.0, zoom])
            step = motion(frames, intrinsics=K).steps[0]
            verdicts.append(step.kind == "rotation")
            rows.append(f"{name:8} zoom x{zoom:.2f} -> {step.kind:11} zoom {step.zoom:.3f}")
        for centre, word in MOVES:
            frames = translating_sequence(rgb, depth, K_FULL, [np.zeros(3), np.array(centre)])
            step = motion(frames, intrinsics=K).steps[0]
            main_word = (step.translation_words or "").split(" and ")[0]
            ok = step.kind == "translation" and main_word == word
            verdicts.append(ok)
            rows.append(
                f"{name:8} move {word:8} -> {step.kind:11} {step.translation_words or '':20} "
                f"parallax {step.parallax_px:.2f} px rotation {step.rotation_deg or 0:.2f} deg {'ok' if ok else 'WRONG'}"
            )
    # one longer sequence: self-calibrated focal, 8 frames, 5 degrees per frame
    rgb = sources["redwood"][0]
    frames = turning_sequence(rgb, K_FULL, [rotation_ypr(5.0 * i) for i in range(8)])
    calibrated = motion(frames)
    chained = yaw_pitch_roll(calibrated.orientations()[-1])[0]
    print("\n".join(rows))
    summary = {
        "cases": len(verdicts),
        "verdicts_right": int(sum(verdicts)),
        "max_pan_error_deg": max(pan_errors),
        "median_pan_error_deg": float(np.median(pan_errors)),
        "max_rotation_angle_error_deg": max(angle_errors),
        "self_calibrated_focal_px": float(calibrated.intrinsics[0, 0]),
        "true_focal_px": float(K[0, 0]),
        "self_calibrated_max_pan_error_deg": float(np.max(np.abs(calibrated.yaw_deg - 5.0))),
        "self_calibrated_chained_35deg_error_deg": float(chained - 35.0),
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
