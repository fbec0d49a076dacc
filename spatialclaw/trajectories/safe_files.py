"""Host reads and writes in trees a kernel could have touched: never through a link, never out of the tree.

Every byte under an episode, run or session directory is treated as hostile. Readers take a stored file
only by a validated reference (64 hex digits plus the expected suffix, no path parts), open every folder
and the file itself without following links (``O_NOFOLLOW``) and accept only a regular file; a link or a
malformed reference raises :class:`BadReference`, a missing file ``FileNotFoundError``. Writers create a
temporary file next to the target (``O_CREAT | O_EXCL | O_NOFOLLOW``) and rename it over the target, and
refuse (:class:`UnsafeTarget`) a target, or a folder on its way under ``inside``, that is a link.
"""

from __future__ import annotations

import io
import os
import re
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

__all__ = [
    "BadReference",
    "UnsafeTarget",
    "is_episode_dir",
    "is_regular_file",
    "png_bytes",
    "read_ref",
    "safe_writer",
    "valid_ref",
    "write_file",
]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_SHA256 = re.compile(r"[0-9a-f]{64}")
_DIR_FD = {os.open, os.rename, os.stat, os.unlink} <= os.supports_dir_fd  # not on Windows


class BadReference(ValueError):
    """A stored file an episode refers to is malformed, a link or not a regular file: it is not read."""


class UnsafeTarget(OSError):
    """A file the host was asked to write is a link (or lies behind one): it is not written."""


def valid_ref(ref: object) -> bool:
    """Whether ``ref`` is a content hash: exactly 64 lowercase hex digits, nothing else."""
    return isinstance(ref, str) and _SHA256.fullmatch(ref) is not None


def is_regular_file(path: str | Path) -> bool:
    """Whether ``path`` itself (not what a link points to) is a regular file."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def is_episode_dir(path: str | Path, log_name: str = "episode.jsonl") -> bool:
    """Whether ``path`` is a real directory (not a link) holding a regular (not linked) episode log."""
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            return False
    except OSError:
        return False
    return is_regular_file(Path(path) / log_name)


def _open_below(base_fd: int, parts: list[str], what: Path) -> int:
    """Open the folders ``parts`` below ``base_fd`` one at a time, never following a link; a new fd."""
    fd = os.dup(base_fd)
    try:
        for part in parts:
            if part in ("", ".", "..") or "/" in part or "\\" in part:
                raise BadReference(f"{what}: '{part}' is not a plain file name")
            try:
                child = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
            except OSError as error:
                if _is_link_error(error, fd, part):
                    raise BadReference(f"{what}: '{part}' is a link, not a folder; it is not followed") from None
                raise
            os.close(fd)
            fd = child
        return fd
    except BaseException:
        os.close(fd)
        raise


def _is_link_error(error: OSError, dir_fd: int, name: str) -> bool:
    if isinstance(error, FileNotFoundError):
        return False
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def read_ref(directory: str | Path, folder: str, ref: object, suffix: str, owner: str | Path | None = None) -> bytes:
    """The bytes of ``DIRECTORY/FOLDER/REF+SUFFIX`` (``ref`` a sha256 hex digest), read without following
    any link. ``owner`` names the file that holds the reference in errors (default: the directory).

    Raises :class:`BadReference` for a malformed reference or a link / non-regular file on the way,
    ``FileNotFoundError`` when the file is missing."""
    directory = Path(directory)
    where = Path(owner) if owner is not None else directory
    if not valid_ref(ref):
        raise BadReference(f"{where}: {folder} reference {str(ref)[:80]!r} is not a sha256 hex digest; not read")
    name = f"{ref}{suffix}"
    shown = f"{folder}/{name}"
    if not _DIR_FD:
        return _read_by_path(directory, folder, name, where)
    try:
        base = os.open(directory, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except FileNotFoundError:
        raise FileNotFoundError(f"{where}: {shown} is missing (no {directory})") from None
    try:
        try:
            parent = _open_below(base, [folder], where)
        except FileNotFoundError:
            raise FileNotFoundError(f"{shown} referenced by {where} is missing") from None
        try:
            try:
                fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | _NONBLOCK, dir_fd=parent)  # a FIFO: no wait
            except FileNotFoundError:
                raise FileNotFoundError(f"{shown} referenced by {where} is missing") from None
            except OSError as error:
                if _is_link_error(error, parent, name):
                    raise BadReference(f"{where}: {shown} is a link; it is not followed") from None
                raise
        finally:
            os.close(parent)
    finally:
        os.close(base)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise BadReference(f"{where}: {shown} is not a regular file; not read")
        return handle.read()


def _read_by_path(directory: Path, folder: str, name: str, where: Path) -> bytes:
    """:func:`read_ref` where ``dir_fd`` is missing (Windows): each part checked with ``lstat`` first."""
    for path in (directory / folder, directory / folder / name):
        if os.path.islink(path):
            raise BadReference(f"{where}: {path.relative_to(directory)} is a link; it is not followed")
    try:
        handle = os.fdopen(
            os.open(directory / folder / name, os.O_RDONLY | _NONBLOCK | getattr(os, "O_BINARY", 0)), "rb"
        )
    except FileNotFoundError:
        raise FileNotFoundError(f"{folder}/{name} referenced by {where} is missing") from None
    with handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise BadReference(f"{where}: {folder}/{name} is not a regular file; not read")
        return handle.read()


def _relative_parts(path: Path, inside: Path | None) -> tuple[Path, list[str]]:
    """The folder to open as given (the user's own path) and the parts below it to open without links."""
    if inside is None:
        return path.parent, []
    try:
        parts = list(path.parent.relative_to(inside).parts)
    except ValueError:
        raise UnsafeTarget(f"{path} is not inside {inside}; not written") from None
    return inside, parts


@contextmanager
def safe_writer(
    path: str | Path, mode: str = "w", inside: str | Path | None = None, permissions: int = 0o666
) -> Iterator[IO[Any]]:
    """A file to write ``path`` through: a new temporary file beside it (``O_EXCL | O_NOFOLLOW``), renamed
    over ``path`` when the block ends without error (removed otherwise). Folders between ``inside`` and
    ``path`` must be real folders, not links; ``path`` must not be a link. ``mode``: ``"w"`` or ``"wb"``; ``permissions``: of the new file (less the umask).

    Raises :class:`UnsafeTarget` naming ``path`` when it (or a folder under ``inside``) is a link."""
    path = Path(path)
    base, parts = _relative_parts(path, Path(inside) if inside is not None else None)
    if not _DIR_FD:
        with _path_writer(path, mode, base, parts, permissions) as handle:
            yield handle
        return
    base_fd = os.open(base, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        try:
            parent = _open_below(base_fd, parts, path)
        except BadReference as bad:
            raise UnsafeTarget(f"{path} cannot be written: {bad}") from None
    finally:
        os.close(base_fd)
    tmp = f".{path.name}.{secrets.token_hex(6)}.tmp"
    try:
        _refuse_link(parent, path)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, permissions, dir_fd=parent)
        try:
            with _open_new(fd, mode) as handle:
                yield handle
            _refuse_link(parent, path)
            os.replace(tmp, path.name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=parent)
            except OSError:
                pass
            raise
    finally:
        os.close(parent)


def _open_new(opener: Any, mode: str) -> IO[Any]:
    return os.fdopen(opener, "wb") if "b" in mode else os.fdopen(opener, "w", encoding="utf-8", newline="")


@contextmanager
def _path_writer(path: Path, mode: str, base: Path, parts: list[str], permissions: int) -> Iterator[IO[Any]]:
    """:func:`safe_writer` where ``dir_fd`` is missing (Windows): each part checked with ``lstat`` first."""
    for depth in range(len(parts) + 1):
        folder = base.joinpath(*parts[:depth])
        if depth and os.path.islink(folder):
            raise UnsafeTarget(f"{path} cannot be written: {folder} is a link")
    if os.path.islink(path):
        raise UnsafeTarget(f"{path} is a link; refusing to write through it (remove it, or write elsewhere)")
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), permissions)
    try:
        with _open_new(fd, mode) as handle:
            yield handle
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _refuse_link(parent_fd: int, path: Path) -> None:
    try:
        info = os.stat(path.name, dir_fd=parent_fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise UnsafeTarget(f"{path} is a link; refusing to write through it (remove it, or write elsewhere)")
    if stat.S_ISDIR(info.st_mode):
        raise UnsafeTarget(f"{path} is a folder; cannot write a file there")


def write_file(path: str | Path, data: str | bytes, inside: str | Path | None = None, permissions: int = 0o666) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` as :func:`safe_writer` does; returns ``path``."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    with safe_writer(path, "wb", inside, permissions) as handle:
        handle.write(data)
    return Path(path)


def png_bytes(image: Any) -> bytes:
    """A PIL image encoded as PNG bytes (to hand to :func:`write_file`)."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()
