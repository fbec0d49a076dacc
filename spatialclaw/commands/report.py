"""``spatialclaw report``: markdown, CSV and JSON tables and a bar chart for one or more runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "report",
        help="tables (markdown, CSV, JSON) and a bar chart for runs",
        description="Per-category and per-benchmark scores, runs side by side, the tool gain "
        "over a no-tools baseline run of the same benchmark and model, and a bar chart.",
    )
    parser.add_argument("runs", nargs="+", metavar="RUN", help="run directories")
    parser.add_argument("--out", default=None, help="output folder (default: FIRST_RUN/report)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from spatialclaw.runner.report import write_report

    out = Path(args.out) if args.out else Path(args.runs[0]) / "report"
    try:
        files = write_report(args.runs, out)
    except (FileNotFoundError, ValueError) as failure:
        print(f"spatialclaw report: {failure}", file=sys.stderr)
        return 2
    print(files["markdown"].read_text(encoding="utf-8"))
    print("wrote " + ", ".join(str(p) for p in files.values()))
    return 0
