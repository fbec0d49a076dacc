"""The session prompt fits 16,000 characters with no manual entry cut mid-word (issue 32, item 4), for a
plain four-option question and for the longest dev-set question (its generator's text, with its six key
frames and their source indices), with and without the VLM."""

from __future__ import annotations

import re

import pytest

from spatialclaw.agent.question import make_task
from spatialclaw.interactive.session_prompt import MAX_PROMPT_CHARS, build_session_prompt
from spatialclaw.task import FrameSpec

# the longest dev-set question (``frame_number``, 331 characters, from benchmarks/devset/clips.py)
LONGEST = (
    "The images are key frames of a 32-frame video (frames numbered 0-31; the images are frames 1, 10, 15, 22, "
    "25 and 30, in order). The camera's horizontal field of view is 44 degrees and it only rotates. By how many "
    "degrees did the camera pan between frame 1 and frame 30? Answer positive for a pan to the right, negative "
    "to the left."
)
KEY_FRAMES = [1, 10, 15, 22, 25, 30]


@pytest.mark.parametrize("vlm", [False, True])
@pytest.mark.parametrize("which", ["plain", "longest"])
def test_the_session_prompt_fits_and_cuts_no_entry_mid_word(which, vlm, tmp_path):
    if which == "plain":
        task = make_task("Where is the sofa? A. left B. right C. behind D. front")
    else:
        paths = [f"/data/frames0_{i:02d}.png" for i in KEY_FRAMES]  # only their names reach the prompt
        task = make_task(LONGEST, inputs=[FrameSpec.images(paths, indices=KEY_FRAMES)])
    prompt = build_session_prompt(task, "s1", tmp_path / "s1", 30, vlm_available=vlm)
    assert len(prompt) <= MAX_PROMPT_CHARS == 16_000, len(prompt)
    cut = [line for line in prompt.splitlines() if "…" in line]
    for line in cut:
        assert line.endswith(" …") and not re.search(r"\w…", line), line  # ends after a whole word
        assert line.count("``") % 2 == 0, line  # no code span left open
    assert "## Your task" in prompt and (LONGEST if which == "longest" else "Where is the sofa?") in prompt
