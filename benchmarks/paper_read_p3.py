"""Read a downloaded benchmark repository's published record files (parquet, JSON) with errors naming the folder.

Used by the ``read_source`` functions of the paper-setting specs (PAI-Bench, PerceptionComp, SPAR-Bench,
SpatialTree-Bench, SPBench, Video-MME, Video-MME-v2, ViewSpatial-Bench, VSI-Bench debiased, VSTI-Bench):
each reads the files ``hf download --repo-type dataset REPO --local-dir DIR`` writes, in the order the
paper's loader reads them, and raises :class:`~spatialclaw.benchmarks.spec.DatasetUnavailable` naming the
missing file or column and ``DIR``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.spec import DatasetUnavailable

__all__ = ["clean", "json_list", "parquet_records", "require_columns", "require_file"]


def require_file(root: Path, relative: str, benchmark: str, repo: str) -> Path:
    """``root / relative``, which must exist; else an error that names both and how to get the repository."""
    path = Path(root) / relative
    if not path.is_file():
        raise DatasetUnavailable(
            f"{benchmark}: {relative} is missing from {root} (expected the folder written by "
            f"`hf download --repo-type dataset {repo} --local-dir {root}`, or `spatialclaw data download {benchmark}`)"
        )
    return path


def require_columns(columns: Sequence[str], wanted: Sequence[str], path: Path, benchmark: str) -> None:
    """Raise naming the first column of ``wanted`` that ``columns`` lacks, and the file."""
    missing = [c for c in wanted if c not in columns]
    if missing:
        raise DatasetUnavailable(
            f"{benchmark}: {path} has no column {missing[0]!r} (columns: {', '.join(map(str, columns))}); "
            "is this the published file?"
        )


def clean(value: Any) -> Any:
    """A parquet cell as plain Python: numpy arrays and scalars to lists and numbers, NaN to None."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, list):
        return [clean(v) for v in value]
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    return value


def parquet_records(path: Path, wanted: Sequence[str], benchmark: str) -> Iterator[dict[str, Any]]:
    """The rows of one parquet file in file order, as dicts of plain values, checked for ``wanted`` columns."""
    import pyarrow.parquet as pq

    try:
        file = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ... for a damaged file
        raise DatasetUnavailable(f"{benchmark}: cannot read {path} as parquet ({type(exc).__name__}: {exc})") from exc
    require_columns(file.schema_arrow.names, wanted, path, benchmark)
    for batch in file.iter_batches(batch_size=256):
        for row in batch.to_pylist():
            yield {k: clean(v) for k, v in row.items()}


def json_list(path: Path, wanted: Sequence[str], benchmark: str) -> list[dict[str, Any]]:
    """A JSON file holding a list of records, each checked for the ``wanted`` keys (the first missing one and
    its record position are named)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DatasetUnavailable(f"{benchmark}: {path} is not valid JSON ({exc})") from exc
    if not isinstance(data, list):
        raise DatasetUnavailable(f"{benchmark}: {path} should hold a JSON list of records, not {type(data).__name__}")
    for position, record in enumerate(data):
        if not isinstance(record, dict):
            raise DatasetUnavailable(f"{benchmark}: {path} record {position} is not an object")
        missing = [k for k in wanted if k not in record]
        if missing:
            raise DatasetUnavailable(f"{benchmark}: {path} record {position} has no field {missing[0]!r}")
    return data
