"""Specifications of trajectory writing and reading (reopen-and-append, the last one wins) and of the run lock."""

from __future__ import annotations

import fcntl
import json
import os
import stat
from pathlib import Path

import pytest

from spatialclaw.chat import Message
from spatialclaw.kernel.cell import CellImage, CellResult
from spatialclaw.runner.lock import LOCK_NAME, RunLock, RunLockedError
from spatialclaw.trajectories.episode_log import LONG_TEXT_CHARS, Episode, TrajectoryWriter, load_episode
from spatialclaw.trajectories.synthetic import solid_png


def test_a_reopened_log_continues_the_sequence_numbers_and_the_last_answer_and_score_win(tmp_path: Path) -> None:
    with TrajectoryWriter(tmp_path, fsync=False) as writer:
        writer.write("header", run="r")
        writer.write("answer", value="A")
        writer.write("score", score=0.0)
    with TrajectoryWriter(tmp_path, fsync=False) as writer:  # reopened to append a rescore
        event = writer.write("answer", value="B")
        writer.write("score", score=1.0)
    assert event["seq"] == 3
    episode = load_episode(tmp_path)
    assert [e["seq"] for e in episode.events] == [0, 1, 2, 3, 4]
    assert episode.answer == "B" and episode.score == 1.0
    assert episode.end is None and not episode.complete


def test_the_last_end_event_wins_and_makes_the_episode_complete(tmp_path: Path) -> None:
    with TrajectoryWriter(tmp_path, fsync=False) as writer:
        writer.write("end", status="error")
        writer.write("end", status="ok")
    episode = load_episode(tmp_path)
    assert episode.complete and episode.end is not None and episode.end["status"] == "ok"
    assert episode.answer is None and episode.score is None


def test_the_header_and_the_task_are_read_from_their_events(tmp_path: Path) -> None:
    with TrajectoryWriter(tmp_path, fsync=False) as writer:
        writer.write("note", text="before")
        writer.write("task", task="not a dict")
        writer.write("header", run="r1")
        writer.write("task", task={"id": "t1"})
        writer.write("header", run="r2")
    episode = load_episode(tmp_path)
    assert episode.header["run"] == "r1" and episode.task == {"id": "t1"}
    assert [e["type"] for e in episode.of_type("task")] == ["task", "task"]


def test_an_episode_is_not_torn_unless_its_reader_says_so(tmp_path: Path) -> None:
    assert Episode(tmp_path, [], complete=False).torn_tail is False
    with TrajectoryWriter(tmp_path, fsync=False) as writer:
        writer.write("header", run="r")
    assert load_episode(tmp_path).torn_tail is False
    with open(tmp_path / "episode.jsonl", "a", encoding="utf-8") as log:
        log.write('{"type": "end", "rea')  # a crash mid-write
    torn = load_episode(tmp_path)
    assert torn.torn_tail is True and not torn.complete


def test_a_folder_without_a_log_is_not_an_episode(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="not an episode directory"):
        load_episode(tmp_path)


def test_a_lock_over_an_older_longer_lock_file_names_its_holder(tmp_path: Path) -> None:
    (tmp_path / LOCK_NAME).write_text(json.dumps({"pid": 1, "host": "h" * 300, "started": "then"}) + "\n")
    with RunLock(tmp_path):
        holder = json.loads((tmp_path / LOCK_NAME).read_text())
        assert holder["pid"] > 1 and set(holder) == {"pid", "host", "started"}
        with pytest.raises(RunLockedError, match=f"pid {holder['pid']}") as refused:
            RunLock(tmp_path).acquire()
        assert refused.value.holder == holder
    with RunLock(tmp_path):  # released: taken again
        pass


def test_a_lock_file_that_is_not_a_holder_record_reads_as_another_process(tmp_path: Path) -> None:
    with RunLock(tmp_path):
        (tmp_path / LOCK_NAME).write_text("[1, 2]\n")
        with pytest.raises(RunLockedError, match="another process") as refused:
            RunLock(tmp_path).acquire()
        assert refused.value.holder == {}


def test_a_lock_creates_missing_parent_folders_of_its_run_directory(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "2024" / "run-1"
    with RunLock(run):
        assert json.loads((run / LOCK_NAME).read_text())["pid"] == os.getpid()


def test_a_new_lock_file_is_private_to_its_owner_and_not_executable(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        with RunLock(tmp_path):
            pass
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / LOCK_NAME).stat().st_mode) == 0o600  # the run's files are its owner's


def test_a_holder_caught_mid_write_reads_as_another_process(tmp_path: Path) -> None:
    with RunLock(tmp_path):
        (tmp_path / LOCK_NAME).write_text('{"pid": 12, "host": "no')  # truncated, not yet the whole record
        with pytest.raises(RunLockedError, match="another process") as refused:
            RunLock(tmp_path).acquire()
        assert refused.value.holder == {}


@pytest.mark.parametrize(("size", "read"), [(4096, True), (4097, False)])
def test_a_holder_record_is_read_up_to_4_kib_and_a_longer_one_names_no_holder(
    tmp_path: Path, size: int, read: bool
) -> None:
    record = json.dumps({"pid": 7, "host": "", "started": "then"})
    record = record.replace('"host": ""', '"host": "' + "h" * (size - len(record)) + '"')
    assert len(record) == size
    with RunLock(tmp_path):
        (tmp_path / LOCK_NAME).write_text(record)
        with pytest.raises(RunLockedError) as refused:
            RunLock(tmp_path).acquire()
    assert refused.value.holder == (json.loads(record) if read else {})


def test_a_lock_file_that_cannot_be_read_back_names_no_holder(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / LOCK_NAME)  # opens and locks like a file, but has no offset to read the holder at
    fd = os.open(tmp_path / LOCK_NAME, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(RunLockedError, match="another process") as refused:
            RunLock(tmp_path).acquire()
        assert refused.value.holder == {}
    finally:
        os.close(fd)


def test_of_three_answers_scores_and_ends_the_last_one_wins(tmp_path: Path) -> None:
    with TrajectoryWriter(tmp_path, fsync=False) as writer:
        for value, score, status in [("A", 0.0, "error"), ("B", 0.5, "budget"), ("C", 1.0, "answered")]:
            writer.write("answer", value=value)
            writer.write("score", score=score)
            writer.write("end", status=status)
    episode = load_episode(tmp_path)
    assert (episode.answer, episode.score) == ("C", 1.0)
    assert episode.end is not None and episode.end["status"] == "answered"


def test_the_header_and_the_task_are_their_own_events_whatever_comes_before_them(tmp_path: Path) -> None:
    with TrajectoryWriter(tmp_path, fsync=False) as writer:
        writer.write("answer", value="A", task={"id": "in an answer"})  # types before "header"/"task" in order
        writer.write("cell", step=0, code="x = 1")
        writer.write("verdict", task={"id": "in a verdict"})  # a type after "task" in order
        writer.write("header", run="r1")
        writer.write("task", task={"id": "t1"})
    episode = load_episode(tmp_path)
    assert episode.header["run"] == "r1" and episode.task == {"id": "t1"}


def test_a_writer_creates_missing_parent_folders_of_its_episode_directory(tmp_path: Path) -> None:
    directory = tmp_path / "run" / "episodes" / "task-1"
    with TrajectoryWriter(directory, fsync=False) as writer:
        writer.write("header", run="r")
    assert load_episode(directory).header["run"] == "r"


def test_cells_read_back_with_their_results_and_image_bytes(tmp_path: Path) -> None:
    png = solid_png((0, 200, 0), (6, 4))
    with TrajectoryWriter(tmp_path, fsync=False) as writer:
        for step in range(2):
            result = CellResult(
                code=f"x = {step}", stdout=f"out {step}\n", images=[CellImage(png, "plot", "show", 6, 4)]
            )
            writer.write("cell", step=step, code=result.code, result=writer.cell_result(result))
    cells = load_episode(tmp_path).cells()
    assert [(event["step"], result.stdout) for event, result in cells] == [(0, "out 0\n"), (1, "out 1\n")]
    assert all(result.images[0].png == png and result.images[0].label == "plot" for _, result in cells)


def test_the_event_a_writer_returns_reads_back_like_the_loaded_one(tmp_path: Path) -> None:
    system = "x" * LONG_TEXT_CHARS
    with TrajectoryWriter(tmp_path, fsync=False) as writer:
        written = writer.model_call(
            step=0, purpose="step", model="m", params={}, messages=[Message.text("system", system)]
        )
    episode = load_episode(tmp_path)
    assert [m.text_content for m in episode.messages(written)] == [system]
    assert [m.text_content for m in episode.messages(episode.of_type("model_call")[0])] == [system]
