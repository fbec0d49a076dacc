"""The native episode format: incremental events, content-addressed images and long texts, torn tails."""

from __future__ import annotations

import json

from PIL import Image

from spatialclaw.chat import ImagePart, Message, TextPart
from spatialclaw.trajectories.episode_log import LONG_TEXT_CHARS, TrajectoryWriter, load_episode


def _conversation(step: int, system: str, image: ImagePart) -> list[Message]:
    return [
        Message.text("system", system),
        Message("user", [TextPart("How far is the chair?"), image]),
        *[Message.text("assistant", f"step {i}") for i in range(step)],
    ]


def test_long_texts_and_images_are_stored_once_and_requests_round_trip_exactly(tmp_path):
    system = "manual line\n" * (LONG_TEXT_CHARS // 8)
    image = ImagePart.from_pil(Image.new("RGB", (32, 24), "green"), label="frame 0")
    with TrajectoryWriter(tmp_path) as writer:
        for step in range(5):
            writer.write(
                "model_call", step=step, request={"messages": writer.messages(_conversation(step, system, image))}
            )
        writer.write("end", reason="answered")
    log = (tmp_path / "episode.jsonl").read_text()
    assert system not in log and log.count('"text_ref"') == 5
    assert len(list((tmp_path / "texts").iterdir())) == 1 and len(list((tmp_path / "images").iterdir())) == 1
    episode = load_episode(tmp_path)
    assert episode.complete
    for step, event in enumerate(episode.of_type("model_call")):
        messages = episode.messages(event)
        assert messages[0].text_content == system
        assert messages[1].images[0].png == image.png
        assert [m.text_content for m in messages[2:]] == [f"step {i}" for i in range(step)]


def test_a_torn_last_line_loads_as_an_incomplete_prefix(tmp_path):
    with TrajectoryWriter(tmp_path) as writer:
        writer.write("task", task={"question": "q"})
        writer.write("cell", step=0, code="x = 1")
    with open(tmp_path / "episode.jsonl", "a") as handle:
        handle.write(json.dumps({"type": "cell", "seq": 2})[:12])
    episode = load_episode(tmp_path)
    assert not episode.complete and episode.torn_tail
    assert [e["type"] for e in episode.events] == ["task", "cell"]
