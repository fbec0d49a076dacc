"""Tiny copies of ten paper benchmarks' published repositories, written by code: files, columns, archive layout.

``build_fixture_<paper_name>(root)`` writes BLINK, CVBench, DSI-Bench, ERQA, MindCube, MMSI-Bench,
MMSI-Video-Bench, Omni3D-Bench, OmniSpatial or OSI-Bench under ``root`` as ``hf download --repo-type dataset
REPO --local-dir DIR`` leaves it with its archives extracted in place (a few records, real small PNG/JPEG
images and mp4 videos made here), and returns ``DIR`` for ``--source``. No network, no committed binaries.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "build_fixture_blink",
    "build_fixture_cvbench",
    "build_fixture_dsibench",
    "build_fixture_erqa",
    "build_fixture_mindcube",
    "build_fixture_mmsi",
    "build_fixture_mmsivideo",
    "build_fixture_omni3d",
    "build_fixture_omnispatial",
    "build_fixture_osibench",
    "image_bytes",
    "write_video",
]


def image_bytes(shade: int, fmt: str = "PNG", size: tuple[int, int] = (24, 16)) -> bytes:
    """A small real image of one colour, encoded."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", size, (shade % 256, (3 * shade) % 256, 90)).save(buffer, format=fmt)
    return buffer.getvalue()


def _image(path: Path, shade: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(image_bytes(shade, "JPEG" if path.suffix.lower() in (".jpg", ".jpeg") else "PNG"))


def write_video(path: Path, frames: int = 6, fps: int = 3) -> Path:
    """A tiny mpeg4 video (32x32, ``frames`` frames at ``fps``), made with PyAV."""
    import av

    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w") as container:
        stream = container.add_stream("mpeg4", rate=fps)
        stream.width, stream.height, stream.pix_fmt = 32, 32, "yuv420p"
        for i in range(frames):
            frame = av.VideoFrame.from_ndarray(np.full((32, 32, 3), (30 * i) % 256, np.uint8), format="rgb24")
            container.mux(stream.encode(frame))
        container.mux(stream.encode())
    return path


def _parquet(path: Path, rows: list[dict[str, Any]], schema: Any = None) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def _embedded(shade: int, name: str) -> dict[str, Any]:
    return {"bytes": image_bytes(shade), "path": name}


def build_fixture_blink(root: Path) -> Path:
    """BLINK: ``<Subtask>/val-00000-of-00001.parquet`` for the 14 subtasks (one or two questions each; Counting's
    has all four images), and a ``test`` file that must not be read."""
    from spatialclaw.benchmarks.specs.blink import SUBTASKS

    folder = root / "BLINK"
    for number, subtask in enumerate(SUBTASKS):
        rows = []
        for k in range(2 if subtask == "Relative_Depth" else 1):
            rows.append(
                {
                    "idx": f"val_{subtask}_{k + 1}",
                    "question": f"{subtask} question {k + 1}?",
                    "sub_task": subtask,
                    "image_1": _embedded(number * 10 + k, "a.png"),
                    "image_2": _embedded(number * 10 + k + 5, "b.png") if k == 1 or subtask == "Counting" else None,
                    "image_3": _embedded(number * 10 + 6, "c.png") if subtask == "Counting" else None,
                    "image_4": _embedded(number * 10 + 7, "d.png") if subtask == "Counting" else None,
                    "choices": ["first", "second"],
                    "answer": "(B)" if k else "(A)",
                    "prompt": "",
                    "explanation": "",
                }
            )
        _parquet(folder / subtask / "val-00000-of-00001.parquet", rows)
    _parquet(folder / "Counting" / "test-00000-of-00001.parquet", [{"idx": "test_hidden", "question": "?"}])
    return folder


def build_fixture_cvbench(root: Path) -> Path:
    """CVBench: ``data/test-00000-of-00001.parquet`` (an MC question on two videos, a yes/no one on three, an
    MC one on four) and ``CVBench.zip`` extracted in place: ``CVBench/<numeric folder>/*.mp4``."""
    import pyarrow as pa

    folder = root / "CVBench"
    for name in ("1/a.mp4", "1/b.mp4", "2/c.mp4", "2/d.mp4", "3/e.mp4"):
        write_video(folder / "CVBench" / name)
    (folder / "videos").mkdir(parents=True)  # a videos/ folder without numeric subfolders is not the root
    rows = [
        {
            "id": 0,
            "task_type": "Cross-video Object Recognition",
            "video_1": "1/a.mp4",
            "video_2": "1/b.mp4",
            "video_3": None,
            "video_4": None,
            "question": "Which object appears in both videos?",
            "options": ["A. a cup", "B. a dog", "C. a lamp", "D. a car"],
            "answer": "C",
        },
        {
            "id": 1,
            "task_type": "Joint-video Counting",
            "video_1": "1/a.mp4",
            "video_2": "2/c.mp4",
            "video_3": "2/d.mp4",
            "video_4": None,
            "question": "Do the three videos show the same number of people?",
            "options": ["Yes.", "No."],
            "answer": "No",
        },
        {
            "id": 2,
            "task_type": "Multi-video Temporal Reasoning",
            "video_1": "1/a.mp4",
            "video_2": "1/b.mp4",
            "video_3": "2/c.mp4",
            "video_4": "3/e.mp4",
            "question": "Which video was filmed first?",
            "options": ["A. video 1", "B. video 2", "C. video 3", "D. video 4"],
            "answer": "A",
        },
    ]
    schema = pa.schema(
        [("id", pa.int64()), ("task_type", pa.string())]
        + [(f"video_{i}", pa.string()) for i in range(1, 5)]
        + [("question", pa.string()), ("options", pa.list_(pa.string())), ("answer", pa.string())]
    )
    _parquet(folder / "data" / "test-00000-of-00001.parquet", rows, schema)
    return folder


def build_fixture_dsibench(root: Path) -> Path:
    """DSI-Bench: ``metadatas/{std,reverse,hflip,reverse_hflip}.csv`` (two rows each) plus the unused
    ``metadata_4aug.csv``; videos at ``videos/<aug>/CameraBench/...`` (the hflip copy of row 1 is missing)."""
    import pandas as pd

    folder = root / "DSI-Bench"
    rows = [
        {
            "cate": 0,
            "relative_path": "CameraBench/clip_01.mp4",
            "video_type": "real",
            "question": "From the camera's view, where does the red car move?",
            "options": "A: Left; B: Right; C: Toward the camera; D: Away from the camera",
            "GT": "b",
            "others": "",
        },
        {
            "cate": 2,
            "relative_path": "CameraBench/clip_02.mp4",
            "video_type": "sim",
            "question": "How does the camera move?",
            "options": "A: It pans left; B: It pans right; C: It moves forward; D: It stays still",
            "GT": "C",
            "others": "",
        },
    ]
    for aug in ("std", "reverse", "hflip", "reverse_hflip"):
        (folder / "metadatas").mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows).to_csv(folder / "metadatas" / f"{aug}.csv", index=False)
        for row in rows:
            if not (aug == "hflip" and row["relative_path"].endswith("02.mp4")):
                write_video(folder / "videos" / aug / row["relative_path"], frames=4)
    pd.DataFrame(rows).to_csv(folder / "metadatas" / "metadata_4aug.csv", index=False)
    return folder


def build_fixture_erqa(root: Path) -> Path:
    """ERQA: ``data/test-00000-of-00001.parquet``: one image at index 0, two images at given character
    positions, and a record without ``question_id``."""
    folder = root / "ERQA"
    question_2 = "Compare the first view and the second view. Which is closer? A. mug B. bottle"
    rows = [
        {
            "question_id": "erqa_q1",
            "question": "Where will the gripper go? A. up B. down C. left D. right",
            "question_type": "Trajectory Reasoning",
            "answer": "B",
            "images": [_embedded(1, "0.png")],
            "visual_indices": [0],
        },
        {
            "question_id": "erqa_q2",
            "question": question_2,
            "question_type": "Multi-view Reasoning",
            "answer": "A",
            "images": [_embedded(2, "0.png"), _embedded(3, "1.png")],
            "visual_indices": [question_2.index(" and the second"), question_2.index(". Which")],
        },
        {
            "question_id": None,
            "question": "Is the drawer open? A. yes B. no",
            "question_type": "State Estimation",
            "answer": "A",
            "images": [_embedded(4, "0.png"), _embedded(5, "1.png")],
            "visual_indices": [0, 0],
        },
    ]
    _parquet(folder / "data" / "test-00000-of-00001.parquet", rows)
    return folder


def _mindcube_record(sample_id: str, images: list[str], answer: str) -> dict[str, Any]:
    return {
        "id": sample_id,
        "category": ["tag"],
        "type": "self",
        "meta_info": [],
        "question": "After turning left, what is in front of you? A. a sofa B. a window C. a door",
        "images": images,
        "gt_answer": answer,
    }


def build_fixture_mindcube(root: Path) -> Path:
    """MindCube: ``data.zip`` extracted in place: ``data/raw/MindCube.jsonl`` (five settings) beside
    ``data/raw/MindCube_tinybench.jsonl`` (one record) and ``data/other_all_image/``."""
    folder = root / "MindCube"
    images = ["other_all_image/around/0_a.png", "other_all_image/around/0_b.png"]
    for number, image in enumerate(images):
        _image(folder / "data" / image, 40 + number)
    full = [
        _mindcube_record("around_group0_q1", images, "b"),
        _mindcube_record("ROTATION_group1_q2", images[:1], "C"),
        _mindcube_record("translation_group2_q1", images, "A"),
        _mindcube_record("among_group3_q4", images, "A"),
        _mindcube_record("misc_group4_q1", images[1:], "B"),
    ]
    raw = folder / "data" / "raw"
    raw.mkdir(parents=True)
    (raw / "MindCube.jsonl").write_text("".join(json.dumps(r) + "\n" for r in full))
    (raw / "MindCube_tinybench.jsonl").write_text(json.dumps(_mindcube_record("among_tiny_q1", images, "A")) + "\n")
    return folder


def build_fixture_mmsi(root: Path) -> Path:
    """MMSI-Bench: ``MMSI_Bench.parquet`` at the root, images as encoded bytes."""
    folder = root / "MMSI-Bench"
    rows = [
        {
            "id": 0,
            "images": [image_bytes(10), image_bytes(11, "JPEG")],
            "question_type": "Positional Relationship (Cam.-Obj.)",
            "question": "Where was the sofa? Options: A: front-left, B: behind, C: right, D: ahead",
            "answer": "a",
            "difficulty": "easy",
            "thought": "hidden",
        },
        {
            "id": 1,
            "images": [image_bytes(12)],
            "question_type": "MSR",
            "question": "How many steps? Options: A: 1, B: 2, C: 3, D: 4",
            "answer": "D",
            "difficulty": "hard",
            "thought": "hidden",
        },
    ]
    _parquet(folder / "MMSI_Bench.parquet", rows)
    return folder


def build_fixture_mmsivideo(root: Path) -> Path:
    """MMSI-Video-Bench: ``mmsivideo.json``, ``frames/`` and ``ref_images/`` (archives extracted), ``videos/``."""
    folder = root / "MMSI-Video-Bench"
    for clip, count in (("scene01", 3), ("scene02", 2), ("scene03", 1)):
        for k in range(count):
            _image(folder / "frames" / clip / f"{k:05d}.jpg", 20 * k + len(clip))
        write_video(folder / "videos" / f"{clip}.mp4", frames=3)
    _image(folder / "ref_images" / "ref_01.png", 200)
    records = [
        {
            "id": "mv_0001",
            "type": "(Spatial Construction) Camera-Scene Spatial Relationship",
            "video_list": [{"path": "scene01.mp4", "start": 0.0, "end": 3.0, "base_fps": 1.0}],
            "frames_list": [[f"scene01/{k:05d}.jpg" for k in range(3)]],
            "ref_images": ["ref_01.png"],
            "ori_question": "The object in <image> is seen in the video. Where is it at the end?",
            "options": ["left", "right", "behind", "in front"],
            "ground_truth": "d",
            "hint": "not shown",
        },
        {
            "id": "mv_0002",
            "type": "(Cross-Video) Memoery Update",
            "video_list": [
                {"path": "scene02.mp4", "start": 1.0, "end": 3.0, "base_fps": 1.0},
                {"path": "scene03.mp4", "start": 0.0, "end": 1.0, "base_fps": 1.0},
            ],
            "frames_list": [["scene02/00000.jpg", "scene02/00001.jpg"], ["scene03/00000.jpg"]],
            "ref_images": [],
            "ori_question": "Which clip was filmed later?",
            "options": ["the first", "the second"],
            "ground_truth": "B",
            "hint": "",
        },
        {
            "id": "mv_0003",
            "type": "Prediction",
            "video_list": [{"path": "scene03.mp4", "start": 0.0, "end": 1.0, "base_fps": 1.0}],
            "frames_list": [["scene03/00000.jpg"]],
            "ref_images": [],
            "ori_question": "What happens next?",
            "options": ["the door opens", "nothing"],
            "ground_truth": "A",
            "hint": "",
        },
    ]
    (folder / "mmsivideo.json").write_text(json.dumps(records, ensure_ascii=False))
    return folder


def build_fixture_omni3d(root: Path) -> Path:
    """Omni3D-Bench: the archive extracted: ``annotations.json`` = ``{"questions": [...]}`` and ``images/``."""
    folder = root / "Omni3D-Bench"
    _image(folder / "images" / "omni_0001.jpg", 70)
    _image(folder / "images" / "omni_0002.jpg", 71)
    questions = [
        {
            "question_index": 0,
            "image_filename": "omni_0001.jpg",
            "question": "How many chairs?",
            "answer": 3,
            "answer_type": "int",
        },
        {
            "question_index": 1,
            "image_filename": "omni_0001.jpg",
            "question": "How tall is the table, in metres?",
            "answer": 0.75,
            "answer_type": "float",
        },
        {
            "question_index": 2,
            "image_filename": "omni_0002.jpg",
            "question": "Which is closer, the sofa or the lamp?",
            "answer": "Lamp",
            "answer_type": "str",
        },
        {
            "question_index": 3,
            "image_filename": "omni_0002.jpg",
            "question": "Is the rug wider than the bed?",
            "answer": "no",
            "answer_type": "str",
        },
        {
            "question_index": 4,
            "image_filename": "omni_0002.jpg",
            "question": "How much taller is the lamp than the vase, in metres?",
            "answer": 0.0,
            "answer_type": "float",
        },
    ]
    (folder / "annotations.json").write_text(json.dumps({"questions": questions}))
    return folder


def build_fixture_omnispatial(root: Path) -> Path:
    """OmniSpatial: ``OmniSpatial-test.zip`` extracted in place: ``OmniSpatial-test/data.json`` and
    ``OmniSpatial-test/<task_type>/<n>.png``; raw id ``0_1`` repeats across task groups."""
    folder = root / "OmniSpatial"
    test = folder / "OmniSpatial-test"
    for task_type in ("Complex_Logic", "Perspective_Taking"):
        _image(test / task_type / "0.png", len(task_type))
    records = [
        {
            "id": "0_1",
            "question": "Which face is opposite the red one?",
            "options": ["blue", "green", "yellow", "white"],
            "answer": 2,
            "task_type": "Complex_Logic",
            "sub_task_type": "Pattern_Recognition",
        },
        {
            "id": "0_1",
            "question": "From the driver's seat, where is the cyclist?",
            "options": ["left", "right"],
            "answer": 0,
            "task_type": "Perspective_Taking",
            "sub_task_type": "Allocentric",
        },
        {
            "id": "0_2",
            "question": "Which net folds into the cube shown?",
            "options": [],
            "answer": 1,
            "task_type": "Complex_Logic",
            "sub_task_type": "Geometric_Reasoning",
        },
    ]
    (test / "data.json").write_text(json.dumps(records))
    return folder


def build_fixture_osibench(root: Path) -> Path:
    """OSI-Bench: ``data.parquet`` at the root and the videos at ``<file_name>`` (archives extracted)."""
    import pyarrow as pa

    folder = root / "OSI-Bench"
    write_video(folder / "videos" / "plaza.mp4")
    write_video(folder / "videos" / "road.mp4")
    base = {"video_length": 2.0, "file_name": "videos/plaza.mp4"}
    rows = [
        {
            **base,
            "index": 11,
            "question": "Which is closer to object 3?",
            "question_type": "mcq",
            "options": ["A. object 1", "B. object 2"],
            "answer": "B",
            "category": "relative_distance",
        },
        {
            **base,
            "index": 12,
            "question": "Which way does the person walk?",
            "question_type": "mcq",
            "options": ["north", "south", "east"],
            "answer": "C",
            "category": "trajectory_description",
        },
        {
            **base,
            "index": 13,
            "question": "How far apart are object 1 and object 2, in metres?",
            "question_type": "numerical",
            "options": None,
            "answer": "7.5",
            "category": "absolute_distance",
        },
        {
            **base,
            "index": 14,
            "file_name": "videos/road.mp4",
            "question": "How fast does object 4 move, in m/s?",
            "question_type": "numerical",
            "options": None,
            "answer": "0",
            "category": "absolute_speed",
        },
    ]
    schema = pa.schema(
        [
            ("index", pa.int64()),
            ("question", pa.string()),
            ("question_type", pa.string()),
            ("file_name", pa.string()),
            ("options", pa.list_(pa.string())),
            ("answer", pa.string()),
            ("category", pa.string()),
            ("video_length", pa.float64()),
        ]
    )
    _parquet(folder / "data.parquet", rows, schema)
    return folder
