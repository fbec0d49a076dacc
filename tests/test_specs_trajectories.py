"""Specifications of trajectory writing and reading (reopen-and-append, the last one wins) and of the run lock."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spatialclaw.runner.lock import LOCK_NAME, RunLock, RunLockedError
from spatialclaw.trajectories.episode_log import Episode, TrajectoryWriter, load_episode


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
