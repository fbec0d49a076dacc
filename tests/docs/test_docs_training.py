"""The training recipe of docs/trajectories.md runs as written, offline, from ``bench`` (the keyless
``scripted:solve-synthetic``, which answers from what the kernel's tools measure) through the export of the
correct episodes to the first training steps of TRL's SFTTrainer and GRPOTrainer, with the tiny models
``spatialclaw tiny-models`` writes (``MODEL``, ``RL_MODEL``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.doc_examples import code_blocks

SECTION = "Recipe: from a benchmark run to training"
FIRST_STEP_ONLY = """
import transformers


class _FirstStepOnly(transformers.TrainerCallback):
    # log, save and stop after the first optimiser step: the recipe is checked up to there
    def on_step_end(self, args, state, control, **kwargs):
        control.should_log = control.should_save = control.should_training_stop = True


_init = transformers.Trainer.__init__


def _init_with_callback(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    self.add_callback(_FirstStepOnly())


transformers.Trainer.__init__ = _init_with_callback
"""


@pytest.mark.slow
def test_training_recipe_runs_as_written(tmp_path: Path) -> None:
    bin_dir = Path(sys.executable).parent
    # the offline models as the page says to make them: `spatialclaw tiny-models DIR` and its export line
    made = subprocess.run(
        [str(bin_dir / "spatialclaw"), "tiny-models", "models"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.returncode == 0, made.stderr[-2000:]
    export_line = made.stdout.strip().splitlines()[-1]
    assert export_line.startswith("export MODEL="), made.stdout
    models = dict(pair.split("=", 1) for pair in export_line.removeprefix("export ").split())
    assert set(models) == {"MODEL", "RL_MODEL", "HF_HUB_OFFLINE"}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}  # no key
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        **models,
        TRL_EXPERIMENTAL_SILENCE="1",
    )
    shell, sft, grpo = code_blocks("trajectories.md", SECTION, "bash") + code_blocks(
        "trajectories.md", SECTION, "python"
    )
    done = subprocess.run(
        ["bash", "-e", "-c", shell], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert re.search(r"trl: exported [1-4] of 4 episode", done.stdout), (
        done.stdout
    )  # --correct-only keeps the right ones
    assert re.search(r"row length: .*; 0 row\(s\) over 8192 tokens", done.stdout), done.stdout
    for block in (sft, grpo):
        done = subprocess.run(
            [sys.executable, "-c", FIRST_STEP_ONLY + block],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr[-3000:]
    sft_state = json.loads((tmp_path / "checkpoints" / "sft" / "checkpoint-1" / "trainer_state.json").read_text())
    assert sft_state["global_step"] == 1 and sft_state["log_history"][0]["loss"] > 0
    grpo_state = json.loads((tmp_path / "checkpoints" / "grpo" / "checkpoint-1" / "trainer_state.json").read_text())
    assert grpo_state["global_step"] == 1 and "reward" in grpo_state["log_history"][0]
