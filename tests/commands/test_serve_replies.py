"""``spatialclaw serve replies FILE``: recorded replies served as an OpenAI-compatible endpoint on 127.0.0.1,
driven by ``spatialclaw run --model openai-compat:...@URL`` over real HTTP, stopped by SIGTERM or Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
from PIL import Image

BIN = Path(sys.executable).parent / "spatialclaw"


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "SPATIALCLAW_COMPAT"))}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _serve(replies: Path, *options: str) -> tuple[subprocess.Popen[str], str, str]:
    """The server process, the URL it printed and the ``--model`` spec it printed."""
    server = subprocess.Popen(
        [str(BIN), "serve", "replies", str(replies), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    assert server.stdout is not None
    first, second = server.stdout.readline(), server.stdout.readline()
    assert second.startswith("--model openai-compat:"), first + second + server.stderr.read()  # type: ignore[union-attr]
    return server, first.rsplit(" at ", 1)[1].strip(), second.split(maxsplit=1)[1].strip()


def test_run_answers_from_the_served_replies_over_http_and_sigterm_stops_the_server(tmp_path: Path) -> None:
    Image.fromarray(np.full((24, 32, 3), 90, np.uint8)).save(tmp_path / "grey.png")
    replies = tmp_path / "replies.jsonl"
    cells = [
        "```python\nprint(frames[0].shape)\n```",
        "```python\nimport numpy as np\nanswer(float(np.asarray(frames[0]).mean()))\n```",
    ]
    replies.write_text("".join(json.dumps(cell) + "\n" for cell in cells))
    port = _free_port()
    server, url, spec = _serve(replies, "--port", str(port), "--model", "my-vlm")
    try:
        assert url == f"http://127.0.0.1:{port}/v1" and spec == f"openai-compat:my-vlm@{url}"
        done = subprocess.run(
            [str(BIN), "run", "--model", spec, "--frames", str(tmp_path / "grey.png"), "--question",
             "How bright is the image (0-255)?", "--answer-type", "number", "--quiet", "--out", str(tmp_path / "ep")],
            cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.strip().splitlines()[-1] == "answer: 90.0"
        calls = [json.loads(line) for line in (tmp_path / "ep" / "episode.jsonl").read_text().splitlines()]
        assert [c["model"] for c in calls if c.get("type") == "model_call"] == [spec, spec]
    finally:
        server.send_signal(signal.SIGTERM)
        out, err = server.communicate(timeout=20)
    assert server.returncode == 0, err
    assert out.strip().splitlines()[-1] == "stopped after 2 request(s)"


def test_ctrl_c_stops_the_server_and_a_missing_file_is_named(tmp_path: Path) -> None:
    replies = tmp_path / "replies.txt"
    replies.write_text("ANSWER: 1\n")
    server, url, _ = _serve(replies)
    server.send_signal(signal.SIGINT)
    out, err = server.communicate(timeout=20)
    assert server.returncode == 0 and url.startswith("http://127.0.0.1:"), err
    assert out.strip().splitlines()[-1] == "stopped after 0 request(s)"
    done = subprocess.run(
        [str(BIN), "serve", "replies", str(tmp_path / "nope.jsonl")], env=_env(), capture_output=True, text=True
    )
    assert done.returncode == 2 and f"{tmp_path / 'nope.jsonl'}: no such file" in done.stderr, done.stderr
