"""The HTML viewer: self-contained pages per episode and an index per run, rendered by a real
headless Chromium, showing the question and the images."""

from __future__ import annotations

import base64
import io
import re

import numpy as np
from PIL import Image

from spatialclaw.cli import main
from spatialclaw.trajectories.episode_viewer import write_views
from spatialclaw.trajectories.synthetic import write_synthetic_episode
from tests.trajectories.headless_chromium import headless_chromium, needs_chromium


def test_pages_are_self_contained_with_inline_images(tmp_path):
    ep = write_synthetic_episode(tmp_path / "run" / "a", steps=3, images_per_step=1)
    write_synthetic_episode(tmp_path / "run" / "b", steps=2, seed=9, complete=False)
    result = write_views(tmp_path / "run")
    assert result.index == tmp_path / "run" / "index.html"
    page = (ep.directory / "episode.html").read_text()
    sources = re.findall(r'<img alt="[^"]*" src="([^"]+)"', page)
    assert all(s.startswith("data:image/png;base64,") for s in sources)
    decoded = [base64.b64decode(s.split(",", 1)[1]) for s in sources]
    assert decoded == ep.frames + [png for images in ep.cell_images for png in images]
    assert not re.search(r'(src|href)="(https?:|/)', page), "no external resources"
    assert "Thinking about step 1." in page and "print(&#x27;done&#x27;)" in page
    index = result.index.read_text()
    assert 'href="a/episode.html"' in index and 'href="b/episode.html"' in index
    assert "incomplete" in (tmp_path / "run" / "b" / "episode.html").read_text()


def test_view_command_prints_the_path_and_honours_out(tmp_path, capsys):
    write_synthetic_episode(tmp_path / "run" / "a", steps=2)
    assert main(["view", str(tmp_path / "run"), "--out", str(tmp_path / "site")]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "site" / "index.html")
    assert (tmp_path / "site" / "episodes" / "a.html").is_file()
    assert main(["view", str(tmp_path / "run" / "a")]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "run" / "a" / "episode.html")
    assert main(["view", str(tmp_path / "nothing")]) == 2
    assert "does not exist" in capsys.readouterr().err


def _screenshot(tmp_path, page, name: str) -> np.ndarray:
    shot = tmp_path / f"{name}.png"
    run = headless_chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,1400", page.as_uri())
    assert run.returncode == 0 and shot.is_file(), run.stderr[-2000:]
    return np.asarray(Image.open(shot).convert("RGB")).astype(int)


@needs_chromium
def test_headless_chromium_renders_question_steps_and_images(tmp_path):
    question = "Which way does the blue mug point, seen from camera 0?"
    ep = write_synthetic_episode(tmp_path / "run" / "a", steps=3, seed=21, image_size=(120, 90), question=question)
    page = write_views(ep.directory).main

    dom = headless_chromium(tmp_path, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert question in dom.stdout
    assert dom.stdout.count('<section class="step"') == 3

    pixels = _screenshot(tmp_path, page, "shot")
    image_rows = []
    for png in ep.frames + ep.cell_images[0]:
        colour = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))[0, 0].astype(int)
        mask = np.abs(pixels - colour).max(axis=2) <= 3
        assert mask.sum() >= 0.9 * 120 * 90, f"image of colour {colour.tolist()} not visible ({mask.sum()} pixels)"
        image_rows.append(int(np.nonzero(mask.any(axis=1))[0][0]))

    # The question is painted: the same episode with another question of the same length differs on
    # screen, and only above the first frame (in the question box).
    other = write_synthetic_episode(
        tmp_path / "run2" / "a",
        steps=3,
        seed=21,
        image_size=(120, 90),
        question="Which way does the green cup face, seen from camera 1?",
    )
    changed = np.nonzero(
        np.abs(_screenshot(tmp_path, write_views(other.directory).main, "other") - pixels).max(axis=(1, 2))
    )[0]
    assert changed.size > 0, "changing the question changed nothing on screen"
    assert changed.max() < min(image_rows), "the question is drawn above the frames"


def test_side_calls_are_shown_under_their_step_and_kept_out_of_the_conversation(tmp_path):
    from spatialclaw.chat import Message
    from spatialclaw.export import episode_conversation
    from spatialclaw.trajectories.episode_log import TrajectoryWriter, load_episode

    ep = write_synthetic_episode(tmp_path / "ep", steps=3)
    before = [t.text for t in episode_conversation(load_episode(ep.directory)).turns]
    with TrajectoryWriter(ep.directory) as log:
        log.write(
            "model_call",
            step=1,
            purpose="vlm.ask",
            model="scripted:synthetic",
            params={},
            request={"messages": log.messages([Message.text("user", "Is the mug on the left?")])},
            response={"text": "Yes, on the left.", "reasoning": None},
            usage={},
            cost_usd=None,
            latency_s=0.1,
            error=None,
        )
    page = (write_views(ep.directory).main).read_text()
    assert "vlm.ask side call" in page and "Is the mug on the left?" in page and "Yes, on the left." in page
    assert "Step 1: look at frame 1." in page, "the step's own output is still the main call's"
    assert [t.text for t in episode_conversation(load_episode(ep.directory)).turns] == before
