"""What ``mutation.py`` mutates: the modules that decide a score, an answer, a limit, a secret, a trajectory or
training data, the functions of each whose mutants count, the fast tests each mutant runs against, and the
survivors argued as unkillable (equivalent, or needing a fake clock or a power cut; argued in CONTRIBUTING.md)."""

from __future__ import annotations

from typing import Any

__all__ = ["ARGUED", "KERNEL_TESTS", "MODULES", "argued"]

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
#: The one-rule-at-a-time tests of MMSI-Bench .. VSTI-Bench (first: the fastest to fail).
_MMSI_TO_VSTI = "tests/benchmarks/test_paper_rules_mmsi_to_vsti.py"
#: One rule at a time (the last vs the first answer, the option split, an unknown category) for five of them.
_RULES_DSI_TO_PCOMP = "tests/benchmarks/test_paper_rules_dsi_to_perceptioncomp.py"

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
        "tests": [_MMSI_TO_VSTI, *_BLINK_TO_OSI],
    },
    "dsi_bench": {
        "path": "benchmarks/specs/dsi_bench.py",
        "functions": ["parse_options", "to_task", "dsibench_extract", "dsibench_paper"],
        "tests": [_RULES_DSI_TO_PCOMP, *_BLINK_TO_OSI],
    },
    "mindcube": {
        "path": "benchmarks/specs/mindcube.py",
        "functions": ["setting", "to_task", "mindcube_paper_extract", "mindcube_paper"],
        "tests": [_RULES_DSI_TO_PCOMP, *_BLINK_TO_OSI],
    },
    "mmsi_bench": {
        "path": "benchmarks/specs/mmsi_bench.py",
        "functions": ["subset", "to_task", "mmsi_paper_extract", "mmsi_paper"],
        "tests": [_MMSI_TO_VSTI, *_BLINK_TO_OSI],
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
        "tests": [_MMSI_TO_VSTI, *_BLINK_TO_OSI],
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
        "tests": [_RULES_DSI_TO_PCOMP, *_BLINK_TO_OSI],
    },
    "pai_bench": {
        "path": "benchmarks/specs/pai_bench.py",
        "functions": ["_options", "to_task", "mmsi_chain_letter", "_standalone", "pai_paper_choice"],
        "tests": [_RULES_DSI_TO_PCOMP, *_PAI_TO_VSTI],
    },
    "perceptioncomp": {
        "path": "benchmarks/specs/perceptioncomp.py",
        "functions": ["to_task", "perceptioncomp_paper_choice"],
        "tests": [_RULES_DSI_TO_PCOMP, *_PAI_TO_VSTI],
    },
    "video_mme": {
        "path": "benchmarks/specs/video_mme.py",
        "functions": ["to_task", "videomme_paper_choice"],
        "tests": [_MMSI_TO_VSTI, *_PAI_TO_VSTI],
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
        "tests": [_MMSI_TO_VSTI, *_PAI_TO_VSTI],
    },
    "vsi_bench_debiased": {
        "path": "benchmarks/specs/vsi_bench_debiased.py",
        "functions": ["to_task", "vsi_paper_letter", "vsi_paper_mca", "vsi_paper_na"],
        "tests": [_MMSI_TO_VSTI, *_PAI_TO_VSTI],
    },
    "vsti_bench": {
        "path": "benchmarks/specs/vsti_bench.py",
        "functions": ["to_task", "vsti_paper_na"],
        "tests": [_MMSI_TO_VSTI, *_PAI_TO_VSTI],
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
    "spbench": [
        (
            "the answer types here are multiple_choice, number, text: the others sort after it",
            ['answer_type<="multiple_choice"'],
        )
    ],
    "aggregation": [
        ("paper_scored is always a bool: != False and > False are 'is not False'", ["True)!=False", "True)>False"])
    ],
    "spar_bench": [
        ("only taken when target is 0: pred + 0 is pred - 0", ["abs(pred+target)iftarget==0"]),
        ("pred == target implies pred in target, the next clause", ["predistargetorpredintarget"]),
    ],
    "aspect_fit": [
        ("a crop to the whole image gives the same pixels, as a new image either way", ["box!=(0,-1,", "box!=(0,1,"])
    ],
    "erqa": [("ERQA's answers are one letter: a two-letter slice is the same letter", ["answer[:2]"])],
    "viewspatial_bench": [("\\b is zero-width: group 0 is the letter group 1 captures", ["match.group(0)"])],
    "mindcube": [
        ("distinct flag bits: + and ^ are |", ["re.IGNORECASE^re.DOTALL", "re.IGNORECASE+re.DOTALL"]),
        (
            "the tag's letters sit inside the word answer: the whole match holds no extra standalone A-E",
            ["tagged.group(0)"],
        ),
    ],
    "pai_bench": [("\\b and the look-ahead are zero-width: group 0 is the letter", ["found.group(0)"])],
    "osi_bench": [("at got == threshold MRA against the threshold is 1.0 too", ["got<=threshold"])],
    "mmsi_bench": [("\\b is zero-width: group 0 is the letter group 1 captures", ["inside.group(0)"])],
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
        (
            "None is handled earlier and every other answer type sorts after 'multiple_choice'",
            ['answer_type<="multiple_choice"'],
        ),
        ("a duplicates group always holds the option that created it", ["len(group)!=1"]),
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
