"""The declarative description of a benchmark and the code that turns its records into tasks.

A :class:`BenchmarkSpec` says where the records come from (a Hugging Face dataset id, config(s) and split,
loaded through ``datasets``), how one record becomes a :class:`~spatialclaw.task.Task` (``to_task``), and
how scores are aggregated (a rule name from :data:`spatialclaw.benchmarks.aggregation.AGGREGATORS`).

Sources (``load_tasks(spec, source=...)``):

- ``None``: the hub id, the real path for users (needs network or a warm ``HF_HOME`` cache);
- a directory: a local copy of the hub repository (``hf download --repo-type dataset REPO --local-dir DIR``
  with its archives extracted in place, as ``spatialclaw data download`` leaves it), read by the spec's own
  ``read_source(DIR)`` (the published files, read as published), else ``datasets.load_dataset(DIR, config)``;
- a ``.jsonl`` / ``.json`` / ``.parquet`` / ``.csv`` / ``.tsv`` file: the records themselves.

Images stored inside records (``datasets`` ``Image`` features, PNG/JPEG bytes, base64 strings) are written
once to a content-addressed folder (``media_cache``) so the kernel can open them by path. Images and videos
that a benchmark ships separately (zip archives on the hub) are looked up under ``media_root``, else under the
source directory. ``frames`` (a :class:`FramePolicy`) says how videos are sampled and how many frames the agent
shows with the question; ``instruction`` names the benchmark's answer-format instruction in ``prompts/benchmarks/``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import os
import re
import stat
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.data.hub import datasets_missing, hub_problem
from spatialclaw.benchmarks.data.limits import max_media_bytes
from spatialclaw.task import Task

__all__ = [
    "BenchmarkSpec",
    "DatasetUnavailable",
    "FramePolicy",
    "RecordContext",
    "load_records",
    "load_tasks",
    "parse_inline_options",
    "strip_option_labels",
]


class DatasetUnavailable(RuntimeError):
    """The benchmark's records or media could not be found; the message says how to get them."""


@dataclass
class RecordContext:
    """What ``to_task`` may use besides the record: where to put embedded images, where shipped media live."""

    spec: BenchmarkSpec
    media_cache: Path
    media_root: Path | None
    config: str | None = None
    index: int = 0
    source_dir: Path | None = None
    keep_missing: bool = False  # a missing media file is recorded in ``missing`` instead of failing the load
    missing: list[str] = field(default_factory=list)

    def image(self, value: Any, name_hint: str = "image") -> str:
        """A path to the image in ``value``: a PIL image, ``{"bytes": ..., "path": ...}``, raw bytes, a
        base64 string, or a file path (relative paths resolve under ``media_root``). Embedded images are
        written to ``media_cache/<sha256>.<ext>`` once."""
        if value is None:
            raise ValueError(f"{self.spec.name}: record {self.index} has no image in field {name_hint!r}")
        if hasattr(value, "save") and hasattr(value, "mode"):
            buffer = io.BytesIO()
            value.convert("RGB").save(buffer, format="PNG")
            return self._store(buffer.getvalue(), ".png")
        if isinstance(value, dict):
            if value.get("bytes"):
                return self._store(bytes(value["bytes"]), _suffix(value.get("path")))
            if value.get("path"):
                return self.media(value["path"])
            raise ValueError(f"{self.spec.name}: record {self.index} field {name_hint!r} has neither bytes nor path")
        if isinstance(value, (bytes, bytearray, memoryview)):
            return self._store(bytes(value), _sniff(bytes(value)))
        if isinstance(value, str):
            if len(value) > 512 and re.fullmatch(r"[A-Za-z0-9+/=\s]+", value[:1024]):
                try:
                    data = base64.b64decode(value, validate=False)
                except binascii.Error:
                    data = b""
                if data:
                    return self._store(data, _sniff(data))
            return self.media(value)
        raise TypeError(f"{self.spec.name}: cannot read an image from {type(value).__name__} in {name_hint!r}")

    def media(self, relative: str) -> str:
        """The absolute path of a media file the benchmark ships separately, checked to exist: relative paths
        resolve under ``media_root`` if given, else under ``source_dir`` (then the folders its archives
        extract to, named after each archive, e.g. ``CVBench/`` for ``CVBench.zip``)."""
        path = Path(relative)
        if not path.is_absolute():
            roots = self._roots()
            if not roots:
                raise DatasetUnavailable(
                    f"{self.spec.name} needs its media files ({relative!r} and others), which are not inside the "
                    f"records. {self.spec.media_help or 'Download them'} and pass --source DIR or --media-root DIR "
                    f"(source=DIR / media_root=DIR in Python)."
                )
            path = next((root / relative for root in roots if (root / relative).exists()), roots[0] / relative)
        if not path.exists() and self.keep_missing:  # the paper keeps the sample, without these frames
            real = self._inside_dataset(path, relative, must_exist=False)
            self.missing.append(real)
            return real
        if not path.exists():
            where = f"--media-root {self.media_root}" if self.media_root else f"--source {self.source_dir}"
            raise DatasetUnavailable(
                f"{self.spec.name}: media file {path} does not exist. {self.spec.media_help or ''}".rstrip()
                + f" Check {where}"
                + (
                    " (were its archives extracted? `spatialclaw data download` does that)."
                    if self.spec.archives
                    else "."
                )
            )
        return self._inside_dataset(path, relative)

    def _inside_dataset(self, path: Path, relative: str, must_exist: bool = True) -> str:
        """``path`` resolved, when it is a regular file (``must_exist=False``: or nothing) inside the dataset's
        folders (``media_root``, ``source_dir``) and no larger than :func:`~spatialclaw.benchmarks.data.limits.max_media_bytes`;
        a record naming an absolute path or ``..`` out of them, or too large a file, is refused, naming the record."""
        real = path.resolve()
        folders = [p.resolve() for p in (self.media_root, self.source_dir) if p is not None]
        if not any(real == folder or real.is_relative_to(folder) for folder in folders):
            raise DatasetUnavailable(
                f"{self.spec.name}: record {self.index} names media file {relative!r}, which is outside the "
                f"dataset's folder ({', '.join(map(str, folders)) or 'none given'}): a dataset may name only files "
                "inside its own folder (no absolute path, no '..')"
            )
        if not must_exist:
            return str(real)
        info = real.stat()
        if not stat.S_ISREG(info.st_mode):
            raise DatasetUnavailable(
                f"{self.spec.name}: record {self.index} names media file {relative!r}, which is not a regular file"
            )
        limit = max_media_bytes()
        if info.st_size > limit:
            raise DatasetUnavailable(
                f"{self.spec.name}: record {self.index} names media file {relative!r} of {info.st_size / 2**20:,.0f} "
                f"MiB, over the limit of {limit >> 20:,} MiB per media file (set $SPATIALCLAW_MAX_MEDIA_MB to change it)"
            )
        return str(real)

    def _roots(self) -> list[Path]:
        if self.media_root is not None:
            return [self.media_root]
        if self.source_dir is None:
            return []
        stems = {_archive_stem(Path(pattern).name) for pattern in self.spec.archives}
        nested = [self.source_dir / stem for stem in sorted(stems) if stem and "*" not in stem]
        return [self.source_dir, *(folder for folder in nested if folder.is_dir())]

    def media_any(self, candidates: list[str]) -> str:
        """The first of several possible relative paths that exists under ``media_root`` (for datasets whose
        archives are laid out differently between releases); the error names the first."""
        for root in self._roots():
            for candidate in candidates:
                if (root / candidate).exists():
                    return self._inside_dataset(root / candidate, candidate)
        return self.media(candidates[0])

    def _store(self, data: bytes, suffix: str) -> str:
        self.media_cache.mkdir(parents=True, exist_ok=True)
        path = self.media_cache / f"{hashlib.sha256(data).hexdigest()}{suffix}"
        if not path.exists():
            tmp = path.with_name(path.name + f".tmp{os.getpid()}")
            tmp.write_bytes(data)
            os.replace(tmp, path)
        return str(path.resolve())


def _archive_stem(name: str) -> str:
    for ext in (".tar.gz", ".tar.bz2", ".tar.xz", ".tgz", ".zip", ".tar"):
        if name.lower().endswith(ext):
            return name[: -len(ext)]
    return Path(name).stem


def _suffix(path: Any) -> str:
    suffix = Path(str(path or "")).suffix.lower()
    return suffix if suffix in {".png", ".jpg", ".jpeg", ".webp", ".bmp"} else ".png"


def _sniff(data: bytes) -> str:
    if data[:3] == b"\xff\xd8\xff":
        return ".jpg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ".webp"
    return ".png"


@dataclass(frozen=True)
class FramePolicy:
    """How a benchmark's videos are sampled and which frames are shown with the question."""

    fps: float | None = None  # sampling rate for videos in frames per second; None = the video's native fps
    key_frames: int = 32  # key frames shown with the question PER VIDEO (per input); images: all, up to this
    long_side: int = 768  # shown frames are resized to this long side in pixels


@dataclass(frozen=True)
class BenchmarkSpec:
    """One benchmark, declaratively.

    ``hub_id``/``configs``/``split``: where ``datasets`` loads the records from (several configs are
    concatenated, e.g. BLINK's spatial subsets). ``data_files``: for hub repos that are plain JSON files.
    ``to_task(record, ctx) -> Task | None``: the record-to-task mapping (None: a record the adapter does
    not score, counted and reported by :func:`load_tasks`). ``aggregation``: the rule for the overall
    number. ``media_help``: how to obtain media not embedded in the records. ``splits``: every published
    split (default: ``split`` alone). ``metric``: one line on how the benchmark is scored, for
    ``spatialclaw bench --list``.

    The paper's setting: ``paper_name`` (its short name, e.g. ``blink``); ``read_source(DIR)`` yields the
    records from a downloaded repository folder exactly as published (raising :class:`DatasetUnavailable`
    naming the missing file or column and DIR); ``frames``; ``instruction`` (a file under
    ``prompts/benchmarks/``); ``expected_files`` ((glob under DIR, count) pairs) and ``archives`` (globs
    extracted in place), both for ``spatialclaw data download``; ``paper_order`` (our task order is the
    paper loader's, so ``--seed 42 --limit N`` draws its subsample); ``breakdowns`` (task fields or meta keys
    the report breaks scores down by).
    """

    name: str
    description: str
    to_task: Callable[[dict[str, Any], RecordContext], Task | None]
    hub_id: str | None = None
    configs: tuple[str | None, ...] = (None,)
    split: str = "test"
    data_files: str | None = None
    aggregation: str = "micro"
    media_help: str | None = None
    homepage: str | None = None
    splits: tuple[str, ...] = ()
    metric: str = "accuracy"
    paper_name: str | None = None
    read_source: Callable[[Path], Iterable[dict[str, Any]]] | None = None
    frames: FramePolicy = FramePolicy()
    instruction: str | None = None
    expected_files: tuple[tuple[str, int], ...] = ()
    archives: tuple[str, ...] = ()
    paper_order: bool = False
    breakdowns: tuple[str, ...] = ("category",)

    @property
    def source(self) -> str:
        """Where the records come from: the hub id, else the homepage."""
        return self.hub_id or self.homepage or "local files (--source)"

    @property
    def all_splits(self) -> tuple[str, ...]:
        return self.splits or (self.split,)


def _load_dataset(*args: Any, **kwargs: Any) -> Any:
    import datasets

    return datasets.load_dataset(*args, **kwargs)


def _check(problem: str | None) -> None:
    if problem is not None:
        raise DatasetUnavailable(problem)


_FILE_BUILDERS = {".jsonl": "json", ".json": "json", ".parquet": "parquet", ".csv": "csv", ".tsv": "csv"}


def load_records(
    spec: BenchmarkSpec, source: str | Path | None = None, split: str | None = None
) -> Iterator[tuple[str | None, dict[str, Any]]]:
    """Yield ``(config, record)`` pairs from the hub (``source=None``), a local copy of the repository
    (a directory) or a records file. Raises :class:`DatasetUnavailable` with what to do next."""
    split = split or spec.split
    if source is not None:
        path = Path(source)
        if not path.exists():
            raise DatasetUnavailable(f"{spec.name}: source {path} does not exist")
        if path.is_dir() and spec.read_source is not None:
            for record in spec.read_source(path):
                yield None, record
            return
        if path.is_file():
            builder = _FILE_BUILDERS.get(path.suffix.lower())
            if builder is None:
                raise DatasetUnavailable(
                    f"{spec.name}: cannot read {path.name}; give a .jsonl, .json, .parquet, .csv or .tsv file or a directory"
                )
            extra = {"delimiter": "\t"} if path.suffix.lower() == ".tsv" else {}
            _check(datasets_missing(spec.name))
            dataset = _load_dataset(builder, data_files=str(path), split="train", **extra)
            for record in dataset:
                yield None, record
            return
    _check(datasets_missing(spec.name))
    if source is None and spec.hub_id is not None:
        _check(hub_problem(spec.name, spec.hub_id))
    for config in spec.configs:
        target = str(source) if source is not None else spec.hub_id
        if target is None:
            raise DatasetUnavailable(f"{spec.name} has no hub id; pass a local source")
        kwargs: dict[str, Any] = {"split": split}
        if spec.data_files and source is None:
            kwargs["data_files"] = spec.data_files
        try:
            dataset = _load_dataset(target, config, **kwargs) if config else _load_dataset(target, **kwargs)
        except Exception as exc:  # datasets raises many types (ConnectionError, FileNotFoundError, ValueError)
            where = f"local copy {target}" if source is not None else f"the Hugging Face hub ({target})"
            raise DatasetUnavailable(
                f"could not load {spec.name} from {where}"
                + (f", config {config!r}" if config else "")
                + f", split {split!r}: {type(exc).__name__}: {exc}. Without network, download it elsewhere "
                "(huggingface-cli download --repo-type dataset "
                f"{spec.hub_id}) and pass --source DIR, or set HF_HOME to a warm cache."
            ) from exc
        for record in dataset:
            yield config, record


def load_tasks(
    spec: BenchmarkSpec,
    source: str | Path | None = None,
    media_root: str | Path | None = None,
    media_cache: str | Path | None = None,
    split: str | None = None,
    limit: int | None = None,
) -> list[Task]:
    """The benchmark's tasks, in record order (``limit``: the first N). ``media_cache`` defaults to
    ``$SPATIALCLAW_CACHE/benchmarks/<name>/media``. Records the adapter does not score (its ``to_task``
    returns None, e.g. SpatialTree-Bench's LLM-judged questions) are skipped with one warning that
    counts them. A paper benchmark's record whose media files are missing is kept without them (an input left
    with no file is dropped), counted in one warning, as the paper's loader keeps it."""
    if media_cache is None:
        base = Path(os.environ.get("SPATIALCLAW_CACHE", Path.home() / ".cache" / "spatialclaw"))
        media_cache = base / "benchmarks" / spec.name / "media"
    root = Path(media_root).resolve() if media_root else None
    source_dir = Path(source).resolve() if source is not None and Path(source).is_dir() else None
    if root is None and source is not None and source_dir is None:
        root = Path(source).resolve().parent  # a records file: media beside it
    tasks: list[Task] = []
    seen: set[str] = set()
    skipped = without_media = 0
    for index, (config, record) in enumerate(load_records(spec, source, split)):
        if limit is not None and len(tasks) >= limit:
            break
        ctx = RecordContext(
            spec,
            Path(media_cache),
            root,
            config=config,
            index=index,
            source_dir=source_dir,
            keep_missing=spec.paper_name is not None,
        )
        try:
            task = spec.to_task(dict(record), ctx)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(
                f"{spec.name}: record {index} does not have the expected layout ({type(exc).__name__}: {exc}); "
                f"fields present: {sorted(record)}"
            ) from exc
        if task is None:
            skipped += 1
            continue
        if task.answer_type == "multiple_choice" and not task.choices:  # answer() would refuse every reply
            raise ValueError(
                f"{spec.name}: record {index} ({task.task_id}) is a multiple-choice question without choices; "
                "its spec must read the options (or give letters A-D)"
            )
        if ctx.missing:
            _drop_missing(task, ctx.missing)
            without_media += 1
        if task.task_id in seen:
            raise ValueError(f"{spec.name}: duplicate task id {task.task_id!r} at record {index}")
        seen.add(task.task_id)
        tasks.append(task)
    if without_media:
        warnings.warn(
            f"{spec.name}: {without_media} question(s) kept without some or all of their media, which are missing "
            "(as the paper's loader keeps them; each task's meta['missing_media'] names the files)",
            stacklevel=2,
        )
    if skipped:
        warnings.warn(
            f"{spec.name}: skipped {skipped} record(s) whose official metric spatialclaw does not "
            "reproduce (see the spec's docstring)",
            stacklevel=2,
        )
    return tasks


def _drop_missing(task: Task, missing: list[str]) -> None:
    """``task`` without the media files in ``missing`` (an input left with none is dropped), naming them in
    ``meta["missing_media"]``."""
    gone = set(missing)
    inputs = []
    for frames in task.inputs:
        keep = [i for i, path in enumerate(frames.paths) if path not in gone]
        if not keep:
            continue
        if len(keep) < len(frames.paths):
            frames = replace(
                frames,
                paths=[frames.paths[i] for i in keep],
                indices=[frames.indices[i] for i in keep]
                if frames.indices and frames.kind == "images"
                else frames.indices,
                times=[frames.times[i] for i in keep] if frames.times else frames.times,
            )
        inputs.append(frames)
    task.inputs = inputs
    task.meta["missing_media"] = sorted(gone)


_OPTION_SPLIT = re.compile(r"(?:^|\s|,|;)\(?([A-H])\s*[\.:\)]\s*")


def parse_inline_options(text: str, marker: str | None = None) -> tuple[str, list[str]] | None:
    """Split a question that carries its options inline (``"... Options: A: red, B: blue"``) into the stem
    and the option texts; None when no ``A``, ``B``, ... sequence is found."""
    body = text
    stem = text
    if marker:
        at = text.rfind(marker)
        if at < 0:
            return None
        stem, body = text[:at], text[at + len(marker) :]
    matches = list(_OPTION_SPLIT.finditer(body))
    letters = [m.group(1) for m in matches]
    expected = [chr(ord("A") + i) for i in range(len(letters))]
    # Keep the longest run A, B, C, ... starting at the first "A".
    starts = [i for i, letter in enumerate(letters) if letter == "A"]
    if not starts:
        return None
    first = starts[-1] if marker is None else starts[0]
    run = [matches[first]]
    for m in matches[first + 1 :]:
        if m.group(1) == chr(ord(run[-1].group(1)) + 1):
            run.append(m)
    if len(run) < 2 or expected[: len(run)] != [m.group(1) for m in run]:
        return None
    options = []
    for i, m in enumerate(run):
        end = run[i + 1].start() if i + 1 < len(run) else len(body)
        options.append(body[m.end() : end].strip().rstrip(",;").strip())
    if not marker:
        stem = body[: run[0].start()]
    return stem.strip(), options


def strip_option_labels(options: Iterable[Any]) -> list[str]:
    """Option texts without the ``"A. "`` / ``"(A) "`` / ``"A: "`` labels some datasets store in them (VSI-Bench,
    Video-MME), so the prompt, which labels options itself, shows each label once. Only when every option
    carries its own position's label; otherwise the options are returned as they are."""
    options = [str(o) for o in options]
    pattern = r"\s*\(?{}\s*[\).:]\s*"
    if options and all(re.match(pattern.format(chr(ord("A") + i)), o) for i, o in enumerate(options)):
        return [re.sub("^" + pattern.format(chr(ord("A") + i)), "", o, count=1).strip() for i, o in enumerate(options)]
    return options


def iter_nonempty(values: Iterable[Any]) -> list[Any]:
    """The values that are not None (image columns such as BLINK's ``image_1`` .. ``image_4``)."""
    return [v for v in values if v is not None]
