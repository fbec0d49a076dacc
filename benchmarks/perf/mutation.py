"""Mutation testing of the modules that decide a score, an answer, a limit, a secret, a trajectory or training data.

Run: ``.venv/bin/python benchmarks/perf/mutation.py [--module NAME ...] [--max-mutants N] [--timeout S]
[--keep]``. Too long for every CI run (minutes per module on 2 cores): run it when you change one of the
modules of :data:`MODULES` (``--module NAME`` for that one) and keep its score at or above the floor in
CONTRIBUTING.md.

The tool is cosmic-ray (``dev`` extra, pinned). The working tree is never mutated: the tracked and untracked,
non-ignored files (``git ls-files -co --exclude-standard``) are copied to a temporary folder, and a mirror of the
installed package layout (``build/pkg/spatialclaw``, symbolic links into the copy, as ``scripts/typecheck.py``
does) is put first on ``PYTHONPATH``, ahead of the editable install's finder. Each module's mutants are limited
to the functions named in :data:`MODULES` (the ones whose behaviour decides the outcome), annotations left out, and each mutant is run
against the fast tests that cover them, listed there too (``pytest -x``; a timeout counts as killed, and the limit
is at least three times the unmutated run's time, so that a loaded machine does not kill survivors). The
unmutated tests must pass first, else that module is reported as ``baseline failed``. ``--max-mutants N`` keeps
N mutants spread evenly over the module, for a quick run.

Prints per module the mutants killed / total, the score, how many survivors are argued (:data:`ARGUED`: equivalent,
or not killable without a fake clock or a power cut; argued in CONTRIBUTING.md), how many are unexplained and how
many of the killed hit the time limit (``timeouts``), then
every survivor (line, operator, diff, argued or not), and one JSON line: ``{"modules": {name: {"killed",
"timeouts", "survived", "argued", "unexplained", "total", "score", "survivors": [{"line", "operator", "diff", "argued"}]}},
"total_score"}`` (``argued``: the reason, or null).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
#: Source folder -> where it sits inside the ``spatialclaw`` package (as in ``pyproject.toml``).
MAPPED = {"primitives": "primitives", "prompts": "prompts", "benchmarks": "benchmarks"}
FAST = "-x -q -p no:cacheprovider -p no:randomly --timeout=120"
#: Tests that start an IPython kernel, left out wherever a module lists their file: the kernel's sandbox does not
#: start from the temporary copy ("Kernel died before replying to kernel_info"), and they test answer() recording.
KERNEL_TESTS = {
    "tests/agent/test_question_forms.py": [
        "test_a_real_kernel_records_numbers_allowed_values_and_yes_no_as_the_benchmark_asks"
    ],
    "tests/benchmarks/test_paper_reference_scoring.py": ["test_a_kernel_records_the_answer_as_the_scoring_reads_it"],
}
#: The tests of the paper suite's specs: the file whose published-layout fixtures cover the benchmark first, then
#: the reference-scoring file (every fixture scored by its benchmark's own extractor).
_REFERENCE = "tests/benchmarks/test_paper_reference_scoring.py"
_BLINK_TO_OSI = ["tests/benchmarks/test_paper_blink_to_osibench.py", _REFERENCE]
_PAI_TO_VSTI = ["tests/benchmarks/test_paper_paibench_to_vstibench.py", _REFERENCE]

#: name -> source file, the functions (``Class.method`` or ``Class`` for all its methods) whose mutants count,
#: and the tests each mutant runs against (the fast specification file first: ``-x`` stops at its first failure).
MODULES: dict[str, dict[str, Any]] = {
    "omnispatial": {
        "path": "benchmarks/specs/omnispatial.py",
        "functions": ["omnispatial_choice"],
        "tests": ["tests/specs/test_specs_scoring.py", "tests/benchmarks/test_scoring.py"],
    },
    "viewspatial_bench": {
        "path": "benchmarks/specs/viewspatial_bench.py",
        "functions": ["viewspatial_option", "viewspatial_choice"],
        "tests": ["tests/specs/test_specs_scoring.py", "tests/benchmarks/test_scoring.py"],
    },
    "cv_bench": {
        "path": "benchmarks/specs/cv_bench.py",
        "functions": ["leading_letter"],
        "tests": ["tests/specs/test_specs_scoring.py", "tests/benchmarks/test_scoring.py"],
    },
    "scoring": {
        "path": "benchmarks/scoring/score.py",
        "functions": ["mean_relative_accuracy", "exact_match", "_yes_no", "score_answer"],
        "tests": ["tests/specs/test_specs_scoring.py", "tests/benchmarks/test_scoring.py"],
    },
    "spar_bench": {
        "path": "benchmarks/specs/spar_bench.py",
        "functions": [
            "to_task",
            "spar_paper_letter",
            "spar_paper_mca",
            "spar_paper_number",
            "_spar_paper_mra",
            "spar_paper_na",
            "_instruction",
            "spar_paper_vci",
            "spar_levels",
        ],
        "tests": _PAI_TO_VSTI,
    },
    "blink": {
        "path": "benchmarks/specs/blink.py",
        "functions": ["read_source", "to_task", "blink_extract", "blink_paper"],
        "tests": _BLINK_TO_OSI,
    },
    "erqa": {
        "path": "benchmarks/specs/erqa.py",
        "functions": ["with_image_tags", "to_task", "erqa_paper"],
        "tests": _BLINK_TO_OSI,
    },
    "cross_video_bench": {
        "path": "benchmarks/specs/cross_video_bench.py",
        "functions": ["is_yes_no", "to_task", "_only_a_to_d", "cvbench_paper"],
        "tests": _BLINK_TO_OSI,
    },
    "omni3d_bench": {
        "path": "benchmarks/specs/omni3d_bench.py",
        "functions": ["omni3d_prediction", "omni3d_paper"],
        "tests": _BLINK_TO_OSI,
    },
    "viewspatial_paper": {
        "path": "benchmarks/specs/viewspatial_bench.py",
        "functions": ["image_paths", "read_source", "to_task", "viewspatial_paper_choice"],
        "tests": _PAI_TO_VSTI,
    },
    "spbench": {
        "path": "benchmarks/specs/spbench.py",
        "functions": ["_options", "make_to_task", "spbench_paper_na"],
        "tests": _PAI_TO_VSTI,
    },
    "spatialtree_bench": {
        "path": "benchmarks/specs/spatialtree_bench.py",
        "functions": ["_kind", "to_task", "spatialtree_paper"],
        "tests": _PAI_TO_VSTI,
    },
    "letters": {
        "path": "benchmarks/scoring/letters.py",
        "functions": ["first_labelled_letter", "marked_letter", "only_letter", "boxed_letter", "base_extract"],
        "tests": [
            "tests/benchmarks/test_paper_reference_scoring.py",
            "tests/benchmarks/test_paper_blink_to_osibench.py",
            "tests/benchmarks/test_paper_paibench_to_vstibench.py",
        ],
    },
    "numbers": {
        "path": "benchmarks/scoring/numbers.py",
        "functions": ["word_or_digits", "signed_mra", "abs_mra"],
        "tests": [
            "tests/benchmarks/test_paper_reference_scoring.py",
            "tests/benchmarks/test_paper_blink_to_osibench.py",
            "tests/benchmarks/test_paper_paibench_to_vstibench.py",
        ],
    },
    "aggregation": {
        "path": "benchmarks/scoring/aggregation.py",
        "functions": ["aggregate_micro", "aggregate_macro", "micro_scored", "aggregate"],
        "tests": [
            "tests/benchmarks/test_paper_reference_scoring.py",
            "tests/benchmarks/test_paper_blink_to_osibench.py",
            "tests/benchmarks/test_paper_paibench_to_vstibench.py",
        ],
    },
    "spec_loader": {
        "path": "benchmarks/spec.py",
        "functions": [
            "RecordContext.media",
            "RecordContext._inside_dataset",
            "load_tasks",
            "_drop_missing",
            "parse_inline_options",
            "strip_option_labels",
        ],
        "tests": [
            "tests/benchmarks/test_paper_reference_scoring.py",
            "tests/benchmarks/test_paper_blink_to_osibench.py",
            "tests/benchmarks/test_paper_paibench_to_vstibench.py",
        ],
    },
    "aspect_fit": {
        "path": "primitives/frames/aspect_fit.py",
        "functions": ["aspect_fit_box", "aspect_fit", "AspectFitSource"],
        "tests": [
            "tests/benchmarks/test_paper_reference_scoring.py",
            "tests/benchmarks/test_paper_blink_to_osibench.py",
            "tests/benchmarks/test_paper_paibench_to_vstibench.py",
        ],
    },
    "omnispatial_paper": {
        "path": "benchmarks/specs/omnispatial.py",
        "functions": ["read_source", "to_task", "omnispatial_paper"],
        "tests": _BLINK_TO_OSI,
    },
    "dsi_bench": {
        "path": "benchmarks/specs/dsi_bench.py",
        "functions": ["parse_options", "to_task", "dsibench_extract", "dsibench_paper"],
        "tests": _BLINK_TO_OSI,
    },
    "mindcube": {
        "path": "benchmarks/specs/mindcube.py",
        "functions": ["setting", "to_task", "mindcube_paper_extract", "mindcube_paper"],
        "tests": _BLINK_TO_OSI,
    },
    "mmsi_bench": {
        "path": "benchmarks/specs/mmsi_bench.py",
        "functions": ["subset", "to_task", "mmsi_paper_extract", "mmsi_paper"],
        "tests": _BLINK_TO_OSI,
    },
    "mmsi_video_bench": {
        "path": "benchmarks/specs/mmsi_video_bench.py",
        "functions": [
            "main_category",
            "question_text",
            "to_task",
            "_clear_words",
            "mmsi_video_extract",
            "mmsivideo_paper",
        ],
        "tests": _BLINK_TO_OSI,
    },
    "osi_bench": {
        "path": "benchmarks/specs/osi_bench.py",
        "functions": [
            "option_texts",
            "to_task",
            "first_number",
            "osi_na",
            "osibench_mcq",
            "osibench_number",
            "osibench_na",
        ],
        "tests": _BLINK_TO_OSI,
    },
    "pai_bench": {
        "path": "benchmarks/specs/pai_bench.py",
        "functions": ["_options", "to_task", "mmsi_chain_letter", "_standalone", "pai_paper_choice"],
        "tests": _PAI_TO_VSTI,
    },
    "perceptioncomp": {
        "path": "benchmarks/specs/perceptioncomp.py",
        "functions": ["to_task", "perceptioncomp_paper_choice"],
        "tests": _PAI_TO_VSTI,
    },
    "video_mme": {
        "path": "benchmarks/specs/video_mme.py",
        "functions": ["to_task", "videomme_base_letter", "videomme_paper_choice"],
        "tests": _PAI_TO_VSTI,
    },
    "video_mme_v2": {
        "path": "benchmarks/specs/video_mme_v2.py",
        "functions": [
            "split_options",
            "to_task",
            "videommev2_letter",
            "videommev2_paper_choice",
            "_logic",
            "_position",
            "videommev2_groups",
        ],
        "tests": _PAI_TO_VSTI,
    },
    "vsi_bench_debiased": {
        "path": "benchmarks/specs/vsi_bench_debiased.py",
        "functions": ["to_task", "vsi_paper_letter", "vsi_paper_mca", "vsi_paper_na"],
        "tests": _PAI_TO_VSTI,
    },
    "vsti_bench": {
        "path": "benchmarks/specs/vsti_bench.py",
        "functions": ["to_task", "vsti_paper_na"],
        "tests": _PAI_TO_VSTI,
    },
    "answers": {
        "path": "primitives/answers.py",
        "functions": ["_choice", "_number", "_number_in_text", "_yes_no", "normalise_answer"],
        "tests": ["tests/specs/test_specs_answers.py", "tests/agent/test_question.py"],
    },
    "question": {
        "path": "spatialclaw/agent/question.py",
        "functions": [
            "_next_label",
            "_first_label",
            "_line_options",
            "_inline_options",
            "find_allowed",
            "_short_line",
            "_unlettered_lines",
            "_ends_question",
            "_find",
            "infer_answer_type",
            "_strip_letter_prefixes",
            "parse_question",
            "_is_yes_no",
        ],
        "tests": [
            "tests/specs/test_specs_answers.py",
            "tests/agent/test_question.py",
            "tests/agent/test_question_forms.py",
        ],
    },
    "question_frames": {
        "path": "spatialclaw/agent/question_frames.py",
        "functions": [
            "frame_refs",
            "time_refs",
            "_nearest",
            "_by_source_index",
            "_of_n",
            "_plain",
            "_at_time",
            "frame_notes",
        ],
        "tests": ["tests/agent/test_question_frames.py"],
    },
    "environment": {
        "path": "spatialclaw/kernel/environment.py",
        "functions": ["is_secret", "is_allowed", "kernel_environment"],
        "tests": ["tests/specs/test_specs_limits.py"],
    },
    "limits": {
        "path": "spatialclaw/agent/limits.py",
        "functions": [f"LimitClock.{m}" for m in ("reserve", "settle", "remaining_s", "cap", "time_hit", "spend_hit")],
        "tests": ["tests/specs/test_specs_limits.py"],
    },
    "episode_log": {
        "path": "spatialclaw/trajectories/episode_log.py",
        "functions": ["TrajectoryWriter.__init__", "TrajectoryWriter.write", "load_episode", "Episode"],
        "tests": ["tests/specs/test_specs_trajectories.py", "tests/trajectories/test_trajectory.py"],
    },
    "conversation": {
        "path": "spatialclaw/export/conversation.py",
        "functions": ["episode_conversation", "merge_consecutive"],
        "tests": ["tests/specs/test_specs_conversation.py", "tests/export/test_export_rows.py"],
    },
    "relate": {
        "path": "primitives/geometry/relate.py",
        "functions": ["closest_points", "distance", "angle_between"],
        "tests": ["tests/specs/test_specs_geometry.py"],
    },
    "motion_verdict": {
        "path": "primitives/motion/verdict.py",
        "functions": ["reversals", "_is_move", "turn_dominates", "clip_verdict"],
        "tests": [
            "tests/primitives/motion/test_motion_verdict.py",
            "tests/primitives/motion/test_motion_readouts_clip.py",
        ],
    },
    "lock": {
        "path": "spatialclaw/runner/lock.py",
        "functions": ["RunLock", "_read_holder"],
        "tests": ["tests/specs/test_specs_trajectories.py", "tests/runner/test_runner_resume.py"],
    },
}


#: Survivors no test can reasonably kill, argued in CONTRIBUTING.md: name -> [(reason, [fragment, ...])]. A survivor
#: is argued when a fragment (spaces ignored) is in its mutated line but not in the original line.
ARGUED: dict[str, list[tuple[str, list[str]]]] = {
    "viewspatial_bench": [("\\b is zero-width: group 0 is the letter group 1 captures", ["match.group(0)"])],
    "lock": [
        ("distinct flag bits: + and ^ are |", ["O_RDWR+os.O_CREAT", "O_CREAT+os.O_CLOEXEC", "O_RDWR^os.O_CREAT"]),
        ("distinct flag bits: + and ^ are |", ["O_CREAT^os.O_CLOEXEC", "LOCK_EX+fcntl", "LOCK_EX^fcntl"]),
        ("O_CREAT % O_CLOEXEC is O_CREAT: os.open sets close-on-exec anyway (PEP 446)", ["O_CREAT%os.O_CLOEXEC"]),
        ("the holder record, longer than 1 byte, is written from offset 0 next", ["ftruncate(fd,1)"]),
    ],
    "relate": [
        ("a norm is never negative", ["nu<=0", "nv<=0"]),
        (
            "which set the KD-tree holds: only which of several equally close pairs is returned (unspecified)",
            ["len(pa)==len", "len(pa)!=len", "len(pa)<len", "len(pa)>len", "len(pa)>=len", "len(pa)is", "notlen(pa)"],
        ),
    ],
    "conversation": [
        ("'assistant' is the smallest of the four roles", ['m.role<="assistant"', 'message.role<="assistant"']),
        ("'assistant' is the smallest of the four roles", ['t.role<="assistant"']),
        ("these turns' roles are this module's own 'assistant' literal", ['t.role is"assistant"']),
    ],
    "answers": [
        ("kind is one of ANSWER_TYPES here", ['kind<="multiple_choice"', 'kind<="number"', 'kind>="yes_no"']),
        ("never empty here", ["len(named)!=1", "len(found)!=1"]),
        ("the same lengths", ["strict=False"]),
        ("exactly one entry here", ["named[-1]", "found[-1]", '"",2)']),
    ],
    "question": [
        ("the inner loop re-reads the A line first", ["end=index*1", "index//1", "index**1", "index|1", "index+0"]),
        ("a marker-only last line left in is stripped anyway", ['strip()<""', 'strip()<=""', 'strip()is""']),
        ("a marker-only last line left in is stripped anyway", ["search(stem_lines[not1])", "search(stem_lines[-0])"]),
        ("A-Z: nothing sorts below A", ['group(1)<="A"']),
        ("one-letter strings are shared objects", ['group(1)is"A"', "isnotchr(", "isnotletter"]),
        ("never passes len(lines)", ["index!=len", "end!=len"]),
        ("the same lengths", ["strict=False"]),
    ],
    "limits": [
        ("a float clock reading is never exactly 0.0 on cue", ["remaining>=0"]),
        ("needs are never negative: the second clause refuses too", ["committed==limits", "committed_usd==limits"]),
        ("remaining is None exactly when time_s is", ["time_sisNoneandremaining"]),
        ("digits of a running clock's reading: needs a fake clock", ["elapsed_s(),4)", "elapsed_s(),2)"]),
    ],
    "episode_log": [
        ("parts are text or image; only text parts carry text_ref", ['["type"]<="text"', '["type"]>="text"']),
        ("durability after a power loss, not observable from a process", ["fsync:bool=False"]),
    ],
    "motion_verdict": [
        ("a turn under 0.5 deg is left out before its sign is read: v is never 0 there", ["(i,v>=0)"]),
        ("past the move and unknown returns the span is 'rotation' or 'static'", ['span.kind>="static"']),
        ("the moving steps are a subset of the known ones", ["len(moving)>=len(known)"]),
        ("at i == change the sign differs from the first, which the same clause asks for", ["ifi<=changeand"]),
        ("a step's kind is one of the estimator's own literals: CPython interns them", ['kind is"unknown"']),
        ("a step's kind is one of the estimator's own literals: CPython interns them", ['kind is"rotation"']),
    ],
    "question_frames": [
        ("a frame number is digits: never negative", ["ref.number!=0"]),
        ("a FrameSpec kind is 'images' or 'video': only 'video' sorts at or after it", ['spec.kind>="video"']),
    ],
    "scoring": [
        ("metric is exactly one of METRICS here", ['metric<="choice"', 'metric<="mra"', 'metric>="yes_no"']),
        ("_yes_no returns this module's own literals", ["gotisgt"]),
    ],
}


def argued(name: str, diff: str) -> str | None:
    """The reason a survivor of module ``name`` is argued in :data:`ARGUED`, or None."""
    lines = diff.splitlines()
    before = "".join(line[1:] for line in lines if line.startswith("-")).replace(" ", "")
    after = "".join(line[1:] for line in lines if line.startswith("+")).replace(" ", "")
    for reason, fragments in ARGUED.get(name, []):
        if any(f.replace(" ", "") in after and f.replace(" ", "") not in before for f in fragments):
            return reason
    return None


def copy_tree(destination: Path) -> None:
    """Copy the tracked and untracked, non-ignored files of the working tree into ``destination``."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def build_mirror(copy: Path) -> Path:
    """``COPY/build/pkg/spatialclaw``: links to every entry of the copy's ``spatialclaw/`` and the mapped folders."""
    package = copy / "build" / "pkg" / "spatialclaw"
    package.mkdir(parents=True)
    for entry in list((copy / "spatialclaw").iterdir()):
        (package / entry.name).symlink_to(entry)
    for folder, name in MAPPED.items():
        (package / name).symlink_to(copy / folder)
        # the copy's own spatialclaw/ gets the links too: pytest puts the copy's root first on sys.path, and a
        # subpackage missing there would come from the editable install, i.e. from the unmutated working tree
        (copy / "spatialclaw" / name).symlink_to(copy / folder)
    return package.parent


def function_lines(source: str, names: list[str]) -> set[int]:
    """Line numbers (1-based) inside the named top-level functions, classes or ``Class.method``s."""
    lines: set[int] = set()
    found: set[str] = set()
    for node in ast.parse(source).body:
        candidates: list[tuple[str, ast.AST]] = [(getattr(node, "name", ""), node)]
        if isinstance(node, ast.ClassDef):
            candidates += [(f"{node.name}.{item.name}", item) for item in node.body if hasattr(item, "name")]
        for name, item in candidates:
            if name in names:
                found.add(name)
                lines.update(range(item.lineno, (item.end_lineno or item.lineno) + 1))  # type: ignore[attr-defined]
    missing = set(names) - found
    if missing:
        raise SystemExit(f"no such function(s): {sorted(missing)}")
    return lines


def annotation_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) (line, column) of every annotation: with ``from __future__ import annotations`` they are
    never evaluated, so a mutant inside one (``str | None`` -> ``str % None``) is equivalent by construction."""
    spans = []
    for node in ast.walk(ast.parse(source)):
        found: list[ast.expr | None] = []
        if isinstance(node, ast.arg):
            found.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            found.append(node.annotation)
        for item in found:
            if item is not None and item.end_lineno is not None and item.end_col_offset is not None:
                spans.append(((item.lineno, item.col_offset), (item.end_lineno, item.end_col_offset)))
    return spans


def run_module(
    name: str, spec: dict[str, Any], copy: Path, env: dict[str, str], args: argparse.Namespace
) -> dict[str, Any]:
    """Init, filter and run one cosmic-ray session; the counts and the survivors."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

    present = [test for test in spec["tests"] if (copy / test).is_file()]
    for test in sorted(set(spec["tests"]) - set(present)):
        print(f"{name}: test file {test} is missing, left out", file=sys.stderr)
    if args.existing_only:  # what the suite caught before the specification files were written
        present = [test for test in present if not Path(test).name.startswith("test_specs_")]
    if not present:  # pytest without files would run the whole suite
        return {"no_tests": True, "killed": 0, "survived": 0, "total": 0, "score": 0.0, "survivors": []}
    left_out = [f"--deselect {test}::{name}" for test in present for name in KERNEL_TESTS.get(test, [])]
    tests = " ".join(present + left_out)
    command = f"{sys.executable} -m pytest {FAST} {tests}"
    started = time.monotonic()
    if subprocess.run(command.split(), cwd=copy, env=env, capture_output=True).returncode != 0:
        return {"baseline_failed": True, "killed": 0, "survived": 0, "total": 0, "score": 0.0, "survivors": []}
    # a mutant's time limit: a loaded machine slows every run, and a survivor stopped by a fixed limit read as killed
    timeout = max(args.timeout, 3.0 * (time.monotonic() - started))
    config = copy / f"mutation-{name}.toml"
    config.write_text(
        f'[cosmic-ray]\nmodule-path = "{spec["path"]}"\ntimeout = {timeout:.0f}\nexcluded-modules = []\n'
        f'test-command = "{command}"\n\n[cosmic-ray.distributor]\nname = "local"\n'
    )
    session = copy / f"mutation-{name}.sqlite"
    cosmic_ray = [str(Path(sys.executable).parent / "cosmic-ray")]
    subprocess.run([*cosmic_ray, "init", str(config), str(session)], cwd=copy, env=env, check=True)
    wanted = function_lines((copy / spec["path"]).read_text(), spec["functions"])
    with use_db(str(session), WorkDB.Mode.open) as db:
        items = [item for item in db.pending_work_items]
        spans = annotation_spans((copy / spec["path"]).read_text())
        inside = [
            item
            for item in items
            if item.mutations[0].start_pos[0] in wanted
            and not any(start <= tuple(item.mutations[0].start_pos) < end for start, end in spans)
        ]
        # the work DB's order is not stable between sessions: sort, so that a sample is the same mutants each run
        inside.sort(
            key=lambda item: (
                tuple(item.mutations[0].start_pos),
                item.mutations[0].operator_name,
                item.mutations[0].occurrence,
            )
        )
        if args.max_mutants and len(inside) > args.max_mutants:
            step = len(inside) / args.max_mutants
            inside = [inside[int(i * step)] for i in range(args.max_mutants)]
        keep = {item.job_id for item in inside}
        skipped = [item.job_id for item in items if item.job_id not in keep]
        db.set_multiple_results(skipped, WorkResult(worker_outcome=WorkerOutcome.SKIPPED))
    print(f"{name}: {len(keep)} mutants of {len(items)} in {spec['path']}", file=sys.stderr, flush=True)
    subprocess.run([*cosmic_ray, "exec", str(config), str(session)], cwd=copy, env=env, check=True)
    killed = survived = timeouts = 0
    survivors = []
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if item.job_id not in keep:
                continue
            mutation = item.mutations[0]
            if result.test_outcome == TestOutcome.SURVIVED:
                survived += 1
                lines = (result.diff or "").splitlines()
                diff = "\n".join(line for line in lines if line[:1] in "+-" and line[:3] not in ("+++", "---"))
                reason = argued(name, diff)
                survivors.append(
                    {"line": mutation.start_pos[0], "operator": mutation.operator_name, "diff": diff, "argued": reason}
                )
            else:
                killed += 1
                timeouts += result.output == "timeout"
    total = killed + survived
    score = killed / total if total else 1.0
    count = sum(1 for survivor in survivors if survivor["argued"])
    return {
        "killed": killed,
        "timeouts": timeouts,
        "survived": survived,
        "argued": count,
        "unexplained": survived - count,
        "total": total,
        "score": round(score, 4),
        "survivors": survivors,
    }


def in_copy(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """Run one module's mutants in a fresh copy of the working tree (removed after, unless ``--keep``)."""
    copy = Path(tempfile.mkdtemp(prefix=f"spatialclaw-mutation-{name}-"))
    try:
        copy_tree(copy)
        mirror = build_mirror(copy)
        env = dict(os.environ, PYTHONPATH=f"{mirror}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # a mutant of the same size within a second must not reuse a .pyc
        env.setdefault("HF_HUB_OFFLINE", "1")
        path = MODULES[name]["path"]
        dotted = path.removesuffix(".py").replace("/", ".")
        dotted = dotted if dotted.startswith("spatialclaw.") else f"spatialclaw.{dotted}"
        where = f"import {dotted} as m, pathlib; print(pathlib.Path(m.__file__).resolve())"
        loaded = subprocess.run([sys.executable, "-c", where], cwd=copy, env=env, capture_output=True, text=True)
        if loaded.stdout.strip() != str((copy / path).resolve()):
            raise SystemExit(f"{dotted} is not imported from the copy: {loaded.stdout.strip()} {loaded.stderr[-500:]}")
        return run_module(name, MODULES[name], copy, env, args)
    finally:
        if args.keep:
            print(f"copy kept at {copy}", file=sys.stderr)
        else:
            shutil.rmtree(copy, ignore_errors=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--module", action="append", choices=sorted(MODULES), help="only these modules (repeatable)")
    parser.add_argument("--max-mutants", type=int, default=0, help="at most N mutants per module (0: all)")
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds per mutant's test run, at least (3x the unmutated run)"
    )
    parser.add_argument("--jobs", type=int, default=2, help="modules run at once, each in its own copy")
    parser.add_argument("--existing-only", action="store_true", help="leave out tests/specs/")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy (its path is printed)")
    args = parser.parse_args(argv)
    names = args.module or list(MODULES)
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = dict(zip(names, pool.map(lambda name: in_copy(name, args), names), strict=True))
    print(f"{'module':<18} {'killed':>7} {'total':>6} {'score':>7} {'argued':>7} {'unexplained':>12} {'timeouts':>9}")
    for name, result in results.items():
        note = "  baseline failed" if result.get("baseline_failed") else "  no tests" if result.get("no_tests") else ""
        counts = f"{result['killed']:>7} {result['total']:>6} {result['score']:>7.1%}"
        explained = f"{result.get('argued', 0):>7} {result.get('unexplained', 0):>12} {result.get('timeouts', 0):>9}"
        print(f"{name:<18} {counts} {explained}{note}")
    for name, result in results.items():
        for survivor in result["survivors"]:
            why = f"  (argued: {survivor['argued']})" if survivor["argued"] else "  (unexplained)"
            print(f"\nSURVIVED {name} {MODULES[name]['path']}:{survivor['line']} {survivor['operator']}{why}")
            print(survivor["diff"])
    killed = sum(result["killed"] for result in results.values())
    total = sum(result["total"] for result in results.values())
    print(json.dumps({"modules": results, "total_score": round(killed / total, 4) if total else 1.0}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
