"""MMSI-Video-Bench (Lin et al., 2025) as the paper runs it: video spatial intelligence (spatial construction,
motion, planning, prediction, cross-video), multiple choice over pre-extracted clip frames.

Published layout (``rbler/MMSI-Video-Bench``): ``mmsivideo.json`` (a list, read in order: ``paper_order``
holds), ``frames/`` (pre-extracted; ``frames.zip`` extracted in place), ``videos/``, ``ref_images/``. Fields:
``id`` (the sample id); ``type`` (the English category, e.g. ``(Spatial Construction) Camera-Scene Spatial
Relationship``, kept as written, including ``(Cross-Video) Memoery Update``); ``frames_list`` (one list of
frame paths per clip, under ``frames/``; every frame goes to the kernel); ``video_list`` (``path`` under
``videos/``, ``start``, ``end``, ``base_fps``: each clip's fps is ``base_fps``, its duration ``end - start``,
in ``meta["clips"]``); ``options`` (option texts, lettered A, B, ... by the prompt); ``ground_truth`` (a
letter); ``ori_question`` (the question; when its ``<image>`` tags are as many as ``ref_images``, each becomes
``[reference image #n]`` in order); ``ref_images`` (under ``ref_images/``); ``hint`` (not shown).

Inputs: one image set per clip (64 key frames shown per clip), then the reference images as one more input,
whose position ``meta["reference_images_input"]`` names (the paper attaches them to the first message).
Scoring: metric ``mmsivideo_paper``, the paper's base extractor: ``\\boxed{X}``, the first letter before
``.``, ``:`` or ``)``, a single letter. Overall = accuracy; per type and per main category
(``meta["main_category"]``: Spatial Construction, Motion Understanding, Cross-Video, Planning = Planning +
Prediction, else Other).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.data.published import check_keys, json_data, missing
from spatialclaw.benchmarks.scoring.letters import base_extract
from spatialclaw.benchmarks.spec import BenchmarkSpec, DatasetUnavailable, FramePolicy, RecordContext
from spatialclaw.task import FrameSpec, Task

REPO = "rbler/MMSI-Video-Bench"
RECORDS = "mmsivideo.json"
MAIN_CATEGORIES = ("Spatial Construction", "Motion Understanding", "Cross-Video")


def read_source(root: Path) -> Iterator[dict[str, Any]]:
    """``mmsivideo.json``'s records in order, each checked for the fields the paper reads."""
    path = root / RECORDS
    if not path.is_file():
        raise missing("mmsi-video-bench", RECORDS, root, REPO)
    data = json_data(path, "mmsi-video-bench")
    if not isinstance(data, list):
        raise DatasetUnavailable(f"mmsi-video-bench: {path} should hold a JSON list, not {type(data).__name__}")
    wanted = ("id", "type", "frames_list", "options", "ground_truth", "ori_question")
    for position, record in enumerate(data):
        check_keys(record, wanted, path, "mmsi-video-bench", position)
        yield record


def main_category(kind: str) -> str:
    """Spatial Construction, Motion Understanding, Cross-Video (the type's prefix in brackets), Planning (for
    Planning and Prediction types), else Other."""
    text = kind.strip()
    for name in MAIN_CATEGORIES:
        if text.startswith(f"({name})") or text.startswith(name):
            return name
    return "Planning" if text.startswith(("Planning", "Prediction", "(Planning)", "(Prediction)")) else "Other"


def question_text(record: dict[str, Any]) -> str:
    """``ori_question`` with each ``<image>`` replaced by ``[reference image #n]`` when the counts match."""
    question = str(record["ori_question"])
    refs = list(record.get("ref_images") or [])
    if refs and question.count("<image>") == len(refs):
        for number in range(1, len(refs) + 1):
            question = question.replace("<image>", f"[reference image #{number}]", 1)
    return question


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    inputs = [
        FrameSpec.images([ctx.media_any([f"frames/{frame}", str(frame)]) for frame in frames])
        for frames in record["frames_list"]
        if frames
    ]
    meta: dict[str, Any] = {"metric": "mmsivideo_paper", "sample_id": str(record["id"])}
    refs = list(record.get("ref_images") or [])
    if refs:
        meta["reference_images_input"] = len(inputs)
        inputs.append(FrameSpec.images([ctx.media_any([f"ref_images/{image}", str(image)]) for image in refs]))
    meta["clips"] = [
        {
            "name": clip.get("path"),
            "fps": clip.get("base_fps"),
            "duration_s": float(clip["end"]) - float(clip["start"]) if clip.get("end") is not None else None,
        }
        for clip in record.get("video_list") or []
    ]
    kind = str(record["type"])
    meta["main_category"] = main_category(kind)
    return Task(
        question=question_text(record),
        inputs=inputs,
        choices=[str(o) for o in record["options"]],
        answer_type="multiple_choice",
        ground_truth=str(record["ground_truth"]).strip().upper(),
        task_id=f"mmsi-video-bench/{record['id']}",
        benchmark="mmsi-video-bench",
        category=kind,
        meta=meta,
    )


SPEC = BenchmarkSpec(
    name="mmsi-video-bench",
    description="Video spatial intelligence: construction, motion, planning, prediction, cross-video reasoning",
    to_task=to_task,
    hub_id=REPO,
    data_files=RECORDS,
    split="train",
    aggregation="micro",
    media_help="Download rbler/MMSI-Video-Bench and extract its archives in place (spatialclaw data download mmsivideo)",
    homepage="https://huggingface.co/datasets/rbler/MMSI-Video-Bench",
    metric="accuracy, per type and main category; boxed, else the first letter before '.', ':' or ')'",
    paper_name="mmsivideo",
    read_source=read_source,
    frames=FramePolicy(key_frames=64),
    instruction="mmsivideo.md",
    expected_files=((RECORDS, 1),),
    archives=("frames.zip", "ref_images.zip"),
    paper_order=True,
    breakdowns=("category", "main_category"),
)


# ---------------------------------------- scoring


def _clear_words(text: str) -> str:
    return text.replace(" ", "").replace('"', "").replace("'", "").replace("\n", "").replace(":", "")


def mmsi_video_extract(reply: str) -> str:
    """MMSI-Video-Bench ``extract_answer``: ``boxed{}``, a JSON ``"answer":``, ``answer is``, ``Answer: ``
    or a bare first sentence, cleaned of spaces, quotes and colons; ``"O"`` when nothing is found."""
    reply = reply.replace("<answer>", "").replace("</answer>", "")
    if "no answer" in reply:
        return "O"
    if "boxed{" in reply:
        return _clear_words(reply.split("boxed{")[1].split("}")[0])
    for marker in ('"answer":', "answer is", "Answer: "):
        if marker in reply:
            return _clear_words(reply.split(marker)[-1].split(",")[0].split(".")[0])
    first = _clear_words(reply.split(".")[0])
    return first if first in ("A", "B", "C", "D", "E", "F") else "O"


def mmsi_video_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """MMSI-Video-Bench: the extracted letter (A-F only) equals the answer."""
    got = mmsi_video_extract(reply)
    return (1.0 if got in ("A", "B", "C", "D", "E", "F") and got == str(gt) else 0.0), got


def mmsivideo_paper(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """MMSI-Video-Bench: :func:`base_extract` equals ``ground_truth`` upper-cased."""
    got = base_extract(reply)
    return (1.0 if got and got == str(gt).strip().upper() else 0.0), got
