"""Read the published record files (parquet, JSON, CSV) of a downloaded benchmark repository, naming what is missing.

Used by the ``read_source`` functions of BLINK, CVBench, DSI-Bench, ERQA, MindCube, MMSI-Bench,
MMSI-Video-Bench, Omni3D-Bench, OmniSpatial and OSI-Bench: each reads the folder that ``hf download
--repo-type dataset REPO --local-dir DIR`` writes (archives extracted in place), in the paper loader's
order, and raises :class:`~spatialclaw.benchmarks.spec.DatasetUnavailable` naming the missing file or column
and ``DIR``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.spec import DatasetUnavailable

__all__ = ["check_keys", "csv_rows", "json_data", "missing", "parquet_rows", "plain"]


def missing(benchmark: str, what: str, root: Path, repo: str) -> DatasetUnavailable:
    """The error for a file the published layout has and ``root`` lacks."""
    return DatasetUnavailable(
        f"{benchmark}: {what} is missing from {root}; expected the folder written by `hf download --repo-type "
        f"dataset {repo} --local-dir {root}` with its archives extracted (`spatialclaw data download {benchmark}`)"
    )


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


def _check_columns(columns: Sequence[str], wanted: Sequence[str], path: Path, benchmark: str) -> None:
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


def parquet_rows(path: Path, wanted: Sequence[str], benchmark: str) -> list[dict[str, Any]]:
    """The rows of one parquet file in file order as plain dicts, checked for the ``wanted`` columns."""
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ...
        raise DatasetUnavailable(f"{benchmark}: cannot read {path} as parquet ({type(exc).__name__}: {exc})") from exc
    _check_columns(table.column_names, wanted, path, benchmark)
    return [{k: plain(v) for k, v in row.items()} for row in table.to_pylist()]


def csv_rows(path: Path, wanted: Sequence[str], benchmark: str) -> list[dict[str, Any]]:
    """The rows of a CSV file as pandas reads it (types inferred, empty cells None), checked for columns."""
    import pandas as pd

    try:
        frame = pd.read_csv(path)
    except Exception as exc:  # pandas raises ParserError, UnicodeDecodeError, ...
        raise DatasetUnavailable(f"{benchmark}: cannot read {path} as CSV ({type(exc).__name__}: {exc})") from exc
    _check_columns([str(c) for c in frame.columns], wanted, path, benchmark)
    return [{str(k): plain(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


def json_data(path: Path, benchmark: str) -> Any:
    """A JSON file's content; a clear error when it is not JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DatasetUnavailable(f"{benchmark}: {path} is not valid JSON ({exc})") from exc
