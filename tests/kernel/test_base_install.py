"""A base install (``pip install spatialclaw``, no extras) starts a kernel and runs the classical tools, and a
learned tool says which extra it needs when it is called. The extras' packages are hidden from both the host
and the kernel by a ``sitecustomize`` on ``PYTHONPATH`` (the kernel inherits ``PYTHONPATH``): the import
machinery then finds no ``torch``, ``transformers`` or ``huggingface_hub``, as on a machine without them."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from spatialclaw import Kernel
from tests.cli_process import cli_env, spatialclaw

EXTRAS_ONLY = ("torch", "transformers", "huggingface_hub", "accelerate", "safetensors", "torchvision", "datasets")

HIDING = textwrap.dedent(
    f"""
    import sys

    HIDDEN = {set(EXTRAS_ONLY)!r}


    class _Hiding:
        def __init__(self, finder):
            self.finder = finder

        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in HIDDEN:
                return None
            find = getattr(self.finder, "find_spec", None)
            return find(name, path, target) if find else None

        def __getattr__(self, attribute):
            return getattr(self.finder, attribute)


    sys.meta_path[:] = [_Hiding(finder) for finder in sys.meta_path]
    """
)


@pytest.fixture
def base_install(tmp_path: Path) -> Path:
    """A folder whose ``sitecustomize`` hides the extras' packages from every interpreter started with it on
    ``PYTHONPATH``."""
    folder = tmp_path / "base_install"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(HIDING)
    return folder


def _frames(tmp_path: Path) -> list[Path]:
    texture = np.random.default_rng(0).integers(0, 256, (120, 160, 3), dtype=np.uint8)
    paths = []
    for i, shift in enumerate((0, 3)):
        paths.append(tmp_path / f"frame_{i}.png")
        Image.fromarray(np.roll(texture, shift, axis=1)).save(paths[-1])
    return paths


def test_a_kernel_without_the_extras_starts_and_runs_the_classical_tools(base_install, tmp_path):
    with Kernel(env={"PYTHONPATH": str(base_install)}, frames=_frames(tmp_path), workdir=tmp_path / "work") as kernel:
        hidden = kernel.execute("import huggingface_hub")
        assert hidden.error is not None and hidden.error.type == "ModuleNotFoundError"  # the simulation holds
        result = kernel.execute(
            "import sys\n"
            "print(sorted(m for m in ('torch', 'transformers', 'huggingface_hub') if m in sys.modules))\n"
            "print(meta.tools['depth']['reason'])\n"
            "print(motion(frames))\n"
            "print(track(frames, boxes=(20, 20, 60, 60)))"
        )
        assert result.error is None, result.error
        assert result.stdout.startswith("[]\n")
        assert "spatialclaw[perception]" in result.stdout  # meta says what a learned tool needs
        assert "frames 0->1:" in result.stdout and "via optical flow" in result.stdout
        for cell in (
            "depth(frames[0])",
            "detect(frames[0], 'cup')",
            "track(frames, boxes=(20, 20, 60, 60), method='sam3')",
        ):
            called = kernel.execute(cell)
            assert called.error is not None, cell
            assert "spatialclaw[perception]" in called.error.message, (cell, called.error.message)
            assert called.error.type != "ModuleNotFoundError", cell


def test_the_demo_runs_without_the_extras(base_install, tmp_path):
    done = spatialclaw(
        "demo", "--quiet", "--out", str(tmp_path / "episode"), env=cli_env(PYTHONPATH=str(base_install)), timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "answer: 2.4" in done.stdout, done.stdout[-2000:]
