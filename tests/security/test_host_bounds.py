"""Every kernel costs its host bounded resources, whatever its cells do: forged or oversized display messages,
output streamed after a cell ended, huge prints, oversized relay requests, connection floods on the host's
channels, concurrent side-channel calls against a token limit, a workdir of countless files.

Each attack is performed by a real cell in a real (sandboxed) kernel; the host must stay up, ``execute`` must
return a result that says what was dropped, and the host's memory, descriptors and tokens stay within bounds.
Linux with bubblewrap only (the sandbox's platform); elsewhere the module is skipped with the reason.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psutil
import pytest

from spatialclaw.agent.config import AgentConfig
from spatialclaw.agent.limits import Limits
from spatialclaw.agent.loop import Agent
from spatialclaw.agent.vlm_server import VLMServer
from spatialclaw.chat import ModelReply
from spatialclaw.kernel.channels import PerceptionRelay, UnixForwarder
from spatialclaw.kernel.kernel import Kernel
from spatialclaw.kernel.sandbox import ResourceLimits, support
from spatialclaw.task import Task
from spatialclaw.testing import Reply, ScriptedProvider
from spatialclaw.trajectories.episode_log import load_episode
from tests.agent_helpers import cell, openai_compat, openai_text

pytestmark = pytest.mark.skipif(not support().available, reason=f"no kernel sandbox here: {support().missing}")

HOST = psutil.Process()
MiB = 1 << 20


def rss() -> int:
    return int(HOST.memory_info().rss)


def peak_rss_during(action: Callable[[], Any]) -> tuple[Any, int]:
    """``action()``'s value and the host's highest RSS while it ran (sampled every 5 ms)."""
    peak, done = [rss()], threading.Event()

    def watch() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], rss())
            time.sleep(0.005)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        value = action()
    finally:
        done.set()
        watcher.join()
    return value, peak[0]


@pytest.fixture(scope="module")
def kernel() -> Iterator[Kernel]:
    with Kernel() as k:
        yield k


FORGED = r"""
import base64, io
from IPython.display import publish_display_data
from PIL import Image
publish_display_data({"image/png": 12345})                                    # not a string
publish_display_data({"image/png": "not base64 at all!!"})
publish_display_data({"image/png": base64.b64encode(b"plain text").decode()})  # not a PNG
buf = io.BytesIO(); Image.new("RGB", (16, 16)).save(buf, "JPEG"); jpeg = bytearray(buf.getvalue())
at = jpeg.index(b"\xff\xc0"); jpeg[at + 5 : at + 9] = (20000).to_bytes(2, "big") * 2   # a 20000x20000 JPEG header
publish_display_data({"image/jpeg": base64.b64encode(bytes(jpeg)).decode()})
buf = io.BytesIO(); Image.new("RGB", (8, 8)).save(buf, "PNG"); png = bytearray(buf.getvalue())
good = base64.b64encode(bytes(png)).decode()
png[16:24] = (100000).to_bytes(4, "big") * 2                                  # a PNG header claiming 10^10 pixels
publish_display_data({"image/png": base64.b64encode(bytes(png)).decode()})
publish_display_data({"image/png": good}, metadata={"spatialclaw": ["not", "a", "dict"]})
publish_display_data({"text/plain": 7})
publish_display_data({"application/vnd.spatialclaw.state+json": {"variables": "x", "error": 5, "names": 3}})
publish_display_data({"application/vnd.spatialclaw.answer+json": {"value": object.__name__, "raw": [1]}})
pub = get_ipython().display_pub
pub.session.send(pub.pub_socket, "stream", {"name": "stdout", "text": 5}, parent=pub.parent_header)
pub.session.send(pub.pub_socket, "error", {"ename": 1, "evalue": [2], "traceback": 3}, parent=pub.parent_header)
pub.session.send(pub.pub_socket, "display_data", {"data": {"image/png": "A" * (60 << 20)}}, parent=pub.parent_header)
print("still here")
"""


def test_forged_and_oversized_display_messages_become_notes_and_never_raise(kernel: Kernel) -> None:
    result = kernel.execute(FORGED, timeout=120)
    text = result.to_text()
    assert "still here" in result.stdout
    assert [(image.width, image.height, image.label) for image in result.images] == [(8, 8, None)]
    for said in (
        "image/png data is a int, not a base64 string",
        "image/png header gives no valid size",
        "image/jpeg is over the limit of 50,000,000 pixels",
        "image/png is 100000x100000 pixels, over the limit",
        "text/plain is a int, not a string",
        "the kernel's state report had fields of the wrong type",
        "stream message from the kernel was dropped: its text is a int",
        "display_data message of 60 MiB was over the 48 MiB limit per message and was dropped",
    ):
        assert said in text, (said, text)
    assert kernel.execute("print(6 * 7)").stdout == "42\n"  # the kernel and the host go on


def test_output_streamed_after_its_cell_ended_is_dropped_and_counted_not_queued_in_the_host(kernel: Kernel) -> None:
    kernel.execute("1")
    before = rss()
    started = kernel.execute(
        "import threading, time\n"
        "from IPython.display import publish_display_data\n"
        "blob = 'x' * (20 << 20)\n"
        "def flood():\n"
        "    time.sleep(0.5)\n"
        "    end = time.time() + 4\n"
        "    while time.time() < end:\n"
        "        publish_display_data({'text/plain': blob})\n"
        "threading.Thread(target=flood, daemon=True).start()\n"
    )
    assert started.ok
    grown = 0
    for _ in range(6):  # the host sits idle while the thread streams 20 MB messages
        time.sleep(1.0)
        grown = max(grown, rss() - before)
    assert grown < 200 * MiB, f"the idle host grew by {grown / MiB:.0f} MiB"
    after = kernel.execute("print('next')", timeout=60)
    assert after.stdout == "next\n"
    assert any("arrived after the cell that made them had ended" in note for note in after.notes), after.notes


def test_a_huge_print_keeps_its_head_and_tail_and_costs_the_host_one_copy(kernel: Kernel) -> None:
    before = rss()
    result, peak = peak_rss_during(lambda: kernel.execute("print('<' + 'a' * (300 << 20) + '>')", timeout=180))
    assert result.ok, result.to_text()[-500:]
    assert result.stdout.startswith("<aaa") and result.stdout.rstrip().endswith("aaa>")
    assert len(result.stdout) < 2 * kernel.output_cap_chars
    assert "bytes dropped while streaming" in result.stdout
    assert any("over the 48 MiB limit per message" in note for note in result.notes)
    assert peak - before < 450 * MiB, f"a 300 MB print raised the host's RSS by {(peak - before) / MiB:.0f} MiB"


OVERSIZED_REQUESTS = r"""
import os, pickle, socket, struct
def request(size):
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(os.environ["SPATIALCLAW_PERCEPTION_SOCKET"])
        s.sendall(struct.pack(">Q", size))
        chunk = b"x" * (1 << 20)
        for _ in range(size >> 20):
            s.sendall(chunk)
        length = struct.unpack(">Q", s.recv(8, socket.MSG_WAITALL))[0]
        return pickle.loads(s.recv(length, socket.MSG_WAITALL))
for _ in range(3):
    print(request(512 << 20)["error"]["message"])
"""


def test_the_perception_relay_refuses_an_oversized_request_from_its_length() -> None:
    with Kernel(env={"SPATIALCLAW_PERCEPTION": "ray://ns-test/perception-0"}) as kernel:
        before = rss()
        result, peak = peak_rss_during(lambda: kernel.execute(OVERSIZED_REQUESTS, timeout=120))
    assert result.ok, result.to_text()
    lines = result.stdout.splitlines()
    assert len(lines) == 3 and all("over the relay's limit of 256 MiB" in line for line in lines), lines
    assert peak - before < 100 * MiB, f"3 x 512 MiB requests raised the host's RSS by {(peak - before) / MiB:.0f} MiB"


FLOOD = r"""
import os, socket
held = []
for path in (vlm._config["socket"], os.environ["SPATIALCLAW_PERCEPTION_SOCKET"]):
    for _ in range(300):
        s = socket.socket(socket.AF_UNIX)
        s.connect(path)
        held.append(s)
print(len(held))
"""


def test_idle_connections_to_the_host_channels_are_capped_per_kernel() -> None:
    with VLMServer() as server:
        victim = server.open_channel(lambda messages, purpose: ModelReply(text="still served"))
        hostile = server.open_channel(lambda messages, purpose: ModelReply(text="x"))
        env = {"SPATIALCLAW_PERCEPTION": "ray://ns-test/perception-0"}
        with Kernel(vlm=hostile, env=env) as attacker, Kernel(vlm=victim) as other:
            descriptors = HOST.num_fds()
            flood = attacker.execute(FLOOD, timeout=120)
            assert flood.ok, flood.to_text()
            time.sleep(0.5)
            grown = HOST.num_fds() - descriptors
            # each forwarded vlm connection holds 3 host descriptors, each relay connection 1, and each channel
            # keeps up to 32 refused ones for a second (so that they read their refusal); 600 were opened
            assert grown <= 3 * UnixForwarder.MAX_CONNECTIONS + PerceptionRelay.MAX_CONNECTIONS + 2 * 32 + 8, grown
            asked = other.execute("import numpy as np\nprint(vlm.ask(np.zeros((8, 8, 3), np.uint8), 'ok?'))")
            assert asked.stdout == "still served\n", asked.to_text()
            refused = attacker.execute("import numpy as np\nvlm.ask(np.zeros((8, 8, 3), np.uint8), 'ok?')")
            assert "already holds the most vlm connections" in refused.to_text()
            attacker.execute("for s in held: s.close()")


def test_the_vlm_server_listens_only_on_a_socket_in_a_private_directory() -> None:
    listening_before = {c.laddr for c in HOST.net_connections("tcp") if c.status == psutil.CONN_LISTEN}
    with VLMServer() as server:
        config = server.open_channel(lambda messages, purpose: ModelReply(text="x"))
        listening = {c.laddr for c in HOST.net_connections("tcp") if c.status == psutil.CONN_LISTEN}
        directory = os.stat(os.path.dirname(config["socket"]))
    assert "url" not in config and listening == listening_before  # no TCP port another local user could flood
    assert stat.S_IMODE(directory.st_mode) == 0o700 and directory.st_uid == os.getuid()


def test_concurrent_side_channel_calls_never_spend_past_the_token_limit(kernel: Kernel, tmp_path: Any) -> None:
    asks = (
        "import threading\nimport numpy as np\nreplies, errors = [], []\n"
        "def ask():\n"
        "    try:\n        replies.append(vlm.ask(np.zeros((8, 8, 3), np.uint8), 'How many?'))\n"
        "    except Exception as error:\n        errors.append(str(error))\n"
        "threads = [threading.Thread(target=ask) for _ in range(50)]\n"
        "for t in threads: t.start()\n"
        "for t in threads: t.join()\n"
        "print(len(replies), 'answered,', len(errors), 'refused')\n"
        "print([e for e in errors if 'tokens limit' in e][:1])"
    )

    steps = [cell(asks), cell("answer(1)")]

    def script(request: dict[str, Any], index: int) -> Reply:
        if len(request["messages"]) > 1:  # a step of the agent
            return Reply(steps.pop(0), usage={"prompt_tokens": 100, "completion_tokens": 20})
        assert "How many?" in openai_text(request)
        time.sleep(0.2)  # the calls overlap
        return Reply("Three.", usage={"prompt_tokens": 300, "completion_tokens": 600})

    task = Task("How many?", answer_type="number", task_id="tokens")
    config = AgentConfig(limits=Limits(tokens=6000), fsync=False)
    with ScriptedProvider(script) as server:
        result = Agent(openai_compat(server), config).run(task, tmp_path / "ep", kernel=kernel)
    episode = load_episode(result.trajectory_dir)
    calls = [e for e in episode.of_type("model_call") if e.get("response")]
    first_step = calls[0]["usage"]
    side = [e["usage"] for e in calls if e["purpose"] == "vlm.ask"]
    spent = sum(u["prompt_tokens"] + u["completion_tokens"] for u in [first_step, *side])
    assert 3 <= len(side) < 50 and spent <= 6000, (len(side), spent)  # 50 x 900 would be 45,000
    ((_, first), *_) = episode.cells()
    assert "refused" in first.stdout and "held by calls in flight" in first.stdout, first.stdout
    assert result.status == "answered", result.error


def test_a_workdir_of_countless_files_is_measured_within_a_budget(tmp_path: Any) -> None:
    with Kernel(limits=ResourceLimits(workdir_mb=1024)) as kernel:
        made = kernel.execute(
            "import os\nos.makedirs('many', exist_ok=True)\n"
            "for i in range(60_000):\n    open(f'many/{i}', 'w').close()\nprint('made')",  # 3x the walk's budget
            timeout=300,
        )
        assert made.stdout == "made\n", made.to_text()
        started = time.monotonic()
        result = kernel.execute("pass")
        took = time.monotonic() - started
    assert any("at least" in note and "more files than the host counts" in note for note in result.notes), result.notes
    assert took < 1.0, f"a cell took {took:.2f} s with 60,000 files in the workdir"
