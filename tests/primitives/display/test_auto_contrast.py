"""Auto contrast never makes a dark frame less readable (issue 32, item 4): on a real frame darkened to a
200 px JPEG, the enhanced copy keeps the edge structure of the real scene and invents no colour (the old
stretch turned JPEG colour noise into coloured blocks and bent the edges with a strong gamma)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from spatialclaw.primitives.display.color_mask import color_space
from spatialclaw.primitives.display.look import auto_contrast

DATA = Path(os.environ.get("SPATIALCLAW_TEST_DATA", Path(__file__).resolve().parents[4] / "shared" / "data"))


def _edges(image: np.ndarray) -> np.ndarray:
    return np.hypot(*np.gradient(image.astype(np.float64).mean(axis=2))).ravel()


def _agreement(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.corrcoef(_edges(a), _edges(b))[0, 1])


@pytest.mark.parametrize("name, darkening", [("00000.jpg", 0.08), ("00002.jpg", 0.15)])
def test_auto_contrast_keeps_the_scene_edges_and_invents_no_colour(name, darkening):
    path = DATA / "rgbd-redwood" / "color" / name
    if not path.is_file():
        pytest.skip(f"{path} is missing (set SPATIALCLAW_TEST_DATA)")
    truth = np.asarray(Image.open(path).convert("RGB").resize((200, 150), Image.Resampling.LANCZOS))
    buffer = io.BytesIO()
    Image.fromarray(np.clip(truth * darkening, 0, 255).astype(np.uint8)).save(buffer, "JPEG", quality=70)
    dark = np.asarray(Image.open(buffer).convert("RGB"))
    shown = auto_contrast(dark)
    assert shown.mean() > 3 * dark.mean()  # it does brighten
    assert _agreement(shown, truth) >= _agreement(dark, truth) - 0.01  # no edge lost or bent
    assert color_space(shown).chroma.mean() <= 1.25 * color_space(truth).chroma.mean()  # no coloured blocks
