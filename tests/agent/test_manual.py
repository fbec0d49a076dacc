"""A manual that tells the truth: learned tools report whether they can run, the prompt says so, a call
to one that cannot fails at once, and the manual comes in tiers (a core in the prompt, the rest on demand)."""

from __future__ import annotations

import inspect

import pytest

from spatialclaw import Kernel
from spatialclaw.agent import kernel_docs, prompting
from spatialclaw.agent.config import AgentConfig
from spatialclaw.agent.loop import Agent
from spatialclaw.primitives.perception.availability import tool_status, weights_status
from spatialclaw.primitives.runtime.namespace import NAMESPACE_NAMES
from spatialclaw.task import FrameSpec, Task
from spatialclaw.testing import ScriptedProvider
from tests.agent_helpers import cell, openai_compat, openai_text, photo

LEARNED = ("depth", "detect", "segment")


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """No weights anywhere: an empty Hugging Face cache, offline mode, no model settings."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name in (
        "SPATIALCLAW_DEPTH_MODEL",
        "SPATIALCLAW_DETECT_MODEL",
        "SPATIALCLAW_SEGMENT_MODEL",
        "SPATIALCLAW_TRACK_MODEL",
        "SPATIALCLAW_MODELS",
        "SPATIALCLAW_PERCEPTION",
        "SPATIALCLAW_PERCEPTION_SOCKET",
    ):
        monkeypatch.delenv(name, raising=False)


def test_offline_every_unavailable_learned_tool_is_marked_in_the_prompt_and_fails_at_once(offline, tmp_path):
    task = Task("How far is the wall, in metres?", inputs=[FrameSpec.images([photo(tmp_path)])], answer_type="number")
    probe = (
        "import sys\n"
        "for tool in (depth, detect, segment):\n"
        "    try:\n"
        "        tool(frames[0]) if tool is not segment else tool(frames[0], points=[[5, 5]])\n"
        "    except Exception as error:\n"
        "        print(type(error).__name__, '|', error)\n"
        "print('heavy imports:', [m for m in ('torch', 'transformers') if m in sys.modules])"
    )
    with ScriptedProvider([cell(probe), cell("answer(1.0)")]) as server:
        result = Agent(openai_compat(server), AgentConfig(max_steps=3)).run(task, tmp_path / "ep")
    system = openai_text({"messages": server.requests[0]["messages"][:1]})
    for name in LEARNED:
        assert f"`{name}` is UNAVAILABLE here" in system
    assert "method='flow' (optical flow) works" in system  # track keeps its classical path
    observation = openai_text(server.requests[1])
    assert observation.count("ToolUnavailableError |") == 3
    assert "not on this machine" in observation and "hf download" in observation
    assert "heavy imports: []" in observation  # no model code was even imported: nothing to wait for
    assert result.answer == 1.0


def test_a_tool_given_its_own_model_still_runs_when_the_default_weights_are_missing(offline, tmp_path):
    with Kernel() as kernel:
        result = kernel.execute(f"depth(np.zeros((32, 32, 3), np.uint8), model={str(tmp_path / 'nowhere')!r})")
    assert result.error is not None and result.error.type != "ToolUnavailableError"
    assert "does not exist" in result.error.message  # the real loader ran for the model it was given


def test_weights_in_a_local_folder_count_as_available(offline, tmp_path):
    folder = tmp_path / "depth-model"
    folder.mkdir()
    assert "does not exist" in weights_status(str(tmp_path / "missing"))
    assert "no config.json" in weights_status(str(folder))
    (folder / "config.json").write_text("{}")
    assert weights_status(str(folder)) is None


def test_the_setting_of_a_tool_model_is_what_is_checked(offline, monkeypatch, tmp_path):
    folder = tmp_path / "depth-model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    monkeypatch.setenv("SPATIALCLAW_DEPTH_MODEL", str(folder))
    status = tool_status()
    assert status["depth"].available and not status["detect"].available
    # learned depth is there for it: the note names the model that gives the scale, not a missing part
    assert str(folder) in status["reconstruct"].note and "unavailable" not in status["reconstruct"].note


def test_the_core_manual_lists_the_whole_namespace_in_under_12k_characters():
    core, full = kernel_docs.api_section("core"), kernel_docs.api_section("full")
    assert len(core) < 12_000 < len(full)
    for name in NAMESPACE_NAMES:
        assert f"`{name}" in core, f"{name} is missing from the core manual"
    assert "`geom.distance(" in core and "`scene.relation(" in core  # module and instance members too
    assert prompting.system_prompt(30) == prompting.system_prompt(30, "core")


def test_full_documentation_is_one_call_away_in_the_kernel():
    from spatialclaw.primitives.geometry.relate import Direction
    from spatialclaw.primitives.reconstruction.reconstruct import reconstruct

    with Kernel() as kernel:
        tool = kernel.execute("manual('reconstruct')")
        member = kernel.execute("manual('geom.distance')")
        result_type = kernel.execute("manual('Direction')")
        unknown = kernel.execute("manual('teleport')")
        conventions = kernel.execute("manual('conventions')")
    assert inspect.getdoc(reconstruct).splitlines()[-1] in tool.stdout
    assert "metres" in member.stdout and "geom.distance(" in member.stdout
    assert inspect.getdoc(Direction).splitlines()[0] in result_type.stdout
    assert unknown.error.type == "NameError" and "manual()" in unknown.error.message
    assert "pitch > 0 tilts UP" in conventions.stdout and conventions.error is None  # the prompt's own text
    # each entry is headed by the name it documents, so several in one cell stay apart
    assert tool.stdout.startswith("== manual('reconstruct') ==") and result_type.stdout.startswith(
        "== manual('Direction') =="
    )


def test_a_long_module_entry_fits_one_observation_and_each_member_stays_reachable_in_full():
    """``manual('geom')`` in full is longer than an observation shows: it lists members by signature and
    summary instead of being cut in the middle, and ``manual('geom.NAME')`` still prints one in full."""
    import spatialclaw.primitives.geometry.geom as geom

    with Kernel() as kernel:
        listing = kernel.execute("manual('geom')").to_text()
        member = kernel.execute("manual('geom.scale_from_known_size')").to_text()
    assert "characters cut" not in listing and "manual('geom.NAME')" in listing
    for name in geom.__all__:
        if callable(getattr(geom, name)):
            assert f"geom.{name}(" in listing
    assert inspect.getdoc(geom.scale_from_known_size).splitlines()[-1].strip() in member
