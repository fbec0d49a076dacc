"""A session's ``vlm`` calls stay within its token limit (issue 30, notes).

``SessionVLM.call`` had no token or cost limit at all: a cell calling ``vlm.ask`` in a loop spent the
operator's key without end, on a model an MCP client may have chosen. A session's ``vlm.*`` calls now spend at
most ``--vlm-max-tokens`` (200,000 by default) and ``--vlm-max-cost`` US dollars in all, held before each call as
an episode's side-channel calls are; the call past it is refused and the cell sees why.
"""

from __future__ import annotations

from pathlib import Path

from spatialclaw.testing.provider_server import Reply, ScriptedProvider
from tests.interactive.test_session import frame_files, one_json, spatialclaw, start

__all__ = ["frame_files"]  # the fixture, used by name

LOOP = """
answers = []
try:
    for _ in range(20):
        answers.append(vlm.ask(frames[1], 'What is in this image?'))
finally:
    print(len(answers), 'answered')
"""


def test_vlm_calls_past_the_session_default_token_limit_are_refused(
    sessions_env: dict[str, str], frame_files: list[Path]
) -> None:
    expensive = Reply("A green square.", usage={"prompt_tokens": 40_000, "completion_tokens": 10_000})
    with ScriptedProvider([expensive] * 20) as server:
        model = f"openai-compat:scripted@{server.url}"
        session = start(sessions_env, frame_files, "--vlm-model", model)["session"]  # no limit given: the default
        try:
            step = one_json(spatialclaw(sessions_env, "session", "exec", session, "--code", "-", "--json", stdin=LOOP))
        finally:
            spatialclaw(sessions_env, "session", "close", session)
        made = len(server.requests)
    # each call holds its estimate (about 1,200 tokens) and spends 50,000: the fourth fits in the 50,000 left,
    # the fifth finds the limit spent
    assert made == 4, step["text"]
    assert "4 answered" in step["text"]
    assert "the tokens limit of 200000 tokens was reached (used 200000 tokens)" in step["text"], step["text"]
    assert "the call was not made" in step["text"]
