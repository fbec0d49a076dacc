"""``sandbox="auto"|"required"|"off"``: what each mode does where the sandbox is missing, what is recorded,
and the policy turned into one bubblewrap command line."""

from __future__ import annotations

import logging
import sys

import pytest

from spatialclaw.kernel import sandbox
from spatialclaw.kernel.kernel import Kernel
from spatialclaw.kernel.sandbox import ResourceLimits, SandboxPolicy, SandboxUnavailable
from tests.doc_examples import code_blocks

needs_sandbox = pytest.mark.skipif(
    not sandbox.support().available, reason=f"no kernel sandbox here: {sandbox.support().missing}"
)


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch, tmp_path):
    """This process as on a host without bubblewrap (PATH without it; the probe forgotten and redone)."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sandbox, "_support", None)
    monkeypatch.setattr(sandbox, "_warned", False)
    yield
    sandbox._support = None


def test_an_unknown_mode_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match="sandbox must be one of auto, required, off; got 'strict'"):
        Kernel(sandbox="strict")


def test_required_refuses_to_start_and_names_what_is_missing(no_bwrap) -> None:
    with pytest.raises(SandboxUnavailable, match=r"bubblewrap is not installed.*--sandbox auto"):
        Kernel(sandbox="required")
    assert sandbox.describe("required") == {
        "mode": "required",
        "active": False,
        "mechanism": None,
        "missing": sandbox.support().missing,
    }


def test_auto_without_the_sandbox_says_once_what_is_not_isolated(
    no_bwrap, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("PATH", f"{sys.prefix}/bin:/usr/bin:/bin")  # python and prlimit, still no bwrap
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None if name == "bwrap" else f"/usr/bin/{name}")
    with caplog.at_level(logging.WARNING, logger="spatialclaw.kernel.sandbox"):
        assert sandbox.use_sandbox("auto") is False
        assert sandbox.use_sandbox("auto") is False
    warnings = [r.getMessage() for r in caplog.records if r.name == "spatialclaw.kernel.sandbox"]
    assert len(warnings) == 1
    assert "bubblewrap is not installed" in warnings[0] and "network" in warnings[0]


def test_auto_without_the_sandbox_still_runs_the_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "_support", None)
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None if name == "bwrap" else f"/usr/bin/{name}")
    try:
        with Kernel(meta={"question": "q"}) as kernel:  # macOS, or Linux without bubblewrap or user namespaces
            assert kernel.sandbox == {"mode": "auto", "active": False}
            assert kernel.execute("print(1 + 1)").stdout == "2\n"
    finally:
        sandbox._support = None


def test_off_runs_a_plain_process_that_sees_the_host() -> None:
    with Kernel(sandbox="off", meta={"question": "q"}) as kernel:
        assert kernel.sandbox == {"mode": "off", "active": False}
        seen = kernel.execute("import os\nprint(os.path.isdir('/proc/1'), len(os.listdir('/proc')) > 0)")
        assert seen.status == "ok"


def test_the_policy_becomes_one_bwrap_command_line(tmp_path) -> None:
    policy = SandboxPolicy(
        read_only=(str(tmp_path / "frames"),),
        writable=(str(tmp_path / "work"),),
        env={"HOME": "/tmp/home"},
        chdir=str(tmp_path / "work"),
        limits=ResourceLimits(memory_mb=512),
    )
    argv = sandbox.bwrap_argv(policy, "bwrap")
    assert argv[:8] == [
        "bwrap",
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--new-session",
    ]
    assert argv[argv.index("--remount-ro") + 1] == "/proc"  # after every mount, with /dev and /
    assert "--share-net" not in argv
    # the private /tmp comes before the binds that may lie inside it
    assert argv.index("/tmp") < argv.index(str(tmp_path / "work"))
    assert argv[argv.index(str(tmp_path / "frames")) - 1] == "--ro-bind-try"
    assert argv[argv.index(str(tmp_path / "work")) - 1] == "--bind"
    assert "--clearenv" in argv and argv[-1] == "--"
    assert not any(p.startswith(str(__import__("pathlib").Path.home()) + "/.ssh") for p in argv)


@needs_sandbox
def test_the_trajectory_header_records_the_sandbox(tmp_path) -> None:
    from spatialclaw.agent.config import AgentConfig
    from spatialclaw.agent.loop import Agent
    from spatialclaw.models import load_model
    from spatialclaw.task import Task
    from spatialclaw.testing.provider_server import ScriptedProvider
    from spatialclaw.trajectories.episode_log import load_episode

    with ScriptedProvider(["```python\nanswer('A')\n```"]) as server:
        model = load_model(f"openai-compat:scripted@{server.url}", api_key="test")
        result = Agent(model, AgentConfig(vlm_side_channel=False, preview_images=0)).run(
            Task("Which?", choices=["a", "b"]), tmp_path / "episode"
        )
    assert result.status == "answered", result.error
    header = load_episode(result.trajectory_dir).header
    assert header["sandbox"]["mode"] == "auto" and header["sandbox"]["active"] is True
    assert header["sandbox"]["mechanism"] == "bubblewrap"


@needs_sandbox
def test_the_security_guide_example_runs_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(code_blocks("security.md", "Checking it yourself", "python")[0], "security.md", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "{'mode': 'required', 'active': True}" or out[0].startswith("{'mode': 'required', 'active': True")
    assert out[1:] == ["FileNotFoundError", "ConnectionRefusedError", "MemoryError"]


def test_a_readable_path_reached_through_a_symlink_is_visible_by_both_names(tmp_path) -> None:
    """``readable=`` binds a path where the caller names it and where its links lead: a dataset folder
    reached through a symlink (CI lays ../shared beside the checkout that way) is opened by either name,
    and its neighbours stay hidden."""
    real = tmp_path / "real"
    real.mkdir()
    (real / "depth.txt").write_text("42")
    (tmp_path / "secret.txt").write_text("hidden")
    (tmp_path / "linked").symlink_to(real)
    named = tmp_path / "linked" / "depth.txt"
    with Kernel(readable=[named]) as kernel:
        if not kernel.sandbox.get("active"):
            pytest.skip("no sandbox on this host")
        result = kernel.execute(
            f"import os\nprint(open({str(named)!r}).read(), open({str(real / 'depth.txt')!r}).read(), "
            f"os.path.exists({str(tmp_path / 'secret.txt')!r}))"
        )
    assert result.stdout.split() == ["42", "42", "False"], result.to_text()
