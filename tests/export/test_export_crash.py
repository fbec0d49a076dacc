"""A process killed with SIGKILL in the middle of an episode leaves a log that loads, says it is
incomplete, and is excluded from exports unless asked for."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

from spatialclaw.export import episode_conversation, export_episodes
from spatialclaw.trajectories.episode_log import load_episode
from spatialclaw.trajectories.episodes import EpisodeFilter, episode_steps

WRITER = textwrap.dedent(
    """
    import sys, time
    from spatialclaw.trajectories.synthetic import write_synthetic_episode
    import spatialclaw.trajectories.episode_log as trajectory

    # Report each step on stdout once its cell is on disk, then keep writing slowly until killed.
    original = trajectory.TrajectoryWriter.write
    def write(self, event_type, **fields):
        event = original(self, event_type, **fields)
        if event_type == "cell":
            print(f"cell {fields['step']}", flush=True)
            time.sleep(0.5)
        return event
    trajectory.TrajectoryWriter.write = write
    write_synthetic_episode(sys.argv[1], steps=50, fsync=True)
    """
)


def test_episode_killed_mid_run_loads_as_incomplete(tmp_path):
    directory = tmp_path / "run" / "killed"
    process = subprocess.Popen([sys.executable, "-c", WRITER, str(directory)], stdout=subprocess.PIPE, text=True)
    try:
        for line in process.stdout:
            if line.strip() == "cell 2":
                break
        else:
            raise AssertionError(f"the writer exited early with code {process.wait()}")
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.kill()
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL

    episode = load_episode(directory)
    assert not episode.complete and episode.end is None and episode.answer is None
    cells = [s for s in episode_steps(episode) if s.cell is not None]
    assert 3 <= len(cells) < 50
    assert cells[0].cell.stdout == "step 0\n" and len(cells[0].cell.images) == 1

    report = export_episodes("openai", [tmp_path / "run"], tmp_path / "a.jsonl")
    assert report.exported == 0 and report.excluded == {"incomplete": 1}
    report = export_episodes(
        "openai", [tmp_path / "run"], tmp_path / "b.jsonl", episode_filter=EpisodeFilter(include_incomplete=True)
    )
    assert report.exported == 1
    outputs = [t for t in episode_conversation(episode).turns if t.role == "assistant"]
    assert len(outputs) >= len(cells)


def test_torn_last_line_is_dropped_and_marked(tmp_path):
    from spatialclaw.trajectories.synthetic import write_synthetic_episode

    ep = write_synthetic_episode(tmp_path / "ep", steps=3)
    log = ep.directory / "episode.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    episode = load_episode(ep.directory)
    assert episode.torn_tail and not episode.complete
