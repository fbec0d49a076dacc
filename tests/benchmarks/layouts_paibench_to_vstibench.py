"""Fixture builders for ten of the paper's benchmarks (paibench .. vstibench): each writes the published layout
(file names, columns, extracted archives) with a few records and real tiny media made here, and returns the folder
to pass as ``--source``.

``build_fixture_<paper_name>(root)`` writes under ``root`` and returns that folder; no downloaded data is used.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from tests.benchmarks.layouts_blink_to_osibench import write_video

__all__ = [
    "build_fixture_paibench",
    "build_fixture_perceptioncomp",
    "build_fixture_sparbench",
    "build_fixture_spatialtree",
    "build_fixture_spbench",
    "build_fixture_videomme",
    "build_fixture_videommev2",
    "build_fixture_viewspatial",
    "build_fixture_vsibench_unbiased",
    "build_fixture_vstibench",
    "write_image",
]


def _png(shade: int) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (24, 16), (shade, 255 - shade, 90)).save(buffer, format="PNG")
    return buffer.getvalue()


def write_image(path: Path, shade: int = 100) -> Path:
    """A tiny real image (PNG bytes, whatever the suffix says is fine for PIL; JPEG for ``.jpg``)."""
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (24, 16), (shade, 255 - shade, 90)).save(path, format="JPEG" if path.suffix == ".jpg" else "PNG")
    return path


def _parquet(path: Path, rows: list[dict[str, Any]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)


def _json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1))


def build_fixture_paibench(root: Path) -> Path:
    folder = root / "PAI-Bench"
    options = {"A": "toward the cup", "B": "away from the cup", "C": "it stays still", "D": None}
    rows = [
        {
            "question": "Where does the gripper move?",
            "index2ans": options,
            "answer": "A",
            "video_path": "videos/robot_arm/clip_001.mp4",
            "category": "Embodied Reasoning",
            "subcategory": "Robot Arm",
        },
        {
            "question": "What happens to the ball after it leaves the table?",
            "index2ans": {"A": "it floats", "B": "it falls", "C": "it stops", "D": "it shrinks"},
            "answer": "b",
            "video_path": "videos/physics/clip_007.mp4",
            "category": "Common Sense",
            "subcategory": "Physics",
        },
    ]
    _parquet(folder / "data" / "test-00000-of-00001.parquet", rows)
    for row in rows:
        write_video(folder / str(row["video_path"]))
    return folder


def build_fixture_perceptioncomp(root: Path) -> Path:
    folder = root / "PerceptionComp"
    records = [
        {
            "key": "pc_0001",
            "video_id": "shop_walk",
            "question": "Which shop did the person enter first?",
            **{f"answer_choice_{i}": text for i, text in enumerate(["bakery", "florist", "bookshop", "cafe", "bank"])},
            "answer_id": 2,
            "answer": "bookshop",
            "category": "shopping",
            "difficulty": 2,
        },
        {
            "key": "pc_0002",
            "video_id": "home_tour_3",
            "question": "How many chairs are in the kitchen?",
            **{f"answer_choice_{i}": text for i, text in enumerate(["two", "four", "five", "six", "none"])},
            "answer_id": 1,
            "answer": "four",
            "category": "home tour",
            "difficulty": 3,
        },
    ]
    _json(folder / "questions.json", records)
    for record in records:
        write_video(folder / "data" / f"{record['video_id']}.mp4", frames=8, fps=4)
    return folder


def build_fixture_sparbench(root: Path) -> Path:
    folder = root / "SPAR-Bench"
    keys = ("id", "task", "question", "answer", "img_type", "format_type", "source")
    shards = [
        [(11, "depth_prediction_oc", "What is the depth of the chair's centre, in meters?", "2.35", "single-view",
          "fill", "scannet")],
        [(12, "view_change_infer", "How did the camera move from image 1 to image 2? Answer as action:amount pairs.",
          "move_forward:0.8,turn_left:30", "multi-view", "fill", "scannetpp")],
        [(13, "obj_spatial_relation_oo", "Which object is on the desk? A. lamp B. monitor C. plant D. keyboard", "B",
          "single-view", "select", "scannet")],
        [(14, "distance_prediction_oo_mv", "How far apart are the lamp in image 1 and the plant in image 2, in meters?",
          "1.6", "multi-view", "fill", "scannet"),
         (15, "camera_motion_infer", "How did the camera move? (A) left (B) right (C) up (D) down", "D", "multi-view",
          "select", "scannet")],
    ]  # fmt: skip
    for number, rows in enumerate(shards):
        records = []
        for row in rows:
            views = 2 if row[4] == "multi-view" else 1
            image = [{"bytes": _png(10 * row[0] + k), "path": f"{row[0]}_{k}.jpg"} for k in range(views)]
            records.append({**dict(zip(keys, row, strict=True)), "image": image})
        _parquet(folder / "data" / f"test-{number:05d}-of-00004.parquet", records)
    return folder


def build_fixture_spatialtree(root: Path) -> Path:
    folder = root / "SpatialTree-Bench"

    def info(metric: str, *path: str) -> str:
        return json.dumps({"metricfunc": metric, **{f"spatree{i}": p for i, p in enumerate(path)}})

    base = {"hint": json.dumps({"note": "not shown"}), "video": None, "image": ["images/room_0.jpg"]}
    rows = [
        {
            **base,
            "session_id": "st_mc_1",
            "question": "Which object is larger?",
            "question_type": "multiple-choice",
            "option": ["A. the sofa", "B. the lamp", None],
            "answer": "A",
            "extra_info": info("multichoiceeval", "L1", "Geometry", "Size"),
        },
        {
            **base,
            "session_id": "st_open_2",
            "question": "How far is the door from the camera, in meters?",
            "question_type": "open",
            "option": None,
            "answer": "2.5",
            "extra_info": info("meanrelativeacc", "L1", "Geometry", "Distance"),
            "video": ["videos/walk.mp4"],
            "image": None,
        },
        {
            **base,
            "session_id": "st_judge_3",
            "question": "Is the cup left of the plate?",
            "question_type": "judge",
            "option": None,
            "answer": "yes",
            "extra_info": info("accuracy", "L2", "Relation", "Left-right"),
        },
        {
            **base,
            "session_id": "st_gpt_4",
            "question": "Describe how to reach the window.",
            "question_type": "open",
            "option": None,
            "answer": "walk forward and turn left",
            "extra_info": info("gpteval", "L4", "Agentic", "Navigation"),
        },
        {
            **base,
            "session_id": "st_open_5",
            "question": "Which room is this?",
            "question_type": "open",
            "option": None,
            "answer": "Kitchen",
            "extra_info": info("exact_match", "L2", "Semantics", "Room"),
        },
    ]
    _parquet(folder / "annotations_plain.parquet", rows)
    write_image(folder / "images" / "room_0.jpg")
    write_video(folder / "videos" / "walk.mp4")
    return folder


def build_fixture_spbench(root: Path) -> Path:
    folder = root / "SPBench"
    keys = ("id", "question", "question_type", "scene_name", "images", "options", "ground_truth")
    si = [
        (1, "How tall is the lamp, in centimeters?", "object_size_estimation", "scene0011_00", ["0.jpg"], None, "150"),
        (2, "Facing the tv from the bed, is the lamp left or right?", "object_rel_direction_easy", "scene0011_00",
         ["0.jpg"], json.dumps(["A. left", "B. right"]), "A"),
    ]  # fmt: skip
    mv = [
        (1, "How many chairs are in the room?", "object_counting", "scene0020_01", ["10.jpg", "20.jpg"], None, "3"),
        (2, "Which object is closest to the door?", "object_rel_distance", "scene0020_01", ["10.jpg", "20.jpg"],
         ["A. sofa", "B. table", "C. tv"], "B"),
    ]  # fmt: skip
    _parquet(folder / "SPBench-SI.parquet", [dict(zip(keys, row, strict=True)) for row in si])
    _parquet(folder / "SPBench-MV.parquet", [dict(zip(keys, row, strict=True)) for row in mv])
    for scene, names in (("scene0011_00", ["0.jpg"]), ("scene0020_01", ["10.jpg", "20.jpg"])):
        for shade, name in enumerate(names):
            write_image(folder / scene / name, 60 * shade)
    return folder


def build_fixture_videomme(root: Path) -> Path:
    folder = root / "Video-MME"
    rows = [
        {
            "video_id": "001",
            "duration": "short",
            "domain": "Knowledge",
            "sub_category": "Astronomy",
            "url": "https://www.youtube.com/watch?v=fFjv93ACGo8",
            "videoID": "fFjv93ACGo8",
            "question_id": "001-1",
            "task_type": "Counting Problem",
            "question": "How many planets are shown?",
            "options": ["A. 5.", "B. 6.", "C. 8.", "D. 9."],
            "answer": "C",
        },
        {
            "video_id": "002",
            "duration": "long",
            "domain": "Sports Competition",
            "sub_category": "Football",
            "url": "https://www.youtube.com/watch?v=Xq1",
            "videoID": "Xq1",
            "question_id": "002-1",
            "task_type": "Action Recognition",
            "question": "What does the goalkeeper do?",
            "options": ["A. Dives left.", "B. Dives right.", "C. Stays.", "D. Runs out."],
            "answer": "B",
        },
    ]
    _parquet(folder / "videomme" / "test-00000-of-00001.parquet", rows)
    for row in rows:
        write_video(folder / "data" / f"{row['videoID']}.mp4", frames=9, fps=3)
    return folder


def build_fixture_videommev2(root: Path) -> Path:
    folder = root / "Video-MME-v2"
    options = "\n".join(f"{chr(ord('A') + i)}. option {i + 1}" for i in range(8))
    rows = []
    for video, kind, structure in (("001", "relevance", "[1, 2, 3, 4]"), ("002", "logic", "[1, [2, 3], 4]")):
        for q in range(1, 5):
            last = q == 4
            rows.append(
                {
                    "video_id": video,
                    "question_id": f"{video}-{q}",
                    "question": f"{kind.title()} question {q}?",
                    "options": options,
                    "answer": "ABCDEFGH"[(q + int(video)) % 8],
                    "group_type": kind,
                    "group_structure": structure,
                    "level": (1 if video == "001" else 2) if last else None,
                    "second_head": ("Perception" if video == "001" else "Reasoning") if last else None,
                    "third_head": ("Counting" if video == "001" else "Causal") if last else None,
                }
            )
    _parquet(folder / "test.parquet", rows)
    for video in ("001", "002"):
        write_video(folder / "videos" / f"{video}.mp4", frames=6, fps=2)
    return folder


def build_fixture_viewspatial(root: Path) -> Path:
    folder = root / "ViewSpatial-Bench"
    scene = "ViewSpatial-Bench/scannetv2_val/scene0011_00/original_images"
    keys = ("question_type", "image_path", "question", "answer", "choices")
    records = [
        ("Camera perspective - Relative Direction", [f"{scene}/0.jpg"],
         "From the camera's perspective, where is the tv relative to the sofa?", "B. right",
         "A. left\nB. right\nC. front\nD. back"),
        ("Person perspective - Object View Orientation", ["./ViewSpatial-Bench/val2017/000000000404.jpg"],
         "From the woman's perspective, where is the chair?", "C. in front of her",
         "A. to her left\nB. to her right\nC. in front of her\nD. behind her"),
        ("Person perspective - Relative Direction", ["ViewSpatial-Bench/val2017/000000999999.jpg"],
         "From the man's perspective, where is the dog?", "A. left", "A. left\nB. right"),
        ("Camera perspective - Object View Orientation", [f"{scene}/0.jpg", f"{scene}/5.jpg"],
         "Which way does the chair face in the second view?", "D. toward the camera",
         "A. left\nB. right\nC. away\nD. toward the camera"),
    ]  # fmt: skip
    _json(folder / "ViewSpatial-Bench.json", [dict(zip(keys, row, strict=True)) for row in records])
    write_image(folder / "scannetv2_val" / "scene0011_00" / "original_images" / "0.jpg", 30)
    write_image(folder / "scannetv2_val" / "scene0011_00" / "original_images" / "5.jpg", 90)
    write_image(folder / "val2017" / "000000000404.jpg", 150)
    return folder


def build_fixture_vsibench_unbiased(root: Path) -> Path:
    folder = root / "VSI-Bench"
    keys = ("id", "dataset", "scene_name", "question_type", "question", "ground_truth", "options")
    rows = [
        (7, "scannet", "scene0011_00", "object_rel_direction_hard", "Facing the sink, where is the stove?",
         "C", ["A. front-left", "B. front-right", "C. back-left", "D. back-right"]),
        (9, "arkitscenes", "41069025", "room_size_estimation", "What is the size of this room in square meters?",
         "22.5", None),
        (12, "scannet", "scene0011_00", "object_counting", "How many tables are in the room?", "0", None),
    ]  # fmt: skip
    _parquet(folder / "test_debiased.parquet", [dict(zip(keys, row, strict=True)) for row in rows])
    write_video(folder / "scannet" / "scene0011_00.mp4", frames=10, fps=5)
    write_video(folder / "arkitscenes" / "41069025.mp4", frames=4, fps=2)
    return folder


def build_fixture_vstibench(root: Path) -> Path:
    folder = root / "vstibench"
    video = "ScanNet/videos/val/scene0011_00.mp4"
    keys = ("id", "question_type", "question", "options", "mc_answer", "ground_truth")
    rows = [
        (0, "camera_displacement", "How far did the camera move between frame 3 of 16 and frame 12 of 16, in meters?",
         None, None, 1.8),
        (1, "camera_movement_direction", "Between frame 2 of 8 and frame 6 of 8, which way did the camera move?",
         ["A. forward", "B. backward", "C. left", "D. right"], "A", "forward"),
        (2, "camera_obj_dist_change", "How much did the camera-chair distance change from frame 1 to 9 of 16?",
         None, None, -0.6),
    ]  # fmt: skip
    _json(folder / "test.json", [{**dict(zip(keys, row, strict=True)), "video_path": video} for row in rows])
    write_video(folder / video, frames=12, fps=6)
    return folder
