"""Read a downloaded benchmark repository's published record files (parquet, JSON, CSV), naming what is missing.

Each spec's ``read_source`` reads the folder that ``hf download --repo-type dataset REPO --local-dir DIR``
writes (archives extracted in place), in the paper loader's order, and raises
:class:`~spatialclaw.benchmarks.spec.DatasetUnavailable` naming the missing file, column or field and ``DIR``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from spatialclaw import jsonl
from spatialclaw.benchmarks.spec import DatasetUnavailable

__all__ = [
    "check_keys",
    "csv_rows",
    "json_data",
    "json_list",
    "missing",
    "parquet_records",
    "parquet_rows",
    "plain",
    "require_columns",
    "require_file",
]


def missing(benchmark: str, what: str, root: Path, repo: str) -> DatasetUnavailable:
    """The error for a file the published layout has and ``root`` lacks."""
    return DatasetUnavailable(
        f"{benchmark}: {what} is missing from {root}; expected the folder written by `hf download --repo-type "
        f"dataset {repo} --local-dir {root}` with its archives extracted (`spatialclaw data download {benchmark}`)"
    )


def require_file(root: Path, relative: str, benchmark: str, repo: str) -> Path:
    """``root / relative``, which must exist; else an error that names both and how to get the repository."""
    path = Path(root) / relative
    if not path.is_file():
        raise DatasetUnavailable(
            f"{benchmark}: {relative} is missing from {root} (expected the folder written by "
            f"`hf download --repo-type dataset {repo} --local-dir {root}`, or `spatialclaw data download {benchmark}`)"
        )
    return path


def plain(value: Any) -> Any:
    """A cell as plain Python: numpy arrays and scalars to lists and numbers, NaN to None."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def require_columns(columns: Sequence[str], wanted: Sequence[str], path: Path, benchmark: str) -> None:
    """Raise naming the first column of ``wanted`` that ``columns`` lacks, and the file."""
    absent = [c for c in wanted if c not in columns]
    if absent:
        raise DatasetUnavailable(
            f"{benchmark}: {path} has no column {absent[0]!r} (its columns: {', '.join(map(str, columns))}); "
            "is this the published file?"
        )


def check_keys(record: dict[str, Any], wanted: Sequence[str], path: Path, benchmark: str, position: int) -> None:
    """Raise naming the first key of ``wanted`` that ``record`` (number ``position`` in ``path``) lacks."""
    absent = [k for k in wanted if k not in record]
    if absent:
        raise DatasetUnavailable(
            f"{benchmark}: record {position} of {path} has no field {absent[0]!r} (its fields: "
            f"{', '.join(sorted(map(str, record)))}); is this the published file?"
        )


def parquet_records(path: Path, wanted: Sequence[str], benchmark: str) -> Iterator[dict[str, Any]]:
    """The rows of one parquet file in file order, read in batches, as dicts of plain values, checked for
    the ``wanted`` columns."""
    import pyarrow.parquet as pq

    try:
        file = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ... for a damaged file
        raise DatasetUnavailable(f"{benchmark}: cannot read {path} as parquet ({type(exc).__name__}: {exc})") from exc
    require_columns(file.schema_arrow.names, wanted, path, benchmark)
    for batch in file.iter_batches(batch_size=256):
        for row in batch.to_pylist():
            yield {k: plain(v) for k, v in row.items()}


def parquet_rows(path: Path, wanted: Sequence[str], benchmark: str) -> list[dict[str, Any]]:
    """:func:`parquet_records` as a list, so a damaged file or a missing column raises at the call."""
    return list(parquet_records(path, wanted, benchmark))


def csv_rows(path: Path, wanted: Sequence[str], benchmark: str) -> list[dict[str, Any]]:
    """The rows of a CSV file as pandas reads it (types inferred, empty cells None), checked for columns."""
    import pandas as pd

    try:
        frame = pd.read_csv(path)
    except Exception as exc:  # pandas raises ParserError, UnicodeDecodeError, ...
        raise DatasetUnavailable(f"{benchmark}: cannot read {path} as CSV ({type(exc).__name__}: {exc})") from exc
    require_columns([str(c) for c in frame.columns], wanted, path, benchmark)
    return [{str(k): plain(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


def json_data(path: Path, benchmark: str) -> Any:
    """A JSON file's content; a clear error when it is not JSON."""
    try:
        return jsonl.loads(path.read_bytes())
    except ValueError as exc:  # malformed, not UTF-8, or nested too deeply
        raise DatasetUnavailable(f"{benchmark}: {path} is not valid JSON ({exc})") from None


def json_list(path: Path, wanted: Sequence[str], benchmark: str) -> list[dict[str, Any]]:
    """A JSON file holding a list of records, each checked for the ``wanted`` keys (the first missing one and
    its record position are named)."""
    data = json_data(path, benchmark)
    if not isinstance(data, list):
        raise DatasetUnavailable(f"{benchmark}: {path} should hold a JSON list of records, not {type(data).__name__}")
    for position, record in enumerate(data):
        if not isinstance(record, dict):
            raise DatasetUnavailable(f"{benchmark}: {path} record {position} is not an object")
        absent = [k for k in wanted if k not in record]
        if absent:
            raise DatasetUnavailable(f"{benchmark}: {path} record {position} has no field {absent[0]!r}")
    return data
