"""``spatialclaw data download``: fetch benchmarks' hub repositories into ROOT/<Folder>, extract, check."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spatialclaw.benchmarks.spec import BenchmarkSpec


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "data",
        help="download benchmarks' published files (the paper's layout) and check them",
        description="Benchmark data on disk, as the paper's setting reads it: ROOT/<Folder> per benchmark.",
    )
    actions = parser.add_subparsers(dest="data_action", metavar="ACTION")
    actions.required = True
    download = actions.add_parser(
        "download",
        help="hf download each benchmark's repository into ROOT/<Folder>, extract its archives, check the counts",
        description="Download with huggingface_hub (repo type dataset) into ROOT/<Folder> (the paper's folder "
        "names; bench --suite paper --source-root ROOT reads them), extract the archives the benchmark names in "
        "place, delete them, and print a table of the expected file counts. Names: a benchmark or paper short "
        "name, or 'paper' for all 20. --check-only skips the download (a folder copied from elsewhere).",
    )
    download.add_argument("names", nargs="+", metavar="NAME", help="benchmarks (e.g. blink vsibench_unbiased) or paper")
    download.add_argument("--root", required=True, help="data root: each benchmark goes to ROOT/<Folder>")
    download.add_argument("--check-only", action="store_true", help="no download: extract and check what is there")
    download.add_argument("--keep-archives", action="store_true", help="keep archives after extracting them")
    parser.set_defaults(handler=handle)


def _specs(names: list[str]) -> list[BenchmarkSpec]:
    from spatialclaw.benchmarks.paper_setting import paper_specs
    from spatialclaw.benchmarks.registry import find_spec

    specs: list[BenchmarkSpec] = []
    for name in names:
        one = find_spec(name)
        found = paper_specs() if name.lower() == "paper" else [one] if one is not None else []
        if not found:
            raise ValueError(f"unknown benchmark {name!r}; see spatialclaw bench --list")
        specs += [s for s in found if s not in specs]
    return specs


def folder_for(spec: BenchmarkSpec, root: Path) -> Path:
    """Where a benchmark's files go under ``root``: the paper's folder name, else the spec's name."""
    from spatialclaw.benchmarks.paper_setting import PAPER_FOLDERS

    return root / PAPER_FOLDERS.get(spec.paper_name or "", spec.name)


def handle(args: argparse.Namespace) -> int:
    from spatialclaw.benchmarks.data.download import download_repo, format_checks, prepare_folder
    from spatialclaw.benchmarks.spec import DatasetUnavailable

    root = Path(args.root).expanduser().absolute()  # a relative ROOT: from the current directory, once
    checks = []
    failed = False
    try:
        specs = _specs(args.names)
    except ValueError as failure:
        print(f"spatialclaw data: {failure}", file=sys.stderr)
        return 2
    for spec in specs:
        folder = folder_for(spec, root)
        try:
            if not args.check_only:
                print(f"{spec.name}: downloading {spec.hub_id} into {folder}", file=sys.stderr)
                download_repo(spec, folder)
            found = prepare_folder(spec, folder, keep_archives=args.keep_archives)
        except DatasetUnavailable as failure:
            print(f"spatialclaw data: {failure}", file=sys.stderr)
            failed = True
            if not args.check_only:
                break  # no network: the next download fails the same way
            continue
        if not found:
            print(f"{spec.name}: {folder} ready (the spec lists no expected files)", file=sys.stderr)
        checks += found
    if checks:
        print(format_checks(checks))
    if failed or any(not c.ok for c in checks):
        return 1
    return 0
