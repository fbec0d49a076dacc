"""``spatialclaw run`` and ``spatialclaw demo`` as a user runs them: separate processes, real kernels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from spatialclaw.commands.demo import CALIBRATION, SCRIPT
from spatialclaw.testing import ScriptedProvider
from spatialclaw.trajectories.episode_log import load_episode
from tests.agent_helpers import cell, photo
from tests.cli_process import cli_env, spatialclaw


def test_run_streams_each_step_and_ends_with_the_answer(tmp_path):
    image = photo(tmp_path)
    script = [
        cell("print('size', frames[0].size)\nshow(frames[0].array[:40, :50], label='corner')"),
        cell("answer('B')"),
    ]
    with ScriptedProvider(script) as server:
        done = spatialclaw(
            "run",
            "--model",
            f"openai-compat:scripted@{server.url}",
            "--frames",
            str(image),
            "--question",
            "Left or right?",
            "--choices",
            "left",
            "right",
            "--max-steps",
            "5",
            "--out",
            str(tmp_path / "ep"),
        )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "answer: B"
    assert "step 1/5" in lines and "step 2/5" in lines
    assert "  │ show(frames[0].array[:40, :50], label='corner')" in lines
    assert "  │ size (256, 256)" in lines
    image_lines = [line for line in lines if line.startswith("  image: ")]
    assert len(image_lines) == 1 and image_lines[0].endswith("(corner [6x upscale of 50x40], 300x240)")
    assert Path(image_lines[0].split()[1]).is_file()
    assert load_episode(tmp_path / "ep").answer == "B"


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--model", "openai-compat:m@http://127.0.0.1:9/v1", "--frames", "missing.jpg"],
            "input file(s) not found: missing.jpg",
        ),
        (["--model", "gpt-4o", "--frames", "IMAGE"], "cannot read model spec 'gpt-4o'"),
        (
            ["--model", "openai-compat:m@http://127.0.0.1:9/v1", "--frames", "IMAGE", "--fps", "2"],
            "--fps and --count apply to --video only",
        ),
    ],
)
def test_run_rejects_bad_arguments_with_a_clear_message(tmp_path, args, message):
    image = photo(tmp_path)
    args = [str(image) if a == "IMAGE" else a for a in args]
    done = spatialclaw("run", *args, "--question", "q", "--out", str(tmp_path / "ep"))
    assert done.returncode == 2
    assert message in done.stderr


def ground_truth_motorcycle_depth() -> float:
    """Median ground-truth depth over the demo's measured box, from the Middlebury disparity map."""
    import skimage.data

    disparity = skimage.data.stereo_motorcycle()[2]
    h, w = disparity.shape
    box = disparity[int(h * 0.3) : int(h * 0.8), int(w * 0.25) : int(w * 0.75)]
    box = box[np.isfinite(box)]
    return float(np.median(CALIBRATION["focal_px"] * CALIBRATION["baseline_m"] / (box + CALIBRATION["doffs_px"])))


def test_demo_without_a_model_says_it_is_scripted_and_answers_from_real_stereo(tmp_path):
    done = spatialclaw("demo", "--out", str(tmp_path / "demo"))
    assert done.returncode == 0, done.stderr
    assert "SCRIPTED REPLAY" in done.stdout.splitlines()[0]
    last = done.stdout.splitlines()[-1]
    assert last.startswith("answer: ")
    answer = float(last.split(": ")[1])
    assert answer == pytest.approx(ground_truth_motorcycle_depth(), rel=0.05)
    episode = load_episode(tmp_path / "demo")
    assert episode.header["model"]["backend"] == "ScriptedModel"
    assert "consistent pixels" in episode.cells()[1][1].stdout


def test_demo_uses_a_configured_model(tmp_path):
    with ScriptedProvider(SCRIPT) as server:
        done = spatialclaw(
            "demo",
            "--out",
            str(tmp_path / "demo"),
            env=cli_env(SPATIALCLAW_MODEL=f"openai-compat:scripted@{server.url}"),
        )
        requests = len(server.requests)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("demo with model openai-compat:scripted@")
    assert "SCRIPTED REPLAY" not in done.stdout
    assert requests == len(SCRIPT)
    assert load_episode(tmp_path / "demo").header["model"]["backend"] == "OpenAIModel"


def test_quiet_prints_only_the_answer(tmp_path):
    image = photo(tmp_path)
    with ScriptedProvider([cell("answer('A')")]) as server:
        done = spatialclaw(
            "run",
            "--model",
            f"openai-compat:scripted@{server.url}",
            "--frames",
            str(image),
            "--question",
            "q",
            "--choices",
            "x",
            "y",
            "--quiet",
            "--out",
            str(tmp_path / "ep"),
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "answer: A\n"
