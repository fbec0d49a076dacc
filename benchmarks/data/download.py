"""A benchmark's published files on disk: download a hub repository into a folder, extract its archives in place, check the counts.

The layout is the paper's: ``hf download --repo-type dataset REPO --local-dir ROOT/<Folder>``, then, as the paper's
download script does, every ``.zip``, ``.tar`` and ``.tar.gz`` in the folder, at most three folders deep, is unzipped or
untarred where it sits (member by member, never through a link: :mod:`.archives`) and deleted, repeated for archives that came out of archives (three rounds at most);
then each ``(glob, count)`` of ``BenchmarkSpec.expected_files`` is counted. :func:`prepare_folder` is the part
after the download and works on any folder, so it can be checked without network.
"""

from __future__ import annotations

import os
import socket
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from spatialclaw.benchmarks.spec import DatasetUnavailable

if TYPE_CHECKING:
    from spatialclaw.benchmarks.spec import BenchmarkSpec

__all__ = ["FileCheck", "check_files", "download_repo", "extract_archives", "format_checks", "prepare_folder"]

#: The archives the paper's download script extracts (whatever a spec's ``archives`` says).
_ARCHIVE_ENDINGS = (".zip", ".tar", ".tar.gz")
MAX_DEPTH = 3


@dataclass
class FileCheck:
    """One ``expected_files`` line: the glob under the folder, the count expected and the count found."""

    benchmark: str
    pattern: str
    expected: int
    found: int

    @property
    def ok(self) -> bool:
        return self.found == self.expected


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def _reachable(endpoint: str, timeout_s: float = 3.0) -> str | None:
    """None when a TCP connection to the hub's host opens within ``timeout_s``, else the reason."""
    parsed = urlparse(endpoint)
    host = parsed.hostname or "huggingface.co"
    port = parsed.port or (443 if parsed.scheme != "http" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return None
    except OSError as error:
        return f"{host}:{port} is not reachable ({error})"


def download_repo(spec: BenchmarkSpec, folder: Path) -> Path:
    """``hf download --repo-type dataset <spec.hub_id> --local-dir <folder>`` through ``huggingface_hub``.
    Fails within seconds, naming ``HF_HUB_OFFLINE`` or the network, when the hub cannot be reached."""
    if not spec.hub_id:
        raise DatasetUnavailable(f"{spec.name} has no hub repository to download; see docs/benchmarks.md")
    how = f"download it elsewhere (hf download --repo-type dataset {spec.hub_id} --local-dir {folder}) and copy it"
    if _offline():
        raise DatasetUnavailable(f"cannot download {spec.hub_id}: HF_HUB_OFFLINE is set (no network use); {how}")
    endpoint = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    problem = _reachable(endpoint)
    if problem:
        raise DatasetUnavailable(f"cannot download {spec.hub_id}: no network, {problem}; {how}")
    from huggingface_hub import snapshot_download

    folder.mkdir(parents=True, exist_ok=True)
    try:
        snapshot_download(repo_id=spec.hub_id, repo_type="dataset", local_dir=str(folder))
    except Exception as error:  # the hub client raises many types (HTTP, offline, gated repo, disk)
        raise DatasetUnavailable(
            f"downloading {spec.hub_id} into {folder} failed: {type(error).__name__}: {error}"
        ) from error
    return folder


def _is_archive(path: Path) -> bool:
    return path.is_file() and path.name.lower().endswith(_ARCHIVE_ENDINGS)


def _walk(folder: Path, depth: int) -> list[Path]:
    """The files in ``folder`` and its sub-folders down to ``depth`` levels below it, never through a link."""
    files: list[Path] = []
    for entry in sorted(folder.iterdir()):
        if entry.is_symlink():
            continue
        if entry.is_dir():
            if depth > 0:
                files += _walk(entry, depth - 1)
        elif entry.is_file():
            files.append(entry)
    return files


def _extract_one(archive: Path) -> None:
    from spatialclaw.benchmarks.data.archives import extract

    extract(archive, archive.parent)


def extract_archives(folder: Path, keep: bool = False) -> list[Path]:
    """Extract every ``.zip``/``.tar``/``.tar.gz`` under ``folder`` at most three folders deep (the paper's
    download script's rule, for every benchmark)
    where it sits, then delete it (``keep``: leave it); archives that come out of archives are extracted too,
    three rounds at most. Returns the archives extracted."""
    done: list[Path] = []
    seen: set[Path] = set()
    for _ in range(MAX_DEPTH):
        found = [path for path in _walk(folder, MAX_DEPTH) if _is_archive(path) and path not in seen]
        if not found:
            break
        for archive in found:
            try:
                _extract_one(archive)
            except (zipfile.BadZipFile, tarfile.TarError, EOFError) as error:
                raise DatasetUnavailable(f"{archive} is not a readable archive ({error}); download it again") from None
            seen.add(archive)
            done.append(archive)
            if not keep:
                archive.unlink()
    return done


def check_files(spec: BenchmarkSpec, folder: Path) -> list[FileCheck]:
    """Each ``(glob, count)`` of ``spec.expected_files`` counted under ``folder`` (files only)."""
    return [
        FileCheck(spec.name, pattern, expected, sum(1 for p in folder.glob(pattern) if p.is_file()))
        for pattern, expected in spec.expected_files
    ]


def prepare_folder(spec: BenchmarkSpec, folder: Path, keep_archives: bool = False) -> list[FileCheck]:
    """What runs after the download: extract the spec's archives in place, then count its expected files."""
    if not folder.is_dir():
        raise DatasetUnavailable(f"{spec.name}: {folder} is not a folder")
    extract_archives(folder, keep=keep_archives)
    return check_files(spec, folder)


def format_checks(checks: list[FileCheck]) -> str:
    """The checks as an aligned table: benchmark, files (glob), expected, found, ok."""
    rows = [("benchmark", "files", "expected", "found", "ok")]
    rows += [(c.benchmark, c.pattern, str(c.expected), str(c.found), "yes" if c.ok else "NO") for c in checks]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
