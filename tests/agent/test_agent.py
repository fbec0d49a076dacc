"""Whole episodes: a real kernel, real SDK clients, a local server playing the model."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from PIL import Image

from spatialclaw import Kernel
from spatialclaw.agent.config import AgentConfig
from spatialclaw.agent.loop import Agent
from spatialclaw.agent.prompting import prompt_version
from spatialclaw.task import FrameSpec, Task
from spatialclaw.testing import Reply, ScriptedProvider, unauthorized
from spatialclaw.trajectories.episode_log import load_episode
from tests.agent_helpers import anthropic, cell, openai_compat, openai_images, openai_text, photo


@pytest.fixture(scope="module")
def kernel():
    with Kernel() as k:
        yield k


@pytest.fixture
def task(tmp_path):
    return Task(
        "Is the person on the left or the right?",
        inputs=[FrameSpec.images([photo(tmp_path)])],
        choices=["left", "right"],
        task_id="astronaut",
    )


def test_show_images_reach_the_next_request_through_the_openai_sdk(task, kernel, tmp_path):
    script = [
        cell(
            "crop = frames[0].array[10:90, 20:120]\nprint(crop.shape)\nshow(crop, label='crop', min_side=0)",
            "Let me crop.",
        ),
        cell("answer('B')"),
    ]
    with ScriptedProvider(script) as server:
        result = Agent(openai_compat(server)).run(task, tmp_path / "ep", kernel=kernel)
    assert result.status == "answered" and result.answer == "B" and result.steps == 2
    assert len(server.requests) == 2
    first, second = (openai_images(r) for r in server.requests)
    assert [im.size for im in first] == [(256, 256)]  # the frame preview goes with the question
    assert [im.size for im in second] == [(256, 256), (100, 80)]
    expected = np.asarray(Image.open(photo(tmp_path, "again.png")).convert("RGB"))[10:90, 20:120]
    assert np.array_equal(np.asarray(second[1].convert("RGB")), expected)  # the exact pixels shown
    assert "(80, 100, 3)" in openai_text(server.requests[1])
    assert "1: crop (100x80)" in openai_text(server.requests[1])

    episode = load_episode(result.trajectory_dir)
    assert episode.complete and episode.answer == "B"
    assert [e["type"] for e in episode.events] == [
        "header",
        "task",
        "model_call",
        "cell",
        "model_call",
        "cell",
        "answer",
        "end",
    ]
    assert episode.header["prompt_version"] == prompt_version()
    assert episode.end["reason"] == "answered" and episode.end["steps"] == 2
    logged = episode.messages(episode.of_type("model_call")[1])
    assert logged[-1].images[0].png == episode.cells()[0][1].images[0].png  # the log holds the exact request
    assert result.usage.prompt_tokens > 0 and result.usage.completion_tokens > 0


def test_show_images_reach_the_next_request_through_the_anthropic_sdk(task, kernel, tmp_path):
    script = [cell("show(frames[0].array[:50, :60], label='corner', min_side=0)"), cell("answer('right')")]
    with ScriptedProvider(script) as server:
        result = Agent(anthropic(server)).run(task, tmp_path / "ep", kernel=kernel)
    assert result.status == "answered" and result.answer == "B"  # the option text is normalised to its letter
    assert server.paths[1].endswith("/messages")
    last_user = server.requests[1]["messages"][-1]
    images = [b for b in last_user["content"] if b["type"] == "image"]
    assert len(images) == 1
    assert Image.open(io.BytesIO(base64.b64decode(images[0]["source"]["data"]))).size == (60, 50)
    assert result.cost_usd is None  # "claude-test" has no price in the table


def test_replies_without_code_are_format_errors_and_too_many_in_a_row_end_the_episode(task, kernel, tmp_path):
    script = ["I think it is B.", "Definitely B.", cell("print('recovered')"), "B", "The answer is B", "B!"]
    with ScriptedProvider(script) as server:
        result = Agent(openai_compat(server), AgentConfig(max_format_errors=3)).run(
            task, tmp_path / "ep", kernel=kernel
        )
    assert result.status == "format_errors" and result.answer is None
    assert result.steps == 6  # two format errors, a good cell (the count restarts), three format errors
    assert "could not find a Python code block" in openai_text(server.requests[1])
    episode = load_episode(result.trajectory_dir)
    assert len(episode.of_type("format_error")) == 5 and episode.end["reason"] == "format_errors"


def test_budget_warns_on_the_last_step_then_asks_for_a_direct_answer(task, kernel, tmp_path):
    script = [
        cell("print('looking')"),
        cell("print('still looking')"),
        "From the crops, the person is on the right.\nANSWER: B",
    ]
    with ScriptedProvider(script) as server:
        result = Agent(openai_compat(server), AgentConfig(max_steps=2)).run(task, tmp_path / "ep", kernel=kernel)
    assert result.status == "budget" and result.answer == "B" and result.answer_source == "fallback"
    assert "LAST step" not in openai_text(server.requests[0])
    assert "LAST step" in openai_text(server.requests[1])
    assert "used all 2 steps" in openai_text(server.requests[2])
    episode = load_episode(result.trajectory_dir)
    assert [e["purpose"] for e in episode.of_type("model_call")] == ["step", "step", "fallback"]
    answer = episode.of_type("answer")[0]
    assert (answer["value"], answer["source"]) == ("B", "fallback")


def test_image_budget_replaces_the_oldest_images_by_placeholders(task, kernel, tmp_path):
    script = [cell(f"show(frames[0].array[:{10 + i}, :20], label='crop {i}', min_side=0)") for i in range(3)] + [
        cell("answer('A')")
    ]
    with ScriptedProvider(script) as server:
        Agent(openai_compat(server), AgentConfig(max_images_per_request=2)).run(task, tmp_path / "ep", kernel=kernel)
    last = server.requests[3]
    assert [im.size for im in openai_images(last)] == [(20, 11), (20, 12)]  # the two newest
    text = openai_text(last)
    assert "[image omitted (request limit of 2 images / 22 MB): frame 0, 256x256]" in text
    assert "[image omitted (request limit of 2 images / 22 MB): crop 0, 20x10]" in text


def test_an_older_failed_step_is_condensed_to_the_failing_line_and_the_error(task, kernel, tmp_path):
    failing = "a = 1\nb = undefined_name + 1\nprint('never')\nprint('runs')"
    script = [cell(failing), cell("print('fixed')"), cell("answer('A')")]
    with ScriptedProvider(script) as server:
        Agent(openai_compat(server)).run(task, tmp_path / "ep", kernel=kernel)
    while_latest = openai_text(server.requests[1])
    assert "print('never')" in while_latest and "Traceback" in while_latest  # full detail right after the error
    later = openai_text(server.requests[2])
    assert "a = 1\nb = undefined_name + 1\n# ... 2 more line(s) not run: the cell failed at line 2" in later
    assert "print('never')" not in later
    assert "[error] NameError: name 'undefined_name' is not defined (cell line 2) [condensed]" in later


def test_a_kernel_crash_mid_episode_is_survived(task, tmp_path):
    script = [
        cell("x = 41\nprint('x set')"),
        cell("import os\nos._exit(1)"),
        cell("print('alive', x + 1)"),
        cell("answer('A')"),
    ]
    with ScriptedProvider(script) as server:
        result = Agent(openai_compat(server)).run(task, tmp_path / "ep")  # the agent starts and stops its own kernel
    assert result.status == "answered" and result.answer == "A" and result.steps == 4
    cells = load_episode(result.trajectory_dir).cells()
    assert cells[1][1].status == "crashed" and cells[1][1].restarted
    assert "alive 42" in cells[2][1].stdout  # x was restored from the last good cell
    assert "kernel restarted" in openai_text(server.requests[2])


def test_a_model_failure_ends_the_episode_with_status_error_and_a_complete_log(task, kernel, tmp_path):
    with ScriptedProvider([unauthorized()]) as server:
        result = Agent(openai_compat(server)).run(task, tmp_path / "ep", kernel=kernel)
    assert result.status == "error" and "refused the credentials" in result.error
    episode = load_episode(result.trajectory_dir)
    assert episode.complete and episode.end["reason"] == "error"
    assert episode.of_type("model_call")[0]["error"]


def test_the_planning_call_has_no_images_and_the_plan_stays_in_the_history(task, kernel, tmp_path):
    script = ["1. Find the person.\n2. Compare x to the image centre.", cell("answer('A')")]
    with ScriptedProvider(script) as server:
        result = Agent(openai_compat(server), AgentConfig(plan=True)).run(task, tmp_path / "ep", kernel=kernel)
    assert result.status == "answered"
    assert openai_images(server.requests[0]) == []
    assert "make a short plan" in openai_text(server.requests[0])
    roles = [m["role"] for m in server.requests[1]["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert server.requests[1]["messages"][2]["content"].startswith("1. Find the person.")
    assert [e["purpose"] for e in load_episode(result.trajectory_dir).of_type("model_call")] == ["plan", "step"]


def test_replay_reproduces_a_recorded_episode(task, kernel, tmp_path):
    script = [cell("n = frames[0].width\nprint(n)"), cell("answer('A' if n > 100 else 'B')")]
    with ScriptedProvider(script) as server:
        original = Agent(openai_compat(server)).run(task, tmp_path / "ep", kernel=kernel)
    replayed = Agent(f"replay:{original.trajectory_dir}").run(task, tmp_path / "replayed", kernel=kernel)
    assert (replayed.status, replayed.answer, replayed.steps) == (original.status, original.answer, original.steps)
    codes = lambda d: [e["code"] for e in load_episode(d).of_type("cell")]  # noqa: E731
    assert codes(replayed.trajectory_dir) == codes(original.trajectory_dir)
    assert load_episode(replayed.trajectory_dir).cells()[0][1].stdout == "256\n"


def test_an_existing_episode_directory_is_not_overwritten(task, kernel, tmp_path):
    (tmp_path / "ep").mkdir()
    (tmp_path / "ep" / "episode.jsonl").write_text('{"type": "header"}\n')
    with ScriptedProvider([]) as server, pytest.raises(FileExistsError, match="already holds an episode"):
        Agent(openai_compat(server)).run(task, tmp_path / "ep", kernel=kernel)


def test_ctrl_c_ends_the_log_cleanly_and_still_interrupts_the_caller(task, kernel, tmp_path):
    def interrupt(event):
        raise KeyboardInterrupt

    with ScriptedProvider([cell("print(1)")]) as server, pytest.raises(KeyboardInterrupt):
        Agent(openai_compat(server)).run(task, tmp_path / "ep", kernel=kernel, on_step=interrupt)
    episode = load_episode(tmp_path / "ep")
    assert episode.complete and episode.end["reason"] == "interrupted" and episode.end["steps"] == 1


def test_one_agent_runs_episodes_in_parallel_threads_each_with_its_own_side_channel(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    def reply(request, index):
        if len(request["messages"]) == 1:  # a side-channel call: echo which episode asked
            return "from " + openai_text(request).split("episode ")[1].split("?")[0]
        question = openai_text(request).split("Question: ")[1].split("\n")[0]
        name = question.split()[-1]
        if len(request["messages"]) == 2:
            return cell(f"said = vlm.ask(frames[0], 'which episode {name}?')\nprint(said)")
        return cell(f"answer('{name}')")

    tasks = [
        Task(f"Name episode {name}", inputs=[FrameSpec.images([photo(tmp_path, f"{name}.png", 32)])], task_id=name)
        for name in ("alpha", "beta")
    ]
    with ScriptedProvider(reply) as server, Agent(openai_compat(server)) as agent, ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda t: agent.run(t, tmp_path / t.task_id), tasks))
    assert [r.answer for r in results] == ["alpha", "beta"]
    for name, result in zip(("alpha", "beta"), results, strict=True):
        episode = load_episode(result.trajectory_dir)
        assert episode.cells()[0][1].stdout == f"from {name}\n"
        side_calls = [e for e in episode.of_type("model_call") if e["purpose"] == "vlm.ask"]
        assert len(side_calls) == 1  # logged in the episode that made it, not in the other one
        assert f"which episode {name}?" in episode.messages(side_calls[0])[0].text_content


def test_a_task_without_frames_still_runs(kernel, tmp_path):
    task = Task("What is 6 times 7?", answer_type="number")
    with ScriptedProvider([cell("answer(6 * 7)")]) as server:
        result = Agent(openai_compat(server)).run(task, tmp_path / "ep", kernel=kernel)
    assert result.answer == 42.0 and openai_images(server.requests[0]) == []


def test_several_inputs_share_the_frame_preview(kernel, tmp_path):
    first = [photo(tmp_path, f"a{i}.png", 40) for i in range(3)]
    second = [photo(tmp_path, f"b{i}.png", 24) for i in range(2)]
    task = Task("Same room?", inputs=[FrameSpec.images(first), FrameSpec.images(second)], answer_type="yes_no")
    with ScriptedProvider([cell("print(len(videos), len(videos[1]))\nanswer('yes')")]) as server:
        result = Agent(openai_compat(server), AgentConfig(preview_images=4)).run(task, tmp_path / "ep", kernel=kernel)
    assert result.answer == "yes"
    assert [im.size for im in openai_images(server.requests[0])] == [(40, 40), (40, 40), (24, 24), (24, 24)]
    text = openai_text(server.requests[0])
    assert "`videos[0]` holds 3 frame(s) (absolute indices 0 to 2); attached below: frame(s) 0, 2." in text
    assert "`videos[1]` holds 2 frame(s) (absolute indices 0 to 1); attached below: frame(s) 0, 1." in text
    assert load_episode(result.trajectory_dir).cells()[0][1].stdout == "2 2\n"


def test_a_video_preview_names_the_same_absolute_frame_indices_the_kernel_holds(kernel, tmp_path):
    import av

    path = tmp_path / "clip.mp4"
    with av.open(str(path), "w") as container:
        stream = container.add_stream("mpeg4", rate=10)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for i in range(20):
            frame = av.VideoFrame.from_ndarray(np.full((48, 64, 3), i * 12, dtype=np.uint8), format="rgb24")
            container.mux(stream.encode(frame))
        container.mux(stream.encode())
    task = Task("Does it get brighter?", inputs=[FrameSpec.video(path, fps=2.0)], answer_type="yes_no")
    with ScriptedProvider([cell("print(frames.indices)\nanswer('yes')")]) as server:
        result = Agent(openai_compat(server), AgentConfig(preview_images=3)).run(task, tmp_path / "ep", kernel=kernel)
    indices = eval(load_episode(result.trajectory_dir).cells()[0][1].stdout)  # the kernel's absolute indices
    assert indices == [0, 5, 10, 15]  # 2 fps of a 10 fps video
    text = openai_text(server.requests[0])
    assert "`frames` holds 4 frame(s) (absolute indices 0 to 15); attached below: frame(s) 0, 10, 15." in text
    assert "the video clip.mp4, sampled at 2 fps" in text


def test_a_missing_input_file_ends_the_episode_with_a_clear_error(kernel, tmp_path):
    task = Task("q", inputs=[FrameSpec.images([tmp_path / "gone.png"])])
    with ScriptedProvider([]) as server:
        result = Agent(openai_compat(server)).run(task, tmp_path / "ep", kernel=kernel)
    assert result.status == "error" and "gone.png" in result.error and "cannot be read" in result.error
    assert server.calls == 0
    assert load_episode(result.trajectory_dir).end["reason"] == "error"


def test_a_reply_cut_off_before_any_code_is_told_to_be_shorter(task, kernel, tmp_path):
    script = [
        Reply("<think>Let me consider every possibility in great detail", finish_reason="length"),
        cell("answer('A')"),
    ]
    with ScriptedProvider(script) as server:
        result = Agent(openai_compat(server)).run(task, tmp_path / "ep", kernel=kernel)
    assert result.status == "answered" and result.steps == 2
    assert "reached the output token limit" in openai_text(server.requests[1])
