"""Issue 30, attack B13: another local user who may write into the sessions root redirects a session id.

Reported: ``session start`` accepted ``$SPATIALCLAW_SESSIONS`` owned by uid 65534 with mode 0777; that user
ran ``mv A A.moved; ln -s ROOT/B A``, and root's ``spatialclaw session exec A`` ran its cell in session B's
kernel and ``session answer A yes`` answered B. Now such a root is refused with an error naming it, and a
session id that is a link is never followed.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from tests.cli_process import spatialclaw
from tests.paths import REPO_ROOT

OTHER_USER = 65534


def session_cli(root: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``spatialclaw session ARGS`` with ``$SPATIALCLAW_SESSIONS`` set to ``root``."""
    env = dict(os.environ, SPATIALCLAW_SESSIONS=str(root), SPATIALCLAW_KERNEL_MEMORY_MB="0")
    return spatialclaw("session", *args, env=env, cwd=REPO_ROOT, stdin=stdin)


def close_all(root: Path) -> None:
    """Close every session a run left under ``root`` (the code before the fix started them)."""
    from spatialclaw.interactive.session_client import Session

    for entry in root.iterdir() if root.is_dir() else []:
        if (entry / "session.json").is_file() and not entry.is_symlink():
            try:
                Session(entry).close()
            except Exception:
                pass


@pytest.fixture
def frame(tmp_path: Path) -> str:
    path = tmp_path / "frame.png"
    Image.new("RGB", (32, 24), (200, 0, 0)).save(path)
    return str(path)


def _open_root(tmp_path: Path, owner: str, mode: int) -> Path:
    root = tmp_path / "open" / "sessions"
    root.mkdir(parents=True)
    os.chmod(tmp_path / "open", 0o755)
    if owner == "another user":
        if os.getuid() != 0:
            pytest.skip("giving a folder to another user needs root (CI runs as root)")
        os.chown(root, OTHER_USER, OTHER_USER)
    os.chmod(root, mode)
    return root


@pytest.mark.parametrize(
    ("owner", "mode"),
    [("another user", 0o777), ("another user", 0o700), ("another user", 0o1777), ("me", 0o777), ("me", 0o770)],
)
def test_a_sessions_root_another_user_may_change_is_refused_naming_it(
    tmp_path: Path, frame: str, owner: str, mode: int
) -> None:
    root = _open_root(tmp_path, owner, mode)
    try:
        started = session_cli(root, "start", "--frames", frame, "--question", "Is it red?", "--id", "A")
        listed = session_cli(root, "list")
    finally:
        close_all(root)
    for done in (started, listed):
        assert done.returncode == 2, (done.stdout, done.stderr)
        assert str(root) in done.stderr and "sessions folder" in done.stderr, done.stderr
    assert not (root / "A").exists()


def test_a_sticky_sessions_root_of_ones_own_is_accepted(tmp_path: Path) -> None:
    """Others may add entries to a sticky folder but never move or replace this user's own."""
    root = _open_root(tmp_path, "me", 0o1777)
    listed = session_cli(root, "list")
    assert (listed.returncode, listed.stdout.strip()) == (0, "no sessions"), listed.stderr


@pytest.fixture
def two_sessions(tmp_path: Path, frame: str) -> Iterator[Path]:
    root = tmp_path / "sessions"
    try:
        for name, question in (("A", "is it blue?"), ("B", "is it red?")):
            done = session_cli(root, "start", "--frames", frame, "--question", question, "--id", name)
            assert done.returncode == 0, done.stderr
        yield root
    finally:
        close_all(root)


def test_a_session_id_is_never_followed_through_a_link_to_another_session(two_sessions: Path) -> None:
    root = two_sessions
    (root / "A").rename(root / "A.moved")  # what the other user did, as reported
    (root / "A").symlink_to(root / "B")
    try:
        ran = session_cli(root, "exec", "A", "--code", "-", stdin="print('I am the kernel of:', meta['question'])\n")
        answered = session_cli(root, "answer", "A", "yes")
        status = json.loads(session_cli(root, "status", "B", "--json").stdout)
        listed = json.loads(session_cli(root, "list", "--json").stdout)
    finally:  # A's daemon knows its socket by A's own path
        (root / "A").unlink()
        (root / "A.moved").rename(root / "A")
    for done in (ran, answered):
        assert done.returncode == 2, (done.stdout, done.stderr)
        assert f"{root / 'A'} is not a directory (a link or a file)" in done.stderr, done.stderr
    assert (status["state"], status["steps"]) == ("running", 0), status
    assert sorted(row["session"] for row in listed["sessions"]) == ["A.moved", "B"], listed
