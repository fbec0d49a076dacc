"""The keyless ``scripted:`` models: a fixed policy that plays any interface, or recorded replies from a file.

``scripted:look-and-answer`` reads each request the way a model would and picks its move from it:

- ``code`` interface (a system prompt, no tools): cell 1 prints ``frames`` and shows frame 0; cell 2 runs
  a real primitive, ``find_color(frames[0], "red")``; cell 3 answers from that result (the count of red
  regions, mapped onto the answer type: an option letter, a number, yes/no or a short text).
- ``single-pass``: one cell that looks, runs the tool and prints the count; then ``ANSWER: ...`` from the
  printed count.
- ``tool-calls`` (the request carries ``tools``): a ``find_color`` call on ``"$frames[0]"``, then a call
  to ``answer`` from the number of regions in the JSON result.
- ``no-tools``, fallbacks and any request for a text answer: ``ANSWER: ...`` from whatever count the
  conversation shows (0 when none).

The answers are usually wrong: the policy exercises the whole loop (kernel, images, tools, trajectories,
scoring, reports, exports) honestly, with no key and no network. Replies cost 0 USD.

``scripted:solve-synthetic`` (:mod:`spatialclaw.models.solve_synthetic`) measures the ``synthetic``
benchmark's scenes with the kernel's tools and answers most of them right.

``scripted:replies=FILE`` answers the calls in order from ``FILE``: a JSON Lines file (each line a JSON
string, or an object ``{"text": ..., "tool_calls": [{"name": ..., "arguments": {...}}]}``) or plain text,
one reply per line (write a line break inside a reply as ``\\n``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from spatialclaw.chat import Message, ModelReply, TextPart, ToolCall
from spatialclaw.models.base import Model, ModelError
from spatialclaw.models.scripted import ScriptedModel

__all__ = ["POLICIES", "LookAndAnswer", "replies_from_file", "scripted_model"]

POLICIES = ("look-and-answer", "solve-synthetic")
COLOR = "red"


def scripted_model(name: str) -> Model:
    """The model of spec ``scripted:NAME``: a policy from :data:`POLICIES` or ``replies=FILE``."""
    if name.startswith("replies="):
        path = Path(name.removeprefix("replies=")).expanduser()
        model = ScriptedModel(replies_from_file(path), name=name)
        return model
    if name == "look-and-answer":
        return LookAndAnswer()
    if name == "solve-synthetic":
        from spatialclaw.models.solve_synthetic import SolveSynthetic

        return SolveSynthetic()
    raise ValueError(
        f"unknown scripted model {name!r}; use scripted:{' | scripted:'.join(POLICIES)} or scripted:replies=FILE"
    )


def replies_from_file(path: Path) -> list[str | ModelReply]:
    """The replies in ``path`` (JSON Lines or one plain-text reply per line; blank lines skipped)."""
    if not path.is_file():
        raise FileNotFoundError(f"scripted:replies={path}: no such file")
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not lines:
        raise ValueError(f"scripted:replies={path}: the file holds no replies")
    try:
        values = [json.loads(line) for line in lines]
    except ValueError:
        return [line.replace("\\n", "\n") for line in lines]
    replies: list[str | ModelReply] = []
    for number, value in enumerate(values, 1):
        if isinstance(value, str):
            replies.append(value)
        elif isinstance(value, dict) and isinstance(value.get("text", ""), str):
            calls = [
                ToolCall(str(c.get("id") or f"call_{number}_{i}"), str(c["name"]), dict(c.get("arguments") or {}))
                for i, c in enumerate(value.get("tool_calls") or [])
            ]
            replies.append(ModelReply(text=value.get("text", ""), tool_calls=calls))
        else:
            raise ValueError(f"{path}:{number}: a reply is a JSON string or an object with 'text' / 'tool_calls'")
    return replies


def _text(message: Message) -> str:
    return "\n".join(p.text for p in message.content if isinstance(p, TextPart))


def _answer_kind(prompt: str) -> tuple[str, str]:
    """``(answer type, option letters)`` read from the task prompt (``Answer type: ...`` and its options)."""
    kind = re.search(r"Answer type:\s*([a-z ]+?)\s*\.", prompt)
    letters = "".join(re.findall(r"^\(?([A-Z])[.)]\s", prompt, flags=re.MULTILINE))
    answer_type = kind.group(1).strip().replace(" ", "_") if kind else ("multiple_choice" if letters else "number")
    if answer_type == "multiple_choice" and not letters:
        letters = "ABCD"
    return answer_type, letters


def _value(count: int, answer_type: str, letters: str) -> Any:
    """The answer the policy gives when the tool found ``count`` regions."""
    if answer_type == "multiple_choice":
        return letters[count % len(letters)]
    if answer_type == "yes_no":
        return "yes" if count else "no"
    if answer_type == "text":
        return f"{count} {COLOR} regions"
    return float(count)


def _answer_expression(answer_type: str, letters: str) -> str:
    """The same mapping as :func:`_value`, as kernel code over ``blobs``."""
    if answer_type == "multiple_choice":
        return f"{letters!r}[len(blobs) % {len(letters)}]"
    if answer_type == "yes_no":
        return '"yes" if len(blobs) else "no"'
    if answer_type == "text":
        return f'f"{{len(blobs)}} {COLOR} regions"'
    return "float(len(blobs))"


LOOK = """I look at the frames first.
```python
print(frames)
if len(frames):
    show(frames[0], label="frame 0")
```"""
TOOL = f"""I run a tool on frame 0 and print what it found.
```python
blobs = find_color(frames[0], {COLOR!r}) if len(frames) else []
print(f"tool result: {{len(blobs)}} {COLOR} region(s)")
print(blobs)
```"""


class LookAndAnswer(Model):
    """The ``scripted:look-and-answer`` policy (see the module docstring); stateless, so one instance may
    serve concurrent episodes."""

    def __init__(self) -> None:
        self.name = "look-and-answer"
        self.spec = "scripted:look-and-answer"

    def chat(self, messages: list[Message], *, purpose: str = "step", **params: Any) -> ModelReply:
        users = [m for m in messages if m.role == "user"]
        if not users:
            raise ModelError("scripted:look-and-answer got no user message")
        answer_type, letters = _answer_kind(_text(users[0]))
        last = _text(messages[-1]) if messages[-1].role in ("user", "tool") else ""
        seen = [_text(m) for m in messages[1:]]
        count = _last_count(seen)
        if params.get("tools"):
            done = [m for m in messages if m.role == "tool"]
            if not done:
                call = ToolCall("call_look_1", "find_color", {"frame": "$frames[0]", "color": COLOR})
                return self._reply("I look for red regions in frame 0.", [call])
            value = _value(count, answer_type, letters)
            return self._reply("I answer from the tool result.", [ToolCall("call_answer", "answer", {"value": value})])
        if purpose == "plan":
            return self._reply(f"Plan: look at frame 0, count {COLOR} regions with find_color, answer from the count.")
        if messages[0].role != "system" or purpose != "step":
            value = _value(count, answer_type, letters)
            return self._reply(f"The tool found {count} {COLOR} region(s).\nANSWER: {value}")
        if "exactly one step" in last:
            code = TOOL.split("```python\n", 1)[1].rsplit("```", 1)[0]
            return self._reply(f"One cell: look, run the tool, print.\n```python\nprint(frames)\n{code}```")
        step = sum(1 for m in messages if m.role == "assistant")
        if step == 0:
            return self._reply(LOOK)
        if step == 1:
            return self._reply(TOOL)
        expression = _answer_expression(answer_type, letters)
        return self._reply(f"I answer from the tool result.\n```python\nanswer({expression})\n```")

    def _reply(self, text: str, calls: list[ToolCall] | None = None) -> ModelReply:
        return ModelReply(text=text, cost_usd=0.0, raw={"scripted": self.spec}, tool_calls=calls or [])


def _last_count(texts: list[str]) -> int:
    """The number of regions the tool reported last in the conversation (0 when it never ran)."""
    for text in reversed(texts):
        match = re.search(rf"tool result: (\d+) {COLOR}", text) or re.search(rf"(\d+) {COLOR} blobs?\b", text)
        if match:
            return int(match.group(1))
        if re.search(rf"no {COLOR} blobs found", text):
            return 0
        try:
            result = json.loads(text)
        except ValueError:
            continue
        if isinstance(result, dict) and isinstance(result.get("result"), list):
            return len(result["result"])
    return 0
