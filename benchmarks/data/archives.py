"""Safe extraction of a dataset's archives: what a hub repository ships is treated as hostile.

:func:`extract` writes an archive's members one by one into a folder, never through a link: every folder on
a member's way is opened relative to the one before it without following links (``O_NOFOLLOW``), and every
file is created the same way, so a link already in the folder (the user's, or one a crafted archive tried to
plant) stops the extraction with an error naming it. Only plain files and folders come out: a member that is
a symbolic or hard link, a device or a FIFO is refused (the published archives hold none), as is an
absolute name or one with ``..``. Zip and tar alike, whatever Python's own tar filter would allow.

An archive is bounded too (:mod:`~spatialclaw.benchmarks.data.limits`): at most ``$SPATIALCLAW_MAX_ARCHIVE_MEMBERS``
members and ``$SPATIALCLAW_MAX_ARCHIVE_MB`` MiB extracted in all, counted as the bytes come out (not as the
archive declares them), so a zip bomb stops with an error naming the archive and the limit.
"""

from __future__ import annotations

import os
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import IO

from spatialclaw.benchmarks.data.limits import max_archive_bytes, max_archive_members
from spatialclaw.benchmarks.spec import DatasetUnavailable

__all__ = ["extract"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW


def _parts(name: str, archive: Path) -> list[str]:
    member = PurePosixPath(name.replace("\\", "/"))
    parts = [part for part in member.parts if part not in ("", ".")]
    if member.is_absolute() or ".." in parts or not parts or ":" in parts[0]:
        raise DatasetUnavailable(f"{archive} holds {name!r}, a path outside its folder; not extracted")
    return parts


@contextmanager
def _folder(root: int, parts: list[str], archive: Path, name: str) -> Iterator[int]:
    """A descriptor of folder ``parts`` below ``root``, made where missing, reached without following a link."""
    fd = os.dup(root)
    try:
        for index, part in enumerate(parts):
            try:
                os.mkdir(part, 0o755, dir_fd=fd)
            except FileExistsError:
                pass
            try:
                inner = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError:
                where = "/".join(parts[: index + 1])
                raise DatasetUnavailable(
                    f"{archive}: member {name!r} would be written through {where!r}, which is a link or not a "
                    "folder; not extracted (an archive never writes through a link)"
                ) from None
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


class _Budget:
    """What one archive may still extract: members and bytes (see :mod:`~spatialclaw.benchmarks.data.limits`)."""

    def __init__(self, archive: Path) -> None:
        self.archive = archive
        self.members, self.max_members = 0, max_archive_members()
        self.bytes, self.max_bytes = 0, max_archive_bytes()

    def member(self) -> None:
        self.members += 1
        if self.members > self.max_members:
            raise DatasetUnavailable(
                f"{self.archive} holds more than {self.max_members:,} members, the limit per archive; extraction "
                "stopped (set $SPATIALCLAW_MAX_ARCHIVE_MEMBERS to allow more)"
            )

    def take(self, size: int, name: str) -> None:
        self.bytes += size
        if self.bytes > self.max_bytes:
            raise DatasetUnavailable(
                f"{self.archive} extracts more than {self.max_bytes >> 20:,} MiB in all (reached at member {name!r}), "
                "the limit per archive; extraction stopped (set $SPATIALCLAW_MAX_ARCHIVE_MB to allow more)"
            )


def _write(root: int, parts: list[str], source: IO[bytes], archive: Path, name: str, budget: _Budget) -> None:
    with _folder(root, parts[:-1], archive, name) as folder:
        try:
            fd = os.open(parts[-1], _FILE_FLAGS, 0o644, dir_fd=folder)
        except OSError as error:
            raise DatasetUnavailable(
                f"{archive}: member {name!r} cannot be written ({error.strerror}: a link or a folder is in its "
                "place); not extracted"
            ) from None
        with os.fdopen(fd, "wb") as sink:
            while chunk := source.read(1 << 20):
                budget.take(len(chunk), name)
                sink.write(chunk)


def _refuse(archive: Path, name: str, what: str) -> DatasetUnavailable:
    return DatasetUnavailable(f"{archive} holds {name!r}, a {what}; only files and folders are extracted")


def extract(archive: Path, target: Path) -> None:
    """Extract ``archive`` (zip or tar, any compression tarfile reads) into ``target``, member by member."""
    target.mkdir(parents=True, exist_ok=True)
    root = os.open(target, _DIR_FLAGS)
    budget = _Budget(archive)
    try:
        if archive.name.lower().endswith(".zip"):
            with zipfile.ZipFile(archive) as bundle:
                for info in bundle.infolist():
                    budget.member()
                    parts = _parts(info.filename, archive)
                    kind = stat.S_IFMT(info.external_attr >> 16)  # 0: no type recorded (a plain file)
                    if info.is_dir():
                        with _folder(root, parts, archive, info.filename):
                            continue
                    if kind not in (0, stat.S_IFREG):
                        what = "symbolic link" if kind == stat.S_IFLNK else "special file"
                        raise _refuse(archive, info.filename, what)
                    with bundle.open(info) as source:
                        _write(root, parts, source, archive, info.filename, budget)
        else:
            with tarfile.open(archive) as bundle:
                for member in bundle:
                    budget.member()
                    parts = _parts(member.name, archive)
                    if member.isdir():
                        with _folder(root, parts, archive, member.name):
                            continue
                    if not member.isreg():
                        special = "link" if member.issym() or member.islnk() else "device or FIFO"
                        raise _refuse(archive, member.name, special)
                    data = bundle.extractfile(member)
                    if data is None:
                        raise _refuse(archive, member.name, "member without data")
                    with data:
                        _write(root, parts, data, archive, member.name, budget)
    finally:
        os.close(root)
