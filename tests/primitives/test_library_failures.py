"""A library that fails on degenerate input fails one pair or frame, never the tool: every OpenCV function a
public tool calls is made to raise ``cv2.error`` in turn (the way OpenCV 5's five-point solver fails an
assertion on degenerate matches), and the tool must still return its readout, or refuse with its own
documented error that names the library's reason; no ``cv2.error`` reaches the caller."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from PIL import Image

from spatialclaw.primitives.frames.load import load_images
from spatialclaw.primitives.geometry.geom import camera_tilt, find_plane_reference
from spatialclaw.primitives.motion.estimate import motion
from spatialclaw.primitives.perception.track import track
from spatialclaw.primitives.reconstruction.reconstruct import reconstruct
from spatialclaw.primitives.reconstruction.result import ReconstructionError
from spatialclaw.primitives.runtime.library_failures import LibraryFailure, failure_reason, guarded, library_of
from spatialclaw.primitives.scene.memory import Scene
from tests.virtual_camera import redwood_frame, rotation_ypr, scaled_K, turning_sequence

ROOT = Path(__file__).resolve().parents[2]
WIDTH = 160

# every cv2 function or class the kernel side names (constants and the error type excluded)
_NAMES = sorted(
    {
        name
        for path in (ROOT / "primitives").rglob("*.py")
        for name in re.findall(r"\bcv2\.([A-Za-z_]\w*)", path.read_text(encoding="utf-8"))
        if name != "error" and callable(getattr(cv2, name, None))
    }
)


class _Broken:
    """Stands in for an OpenCV function or class: calling it, or anything reached through it, raises."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise cv2.error(f"OpenCV(5.1.0) /io/opencv/x.cpp:1: error: (-215:Assertion failed) injected in '{self.name}'")

    def __getattr__(self, attribute: str) -> _Broken:
        return _Broken(f"{self.name}.{attribute}")


class _Spy:
    """Forwards to the real OpenCV name and records that a tool reached it."""

    def __init__(self, name: str, real: Any, seen: set[str]) -> None:
        self.name, self.real, self.seen = name, real, seen

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.seen.add(self.name)
        return self.real(*args, **kwargs)

    def __getattr__(self, attribute: str) -> Any:
        self.seen.add(self.name)
        return getattr(self.real, attribute)


@pytest.fixture(scope="module")
def inputs(test_data, tmp_path_factory) -> dict[str, Any]:
    rgb, depth, K = redwood_frame(test_data, 0)
    K_small = scaled_K(K, WIDTH / rgb.shape[1])
    pans = turning_sequence(rgb, K, [rotation_ypr(yaw) for yaw in (0, 3, 6)], width=WIDTH)
    folder = tmp_path_factory.mktemp("frames")
    paths = []
    for i, image in enumerate(pans):
        paths.append(folder / f"{i}.png")
        Image.fromarray(image).save(paths[-1])
    small_depth = np.asarray(
        Image.fromarray(np.nan_to_num(depth).astype(np.float32)).resize(pans[0].shape[1::-1], Image.NEAREST)
    )
    sheet = np.full((120, 160, 3), 90, np.uint8)
    sheet[30:90, 40:125] = 245  # a white sheet on a grey table
    return {"pans": pans, "frames": load_images(paths), "K": K_small, "depth": small_depth, "sheet": sheet}


def _link(inputs: dict[str, Any]) -> Any:
    scene = Scene()
    for frame in inputs["frames"][:2]:
        scene.add_view(frame, K=inputs["K"])
    return scene.link_views(inputs["frames"][0], inputs["frames"][1])


TOOLS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "motion": lambda x: motion(x["pans"], intrinsics=x["K"]),
    "motion, self-calibrated, with an object": lambda x: motion(x["pans"], object=(50, 40, 90, 80)),
    "reconstruct, two views": lambda x: reconstruct(x["pans"][:2], depth=None, intrinsics=x["K"]),
    "reconstruct, RGB-D": lambda x: reconstruct(x["pans"], depth=[x["depth"]] * 3, intrinsics=x["K"]),
    "camera_tilt": lambda x: camera_tilt(x["pans"][0], K=x["K"]),
    "find_plane_reference": lambda x: find_plane_reference(x["sheet"], size=(0.297, 0.210)),
    "track (flow)": lambda x: track(x["pans"], boxes=(50, 40, 90, 80), method="flow"),
    "scene.link_views": _link,
}


def _spied(tool: Callable[[dict[str, Any]], Any], inputs: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> set[str]:
    seen: set[str] = set()
    with monkeypatch.context() as patch:
        for name in _NAMES:
            patch.setattr(cv2, name, _Spy(name, getattr(cv2, name), seen))
        tool(inputs)
    return seen


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_every_opencv_call_of_a_tool_may_fail_and_the_tool_still_reads_out(tool, inputs, monkeypatch):
    used = _spied(TOOLS[tool], inputs, monkeypatch)
    assert used, f"{tool} called no OpenCV function the spy saw"
    escaped = {}
    for name in sorted(used):
        with monkeypatch.context() as patch:
            patch.setattr(cv2, name, _Broken(name))
            try:
                result = TOOLS[tool](inputs)
            except (ValueError, ReconstructionError) as error:  # the tool's own refusal must name the failure
                if "OpenCV failed" not in str(error) and "injected" in str(error):
                    escaped[name] = f"{type(error).__name__}: {error}"
                continue
            except Exception as error:
                escaped[name] = f"{type(error).__name__}: {str(error)[:160]}"
                continue
        text = str(result)
        assert isinstance(text, str) and text
    assert escaped == {}, f"{tool}: a failing OpenCV call escaped as a raw exception"


def test_a_failing_pair_is_unknown_with_the_reason_and_the_other_pairs_are_measured(inputs, monkeypatch):
    real = cv2.findEssentialMat
    calls = []

    def fails_on_the_second_pair(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            raise cv2.error(
                "OpenCV(5.1.0) /io/x.cpp:1601: error: (-215:Assertion failed) coeffs in function 'solvePoly'"
            )
        return real(*args, **kwargs)

    monkeypatch.setattr(cv2, "findEssentialMat", fails_on_the_second_pair)
    result = motion(inputs["pans"], intrinsics=inputs["K"])
    assert [step.status for step in result.steps] == ["measured", "measured"]  # the rotation model decides
    # without the rotation model's answer to fall back on, a failure becomes that pair's "unknown"
    monkeypatch.setattr(cv2, "findHomography", _Broken("findHomography"))
    monkeypatch.setattr(cv2, "undistortPoints", _Broken("undistortPoints"))
    broken = motion(inputs["pans"], intrinsics=inputs["K"])
    assert all(step.status == "unknown" for step in broken.steps)
    assert "OpenCV failed" in broken.steps[0].reason and "\n" not in broken.steps[0].reason
    assert "unknown" in str(broken)


def test_the_guard_turns_only_library_failures_into_a_reason():
    def library() -> None:
        np.linalg.inv(np.zeros((2, 2)))

    assert guarded(library, lambda reason: reason).startswith("NumPy failed (LinAlgError: Singular matrix")

    def scipy_inside() -> None:
        from scipy.optimize import least_squares

        least_squares(lambda p: np.array([np.nan]), [0.0])

    assert guarded(scipy_inside, lambda reason: reason).startswith("SciPy failed (ValueError")

    def ours() -> None:
        raise ValueError("pass two frames")

    with pytest.raises(ValueError, match="pass two frames"):
        guarded(ours, lambda reason: reason)
    assert library_of(MemoryError()) is None
    error = cv2.error(
        "OpenCV(5.1.0) /io/opencv/modules/core/src/mathfuncs.cpp:1601: error: (-215:Assertion failed) x\n"
    )
    assert failure_reason(error) == "OpenCV failed (error: (-215:Assertion failed) x)"
    assert failure_reason(LibraryFailure("pycolmap failed (RuntimeError: x)")) == "pycolmap failed (RuntimeError: x)"


def test_motion_outside_the_guard_is_unchanged(inputs):
    """The guard is transparent: the same pan is measured with and without it in the call path."""
    steps = motion(inputs["pans"], intrinsics=inputs["K"]).steps
    assert [s.kind for s in steps] == ["rotation", "rotation"]
    assert [round(s.yaw_deg) for s in steps] == [3, 3]
