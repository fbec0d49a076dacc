"""What a dataset makes the host read or write is bounded (issue 30, B9 follow-up).

A record could name a media file of any size, which the host hashed and decoded before an episode's time
limit applied; an archive extracted whatever it held, so a zip of a few kilobytes wrote gigabytes (a zip bomb)
or millions of files. Each now stops at a limit, with an error naming the record or the archive and the
limit, and each limit is set by an environment variable (``benchmarks/data/limits.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from PIL import Image

from tests.security.test_archives import REPO_ROOT
from tests.security.test_dataset_media import REPLY


def test_a_media_file_over_the_limit_is_refused_naming_the_record_and_the_limit(tmp_path: Path) -> None:
    source = tmp_path / "MindCube"
    (source / "other_all_image").mkdir(parents=True)
    Image.new("RGB", (16, 16), (200, 30, 30)).save(source / "other_all_image" / "a.png")
    with open(source / "other_all_image" / "huge.png", "wb") as huge:  # sparse: 3 MiB read as zeros
        huge.truncate(3 << 20)
    record = {"id": "around_1", "question": "Which? A. left B. right", "gt_answer": "A", "category": ["around"]}
    lines = [
        {**record, "images": ["other_all_image/a.png"]},
        {**record, "id": "around_2", "images": ["other_all_image/huge.png"]},
    ]
    (source / "MindCube_tinybench.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    (tmp_path / "replies.jsonl").write_text(json.dumps(REPLY) + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "spatialclaw.cli", "bench", "--benchmark", "mindcube", "--source", str(source)]
        + ["--model", "scripted:replies=replies.jsonl", "--out", "run"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "SPATIALCLAW_MAX_MEDIA_MB": "2"},
    )
    assert done.returncode != 0
    assert "mindcube: record 1 names media file" in done.stderr and "huge.png" in done.stderr, done.stderr[-2000:]
    assert "over the limit of 2 MiB per media file (set $SPATIALCLAW_MAX_MEDIA_MB" in done.stderr
    assert "Traceback" not in done.stderr


def data_download(root: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "spatialclaw.cli", "data", "download", "omni3d", "--root", str(root), "--check-only"],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
        env={**os.environ, "HF_HUB_OFFLINE": "1", **env},
    )


@pytest.mark.parametrize("bomb", ["bytes", "members"])
def test_an_archive_past_its_size_or_member_limit_stops_with_an_error_naming_it(tmp_path: Path, bomb: str) -> None:
    folder = tmp_path / "R" / "Omni3D-Bench"
    folder.mkdir(parents=True)
    with zipfile.ZipFile(folder / "z.zip", "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        if bomb == "bytes":  # 40 MiB of zeros in a zip of about 40 KiB
            bundle.writestr("images/zeros.bin", bytes(40 << 20))
        else:
            for index in range(300):
                bundle.writestr(f"images/{index}.txt", "x")
    if bomb == "bytes":
        done = data_download(tmp_path / "R", SPATIALCLAW_MAX_ARCHIVE_MB="8")
        expected = "extracts more than 8 MiB in all (reached at member 'images/zeros.bin')"
        written = (folder / "images" / "zeros.bin").stat().st_size
        assert written <= 9 << 20  # stopped at the limit, not after the whole member
    else:
        done = data_download(tmp_path / "R", SPATIALCLAW_MAX_ARCHIVE_MEMBERS="100")
        expected = "holds more than 100 members, the limit per archive"
        assert len(list((folder / "images").iterdir())) <= 100
    assert done.returncode != 0 and f"{folder / 'z.zip'} {expected}" in done.stderr, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
