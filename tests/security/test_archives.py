"""A dataset's archives never write outside its folder (issue 30, B8).

``spatialclaw data download`` extracted zips with ``ZipFile.extractall``, which writes through any link
already in the folder, after checking member names only; a tar that Python 3.11.7's ``data`` filter accepts
can leave such a link pointing at ``/`` (each link resolves inside when made, a later member re-points an
intermediate one). Together they wrote a ``.pth`` into the project's venv: host code at the next Python
start. Archives are now extracted member by member, links, devices and FIFOs refused, and nothing is
written through a link.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


def data_download(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "spatialclaw.cli", "data", "download", "omni3d", "--root", str(root), "--check-only"],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )


def _link(bundle: tarfile.TarFile, name: str, target: str) -> None:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, target
    bundle.addfile(info)


def test_a_tar_link_chain_to_the_root_and_a_zip_through_it_write_nothing_outside(tmp_path: Path) -> None:
    root, victim = tmp_path / "R", tmp_path / "victim"
    folder = root / "Omni3D-Bench"
    folder.mkdir(parents=True)
    victim.mkdir()
    deep = "/".join(f"d{i}" for i in range(12))
    with tarfile.open(folder / "a.tar", "w") as bundle:  # the chain of the round-3 report
        for i in range(12):
            info = tarfile.TarInfo("/".join(f"d{j}" for j in range(i + 1)))
            info.type = tarfile.DIRTYPE
            bundle.addfile(info)
        _link(bundle, "q", deep)
        _link(bundle, "p", "q/" + "../" * 13)  # resolves inside while q is deep; "/" once q is re-pointed
        _link(bundle, "q", "d0")
    with zipfile.ZipFile(folder / "z.zip", "w") as bundle:
        bundle.writestr("p" + str(victim / "zz_dataset_payload.pth"), "import os\n")
    done = data_download(root)
    assert done.returncode != 0
    assert "a.tar" in done.stderr and "'q'" in done.stderr and "link" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert list(victim.iterdir()) == []
    assert not (folder / "q").is_symlink() and not (folder / "p").exists()


@pytest.mark.parametrize("kind", ["link in the folder", "zip symlink member", "tar fifo", "tar hardlink"])
def test_no_member_is_written_through_a_link_and_no_special_member_comes_out(tmp_path: Path, kind: str) -> None:
    root, victim = tmp_path / "R", tmp_path / "victim"
    folder = root / "Omni3D-Bench"
    folder.mkdir(parents=True)
    victim.mkdir()
    if kind == "link in the folder":  # planted by anything before: the zip must not write through it
        (folder / "images").symlink_to(victim)
        with zipfile.ZipFile(folder / "z.zip", "w") as bundle:
            bundle.writestr("images/PWNED_BY_ZIP.txt", "x")
        expected = "would be written through 'images', which is a link"
    elif kind == "zip symlink member":
        with zipfile.ZipFile(folder / "z.zip", "w") as bundle:
            info = zipfile.ZipInfo("images")
            info.external_attr = (0o120777 << 16) | 0
            bundle.writestr(info, str(victim))
            bundle.writestr("images/PWNED_BY_ZIP.txt", "x")
        expected = "a symbolic link"
    else:
        with tarfile.open(folder / "a.tar", "w") as bundle:
            info = tarfile.TarInfo("clip.mp4")
            if kind == "tar fifo":
                info.type = tarfile.FIFOTYPE
            else:
                info.type, info.linkname = tarfile.LNKTYPE, "../victim/secret"
            bundle.addfile(info, io.BytesIO(b""))
        expected = "device or FIFO" if kind == "tar fifo" else "a link"
    done = data_download(root)
    assert done.returncode != 0 and expected in done.stderr, done.stderr
    assert list(victim.iterdir()) == []
    assert not (folder / "clip.mp4").exists()
