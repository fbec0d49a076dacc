"""Your own primitive in a few lines: ``Kernel(primitives={"name": "package.module:function"})`` binds it
in the kernel namespace (callable from a cell, kept across resets) and the tool-calls interface offers it
as a tool, with its schema and description from its signature and docstring."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from spatialclaw.kernel.kernel import Kernel
from spatialclaw.runner import run_benchmark
from spatialclaw.runner.tool_calls import tool_specs
from spatialclaw.testing.provider_server import ScriptedProvider, tool_call
from spatialclaw.trajectories.episode_log import load_episode
from tests.bench_runs import synthetic_run
from tests.doc_examples import code_blocks

MODULE = '''
from typing import Any

import numpy as np


def mean_brightness(image: Any, channel: int = -1) -> float:
    """Mean brightness of an image, 0 (black) to 255 (white): the average grey value, or of one RGB
    channel (0, 1, 2) when ``channel`` is given."""
    array = np.asarray(image, dtype=np.float64)
    return float(array.mean() if channel < 0 else array[..., channel].mean())
'''


@pytest.fixture
def own_module(tmp_path: Path) -> dict[str, object]:
    """A module outside the package, and the kernel options that make it importable in the kernel."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "my_primitives.py").write_text(MODULE)
    return {
        "primitives": {"mean_brightness": "my_primitives:mean_brightness"},
        "env": {"PYTHONPATH": str(folder)},
        "readable": [str(folder)],
    }


def test_an_own_primitive_is_callable_from_a_cell_and_survives_a_reset(tmp_path: Path, own_module) -> None:
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, size=(24, 32, 3), dtype=np.uint8)
    Image.fromarray(pixels).save(tmp_path / "noise.png")
    expected = pixels[..., 1].astype(np.float64).mean()
    kernel = Kernel(frames=[str(tmp_path / "noise.png")], **own_module)
    try:
        result = kernel.execute("print(repr(mean_brightness(frames[0], channel=1)))")
        assert result.ok, result.to_text(2000)
        assert float(result.stdout.strip()) == pytest.approx(expected, abs=1e-9)
        kernel.reset(frames=[str(tmp_path / "noise.png")])  # a pooled kernel's next episode keeps it
        again = kernel.execute("print(mean_brightness.__doc__.splitlines()[0])")
        assert again.ok and again.stdout.startswith("Mean brightness of an image"), again.to_text(2000)
    finally:
        kernel.shutdown()


@pytest.mark.parametrize(
    ("primitives", "problem"),
    [
        ({"depth": "my_primitives:mean_brightness"}, "already a kernel name"),
        ({"_hidden": "my_primitives:mean_brightness"}, "identifier not starting with '_'"),
        ({"mean_brightness": "my_primitives.mean_brightness"}, "is not 'package.module:function'"),
    ],
)
def test_a_bad_primitive_binding_is_refused_before_a_kernel_starts(primitives, problem) -> None:
    with pytest.raises(ValueError, match=problem):
        Kernel(primitives=primitives)


def test_the_tool_calls_interface_offers_an_own_primitive(tmp_path: Path, own_module, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(own_module["env"]["PYTHONPATH"]))  # type: ignore[index]
    tools, paths = tool_specs(own_module["primitives"])  # type: ignore[arg-type]
    spec = next(tool for tool in tools if tool.name == "mean_brightness")
    assert paths["mean_brightness"] == "mean_brightness"
    assert spec.description.startswith("mean_brightness(image: Any, channel: int = -1) -> float: Mean brightness")
    assert spec.parameters["required"] == ["image"]
    assert spec.parameters["properties"]["channel"]["type"] == "integer"
    assert "mean_brightness" not in paths_of_builtin_tools()

    offered: list[list[str]] = []

    def script(request: dict, index: int):
        offered.append([tool["function"]["name"] for tool in request.get("tools", [])])
        results = [m for m in request["messages"] if m["role"] == "tool"]
        if not results:
            return tool_call("mean_brightness", {"image": "$frames[0]"})
        return tool_call("answer", {"value": round(json.loads(results[0]["content"])["result"], 3)})

    with ScriptedProvider(script) as server:
        config = synthetic_run(
            server.url,
            tmp_path / "run",
            limit=1,
            seed=2,
            workers=1,
            interface="tool-calls",
            model_options={"max_attempts": 1},
            agent={"fsync": False, "vlm_side_channel": False, "preview_images": 1, "kernel_options": own_module},
        )
        run_benchmark(config)
    assert offered and all("mean_brightness" in names for names in offered)
    row = json.loads((config.out / "results.jsonl").read_text().splitlines()[0])
    episode = load_episode(config.out / row["trajectory_dir"])
    calls = [e for e in episode.events if (e.get("tool_call") or {}).get("name") == "mean_brightness"]
    assert len(calls) == 1, episode.events
    assert row["end_reason"] == "answered" and 0 < float(row["answer"]) < 255, row


def paths_of_builtin_tools() -> dict[str, str]:
    return tool_specs()[1]


def test_the_design_page_example_runs_as_written() -> None:
    [block] = code_blocks("design.md", "Adding a primitive", "python")
    done = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "200.0"
