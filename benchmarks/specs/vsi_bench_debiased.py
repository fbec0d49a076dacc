"""VSI-Bench (debiased) (Brown et al., "Benchmark Designers Should 'Train on the Test Set' to Expose
Exploitable Non-Visual Shortcuts", 2025): VSI-Bench with the questions a blind model could answer from
language priors removed or rebalanced.

Record: config ``debiased`` of ``nyu-visionx/VSI-Bench`` (lmms-eval ``vsibench_debiased.yaml``:
``dataset_name: debiased``, ``test_split: test``), the same columns as VSI-Bench (``id``, ``dataset``,
``scene_name``, ``question_type``, ``question``, ``ground_truth``, ``options``) and the same videos.

Scoring: identical to VSI-Bench (lmms-eval ``vsibench_debiased.yaml`` includes the VSI-Bench template and
``lmms_eval/tasks/vsibench/utils.py``).
"""

from __future__ import annotations

from spatialclaw.benchmarks.spec import BenchmarkSpec
from spatialclaw.benchmarks.specs.vsi_bench import MEDIA_HELP, make_to_task

SPEC = BenchmarkSpec(
    name="vsi-bench-debiased",
    description="VSI-Bench with blind-solvable questions removed (same videos and question types)",
    to_task=make_to_task("vsi-bench-debiased"),
    hub_id="nyu-visionx/VSI-Bench",
    configs=("debiased",),
    split="test",
    aggregation="vsi_bench",
    media_help=MEDIA_HELP,
    homepage="https://huggingface.co/datasets/nyu-visionx/VSI-Bench",
    metric="as VSI-Bench: accuracy (first token) and MRA, mean over question types (lmms-eval vsibench_debiased)",
)
