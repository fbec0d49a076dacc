"""The system prompt is assembled from templates and from the primitives' real signatures and docstrings."""

from __future__ import annotations

import inspect
import re
import sys
import types

import pytest

from spatialclaw.agent import kernel_docs, prompting
from spatialclaw.primitives.display import show as display
from spatialclaw.primitives.runtime import namespace
from spatialclaw.primitives.runtime.lazy import LazyCallable
from spatialclaw.primitives.runtime.namespace import NAMESPACE_NAMES
from spatialclaw.task import FrameSpec, Task


@pytest.fixture
def fresh_api(monkeypatch):
    kernel_docs.api_section.cache_clear()
    yield monkeypatch
    kernel_docs.api_section.cache_clear()


def test_api_section_quotes_the_real_docstring_and_signature_of_show(fresh_api):
    api = kernel_docs.api_section("full")
    assert inspect.getdoc(display.show) in api
    assert (
        "show(*images: Any, label: str | list[str] | None = None, sheet: bool = False, contrast: None|'auto' = None"
        in api
    )


def test_every_namespace_name_is_documented_or_declared_unavailable(fresh_api):
    api = kernel_docs.api_section("full")
    for name in NAMESPACE_NAMES:
        assert f"`{name}" in api, f"the prompt says nothing about `{name}`"


def test_a_primitive_added_to_the_namespace_is_documented_without_editing_the_prompts(fresh_api):
    module = types.ModuleType("spatialclaw_fake_primitive")

    class Frame:
        """A stand-in type, named in the signature below."""

    def measure(frame: Frame, metres: float = 1.5) -> float:
        """Measure something in metres; a unique sentence 7f3a."""
        return metres

    module.measure = measure
    fresh_api.setitem(sys.modules, "spatialclaw_fake_primitive", module)
    real = namespace.build_namespace
    # a primitive added to the kernel namespace (lazily, as the namespace binds functions)
    fresh_api.setattr(
        namespace,
        "build_namespace",
        lambda **options: {**real(**options), "measure": LazyCallable("spatialclaw_fake_primitive", "measure")},
    )
    api = kernel_docs.api_section("full")
    assert "### `measure(frame: Frame, metres: float = 1.5) -> float`" in api
    assert "a unique sentence 7f3a" in api
    core = kernel_docs.api_section("core")
    assert "- `measure(frame, metres=1.5) -> float`: Measure something in metres; a unique sentence 7f3a." in core


def test_a_missing_module_is_listed_as_unavailable_not_documented(fresh_api):
    fresh_api.setattr(
        kernel_docs, "NAMESPACE_DOCS", [("ghost", "spatialclaw.primitives.no_such_module", "ghost", "function")]
    )
    api = kernel_docs.api_section()
    assert "Not available in this installation (do not call): `ghost`." in api
    assert "### `ghost" not in api


def test_system_prompt_fills_every_placeholder_and_states_the_budget():
    text = prompting.system_prompt(max_steps=17)
    assert "at most 17 steps" in text
    assert not re.search(r"\$[a-z_]+", text), "an unfilled $placeholder is left in the system prompt"
    assert "gravity-aligned with +Z up" in text  # the conventions of DESIGN.md


def test_every_template_renders_with_its_values():
    task = Task("How far?", inputs=[], answer_type="number")
    assert "Question: How far?" in prompting.task_prompt(task)
    assert "ANSWER: 2.5" in prompting.fallback_prompt(task, "You have used all 5 steps")
    with pytest.raises(KeyError, match=r"\$step"):
        prompting.render("observation.md", max_steps=3, output="x")


def test_task_prompt_letters_the_choices_and_describes_the_inputs(tmp_path):
    video = tmp_path / "clip.mp4"
    task = Task("Which is closer?", inputs=[FrameSpec.video(video, fps=2.0)], choices=["the chair", "the table"])
    text = prompting.task_prompt(task)
    assert "A. the chair\nB. the table" in text
    assert "the video clip.mp4, sampled at 2 fps" in text
    assert "multiple choice" in text


def test_options_already_in_the_question_are_not_listed_again():
    question = "Which way did the camera turn?\nA. left\nB. right"
    task = Task(question, choices=["left", "right"], meta={"options_in_question": True})
    text = prompting.task_prompt(task)
    assert text.count("A. left") == 1
    assert "Options:" not in text


def test_answer_rules_per_type_and_unknown_type():
    assert 'answer("yes")' in prompting.answer_rules("yes_no")
    assert "metres unless" in prompting.answer_rules("number")
    with pytest.raises(ValueError, match="known: multiple_choice"):
        prompting.answer_rules("essay")


def test_prompt_version_is_the_declared_version_plus_a_content_hash():
    from spatialclaw.prompts import VERSION

    version = prompting.prompt_version()
    assert re.fullmatch(rf"{re.escape(VERSION)}\+[0-9a-f]{{8}}", version)


def test_the_brief_manual_keeps_every_signature_in_under_half_the_text():
    full, brief = kernel_docs.api_section("full"), kernel_docs.api_section("brief")
    assert len(brief) < len(full) / 2
    signatures = [line for line in full.splitlines() if re.match(r"#{3,4} `|- `[^`]", line)]
    assert signatures and all(line in brief for line in signatures)
    with pytest.raises(ValueError, match="core, brief, full"):
        kernel_docs.api_section("short")


def test_the_agent_sends_the_brief_manual_when_asked(tmp_path):
    from spatialclaw.agent.config import AgentConfig
    from spatialclaw.agent.loop import Agent
    from spatialclaw.task import FrameSpec, Task
    from spatialclaw.testing import ScriptedProvider
    from tests.agent_helpers import cell, openai_compat, photo

    task = Task("Left or right?", inputs=[FrameSpec.images([photo(tmp_path)])], choices=["left", "right"])
    with ScriptedProvider([cell("answer('A')")]) as server:
        result = Agent(openai_compat(server), AgentConfig(api_detail="brief")).run(task, tmp_path / "ep")
    system = server.requests[0]["messages"][0]["content"]
    system = system if isinstance(system, str) else "".join(p.get("text", "") for p in system)
    assert result.answer == "A"
    from spatialclaw.primitives.perception.availability import tool_status

    tools = {name: status.to_dict() for name, status in tool_status().items()}
    assert system == prompting.system_prompt(AgentConfig().max_steps, "brief", tools, task.answer_type)
    with pytest.raises(ValueError, match="api_detail"):
        AgentConfig(api_detail="tiny")


def test_a_session_prompt_shows_only_what_the_episode_can_use(tmp_path):
    from spatialclaw.interactive.session_prompt import build_session_prompt
    from spatialclaw.primitives.runtime.conventions import CONVENTIONS
    from spatialclaw.task import Task

    task = Task("How far is the chair from the table, in metres?", answer_type="number")
    text = build_session_prompt(task, "s1", tmp_path, 30, vlm_available=False)
    assert len(text) < 16_000
    assert "`vlm` (VLMClient): UNAVAILABLE here" in text and "vlm.ask(" not in text and "vlm.locate(" not in text
    rules = text.split("## Answer rules")[1].split("##")[0]
    assert "plain int or float" in rules and "yes_no" not in rules and "letter" not in rules
    assert CONVENTIONS in text and "pitch > 0 tilts UP" in text
    # methods a mixin gives the scene are tools too (models missed link_views when the prompt left them out)
    for method in ("scene.add_view(", "scene.link_views(", "scene.set_north(", "scene.compass(", "scene.wall_facing("):
        assert method in text, method
    with_vlm = build_session_prompt(task, "s1", tmp_path, 30, vlm_available=True)
    assert "vlm.ask(" in with_vlm
    assert prompting.answer_rules(None).count(":") >= 4  # without a known type, all four are shown
