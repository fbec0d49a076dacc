"""Attacks on step-by-step sessions and the vlm side channel (issue 11, item 6), each with its outcome.

A cell of one session tries to reach another session's daemon socket and kernel files; clients send
path-like session ids, non-object, oversized and stalled requests and a flood of idle connections;
a cell posts a huge body to the vlm channel without its token. Every attack must fail with a clear
error while the daemon (or the channel) keeps serving.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest
from PIL import Image

from spatialclaw.agent import vlm_server
from spatialclaw.agent.vlm_server import VLMServer
from spatialclaw.chat import ModelReply
from spatialclaw.interactive import daemon_requests
from spatialclaw.interactive.session import start_session
from spatialclaw.interactive.session_client import Session
from spatialclaw.interactive.session_dir import (
    SessionError,
    check_private_directory,
    find_session,
    socket_path_for,
)
from spatialclaw.task import FrameSpec, Task
from tests.cli_process import spatialclaw
from tests.paths import REPO_ROOT


@contextmanager
def environment(**values: str) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sessions")


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> Task:
    path = tmp_path_factory.mktemp("frames") / "0.png"
    Image.new("RGB", (32, 24), (0, 200, 0)).save(path)
    return Task(question="What colour is the frame?", inputs=[FrameSpec.images([path])])


@pytest.fixture(scope="module")
def sessions(root: Path, task: Task, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Session]]:
    """A victim and an attacker session (default sandbox) and one with the sandbox off."""
    started: dict[str, Session] = {}
    with environment(SPATIALCLAW_KERNEL_MEMORY_MB="0", SPATIALCLAW_CACHE=str(tmp_path_factory.mktemp("cache"))):
        try:
            for name, mode in (("victim", "auto"), ("attacker", "auto"), ("plain", "off")):
                started[name] = start_session(task, root=root, session_id=name, sandbox=mode)
            yield started
        finally:
            for session in started.values():
                session.close()


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return spatialclaw("session", *args, env=dict(os.environ), cwd=REPO_ROOT, stdin=stdin, timeout=120)


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]


# --- ids and arguments --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "bad", ["../x", "..", "a/b", "/etc", ".hidden", "a..b", "back\\slash", "", "x" * 65, "a b", "line\n"]
)
def test_a_session_id_that_is_not_a_plain_name_is_refused(bad: str, root: Path, task: Task) -> None:
    with pytest.raises(SessionError, match="is not a session id"):
        find_session(bad, root)
    with pytest.raises(SessionError, match="is not a session id"):
        start_session(task, root=root / "fresh", session_id=bad)
    assert not (root / "fresh").exists() and not (root.parent / "x").exists()


def test_the_command_line_refuses_path_ids_in_one_line(root: Path, task: Task) -> None:
    frame = task.inputs[0].paths[0]
    line = one_line_error(cli("start", "--root", str(root), "--frames", frame, "--question", "q?", "--id", "../escape"))
    assert "'../escape' is not a session id" in line
    assert not (root.parent / "escape").exists()
    assert "is not a session id" in one_line_error(cli("status", "../../etc", "--root", str(root)))


@pytest.mark.parametrize(
    ("option", "value", "named"),
    [
        ("max_steps", 0, "max_steps (--max-steps)"),
        ("max_steps", 2.5, "max_steps (--max-steps)"),
        ("max_steps", True, "max_steps (--max-steps)"),
        ("cell_timeout_s", float("nan"), "cell_timeout_s (--cell-timeout, seconds)"),
        ("cell_timeout_s", -1.0, "cell_timeout_s (--cell-timeout, seconds)"),
        ("idle_timeout_s", float("inf"), "idle_timeout_s (--idle-timeout, seconds)"),
        ("memory_limit_mb", 0, "memory_limit_mb (--memory-limit-mb, MiB)"),
        ("memory_limit_mb", -512, "memory_limit_mb (--memory-limit-mb, MiB)"),
    ],
)
def test_session_limits_must_be_positive_and_finite(
    option: str, value: object, named: str, root: Path, task: Task
) -> None:
    with pytest.raises(
        SessionError, match=r"must be (a whole number of at least 1|a positive, finite number), got"
    ) as caught:
        start_session(task, root=root / "fresh", **{option: value})
    assert str(caught.value).startswith(named)
    assert not (root / "fresh").exists()


def test_bad_limits_at_the_command_line_are_one_line_errors(
    root: Path, task: Task, sessions: dict[str, Session]
) -> None:
    frame = task.inputs[0].paths[0]
    start = ["start", "--root", str(root), "--frames", frame, "--question", "q?"]
    assert "--cell-timeout" in one_line_error(cli(*start, "--cell-timeout", "nan"))
    assert "--max-steps" in one_line_error(cli(*start, "--max-steps", "0"))
    assert "--memory-limit-mb" in one_line_error(cli(*start, "--memory-limit-mb", "-1"))
    assert "--idle-timeout" in one_line_error(cli(*start, "--idle-timeout", "inf"))
    steps = sessions["victim"].status()["steps"]
    line = one_line_error(
        cli("exec", "victim", "--root", str(root), "--timeout", "-5", "--code", "-", stdin="print(1)\n")
    )
    assert "--timeout" in line and "-5" in line
    assert sessions["victim"].status()["steps"] == steps  # nothing ran


# --- files, sockets and other sessions -----------------------------------------------------------------
def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.mark.parametrize("name", ["victim", "plain"])
def test_session_directories_and_files_are_private_to_their_user(name: str, sessions: dict[str, Session]) -> None:
    session = sessions[name]
    step = session.execute("show(frames[0])\nopen('notes.txt', 'w').write('mine')\n")
    assert step.status == "ok", step.text
    directory = session.directory
    assert mode_of(directory) == 0o700
    assert mode_of(directory / "images") == 0o700
    assert not (directory / "work").exists()  # the kernel works in its own private folder, not here
    files = [
        "session.json",
        "prompt.md",
        "daemon.json",
        "daemon.log",
        "episode.jsonl",
        "kernel.json",
        "daemon.sock",
        *(f"images/{p.name}" for p in (directory / "images").iterdir()),
    ]
    modes = {f: oct(mode_of(directory / f)) for f in files if (directory / f).exists()}
    assert {"session.json", "daemon.sock", "episode.jsonl"} <= set(modes)
    assert modes == {f: oct(0o600) for f in modes}


PROBE = """
import json, os, socket
victim = {victim!r}
seen = {{}}
for name in ("daemon.sock", "kernel.json", "episode.jsonl", "session.json"):
    try:
        with open(os.path.join(victim, name), "rb") as handle:
            handle.read(1)
        seen[name] = "opened"
    except OSError as error:
        seen[name] = error.errno
try:
    client = socket.socket(socket.AF_UNIX)
    client.settimeout(5)
    client.connect(os.path.join(victim, "daemon.sock"))
    client.sendall(b'{{"op": "status"}}\\n')
    seen["connect"] = client.recv(100).decode()
except OSError as error:
    seen["connect"] = error.errno
seen["root"] = os.listdir({root!r}) if os.path.isdir({root!r}) else None
seen["own"] = sorted(os.listdir({own!r})) if os.path.isdir({own!r}) else None
print(json.dumps(seen))
"""


def test_a_sandboxed_cell_sees_no_session_directory_at_all(sessions: dict[str, Session], root: Path) -> None:
    attacker, victim = sessions["attacker"], sessions["victim"]
    if not attacker.status()["sandboxed"]:
        from spatialclaw.kernel.sandbox import support

        pytest.skip(f"the kernel sandbox is unavailable here ({support().missing}); the file modes are tested alone")
    step = attacker.execute(PROBE.format(victim=str(victim.directory), root=str(root), own=str(attacker.directory)))
    assert step.status == "ok", step.text
    seen = json.loads(step.text.strip().splitlines()[0])
    enoent = 2
    assert {
        k: seen[k] for k in ("daemon.sock", "kernel.json", "episode.jsonl", "session.json", "connect")
    } == dict.fromkeys(("daemon.sock", "kernel.json", "episode.jsonl", "session.json", "connect"), enoent)
    assert "victim" not in (seen["root"] or [])
    assert seen["own"] is None  # its own session's files are out of reach too
    assert victim.status()["state"] == "running"
    from spatialclaw.trajectories.episode_log import load_episode

    assert load_episode(attacker.directory).header["config"]["sandbox"]["active"] is True
    assert load_episode(sessions["plain"].directory).header["config"]["sandbox"] == {
        "mode": "off",
        "active": False,
        "mechanism": None,
    }


def test_socket_directories_of_another_user_or_open_to_others_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    with pytest.raises(SessionError, match=r"may be written by group or others \(mode 777\).*chmod 700"):
        check_private_directory(shared)
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    with pytest.raises(SessionError, match="is not a directory"):
        check_private_directory(link)
    foreign = tmp_path / "foreign"
    foreign.mkdir(mode=0o700)
    if os.getuid() == 0:
        os.chown(foreign, 65534, 65534)
    else:
        foreign = Path("/")
    with pytest.raises(SessionError, match="belongs to another user"):
        check_private_directory(foreign)

    # a socket directory planted in the temp folder (long session paths put sockets there) is refused
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    planted = tmp_path / f"spatialclaw-{os.getuid()}"
    planted.mkdir()
    os.chmod(planted, 0o777)
    with pytest.raises(SessionError, match="may be written by group or others"):
        socket_path_for(tmp_path / ("s" * 120))

    # and a client never connects to a socket that sits in such a directory
    fake = tmp_path / "fake-session"
    fake.mkdir(mode=0o700)
    (fake / "session.json").write_text("{}")
    (fake / "daemon.json").write_text(json.dumps({"socket": str(planted / "x.sock"), "pid": 1}))
    with pytest.raises(SessionError, match="may be written by group or others"):
        Session(fake).request({"op": "status"}, timeout=2)


# --- the daemon's wire protocol --------------------------------------------------------------------
def raw_request(path: str, data: bytes, timeout: float = 20.0) -> dict:
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(timeout)
    with client:
        client.connect(path)
        try:
            client.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the daemon stopped reading: its reply is waiting all the same
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = client.recv(1 << 16)
            if not chunk:
                break
            reply += chunk
    return json.loads(reply)


def test_malformed_requests_get_errors_and_the_daemon_keeps_serving(sessions: dict[str, Session]) -> None:
    session = sessions["victim"]
    path = session.daemon_info()["socket"]
    steps = session.status()["steps"]
    for data in (b"[1, 2]\n", b'"status"\n', b"null\n", b"42\n"):
        reply = raw_request(path, data)
        assert reply["ok"] is False and "expected a JSON object" in reply["error"], (data, reply)
    for data in (b"{not json\n", b"\xff\xfe\n"):
        reply = raw_request(path, data)
        assert reply["ok"] is False and reply["error"].startswith("malformed request"), (data, reply)
    huge = raw_request(path, b'{"op": "exec", "code": "' + b"x" * (daemon_requests.MAX_REQUEST_BYTES + (1 << 20)))
    assert huge == {"ok": False, "error": "request too large: more than 8 MiB; send a smaller cell"}
    for timeout in (-1, 0, "soon", True, float("nan"), float("inf")):
        reply = raw_request(path, (json.dumps({"op": "exec", "code": "print(1)", "timeout": timeout}) + "\n").encode())
        assert reply["ok"] is False and "exec timeout must be a positive, finite number of seconds" in reply["error"], (
            reply
        )
    assert raw_request(path, b'{"op": "format_disk"}\n')["error"].startswith("unknown operation 'format_disk'")
    assert session.status()["steps"] == steps  # none of them ran a cell
    step = session.execute("print(6 * 7)")
    assert step.status == "ok" and step.text.startswith("42")


def test_stalled_clients_and_connection_floods_are_answered_and_dropped(sessions: dict[str, Session]) -> None:
    session = sessions["victim"]
    path = session.daemon_info()["socket"]
    idle = []
    for _ in range(daemon_requests.MAX_CONNECTIONS):
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.connect(path)  # blocking: waits for room in the listen backlog
        client.settimeout(20)
        idle.append(client)
    idle[0].sendall(b'{"op": "sta')  # half a request, then silence
    time.sleep(0.3)
    refused = raw_request(path, b'{"op": "status"}\n', timeout=5)
    assert refused == {
        "ok": False,
        "error": f"the session daemon is serving {daemon_requests.MAX_CONNECTIONS} connections already; retry shortly",
    }

    started = time.monotonic()
    replies = []
    for client in idle:
        with client:
            replies.append(json.loads(client.makefile("rb").readline()))
    waited = time.monotonic() - started
    assert {r["error"] for r in replies} == {
        f"malformed request: no complete request line within {daemon_requests.READ_TIMEOUT_S:g} s"
    }
    assert waited < daemon_requests.READ_TIMEOUT_S + 5
    assert session.status()["state"] == "running"  # slots are free again


# --- the vlm side channel ----------------------------------------------------------------------------
@pytest.fixture
def channel(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[VLMServer, dict]]:
    monkeypatch.setattr(vlm_server, "READ_TIMEOUT_S", 1.0)
    monkeypatch.setattr(vlm_server, "MAX_CONNECTIONS", 8)
    calls = []

    def call_model(messages, purpose):
        calls.append(purpose)
        return ModelReply(text="fine")

    with VLMServer() as server:
        yield server, server.open_channel(call_model)


def http_exchange(port: int, head: str, body: bytes = b"", read_timeout: float = 5.0) -> tuple[int, dict]:
    """Send ``head`` (request line and headers) and ``body``; the status and JSON body of the reply."""
    with socket.create_connection(("127.0.0.1", port), timeout=read_timeout) as client:
        client.sendall(head.encode() + b"\r\n" + body)
        reply = client.makefile("rb")
        status = int(reply.readline().split()[1])
        headers = {}
        while line := reply.readline().strip():
            key, _, value = line.decode().partition(":")
            headers[key.lower()] = value.strip()
        return status, json.loads(reply.read(int(headers["content-length"])))


def test_the_vlm_token_is_checked_before_any_body_is_read(channel: tuple[VLMServer, dict]) -> None:
    server, _config = channel
    # 4 GiB announced, none sent: the refusal arrives at once, so not a byte of the body was awaited
    for authorization in ("", "Authorization: Bearer wrong-token\r\n"):
        started = time.monotonic()
        status, body = http_exchange(
            server.port, f"POST /ask HTTP/1.1\r\nHost: x\r\n{authorization}Content-Length: {4 << 30}\r\n"
        )
        assert (status, body["error"]) == (401, "wrong, missing or expired token for the vlm side channel")
        assert time.monotonic() - started < 2.0

    # actually streaming a huge body without the token: cut off after the socket buffers, memory untouched
    process = psutil.Process()
    rss_before = process.memory_info().rss
    sent = 0
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as client:
        client.sendall(f"POST /ask HTTP/1.1\r\nHost: x\r\nContent-Length: {1 << 30}\r\n\r\n".encode())
        chunk = b"A" * (1 << 20)
        with pytest.raises(OSError):
            while sent < (1 << 30):
                client.sendall(chunk)
                sent += len(chunk)
    assert sent < (64 << 20) and time.monotonic() - started < 5.0
    assert process.memory_info().rss - rss_before < (64 << 20)


def test_the_vlm_channel_caps_and_checks_bodies_and_keeps_serving(channel: tuple[VLMServer, dict]) -> None:
    server, config = channel
    token = f"Authorization: Bearer {config['token']}\r\n"
    status, body = http_exchange(
        server.port, f"POST /ask HTTP/1.1\r\nHost: x\r\n{token}Content-Length: {vlm_server.MAX_BODY_BYTES + 1}\r\n"
    )
    assert status == 413 and "over the 64 MiB limit" in body["error"]
    status, body = http_exchange(
        server.port, f"POST /ask HTTP/1.1\r\nHost: x\r\n{token}Content-Length: 6\r\n", b"[1, 2]"
    )
    assert (status, body["error"]) == (400, "the request body must be a JSON object, got list")
    status, body = http_exchange(server.port, f"POST /ask HTTP/1.1\r\nHost: x\r\n{token}Content-Length: lots\r\n")
    assert (status, body["error"]) == (400, "bad Content-Length 'lots'")
    started = time.monotonic()
    status, body = http_exchange(
        server.port, f"POST /ask HTTP/1.1\r\nHost: x\r\n{token}Content-Length: 100\r\n", b'{"question"'
    )
    assert (status, body["error"]) == (408, "the request body did not arrive within 1 s")
    assert time.monotonic() - started < 4.0

    request = urllib.request.Request(
        f"{server.url}/ask",
        data=json.dumps({"question": "ok?"}).encode(),
        headers={"Authorization": f"Bearer {config['token']}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        assert json.loads(response.read()) == {"text": "fine"}


def test_a_connection_flood_on_the_vlm_channel_is_refused_and_it_recovers(channel: tuple[VLMServer, dict]) -> None:
    server, config = channel
    stalled = [
        socket.create_connection(("127.0.0.1", server.port), timeout=5) for _ in range(vlm_server.MAX_CONNECTIONS)
    ]
    for client in stalled:
        client.sendall(b"POST /ask HTTP/1.1\r\nHost: x\r\n")  # headers never finished
    time.sleep(0.3)
    good = (
        f"POST /ask HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {config['token']}\r\nContent-Length: 19\r\n",
        b'{"question": "ok?"}',
    )
    status, body = http_exchange(server.port, *good)
    assert (status, body.get("error")) == (503, "the server is serving 8 connections already; retry shortly"), body
    time.sleep(vlm_server.READ_TIMEOUT_S + 0.5)  # the stalled clients are dropped after the read timeout
    for client in stalled:
        client.close()
    assert http_exchange(server.port, *good) == (200, {"text": "fine"})


def test_session_start_passes_the_sandbox_mode_to_the_kernel(root: Path, task: Task) -> None:
    frame = task.inputs[0].paths[0]
    env = dict(os.environ, SPATIALCLAW_KERNEL_MEMORY_MB="0")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "spatialclaw.cli", "session", *args, "--root", str(root), "--json"],
            capture_output=True,
            text=True,
            cwd=REPO_ROOT,
            env=env,
            timeout=120,
        )

    started = run("start", "--frames", frame, "--question", "q?", "--id", "unboxed", "--sandbox", "off")
    assert started.returncode == 0, started.stderr
    try:
        assert json.loads(run("status", "unboxed").stdout)["sandboxed"] is False
    finally:
        run("close", "unboxed")
    refused = run("start", "--frames", frame, "--question", "q?", "--sandbox", "sometimes")
    assert refused.returncode == 2 and "invalid choice: 'sometimes'" in refused.stderr
