"""Both entry-point groups are discovered from an installed distribution: a fake ``*.dist-info`` with its
``entry_points.txt`` in a temporary folder on ``PYTHONPATH`` (what ``pip install`` of a user's package
leaves), seen by a ``spatialclaw bench --list`` process (``spatialclaw.benchmarks``) and bound in a kernel
(``spatialclaw.primitives``), no file of the package touched."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent / "spatialclaw"
SPEC = """
from spatialclaw.benchmarks.spec import BenchmarkSpec
from spatialclaw.task import FrameSpec, Task


def to_task(record, ctx):
    return Task(question=record["question"], inputs=[FrameSpec.images([ctx.media(record["image"])])])


SPEC = BenchmarkSpec(name="grey-patches", description="how bright is a grey image", to_task=to_task, metric="MRA")
"""
TOOLS = '''
import numpy as np


def mean_brightness(image, channel: int = -1) -> float:
    """Mean brightness of an image, 0 (black) to 255 (white)."""
    array = np.asarray(image, dtype=np.float64)
    return float(array.mean() if channel < 0 else array[..., channel].mean())
'''
ENTRY_POINTS = """
[spatialclaw.benchmarks]
grey-patches = grey_bench:SPEC

[spatialclaw.primitives]
mean_brightness = grey_tools:mean_brightness
"""
KERNEL = """
from PIL import Image
from spatialclaw import Kernel
from spatialclaw.agent.kernel_docs import api_section
from spatialclaw.kernel.own_primitives import primitive_functions

Image.new("RGB", (16, 8), (90, 90, 90)).save("grey.png")
with open("doubling.py", "w") as file:  # a file target beside it must not hide the installed one
    file.write("def double(x):\\n    return 2 * x\\n")
with Kernel(frames=["grey.png"], primitives={"double": "doubling.py:double"}) as kernel:
    print(kernel.primitives)
    print(kernel.execute("print('brightness', double(mean_brightness(frames[0])) / 2)").to_text())
    print(api_section(primitives=primitive_functions(kernel)).split("Your own primitives", 1)[1])
"""


@pytest.fixture
def installed(tmp_path: Path) -> Path:
    """A folder holding a distribution as pip leaves it: its modules and ``grey_patches-0.1.dist-info``."""
    site = tmp_path / "site"
    info = site / "grey_patches-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: grey-patches\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    (site / "grey_bench.py").write_text(SPEC)
    (site / "grey_tools.py").write_text(TOOLS)
    return site


def _env(site: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "SPATIALCLAW_BENCHMARK"))}
    env["PYTHONPATH"] = str(site)
    return env


def test_bench_list_finds_the_benchmark_an_installed_package_registers(installed: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [str(BIN), "bench", "--list"], cwd=tmp_path, env=_env(installed), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    [line] = [line for line in done.stdout.splitlines() if line.startswith("grey-patches ")]
    assert line.endswith("[from entry point grey-patches (grey-patches)]"), line
    alone = subprocess.run([str(BIN), "bench", "--list"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "grey-patches" not in alone.stdout  # found through the distribution, nothing else


def test_a_kernel_binds_the_primitive_an_installed_package_registers(installed: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", KERNEL], cwd=tmp_path, env=_env(installed), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "{'mean_brightness': 'grey_tools:mean_brightness', 'double': 'doubling:double'}" in done.stdout
    assert "brightness 90.0" in done.stdout, done.stdout
    assert "`mean_brightness(image, channel: int = -1) -> float`: Mean brightness of an image" in done.stdout
